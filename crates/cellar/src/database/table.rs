//! A handle on one table of an embedded database: reads and writes routed to its region.
//! Writes refused with RegionTooBusy are retried with backoff for a while, as HBase's
//! client does, before the error is returned.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cellar_region::{
    Append, ClientScanner, Condition, Delete, Get, Increment, Mutation, Put, Region, RegionError,
    RowResult, Scan,
};

use super::error::{DbError, Result};
use super::Inner;

/// How long a write keeps retrying while its region is too busy.
const BUSY_RETRY_FOR: Duration = Duration::from_secs(60);

/// An open table. Each call finds the table's current region, so a handle stays valid
/// across `alter`, and reports TableNotEnabled while the table is disabled.
#[derive(Clone)]
pub struct Table {
    pub(crate) name: String,
    pub(crate) db: Arc<Inner>,
}

impl Table {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The region serving the table.
    pub fn region(&self) -> Result<Arc<Region>> {
        self.db.region_of(&self.name)
    }

    /// Runs `op` on the current region, retrying while it is too busy or was just
    /// reopened (alter).
    fn write<T>(&self, op: impl Fn(&Region) -> cellar_region::Result<T>) -> Result<T> {
        let start = Instant::now();
        let mut pause = Duration::from_millis(10);
        loop {
            let region = self.region()?;
            match op(&region) {
                Err(RegionError::RegionTooBusy { .. } | RegionError::Closed(_))
                    if start.elapsed() < BUSY_RETRY_FOR =>
                {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(500));
                }
                other => return other.map_err(DbError::from),
            }
        }
    }

    pub fn put(&self, put: Put) -> Result<()> {
        self.write(|r| r.put(put.clone()))
    }

    pub fn delete(&self, delete: Delete) -> Result<()> {
        self.write(|r| r.delete(delete.clone()))
    }

    pub fn increment(&self, inc: Increment) -> Result<RowResult> {
        self.write(|r| r.increment(inc.clone()))
    }

    pub fn append(&self, app: Append) -> Result<RowResult> {
        self.write(|r| r.append(app.clone()))
    }

    pub fn mutate_row(&self, row: &[u8], mutations: &[Mutation]) -> Result<RowResult> {
        self.write(|r| r.mutate_row(row, mutations))
    }

    pub fn check_and_mutate(
        &self,
        row: &[u8],
        condition: &Condition,
        mutations: &[Mutation],
    ) -> Result<(bool, RowResult)> {
        self.write(|r| r.check_and_mutate(row, condition, mutations))
    }

    /// Each mutation on its own: one result per mutation.
    pub fn batch(&self, mutations: &[Mutation]) -> Vec<Result<RowResult>> {
        mutations
            .iter()
            .map(|m| self.write(|r| r.mutate_row(m.row(), std::slice::from_ref(m))))
            .collect()
    }

    pub fn get(&self, get: &Get) -> Result<RowResult> {
        Ok(self.region()?.get(get)?)
    }

    /// A scan as HBase's client runs it (round trips, batch and partial-result
    /// stitching).
    pub fn scan(&self, scan: &Scan) -> Result<ClientScanner> {
        Ok(self.region()?.client_scanner(scan)?)
    }
}
