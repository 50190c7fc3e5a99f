//! The in-process connection: region locations from the master, cached per table and
//! dropped when a region turns out not to be served or the row is outside it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cellar_api::Result;

use super::{Admin, Connection, LocalAdmin, LocalTable, Table};
use crate::error::DbError;
use crate::master::{locked, Location, Master};

/// Whether two row ranges share a row.
fn overlaps(a: &cellar_api::RegionInfo, b: &cellar_api::RegionInfo) -> bool {
    let a_before_b = !a.end.is_empty() && a.end.as_slice() <= b.start.as_slice();
    let b_before_a = !b.end.is_empty() && b.end.as_slice() <= a.start.as_slice();
    !(a_before_b || b_before_a)
}

/// A connection to the master and region servers of this process.
pub struct LocalConnection {
    master: Arc<Master>,
    /// Known locations per table, in start-key order.
    cache: Mutex<HashMap<String, Vec<Location>>>,
}

impl LocalConnection {
    pub fn new(master: Arc<Master>) -> LocalConnection {
        LocalConnection {
            master,
            cache: Mutex::new(HashMap::new()),
        }
    }

    pub fn master(&self) -> &Arc<Master> {
        &self.master
    }

    /// The region serving `row` of `table`, from the cache when it knows one.
    pub(crate) fn locate(&self, table: &str, row: &[u8]) -> Result<Location, DbError> {
        if let Some(locs) = locked(&self.cache).get(table) {
            if let Some(l) = locs.iter().find(|l| l.info.contains(row)) {
                return Ok(l.clone());
            }
        }
        let l = self.master.locate(table, row)?;
        let mut cache = locked(&self.cache);
        let locs = cache.entry(table.to_string()).or_default();
        locs.retain(|c| !overlaps(&c.info, &l.info));
        let at = locs.partition_point(|c| c.info.start < l.info.start);
        locs.insert(at, l.clone());
        Ok(l)
    }

    /// Forgets what is known of `table`'s regions.
    pub(crate) fn invalidate(&self, table: &str) {
        locked(&self.cache).remove(table);
    }

    /// How many regions of `table` the cache knows.
    pub fn cached_locations(&self, table: &str) -> usize {
        locked(&self.cache).get(table).map_or(0, Vec::len)
    }

    /// A handle on an enabled table.
    pub fn table_handle(self: &Arc<Self>, name: &str) -> Result<LocalTable, DbError> {
        self.master.locations(name)?;
        Ok(LocalTable::new(name, self.clone()))
    }
}

impl Connection for Arc<LocalConnection> {
    fn table(&self, name: &str) -> Result<Box<dyn Table>> {
        Ok(Box::new(self.table_handle(name)?))
    }

    fn admin(&self) -> Box<dyn Admin> {
        Box::new(LocalAdmin::new(self.clone()))
    }

    fn hot_rows(&self) -> Result<Vec<crate::hotspots::HotRow>> {
        Ok(crate::hotspots::hot_rows(&self.master))
    }

    fn version_waste(&self) -> Result<Vec<crate::hotspots::VersionWaste>> {
        Ok(crate::hotspots::version_waste(&self.master))
    }

    fn large_responses(&self) -> Result<Vec<cellar_region::large_log::LargeResponse>> {
        let mut all: Vec<_> = self
            .master
            .servers()
            .iter()
            .flat_map(|s| s.large_responses())
            .collect();
        all.sort_by_key(|e| std::cmp::Reverse(e.at));
        Ok(all)
    }
}
