//! The region server role: hosts regions by encoded name, opens and closes them
//! (replaying their recovered WAL edits on open), flushes and compacts them, writes the
//! reference files of a split or merge, and serves the data operations addressed to a
//! region. Each region has its own locks; the table of online regions is held only for
//! a lookup, so an operation on one region never waits on another region's flush,
//! split, close or fsync.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, RwLock};

use cellar_api::{RegionInfo, ServerName, TableDescriptor};
use cellar_hfile::BlockCache;
use cellar_io::{Clock, FileSystem};
use cellar_region::{Config, Maintenance, Region, RegionContext};
use cellar_wal::{Wal, WalEdit};

use crate::error::{DbError, Result};

pub use crate::layout::region_dir;

/// What a region server reports of one region it hosts (HBase's RegionLoad).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RegionLoad {
    pub store_files: usize,
    pub store_files_size: u64,
    pub memstore_size: u64,
    pub read_requests: u64,
    pub write_requests: u64,
    /// Bytes of the largest store's files (what split policies measure).
    pub largest_store_size: u64,
}

/// Hosts regions.
pub struct RegionServer {
    name: ServerName,
    root: PathBuf,
    fs: Arc<dyn FileSystem>,
    clock: Arc<dyn Clock>,
    config: Arc<Config>,
    wal: Arc<Wal>,
    cache: Arc<BlockCache>,
    maintenance: Option<Sender<Maintenance>>,
    /// Keyed by encoded name, hashed with foldhash (looked up on every call).
    online: RwLock<HashMap<String, Arc<Region>, foldhash::fast::RandomState>>,
    /// WAL edits of regions not yet opened, replayed when they open (HBase's recovered
    /// edits); kept until a region opens and replays them.
    recovered: Mutex<HashMap<String, Vec<WalEdit>>>,
    /// Reads over the large-response thresholds, for the shell and the status page.
    large_log: Arc<cellar_region::large_log::LargeLog>,
}

fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a region server is built from.
pub struct ServerParts {
    pub name: ServerName,
    pub root: PathBuf,
    pub fs: Arc<dyn FileSystem>,
    pub clock: Arc<dyn Clock>,
    pub config: Arc<Config>,
    pub wal: Arc<Wal>,
    pub cache: Arc<BlockCache>,
    pub maintenance: Option<Sender<Maintenance>>,
}

impl RegionServer {
    pub fn new(parts: ServerParts) -> RegionServer {
        let large_log = Arc::new(cellar_region::large_log::LargeLog::new(
            parts.config.large_log,
        ));
        RegionServer {
            large_log,
            name: parts.name,
            root: parts.root,
            fs: parts.fs,
            clock: parts.clock,
            config: parts.config,
            wal: parts.wal,
            cache: parts.cache,
            maintenance: parts.maintenance,
            online: RwLock::new(HashMap::default()),
            recovered: Mutex::new(HashMap::new()),
        }
    }

    pub fn server_name(&self) -> &ServerName {
        &self.name
    }

    pub fn config(&self) -> &Arc<Config> {
        &self.config
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    pub fn wal(&self) -> &Arc<Wal> {
        &self.wal
    }

    /// The block cache every region hosted here reads through.
    pub fn block_cache(&self) -> &Arc<BlockCache> {
        &self.cache
    }

    /// What a region hosted here runs with.
    pub fn context(&self) -> RegionContext {
        RegionContext {
            fs: self.fs.clone(),
            clock: self.clock.clone(),
            config: self.config.clone(),
            wal: self.wal.clone(),
            cache: Some(self.cache.clone()),
            maintenance: self.maintenance.clone(),
            large_log: Some(self.large_log.clone()),
        }
    }

    /// The server's large-response log (its ring and counts).
    pub fn large_log(&self) -> &cellar_region::large_log::LargeLog {
        &self.large_log
    }

    /// The reads over the large-response thresholds, newest first.
    pub fn large_responses(&self) -> Vec<cellar_region::large_log::LargeResponse> {
        self.large_log.entries()
    }

    /// Hands over WAL edits of regions to replay when they open.
    pub fn add_recovered_edits(&self, edits: HashMap<String, Vec<WalEdit>>) {
        let mut r = locked(&self.recovered);
        for (region, mut list) in edits {
            r.entry(region).or_default().append(&mut list);
        }
    }

    /// Whether a region still has edits to replay.
    pub fn has_recovered_edits(&self, encoded: &str) -> bool {
        locked(&self.recovered)
            .get(encoded)
            .is_some_and(|e| !e.is_empty())
    }

    /// Drops the recovered edits of a region that no longer exists.
    pub fn discard_recovered_edits(&self, encoded: &str) {
        locked(&self.recovered).remove(encoded);
    }

    /// Opens a region and replays its recovered edits; it serves once this returns. On
    /// failure the region stays closed and its edits are kept for a later attempt.
    pub fn open_region(&self, desc: &TableDescriptor, info: &RegionInfo) -> Result<Arc<Region>> {
        let dir = region_dir(&self.root, info);
        self.remove_dropped_families(desc, &dir)?;
        let region = Arc::new(Region::open_range(
            &dir,
            &info.encoded,
            desc.clone(),
            (info.start.clone(), info.end.clone()),
            self.context(),
        )?);
        let pending = locked(&self.recovered)
            .get(&info.encoded)
            .cloned()
            .unwrap_or_default();
        for e in &pending {
            if let Err(err) = region.replay(e) {
                region.abort();
                return Err(err.into());
            }
        }
        locked(&self.recovered).remove(&info.encoded);
        write(&self.online).insert(info.encoded.clone(), region.clone());
        tracing::info!(region = %info.region_name(), "region open");
        // As HBase's region server after opening a region: a store with enough files
        // (or references to a parent's) is compacted now, not at the next flush.
        region.request_store_compactions();
        Ok(region)
    }

    /// Removes the directories of families the descriptor no longer has: an alter that
    /// removed them committed its descriptor and then stopped before deleting them.
    fn remove_dropped_families(&self, desc: &TableDescriptor, dir: &Path) -> Result<()> {
        if !self.fs.exists(dir) {
            return Ok(());
        }
        let kept: std::collections::HashSet<String> = desc
            .families
            .iter()
            .map(|f| cellar_region::store::family_dir_name(&f.name))
            .collect();
        for sub in self.fs.list_dir(dir)? {
            let name = sub.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if self.fs.is_dir(&sub) && !name.starts_with('.') && !kept.contains(name) {
                tracing::warn!(dir = %sub.display(), "removing the files of a dropped family");
                crate::database::files::remove_tree(self.fs.as_ref(), &sub)?;
            }
        }
        Ok(())
    }

    /// Takes a region offline: flushes and closes it. A region that fails to close stays
    /// online.
    pub fn close_region(&self, encoded: &str) -> Result<()> {
        let Some(region) = write(&self.online).remove(encoded) else {
            return Ok(());
        };
        if let Err(e) = region.close() {
            write(&self.online).insert(encoded.to_string(), region);
            return Err(e.into());
        }
        Ok(())
    }

    /// Takes a region offline without flushing (its edits stay in the WAL).
    pub fn abort_region(&self, encoded: &str) {
        if let Some(region) = write(&self.online).remove(encoded) {
            region.abort();
        }
    }

    /// The online region `encoded`, or NotServingRegion.
    pub fn region(&self, encoded: &str) -> Result<Arc<Region>> {
        read(&self.online)
            .get(encoded)
            .cloned()
            .ok_or_else(|| DbError::RegionNotServing {
                region: encoded.to_string(),
                reason: format!("the region is not online on {}", self.name),
            })
    }

    pub fn is_online(&self, encoded: &str) -> bool {
        read(&self.online).contains_key(encoded)
    }

    /// Every online region.
    pub fn online_regions(&self) -> Vec<Arc<Region>> {
        read(&self.online).values().cloned().collect()
    }

    /// The statistics of an online region.
    pub fn region_load(&self, encoded: &str) -> Result<RegionLoad> {
        let r = self.region(encoded)?;
        let relaxed = std::sync::atomic::Ordering::Relaxed;
        Ok(RegionLoad {
            store_files: r.store_file_count(),
            store_files_size: r.store_files_size(),
            memstore_size: r.memstore_size(),
            read_requests: r.metrics.read_requests.get(),
            write_requests: r.metrics.write_requests.load(relaxed),
            largest_store_size: r.largest_store_size(),
        })
    }

    pub fn flush_region(&self, encoded: &str) -> Result<()> {
        self.region(encoded)?.flush()?;
        Ok(())
    }

    pub fn compact_region(
        &self,
        encoded: &str,
        major: bool,
    ) -> Result<cellar_region::CompactionOutcome> {
        Ok(self.region(encoded)?.compact(major)?)
    }

    /// The first step of a split: closes `parent` (flushing it) and writes each
    /// daughter's half of every parent file as reference files. The master commits the
    /// split and then opens the daughters; until then the parent can be reopened.
    pub fn split_region(
        &self,
        parent: &RegionInfo,
        point: &[u8],
        a: &RegionInfo,
        b: &RegionInfo,
    ) -> Result<()> {
        let region = self.region(&parent.encoded)?;
        self.close_region(&parent.encoded)?;
        for store in region.stores() {
            let fam = cellar_region::store::family_dir_name(&store.family.name);
            store.write_references(
                point,
                &region_dir(&self.root, a).join(&fam),
                &region_dir(&self.root, b).join(&fam),
                &parent.encoded,
            )?;
        }
        Ok(())
    }

    /// The first step of a merge: closes both parents and writes whole-file references
    /// to their files in the merged region's directory.
    pub fn merge_regions(&self, parents: [&RegionInfo; 2], merged: &RegionInfo) -> Result<()> {
        let regions = [
            self.region(&parents[0].encoded)?,
            self.region(&parents[1].encoded)?,
        ];
        // On a failure the master reopens whichever parent is closed.
        self.close_region(&parents[0].encoded)?;
        self.close_region(&parents[1].encoded)?;
        for (r, parent) in regions.iter().zip(parents) {
            for store in r.stores() {
                let fam = cellar_region::store::family_dir_name(&store.family.name);
                store.write_whole_references(
                    &region_dir(&self.root, merged).join(&fam),
                    &parent.encoded,
                )?;
            }
        }
        Ok(())
    }

    /// Asks the maintenance task to compact each store of a region that needs it
    /// (HBase's request when a region opens).
    pub fn request_compaction(&self, encoded: &str) {
        if let Ok(r) = self.region(encoded) {
            r.request_store_compactions();
        }
    }

    /// Closes every region (flushing each); the first failure is returned after all
    /// were tried.
    pub fn close_all(&self) -> Result<()> {
        let names: Vec<String> = read(&self.online).keys().cloned().collect();
        let mut first = None;
        for n in names {
            if let Err(e) = self.close_region(&n) {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}
