//! The embedded database: a directory holding tables, their regions (one per table for
//! now), the shared WAL and a lock that keeps a second process out.
//!
//! ```text
//! <root>/LOCK                                          held (flock) while open
//! <root>/cellar.toml                                   optional configuration
//! <root>/wal/local/<segment>.wal                       WAL segments
//! <root>/data/default/<table>/.tabledesc               table descriptor (TOML)
//! <root>/data/default/<table>/.tablestate              ENABLED / DISABLED and region
//! <root>/data/default/<table>/<region>/<family>/<file> store files (HFile v3)
//! ```

pub mod catalog;
mod error;
mod files;
mod maintenance;
mod regions;
mod split;
mod stats;
mod table;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use cellar_hfile::BlockCache;
use cellar_io::{Clock, Executor, FileSystem, LocalFs, SystemClock, TaskHandle, Threads};
use cellar_region::{Config, Maintenance, Region, RegionContext, TableDescriptor};

use catalog::RegionInfo;
use cellar_wal::{Wal, WalEdit, WalOptions};

pub use error::{DbError, Result};
pub use regions::FailedRegion;
pub(crate) use regions::Slot;
pub use stats::RegionStats;
pub use table::{Table, TableScanner};

use files::{remove_tree, take_lock, write_atomic};
use maintenance::maintenance_loop;

/// How a database is opened.
#[derive(Clone)]
pub struct Options {
    pub fs: Arc<dyn FileSystem>,
    pub clock: Arc<dyn Clock>,
    /// Runs background work (the maintenance loop, the WAL flusher).
    pub executor: Arc<dyn Executor>,
    pub config: Config,
    /// Run flushes and compactions on a background thread (otherwise inline).
    pub background: bool,
    /// Take the directory lock (local file systems only).
    pub lock: bool,
}

impl Options {
    /// Local files, the system clock, and `<dir>/cellar.toml` when present.
    pub fn for_dir(dir: &Path) -> Result<Options> {
        let conf_path = dir.join("cellar.toml");
        let config = if conf_path.exists() {
            Options::read_config(&conf_path)?
        } else {
            Config::default()
        };
        Ok(Options {
            fs: Arc::new(LocalFs::new()),
            clock: Arc::new(SystemClock),
            executor: Arc::new(Threads),
            config,
            background: true,
            lock: true,
        })
    }

    /// Reads a configuration file (TOML, HBase key names).
    pub fn read_config(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path).map_err(|e| DbError::Open {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        Config::from_toml(&text).map_err(|e| DbError::Open {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
    }
}

struct TableEntry {
    desc: TableDescriptor,
    enabled: bool,
    /// In start-key order.
    regions: Vec<Slot>,
    /// Split parents whose files daughters still reference.
    parents: Vec<RegionInfo>,
}

impl TableEntry {
    /// The index of the region whose range holds `row`.
    fn region_index(&self, row: &[u8]) -> usize {
        self.regions
            .partition_point(|s| s.info.start.as_slice() <= row)
            .saturating_sub(1)
    }
}

pub(crate) struct Inner {
    root: PathBuf,
    fs: Arc<dyn FileSystem>,
    clock: Arc<dyn Clock>,
    config: Arc<Config>,
    wal: Arc<Wal>,
    cache: Arc<BlockCache>,
    tables: RwLock<BTreeMap<String, TableEntry>>,
    maintenance: Option<Sender<Maintenance>>,
    /// The catalog table's one region.
    meta: Arc<Region>,
}

/// An open database.
pub struct Database {
    inner: Arc<Inner>,
    replay: cellar_wal::ReplayReport,
    closed: bool,
    worker: Option<TaskHandle>,
    _lock: Option<std::fs::File>,
}

const NAMESPACE: &str = "default";

fn table_dir(root: &Path, table: &str) -> PathBuf {
    root.join("data").join(NAMESPACE).join(table)
}

fn meta_dir(root: &Path) -> PathBuf {
    root.join("data")
        .join(catalog::META_NAMESPACE)
        .join(catalog::META_TABLE)
        .join(catalog::META_REGION)
}

fn lock<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

fn lock_mut<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

impl Database {
    /// Opens (creating if needed) the database in `dir` with local files, the system
    /// clock and `<dir>/cellar.toml`.
    pub fn open(dir: impl AsRef<Path>) -> Result<Database> {
        let dir = dir.as_ref();
        Database::open_with(dir, Options::for_dir(dir)?)
    }

    /// Opens with explicit options.
    pub fn open_with(dir: impl AsRef<Path>, opts: Options) -> Result<Database> {
        let root = dir.as_ref().to_path_buf();
        let fs = opts.fs.clone();
        fs.create_dir_all(&root)?;
        let lock_file = if opts.lock {
            Some(take_lock(&root)?)
        } else {
            None
        };
        let config = Arc::new(opts.config.clone());
        let mut edits: Vec<WalEdit> = Vec::new();
        let wal_opts = WalOptions {
            roll_size: config.wal_roll_size(),
            async_flush_interval: Duration::from_millis(config.wal_async_flush_interval_ms),
            executor: opts.executor.clone(),
        };
        let (wal, replay) = Wal::open(
            fs.clone(),
            &root.join("wal").join("local"),
            wal_opts,
            &mut |e| {
                edits.push(e);
                Ok(())
            },
        )?;
        let (tx, rx) = channel();
        let wal = Arc::new(wal);
        let cache = Arc::new(BlockCache::new(config.block_cache_bytes()));
        let maintenance = opts.background.then_some(tx);
        let meta_ctx = RegionContext {
            fs: fs.clone(),
            clock: opts.clock.clone(),
            config: config.clone(),
            wal: wal.clone(),
            cache: Some(cache.clone()),
            maintenance: maintenance.clone(),
        };
        let meta = Region::open(
            &meta_dir(&root),
            catalog::META_REGION,
            catalog::meta_descriptor(),
            meta_ctx,
        )?;
        for e in edits.iter().filter(|e| e.region == catalog::META_REGION) {
            meta.replay(e)?;
        }
        edits.retain(|e| e.region != catalog::META_REGION);
        let inner = Arc::new(Inner {
            root: root.clone(),
            fs: fs.clone(),
            clock: opts.clock.clone(),
            config: config.clone(),
            wal,
            cache,
            tables: RwLock::new(BTreeMap::new()),
            maintenance,
            meta: Arc::new(meta),
        });
        inner.load_tables(edits)?;
        let worker = if opts.background {
            let weak = Arc::downgrade(&inner);
            Some(
                opts.executor
                    .spawn(
                        "cellar-maintenance",
                        Box::new(move || maintenance_loop(weak, rx)),
                    )
                    .map_err(|e| DbError::Open {
                        path: root.clone(),
                        reason: format!("cannot start the maintenance thread: {e}"),
                    })?,
            )
        } else {
            None
        };
        Ok(Database {
            inner,
            replay,
            closed: false,
            worker,
            _lock: lock_file,
        })
    }

    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Regions that could not open (a damaged store file, say), with the file and the
    /// reason; every other region serves. `enable_table` tries them again.
    pub fn failed_regions(&self) -> Vec<FailedRegion> {
        self.inner.failed_regions()
    }

    /// What opening found in the WAL: edits replayed, and a torn tail if one was cut.
    pub fn replay_report(&self) -> &cellar_wal::ReplayReport {
        &self.replay
    }

    /// The shared WAL.
    pub fn wal(&self) -> &Arc<Wal> {
        &self.inner.wal
    }

    /// Creates a table of one region.
    pub fn create_table(&self, desc: TableDescriptor) -> Result<()> {
        self.create_table_split(desc, Vec::new())
    }

    /// Creates a table pre-split at `split_keys` (N keys make N+1 regions).
    pub fn create_table_split(
        &self,
        mut desc: TableDescriptor,
        split_keys: Vec<Vec<u8>>,
    ) -> Result<()> {
        for f in &mut desc.families {
            if f.versions == 1 && self.inner.config.column_max_version != 1 {
                f.versions = self.inner.config.column_max_version;
            }
        }
        cellar_region::check_descriptor(&desc)?;
        cellar_region::split_policy::SplitPolicy::for_table(&desc, &self.inner.config, 0)?;
        let keys = catalog::check_splits(split_keys)
            .map_err(|m| DbError::Region(cellar_region::RegionError::InvalidMutation(m)))?;
        let mut tables = lock_mut(&self.inner.tables);
        if tables.contains_key(&desc.name) {
            return Err(DbError::TableExists(desc.name));
        }
        let id = self.inner.clock.now_millis();
        let mut bounds = vec![Vec::new()];
        bounds.extend(keys);
        let mut infos = Vec::new();
        for (i, start) in bounds.iter().enumerate() {
            let end = bounds.get(i + 1).cloned().unwrap_or_default();
            infos.push(RegionInfo::new(&desc.name, start.clone(), end, id));
        }
        self.inner.write_desc(&desc)?;
        catalog::put_regions(&self.inner.meta, &infos)?;
        self.inner.write_state(&desc.name, true)?;
        self.inner
            .fs
            .sync_dir(&self.inner.root.join("data").join(NAMESPACE))?;
        let mut regions = Vec::new();
        for info in infos {
            let region = self.inner.open_region(&desc, &info)?;
            regions.push(Slot::open(info, region));
        }
        tables.insert(
            desc.name.clone(),
            TableEntry {
                desc,
                enabled: true,
                regions,
                parents: Vec::new(),
            },
        );
        Ok(())
    }

    /// Table names, sorted.
    pub fn list_tables(&self) -> Vec<String> {
        lock(&self.inner.tables).keys().cloned().collect()
    }

    pub fn table_exists(&self, name: &str) -> bool {
        lock(&self.inner.tables).contains_key(name)
    }

    /// The descriptor and whether the table is enabled.
    pub fn describe(&self, name: &str) -> Result<(TableDescriptor, bool)> {
        let tables = lock(&self.inner.tables);
        let t = tables
            .get(name)
            .ok_or_else(|| DbError::TableNotFound(name.to_string()))?;
        Ok((t.desc.clone(), t.enabled))
    }

    pub fn is_enabled(&self, name: &str) -> Result<bool> {
        Ok(self.describe(name)?.1)
    }

    /// An enabled table (some of its regions may be offline: each call to one of them
    /// reports it).
    pub fn table(&self, name: &str) -> Result<Table> {
        self.inner.regions_of(name)?;
        Ok(Table {
            name: name.to_string(),
            db: self.inner.clone(),
        })
    }

    /// Changes a table's descriptor: families added, changed or removed (a removed
    /// family's files are deleted). The region is flushed and reopened.
    pub fn alter_table(
        &self,
        name: &str,
        change: impl FnOnce(&mut TableDescriptor) -> cellar_api::Result<()>,
    ) -> Result<()> {
        let mut tables = lock_mut(&self.inner.tables);
        let t = tables
            .get_mut(name)
            .ok_or_else(|| DbError::TableNotFound(name.to_string()))?;
        let mut desc = t.desc.clone();
        change(&mut desc)?;
        desc.name = name.to_string();
        cellar_region::check_descriptor(&desc)?;
        cellar_region::split_policy::SplitPolicy::for_table(&desc, &self.inner.config, 0)?;
        for slot in &mut t.regions {
            if let Some(r) = slot.region.take() {
                if let Err(e) = r.close() {
                    slot.region = Some(r);
                    return Err(e.into());
                }
            }
        }
        for slot in &t.regions {
            let region_dir = table_dir(&self.inner.root, name).join(&slot.info.encoded);
            for old in &t.desc.families {
                if desc.family(&old.name).is_none() {
                    let dir = region_dir.join(cellar_region::store::family_dir_name(&old.name));
                    remove_tree(self.inner.fs.as_ref(), &dir)?;
                }
            }
        }
        self.inner.write_desc(&desc)?;
        t.desc = desc;
        if t.enabled {
            for slot in &mut t.regions {
                self.inner.open_slot(&t.desc, slot);
            }
        }
        Ok(())
    }

    /// Flushes and closes the table's region; it refuses reads and writes until enabled.
    pub fn disable_table(&self, name: &str) -> Result<()> {
        let mut tables = lock_mut(&self.inner.tables);
        let t = tables
            .get_mut(name)
            .ok_or_else(|| DbError::TableNotFound(name.to_string()))?;
        if !t.enabled {
            return Err(DbError::TableNotEnabled(name.to_string()));
        }
        for slot in &mut t.regions {
            if let Some(r) = slot.region.take() {
                r.close()?;
            }
        }
        self.inner.write_state(name, false)?;
        t.enabled = false;
        Ok(())
    }

    pub fn enable_table(&self, name: &str) -> Result<()> {
        let mut tables = lock_mut(&self.inner.tables);
        let t = tables
            .get_mut(name)
            .ok_or_else(|| DbError::TableNotFound(name.to_string()))?;
        if t.enabled {
            return Err(DbError::TableNotDisabled(name.to_string()));
        }
        // A region that cannot open stays offline (reported by `failed_regions`); the
        // others serve.
        for slot in &mut t.regions {
            self.inner.open_slot(&t.desc, slot);
        }
        self.inner.write_state(name, true)?;
        t.enabled = true;
        Ok(())
    }

    /// Deletes a disabled table and its data.
    pub fn drop_table(&self, name: &str) -> Result<()> {
        let mut tables = lock_mut(&self.inner.tables);
        let t = tables
            .get(name)
            .ok_or_else(|| DbError::TableNotFound(name.to_string()))?;
        if t.enabled {
            return Err(DbError::TableNotDisabled(name.to_string()));
        }
        let infos: Vec<RegionInfo> = t
            .regions
            .iter()
            .map(|s| s.info.clone())
            .chain(t.parents.iter().cloned())
            .collect();
        catalog::delete_regions(&self.inner.meta, &infos)?;
        remove_tree(self.inner.fs.as_ref(), &table_dir(&self.inner.root, name))?;
        self.inner
            .fs
            .sync_dir(&self.inner.root.join("data").join(NAMESPACE))?;
        for info in &infos {
            self.inner.wal.forget_region(&info.encoded)?;
        }
        tables.remove(name);
        Ok(())
    }

    /// Empties a table, keeping its descriptor (disable, drop, create, as HBase's shell).
    pub fn truncate_table(&self, name: &str) -> Result<()> {
        let (desc, enabled) = self.describe(name)?;
        if enabled {
            self.disable_table(name)?;
        }
        self.drop_table(name)?;
        self.create_table(desc)
    }

    /// Flushes a table's MemStores.
    pub fn flush(&self, name: &str) -> Result<()> {
        for r in self.inner.regions_of(name)? {
            r.flush()?;
        }
        Ok(())
    }

    /// Compacts a table (`major`: every file, dropping deleted and expired cells).
    pub fn compact(&self, name: &str, major: bool) -> Result<cellar_region::CompactionOutcome> {
        let mut out = cellar_region::CompactionOutcome::default();
        for r in self.inner.regions_of(name)? {
            let o = r.compact(major)?;
            out.stores.extend(o.stores);
            out.cells_kept += o.cells_kept;
            out.cells_dropped += o.cells_dropped;
        }
        self.inner.janitor(name)?;
        Ok(out)
    }

    /// Flushes every table and closes the log.
    pub fn close(mut self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.closed, true) {
            return Ok(());
        }
        let mut regions: Vec<Arc<Region>> = self.inner.all_regions();
        regions.push(self.inner.meta.clone());
        let mut first_err = None;
        for r in regions {
            if let Err(e) = r.close() {
                first_err.get_or_insert(DbError::from(e));
            }
        }
        if let Some(w) = self.worker.take() {
            // The worker exits when the last strong reference to the inner state goes or
            // when its channel closes; it holds only a weak one.
            lock_mut(&self.inner.tables).clear();
            drop(w);
        }
        if let Err(e) = self.inner.wal.close() {
            first_err.get_or_insert(e.into());
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

impl Inner {
    fn context(&self) -> RegionContext {
        RegionContext {
            fs: self.fs.clone(),
            clock: self.clock.clone(),
            config: self.config.clone(),
            wal: self.wal.clone(),
            cache: Some(self.cache.clone()),
            maintenance: self.maintenance.clone(),
        }
    }

    fn open_region(&self, desc: &TableDescriptor, info: &RegionInfo) -> Result<Arc<Region>> {
        let dir = table_dir(&self.root, &desc.name).join(&info.encoded);
        Ok(Arc::new(Region::open_range(
            &dir,
            &info.encoded,
            desc.clone(),
            (info.start.clone(), info.end.clone()),
            self.context(),
        )?))
    }

    fn write_desc(&self, desc: &TableDescriptor) -> Result<()> {
        let path = table_dir(&self.root, &desc.name).join(".tabledesc");
        write_atomic(
            self.fs.as_ref(),
            &path,
            cellar_region::descriptor::to_toml(desc).as_bytes(),
        )
    }

    fn write_state(&self, table: &str, enabled: bool) -> Result<()> {
        let path = table_dir(&self.root, table).join(".tablestate");
        let text = format!(
            "state = \"{}\"\n",
            if enabled { "ENABLED" } else { "DISABLED" }
        );
        write_atomic(self.fs.as_ref(), &path, text.as_bytes())
    }

    /// Opens every table found on disk and replays the WAL into its region.
    fn load_tables(&self, edits: Vec<WalEdit>) -> Result<()> {
        let ns = self.root.join("data").join(NAMESPACE);
        self.fs.create_dir_all(&ns)?;
        let mut by_region: HashMap<String, Vec<WalEdit>> = HashMap::new();
        for e in edits {
            by_region.entry(e.region.clone()).or_default().push(e);
        }
        let mut tables = lock_mut(&self.tables);
        for dir in self.fs.list_dir(&ns)? {
            let desc_path = dir.join(".tabledesc");
            let state_path = dir.join(".tablestate");
            if !self.fs.exists(&desc_path) || !self.fs.exists(&state_path) {
                continue;
            }
            let text = String::from_utf8_lossy(&cellar_io::read_all(self.fs.as_ref(), &desc_path)?)
                .into_owned();
            let desc = cellar_region::descriptor::from_toml(&text)?;
            let state: toml::Table =
                String::from_utf8_lossy(&cellar_io::read_all(self.fs.as_ref(), &state_path)?)
                    .parse()
                    .map_err(|e: toml::de::Error| DbError::Open {
                        path: state_path.clone(),
                        reason: e.to_string(),
                    })?;
            let enabled = state.get("state").and_then(|v| v.as_str()) == Some("ENABLED");
            let mut infos = catalog::regions_of(&self.meta, &desc.name)?;
            if infos.is_empty() {
                // A table written before the catalog kept its one region in .tablestate.
                let Some(old) = state.get("region").and_then(|v| v.as_str()) else {
                    continue;
                };
                let info = RegionInfo {
                    table: desc.name.clone(),
                    start: Vec::new(),
                    end: Vec::new(),
                    id: 0,
                    encoded: old.to_string(),
                    offline: false,
                };
                catalog::put_regions(&self.meta, std::slice::from_ref(&info))?;
                infos.push(info);
            }
            let (parents, infos): (Vec<RegionInfo>, Vec<RegionInfo>) =
                infos.into_iter().partition(|i| i.offline);
            // Region directories the catalog does not know are leftovers of a split that
            // did not commit.
            let known: std::collections::HashSet<&str> = infos
                .iter()
                .chain(parents.iter())
                .map(|i| i.encoded.as_str())
                .collect();
            for sub in self.fs.list_dir(&dir)? {
                let name = sub.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                if self.fs.is_dir(&sub) && !name.starts_with('.') && !known.contains(name) {
                    remove_tree(self.fs.as_ref(), &sub)?;
                }
            }
            let mut regions = Vec::new();
            for info in infos {
                let pending = by_region.remove(&info.encoded).unwrap_or_default();
                let mut slot = Slot {
                    info,
                    region: None,
                    failed: None,
                    pending,
                };
                if enabled || !slot.pending.is_empty() {
                    self.open_slot(&desc, &mut slot);
                    if !enabled {
                        if let Some(r) = slot.region.take() {
                            if let Err(e) = r.close() {
                                r.abort();
                                slot.failed = Some(format!("closing after replay: {e}"));
                            }
                        }
                    }
                }
                regions.push(slot);
            }
            for p in &parents {
                by_region.remove(&p.encoded);
            }
            tables.insert(
                desc.name.clone(),
                TableEntry {
                    desc,
                    enabled,
                    regions,
                    parents,
                },
            );
        }
        // Edits of regions that no longer exist never need replaying.
        for region in by_region.keys() {
            self.wal.forget_region(region)?;
        }
        Ok(())
    }
}
