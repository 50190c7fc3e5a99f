//! Where a table's regions are: locating the region that serves a row or a range (on
//! which server), with a clear error for one that is offline, and the regions that
//! failed to open (HBase's FAILED_OPEN) with the reason.

use std::sync::Arc;

use cellar_api::RegionInfo;
use cellar_region::Region;

use super::{read, Master, Slot, TableEntry};
use crate::error::{DbError, Result};
use crate::region_server::RegionServer;

/// A region and the server hosting it.
#[derive(Clone)]
pub struct Location {
    pub info: RegionInfo,
    pub server: Arc<RegionServer>,
}

impl Location {
    /// The region itself, when its server has it online.
    pub fn region(&self) -> Result<Arc<Region>> {
        self.server.region(&self.info.encoded)
    }
}

pub use cellar_api::FailedRegion;

/// One region as the catalog lists it.
#[derive(Debug, Clone)]
pub struct CatalogEntry {
    pub info: RegionInfo,
    pub enabled: bool,
    /// The server hosting it, when it is online.
    pub server: Option<cellar_api::ServerName>,
}

/// The error for a region that is not online.
fn not_serving(slot: &Slot) -> DbError {
    DbError::RegionNotServing {
        region: slot.info.region_name(),
        reason: slot
            .failed
            .clone()
            .unwrap_or_else(|| "the region is offline".into()),
    }
}

fn enabled(e: &TableEntry, table: &str) -> Result<()> {
    if e.enabled {
        Ok(())
    } else {
        Err(DbError::TableNotEnabled(table.to_string()))
    }
}

impl Master {
    fn location(&self, slot: &Slot) -> Location {
        Location {
            info: slot.info.clone(),
            server: self.server(slot.server).clone(),
        }
    }

    /// The region of an enabled table serving `row`.
    pub fn locate(&self, table: &str, row: &[u8]) -> Result<Location> {
        let st = self.state(table)?;
        let e = read(&st.entry);
        enabled(&e, table)?;
        let slot = e
            .regions
            .get(e.region_index(row))
            .ok_or_else(|| DbError::TableNotEnabled(table.to_string()))?;
        if slot.failed.is_some() {
            return Err(not_serving(slot));
        }
        Ok(self.location(slot))
    }

    /// Every region of an enabled table that did not fail to open, in start-key order.
    pub fn locations(&self, table: &str) -> Result<Vec<Location>> {
        let st = self.state(table)?;
        let e = read(&st.entry);
        enabled(&e, table)?;
        Ok(e.regions
            .iter()
            .filter(|s| s.failed.is_none())
            .map(|s| self.location(s))
            .collect())
    }

    /// Every region of an enabled table, failed ones included, in start-key order.
    pub fn all_locations(&self, table: &str) -> Result<Vec<(Location, Option<String>)>> {
        let st = self.state(table)?;
        let e = read(&st.entry);
        enabled(&e, table)?;
        Ok(e.regions
            .iter()
            .map(|s| (self.location(s), s.failed.clone()))
            .collect())
    }

    /// The regions of an enabled table whose ranges meet `[lo, hi)` (empty = unbounded),
    /// in start-key order; a region that failed to open among them is an error naming it.
    pub fn locations_in(&self, table: &str, lo: &[u8], hi: &[u8]) -> Result<Vec<Location>> {
        let st = self.state(table)?;
        let e = read(&st.entry);
        enabled(&e, table)?;
        let mut out = Vec::new();
        for s in &e.regions {
            let below_end = s.info.end.is_empty() || lo.is_empty() || lo < s.info.end.as_slice();
            let above_start = hi.is_empty() || s.info.start.as_slice() <= hi;
            if !(below_end && above_start) {
                continue;
            }
            if s.failed.is_some() {
                return Err(not_serving(s));
            }
            out.push(self.location(s));
        }
        Ok(out)
    }

    /// Every region of every table as a catalog lists it, in table and start-key
    /// order: whether its table is enabled, and the server hosting it when it is
    /// online (disabled tables and failed regions have none).
    pub fn catalog_entries(&self) -> Vec<CatalogEntry> {
        let tables: Vec<_> = read(&self.tables).values().cloned().collect();
        let mut out = Vec::new();
        for st in tables {
            let e = read(&st.entry);
            if e.damaged.is_some() {
                continue;
            }
            for s in &e.regions {
                let online = e.enabled && s.failed.is_none();
                out.push(CatalogEntry {
                    info: s.info.clone(),
                    enabled: e.enabled,
                    server: online.then(|| self.server(s.server).server_name().clone()),
                });
            }
        }
        out
    }

    /// Regions that failed to open, with the reason.
    pub fn failed_regions(&self) -> Vec<FailedRegion> {
        let tables: Vec<_> = read(&self.tables).values().cloned().collect();
        tables
            .iter()
            .flat_map(|st| {
                let e = read(&st.entry);
                e.regions
                    .iter()
                    .filter_map(|s| {
                        s.failed.as_ref().map(|reason| FailedRegion {
                            table: e.desc.name.clone(),
                            region: s.info.region_name(),
                            reason: reason.clone(),
                        })
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The online region with encoded name `name` (the catalog's included).
    pub fn region_named(&self, name: &str) -> Option<Arc<Region>> {
        if name == super::catalog::META_REGION {
            return Some(self.meta.clone());
        }
        self.servers.iter().find_map(|s| s.region(name).ok())
    }
}
