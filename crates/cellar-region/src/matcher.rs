//! The query matcher of a user read (HBase's `NormalUserScanQueryMatcher` with its delete
//! tracker and wildcard/explicit column trackers, §2.3 of the semantics reference). It
//! sees the cells of one family of one row in order and says, per cell, whether to include
//! it or what to skip. Order of checks: delete markers (tracked, never returned unless
//! raw), masking, time range, column selection, (filters, next issue), version counting
//! with MIN_VERSIONS and TTL.

use std::collections::BTreeSet;

use cellar_types::{Cell, CellType};

use crate::delete_tracker::{DeleteTracker, Masked};
use crate::descriptor::{FamilyDescriptor, KeepDeletedCells};
use crate::read::TimeRange;

/// What to do with a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchCode {
    Include,
    Skip,
    /// Skip the rest of this column.
    SeekNextCol,
}

/// Per-family parameters of a read.
#[derive(Debug, Clone)]
pub struct MatchParams {
    pub max_versions: u32,
    pub min_versions: u32,
    /// Cells with a timestamp below this are expired (TTL), if set.
    pub oldest_unexpired: Option<i64>,
    pub keep_deleted: KeepDeletedCells,
    pub time_range: TimeRange,
    /// `None` = every column.
    pub columns: Option<BTreeSet<Vec<u8>>>,
    pub raw: bool,
}

impl MatchParams {
    pub fn new(
        family: &FamilyDescriptor,
        requested_versions: u32,
        time_range: TimeRange,
        columns: Option<BTreeSet<Vec<u8>>>,
        raw: bool,
        now: i64,
    ) -> MatchParams {
        let max_versions = if raw {
            requested_versions
        } else {
            requested_versions.min(family.versions)
        };
        MatchParams {
            max_versions: max_versions.max(1),
            min_versions: family.min_versions,
            oldest_unexpired: family.ttl_millis().map(|ttl| now.saturating_sub(ttl)),
            keep_deleted: family.keep_deleted_cells,
            time_range,
            columns,
            raw,
        }
    }
}

/// Decides, cell by cell, what a read of one family returns.
#[derive(Debug)]
pub struct Matcher {
    p: MatchParams,
    deletes: DeleteTracker,
    count: u32,
    last: Option<(i64, u8)>,
}

impl Matcher {
    pub fn new(p: MatchParams) -> Matcher {
        Matcher {
            p,
            deletes: DeleteTracker::default(),
            count: 0,
            last: None,
        }
    }

    pub fn params(&self) -> &MatchParams {
        &self.p
    }

    fn enter(&mut self, cell: &Cell) {
        if self.deletes.enter(cell) {
            self.count = 0;
            self.last = None;
        }
    }

    fn expired(&self, ts: i64) -> bool {
        self.p.oldest_unexpired.is_some_and(|o| ts < o)
    }

    /// The verdict on `cell` (cells must arrive in HBase order).
    pub fn match_cell(&mut self, cell: &Cell) -> MatchCode {
        self.enter(cell);
        let ts = cell.timestamp();
        let ty = cell.cell_type();
        if self.p.raw {
            if !self.p.time_range.contains(ts) {
                return MatchCode::Skip;
            }
            if !self.selected(cell.qualifier()) && !ty.is_delete() {
                return MatchCode::SeekNextCol;
            }
            if ty.is_delete() {
                return MatchCode::Include;
            }
            return self.count_version(ts, ty);
        }
        if ty.is_delete() {
            let applies = if self.p.keep_deleted == KeepDeletedCells::False {
                ts >= self.p.time_range.min
            } else {
                self.p.time_range.contains(ts)
            };
            if applies {
                self.deletes.add(ts, ty);
            }
            return MatchCode::Skip;
        }
        match self.deletes.masked(ts) {
            Some(Masked::ThisAndOlder) => return MatchCode::SeekNextCol,
            Some(Masked::ThisVersion) => return MatchCode::Skip,
            None => {}
        }
        if ts >= self.p.time_range.max {
            return MatchCode::Skip;
        }
        if ts < self.p.time_range.min {
            return MatchCode::SeekNextCol;
        }
        if !self.selected(cell.qualifier()) {
            return MatchCode::SeekNextCol;
        }
        self.count_version(ts, ty)
    }

    fn selected(&self, qualifier: &[u8]) -> bool {
        self.p
            .columns
            .as_ref()
            .is_none_or(|set| set.contains(qualifier))
    }

    fn count_version(&mut self, ts: i64, ty: CellType) -> MatchCode {
        if self.last == Some((ts, ty.code())) {
            return MatchCode::Skip;
        }
        self.count += 1;
        if self.count > self.p.max_versions {
            return MatchCode::SeekNextCol;
        }
        if self.expired(ts) && self.count > self.p.min_versions {
            return MatchCode::SeekNextCol;
        }
        self.last = Some((ts, ty.code()));
        MatchCode::Include
    }
}
