//! What a read asks for (Get, Scan, time range, column selection) and what it returns.

use std::collections::{BTreeMap, BTreeSet};

use cellar_types::Cell;

/// `[min, max)` in milliseconds, as HBase's `TimeRange`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeRange {
    pub min: i64,
    pub max: i64,
}

impl TimeRange {
    /// Every timestamp.
    pub const ALL: TimeRange = TimeRange {
        min: 0,
        max: i64::MAX,
    };

    pub fn new(min: i64, max: i64) -> TimeRange {
        TimeRange { min, max }
    }

    /// Exactly `ts` (`setTimestamp`).
    pub fn at(ts: i64) -> TimeRange {
        TimeRange {
            min: ts,
            max: ts.saturating_add(1),
        }
    }

    pub fn contains(&self, ts: i64) -> bool {
        ts >= self.min && ts < self.max
    }

    pub fn is_all(&self) -> bool {
        *self == TimeRange::ALL
    }
}

impl Default for TimeRange {
    fn default() -> Self {
        TimeRange::ALL
    }
}

/// Families and qualifiers to read: empty = every family; a family mapped to `None` =
/// every column of it.
pub type Columns = BTreeMap<Vec<u8>, Option<BTreeSet<Vec<u8>>>>;

fn add_family(cols: &mut Columns, family: &[u8]) {
    cols.insert(family.to_vec(), None);
}

fn add_column(cols: &mut Columns, family: &[u8], qualifier: &[u8]) {
    match cols
        .entry(family.to_vec())
        .or_insert_with(|| Some(BTreeSet::new()))
    {
        Some(set) => {
            set.insert(qualifier.to_vec());
        }
        slot @ None => {
            // addColumn after addFamily replaces it (HBase's Get/Scan behaviour).
            let mut set = BTreeSet::new();
            set.insert(qualifier.to_vec());
            *slot = Some(set);
        }
    }
}

/// A single-row read.
#[derive(Debug, Clone, PartialEq)]
pub struct Get {
    pub row: Vec<u8>,
    pub columns: Columns,
    pub time_range: TimeRange,
    pub max_versions: u32,
    pub check_existence_only: bool,
}

impl Get {
    pub fn new(row: impl Into<Vec<u8>>) -> Get {
        Get {
            row: row.into(),
            columns: Columns::new(),
            time_range: TimeRange::ALL,
            max_versions: 1,
            check_existence_only: false,
        }
    }

    pub fn add_family(mut self, family: impl AsRef<[u8]>) -> Get {
        add_family(&mut self.columns, family.as_ref());
        self
    }

    pub fn add_column(mut self, family: impl AsRef<[u8]>, qualifier: impl AsRef<[u8]>) -> Get {
        add_column(&mut self.columns, family.as_ref(), qualifier.as_ref());
        self
    }

    pub fn time_range(mut self, min: i64, max: i64) -> Get {
        self.time_range = TimeRange::new(min, max);
        self
    }

    pub fn timestamp(mut self, ts: i64) -> Get {
        self.time_range = TimeRange::at(ts);
        self
    }

    pub fn max_versions(mut self, n: u32) -> Get {
        self.max_versions = n.max(1);
        self
    }

    pub fn all_versions(self) -> Get {
        self.max_versions(u32::MAX)
    }

    /// The equivalent one-row scan.
    pub fn to_scan(&self) -> Scan {
        let mut stop = self.row.clone();
        stop.push(0);
        Scan {
            start_row: self.row.clone(),
            stop_row: stop,
            columns: self.columns.clone(),
            time_range: self.time_range,
            max_versions: self.max_versions,
            raw: false,
            limit: Some(1),
        }
    }
}

/// A read of a row range `[start_row, stop_row)` (empty stop = to the end).
#[derive(Debug, Clone, PartialEq)]
pub struct Scan {
    pub start_row: Vec<u8>,
    pub stop_row: Vec<u8>,
    pub columns: Columns,
    pub time_range: TimeRange,
    pub max_versions: u32,
    /// Return delete markers and masked cells too.
    pub raw: bool,
    /// Stop after this many rows.
    pub limit: Option<u64>,
}

impl Default for Scan {
    fn default() -> Self {
        Scan::new()
    }
}

impl Scan {
    pub fn new() -> Scan {
        Scan {
            start_row: Vec::new(),
            stop_row: Vec::new(),
            columns: Columns::new(),
            time_range: TimeRange::ALL,
            max_versions: 1,
            raw: false,
            limit: None,
        }
    }

    pub fn start_row(mut self, row: impl Into<Vec<u8>>) -> Scan {
        self.start_row = row.into();
        self
    }

    pub fn stop_row(mut self, row: impl Into<Vec<u8>>) -> Scan {
        self.stop_row = row.into();
        self
    }

    pub fn add_family(mut self, family: impl AsRef<[u8]>) -> Scan {
        add_family(&mut self.columns, family.as_ref());
        self
    }

    pub fn add_column(mut self, family: impl AsRef<[u8]>, qualifier: impl AsRef<[u8]>) -> Scan {
        add_column(&mut self.columns, family.as_ref(), qualifier.as_ref());
        self
    }

    pub fn time_range(mut self, min: i64, max: i64) -> Scan {
        self.time_range = TimeRange::new(min, max);
        self
    }

    pub fn max_versions(mut self, n: u32) -> Scan {
        self.max_versions = n.max(1);
        self
    }

    pub fn raw(mut self, raw: bool) -> Scan {
        self.raw = raw;
        self
    }

    pub fn limit(mut self, rows: u64) -> Scan {
        self.limit = Some(rows);
        self
    }

    /// Whether `row` is past the stop row.
    pub fn is_past_stop(&self, row: &[u8]) -> bool {
        !self.stop_row.is_empty() && row >= self.stop_row.as_slice()
    }
}

/// The cells of one row, in HBase order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RowResult {
    pub row: Vec<u8>,
    pub cells: Vec<Cell>,
    /// For `check_existence_only` Gets.
    pub exists: Option<bool>,
}

impl RowResult {
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The newest value of a column.
    pub fn value(&self, family: &[u8], qualifier: &[u8]) -> Option<&[u8]> {
        self.cells
            .iter()
            .find(|c| c.family() == family && c.qualifier() == qualifier)
            .map(|c| c.value())
    }

    /// Serialized size of the cells.
    pub fn size(&self) -> u64 {
        self.cells
            .iter()
            .map(|c| c.serialized_size(true) as u64)
            .sum()
    }
}
