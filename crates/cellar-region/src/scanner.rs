//! The read path's row assembly: the region scanner assembles rows from its store
//! scanners (`store_scanner.rs`) in family order, runs the filter's row hooks, and cuts
//! rows into fragments at the batch and size limits so a row of any width streams in
//! bounded memory.

use cellar_filter::Filter;
use cellar_types::Cell;

use crate::error::{RegionError, Result};
use crate::mvcc::ReadPointGuard;
pub(crate) use crate::store_scanner::STEPS_BEFORE_SEEK;
pub use crate::store_scanner::{RowProgress, StoreScanner};
use cellar_api::{RowResult, Scan};

/// Limits of one round trip.
#[derive(Debug, Clone)]
pub struct CallLimits {
    /// When the call must answer even with nothing found yet (a heartbeat): a server's
    /// scan call stops at this point on this clock, HBase's time-limited scans.
    pub time_limit: Option<TimeLimit>,
    /// Rows (complete or last fragments) per call.
    pub rows: usize,
    /// Bytes per call.
    pub bytes: u64,
    /// Cells per Result (`batch`), and whether a row may be cut between cells.
    pub cells_per_result: usize,
    pub allow_partial: bool,
}

/// A deadline on a clock.
#[derive(Clone)]
pub struct TimeLimit {
    pub clock: std::sync::Arc<dyn cellar_io::Clock>,
    /// On the clock's monotonic time.
    pub deadline: std::time::Duration,
}

impl std::fmt::Debug for TimeLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimeLimit")
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

impl TimeLimit {
    fn passed(&self) -> bool {
        self.clock.monotonic() >= self.deadline
    }
}

/// Rows of a region in order.
pub struct RegionScanner {
    /// The families the filter needs first, then those read on demand.
    stores: Vec<StoreScanner>,
    /// How many of `stores` the filter needs: rows are found in these alone.
    essential: usize,
    scan: Scan,
    filter: Option<Box<dyn Filter>>,
    /// The row being returned in fragments, and the store reading it.
    current: Option<(Vec<u8>, usize, bool)>,
    rows: u64,
    done: bool,
    /// Set when a call ran out of time: the row the scan had reached (its cursor).
    heartbeat: Option<Vec<u8>>,
    /// Keeps this scanner's read point registered while it is open.
    _reader: Option<ReadPointGuard>,
    /// Where results over the large-response thresholds are logged.
    large_log: Option<LargeLogHook>,
    /// Cells of the last whole row returned: the room the next row's cells start with.
    last_row_cells: usize,
    /// A row at or past the start was found: rows come in the scan's direction, so
    /// later ones are past it too and are not compared with it again.
    past_start: bool,
}

/// The most cells a row's result reserves room for ahead of reading them.
const MAX_CELLS_RESERVED: usize = 256;

/// The most Results a call reserves room for ahead of reading them.
const ROWS_RESERVED_PER_CALL: usize = 128;

/// What a scanner needs to log its large or slow results.
pub struct LargeLogHook {
    pub log: std::sync::Arc<crate::large_log::LargeLog>,
    pub clock: std::sync::Arc<dyn cellar_io::Clock>,
    pub table: String,
    pub region: String,
}

impl RegionScanner {
    /// Room for `cells` cells in the first row's result (a Get's, sized by the
    /// region's `GetRoom`), as later rows get room for as many as the row before (at
    /// most [`MAX_CELLS_RESERVED`]).
    pub fn reserve_row_cells(&mut self, cells: usize) {
        self.last_row_cells = cells;
    }

    pub fn new(
        mut stores: Vec<StoreScanner>,
        scan: Scan,
        reader: Option<ReadPointGuard>,
    ) -> Result<RegionScanner> {
        // Needed families first, each part in family order (a stable sort).
        stores.sort_by_key(|s| !s.essential);
        let essential = stores.iter().filter(|s| s.essential).count();
        if scan.reversed && essential < stores.len() {
            return Err(RegionError::InvalidRead(
                "Reverse scan with loading CFs on demand is not supported".into(),
            ));
        }
        let mut filter = scan.filter.as_ref().map(cellar_filter::build).transpose()?;
        if let Some(f) = &mut filter {
            f.set_reversed(scan.reversed);
            if f.has_filter_row() && scan.batch.is_some() {
                return Err(RegionError::InvalidRead(
                    "IncompatibleFilterException: cannot set batch on a scan using a filter that has filterRow".into(),
                ));
            }
        }
        Ok(RegionScanner {
            stores,
            essential,
            scan,
            filter,
            current: None,
            rows: 0,
            done: false,
            heartbeat: None,
            _reader: reader,
            large_log: None,
            last_row_cells: 0,
            past_start: false,
        })
    }

    /// Whether the scan's filter (if any) decides on cells alone and every family is
    /// read for every row ([`cellar_filter::Filter::cells_only`]): a Get may then be
    /// read from one source with the filter asked about its cells.
    pub(crate) fn filter_cells_only(&self) -> bool {
        self.essential == self.stores.len() && self.filter.as_ref().is_none_or(|f| f.cells_only())
    }

    /// The store scanners and the scan's filter, reset for a new row (a Get read from
    /// one source asks the filter as the store scanners would).
    pub(crate) fn stores_and_filter_mut(
        &mut self,
    ) -> (&mut [StoreScanner], Option<&mut (dyn Filter + 'static)>) {
        if let Some(f) = &mut self.filter {
            f.reset();
        }
        (&mut self.stores, self.filter.as_deref_mut())
    }

    /// The store scanners, in the order rows are assembled from them.
    pub(crate) fn stores(&self) -> &[StoreScanner] {
        &self.stores
    }

    fn filter_row_level(&self) -> bool {
        self.filter.as_ref().is_some_and(|f| f.has_filter_row())
    }

    /// The next Result: a whole row, or — when `limits` allow cutting rows — a fragment
    /// with `partial` set while more cells of the row may follow.
    pub fn next_result(
        &mut self,
        limits: &CallLimits,
        bytes: &mut u64,
    ) -> Result<Option<RowResult>> {
        self.next_result_timed(limits, bytes, &mut None)
    }

    /// [`RegionScanner::next_result`], timed for the large-response log from `clock`
    /// (the time the previous Result of the same call was noted) when given; leaves
    /// there the time this one was noted. Results read one after another so take one
    /// clock reading each instead of two, of the coarse clock (the log's thresholds
    /// are seconds; a precise reading per row was a tenth of a short scan's time).
    fn next_result_timed(
        &mut self,
        limits: &CallLimits,
        bytes: &mut u64,
        clock: &mut Option<i64>,
    ) -> Result<Option<RowResult>> {
        let started = match (&self.large_log, clock.take()) {
            (None, _) => return self.next_result_inner(limits, bytes),
            (Some(_), Some(t)) => t,
            (Some(hook), None) => hook.clock.coarse_millis(),
        };
        let before = *bytes;
        let out = self.next_result_inner(limits, bytes);
        let Some(hook) = &self.large_log else {
            return out;
        };
        let now = hook.clock.coarse_millis();
        match &out {
            Err(RegionError::RowTooBig { row, limit, .. }) => hook.log.note_row_too_big(
                now,
                &hook.table,
                &hook.region,
                row,
                &|| crate::large_log::Shape::of_scan(&self.scan),
                *limit,
            ),
            Ok(Some(r)) => {
                let millis = (now - started).max(0) as u64;
                // The bytes the stores counted for the result are each cell's size with
                // its tags length: never less than the logged size, a quick first test.
                if hook.log.may_log(bytes.saturating_sub(before), millis) {
                    let size: u64 = r.cells.iter().map(crate::row_sizes::cell_bytes).sum();
                    hook.log.note(
                        now,
                        &hook.table,
                        &hook.region,
                        &r.row,
                        &|| crate::large_log::Shape::of_scan(&self.scan),
                        size,
                        r.cells.len() as u64,
                        millis,
                    );
                }
                *clock = Some(now);
            }
            _ => {}
        }
        out
    }

    /// Logs results over the large-response thresholds to `hook`.
    pub fn with_large_log(mut self, hook: LargeLogHook) -> RegionScanner {
        self.large_log = Some(hook);
        self
    }

    fn next_result_inner(
        &mut self,
        limits: &CallLimits,
        bytes: &mut u64,
    ) -> Result<Option<RowResult>> {
        let cut_rows = (limits.allow_partial || limits.cells_per_result < usize::MAX)
            && !self.filter_row_level();
        let mut skipped: Option<Vec<u8>> = None;
        while !self.done {
            // The row was just found in the one needed family: its store is on it.
            let mut found_in_first = false;
            // Whether the row just found is the read's last.
            let mut found_last = None;
            if let (Some(t), Some(row)) = (&limits.time_limit, &skipped) {
                // Rows were examined and none returned, and time is up: answer with a
                // heartbeat naming how far the scan got.
                if self.current.is_none() && t.passed() {
                    self.heartbeat = Some(row.clone());
                    return Ok(None);
                }
            }
            if self.current.is_none() {
                // A done filter is not asked here: as in HBase, the filter is reset
                // between rows and asked after (see `row_done`), and a store asked
                // for a cell while it is done closes (`StoreScanner::read_row`).
                if self.scan.limit.is_some_and(|l| self.rows >= l) {
                    self.done = true;
                    break;
                }
                let rows = self.stores[..self.essential]
                    .iter()
                    .filter_map(|s| s.peek_row());
                let next = if self.scan.reversed {
                    rows.max()
                } else {
                    rows.min()
                };
                let Some(row) = next.map(<[u8]>::to_vec) else {
                    self.done = true;
                    break;
                };
                let (past_stop, last) = self.scan.against_stop(&row);
                if past_stop {
                    self.done = true;
                    break;
                }
                if !self.past_start {
                    if self.scan.is_before_start(&row) {
                        self.skip_row(&row, None)?;
                        skipped = Some(row);
                        continue;
                    }
                    self.past_start = true;
                }
                found_last = Some(last);
                if let Some(f) = &mut self.filter {
                    f.reset();
                    if f.filter_row_key(&row) {
                        if f.filter_all_remaining() {
                            self.done = true;
                            break;
                        }
                        let hint = self.stores[..self.essential]
                            .iter()
                            .find(|s| s.peek_row() == Some(row.as_slice()))
                            .and_then(|s| s.heap().peek().cloned())
                            .and_then(|c| f.next_cell_hint(&c));
                        self.skip_row(&row, hint)?;
                        skipped = Some(row);
                        continue;
                    }
                }
                found_in_first = self.essential == 1;
                self.current = Some((row, 0, false));
            }
            let Some((row, mut idx, returned_before)) = self.current.take() else {
                continue;
            };
            let last = found_last.unwrap_or_else(|| self.is_last_row(&row));
            // Rows of a table tend to be alike: room for as many cells as the last.
            let mut cells = Vec::with_capacity(self.last_row_cells);
            let (max_cells, max_bytes) = if cut_rows {
                (
                    limits.cells_per_result,
                    if limits.allow_partial {
                        limits.bytes
                    } else {
                        u64::MAX
                    },
                )
            } else {
                (usize::MAX, u64::MAX)
            };
            let mut more = false;
            let mut kept = true;
            while idx < self.stores.len() {
                if idx == self.essential && idx > 0 {
                    // The needed families are read: decide on the row before reading
                    // the others (HBase's joined heap), which only kept rows see.
                    kept = self.keep_row(&mut cells, returned_before);
                    if !kept {
                        break;
                    }
                }
                if idx >= self.essential {
                    self.stores[idx].catch_up(&row)?;
                }
                if !(idx == 0 && found_in_first)
                    && self.stores[idx].peek_row() != Some(row.as_slice())
                {
                    idx += 1;
                    continue;
                }
                let filter = self.filter.as_deref_mut();
                self.stores[idx].set_on_last_row(last);
                match self.stores[idx]
                    .read_row(&row, filter, &mut cells, max_cells, max_bytes, bytes)?
                {
                    RowProgress::Done => idx += 1,
                    RowProgress::More => {
                        more = true;
                        break;
                    }
                }
            }
            if self.essential < self.stores.len() {
                // Cells of the families read on demand follow the others: back into
                // family order (each family's own cells are in order already).
                cells.sort_by(|a, b| a.family().cmp(b.family()));
            }
            if more {
                self.current = Some((row.clone(), idx, true));
                if cells.is_empty() {
                    continue;
                }
                // HBase asks a done filter after each Result, and ends the region's
                // scan even inside a row; filters are reset only between rows.
                self.done = self.filter_done();
                return Ok(Some(RowResult {
                    row,
                    cells,
                    exists: None,
                    partial: true,
                    cursor: false,
                }));
            }
            if kept && self.essential == self.stores.len() {
                kept = self.keep_row(&mut cells, returned_before);
            }
            if !kept {
                cells.clear();
            }
            if cells.is_empty() && !returned_before {
                skipped = Some(row);
                continue;
            }
            if !cells.is_empty() || returned_before {
                self.rows += 1;
            }
            self.last_row_cells = cells.len().min(MAX_CELLS_RESERVED);
            self.row_done();
            return Ok(Some(RowResult {
                row,
                cells,
                exists: None,
                partial: false,
                cursor: false,
            }));
        }
        Ok(None)
    }

    /// After a row is returned whole: the filter is reset for the next row and then
    /// asked whether it is done (HBase's `nextRaw`), so a filter whose state a reset
    /// clears (ColumnCountGetFilter) goes on with the stores still open.
    fn row_done(&mut self) {
        if let Some(f) = &mut self.filter {
            f.reset();
            if f.filter_all_remaining() {
                self.done = true;
            }
        }
    }

    /// The filter's row hooks on the cells read of a row: false when the row is
    /// dropped. A row none of whose needed families had a cell is dropped too (HBase
    /// does not visit it), unless fragments of it were returned already. A row whose
    /// cells `filterRowCells` removed is not dropped here: as HBase's, it goes on to
    /// the families read on demand, and is skipped only if it ends up empty.
    fn keep_row(&mut self, cells: &mut Vec<Cell>, returned_before: bool) -> bool {
        if cells.is_empty() {
            return returned_before;
        }
        if let Some(f) = &mut self.filter {
            // As HBase's FilterWrapper: filterRow is asked only about rows that
            // still have cells.
            if f.has_filter_row() {
                f.filter_row_cells(cells);
                if !cells.is_empty() && f.filter_row() {
                    cells.clear();
                    return returned_before;
                }
            }
        }
        true
    }

    fn skip_row(&mut self, row: &[u8], hint: Option<Vec<u8>>) -> Result<()> {
        let last = self.is_last_row(row);
        for s in &mut self.stores {
            if s.peek_row() == Some(row) {
                s.set_on_last_row(last);
                s.skip_row(row)?;
            }
            if let Some(h) = &hint {
                s.seek(h)?;
            }
        }
        Ok(())
    }

    /// Whether no row can follow `row` in this read (a Get's row, an inclusive stop
    /// row, read forward): its stores then close after it instead of seeking on.
    fn is_last_row(&self, row: &[u8]) -> bool {
        !self.scan.reversed && self.scan.stop_inclusive && self.scan.stop_row == row
    }

    /// One round trip: Results until `limits.rows` rows, `limits.bytes` bytes or the end.
    /// Returns the Results and whether the region may have more.
    pub fn next_call(&mut self, limits: &CallLimits) -> Result<(Vec<RowResult>, bool)> {
        // Room for the call's rows up front (a short scan's limit, or a first
        // helping of an open-ended call's): growing one row at a time copies them.
        let room = match self.scan.limit {
            Some(l) => limits.rows.min(l.saturating_sub(self.rows) as usize),
            None => limits.rows,
        };
        let mut out = Vec::with_capacity(room.min(ROWS_RESERVED_PER_CALL));
        let mut bytes = 0u64;
        let mut rows = 0usize;
        let mut clock = None;
        while rows < limits.rows && bytes < limits.bytes {
            match self.next_result_timed(limits, &mut bytes, &mut clock)? {
                Some(r) => {
                    if !r.partial {
                        rows += 1;
                    }
                    out.push(r);
                    if limits.time_limit.as_ref().is_some_and(|t| t.passed()) {
                        break;
                    }
                }
                None if self.heartbeat.is_some() => return Ok((out, true)),
                None => return Ok((out, false)),
            }
        }
        Ok((out, !self.done))
    }

    /// Whether the filter has ended the scan (`filterAllRemaining`, HBase's
    /// `isFilterDone`): a call that returns nothing then ends the whole scan, not just
    /// this region's part of it.
    pub fn filter_done(&self) -> bool {
        self.filter
            .as_ref()
            .is_some_and(|f| f.filter_all_remaining())
    }

    /// After a call that ran out of time with nothing to return: the row the scan had
    /// reached (what a heartbeat's cursor reports). Cleared by reading it.
    pub fn take_heartbeat(&mut self) -> Option<Vec<u8>> {
        self.heartbeat.take()
    }

    /// The next whole row with at least one returned cell.
    pub fn next_row(&mut self) -> Result<Option<RowResult>> {
        let limits = CallLimits {
            time_limit: None,
            rows: 1,
            bytes: u64::MAX,
            cells_per_result: usize::MAX,
            allow_partial: false,
        };
        let mut bytes = 0;
        let mut clock = None;
        loop {
            match self.next_result_timed(&limits, &mut bytes, &mut clock)? {
                Some(r) if r.cells.is_empty() => continue,
                other => return Ok(other),
            }
        }
    }
}

impl Iterator for RegionScanner {
    type Item = Result<RowResult>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_row() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
