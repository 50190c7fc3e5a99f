//! The in-process connection: regions located through the master, cached per table
//! (each with its server, whose online map gives the region object serving now) and
//! dropped when a region turns out closed, not served, or not holding the row.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use cellar_api::{RegionInfo, Result};
use cellar_region::Region;

use crate::region_server::RegionServer;

use super::{Admin, Connection, LocalAdmin, LocalTable, Table};
use crate::error::DbError;
use crate::master::{read, write, Master};

/// Whether two row ranges share a row.
fn overlaps(a: &cellar_api::RegionInfo, b: &cellar_api::RegionInfo) -> bool {
    let a_before_b = !a.end.is_empty() && a.end.as_slice() <= b.start.as_slice();
    let b_before_a = !b.end.is_empty() && b.end.as_slice() <= a.start.as_slice();
    !(a_before_b || b_before_a)
}

/// A connection to the master and region servers of this process.
pub struct LocalConnection {
    master: Arc<Master>,
    /// Known regions per table, in start-key order (hashed with foldhash: looked up on
    /// every call).
    cache: RwLock<HashMap<String, Vec<Cached>, foldhash::fast::RandomState>>,
}

/// A region as the cache knows it: its row range and its server. The region object
/// itself is looked up in the server's online map on every call, never cached: a
/// region reopened under the same name must be the one every caller reaches.
struct Cached {
    info: RegionInfo,
    server: Arc<RegionServer>,
}

impl LocalConnection {
    pub fn new(master: Arc<Master>) -> LocalConnection {
        LocalConnection {
            master,
            cache: RwLock::new(HashMap::default()),
        }
    }

    pub fn master(&self) -> &Arc<Master> {
        &self.master
    }

    /// The region serving `row` of `table`, from the cache when it knows one. The
    /// outer error is the table's (unknown, disabled); the inner one says the region
    /// found is not online on its server (yet), which a caller may wait out.
    pub(crate) fn region(
        &self,
        table: &str,
        row: &[u8],
    ) -> Result<Result<Arc<Region>, DbError>, DbError> {
        if let Some(cached) = read(&self.cache).get(table) {
            if let Some(c) = cached.iter().find(|c| c.info.contains(row)) {
                return Ok(c.server.region(&c.info.encoded));
            }
        }
        let l = self.master.locate(table, row)?;
        let region = match l.region() {
            Ok(r) => r,
            Err(e) => return Ok(Err(e)),
        };
        let mut cache = write(&self.cache);
        let cached = cache.entry(table.to_string()).or_default();
        cached.retain(|c| !overlaps(&c.info, &l.info));
        let at = cached.partition_point(|c| c.info.start < l.info.start);
        cached.insert(
            at,
            Cached {
                info: l.info,
                server: l.server,
            },
        );
        Ok(Ok(region))
    }

    /// Forgets what is known of `table`'s regions.
    pub(crate) fn invalidate(&self, table: &str) {
        write(&self.cache).remove(table);
    }

    /// How many regions of `table` the cache knows.
    pub fn cached_locations(&self, table: &str) -> usize {
        read(&self.cache).get(table).map_or(0, Vec::len)
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
