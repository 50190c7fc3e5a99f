//! The query matcher of a user read (HBase's `NormalUserScanQueryMatcher` with its delete
//! tracker and wildcard/explicit column trackers, §2.3 of the semantics reference). It
//! sees the cells of one family of one row in order and says, per cell, whether to include
//! it or what to skip. Order of checks: delete markers (tracked, never returned unless
//! raw), masking, time range, column selection, the family's VERSIONS with MIN_VERSIONS
//! and TTL, then the filter, then the read's own version count over the cells the
//! filter kept (so when the newest version fails a value filter an older one can be
//! returned, as in HBase's `UserScanQueryMatcher.mergeFilterResponse`).

use std::collections::BTreeSet;

use cellar_filter::{Filter, ReturnCode};
use cellar_types::{Cell, CellType, KeyRef};

use crate::delete_tracker::{DeleteTracker, Masked};
use crate::descriptor::{FamilyDescriptor, KeepDeletedCells};
use cellar_api::TimeRange;

/// What to do with a cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchCode {
    Include,
    /// Include, then skip the rest of this column.
    IncludeAndSeekNextCol,
    /// Include, then skip the rest of this row (in this family).
    IncludeAndSeekNextRow,
    Skip,
    /// Skip the rest of this column.
    SeekNextCol,
    /// Skip the rest of this row (in this family).
    SeekNextRow,
    /// Seek forward to this flat key.
    SeekTo(Vec<u8>),
}

/// Per-family parameters of a read.
#[derive(Debug, Clone)]
pub struct MatchParams {
    /// Versions a read returns: min(requested, VERSIONS), or the request when raw.
    pub max_versions: u32,
    /// The family's VERSIONS (the version limit before a filter).
    pub family_versions: u32,
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
            family_versions: if raw {
                u32::MAX
            } else {
                family.versions.max(1)
            },
            min_versions: family.min_versions,
            // A raw scan sees expired cells too (HBase's oldestUnexpiredTS 0).
            oldest_unexpired: family
                .ttl_millis()
                .filter(|_| !raw)
                .map(|ttl| now.saturating_sub(ttl)),
            keep_deleted: family.keep_deleted_cells,
            time_range,
            columns,
            raw,
        }
    }

    /// Whether the read is plain: every column, not raw, a family without TTL (its
    /// puts in a row without delete markers are then decided by time range and
    /// version counts alone).
    pub fn is_plain(&self) -> bool {
        !self.raw && self.columns.is_none() && self.oldest_unexpired.is_none()
    }
}

/// Decides, cell by cell, what a read of one family returns.
#[derive(Debug)]
pub struct Matcher {
    p: MatchParams,
    deletes: DeleteTracker,
    count: u32,
    /// Cells of the column kept by the filter.
    filtered_count: u32,
    last: Option<(i64, u8)>,
    /// Whether a version of this column past the TTL was met.
    expired_seen: bool,
    /// A seek decided while in the empty-qualifier column, where the scanner steps
    /// instead of seeking (delete markers live there): puts before it are skipped
    /// without asking anyone, markers are still tracked.
    pending: Option<Pending>,
    /// Set by [`Matcher::enter_row`]: every cell matched is of that row, so a cell's
    /// row need not be compared with the last one's.
    in_row: bool,
    /// A read of every column, not raw, of a family without TTL: a put in a row with no
    /// delete marker is then decided by its time range and version counts alone
    /// ([`Matcher::match_put`]).
    plain: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Pending {
    Until(Vec<u8>),
}

impl Matcher {
    pub fn new(p: MatchParams) -> Matcher {
        Matcher {
            plain: p.is_plain(),
            p,
            deletes: DeleteTracker::default(),
            count: 0,
            filtered_count: 0,
            last: None,
            expired_seen: false,
            pending: None,
            in_row: false,
        }
    }

    pub fn params(&self) -> &MatchParams {
        &self.p
    }

    /// The scanner did not follow the last hint (a reversed scan steps to the next cell
    /// of its row instead, as HBase's): the cells before the hint are matched afresh,
    /// the filter asked about each, rather than skipped as a seek would have.
    pub fn hint_not_taken(&mut self) {
        self.pending = None;
    }

    /// Promises that the cells matched from now on are of `row`, until the next call
    /// (a scanner matching a row's cells one after another).
    /// A new row unsets the column, so its first cell resets the column's counts.
    pub fn enter_row(&mut self, row: &[u8]) {
        self.deletes.enter_row(row);
        self.in_row = true;
    }

    #[inline]
    fn enter(&mut self, cell: &Cell) {
        let new_column = if self.in_row {
            self.deletes.enter_column(cell)
        } else {
            self.deletes.enter(cell)
        };
        if new_column {
            self.count = 0;
            self.filtered_count = 0;
            self.last = None;
            self.expired_seen = false;
        }
    }

    fn expired(&self, ts: i64) -> bool {
        self.p.oldest_unexpired.is_some_and(|o| ts < o)
    }

    /// Where to go after the column of `cell`: with explicit columns, the next wanted
    /// column (or the next row when none is left); otherwise the next column.
    fn next_column(&self, cell: &Cell) -> MatchCode {
        let Some(set) = &self.p.columns else {
            return MatchCode::SeekNextCol;
        };
        let next = set
            .range::<[u8], _>((
                std::ops::Bound::Excluded(cell.qualifier()),
                std::ops::Bound::Unbounded,
            ))
            .next();
        match next {
            Some(q) => {
                MatchCode::SeekTo(KeyRef::first_on_column(cell.row(), cell.family(), q).to_vec())
            }
            None => MatchCode::SeekNextRow,
        }
    }

    /// The verdict on `cell` (cells must arrive in HBase order), asking `filter` about
    /// cells that pass deletes, time range, columns and the family's versions.
    #[inline]
    pub fn match_cell(
        &mut self,
        cell: &Cell,
        filter: Option<&mut (dyn Filter + 'static)>,
    ) -> MatchCode {
        self.enter(cell);
        if self.plain
            && filter.is_none()
            && self.pending.is_none()
            && !cell.cell_type().is_delete()
            && !self.deletes.has_markers()
        {
            return self.match_put(cell);
        }
        self.match_entered(cell, filter)
    }

    /// [`Matcher::match_cell`] past its common case (a put of a plain read with no
    /// filter, pending skip or marker), once the cell's column is entered: kept out
    /// of line, so that the common case inlined into the store scanner's loop does
    /// not pay the general path's register saves on every cell.
    #[inline(never)]
    fn match_entered(
        &mut self,
        cell: &Cell,
        filter: Option<&mut (dyn Filter + 'static)>,
    ) -> MatchCode {
        // A pending skip never outlives its row (reversed scans visit smaller rows next).
        if let Some(Pending::Until(k)) = &self.pending {
            if KeyRef::parse(k)
                .map(|k| k.row != cell.row())
                .unwrap_or(true)
            {
                self.pending = None;
            }
        }
        if let Some(p) = &self.pending {
            let active = match p {
                Pending::Until(k) => KeyRef::parse(k)
                    .map(|k| {
                        cellar_types::compare_keys(&cell.key_ref(), &k) == std::cmp::Ordering::Less
                    })
                    .unwrap_or(false),
            };
            if active {
                if cell.cell_type().is_delete() && !self.p.raw {
                    return self.match_inner(cell, None);
                }
                return MatchCode::Skip;
            }
            self.pending = None;
        }
        let code = self.match_inner(cell, filter);
        // In the empty qualifier HBase's "next column" is only the next cell (the
        // family's delete markers live there: `getKeyForNextColumn`), which is matched
        // afresh: versions past the limit go on answering "next column", but a filter's
        // NEXT_COL is asked again about the next cell. Only a hint skips ahead.
        if cell.qualifier().is_empty() {
            if let MatchCode::SeekTo(k) = &code {
                self.pending = Some(Pending::Until(k.clone()));
            }
        }
        code
    }

    fn match_inner(
        &mut self,
        cell: &Cell,
        filter: Option<&mut (dyn Filter + 'static)>,
    ) -> MatchCode {
        let ts = cell.timestamp();
        let ty = cell.cell_type();
        if self.p.raw {
            if !self.p.time_range.contains(ts) {
                return MatchCode::Skip;
            }
            if !self.selected(cell.qualifier()) && !ty.is_delete() {
                return self.next_column(cell);
            }
            if ty.is_delete() {
                // HBase's column tracker skips a marker repeating the previous one's
                // timestamp and type, and does not count markers as versions — but
                // a column already past its versions ends at a marker too.
                if self.last == Some((ts, ty.code())) {
                    return MatchCode::Skip;
                }
                if self.count > self.p.family_versions {
                    return MatchCode::SeekNextCol;
                }
                self.last = Some((ts, ty.code()));
            } else if let Some(code) = self.check_versions(ts, ty) {
                return code;
            }
            return self.apply_filter(cell, filter);
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
            Some(Masked::ThisAndOlder) => return self.next_column(cell),
            Some(Masked::ThisVersion) => return MatchCode::Skip,
            None => {}
        }
        if ts >= self.p.time_range.max {
            return MatchCode::Skip;
        }
        if ts < self.p.time_range.min {
            return self.next_column(cell);
        }
        if !self.selected(cell.qualifier()) {
            return self.next_column(cell);
        }
        if let Some(code) = self.check_versions(ts, ty) {
            return code;
        }
        self.apply_filter(cell, filter)
    }

    /// [`Matcher::match_inner`] of a put when the read is plain, there is no filter and
    /// the row has no delete marker so far: nothing masks the put, every column is
    /// selected, nothing expires, and a column ends by moving to the next one (never a
    /// seek to a hint, so nothing is left pending).
    #[inline]
    fn match_put(&mut self, cell: &Cell) -> MatchCode {
        let ts = cell.timestamp();
        if ts >= self.p.time_range.max {
            return MatchCode::Skip;
        }
        if ts < self.p.time_range.min {
            return MatchCode::SeekNextCol;
        }
        let last = (ts, cell.cell_type().code());
        if self.last == Some(last) {
            return MatchCode::Skip;
        }
        self.count += 1;
        if self.count > self.p.family_versions {
            return MatchCode::SeekNextCol;
        }
        self.last = Some(last);
        self.filtered_count += 1;
        if self.filtered_count > self.p.max_versions {
            return MatchCode::SeekNextCol;
        }
        MatchCode::Include
    }

    /// The family's version limit, TTL and MIN_VERSIONS; `None` = go on.
    fn check_versions(&mut self, ts: i64, ty: CellType) -> Option<MatchCode> {
        if self.last == Some((ts, ty.code())) {
            return Some(MatchCode::Skip);
        }
        self.count += 1;
        let limit = self.p.family_versions;
        if self.count > limit {
            return Some(MatchCode::SeekNextCol);
        }
        let expired = self.expired(ts);
        if expired && self.count > self.p.min_versions {
            // HBase's ExplicitColumnTracker (named columns, MIN_VERSIONS > 0) returns the
            // first version past the TTL that follows MIN_VERSIONS newer ones, then
            // ends the column; its wildcard tracker returns none.
            if self.p.columns.is_some() && self.p.min_versions > 0 && !self.expired_seen {
                self.expired_seen = true;
                self.last = Some((ts, ty.code()));
                return None;
            }
            return Some(MatchCode::SeekNextCol);
        }
        self.expired_seen |= expired;
        self.last = Some((ts, ty.code()));
        None
    }

    fn apply_filter(
        &mut self,
        cell: &Cell,
        filter: Option<&mut (dyn Filter + 'static)>,
    ) -> MatchCode {
        let mut code = MatchCode::Include;
        // Behind a filter, a raw read counts every cell it returns against its versions,
        // delete markers included (HBase's versionsAfterFilter).
        let count_markers = self.p.raw && filter.is_some();
        if let Some(f) = filter {
            match f.filter_cell(cell) {
                ReturnCode::Include => {}
                ReturnCode::IncludeAndNextCol => code = MatchCode::IncludeAndSeekNextCol,
                ReturnCode::IncludeAndSeekNextRow => code = MatchCode::IncludeAndSeekNextRow,
                ReturnCode::Skip => return MatchCode::Skip,
                ReturnCode::NextCol => return self.next_column(cell),
                ReturnCode::NextRow => return MatchCode::SeekNextRow,
                ReturnCode::SeekNextUsingHint => {
                    return match f.next_cell_hint(cell) {
                        Some(h) => MatchCode::SeekTo(h),
                        None => MatchCode::Skip,
                    }
                }
            }
        }
        if cell.cell_type().is_delete() && !count_markers {
            return code;
        }
        self.filtered_count += 1;
        if self.filtered_count > self.p.max_versions {
            return if code == MatchCode::IncludeAndSeekNextRow {
                MatchCode::SeekNextRow
            } else {
                self.next_column(cell)
            };
        }
        code
    }

    fn selected(&self, qualifier: &[u8]) -> bool {
        self.p
            .columns
            .as_ref()
            .is_none_or(|set| set.contains(qualifier))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// A row's cells in HBase order: a few columns (the empty qualifier among them),
    /// versions at a few timestamps (negative ones too), puts and every marker kind.
    fn row_cells(rng: &mut SmallRng) -> Vec<Cell> {
        let types = [
            CellType::Put,
            CellType::Put,
            CellType::Put,
            CellType::Delete,
            CellType::DeleteColumn,
            CellType::DeleteFamily,
            CellType::DeleteFamilyVersion,
        ];
        let mut cells: Vec<Cell> = (0..rng.random_range(1..30))
            .map(|_| {
                let q = ["", "a", "b", "c"][rng.random_range(0..4)];
                let ts = rng.random_range(-2..8);
                let ty = if rng.random_bool(0.7) {
                    CellType::Put
                } else {
                    types[rng.random_range(0..types.len())]
                };
                Cell::new("row", "f", q, ts, ty, "v").unwrap()
            })
            .collect();
        cells.sort_by(cellar_types::compare_cells);
        cells
    }

    /// The shortcut for plain reads answers as the whole matcher does, cell by cell,
    /// whatever the markers, versions and time range.
    #[test]
    fn plain_puts_match_as_the_whole_matcher() {
        let mut rng = SmallRng::seed_from_u64(19);
        let mut shortcuts = 0;
        for _ in 0..3_000 {
            let mut family = FamilyDescriptor::new("f");
            family.versions = rng.random_range(1..4);
            family.min_versions = rng.random_range(0..2);
            family.keep_deleted_cells = if rng.random_bool(0.5) {
                KeepDeletedCells::False
            } else {
                KeepDeletedCells::True
            };
            let time_range = if rng.random_bool(0.5) {
                TimeRange::ALL
            } else {
                let min = rng.random_range(-1..4);
                TimeRange {
                    min,
                    max: min + rng.random_range(1..6),
                }
            };
            let params =
                MatchParams::new(&family, rng.random_range(1..4), time_range, None, false, 0);
            let mut fast = Matcher::new(params.clone());
            let mut whole = Matcher::new(params);
            assert!(fast.plain);
            whole.plain = false;
            fast.enter_row(b"row");
            whole.enter_row(b"row");
            for cell in row_cells(&mut rng) {
                if !cell.cell_type().is_delete() && !fast.deletes.has_markers() {
                    shortcuts += 1;
                }
                assert_eq!(
                    fast.match_cell(&cell, None),
                    whole.match_cell(&cell, None),
                    "{cell:?}"
                );
            }
        }
        assert!(shortcuts > 10_000, "{shortcuts}");
    }
}
