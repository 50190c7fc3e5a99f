//! A region: a row range of a table (`[start, end)`, split by row) with one store per family,
//! the shared WAL, MVCC and row locks. Opening replays the WAL edits its stores have not
//! flushed; flushes snapshot every MemStore under the updates lock so the flushed
//! sequence id covers exactly the edits in the files; compactions run beside reads and
//! writes and swap files at the end.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use cellar_hfile::BlockCache;
use cellar_io::{Clock, FileSystem};
use cellar_types::{to_string_binary, KeyRef};
use cellar_wal::{Wal, WalEdit};

use crate::compaction::CompactionStream;
use crate::compaction_matcher::{CompactionMatcher, Deletes};
use crate::config::Config;
use crate::cursor::{MemCursor, Source};
use crate::descriptor::TableDescriptor;
use crate::error::{RegionError, Result};
use crate::heap::Heap;
use crate::memstore::MemSegment;
use crate::mvcc::{Mvcc, ReadPoints};
use crate::row_lock::RowLocks;
use crate::store::Store;

#[path = "region_compaction.rs"]
mod compacting;

/// Log bytes past which a flush asks the regions still pinning the log to flush too
/// (a quarter of the 128 MiB segment).
const PINNED_LOG_FLUSH_BYTES: u64 = 32 << 20;

/// Background work a region asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Maintenance {
    Flush(String),
    /// After a flush: every store of the region, if any of them needs a compaction.
    Compact(String),
    /// After an open: each store that needs a compaction, on its own.
    CompactStores(String),
    /// The database is closing: the maintenance task ends.
    Stop,
}

/// Counters of a region.
#[derive(Debug, Default)]
pub struct RegionMetrics {
    /// Split by thread: added to on every read.
    pub read_requests: crate::counter::SplitCounter,
    pub write_requests: AtomicU64,
    pub blocked_requests: AtomicU64,
    pub flushes: AtomicU64,
    pub compactions: AtomicU64,
    pub major_compactions: AtomicU64,
    /// Files bulk loaded.
    pub bulk_loads: AtomicU64,
}

/// A region held still by [`Region::freeze`].
pub struct Frozen<'a> {
    region: &'a Region,
    _writes: std::sync::RwLockWriteGuard<'a, ()>,
    _flushes: MutexGuard<'a, ()>,
    _compactions: MutexGuard<'a, ()>,
}

impl Frozen<'_> {
    /// Flushes the MemStore (asking for no compaction).
    pub fn flush(&self) -> Result<bool> {
        self.region.flush_locked(false)
    }
}

/// What a compaction did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactionOutcome {
    /// Stores compacted, and whether each ran as a major (all-files) compaction.
    pub stores: Vec<(Vec<u8>, bool)>,
    /// Per store compacted, the names of the files it replaced.
    pub inputs: Vec<(Vec<u8>, Vec<String>)>,
    pub cells_kept: u64,
    pub cells_dropped: u64,
}

/// Everything a region needs from its server.
#[derive(Clone)]
pub struct RegionContext {
    pub fs: Arc<dyn FileSystem>,
    pub clock: Arc<dyn Clock>,
    pub config: Arc<Config>,
    pub wal: Arc<Wal>,
    pub cache: Option<Arc<BlockCache>>,
    pub maintenance: Option<Sender<Maintenance>>,
    /// Where reads over the large-response thresholds are logged (the server's ring).
    pub large_log: Option<Arc<crate::large_log::LargeLog>>,
}

/// One region.
pub struct Region {
    pub(crate) name: String,
    /// The row range served: `[start_key, end_key)`, empty = unbounded.
    start_key: Vec<u8>,
    end_key: Vec<u8>,
    pub(crate) table: TableDescriptor,
    dir: PathBuf,
    pub(crate) ctx: RegionContext,
    pub(crate) stores: BTreeMap<Vec<u8>, Store>,
    pub(crate) mvcc: Mvcc,
    /// Read points of open scanners and Gets.
    pub(crate) readers: Arc<ReadPoints>,
    pub(crate) locks: RowLocks,
    /// Per row, how far increments and appends ran ahead of the clock.
    pub(crate) row_clock: crate::row_clock::RowClock,
    /// Writers hold it shared from sequence id to MemStore; a flush snapshot holds it
    /// exclusively.
    pub(crate) updates: RwLock<()>,
    flush_lock: Mutex<()>,
    compact_lock: Mutex<()>,
    /// Compaction requests sent to the maintenance task and not yet handled.
    compactions_queued: AtomicUsize,
    pub(crate) flush_requested: AtomicBool,
    /// The room a Get's result starts with (`get_room.rs`).
    pub(crate) get_room: crate::get_room::GetRoom,
    closed: AtomicBool,
    pub metrics: RegionMetrics,
    seed: u64,
    /// When the region opened (ms).
    opened_at: i64,
    busy: Mutex<crate::split_policy::BusyRate>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Region {
    /// Opens (or creates) the region `name` of `table` in `dir`. WAL edits are replayed
    /// separately through [`Region::replay`] before it takes writes.
    pub fn open(
        dir: &Path,
        name: &str,
        table: TableDescriptor,
        ctx: RegionContext,
    ) -> Result<Region> {
        Region::open_range(dir, name, table, (Vec::new(), Vec::new()), ctx)
    }

    /// Opens a region serving the rows `[start, end)` (empty = unbounded).
    pub fn open_range(
        dir: &Path,
        name: &str,
        table: TableDescriptor,
        range: (Vec<u8>, Vec<u8>),
        ctx: RegionContext,
    ) -> Result<Region> {
        ctx.fs.create_dir_all(dir)?;
        if let Some(parent) = dir.parent() {
            ctx.fs.sync_dir(parent)?;
        }
        // A bulk load a crash interrupted after its journal is finished first.
        crate::bulk_load::finish_journal(&ctx.fs, dir)?;
        let mut stores = BTreeMap::new();
        for family in &table.families {
            let store_dir = dir.join(crate::store::family_dir_name(&family.name));
            let store = Store::open(
                ctx.fs.clone(),
                &store_dir,
                family.clone(),
                ctx.cache.clone(),
            )?
            .with_levels(ctx.config.large_row_levels);
            stores.insert(family.name.clone(), store);
        }
        let max_seq = stores
            .values()
            .map(|s| s.max_flushed_seq_id())
            .max()
            .unwrap_or(0);
        let seed = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
        });
        let opened_at = ctx.clock.now_millis();
        Ok(Region {
            name: name.to_string(),
            start_key: range.0,
            end_key: range.1,
            table,
            dir: dir.to_path_buf(),
            ctx,
            stores,
            mvcc: Mvcc::new(max_seq),
            readers: Arc::new(ReadPoints::default()),
            locks: RowLocks::default(),
            row_clock: Default::default(),
            updates: RwLock::new(()),
            flush_lock: Mutex::new(()),
            compact_lock: Mutex::new(()),
            compactions_queued: AtomicUsize::new(0),
            flush_requested: AtomicBool::new(false),
            get_room: Default::default(),
            closed: AtomicBool::new(false),
            metrics: RegionMetrics::default(),
            seed,
            opened_at,
            busy: Mutex::new(crate::split_policy::BusyRate::new(opened_at)),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The first row served (empty = from the start).
    pub fn start_key(&self) -> &[u8] {
        &self.start_key
    }

    /// The row after the last served (empty = to the end).
    pub fn end_key(&self) -> &[u8] {
        &self.end_key
    }

    /// HBase's `rowIsInRange`.
    pub fn contains_row(&self, row: &[u8]) -> bool {
        (self.start_key.is_empty() || self.start_key.as_slice() <= row)
            && (self.end_key.is_empty() || row < self.end_key.as_slice())
    }

    pub fn table(&self) -> &TableDescriptor {
        &self.table
    }

    /// The blocked-request rate BusyRegionSplitPolicy looks at.
    pub fn blocked_rate(&self) -> f64 {
        let now = self.ctx.clock.now_millis();
        let blocked = self.metrics.blocked_requests.load(Ordering::Relaxed);
        let writes = self.metrics.write_requests.load(Ordering::Relaxed);
        lock(&self.busy).update(now, blocked, writes, self.ctx.config.busy_agg_window_ms)
    }

    /// Milliseconds since the region opened.
    pub fn age_ms(&self) -> u64 {
        self.ctx
            .clock
            .now_millis()
            .saturating_sub(self.opened_at)
            .max(0) as u64
    }

    /// A number fixed for this region (jitter of split and compaction thresholds).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn store(&self, family: &[u8]) -> Option<&Store> {
        self.stores.get(family)
    }

    pub fn stores(&self) -> impl Iterator<Item = &Store> {
        self.stores.values()
    }

    /// Applies a replayed WAL edit: each cell goes to its store unless the store's files
    /// already hold it.
    pub fn replay(&self, edit: &WalEdit) -> Result<()> {
        let now = self.ctx.clock.now_millis();
        for cell in &edit.cells {
            if let Some(store) = self.stores.get(cell.family()) {
                if cell.seq_id() > store.max_flushed_seq_id() {
                    store.add(cell.clone(), now);
                }
            }
        }
        self.mvcc.advance_to(edit.seq_id);
        Ok(())
    }

    /// Highest sequence id used so far.
    pub fn last_seq_id(&self) -> u64 {
        self.mvcc.last_assigned()
    }

    /// MemStore bytes of every store.
    pub fn memstore_size(&self) -> u64 {
        self.stores.values().map(|s| s.memstore_size() as u64).sum()
    }

    /// Bytes of every store file.
    pub fn store_files_size(&self) -> u64 {
        self.stores.values().map(|s| s.files_size()).sum()
    }

    pub fn store_file_count(&self) -> usize {
        self.stores.values().map(|s| s.files().len()).sum()
    }

    /// `MEMSTORE_FLUSHSIZE` or `hbase.hregion.memstore.flush.size`.
    pub fn flush_size(&self) -> u64 {
        self.table
            .memstore_flush_size
            .unwrap_or(self.ctx.config.memstore_flush_size)
    }

    /// `hbase.hstore.compaction.min.size`, or (unset) the region's flush size: windows
    /// of files smaller in all than this are compacted without the ratio test.
    pub fn compaction_min_size(&self) -> u64 {
        self.ctx
            .config
            .compaction_min_size
            .unwrap_or_else(|| self.flush_size())
    }

    pub(crate) fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(RegionError::Closed(self.name.clone()));
        }
        Ok(())
    }

    pub(crate) fn request(&self, m: Maintenance) -> bool {
        let compaction = matches!(m, Maintenance::Compact(_) | Maintenance::CompactStores(_));
        match &self.ctx.maintenance {
            Some(tx) => {
                if compaction {
                    self.compactions_queued.fetch_add(1, Ordering::SeqCst);
                }
                let sent = tx.send(m).is_ok();
                if compaction && !sent {
                    self.compactions_queued.fetch_sub(1, Ordering::SeqCst);
                }
                sent
            }
            None => false,
        }
    }

    /// The smallest read point of any reader open now (or starting now): cells above it
    /// are invisible to some reader and are neither counted nor applied by rewrites.
    pub fn smallest_read_point(&self) -> u64 {
        self.readers.smallest(&self.mvcc)
    }

    /// Flushes every MemStore to new store files, through the store's rules (versions,
    /// TTL, masked puts; every marker kept), then asks for a compaction if a store now
    /// needs one (HBase's MemStore flusher). Returns whether anything was written.
    pub fn flush(&self) -> Result<bool> {
        self.flush_with(true)
    }

    /// Flushes as HBase's flush-table procedure does: no compaction is asked for.
    pub fn flush_only(&self) -> Result<bool> {
        self.flush_with(false)
    }

    fn flush_with(&self, request_compaction: bool) -> Result<bool> {
        let _one = lock(&self.flush_lock);
        let (snapshots, flush_seq) = {
            let _w = self.updates.write().unwrap_or_else(|e| e.into_inner());
            self.snapshot_stores()
        };
        self.write_flush(snapshots, flush_seq, request_compaction)
    }

    /// Holds the region still: no write, flush or compaction runs until the returned
    /// guard is dropped. [`Frozen::flush`] flushes meanwhile. A snapshot takes every
    /// region of a table this way, so it sees each as of one moment.
    pub fn freeze(&self) -> Frozen<'_> {
        let compactions = lock(&self.compact_lock);
        let flushes = lock(&self.flush_lock);
        let writes = self.updates.write().unwrap_or_else(|e| e.into_inner());
        Frozen {
            region: self,
            _writes: writes,
            _flushes: flushes,
            _compactions: compactions,
        }
    }

    /// The flush lock, for a caller that flushes with [`Region::flush_locked`].
    pub(crate) fn lock_flush(&self) -> MutexGuard<'_, ()> {
        lock(&self.flush_lock)
    }

    /// Flushes while the caller holds the flush lock and the update lock exclusively
    /// (no write can arrive until it is done).
    pub(crate) fn flush_locked(&self, request_compaction: bool) -> Result<bool> {
        let (snapshots, flush_seq) = self.snapshot_stores();
        self.write_flush(snapshots, flush_seq, request_compaction)
    }

    /// Every store's MemStore moved to its snapshot (under the update lock), and the
    /// sequence id the flush covers.
    #[allow(clippy::type_complexity)]
    fn snapshot_stores(&self) -> (Vec<(Vec<u8>, Vec<Arc<MemSegment>>)>, u64) {
        self.flush_requested.store(false, Ordering::SeqCst);
        let snaps: Vec<_> = self
            .stores
            .iter()
            .map(|(f, s)| (f.clone(), s.snapshot()))
            .collect();
        (snaps, self.mvcc.last_assigned())
    }

    fn write_flush(
        &self,
        snapshots: Vec<(Vec<u8>, Vec<Arc<MemSegment>>)>,
        flush_seq: u64,
        request_compaction: bool,
    ) -> Result<bool> {
        let now = self.ctx.clock.now_millis();
        let smallest_read_point = self.smallest_read_point();
        let mut wrote = false;
        for (family, segs) in snapshots {
            let Some(store) = self.stores.get(&family) else {
                continue;
            };
            let Some(seg) = segs.into_iter().next() else {
                continue;
            };
            let cursor = MemCursor::new(seg, u64::MAX, &KeyRef::first_on_row(b""))?;
            let matcher = CompactionMatcher::new(
                &store.family,
                &self.ctx.config,
                now,
                smallest_read_point,
                Deletes::Retain,
            );
            let mut cells = CompactionStream::new(Heap::new(vec![Source::from(cursor)]), matcher);
            let file = store.write_file(&mut cells, flush_seq, false, &[], now)?;
            wrote |= file.is_some();
            store.commit_flush(file)?;
        }
        self.ctx.wal.mark_flushed(&self.name, flush_seq)?;
        // Regions whose few unflushed edits keep this flush's log on disk flush too,
        // once the log holds PINNED_LOG_FLUSH_BYTES (at most once a segment).
        for other in self.ctx.wal.regions_pinning(PINNED_LOG_FLUSH_BYTES) {
            if other != self.name {
                self.request(Maintenance::Flush(other));
            }
        }
        if wrote {
            self.metrics.flushes.fetch_add(1, Ordering::Relaxed);
            tracing::info!(
                table = %self.table.name,
                region = %self.name,
                store_files = self.store_file_count(),
                "flushed"
            );
            // A closing region's flush asks for nothing (HBase's neither): whoever opens
            // the region next decides, store by store.
            if request_compaction
                && !self.closed.load(Ordering::SeqCst)
                && self.needs_compaction()
                && !self.request(Maintenance::Compact(self.name.clone()))
            {
                // No background worker: the caller decides when to compact.
            }
        }
        Ok(wrote)
    }

    /// The row this region would split at (§5.3): the row of the mid-key of the largest
    /// file of the largest store — never inside a row. `Err` says why there is none
    /// (for instance one row making up the whole file).
    pub fn split_point(&self) -> std::result::Result<Vec<u8>, String> {
        if self.stores.values().any(|s| s.has_references()) {
            return Err("it still holds reference files from its own split".into());
        }
        let store = self
            .stores
            .values()
            .max_by_key(|s| s.files_size())
            .ok_or("no stores")?;
        let file = store
            .files()
            .into_iter()
            .max_by_key(|f| f.size)
            .ok_or("no store files yet")?;
        let reader = &file.reader;
        let err = |e: cellar_hfile::HFileError| e.to_string();
        let mid = reader
            .mid_key()
            .map_err(err)?
            .ok_or("the file has no mid-key")?;
        let mid_row = cellar_types::KeyRef::parse(&mid)
            .map_err(|e| e.to_string())?
            .row
            .to_vec();
        let first_row = reader
            .first_data_block()
            .map_err(err)?
            .and_then(|b| b.cells.first().map(|c| c.row().to_vec()))
            .ok_or("empty file")?;
        let last_row = reader
            .last_key()
            .and_then(|k| cellar_types::KeyRef::parse(k).ok().map(|k| k.row.to_vec()))
            .ok_or("no last key")?;
        if mid_row == first_row || mid_row == last_row {
            return Err(format!(
                "row '{}' fills the middle of the largest file: the split point would fall inside it",
                to_string_binary(&mid_row)
            ));
        }
        if !self.contains_row(&mid_row) || mid_row == self.start_key {
            return Err("the mid-key's row is the region's first row".into());
        }
        Ok(mid_row)
    }

    /// Bytes of the largest store's files.
    pub fn largest_store_size(&self) -> u64 {
        self.stores
            .values()
            .map(|s| s.files_size())
            .max()
            .unwrap_or(0)
    }

    /// Whether a compaction is running or asked for and not yet run: what HBase
    /// reports as a region's compaction state.
    pub fn compaction_pending(&self) -> bool {
        self.compact_lock.try_lock().is_err() || self.compactions_queued.load(Ordering::SeqCst) > 0
    }

    /// The `n` rows writers waited for most (lock waits, timeouts, RegionTooBusy).
    pub fn hot_rows(&self, n: usize) -> Vec<(Vec<u8>, crate::row_lock::Contention)> {
        self.locks.hot_rows(n)
    }

    /// The region's clock, in milliseconds.
    pub fn now_millis(&self) -> i64 {
        self.ctx.clock.now_millis()
    }

    /// The region's configuration.
    pub fn config(&self) -> &crate::Config {
        &self.ctx.config
    }

    /// Flushes what is in memory and refuses further work.
    /// Waits for a running compaction (a split or merge must not reference files a
    /// compaction is about to replace), then flushes; later compactions do nothing.
    pub fn close(&self) -> Result<()> {
        if self.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let _no_compaction = lock(&self.compact_lock);
        self.flush()?;
        Ok(())
    }

    /// Stops serving without flushing (the WAL still holds the edits).
    pub fn abort(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }
}
