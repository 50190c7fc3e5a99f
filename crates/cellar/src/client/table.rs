//! A handle on one table through the in-process connection: every call locates the
//! region serving its row (cached; so a handle stays valid across alter, split and
//! merge, and reports TableNotEnabled while the table is disabled). A region that is
//! closing or not online on its server, or a row outside a cached region, drops the
//! cached location and is retried; RegionTooBusy is retried with backoff for a while, as
//! HBase's client does; a region that failed to open fails at once. Scans run region
//! after region in either direction.

use std::sync::Arc;
use std::time::Duration;

use cellar_io::Clock;

use cellar_region::{
    Append, Condition, Delete, Get, Increment, Mutation, Put, Region, RegionError, RowResult, Scan,
};

use cellar_api::{CheckAndMutate, CheckAndMutateResult, RowMutations};

use super::local::LocalConnection;
use super::scanner::ClientScanner;
use super::{ResultScanner, Table};
use crate::error::{DbError, Result};
use crate::master::Location;

/// How long a write keeps retrying while its region is too busy.
const BUSY_RETRY_FOR: Duration = Duration::from_secs(60);

/// Waits between attempts of a call: from 10 ms doubling to 500 ms, for at most
/// BUSY_RETRY_FOR from the first wait (the clock is only read once a call fails).
#[derive(Default)]
struct Retry {
    started: Option<(Arc<dyn Clock>, Duration)>,
    pause: Duration,
}

impl Retry {
    /// Sleeps before the next attempt; false once the time for attempts is up.
    fn wait(&mut self, conn: &LocalConnection) -> bool {
        let (clock, start) = self.started.get_or_insert_with(|| {
            let clock = conn.master().servers()[0].clock().clone();
            let now = clock.monotonic();
            (clock, now)
        });
        if clock.monotonic().saturating_sub(*start) >= BUSY_RETRY_FOR {
            return false;
        }
        self.pause = (self.pause * 2).clamp(Duration::from_millis(10), Duration::from_millis(500));
        clock.sleep(self.pause);
        true
    }
}

/// An open table.
#[derive(Clone)]
pub struct LocalTable {
    name: String,
    conn: Arc<LocalConnection>,
}

impl LocalTable {
    pub(crate) fn new(name: &str, conn: Arc<LocalConnection>) -> LocalTable {
        LocalTable {
            name: name.to_string(),
            conn,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The region serving `row`.
    pub fn region_for(&self, row: &[u8]) -> Result<Arc<Region>> {
        self.conn.master().locate(&self.name, row)?.region()
    }

    /// Every online region, in start-key order.
    pub fn regions(&self) -> Result<Vec<Arc<Region>>> {
        Ok(self
            .conn
            .master()
            .locations(&self.name)?
            .iter()
            .filter_map(|l| l.region().ok())
            .collect())
    }

    /// Runs `op` on the region serving `row`. A region not online on its server, closed
    /// under the call, or not holding the row drops the cached location and is tried
    /// again; a busy region is retried with backoff; both for at most BUSY_RETRY_FOR.
    fn write<T>(&self, row: &[u8], op: impl Fn(&Region) -> cellar_region::Result<T>) -> Result<T> {
        let mut retry = Retry::default();
        loop {
            let region = match self.conn.region(&self.name, row)? {
                Ok(r) => r,
                Err(e) => {
                    self.conn.invalidate(&self.name);
                    if !retry.wait(&self.conn) {
                        return Err(e);
                    }
                    continue;
                }
            };
            match op(&region) {
                Err(e @ (RegionError::Closed(_) | RegionError::WrongRegion { .. })) => {
                    self.conn.invalidate(&self.name);
                    if !retry.wait(&self.conn) {
                        return Err(e.into());
                    }
                }
                Err(e @ RegionError::RegionTooBusy { .. }) => {
                    if !retry.wait(&self.conn) {
                        return Err(e.into());
                    }
                }
                other => return other.map_err(DbError::from),
            }
        }
    }

    pub fn put(&self, put: Put) -> Result<()> {
        self.mutate_one(Mutation::Put(put)).map(|_| ())
    }

    pub fn delete(&self, delete: Delete) -> Result<()> {
        self.mutate_one(Mutation::Delete(delete)).map(|_| ())
    }

    pub fn increment(&self, inc: Increment) -> Result<RowResult> {
        self.mutate_one(Mutation::Increment(inc))
    }

    pub fn append(&self, app: Append) -> Result<RowResult> {
        self.mutate_one(Mutation::Append(app))
    }

    /// One mutation, applied by reference on every attempt.
    fn mutate_one(&self, m: Mutation) -> Result<RowResult> {
        let m = [m];
        let row = m[0].row();
        self.write(row, |r| r.mutate_row(row, &m))
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

    /// HBase 2.4's `checkAndMutate(CheckAndMutate)`.
    pub fn check_and_mutate_request(&self, cam: &CheckAndMutate) -> Result<CheckAndMutateResult> {
        self.write(&cam.row, |r| r.check_and_mutate_request(cam))
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
        self.write(&get.row, |r| r.get(get))
    }

    /// A scan as HBase's client runs it, across regions (round trips, batch and
    /// partial-result stitching).
    pub fn scan(&self, scan: &Scan) -> Result<TableScanner> {
        let (lo, hi) = if scan.reversed {
            (&scan.stop_row, &scan.start_row)
        } else {
            (&scan.start_row, &scan.stop_row)
        };
        let mut regions = self.conn.master().locations_in(&self.name, lo, hi)?;
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
            replans: 0,
        })
    }
}

/// Results of a scan over a table's regions, in the scan's direction.
pub struct TableScanner {
    table: LocalTable,
    regions: Vec<Location>,
    next: usize,
    current: Option<ClientScanner>,
    scan: Scan,
    rows: u64,
    done: bool,
    /// The last row returned, and whether more of it may follow.
    last_row: Option<Vec<u8>>,
    in_row: bool,
    /// Replans in a row without a result in between (each waits a little longer, for
    /// a split or merge to finish swapping its regions in).
    replans: u32,
}

impl TableScanner {
    /// A region closed under the scan (split, merge, alter): continue after the last
    /// whole row returned, over the table's current regions.
    fn replan(&mut self) -> Result<()> {
        let clock = self.table.conn.master().servers()[0].clock().clone();
        if self.replans > 0 {
            let ms = 1u64 << self.replans.min(7);
            clock.sleep(Duration::from_millis(ms));
        }
        self.replans += 1;
        if u64::from(self.replans) > 600 {
            return Err(DbError::RegionNotServing {
                region: self.table.name.clone(),
                reason: "a region of the scan stayed offline".into(),
            });
        }
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
                let Some(loc) = self.regions.get(self.next) else {
                    self.done = true;
                    return Ok(None);
                };
                self.next += 1;
                let mut s = self.scan.clone();
                if let Some(l) = s.limit {
                    s.limit = Some(l - self.rows);
                }
                let opened = match loc.region() {
                    Ok(region) => ClientScanner::open(&region, &s).map_err(DbError::from),
                    Err(e) => Err(e),
                };
                match opened {
                    Ok(c) => self.current = Some(c),
                    Err(DbError::Region(RegionError::Closed(_)))
                    | Err(DbError::RegionNotServing { .. })
                        if !self.in_row =>
                    {
                        self.replan()?;
                        continue;
                    }
                    Err(e) => return Err(e),
                }
            }
            let Some(scanner) = self.current.as_mut() else {
                continue;
            };
            match scanner.next_result() {
                Ok(Some(r)) => {
                    self.replans = 0;
                    if !r.partial {
                        self.rows += 1;
                    }
                    self.in_row = r.partial;
                    // The buffer of the last row is reused: no allocation per row.
                    match &mut self.last_row {
                        Some(last) => {
                            last.clear();
                            last.extend_from_slice(&r.row);
                        }
                        None => self.last_row = Some(r.row.clone()),
                    }
                    return Ok(Some(r));
                }
                Ok(None) => {
                    self.done = scanner.scan_over();
                    self.current = None;
                }
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

fn api<T>(r: Result<T>) -> cellar_api::Result<T> {
    r.map_err(cellar_api::Error::from)
}

impl Table for LocalTable {
    fn name(&self) -> &str {
        &self.name
    }

    fn get(&self, get: &Get) -> cellar_api::Result<RowResult> {
        api(LocalTable::get(self, get))
    }

    fn put(&self, put: Put) -> cellar_api::Result<()> {
        api(LocalTable::put(self, put))
    }

    fn delete(&self, delete: Delete) -> cellar_api::Result<()> {
        api(LocalTable::delete(self, delete))
    }

    fn increment(&self, inc: Increment) -> cellar_api::Result<RowResult> {
        api(LocalTable::increment(self, inc))
    }

    fn append(&self, app: Append) -> cellar_api::Result<RowResult> {
        api(LocalTable::append(self, app))
    }

    fn mutate_row(&self, rm: &RowMutations) -> cellar_api::Result<RowResult> {
        api(LocalTable::mutate_row(self, &rm.row, &rm.mutations))
    }

    fn check_and_mutate(&self, cam: &CheckAndMutate) -> cellar_api::Result<CheckAndMutateResult> {
        api(self.check_and_mutate_request(cam))
    }

    fn mutate_rows(&self, mutations: &[Mutation]) -> cellar_api::Result<()> {
        api(LocalTable::mutate_rows(self, mutations))
    }

    fn batch(&self, mutations: &[Mutation]) -> Vec<cellar_api::Result<RowResult>> {
        LocalTable::batch(self, mutations)
            .into_iter()
            .map(api)
            .collect()
    }

    fn scan(&self, scan: &Scan) -> cellar_api::Result<Box<dyn ResultScanner>> {
        let scanner = api(LocalTable::scan(self, scan))?;
        Ok(Box::new(scanner.map(api)))
    }
}
