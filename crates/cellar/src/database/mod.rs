//! The embedded database: a [`Master`] and one [`RegionServer`] in this process over a
//! local directory, reached through the in-process connection ([`Database::connection`])
//! or the handles below, with the shared WAL and a lock that keeps a second process out.
//!
//! ```text
//! <root>/LOCK                                          held (flock) while open
//! <root>/cellar.toml                                   optional configuration
//! <root>/wal/local/<segment>.wal                       WAL segments
//! <root>/data/cellar/meta/1588230740/...               the catalog region
//! <root>/data/default/<table>/.tabledesc               table descriptor (TOML)
//! <root>/data/default/<table>/.tablestate              ENABLED / DISABLED
//! <root>/data/default/<table>/<region>/<family>/<file> store files (HFile v3)
//! ```

pub(crate) mod files;
mod maintenance;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::time::Duration;

use cellar_api::{ServerName, TableDescriptor};
use cellar_hfile::BlockCache;
use cellar_io::{Clock, Executor, FileSystem, LocalFs, SystemClock, TaskHandle, Threads};
use cellar_region::{Config, Maintenance};
use cellar_wal::{Wal, WalEdit, WalOptions};

use crate::client::{LocalConnection, LocalTable};
use crate::master::{Master, MasterParts};
use crate::region_server::{RegionServer, ServerParts};

pub use crate::error::{DbError, Result};
pub use crate::master::{FailedRegion, RegionStats};

use files::take_lock;
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

/// An open database.
pub struct Database {
    root: PathBuf,
    master: Arc<Master>,
    server: Arc<RegionServer>,
    connection: Arc<LocalConnection>,
    replay: cellar_wal::ReplayReport,
    closed: bool,
    worker: Option<TaskHandle>,
    /// Ends the maintenance task: its channel and the flag it checks.
    stop: Option<(Sender<Maintenance>, Arc<AtomicBool>)>,
    _lock: Option<std::fs::File>,
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
            clock: opts.clock.clone(),
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
        let stop_tx = tx.clone();
        let server = Arc::new(RegionServer::new(ServerParts {
            name: ServerName::new("localhost", 0, opts.clock.now_millis()),
            root: root.clone(),
            fs: fs.clone(),
            clock: opts.clock.clone(),
            config: config.clone(),
            wal: Arc::new(wal),
            cache: Arc::new(BlockCache::new(config.block_cache_bytes())),
            maintenance: opts.background.then_some(tx),
        }));
        let master = Arc::new(Master::open(
            MasterParts {
                root: root.clone(),
                fs: fs.clone(),
                clock: opts.clock.clone(),
                config: config.clone(),
                servers: vec![server.clone()],
            },
            edits,
        )?);
        let stopping = Arc::new(AtomicBool::new(false));
        let worker = if opts.background {
            let weak = Arc::downgrade(&master);
            let stop = stopping.clone();
            Some(
                opts.executor
                    .spawn(
                        "cellar-maintenance",
                        Box::new(move || maintenance_loop(weak, rx, stop)),
                    )
                    .map_err(|e| DbError::Open {
                        path: root.clone(),
                        reason: format!("cannot start the maintenance thread: {e}"),
                    })?,
            )
        } else {
            None
        };
        let connection = Arc::new(LocalConnection::new(master.clone()));
        Ok(Database {
            root,
            master,
            server,
            connection,
            replay,
            closed: false,
            worker,
            stop: opts.background.then_some((stop_tx, stopping)),
            _lock: lock_file,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn config(&self) -> &Config {
        self.master.config()
    }

    /// The master of this process.
    pub fn master(&self) -> &Arc<Master> {
        &self.master
    }

    /// Loads the HFiles of `dir` (`DIR/<family>/<file>`) into `table`, as HBase's
    /// `completebulkload` does (see [`crate::bulkload`]).
    pub fn bulk_load(&self, table: &str, dir: &Path) -> Result<crate::bulkload::BulkLoadReport> {
        crate::bulkload::load_dir(self.master.as_ref(), table, dir)
    }

    /// Imports snapshot `name` exported by HBase (found under `root`) as a new table
    /// (see [`crate::snapshot_import`]).
    pub fn import_snapshot(
        &self,
        root: &Path,
        name: &str,
        table: Option<&str>,
    ) -> Result<crate::snapshot_import::ImportReport> {
        crate::snapshot_import::import_snapshot(&self.master, root, name, table)
    }

    /// The region server of this process.
    pub fn region_server(&self) -> &Arc<RegionServer> {
        &self.server
    }

    /// The in-process connection: tables and admin as a client sees them.
    pub fn connection(&self) -> &Arc<LocalConnection> {
        &self.connection
    }

    /// Regions that could not open (a damaged store file, say), with the file and the
    /// reason; every other region serves. `enable_table` tries them again.
    pub fn failed_regions(&self) -> Vec<FailedRegion> {
        self.master.failed_regions()
    }

    /// What opening found in the WAL: edits replayed, and a torn tail if one was cut.
    pub fn replay_report(&self) -> &cellar_wal::ReplayReport {
        &self.replay
    }

    /// The shared WAL.
    pub fn wal(&self) -> &Arc<Wal> {
        self.server.wal()
    }

    /// The block cache's hits, misses, blocks and bytes held (HBase's blockCacheHitCount,
    /// blockCacheMissCount, blockCacheCount and blockCacheSize).
    pub fn block_cache_stats(&self) -> cellar_hfile::CacheStats {
        self.server.block_cache().stats()
    }

    /// Creates a table of one region.
    pub fn create_table(&self, desc: TableDescriptor) -> Result<()> {
        self.master.create_table(desc, Vec::new())
    }

    /// Creates a table pre-split at `split_keys` (N keys make N+1 regions).
    pub fn create_table_split(
        &self,
        desc: TableDescriptor,
        split_keys: Vec<Vec<u8>>,
    ) -> Result<()> {
        self.master.create_table(desc, split_keys)
    }

    /// Table names, sorted.
    pub fn list_tables(&self) -> Vec<String> {
        self.master.list_tables()
    }

    pub fn table_exists(&self, name: &str) -> bool {
        self.master.table_exists(name)
    }

    /// The descriptor and whether the table is enabled.
    pub fn describe(&self, name: &str) -> Result<(TableDescriptor, bool)> {
        self.master.describe(name)
    }

    pub fn is_enabled(&self, name: &str) -> Result<bool> {
        Ok(self.describe(name)?.1)
    }

    /// An enabled table (some of its regions may be offline: each call to one of them
    /// reports it).
    pub fn table(&self, name: &str) -> Result<LocalTable> {
        self.connection.table_handle(name)
    }

    /// Changes a table's descriptor: families added, changed or removed (a removed
    /// family's files are deleted). The regions are flushed and reopened.
    pub fn alter_table(
        &self,
        name: &str,
        change: impl FnOnce(&mut TableDescriptor) -> cellar_api::Result<()>,
    ) -> Result<()> {
        self.master.alter_table(name, change)
    }

    /// Flushes and closes the table's regions; it refuses reads and writes until enabled.
    pub fn disable_table(&self, name: &str) -> Result<()> {
        self.master.disable_table(name)
    }

    pub fn enable_table(&self, name: &str) -> Result<()> {
        self.master.enable_table(name)
    }

    /// Deletes a disabled table and its data.
    pub fn drop_table(&self, name: &str) -> Result<()> {
        self.master.drop_table(name)
    }

    /// Empties a table, keeping its descriptor (disable, drop, create, as HBase's shell).
    pub fn truncate_table(&self, name: &str) -> Result<()> {
        self.master.truncate_table(name)
    }

    /// Flushes a table's MemStores.
    pub fn flush(&self, name: &str) -> Result<()> {
        self.master.flush_table(name)
    }

    /// Compacts a table (`major`: every file, dropping deleted and expired cells).
    pub fn compact(&self, name: &str, major: bool) -> Result<cellar_region::CompactionOutcome> {
        self.master.compact_table(name, major)
    }

    /// Splits the region holding `row` at `row`, or — without a row — every region that
    /// has a split point. Returns how many regions split.
    pub fn split(&self, table: &str, row: Option<&[u8]>) -> Result<usize> {
        self.master.split(table, row)
    }

    /// Deletes split parents no daughter references any more.
    pub fn clean_split_parents(&self, table: &str) -> Result<usize> {
        self.master.janitor(table)
    }

    /// Merges two adjacent regions of a table, named by a row of each.
    pub fn merge_regions(&self, table: &str, row_a: &[u8], row_b: &[u8]) -> Result<()> {
        self.master.merge(table, row_a, row_b)
    }

    /// `merge_region 'a', 'b'`: merges two adjacent regions named by their encoded names
    /// (or full region names).
    pub fn merge_regions_named(&self, a: &str, b: &str) -> Result<()> {
        self.master.merge_named(a, b)
    }

    /// The regions of a table with their statistics.
    pub fn list_regions(&self, name: &str) -> Result<Vec<RegionStats>> {
        self.master.list_regions(name)
    }

    /// Flushes every table and closes the log.
    pub fn close(mut self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.closed, true) {
            return Ok(());
        }
        // The maintenance task ends first, its current work done: nothing may run a
        // flush, compaction or split of this process once its regions are closed and
        // the directory lock is let go.
        if let Some((tx, stopping)) = self.stop.take() {
            stopping.store(true, Ordering::Release);
            let _ = tx.send(Maintenance::Stop);
        }
        if let Some(worker) = self.worker.take() {
            if !worker.join() {
                tracing::warn!("the maintenance task had panicked");
            }
        }
        let mut first_err = self.server.close_all().err();
        if let Err(e) = self.master.close() {
            first_err.get_or_insert(e);
        }
        if let Err(e) = self.server.wal().close() {
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
