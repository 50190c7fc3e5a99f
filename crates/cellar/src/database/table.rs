//! A handle on one table of an embedded database: every call finds the region serving
//! its row (so a handle stays valid across alter, and reports TableNotEnabled while the
//! table is disabled), writes refused with RegionTooBusy are retried with backoff for a
//! while as HBase's client does, and scans run region after region in either direction.

use std::sync::Arc;
use std::time::Duration;

use cellar_region::{
    Append, ClientScanner, Condition, Delete, Get, Increment, Mutation, Put, Region, RegionError,
    RowResult, Scan,
};

use super::error::{DbError, Result};
use super::Inner;

/// How long a write keeps retrying while its region is too busy.
const BUSY_RETRY_FOR: Duration = Duration::from_secs(60);

/// An open table.
#[derive(Clone)]
pub struct Table {
    pub(crate) name: String,
    pub(crate) db: Arc<Inner>,
}

impl Table {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The region serving `row`.
    pub fn region_for(&self, row: &[u8]) -> Result<Arc<Region>> {
        self.db.region_for(&self.name, row)
    }

    /// Every region, in start-key order.
    pub fn regions(&self) -> Result<Vec<Arc<Region>>> {
        self.db.regions_of(&self.name)
    }

    /// Runs `op` on the region serving `row`, retrying while it is too busy or was just
    /// closed (alter, split).
    fn write<T>(&self, row: &[u8], op: impl Fn(&Region) -> cellar_region::Result<T>) -> Result<T> {
        let clock = self.db.clock.clone();
        let start = clock.monotonic();
        let mut pause = Duration::from_millis(10);
        loop {
            let region = self.region_for(row)?;
            match op(&region) {
                Err(RegionError::RegionTooBusy { .. } | RegionError::Closed(_))
                    if clock.monotonic().saturating_sub(start) < BUSY_RETRY_FOR =>
                {
                    clock.sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(500));
                }
                other => return other.map_err(DbError::from),
            }
        }
    }

    pub fn put(&self, put: Put) -> Result<()> {
        let row = put.row.clone();
        self.write(&row, |r| r.put(put.clone()))
    }

    pub fn delete(&self, delete: Delete) -> Result<()> {
        let row = delete.row.clone();
        self.write(&row, |r| r.delete(delete.clone()))
    }

    pub fn increment(&self, inc: Increment) -> Result<RowResult> {
        let row = inc.row.clone();
        self.write(&row, |r| r.increment(inc.clone()))
    }

    pub fn append(&self, app: Append) -> Result<RowResult> {
        let row = app.row.clone();
        self.write(&row, |r| r.append(app.clone()))
    }

    pub fn mutate_row(&self, row: &[u8], mutations: &[Mutation]) -> Result<RowResult> {
        self.write(row, |r| r.mutate_row(row, mutations))
    }

    pub fn check_and_mutate(
        &self,
        row: &[u8],
        condition: &Condition,
        mutations: &[Mutation],
    ) -> Result<(bool, RowResult)> {
        self.write(row, |r| r.check_and_mutate(row, condition, mutations))
    }

    /// Mutations of several rows applied atomically, when every row is in one region
    /// (HBase's MultiRowMutationEndpoint): otherwise the request fails naming the first
    /// row outside the first row's region, and nothing changes.
    pub fn mutate_rows(&self, mutations: &[Mutation]) -> Result<()> {
        let Some(first) = mutations.first() else {
            return Ok(());
        };
        let row = first.row().to_vec();
        self.write(&row, |r| r.mutate_rows(mutations))
    }

    /// Each mutation on its own: one result per mutation.
    pub fn batch(&self, mutations: &[Mutation]) -> Vec<Result<RowResult>> {
        mutations
            .iter()
            .map(|m| self.write(m.row(), |r| r.mutate_row(m.row(), std::slice::from_ref(m))))
            .collect()
    }

    pub fn get(&self, get: &Get) -> Result<RowResult> {
        let row = get.row.clone();
        self.write(&row, |r| r.get(get))
    }

    /// A scan as HBase's client runs it, across regions (round trips, batch and
    /// partial-result stitching).
    pub fn scan(&self, scan: &Scan) -> Result<TableScanner> {
        let (lo, hi) = if scan.reversed {
            (&scan.stop_row, &scan.start_row)
        } else {
            (&scan.start_row, &scan.stop_row)
        };
        let mut regions = self.db.regions_in(&self.name, lo, hi)?;
        if scan.reversed {
            regions.reverse();
        }
        Ok(TableScanner {
            table: self.clone(),
            regions,
            next: 0,
            current: None,
            scan: scan.clone(),
            rows: 0,
            done: false,
            last_row: None,
            in_row: false,
        })
    }
}

/// Results of a scan over a table's regions, in the scan's direction.
pub struct TableScanner {
    table: Table,
    regions: Vec<Arc<Region>>,
    next: usize,
    current: Option<ClientScanner>,
    scan: Scan,
    rows: u64,
    done: bool,
    /// The last row returned, and whether more of it may follow.
    last_row: Option<Vec<u8>>,
    in_row: bool,
}

impl TableScanner {
    /// A region closed under the scan (split, merge, alter): continue after the last
    /// whole row returned, over the table's current regions.
    fn replan(&mut self) -> Result<()> {
        let mut scan = self.scan.clone();
        if let Some(last) = &self.last_row {
            scan.start_row = last.clone();
            scan.start_inclusive = false;
        }
        let fresh = self.table.scan(&scan)?;
        self.regions = fresh.regions;
        self.next = 0;
        self.current = None;
        self.scan.start_row = scan.start_row;
        self.scan.start_inclusive = scan.start_inclusive;
        Ok(())
    }

    fn next_result(&mut self) -> Result<Option<RowResult>> {
        loop {
            if self.done {
                return Ok(None);
            }
            if self.scan.limit.is_some_and(|l| self.rows >= l) {
                self.done = true;
                return Ok(None);
            }
            if self.current.is_none() {
                let Some(region) = self.regions.get(self.next) else {
                    self.done = true;
                    return Ok(None);
                };
                self.next += 1;
                let mut s = self.scan.clone();
                if let Some(l) = s.limit {
                    s.limit = Some(l - self.rows);
                }
                match region.client_scanner(&s) {
                    Ok(c) => self.current = Some(c),
                    Err(RegionError::Closed(_)) if !self.in_row => {
                        self.replan()?;
                        continue;
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            let Some(scanner) = self.current.as_mut() else {
                continue;
            };
            match scanner.next_result() {
                Ok(Some(r)) => {
                    if !r.partial {
                        self.rows += 1;
                    }
                    self.in_row = r.partial;
                    self.last_row = Some(r.row.clone());
                    return Ok(Some(r));
                }
                Ok(None) => self.current = None,
                Err(RegionError::Closed(_)) if !self.in_row => self.replan()?,
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl Iterator for TableScanner {
    type Item = Result<RowResult>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_result() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
