//! Multi-version concurrency control: every write takes the region's next sequence id
//! (which doubles as its MVCC write number); the read point advances only over
//! completed writes, in order, so a reader never sees half of a mutation. Open readers
//! register their read points, so flushes and compactions know the smallest one
//! (HBase's `getSmallestReadPoint`) and keep every cell such a reader can still see.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::Thread;

use crate::counter::{thread_shard, SHARDS};

#[derive(Debug)]
struct State {
    next: u64,
    pending: BTreeSet<u64>,
    read_point: u64,
    /// Writers waiting for the read point to reach their write number, each woken
    /// alone when it does (a shared condition woke every waiter at every completion:
    /// with many writers, most wake-ups found the read point still short).
    waiters: Vec<(u64, Thread)>,
}

impl State {
    /// Raises the read point to `rp`; returns the waiters it satisfies.
    fn advance(&mut self, rp: u64, visible: &AtomicU64) -> Vec<Thread> {
        if rp <= self.read_point {
            return Vec::new();
        }
        self.read_point = rp;
        visible.store(rp, Ordering::Release);
        let mut woken = Vec::new();
        self.waiters.retain(|(seq, t)| {
            if *seq <= rp {
                woken.push(t.clone());
                false
            } else {
                true
            }
        });
        woken
    }
}

/// How often a writer woken by a shared fsync, waiting for earlier writes of its group,
/// gives up its core before it parks ([`Mvcc::complete_after_shared_sync`]).
const YIELDS: usize = 8;

/// Write numbers and the read point of one region.
#[derive(Debug)]
pub struct Mvcc {
    state: Mutex<State>,
    /// The read point, readable without the lock (set under it, after the writes it
    /// covers are applied).
    visible: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Mvcc {
    /// Starts after `last_seq_id` (the highest sequence id already used).
    pub fn new(last_seq_id: u64) -> Mvcc {
        Mvcc {
            state: Mutex::new(State {
                next: last_seq_id + 1,
                pending: BTreeSet::new(),
                read_point: last_seq_id,
                waiters: Vec::new(),
            }),
            visible: AtomicU64::new(last_seq_id),
        }
    }

    /// Takes the next write number.
    pub fn begin(&self) -> u64 {
        let mut s = lock(&self.state);
        let n = s.next;
        s.next += 1;
        s.pending.insert(n);
        n
    }

    /// Marks `seq` complete (applied, or abandoned) and waits until the read point covers it.
    pub fn complete(&self, seq: u64) {
        self.finish(seq, 0);
    }

    /// [`Mvcc::complete`] for a write that waited for a shared fsync. The group that
    /// fsync woke completes in any order, its earlier members runnable on this core,
    /// so a writer ahead of them gives up its core a few times before it parks: that
    /// lets them run, and is cheaper than a park and its wake-up. (A writer that did
    /// not wait most likely waits for one running on the other core; yielding would
    /// hand this core to an unrelated writer for a whole time slice, so it parks.)
    pub fn complete_after_shared_sync(&self, seq: u64) {
        self.finish(seq, YIELDS);
    }

    fn finish(&self, seq: u64, yields: usize) {
        let mut s = lock(&self.state);
        s.pending.remove(&seq);
        let rp = match s.pending.first() {
            Some(first) => first - 1,
            None => s.next - 1,
        };
        let woken = s.advance(rp, &self.visible);
        drop(s);
        for t in woken {
            t.unpark();
        }
        for _ in 0..yields {
            if self.visible.load(Ordering::Acquire) >= seq {
                return;
            }
            std::thread::yield_now();
        }
        let mut s = lock(&self.state);
        if s.read_point >= seq {
            return;
        }
        s.waiters.push((seq, std::thread::current()));
        drop(s);
        // Parks until a completion raises the read point to `seq` (and unparks this
        // thread); a wake-up for any other reason finds it short and parks again.
        while self.visible.load(Ordering::Acquire) < seq {
            std::thread::park();
        }
    }

    /// Highest write number whose write and all earlier ones are complete.
    pub fn read_point(&self) -> u64 {
        self.visible.load(Ordering::Acquire)
    }

    /// Highest write number handed out.
    pub fn last_assigned(&self) -> u64 {
        lock(&self.state).next - 1
    }

    /// Raises the next write number above `seq` (after replaying edits).
    pub fn advance_to(&self, seq: u64) {
        let mut s = lock(&self.state);
        let mut woken = Vec::new();
        if s.next <= seq {
            s.next = seq + 1;
            if s.pending.is_empty() {
                woken = s.advance(seq, &self.visible);
            }
        }
        drop(s);
        for t in woken {
            t.unpark();
        }
    }
}

/// One shard of a region's reader registry (split by thread, `crate::counter`: readers
/// on different threads take different locks; with one lock, every Get of a region
/// took it twice and moved its line between the cores): read points with how many
/// readers hold each, in ascending order, on a cache line of its own. A vector keeps
/// its room: a Get registering and leaving allocates nothing (a map allocated a node
/// for the first reader and freed it with the last, on every Get of an idle region).
#[derive(Debug, Default)]
#[repr(align(128))]
struct Shard(Mutex<Vec<(u64, usize)>>);

/// The read points of a region's open readers (scanners and Gets), with how many
/// readers hold each.
#[derive(Debug, Default)]
pub struct ReadPoints {
    shards: [Shard; SHARDS],
}

/// A reader's registration; dropping it ends the reader.
#[derive(Debug)]
pub struct ReadPointGuard {
    points: Arc<ReadPoints>,
    read_point: u64,
    /// The shard it is registered in (a scanner may end on another thread).
    shard: usize,
}

impl ReadPointGuard {
    pub fn read_point(&self) -> u64 {
        self.read_point
    }
}

impl Drop for ReadPointGuard {
    fn drop(&mut self) {
        let mut open = lock(&self.points.shards[self.shard].0);
        if let Ok(i) = open.binary_search_by_key(&self.read_point, |e| e.0) {
            open[i].1 -= 1;
            if open[i].1 == 0 {
                open.remove(i);
            }
        }
    }
}

impl ReadPoints {
    /// Takes the current read point for a new reader and registers it, both under its
    /// shard's lock; [`ReadPoints::smallest`] holds every shard's lock while it reads
    /// the read point, so no rewrite can miss a reader starting.
    pub fn open(self: &Arc<Self>, mvcc: &Mvcc) -> ReadPointGuard {
        let shard = thread_shard();
        let mut open = lock(&self.shards[shard].0);
        let read_point = mvcc.read_point();
        // Read points only rise, so this is the last entry or one after it.
        match open.binary_search_by_key(&read_point, |e| e.0) {
            Ok(i) => open[i].1 += 1,
            Err(i) => open.insert(i, (read_point, 1)),
        }
        drop(open);
        ReadPointGuard {
            points: self.clone(),
            read_point,
            shard,
        }
    }

    /// The smallest read point of any open reader, or of a reader starting now.
    pub fn smallest(&self, mvcc: &Mvcc) -> u64 {
        // Every shard locked, always in the same order (a reader holds one at a time):
        // a reader registered before is seen, one registering after reads a read
        // point at or past `now`.
        let open: Vec<_> = self.shards.iter().map(|s| lock(&s.0)).collect();
        let now = mvcc.read_point();
        open.iter()
            .filter_map(|o| o.first().map(|e| e.0))
            .fold(now, u64::min)
    }

    /// Readers open now.
    pub fn readers(&self) -> usize {
        let open: Vec<_> = self.shards.iter().map(|s| lock(&s.0)).collect();
        open.iter()
            .map(|o| o.iter().map(|e| e.1).sum::<usize>())
            .sum()
    }
}

#[cfg(test)]
// Drives a real thread against the read points.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    #[test]
    fn smallest_read_point_follows_open_readers() {
        let m = Mvcc::new(5);
        let points = Arc::new(ReadPoints::default());
        let a = points.open(&m);
        let s = m.begin();
        m.complete(s);
        let b = points.open(&m);
        let b2 = points.open(&m);
        assert_eq!((a.read_point(), b.read_point()), (5, 6));
        assert_eq!(points.smallest(&m), 5);
        drop(a);
        assert_eq!(points.smallest(&m), 6);
        drop(b);
        assert_eq!(points.readers(), 1);
        drop(b2);
        let s = m.begin();
        assert_eq!(points.smallest(&m), 6, "a write in progress is above it");
        m.complete(s);
        assert_eq!(points.smallest(&m), 7);
    }

    /// Readers registered from many threads: the smallest is the least of them all,
    /// and follows them as they leave.
    #[test]
    fn smallest_sees_the_readers_of_every_thread() {
        let m = Arc::new(Mvcc::new(5));
        let points = Arc::new(ReadPoints::default());
        let mut guards = Vec::new();
        for _ in 0..12 {
            let s = m.begin();
            m.complete(s);
            let (p, m2) = (points.clone(), m.clone());
            guards.push(std::thread::spawn(move || p.open(&m2)).join().unwrap());
        }
        assert_eq!(points.readers(), 12);
        let rps: Vec<u64> = guards.iter().map(|g| g.read_point()).collect();
        assert_eq!(rps, (6..18).collect::<Vec<_>>());
        // Leave from the middle out: the smallest is always the least still open.
        while !guards.is_empty() {
            let want = guards.iter().map(|g| g.read_point()).min().unwrap();
            assert_eq!(points.smallest(&m), want);
            guards.remove(guards.len() / 2);
        }
        assert_eq!(points.smallest(&m), 17);
        assert_eq!(points.readers(), 0);
    }

    /// A reader that ends on another thread than it started on (a scanner handed
    /// between threads) leaves its thread's shard as it found it.
    #[test]
    fn a_reader_ends_on_any_thread() {
        let m = Mvcc::new(3);
        let points = Arc::new(ReadPoints::default());
        let guards: Vec<ReadPointGuard> = (0..SHARDS + 3)
            .map(|_| {
                let p = points.clone();
                let m = Mvcc::new(3);
                std::thread::spawn(move || p.open(&m)).join().unwrap()
            })
            .collect();
        let shards: std::collections::BTreeSet<usize> = guards.iter().map(|g| g.shard).collect();
        assert!(shards.len() > 1, "{shards:?}");
        let s = m.begin();
        m.complete(s);
        assert_eq!(points.readers(), SHARDS + 3);
        assert_eq!(points.smallest(&m), 3);
        std::thread::spawn(move || drop(guards)).join().unwrap();
        assert_eq!(points.readers(), 0);
        assert_eq!(points.smallest(&m), 4);
        assert!(points.shards.iter().all(|s| lock(&s.0).is_empty()));
    }

    /// While writes advance the read point and readers come and go on four threads,
    /// the smallest read point taken at any moment is never above a reader open then.
    #[test]
    fn smallest_never_passes_an_open_reader() {
        let m = Arc::new(Mvcc::new(0));
        let points = Arc::new(ReadPoints::default());
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (m, stop) = (m.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let s = m.begin();
                    m.complete(s);
                }
            })
        };
        let readers: Vec<_> = (0..4)
            .map(|_| {
                let (m, points) = (m.clone(), points.clone());
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        let g = points.open(&m);
                        assert!(points.smallest(&m) <= g.read_point());
                    }
                })
            })
            .collect();
        for r in readers {
            r.join().unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        writer.join().unwrap();
        assert_eq!(points.readers(), 0);
    }

    /// Many writers completing out of order: every one returns with the read point at
    /// or past its write, none is left parked, and the read point ends at the last.
    #[test]
    fn writers_after_a_shared_sync_wait_for_earlier_ones_past_their_yields() {
        let m = Arc::new(Mvcc::new(0));
        // A group of writes, completed latest first: each yields, then parks until
        // the earliest completes, and none returns before the read point covers it.
        let seqs: Vec<u64> = (0..8).map(|_| m.begin()).collect();
        let waiters: Vec<_> = seqs[1..]
            .iter()
            .rev()
            .map(|&seq| {
                let m = m.clone();
                std::thread::spawn(move || {
                    m.complete_after_shared_sync(seq);
                    assert!(m.read_point() >= seq);
                })
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(m.read_point(), 0, "the first write is not complete");
        m.complete_after_shared_sync(seqs[0]);
        for w in waiters {
            w.join().unwrap();
        }
        assert_eq!(m.read_point(), 8);
        // A waiter that returned during its yields left nothing behind.
        assert!(lock(&m.state).waiters.is_empty());
    }

    #[test]
    fn many_writers_each_wake_once_covered() {
        let m = Arc::new(Mvcc::new(0));
        let threads: Vec<_> = (0..16)
            .map(|t| {
                let m = m.clone();
                std::thread::spawn(move || {
                    for i in 0..2_000u64 {
                        let seq = m.begin();
                        if (i + t) % 7 == 0 {
                            std::thread::yield_now();
                        }
                        m.complete(seq);
                        assert!(m.read_point() >= seq);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(m.read_point(), 32_000);
        assert_eq!(m.last_assigned(), 32_000);
    }

    #[test]
    fn read_point_waits_for_earlier_writes() {
        let m = Arc::new(Mvcc::new(10));
        let a = m.begin();
        let b = m.begin();
        assert_eq!((a, b), (11, 12));
        let m2 = m.clone();
        let t = std::thread::spawn(move || m2.complete(b));
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(m.read_point(), 10, "b is done but a is not");
        m.complete(a);
        t.join().unwrap();
        assert_eq!(m.read_point(), 12);
    }
}
