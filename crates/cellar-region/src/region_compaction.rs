//! A region's compactions: whether one is needed, the requests of the maintenance task
//! and of users, and the run that picks each store's files, rewrites them through the
//! compaction matcher and swaps the result in.

use std::sync::atomic::Ordering;
use std::sync::MutexGuard;

use cellar_types::KeyRef;

use super::{lock, CompactionOutcome, Maintenance, Region};
use crate::compaction::{major_due, remove_expired_files, select_minor, CompactionStream};
use crate::compaction_matcher::{CompactionMatcher, Deletes};
use crate::cursor::Source;
use crate::error::{RegionError, Result};
use crate::heap::Heap;
use crate::store::Store;

impl Region {
    /// Asks the maintenance task to compact, each on its own, the stores that need it
    /// (HBase's request when a region opens). Whether a request was sent.
    pub fn request_store_compactions(&self) -> bool {
        self.needs_compaction() && self.request(Maintenance::CompactStores(self.name.clone()))
    }

    /// Handles a compaction request of the maintenance task (`per_store`: the request of
    /// an open), if a compaction is still needed. Whether one ran.
    pub fn compact_requested(&self, per_store: bool) -> Result<bool> {
        let ran = if self.needs_compaction() {
            let outcome = if per_store {
                self.compact_stores_needing()
            } else {
                self.compact(false)
            };
            outcome.map(|_| true)
        } else {
            Ok(false)
        };
        let _ = self
            .compactions_queued
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        ran
    }

    /// Whether any store has references to a parent's files, enough files for a minor
    /// compaction, or a periodic major due.
    pub fn needs_compaction(&self) -> bool {
        let now = self.ctx.clock.now_millis();
        self.stores
            .values()
            .any(|s| self.store_needs_compaction(s, now))
    }

    /// Whether one store has references to a parent's files, enough files for a minor
    /// compaction, or a periodic major due.
    fn store_needs_compaction(&self, s: &Store, now: i64) -> bool {
        if !self.table.compaction_enabled {
            return false;
        }
        if s.has_references() {
            return true;
        }
        let files = s.files();
        !select_minor(&files, &self.ctx.config, self.compaction_min_size()).is_empty()
            || major_due(&files, &self.ctx.config, now, self.seed)
    }

    /// Compacts, each on its own, the stores that need it (HBase's per-store system
    /// request when a region opens, and its periodic check): a store that does not need
    /// a compaction is left alone, expired files included.
    pub fn compact_stores_needing(&self) -> Result<CompactionOutcome> {
        let now = self.ctx.clock.now_millis();
        self.compact_where(false, |s| self.store_needs_compaction(s, now))
    }

    /// Runs the compactions the policy picks (`major` = every file of every store).
    pub fn compact(&self, major: bool) -> Result<CompactionOutcome> {
        self.compact_where(major, |_| true)
    }

    /// Runs the compactions the policy picks in the stores `pick` accepts (before
    /// choosing, each such store drops its expired files).
    fn compact_where(
        &self,
        major: bool,
        pick: impl Fn(&Store) -> bool,
    ) -> Result<CompactionOutcome> {
        let one = lock(&self.compact_lock);
        self.compact_locked(&one, major, pick)
    }

    /// A compaction a user asked for (HBase's `CompactRegion`), of every store or of
    /// `family`'s: as [`Region::compact`] when no compaction of the region runs. While one
    /// runs, its files are taken and HBase selects nothing: the request compacts nothing
    /// (it returns once the running one is done, so its caller finds the references of
    /// a new region gone), and a major one stays as each store's forced-major flag,
    /// which makes that store's next compaction (a later flush's, or a later request's)
    /// a major one. `None` when it was left so; an unknown family is an error.
    pub fn compact_requested_by_user(
        &self,
        major: bool,
        family: Option<&[u8]>,
    ) -> Result<Option<CompactionOutcome>> {
        if let Some(f) = family {
            if !self.stores.contains_key(f) {
                return Err(RegionError::NoSuchColumnFamily {
                    family: f.to_vec(),
                    region: self.name.clone(),
                });
            }
        }
        let picked = |s: &Store| family.is_none_or(|f| s.family.name == f);
        if major {
            for store in self.stores.values().filter(|s| picked(s)) {
                store.force_major.store(true, Ordering::SeqCst);
            }
        }
        let one = match self.compact_lock.try_lock() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => {
                drop(lock(&self.compact_lock));
                return Ok(None);
            }
        };
        self.compact_locked(&one, major, picked).map(Some)
    }

    /// Runs the compactions the policy picks while the caller holds the compaction lock.
    fn compact_locked(
        &self,
        _one: &MutexGuard<'_, ()>,
        major: bool,
        pick: impl Fn(&Store) -> bool,
    ) -> Result<CompactionOutcome> {
        let mut outcome = CompactionOutcome::default();
        if self.closed.load(Ordering::SeqCst) {
            // Closed (split, merged, disabled): its files belong to whoever took over.
            return Ok(outcome);
        }
        let now = self.ctx.clock.now_millis();
        let smallest_read_point = self.smallest_read_point();
        for (family, store) in &self.stores {
            if !pick(store) {
                continue;
            }
            if major {
                store.force_major.store(true, Ordering::SeqCst);
            }
            remove_expired_files(store, now)?;
            let files = store.files();
            let (selected, is_major) = if store.force_major.load(Ordering::SeqCst)
                || store.has_references()
                || major_due(&files, &self.ctx.config, now, self.seed)
            {
                (files.clone(), true)
            } else {
                let sel = select_minor(&files, &self.ctx.config, self.compaction_min_size());
                let all = !sel.is_empty() && sel.len() == files.len();
                (sel, all)
            };
            if selected.is_empty() || (!is_major && selected.len() < 2) {
                continue;
            }
            if is_major {
                store.force_major.store(false, Ordering::SeqCst);
            }
            // A compaction reads its inputs once and then deletes them: as HBase's
            // (`getScannersForCompaction`, cacheBlocks false) it keeps their blocks out
            // of the cache, where they would push out the blocks readers use.
            let mut cursors: Vec<Source> = Vec::new();
            for f in &selected {
                cursors.push(
                    f.cursor(u64::MAX, &KeyRef::first_on_row(b""), false)?
                        .into(),
                );
            }
            let deletes = if is_major {
                Deletes::Drop {
                    earliest_put_ts: selected
                        .iter()
                        .map(|f| f.earliest_put_ts.unwrap_or(i64::MIN))
                        .min()
                        .unwrap_or(i64::MIN),
                }
            } else {
                Deletes::Retain
            };
            let matcher = CompactionMatcher::new(
                &store.family,
                &self.ctx.config,
                now,
                smallest_read_point,
                deletes,
            );
            let mut stream = CompactionStream::new(Heap::new(cursors), matcher);
            let max_seq = selected.iter().map(|f| f.max_seq_id).max().unwrap_or(0);
            let names: Vec<String> = selected.iter().map(|f| f.name.clone()).collect();
            let output = store.write_file(&mut stream, max_seq, is_major, &names, now)?;
            outcome.cells_kept += stream.kept;
            outcome.cells_dropped += stream.dropped;
            store.commit_compaction(&selected, output)?;
            outcome.stores.push((family.clone(), is_major));
            outcome.inputs.push((family.clone(), names));
            self.metrics.compactions.fetch_add(1, Ordering::Relaxed);
            if is_major {
                self.metrics
                    .major_compactions
                    .fetch_add(1, Ordering::Relaxed);
            }
            tracing::info!(
                table = %self.table.name,
                region = %self.name,
                family = %cellar_types::to_string_binary(family),
                major = is_major,
                files = outcome.inputs.last().map_or(0, |(_, n)| n.len()),
                kept = stream.kept,
                dropped = stream.dropped,
                "compacted"
            );
        }
        Ok(outcome)
    }
}
