//! What a read asks for (Get, Scan, time range, column selection) and what it returns.

use std::collections::{BTreeMap, BTreeSet};

use crate::filter::FilterSpec;

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
    pub filter: Option<FilterSpec>,
    /// `setLoadColumnFamiliesOnDemand`: families the filter does not need are read
    /// only for rows it keeps (unset: the server's
    /// `hbase.hregion.scan.loadColumnFamiliesOnDemand`).
    pub load_column_families_on_demand: Option<bool>,
}

impl Get {
    pub fn new(row: impl Into<Vec<u8>>) -> Get {
        Get {
            row: row.into(),
            columns: Columns::new(),
            time_range: TimeRange::ALL,
            max_versions: 1,
            check_existence_only: false,
            filter: None,
            load_column_families_on_demand: None,
        }
    }

    pub fn load_column_families_on_demand(mut self, on: bool) -> Get {
        self.load_column_families_on_demand = Some(on);
        self
    }

    pub fn filter(mut self, filter: FilterSpec) -> Get {
        self.filter = Some(filter);
        self
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

    /// The equivalent one-row scan (start = stop = row, both inclusive).
    pub fn to_scan(&self) -> Scan {
        Scan {
            start_row: self.row.clone(),
            stop_row: self.row.clone(),
            stop_inclusive: true,
            columns: self.columns.clone(),
            time_range: self.time_range,
            max_versions: self.max_versions,
            limit: Some(1),
            filter: self.filter.clone(),
            load_column_families_on_demand: self.load_column_families_on_demand,
            ..Scan::new()
        }
    }
}

/// A read of a row range, `[start_row, stop_row)` by default (empty stop = to the end);
/// reversed scans run from `start_row` down to `stop_row`.
#[derive(Debug, Clone, PartialEq)]
pub struct Scan {
    pub start_row: Vec<u8>,
    pub start_inclusive: bool,
    pub stop_row: Vec<u8>,
    pub stop_inclusive: bool,
    pub columns: Columns,
    pub time_range: TimeRange,
    pub max_versions: u32,
    /// Return delete markers and masked cells too.
    pub raw: bool,
    /// Stop after this many rows.
    pub limit: Option<u64>,
    pub filter: Option<FilterSpec>,
    /// At most this many cells per Result.
    pub batch: Option<u32>,
    /// Results may be fragments of a row (`partial` set while more may follow).
    pub allow_partial_results: bool,
    /// Bytes per round trip (`hbase.client.scanner.max.result.size` when unset).
    pub max_result_size: Option<u64>,
    /// Rows per round trip.
    pub caching: Option<u32>,
    pub reversed: bool,
    /// Put the blocks this scan reads into the block cache (`setCacheBlocks`).
    pub cache_blocks: bool,
    /// `setNeedCursorResult`: a scan that returns to the client while skipping rows
    /// (a size or time limit reached without a result) answers a cursor result naming
    /// the row it reached.
    pub need_cursor_result: bool,
    /// `setLoadColumnFamiliesOnDemand`: families the filter does not need
    /// (`isFamilyEssential`) are read only for rows found in the others and kept by
    /// the filter; a row with no cell in a needed family is not returned at all.
    /// Unset: the server's `hbase.hregion.scan.loadColumnFamiliesOnDemand` (on).
    pub load_column_families_on_demand: Option<bool>,
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
            start_inclusive: true,
            stop_row: Vec::new(),
            stop_inclusive: false,
            columns: Columns::new(),
            time_range: TimeRange::ALL,
            max_versions: 1,
            raw: false,
            limit: None,
            filter: None,
            batch: None,
            allow_partial_results: false,
            max_result_size: None,
            caching: None,
            reversed: false,
            cache_blocks: true,
            need_cursor_result: false,
            load_column_families_on_demand: None,
        }
    }

    pub fn need_cursor_result(mut self, need: bool) -> Scan {
        self.need_cursor_result = need;
        self
    }

    pub fn cache_blocks(mut self, cache: bool) -> Scan {
        self.cache_blocks = cache;
        self
    }

    /// `withStartRow(row, inclusive)`.
    pub fn with_start_row(mut self, row: impl Into<Vec<u8>>, inclusive: bool) -> Scan {
        self.start_row = row.into();
        self.start_inclusive = inclusive;
        self
    }

    /// `withStopRow(row, inclusive)`.
    pub fn with_stop_row(mut self, row: impl Into<Vec<u8>>, inclusive: bool) -> Scan {
        self.stop_row = row.into();
        self.stop_inclusive = inclusive;
        self
    }

    /// `setStartStopRowForPrefixScan`: start = prefix; stop = prefix with trailing 0xFF
    /// bytes removed and its last byte incremented (open end when none is left).
    pub fn with_row_prefix(mut self, prefix: impl Into<Vec<u8>>) -> Scan {
        let prefix = prefix.into();
        let mut stop = prefix.clone();
        while let Some(last) = stop.pop() {
            if last != 0xff {
                stop.push(last + 1);
                break;
            }
        }
        self.start_row = prefix;
        self.start_inclusive = true;
        self.stop_row = stop;
        self.stop_inclusive = false;
        self
    }

    pub fn load_column_families_on_demand(mut self, on: bool) -> Scan {
        self.load_column_families_on_demand = Some(on);
        self
    }

    pub fn filter(mut self, filter: FilterSpec) -> Scan {
        self.filter = Some(filter);
        self
    }

    pub fn batch(mut self, cells: u32) -> Scan {
        self.batch = Some(cells.max(1));
        self
    }

    pub fn allow_partial_results(mut self, allow: bool) -> Scan {
        self.allow_partial_results = allow;
        self
    }

    pub fn max_result_size(mut self, bytes: u64) -> Scan {
        self.max_result_size = Some(bytes.max(1));
        self
    }

    pub fn caching(mut self, rows: u32) -> Scan {
        self.caching = Some(rows.max(1));
        self
    }

    pub fn reversed(mut self, reversed: bool) -> Scan {
        self.reversed = reversed;
        self
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

    /// Whether `row` is past the stop row (in the scan's direction).
    pub fn is_past_stop(&self, row: &[u8]) -> bool {
        self.against_stop(row).0
    }

    /// Whether `row` is past the stop row, and whether it is the scan's last possible
    /// row (the inclusive stop row, read forward), from one comparison.
    pub fn against_stop(&self, row: &[u8]) -> (bool, bool) {
        if self.stop_row.is_empty() {
            return (false, false);
        }
        let cmp = row.cmp(self.stop_row.as_slice());
        let beyond = if self.reversed {
            cmp == std::cmp::Ordering::Less
        } else {
            cmp == std::cmp::Ordering::Greater
        };
        let at_stop = cmp == std::cmp::Ordering::Equal;
        (
            beyond || (at_stop && !self.stop_inclusive),
            at_stop && !self.reversed && self.stop_inclusive,
        )
    }

    /// Whether `row` comes before the start (an exclusive start row itself, or, reversed,
    /// a row above it).
    pub fn is_before_start(&self, row: &[u8]) -> bool {
        if self.start_row.is_empty() {
            return false;
        }
        let cmp = row.cmp(self.start_row.as_slice());
        let before = if self.reversed {
            cmp == std::cmp::Ordering::Greater
        } else {
            cmp == std::cmp::Ordering::Less
        };
        before || (cmp == std::cmp::Ordering::Equal && !self.start_inclusive)
    }
}

#[cfg(test)]
mod tests {
    use super::Scan;

    /// One comparison with the stop row: past it (exclusive stop, either direction),
    /// and the last possible row (inclusive stop, forward only).
    #[test]
    fn against_stop_tells_past_and_last() {
        let open = Scan::new();
        assert_eq!(open.against_stop(b"zzz"), (false, false));
        let inclusive = Scan::new().with_stop_row("m", true);
        assert_eq!(inclusive.against_stop(b"a"), (false, false));
        assert_eq!(inclusive.against_stop(b"m"), (false, true));
        assert_eq!(inclusive.against_stop(b"n"), (true, false));
        let exclusive = Scan::new().with_stop_row("m", false);
        assert_eq!(exclusive.against_stop(b"m"), (true, false));
        assert_eq!(exclusive.against_stop(b"l"), (false, false));
        let back = Scan::new().with_stop_row("m", true).reversed(true);
        assert_eq!(back.against_stop(b"n"), (false, false));
        assert_eq!(
            back.against_stop(b"m"),
            (false, false),
            "a reversed read goes on below"
        );
        assert_eq!(back.against_stop(b"l"), (true, false));
        for (scan, row) in [(&inclusive, &b"n"[..]), (&exclusive, b"m"), (&back, b"a")] {
            assert_eq!(scan.is_past_stop(row), scan.against_stop(row).0);
        }
    }
}
