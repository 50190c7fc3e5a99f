//! Delete markers seen so far in a row (HBase's `ScanDeleteTracker`): DeleteFamily and
//! DeleteFamilyVersion for the whole family of the row, DeleteColumn and Delete for the
//! current column. Markers mask by timestamp only (§2.2), whatever their sequence ids.

use std::collections::HashSet;

use cellar_types::{Cell, CellType};

/// How a cell is masked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Masked {
    /// This version and every older one of the column (DeleteFamily, DeleteColumn).
    ThisAndOlder,
    /// Exactly this version (Delete, DeleteFamilyVersion).
    ThisVersion,
}

/// A byte string or nothing, keeping its buffer when emptied.
#[derive(Debug, Default)]
struct Slot {
    bytes: Vec<u8>,
    set: bool,
}

impl Slot {
    #[inline]
    fn holds(&self, bytes: &[u8]) -> bool {
        self.set && cellar_types::same_bytes(&self.bytes, bytes)
    }

    fn set(&mut self, bytes: &[u8]) {
        self.bytes.clear();
        self.bytes.extend_from_slice(bytes);
        self.set = true;
    }

    fn unset(&mut self) {
        self.set = false;
    }
}

/// Tracks markers while cells of one family arrive in order.
#[derive(Debug, Default)]
pub struct DeleteTracker {
    /// The current row and column, in buffers reused from row to row (no allocation
    /// per cell once they have grown).
    row: Slot,
    column: Slot,
    family_ts: Option<i64>,
    family_versions: HashSet<i64>,
    column_ts: Option<i64>,
    versions: HashSet<i64>,
}

impl DeleteTracker {
    /// Moves to `cell`'s row and column, forgetting what no longer applies; true when a
    /// new column (or row) starts.
    pub fn enter(&mut self, cell: &Cell) -> bool {
        self.enter_row(cell.row());
        self.enter_column(cell)
    }

    /// Moves to `row`, forgetting the previous row's markers when it is another.
    pub fn enter_row(&mut self, row: &[u8]) {
        if !self.row.holds(row) {
            self.row.set(row);
            self.family_ts = None;
            self.family_versions.clear();
            self.column.unset();
        }
    }

    /// Moves to `cell`'s column of the current row (as [`DeleteTracker::enter`] when
    /// the caller knows the cell is of the row entered last).
    #[inline]
    pub fn enter_column(&mut self, cell: &Cell) -> bool {
        if self.column.holds(cell.qualifier()) {
            return false;
        }
        self.column.set(cell.qualifier());
        self.column_ts = None;
        self.versions.clear();
        true
    }

    /// Records a marker of the current row (and column).
    pub fn add(&mut self, ts: i64, ty: CellType) {
        match ty {
            CellType::DeleteFamily => {
                self.family_ts = Some(self.family_ts.map_or(ts, |t| t.max(ts)))
            }
            CellType::DeleteFamilyVersion => {
                self.family_versions.insert(ts);
            }
            CellType::DeleteColumn => {
                self.column_ts = Some(self.column_ts.map_or(ts, |t| t.max(ts)))
            }
            CellType::Delete => {
                self.versions.insert(ts);
            }
            _ => {}
        }
    }

    /// Whether any marker applies to the current column (of the row or of the column).
    #[inline]
    pub fn has_markers(&self) -> bool {
        self.family_ts.is_some()
            || self.column_ts.is_some()
            || !self.family_versions.is_empty()
            || !self.versions.is_empty()
    }

    /// Whether a put at `ts` in the current column is masked.
    pub fn masked(&self, ts: i64) -> Option<Masked> {
        if self.family_ts.is_some_and(|t| ts <= t) || self.column_ts.is_some_and(|t| ts <= t) {
            Some(Masked::ThisAndOlder)
        } else if self.family_versions.contains(&ts) || self.versions.contains(&ts) {
            Some(Masked::ThisVersion)
        } else {
            None
        }
    }
}
