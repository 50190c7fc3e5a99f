//! The master role: the catalog (`cellar:meta`), the tables and their descriptors, table
//! DDL (create, alter, enable, disable, truncate, drop), the assignment of regions to
//! region servers, the split and merge procedures and the janitor that deletes split
//! parents once unreferenced.
//!
//! Locks: the map of tables is held only to look a table up or to add or remove one;
//! each table has its own procedure lock (one DDL, split or merge of that table at a
//! time) and its own region list, held for reading to locate a row and for writing only
//! to swap regions in, never across a flush, close or fsync. Data operations never take
//! a procedure lock, so work on one table never waits on another's.

pub mod catalog;
mod ddl;
mod namespaces;
mod open;
mod regions;
mod restore;
pub mod snapshot;
mod split;
mod stats;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use cellar_api::{RegionInfo, TableDescriptor};
use cellar_io::{Clock, FileSystem};
use cellar_region::{Config, Region};

use crate::error::{DbError, Result};
use crate::region_server::RegionServer;

pub use open::MasterParts;
pub use regions::{CatalogEntry, FailedRegion, Location};
pub use stats::RegionStats;

pub(crate) use cellar_api::DEFAULT_NAMESPACE;

/// A table's name as the master keys it: `ns:qualifier`, or the qualifier alone in the
/// default namespace (`default:t` is `t`).
pub(crate) fn normalize(table: &str) -> String {
    cellar_api::TableName::parse(table).map_or_else(|_| table.to_string(), |t| t.to_string())
}

pub use crate::layout::{namespace_dir, table_dir};

fn meta_dir(root: &Path) -> PathBuf {
    root.join("data")
        .join(catalog::META_NAMESPACE)
        .join(catalog::META_TABLE)
        .join(catalog::META_REGION)
}

pub(crate) fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A region of a table as the master tracks it: its catalog entry, the server it is
/// assigned to, and — when it could not open — why (HBase's FAILED_OPEN).
#[derive(Clone)]
pub(crate) struct Slot {
    pub(crate) info: RegionInfo,
    pub(crate) server: usize,
    pub(crate) failed: Option<String>,
}

pub(crate) struct TableEntry {
    pub(crate) desc: TableDescriptor,
    pub(crate) enabled: bool,
    /// In start-key order.
    pub(crate) regions: Vec<Slot>,
    /// Split and merge parents whose files daughters still reference.
    pub(crate) parents: Vec<RegionInfo>,
    /// Why the table's metadata cannot be used (it stays offline), if it cannot.
    pub(crate) damaged: Option<String>,
}

impl TableEntry {
    /// The index of the region whose range holds `row`.
    pub(crate) fn region_index(&self, row: &[u8]) -> usize {
        self.regions
            .partition_point(|s| s.info.start.as_slice() <= row)
            .saturating_sub(1)
    }
}

/// One table: its procedure lock and its state.
pub(crate) struct TableState {
    procedure: Mutex<()>,
    entry: RwLock<TableEntry>,
}

impl TableState {
    fn new(entry: TableEntry) -> Arc<TableState> {
        Arc::new(TableState {
            procedure: Mutex::new(()),
            entry: RwLock::new(entry),
        })
    }
}

/// The master.
pub struct Master {
    root: PathBuf,
    fs: Arc<dyn FileSystem>,
    clock: Arc<dyn Clock>,
    config: Arc<Config>,
    /// The catalog table's one region.
    meta: Arc<Region>,
    tables: RwLock<BTreeMap<String, Arc<TableState>>>,
    servers: Vec<Arc<RegionServer>>,
    /// Serializes creating and deleting tables.
    ddl: Mutex<()>,
    /// Serializes taking, deleting and cloning snapshots (and their archive cleanup).
    snapshots: Mutex<()>,
    procedures: ProcedureCounts,
    /// Serializes writing `cellar:large_rows`.
    pub(crate) large_rows: Mutex<()>,
}

/// How many splits and merges the master has completed (for metrics).
#[derive(Debug, Default)]
pub struct ProcedureCounts {
    pub splits: std::sync::atomic::AtomicU64,
    pub merges: std::sync::atomic::AtomicU64,
}

impl Master {
    /// The database's root directory.
    pub fn root(&self) -> &std::path::Path {
        &self.root
    }

    /// The file system the database lives on.
    pub fn fs(&self) -> &Arc<dyn FileSystem> {
        &self.fs
    }

    /// The clock the master (and its servers) take time from.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    pub fn config(&self) -> &Arc<Config> {
        &self.config
    }

    /// The region servers regions are assigned to.
    /// Splits and merges completed since the master started.
    pub fn procedure_counts(&self) -> &ProcedureCounts {
        &self.procedures
    }

    pub fn servers(&self) -> &[Arc<RegionServer>] {
        &self.servers
    }

    fn server(&self, i: usize) -> &Arc<RegionServer> {
        &self.servers[i.min(self.servers.len().saturating_sub(1))]
    }

    /// The server a new region goes to: the one hosting the fewest regions.
    fn pick_server(&self) -> usize {
        (0..self.servers.len())
            .min_by_key(|&i| self.servers[i].online_regions().len())
            .unwrap_or(0)
    }

    fn state(&self, table: &str) -> Result<Arc<TableState>> {
        let tables = read(&self.tables);
        tables
            .get(table)
            .or_else(|| tables.get(&normalize(table)))
            .cloned()
            .ok_or_else(|| DbError::TableNotFound(table.to_string()))
    }

    /// Table names, sorted.
    pub fn list_tables(&self) -> Vec<String> {
        read(&self.tables).keys().cloned().collect()
    }

    pub fn table_exists(&self, name: &str) -> bool {
        read(&self.tables).contains_key(&normalize(name))
    }

    /// The descriptor and whether the table is enabled.
    pub fn describe(&self, name: &str) -> Result<(TableDescriptor, bool)> {
        let st = self.state(name)?;
        let e = read(&st.entry);
        if let Some(why) = &e.damaged {
            return Err(DbError::Open {
                path: table_dir(&self.root, name),
                reason: why.clone(),
            });
        }
        Ok((e.desc.clone(), e.enabled))
    }

    /// Opens a region on its assigned server; a failure leaves it offline with the
    /// reason recorded (and logged), its WAL edits kept for a later attempt.
    fn assign(&self, desc: &TableDescriptor, slot: &mut Slot) {
        match self.server(slot.server).open_region(desc, &slot.info) {
            Ok(_) => slot.failed = None,
            Err(e) => {
                let reason = e.to_string();
                tracing::warn!(
                    region = %slot.info.region_name(),
                    "region failed to open and stays offline: {reason}"
                );
                slot.failed = Some(reason);
            }
        }
    }

    /// Closes a region on its server (flushing it).
    fn unassign(&self, slot: &Slot) -> Result<()> {
        self.server(slot.server).close_region(&slot.info.encoded)
    }

    /// Closes the catalog region after every table's regions.
    pub fn close(&self) -> Result<()> {
        Ok(self.meta.close()?)
    }
}
