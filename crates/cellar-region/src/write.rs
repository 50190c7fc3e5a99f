//! The write path of a region (§6.2, §8, §13): check limits and MemStore pressure, lock
//! the row, stamp timestamps (resolving Delete-at-LATEST to the version it names), take a
//! sequence id, log the edit, apply it to the MemStores, advance the read point, unlock.
//! Every operation here is atomic on its row.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use cellar_types::{Cell, CellType, LATEST_TIMESTAMP};
use cellar_wal::{Durability, WalEdit};

use crate::error::{RegionError, Result};
use crate::region::{Maintenance, Region};
use cellar_api::{
    Append, CheckAndMutate, CheckAndMutateResult, Condition, Delete, Increment, Mutation, Put,
};
use cellar_api::{Get, RowResult, TimeRange};

impl Region {
    /// Writes a Put.
    pub fn put(&self, put: Put) -> Result<()> {
        let row = put.row.clone();
        self.apply(&row, &[Mutation::Put(put)], None).map(|_| ())
    }

    /// Writes a Delete.
    pub fn delete(&self, delete: Delete) -> Result<()> {
        let row = delete.row.clone();
        self.apply(&row, &[Mutation::Delete(delete)], None)
            .map(|_| ())
    }

    /// Adds to counters; returns the new values (unless `return_results` is off).
    pub fn increment(&self, inc: Increment) -> Result<RowResult> {
        let row = inc.row.clone();
        Ok(self.apply(&row, &[Mutation::Increment(inc)], None)?.1)
    }

    /// Appends to values; returns the new values (unless `return_results` is off).
    pub fn append(&self, app: Append) -> Result<RowResult> {
        let row = app.row.clone();
        Ok(self.apply(&row, &[Mutation::Append(app)], None)?.1)
    }

    /// Applies several mutations of one row atomically (`mutateRow`).
    pub fn mutate_row(&self, row: &[u8], mutations: &[Mutation]) -> Result<RowResult> {
        Ok(self.apply(row, mutations, None)?.1)
    }

    /// Applies `mutations` to `row` atomically when `condition` holds; returns whether it
    /// held, and the mutations' results.
    pub fn check_and_mutate(
        &self,
        row: &[u8],
        condition: &Condition,
        mutations: &[Mutation],
    ) -> Result<(bool, RowResult)> {
        self.apply(row, mutations, Some(condition))
    }

    /// HBase 2.4's `checkAndMutate(CheckAndMutate)`: the same, as one request.
    pub fn check_and_mutate_request(&self, cam: &CheckAndMutate) -> Result<CheckAndMutateResult> {
        let (success, result) = self.apply(&cam.row, &cam.mutations, Some(&cam.condition))?;
        Ok(CheckAndMutateResult { success, result })
    }

    /// Applies each mutation on its own (atomic per row, not across rows).
    pub fn batch(&self, mutations: &[Mutation]) -> Vec<Result<RowResult>> {
        mutations
            .iter()
            .map(|m| {
                self.apply(m.row(), std::slice::from_ref(m), None)
                    .map(|r| r.1)
            })
            .collect()
    }

    fn family_checked(&self, family: &[u8]) -> Result<()> {
        if self.stores.contains_key(family) {
            Ok(())
        } else {
            Err(RegionError::NoSuchColumnFamily {
                family: family.to_vec(),
                region: self.name.clone(),
            })
        }
    }

    fn check_cell_size(
        &self,
        row: &[u8],
        family: &[u8],
        qualifier: &[u8],
        value_len: usize,
    ) -> Result<()> {
        let limit = self.ctx.config.keyvalue_max_size;
        if limit <= 0 {
            return Ok(());
        }
        let key_len =
            cellar_types::KEY_INFRASTRUCTURE_SIZE + row.len() + family.len() + qualifier.len();
        let size = (8 + key_len + value_len + 4) as u64;
        if size > limit as u64 {
            return Err(RegionError::CellTooLarge {
                row: row.to_vec(),
                family: family.to_vec(),
                qualifier: qualifier.to_vec(),
                size,
                limit: limit as u64,
            });
        }
        Ok(())
    }

    fn validate(&self, row: &[u8], mutations: &[Mutation]) -> Result<()> {
        if row.is_empty() {
            return Err(RegionError::InvalidMutation("Row length is 0".into()));
        }
        if !self.contains_row(row) {
            return Err(RegionError::WrongRegion {
                row: row.to_vec(),
                region: self.name.clone(),
            });
        }
        if row.len() > cellar_types::MAX_ROW_LEN {
            return Err(RegionError::InvalidMutation(format!(
                "Row length {} is > 32767",
                row.len()
            )));
        }
        if mutations.is_empty() {
            return Err(RegionError::InvalidMutation("No mutations".into()));
        }
        for m in mutations {
            if m.row() != row {
                return Err(RegionError::RowMismatch {
                    row: m.row().to_vec(),
                    expected: row.to_vec(),
                });
            }
            match m {
                Mutation::Put(p) => {
                    if p.cells.is_empty() {
                        return Err(RegionError::InvalidMutation("No columns to insert".into()));
                    }
                    // A Put's cells are mostly of one family: looked up once a run.
                    let mut checked: Option<&[u8]> = None;
                    for (f, q, ts, v) in &p.cells {
                        if checked != Some(f.as_slice()) {
                            self.family_checked(f)?;
                            checked = Some(f.as_slice());
                        }
                        if *ts < 0 {
                            return Err(RegionError::InvalidMutation(format!(
                                "Timestamp cannot be negative. ts={ts}"
                            )));
                        }
                        self.check_cell_size(row, f, q, v.len())?;
                    }
                }
                Mutation::Delete(d) => {
                    for s in &d.specs {
                        self.family_checked(&s.family)?;
                        if s.ts < 0 {
                            return Err(RegionError::InvalidMutation(format!(
                                "Timestamp cannot be negative. ts={}",
                                s.ts
                            )));
                        }
                    }
                }
                Mutation::Increment(i) => {
                    if i.columns.is_empty() {
                        return Err(RegionError::InvalidMutation(
                            "No columns to increment".into(),
                        ));
                    }
                    for (f, q, _) in &i.columns {
                        self.family_checked(f)?;
                        self.check_cell_size(row, f, q, 8)?;
                    }
                }
                Mutation::Append(a) => {
                    if a.columns.is_empty() {
                        return Err(RegionError::InvalidMutation("No columns to append".into()));
                    }
                    for (f, q, v) in &a.columns {
                        self.family_checked(f)?;
                        self.check_cell_size(row, f, q, v.len())?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Refuses writes while the MemStores are over flush size × block multiplier.
    fn check_resources(&self) -> Result<()> {
        let limit = self
            .flush_size()
            .saturating_mul(self.ctx.config.memstore_block_multiplier);
        if self.memstore_size() <= limit {
            return Ok(());
        }
        if self.request(Maintenance::Flush(self.name.clone())) {
            self.metrics
                .blocked_requests
                .fetch_add(1, Ordering::Relaxed);
            return Err(RegionError::RegionTooBusy {
                region: self.name.clone(),
                limit,
            });
        }
        // No background flusher: flush here, then go on.
        self.flush()?;
        Ok(())
    }

    /// The newest `n` versions of a column (as a Get sees them now).
    fn current(
        &self,
        row: &[u8],
        family: &[u8],
        qualifier: &[u8],
        n: u32,
        tr: TimeRange,
    ) -> Result<Vec<Cell>> {
        let mut get = Get::new(row).add_column(family, qualifier).max_versions(n);
        get.time_range = tr;
        Ok(self.get(&get)?.cells)
    }

    fn durability_of(&self, mutations: &[Mutation]) -> Durability {
        let fallback = self
            .table
            .durability
            .or(self.ctx.config.default_durability());
        let rank = |d: Durability| match d {
            Durability::SkipWal => 0,
            Durability::AsyncWal => 1,
            Durability::SyncWal | Durability::UseDefault => 2,
            Durability::FsyncWal => 3,
        };
        mutations
            .iter()
            .map(|m| m.durability().or(fallback))
            .max_by_key(|d| rank(*d))
            .unwrap_or(fallback)
    }

    /// Checks the condition of a checkAndMutate; returns whether it holds and the
    /// timestamp of the cell it saw.
    fn check_condition(&self, row: &[u8], c: &Condition) -> Result<(bool, i64)> {
        match c {
            Condition::Column {
                family,
                qualifier,
                op,
                expected,
                time_range,
            } => {
                let cells = self.current(row, family, qualifier, 1, *time_range)?;
                let value_is_null = expected.as_ref().is_none_or(|v| v.is_empty());
                let not_equal = *op == cellar_api::CompareOp::NotEqual;
                Ok(match (cells.first(), value_is_null) {
                    (None, true) => (!not_equal, 0),
                    (Some(cell), true) => (cell.value().is_empty() != not_equal, cell.timestamp()),
                    (Some(cell), false) => {
                        let expected = expected.as_deref().unwrap_or_default();
                        (op.holds(expected.cmp(cell.value())), cell.timestamp())
                    }
                    (None, false) => (false, 0),
                })
            }
            // As HBase's checkAndMutate with a filter: a Get of the row with the filter
            // must return a cell; the first one's timestamp is what was seen.
            Condition::Filter { filter, time_range } => {
                let mut get = Get::new(row).filter(filter.clone());
                get.time_range = *time_range;
                let cells = self.get(&get)?.cells;
                Ok(match cells.first() {
                    Some(cell) => (true, cell.timestamp()),
                    None => (false, 0),
                })
            }
        }
    }

    fn apply(
        &self,
        row: &[u8],
        mutations: &[Mutation],
        condition: Option<&Condition>,
    ) -> Result<(bool, RowResult)> {
        self.check_open()?;
        if self.table.read_only {
            return Err(RegionError::InvalidMutation(format!(
                "Table {} is read only",
                self.table.name
            )));
        }
        self.validate(row, mutations)?;
        if let Some(family) = condition.and_then(|c| c.family()) {
            self.family_checked(family)?;
        }
        if let Err(e) = self.check_resources() {
            self.locks.note_busy(row);
            return Err(e);
        }
        let guard = self
            .locks
            .lock_rows(
                &[row],
                self.ctx.config.row_lock_wait(),
                self.ctx.clock.as_ref(),
            )
            .map_err(|r| RegionError::RowLockTimeout {
                row: r.clone(),
                region: self.name.clone(),
            })?;
        let clock_now = self.ctx.clock.now_millis();
        let now = self.row_clock.now(row, clock_now);
        let mut put_ts = now;
        if let Some(c) = condition {
            let (holds, seen_ts) = self.check_condition(row, c)?;
            if !holds {
                return Ok((false, RowResult::default()));
            }
            put_ts = now.max(seen_ts);
        }
        let mut cells: Vec<Cell> = Vec::new();
        let mut results: Vec<Cell> = Vec::new();
        // Puts alone (the common write) are written straight into one buffer.
        let packed = match Self::put_cells(row, mutations, put_ts) {
            Some(put) => {
                cells = put?;
                true
            }
            None => false,
        };
        let returns =
            !packed && self.build_cells(row, mutations, now, put_ts, &mut cells, &mut results)?;
        // Results hold only the cells increments and appends computed.
        self.row_clock.note(row, &results, clock_now);
        if !cells.is_empty() {
            let durability = self.durability_of(mutations);
            self.write_cells(cells, packed, durability, clock_now)?;
        }
        drop(guard);
        self.metrics.write_requests.fetch_add(1, Ordering::Relaxed);
        self.maybe_flush();
        results.sort_by(cellar_types::compare_cells);
        Ok((
            true,
            RowResult {
                row: row.to_vec(),
                cells: if returns { results } else { Vec::new() },
                exists: None,
                partial: false,
                cursor: false,
            },
        ))
    }

    /// The cells of `mutations` of `row` in one shared buffer, when they are Puts alone
    /// (server timestamps stamped `put_ts`); `None` for any other mix.
    fn put_cells(row: &[u8], mutations: &[Mutation], put_ts: i64) -> Option<Result<Vec<Cell>>> {
        if !mutations.iter().all(|m| matches!(m, Mutation::Put(_))) {
            return None;
        }
        let parts = mutations
            .iter()
            .flat_map(|m| match m {
                Mutation::Put(p) => p.cells.as_slice(),
                _ => &[],
            })
            .map(|(f, q, ts, v)| {
                let ts = if *ts == LATEST_TIMESTAMP { put_ts } else { *ts };
                (f.as_slice(), q.as_slice(), ts, v.as_slice())
            });
        Some(Cell::puts_packed(row, parts).map_err(Into::into))
    }

    /// The cells `mutations` of `row` write (timestamps stamped, counters and appends
    /// computed from the row's current state); returns whether results are wanted.
    fn build_cells(
        &self,
        row: &[u8],
        mutations: &[Mutation],
        now: i64,
        put_ts: i64,
        cells: &mut Vec<Cell>,
        results: &mut Vec<Cell>,
    ) -> Result<bool> {
        let mut returns = false;
        for m in mutations {
            match m {
                Mutation::Put(p) => {
                    for (f, q, ts, v) in &p.cells {
                        let ts = if *ts == LATEST_TIMESTAMP { put_ts } else { *ts };
                        cells.push(Cell::put(
                            row,
                            f.as_slice(),
                            q.as_slice(),
                            ts,
                            v.as_slice(),
                        )?);
                    }
                }
                Mutation::Delete(d) => self.delete_cells(row, d, now, cells)?,
                Mutation::Increment(inc) => {
                    returns |= inc.return_results;
                    self.increment_cells(row, inc, now, cells, results)?;
                }
                Mutation::Append(app) => {
                    returns |= app.return_results;
                    for (f, q, v) in &app.columns {
                        let old = self.current(row, f, q, 1, TimeRange::ALL)?;
                        let (value, ts) = match old.first() {
                            Some(c) => {
                                let mut value = c.value().to_vec();
                                value.extend_from_slice(v);
                                (value, now.max(c.timestamp().saturating_add(1)))
                            }
                            None => (v.clone(), now),
                        };
                        let cell = Cell::put(row, f.as_slice(), q.as_slice(), ts, value)?;
                        results.push(cell.clone());
                        cells.push(cell);
                    }
                }
            }
        }
        Ok(returns)
    }

    /// Applies mutations of several rows of this region atomically: one WAL edit, one
    /// sequence id, rows locked in sorted order (HBase's MultiRowMutationEndpoint). Every
    /// row must be in the region: the first row outside fails with WrongRegion when it is
    /// the first row checked, otherwise with "Requested row out of range"; nothing is
    /// applied.
    pub fn mutate_rows(&self, mutations: &[Mutation]) -> Result<()> {
        self.mutate_rows_if(&[], mutations).map(|_| ())
    }

    /// [`Region::mutate_rows`] when every condition holds (HBase 2.4's conditional
    /// MultiRowMutationEndpoint): the condition rows are locked with the mutated ones,
    /// the conditions evaluated under the locks, and the mutations applied only if all
    /// hold. Returns whether they were applied.
    pub fn mutate_rows_if(
        &self,
        conditions: &[(Vec<u8>, Condition)],
        mutations: &[Mutation],
    ) -> Result<bool> {
        self.check_open()?;
        if mutations.is_empty() {
            return Err(RegionError::InvalidMutation("No mutations".into()));
        }
        for (i, m) in mutations.iter().enumerate() {
            if !self.contains_row(m.row()) {
                return Err(if i == 0 {
                    RegionError::WrongRegion {
                        row: m.row().to_vec(),
                        region: self.name.clone(),
                    }
                } else {
                    RegionError::RowOutOfRange {
                        row: m.row().to_vec(),
                    }
                });
            }
            self.validate(m.row(), std::slice::from_ref(m))?;
        }
        for (row, c) in conditions {
            if !self.contains_row(row) {
                return Err(RegionError::RowOutOfRange { row: row.clone() });
            }
            if let Some(family) = c.family() {
                self.family_checked(family)?;
            }
        }
        let mut rows: Vec<&[u8]> = mutations.iter().map(|m| m.row()).collect();
        rows.extend(conditions.iter().map(|(r, _)| r.as_slice()));
        if let Err(e) = self.check_resources() {
            for r in &rows {
                self.locks.note_busy(r);
            }
            return Err(e);
        }
        let guard = self
            .locks
            .lock_rows(
                &rows,
                self.ctx.config.row_lock_wait(),
                self.ctx.clock.as_ref(),
            )
            .map_err(|r| RegionError::RowLockTimeout {
                row: r.clone(),
                region: self.name.clone(),
            })?;
        for (row, c) in conditions {
            if !self.check_condition(row, c)?.0 {
                return Ok(false);
            }
        }
        let now = self.ctx.clock.now_millis();
        let mut cells = Vec::new();
        let mut results = Vec::new();
        for m in mutations {
            let row_now = self.row_clock.now(m.row(), now);
            let computed = results.len();
            self.build_cells(
                m.row(),
                std::slice::from_ref(m),
                row_now,
                row_now,
                &mut cells,
                &mut results,
            )?;
            self.row_clock.note(m.row(), &results[computed..], now);
        }
        if !cells.is_empty() {
            self.write_cells(cells, false, self.durability_of(mutations), now)?;
        }
        drop(guard);
        self.metrics.write_requests.fetch_add(1, Ordering::Relaxed);
        self.maybe_flush();
        Ok(true)
    }

    fn delete_cells(&self, row: &[u8], d: &Delete, now: i64, out: &mut Vec<Cell>) -> Result<()> {
        let stamp = |ts: i64| if ts == LATEST_TIMESTAMP { now } else { ts };
        if d.specs.is_empty() {
            for family in self.stores.keys() {
                out.push(Cell::new(
                    row,
                    family.as_slice(),
                    b"".as_slice(),
                    stamp(d.ts),
                    CellType::DeleteFamily,
                    b"".as_slice(),
                )?);
            }
            return Ok(());
        }
        // Delete-at-LATEST markers take the timestamp of the N-th newest version, N
        // counting such markers of the column in this Delete.
        let mut latest_count: HashMap<(&[u8], &[u8]), u32> = HashMap::new();
        for s in &d.specs {
            if s.kind == CellType::Delete && s.ts == LATEST_TIMESTAMP {
                *latest_count.entry((&s.family, &s.qualifier)).or_insert(0) += 1;
            }
        }
        let mut resolved: HashMap<(&[u8], &[u8]), Vec<i64>> = HashMap::new();
        for ((f, q), n) in &latest_count {
            let versions = self.current(row, f, q, *n, TimeRange::ALL)?;
            let ts = if versions.len() < *n as usize {
                now
            } else {
                versions.last().map_or(now, |c| c.timestamp())
            };
            resolved.insert((f, q), vec![ts]);
        }
        for s in &d.specs {
            let ts = if s.kind == CellType::Delete && s.ts == LATEST_TIMESTAMP {
                resolved
                    .get(&(s.family.as_slice(), s.qualifier.as_slice()))
                    .and_then(|v| v.first().copied())
                    .unwrap_or(now)
            } else {
                stamp(s.ts)
            };
            out.push(Cell::new(
                row,
                s.family.as_slice(),
                s.qualifier.as_slice(),
                ts,
                s.kind,
                b"".as_slice(),
            )?);
        }
        Ok(())
    }

    fn increment_cells(
        &self,
        row: &[u8],
        inc: &Increment,
        now: i64,
        out: &mut Vec<Cell>,
        results: &mut Vec<Cell>,
    ) -> Result<()> {
        for (f, q, delta) in &inc.columns {
            let old = self.current(row, f, q, 1, inc.time_range)?;
            let (old_value, ts) = match old.first() {
                Some(c) => {
                    let bytes: [u8; 8] =
                        c.value().try_into().map_err(|_| RegionError::NotALong {
                            len: c.value().len(),
                        })?;
                    (
                        i64::from_be_bytes(bytes),
                        now.max(c.timestamp().saturating_add(1)),
                    )
                }
                None => (0, now),
            };
            let value = old_value.wrapping_add(*delta);
            let cell = Cell::put(row, f.as_slice(), q.as_slice(), ts, value.to_be_bytes())?;
            // Every delta is written, 0 included: HBase 2.6's `reckonDeltas` writes a
            // new version with the same value (found by the HBase oracle).
            results.push(cell.clone());
            out.push(cell);
        }
        Ok(())
    }

    /// Takes a sequence id, logs and applies `cells` (`packed` when they already share
    /// one buffer) as one edit.
    fn write_cells(
        &self,
        mut cells: Vec<Cell>,
        packed: bool,
        durability: Durability,
        now: i64,
    ) -> Result<()> {
        // One buffer for the edit's cells: a Get of the row then reads them side by
        // side and takes one reference count for all of them (a lone cell keeps its
        // own buffer rather than being copied). Done before the sequence id is taken,
        // so the copy does not hold back the read point of other writers' edits.
        if cells.len() > 1 && !packed {
            cells = Cell::pack(cells);
        }
        let updates = self.updates.read().unwrap_or_else(|e| e.into_inner());
        // Checked under the updates lock: a closing region's final flush takes it
        // exclusively, so no write can land in the MemStore after that flush.
        self.check_open()?;
        let seq = self.mvcc.begin();
        cells = cells.into_iter().map(|c| c.with_seq_id(seq)).collect();
        if durability != Durability::SkipWal {
            let edit = WalEdit {
                region: self.name.clone(),
                seq_id: seq,
                write_time: now,
                cells,
            };
            if let Err(e) = self.ctx.wal.append(&edit, durability) {
                drop(updates);
                self.mvcc.complete(seq);
                return Err(e.into());
            }
            cells = edit.cells;
        }
        // Each family's run of cells (a Put's cells come family by family) goes to its
        // store at once.
        let mut cells = cells.into_iter().peekable();
        while let Some(first) = cells.next() {
            let Some(store) = self.stores.get(first.family()) else {
                continue;
            };
            let family = store.family.name.as_slice();
            let run = std::iter::once(first).chain(std::iter::from_fn(|| {
                cells.next_if(|c| c.family() == family)
            }));
            store.add_all(run, now);
        }
        drop(updates);
        if durability == Durability::FsyncWal {
            self.mvcc.complete_after_shared_sync(seq);
        } else {
            self.mvcc.complete(seq);
        }
        Ok(())
    }

    /// Asks for a flush once the MemStore is over its size. The edit that got here is
    /// already applied and logged, so a flush that fails (run inline when there is no
    /// maintenance task) does not fail it: a caller told otherwise would apply it again
    /// (an increment twice). The snapshot stays for the next flush to write.
    fn maybe_flush(&self) {
        if self.memstore_size() < self.flush_size() {
            return;
        }
        if self.flush_requested.swap(true, Ordering::SeqCst) {
            return;
        }
        if !self.request(Maintenance::Flush(self.name.clone())) {
            // The flush clears the request flag as it starts, failing or not.
            if let Err(e) = self.flush() {
                tracing::warn!(region = %self.name, error = %e, "flush after a write failed");
            }
        }
    }
}
