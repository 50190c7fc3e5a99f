//! The log writer. Writers encode their edit into a shared buffer under a short lock;
//! whoever then needs the edit on disk takes the file lock and writes (and, for
//! FSYNC_WAL, fsyncs) everything buffered so far, so writers that queued behind one sync
//! are covered by the next one together (group commit). A failed write or sync poisons
//! the log: every later write is refused instead of being silently lost.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use cellar_io::{Executor, FileSystem, TaskHandle, Threads, WritableFile};

use crate::error::{Result, WalError};
use crate::gather::Gather;
use crate::record::{WalEdit, SEGMENT_MAGIC};
use crate::replay::{replay, segment_path, ReplayReport, SegmentMeta};
use cellar_api::Durability;

/// Settings of the log.
#[derive(Debug, Clone)]
pub struct WalOptions {
    /// A segment is closed and a new one started once it reaches this size
    /// (`hbase.regionserver.logroll.multiplier` × WAL block size in HBase: 128 MiB).
    pub roll_size: u64,
    /// How often ASYNC_WAL edits are written out (`hbase.regionserver.optionallogflushinterval`).
    pub async_flush_interval: Duration,
    /// Runs the ASYNC_WAL flusher.
    pub executor: Arc<dyn Executor>,
    /// Times syncs (for the sync-latency histogram).
    pub clock: Arc<dyn cellar_io::Clock>,
}

impl Default for WalOptions {
    fn default() -> Self {
        WalOptions {
            roll_size: 128 << 20,
            async_flush_interval: Duration::from_millis(1000),
            executor: Arc::new(Threads),
            clock: Arc::new(cellar_io::SystemClock),
        }
    }
}

/// Counters of the log.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WalStats {
    pub appends: u64,
    /// Writes of the buffer to the operating system.
    pub writes: u64,
    pub fsyncs: u64,
    pub segments: usize,
}

/// The largest write buffer kept for reuse.
const SPARE_LIMIT: usize = 4 << 20;

#[derive(Default)]
struct Pending {
    buf: Vec<u8>,
    last_txid: u64,
    /// FSYNC_WAL edits logged so far.
    hard: u64,
    regions: HashMap<String, u64>,
}

struct FileState {
    writer: Box<dyn WritableFile>,
    current: SegmentMeta,
    closed: Vec<SegmentMeta>,
    next_number: u64,
    written_txid: u64,
    synced_txid: u64,
    /// FSYNC_WAL edits the last fsync covered.
    hard_synced: u64,
    flushed: HashMap<String, u64>,
    forgotten: HashSet<String>,
    shut: bool,
    /// A writer is starting the next segment for a roll the current one's size asked
    /// for (see `roll.rs`).
    rolling: bool,
    /// An emptied buffer handed back to `Pending` at the next write, so that appends
    /// reuse two buffers instead of growing a new one after every write.
    spare: Vec<u8>,
    /// The segment whose pinning regions were last named ([`Wal::regions_pinning`]),
    /// and each region named for it with its newest edit then.
    pin_named: (u64, HashMap<String, u64>),
}

/// How far the log is synced, and what writing it out took.
struct Done {
    synced: u64,
    /// FSYNC_WAL edits the last fsync covered.
    hard_synced: u64,
    /// The write-out (and fsync) just made; zero when none was needed.
    took: Duration,
}

impl FileState {
    fn done(&self, took: Duration) -> Done {
        Done {
            synced: self.synced_txid,
            hard_synced: self.hard_synced,
            took,
        }
    }

    /// Whether `region`'s edits up to `max` no longer need the log (flushed, or the
    /// region dropped).
    fn flushed_past(&self, region: &str, max: u64) -> bool {
        self.forgotten.contains(region) || self.flushed.get(region).is_some_and(|s| *s >= max)
    }

    /// Whether every edit in `seg` no longer needs the log.
    fn covers(&self, seg: &SegmentMeta) -> bool {
        seg.regions
            .iter()
            .all(|(region, max)| self.flushed_past(region, *max))
    }
}

struct Shared {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    opts: WalOptions,
    pending: Mutex<Pending>,
    file: Mutex<FileState>,
    poison: Mutex<Option<String>>,
    poisoned: AtomicBool,
    /// Whether a writer is spinning for the log file's lock.
    file_spinner: AtomicBool,
    appends: AtomicU64,
    writes: AtomicU64,
    fsyncs: AtomicU64,
    /// How long each write-out (and fsync) to the log took.
    sync_latency: cellar_io::Histogram,
    stop: Mutex<bool>,
    wake: Condvar,
    /// Group commit: one writer at a time writes out and syncs everything logged so far
    /// while the others wait here, then all of them see whether it covered them.
    commit: Mutex<Commit>,
    committed: Condvar,
    /// How the leader of a shared fsync waits for its whole group.
    gather: Gather,
}

/// How long one writer spins for the log file's lock before sleeping on it: rounds of
/// 32 spin-loop hints, each round ending with an attempt at the lock (about 40 µs on a
/// core whose hint waits 18 ns; counted, not timed, so that a simulated clock cannot
/// make a writer spin forever).
const FILE_SPIN_ROUNDS: usize = 64;

/// The writer syncing for the group: however its sync ends, the others are woken.
struct Leader<'a>(&'a Shared);

impl Drop for Leader<'_> {
    fn drop(&mut self) {
        lock(&self.0.commit).busy = false;
        self.0.committed.notify_all();
    }
}

/// How far the log is synced, and whether a writer is syncing it.
#[derive(Default)]
struct Commit {
    synced: u64,
    busy: bool,
}

/// The write-ahead log of one server (all its regions share it).
pub struct Wal {
    shared: Arc<Shared>,
    flusher: Option<TaskHandle>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Wal {
    /// Opens the log in `dir`: replays every edit into `on_edit` (oldest segment first),
    /// cuts a torn tail, and starts a new segment for new edits.
    pub fn open(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        opts: WalOptions,
        on_edit: &mut dyn FnMut(WalEdit) -> Result<()>,
    ) -> Result<(Wal, ReplayReport)> {
        fs.create_dir_all(dir)?;
        if let Some(parent) = dir.parent() {
            fs.sync_dir(parent)?;
        }
        let (closed, report) = replay(fs.as_ref(), dir, on_edit)?;
        let next_number = closed.iter().map(|s| s.number + 1).max().unwrap_or(1);
        let (writer, current) = create_segment(fs.as_ref(), dir, next_number, opts.roll_size)?;
        let shared = Arc::new(Shared {
            fs,
            dir: dir.to_path_buf(),
            opts,
            pending: Mutex::new(Pending::default()),
            file: Mutex::new(FileState {
                writer,
                current,
                closed,
                next_number: next_number + 1,
                spare: Vec::new(),
                pin_named: (0, HashMap::new()),
                written_txid: 0,
                synced_txid: 0,
                hard_synced: 0,
                flushed: HashMap::new(),
                forgotten: HashSet::new(),
                shut: false,
                rolling: false,
            }),
            poison: Mutex::new(None),
            poisoned: AtomicBool::new(false),
            file_spinner: AtomicBool::new(false),
            appends: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            fsyncs: AtomicU64::new(0),
            sync_latency: cellar_io::Histogram::default(),
            stop: Mutex::new(false),
            wake: Condvar::new(),
            commit: Mutex::new(Commit::default()),
            committed: Condvar::new(),
            gather: Gather::default(),
        });
        let flusher = {
            let worker = shared.clone();
            shared
                .opts
                .executor
                .spawn(
                    "cellar-wal-flusher",
                    Box::new(move || async_flusher(&worker)),
                )
                .map_err(|e| WalError::InvalidEdit(format!("cannot start the WAL flusher: {e}")))?
        };
        Ok((
            Wal {
                shared,
                flusher: Some(flusher),
            },
            report,
        ))
    }

    /// Logs `edit` and returns once it is as durable as `durability` asks
    /// (USE_DEFAULT counts as SYNC_WAL; SKIP_WAL logs nothing).
    pub fn append(&self, edit: &WalEdit, durability: Durability) -> Result<()> {
        let durability = durability.or(Durability::SyncWal);
        if durability == Durability::SkipWal {
            return Ok(());
        }
        self.shared.check_poison()?;
        let mut record = Vec::with_capacity(edit.encoded_len());
        edit.encode(&mut record)?;
        let hard = durability == Durability::FsyncWal;
        let (txid, hard_logged) = {
            let mut p = lock(&self.shared.pending);
            p.buf.extend_from_slice(&record);
            p.last_txid += 1;
            // The region's name is copied only for its first edit since the last write.
            match p.regions.get_mut(&edit.region) {
                Some(seen) => *seen = (*seen).max(edit.seq_id),
                None => {
                    p.regions.insert(edit.region.clone(), edit.seq_id);
                }
            }
            if hard {
                p.hard += 1;
            }
            (p.last_txid, p.hard)
        };
        if hard {
            self.shared.gather.logged(hard_logged);
        }
        self.shared.appends.fetch_add(1, Ordering::Relaxed);
        match durability {
            Durability::AsyncWal => Ok(()),
            Durability::FsyncWal => self.shared.sync_to(txid, true),
            _ => self.shared.sync_to(txid, false),
        }
    }

    /// Writes and fsyncs everything logged so far.
    pub fn sync(&self) -> Result<()> {
        let txid = lock(&self.shared.pending).last_txid;
        self.shared.sync_to(txid, true)
    }

    /// Records that every edit of `region` up to `seq_id` is in store files, and removes
    /// the segments no longer needed. When that leaves the current segment holding only
    /// flushed edits, it is closed and removed too (as RocksDB drops a memtable's log
    /// once the memtable is flushed): a log the store files cover takes no disk.
    pub fn mark_flushed(&self, region: &str, seq_id: u64) -> Result<()> {
        let obsolete = {
            let mut f = lock(&self.shared.file);
            let e = f.flushed.entry(region.to_string()).or_insert(0);
            *e = (*e).max(seq_id);
            let current_obsolete = !f.shut && !f.current.regions.is_empty() && f.covers(&f.current);
            if current_obsolete && !self.shared.poisoned.load(Ordering::SeqCst) {
                self.shared.roll_locked(&mut f)?
            } else {
                f.take_obsolete()
            }
        };
        self.shared.delete_segments(obsolete)
    }

    /// Regions whose unflushed edits keep log segments on disk, once a closed segment
    /// is kept or the current one holds at least `min_len` bytes (HBase forces flushes of the regions
    /// pinning old logs, `hbase.regionserver.maxlogs`): a region written now and then —
    /// a table created in `hbase:meta`, the large-row census after a compaction — would
    /// otherwise keep a whole segment of everyone else's flushed edits. A region is
    /// named once per segment for the edits it had then: again only once it has newer
    /// ones. Empty when nothing needs doing.
    pub fn regions_pinning(&self, min_len: u64) -> Vec<String> {
        let mut f = lock(&self.shared.file);
        // A closed segment still on disk is pinned already (covered ones go at once).
        if f.shut || (f.closed.is_empty() && f.writer.len() < min_len) {
            return Vec::new();
        }
        let mut pinning: HashMap<String, u64> = HashMap::new();
        for seg in f.closed.iter().chain(std::iter::once(&f.current)) {
            for (region, max) in &seg.regions {
                if !f.flushed_past(region, *max) {
                    let m = pinning.entry(region.clone()).or_insert(0);
                    *m = (*m).max(*max);
                }
            }
        }
        let segment = f.current.number;
        if f.pin_named.0 != segment {
            f.pin_named = (segment, HashMap::new());
        }
        let named = &mut f.pin_named.1;
        let mut out = Vec::new();
        for (region, max) in pinning {
            if named.get(&region).is_none_or(|m| max > *m) {
                named.insert(region.clone(), max);
                out.push(region);
            }
        }
        out.sort();
        out
    }

    /// Forgets a dropped region: its edits never need replaying.
    pub fn forget_region(&self, region: &str) -> Result<()> {
        let obsolete = {
            let mut f = lock(&self.shared.file);
            f.forgotten.insert(region.to_string());
            f.take_obsolete()
        };
        self.shared.delete_segments(obsolete)
    }

    /// Closes the current segment and starts a new one.
    pub fn roll(&self) -> Result<()> {
        let txid = lock(&self.shared.pending).last_txid;
        self.shared.sync_to(txid, true)?;
        let obsolete = self.shared.roll_locked(&mut lock(&self.shared.file))?;
        self.shared.delete_segments(obsolete)
    }

    /// Counters.
    /// The latencies of the log's syncs (write-outs, and fsyncs where asked).
    pub fn sync_latency(&self) -> cellar_io::HistogramSnapshot {
        self.shared.sync_latency.snapshot()
    }

    pub fn stats(&self) -> WalStats {
        let f = lock(&self.shared.file);
        WalStats {
            appends: self.shared.appends.load(Ordering::Relaxed),
            writes: self.shared.writes.load(Ordering::Relaxed),
            fsyncs: self.shared.fsyncs.load(Ordering::Relaxed),
            segments: f.closed.len() + 1,
        }
    }

    /// The reason the log refuses writes, if it does.
    pub fn poisoned(&self) -> Option<String> {
        lock(&self.shared.poison).clone()
    }

    /// Writes out and fsyncs what is buffered, then refuses further edits.
    pub fn close(&self) -> Result<()> {
        let res = if self.shared.poisoned.load(Ordering::SeqCst) {
            Ok(())
        } else {
            self.sync()
        };
        lock(&self.shared.file).shut = true;
        res
    }
}

impl Drop for Wal {
    fn drop(&mut self) {
        *lock(&self.shared.stop) = true;
        self.shared.wake.notify_all();
        if let Some(h) = self.flusher.take() {
            let _ = h.join();
        }
        if !lock(&self.shared.file).shut && !self.shared.poisoned.load(Ordering::SeqCst) {
            let txid = lock(&self.shared.pending).last_txid;
            let _ = self.shared.sync_to(txid, false);
        }
    }
}

fn async_flusher(shared: &Shared) {
    let mut stop = lock(&shared.stop);
    loop {
        if *stop {
            return;
        }
        let (guard, _) = shared
            .wake
            .wait_timeout(stop, shared.opts.async_flush_interval)
            .unwrap_or_else(|e| e.into_inner());
        stop = guard;
        if *stop {
            return;
        }
        drop(stop);
        let txid = lock(&shared.pending).last_txid;
        if !shared.poisoned.load(Ordering::SeqCst) {
            // A failure poisons the log; the next writer reports it.
            let _ = shared.sync_to(txid, false);
        }
        stop = lock(&shared.stop);
    }
}

/// A new segment, its blocks reserved up to `reserve` bytes (the roll size), so that
/// writing it allocates none under the log's lock.
fn create_segment(
    fs: &dyn FileSystem,
    dir: &Path,
    number: u64,
    reserve: u64,
) -> Result<(Box<dyn WritableFile>, SegmentMeta)> {
    let path = segment_path(dir, number);
    let mut writer = fs.create(&path)?;
    writer.append(SEGMENT_MAGIC)?;
    writer.sync()?;
    // A hint: a file system that cannot reserve (or has no room) fails the writes
    // themselves, as without it.
    let _ = writer.preallocate(reserve);
    fs.sync_dir(dir)?;
    Ok((
        writer,
        SegmentMeta {
            number,
            path,
            regions: HashMap::new(),
        },
    ))
}

impl Shared {
    fn check_poison(&self) -> Result<()> {
        if self.poisoned.load(Ordering::SeqCst) {
            let cause = lock(&self.poison).clone().unwrap_or_default();
            return Err(WalError::Poisoned { cause });
        }
        Ok(())
    }

    fn poison(&self, err: &WalError) {
        let mut p = lock(&self.poison);
        if p.is_none() {
            *p = Some(err.to_string());
        }
        self.poisoned.store(true, Ordering::SeqCst);
    }

    /// Makes every edit up to `txid` reach the OS (`hard`: the disk). Writers share a
    /// sync: while one writes out and syncs everything logged so far, the others wait,
    /// and most find their edits synced when it is done, without a sync of their own. A
    /// write to the OS alone costs microseconds: writers take the log file's lock for it
    /// directly (the first in writes out everything pending), as waking a group of
    /// waiters costs more than the write.
    fn sync_to(&self, txid: u64, hard: bool) -> Result<()> {
        if !hard {
            return self.write_out(txid, false).map(|_| ());
        }
        loop {
            let mut c = lock(&self.commit);
            loop {
                self.check_poison()?;
                if c.synced >= txid {
                    return Ok(());
                }
                if !c.busy {
                    break;
                }
                c = self.committed.wait(c).unwrap_or_else(|e| e.into_inner());
            }
            c.busy = true;
            drop(c);
            let leader = Leader(self);
            self.gather.wait_for_group();
            let res = self.write_out_locked(txid, true);
            let mut roll = false;
            if let Ok((done, r)) = &res {
                self.gather.synced(done.hard_synced, done.took);
                let mut c = lock(&self.commit);
                c.synced = c.synced.max(done.synced);
                roll = *r;
            }
            // The group is synced: its writers go on while this one rolls.
            drop(leader);
            if roll {
                self.roll_ahead();
            }
            res?;
        }
    }

    /// The log file's lock for a write-out. It is held for one write to the OS (a few
    /// microseconds): a writer that finds it taken spins for it a while
    /// ([`FILE_SPIN_ROUNDS`]) rather than sleep, as sleeping and being woken cost a system call each and a
    /// core left idle meanwhile. One writer spins at a time; the others sleep at once,
    /// so many writers on few cores do not spin the holder off its core.
    fn lock_file_spinning(&self) -> MutexGuard<'_, FileState> {
        use std::sync::TryLockError;
        let try_lock = || match self.file.try_lock() {
            Ok(g) => Some(g),
            Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        };
        if let Some(g) = try_lock() {
            return g;
        }
        if self
            .file_spinner
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            let mut got = None;
            for _ in 0..FILE_SPIN_ROUNDS {
                for _ in 0..32 {
                    std::hint::spin_loop();
                }
                got = try_lock();
                if got.is_some() {
                    break;
                }
            }
            self.file_spinner.store(false, Ordering::Release);
            if let Some(g) = got {
                return g;
            }
        }
        lock(&self.file)
    }

    /// Writes out everything logged so far (and syncs it when `hard`), unless `txid` is
    /// already that far; how far the log is then synced, and what it took.
    fn write_out(&self, txid: u64, hard: bool) -> Result<Done> {
        let (done, roll) = self.write_out_locked(txid, hard)?;
        if roll {
            // The write is made (and synced where asked): a roll that fails poisons the
            // log for later writes but does not fail this one.
            self.roll_ahead();
        }
        Ok(done)
    }

    /// [`Shared::write_out`] under the log file's lock; whether the caller is to start
    /// the next segment (the current one reached the roll size).
    fn write_out_locked(&self, txid: u64, hard: bool) -> Result<(Done, bool)> {
        let mut f = self.lock_file_spinning();
        self.check_poison()?;
        if f.shut {
            return Err(WalError::Closed);
        }
        let done = if hard { f.synced_txid } else { f.written_txid };
        if done >= txid {
            return Ok((f.done(Duration::ZERO), false));
        }
        let (mut buf, upto, hard_upto, regions) = {
            let mut p = lock(&self.pending);
            let spare = std::mem::take(&mut f.spare);
            (
                std::mem::replace(&mut p.buf, spare),
                p.last_txid,
                p.hard,
                std::mem::take(&mut p.regions),
            )
        };
        let started = self.opts.clock.monotonic();
        let res = (|| -> Result<()> {
            if !buf.is_empty() {
                f.writer.append(&buf)?;
                f.writer.flush()?;
                self.writes.fetch_add(1, Ordering::Relaxed);
            }
            buf.clear();
            if buf.capacity() <= SPARE_LIMIT {
                f.spare = std::mem::take(&mut buf);
            }
            for (region, seq) in regions {
                let e = f.current.regions.entry(region).or_insert(0);
                *e = (*e).max(seq);
            }
            f.written_txid = upto;
            if hard {
                f.writer.sync()?;
                self.fsyncs.fetch_add(1, Ordering::Relaxed);
                f.synced_txid = upto;
                f.hard_synced = hard_upto;
            }
            Ok(())
        })();
        let roll = res.is_ok() && !f.rolling && !f.shut && f.writer.len() >= self.opts.roll_size;
        f.rolling |= roll;
        if let Err(e) = &res {
            self.poison(e);
        }
        let took = self.opts.clock.monotonic().saturating_sub(started);
        self.sync_latency.record(took);
        res.map(|()| (f.done(took), roll))
    }
}

#[path = "roll.rs"]
mod roll;
