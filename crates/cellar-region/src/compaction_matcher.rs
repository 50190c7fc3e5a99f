//! What a flush or a compaction writes (HBase's `CompactionScanQueryMatcher` with its
//! minor and major forms and the wildcard column tracker). Cells arrive in HBase order;
//! each is kept or dropped:
//!
//! * a cell written above the smallest read point of any open reader is kept and never
//!   counted, collapsed or applied: a reader at that point cannot see it, so the cells
//!   below it are what that reader still needs;
//! * with MIN_VERSIONS 0, a cell past the TTL drops with the rest of its column;
//! * delete markers mask (and so drop) the puts they cover when KEEP_DELETED_CELLS is
//!   FALSE, or TTL with the marker expired;
//! * a flush and a minor compaction ("retain deletes") keep every marker; a major (or
//!   all-files) compaction drops a marker unless `hbase.hstore.time.to.purge.deletes`
//!   keeps it, or KEEP_DELETED_CELLS keeps it — and then only while an older put in the
//!   compacted files may need it (`earliest_put_ts`);
//! * versions beyond VERSIONS, and expired versions beyond MIN_VERSIONS, drop with the
//!   rest of their column; markers take part in that count without adding to it, so
//!   markers behind the last kept version go too; a cell with the timestamp and type of
//!   the one kept before it is a duplicate.
//!
//! One departure from HBase, on the safe side: family-wide markers (DeleteFamily,
//! DeleteFamilyVersion) share the empty-qualifier column with that column's puts; HBase
//! drops such a marker when it sorts behind the column's last kept put, which can bring
//! back cells of every other column. Here they are judged as markers only, never by the
//! empty column's version count.

use cellar_types::{Cell, CellType};

use crate::config::Config;
use crate::delete_tracker::{DeleteTracker, Masked};
use crate::descriptor::{FamilyDescriptor, KeepDeletedCells};

/// Which markers a rewrite may drop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deletes {
    /// A flush, or a compaction of some of the files: every marker stays.
    Retain,
    /// A compaction of every file; the oldest put timestamp in those files
    /// (`EARLIEST_PUT_TS`; `i64::MIN` when a file does not say).
    Drop { earliest_put_ts: i64 },
}

/// Decides, cell by cell, what a flush or compaction writes.
#[derive(Debug)]
pub struct CompactionMatcher {
    versions: u32,
    min_versions: u32,
    oldest_unexpired: Option<i64>,
    keep_deleted: KeepDeletedCells,
    now: i64,
    purge_ms: i64,
    smallest_read_point: u64,
    deletes: Deletes,
    tracker: DeleteTracker,
    /// Versions of the current column kept so far.
    count: u32,
    /// Timestamp and type of the last cell kept in the current column.
    last: Option<(i64, u8)>,
    /// The rest of the current column goes.
    skip_column: bool,
}

impl CompactionMatcher {
    pub fn new(
        family: &FamilyDescriptor,
        config: &Config,
        now: i64,
        smallest_read_point: u64,
        deletes: Deletes,
    ) -> CompactionMatcher {
        CompactionMatcher {
            versions: family.versions.max(1),
            min_versions: family.min_versions,
            oldest_unexpired: family.ttl_millis().map(|t| now.saturating_sub(t)),
            keep_deleted: family.keep_deleted_cells,
            now,
            purge_ms: config.time_to_purge_deletes_ms.min(i64::MAX as u64) as i64,
            smallest_read_point,
            deletes,
            tracker: DeleteTracker::default(),
            count: 0,
            last: None,
            skip_column: false,
        }
    }

    fn expired(&self, ts: i64) -> bool {
        self.oldest_unexpired.is_some_and(|o| ts < o)
    }

    /// Whether `cell` is written.
    pub fn keep(&mut self, cell: &Cell) -> bool {
        if self.tracker.enter(cell) {
            self.count = 0;
            self.last = None;
            self.skip_column = false;
        }
        let ts = cell.timestamp();
        let ty = cell.cell_type();
        let family_marker = matches!(ty, CellType::DeleteFamily | CellType::DeleteFamilyVersion);
        if self.skip_column && !family_marker {
            return false;
        }
        if self.min_versions == 0 && self.expired(ts) {
            // Everything older in the column has expired as well.
            self.skip_column = true;
            return false;
        }
        let invisible = cell.seq_id() > self.smallest_read_point;
        if ty.is_delete() {
            if invisible {
                return true;
            }
            if self.keep_deleted == KeepDeletedCells::False
                || (self.keep_deleted == KeepDeletedCells::Ttl && self.expired(ts))
            {
                self.tracker.add(ts, ty);
            }
            if let Deletes::Drop { earliest_put_ts } = self.deletes {
                if !(self.purge_ms > 0 && self.now.saturating_sub(ts) <= self.purge_ms) {
                    let kept_by_family = self.keep_deleted == KeepDeletedCells::True
                        || (self.keep_deleted == KeepDeletedCells::Ttl && !self.expired(ts));
                    if !kept_by_family {
                        return false;
                    }
                    if ts < earliest_put_ts {
                        // No put in these files is old enough for it to cover.
                        if !family_marker {
                            self.skip_column = true;
                        }
                        return false;
                    }
                } else {
                    // Young markers stay for out-of-order puts (replication).
                    return true;
                }
            } else {
                return true;
            }
        } else {
            match self.tracker.masked(ts) {
                Some(Masked::ThisAndOlder) => {
                    self.skip_column = true;
                    return false;
                }
                Some(Masked::ThisVersion) => return false,
                None => {}
            }
        }
        if invisible {
            return true;
        }
        self.versions_allow(ts, ty, family_marker)
    }

    /// The version check of a cell that passed the delete checks.
    fn versions_allow(&mut self, ts: i64, ty: CellType, family_marker: bool) -> bool {
        if self.last == Some((ts, ty.code())) {
            return false;
        }
        if family_marker {
            self.last = Some((ts, ty.code()));
            return true;
        }
        if !ty.is_delete() {
            self.count += 1;
        }
        if self.count > self.versions {
            self.skip_column = true;
            return false;
        }
        if self.count <= self.min_versions || !self.expired(ts) {
            self.last = Some((ts, ty.code()));
            true
        } else {
            self.skip_column = true;
            false
        }
    }
}
