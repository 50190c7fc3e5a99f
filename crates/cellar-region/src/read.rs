//! The read path of a region: a scanner over its stores (MemStore and files merged per
//! family, matched against the read's versions, time range and columns, the filter
//! applied), a Get as a one-row scan, and the large-response log of both.

use cellar_types::KeyRef;

use crate::error::{RegionError, Result};
use crate::heap::Heap;
use crate::matcher::{MatchParams, Matcher};
use crate::one_source_get::{self, Outcome};
use crate::region::Region;
use crate::scanner::{RegionScanner, StoreScanner};
use cellar_api::{Get, RowResult, Scan};

impl Region {
    /// Opens a scanner over `scan`'s rows (whole rows, no limits).
    pub fn scanner(&self, scan: &Scan) -> Result<RegionScanner> {
        let scanner = self.scanner_inner(scan.clone(), None)?;
        Ok(match &self.ctx.large_log {
            Some(log) => scanner.with_large_log(crate::scanner::LargeLogHook {
                log: log.clone(),
                clock: self.ctx.clock.clone(),
                table: self.table.name.clone(),
                region: self.name.clone(),
            }),
            None => scanner,
        })
    }

    fn scanner_inner(&self, scan: Scan, get_row: Option<&[u8]>) -> Result<RegionScanner> {
        self.check_open()?;
        if scan.start_row.len() > cellar_types::MAX_ROW_LEN
            || scan.stop_row.len() > cellar_types::MAX_ROW_LEN + 1
        {
            return Err(RegionError::InvalidRead(
                "Row length is > 32767".to_string(),
            ));
        }
        if scan.raw && scan.columns.values().any(Option::is_some) {
            return Err(RegionError::InvalidRead(
                "Cannot specify any column for a raw scan".into(),
            ));
        }
        for family in scan.columns.keys() {
            if !self.stores.contains_key(family) {
                return Err(RegionError::NoSuchColumnFamily {
                    family: family.to_vec(),
                    region: self.name.clone(),
                });
            }
        }
        self.metrics.read_requests.add(1);
        let reader = self.readers.open(&self.mvcc);
        let read_point = reader.read_point();
        let now = self.ctx.clock.now_millis();
        // Families the filter does not need are read on demand (HBase's
        // `loadColumnFamiliesOnDemand`), for rows found in the others.
        let on_demand = scan.filter.as_ref().filter(|_| {
            scan.load_column_families_on_demand
                .unwrap_or(self.ctx.config.load_families_on_demand)
        });
        let mut scanners = Vec::with_capacity(self.stores.len());
        for (family, store) in &self.stores {
            let columns = if scan.columns.is_empty() {
                None
            } else {
                match scan.columns.get(family) {
                    None => continue,
                    Some(c) => c.clone(),
                }
            };
            if !scan.raw {
                store.note_read_versions(scan.max_versions);
            }
            let start = KeyRef::first_on_row(&scan.start_row);
            let get = get_row.filter(|_| !scan.reversed);
            let cursors = store.cursors(read_point, &start, get, scan.cache_blocks)?;
            let heap = if scan.reversed {
                // Rows at or below the start row; empty = from the last row.
                let mut bound = scan.start_row.clone();
                if !bound.is_empty() {
                    bound.push(0);
                }
                Heap::reversed(cursors, &bound)?
            } else {
                Heap::new(cursors)
            };
            let params = MatchParams::new(
                &store.family,
                scan.max_versions,
                scan.time_range,
                columns,
                scan.raw,
                now,
            );
            let scanner =
                StoreScanner::new(heap, Matcher::new(params), self.ctx.config.max_row_size);
            scanners.push(match on_demand {
                Some(f) if !f.is_family_essential(family) => scanner.on_demand(),
                _ => scanner,
            });
        }
        RegionScanner::new(scanners, scan, Some(reader))
    }

    /// Reads one row (an empty result when it has no cells).
    pub fn get(&self, get: &Get) -> Result<RowResult> {
        // The large-response log's timing (thresholds of seconds): the coarse clock,
        // read only when there is a log.
        let started = self
            .ctx
            .large_log
            .as_ref()
            .map_or(0, |_| self.ctx.clock.coarse_millis());
        let next = self.get_row(get);
        if let (Err(RegionError::RowTooBig { row, limit, .. }), Some(log)) =
            (&next, &self.ctx.large_log)
        {
            log.note_row_too_big(
                self.ctx.clock.coarse_millis(),
                &self.table.name,
                &self.name,
                row,
                &|| crate::large_log::Shape::of_get(get),
                *limit,
            );
        }
        let mut result = match next? {
            Some(r) if r.row == get.row => {
                self.get_room.note(&r.row, r.cells.len());
                r
            }
            _ => RowResult {
                row: get.row.clone(),
                cells: Vec::new(),
                exists: None,
                partial: false,
                cursor: false,
            },
        };
        if let Some(log) = &self.ctx.large_log {
            let now = self.ctx.clock.coarse_millis();
            let size: u64 = result.cells.iter().map(crate::row_sizes::cell_bytes).sum();
            log.note(
                now,
                &self.table.name,
                &self.name,
                &get.row,
                &|| crate::large_log::Shape::of_get(get),
                size,
                result.cells.len() as u64,
                (now - started).max(0) as u64,
            );
        }
        if get.check_existence_only {
            result.exists = Some(!result.cells.is_empty());
            result.cells.clear();
        }
        Ok(result)
    }

    /// The row a Get reads: from one source per store when no other holds the row and
    /// the Get has no filter (`one_source_get.rs`), otherwise by the one-row scan
    /// opened for it.
    fn get_row(&self, get: &Get) -> Result<Option<RowResult>> {
        let cells = self.get_room.room(&get.row);
        let mut scanner = self.scanner_inner(get.to_scan(), Some(&get.row))?;
        match one_source_get::read(&mut scanner, &get.row, cells)? {
            Outcome::Row(row) => Ok(Some(row)),
            Outcome::Scan => {
                scanner.reserve_row_cells(cells);
                scanner.next_row()
            }
        }
    }

    /// [`Region::get`]'s one-source path alone: `None` when the Get is not for it
    /// (tests hold it to the general path).
    #[cfg(test)]
    pub(crate) fn get_from_one_source(&self, get: &Get) -> Result<Option<RowResult>> {
        let mut scanner = self.scanner_inner(get.to_scan(), Some(&get.row))?;
        Ok(match one_source_get::read(&mut scanner, &get.row, 0)? {
            Outcome::Row(row) => Some(row),
            Outcome::Scan => None,
        })
    }

    /// [`Region::get`]'s general path alone: a one-row scan (tests hold the one-source
    /// path to it).
    #[cfg(test)]
    pub(crate) fn get_general(&self, get: &Get) -> Result<Option<RowResult>> {
        let mut scanner = self.scanner_inner(get.to_scan(), Some(&get.row))?;
        scanner.next_row()
    }
}
