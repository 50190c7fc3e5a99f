//! Exclusive row locks with a bounded wait (`hbase.rowlock.wait.duration`). Several rows
//! are always locked in sorted order, so two multi-row operations cannot deadlock. The
//! wait is measured on the region's [`Clock`].
//!
//! Contention is counted per row — how often a writer had to wait for a row, for how
//! long, how often it gave up, and how often a write to it was refused as
//! RegionTooBusy — for the rows that see it most (hot rows: a counter or a
//! checkAndMutate target many clients write at once).

use std::collections::{HashMap, HashSet};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use cellar_io::Clock;

/// The longest a waiter sleeps before it looks at the clock again.
const RECHECK: Duration = Duration::from_millis(10);

/// Rows whose contention is counted at most (the least contended go first).
const COUNTED: usize = 256;

/// How contended one row has been.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Contention {
    /// Lock acquisitions that had to wait, the time they waited (ms), and the waits
    /// that gave up (RowLockTimeout).
    pub waits: u64,
    pub wait_ms: u64,
    pub timeouts: u64,
    /// Writes to the row refused as RegionTooBusy.
    pub busy: u64,
}

/// The locked rows' set hashes with foldhash (seeded per process, as the MemStore's row
/// index): every write looks a row up in it.
type Rows = HashSet<Vec<u8>, foldhash::fast::RandomState>;

/// Row buffers kept for reuse at most, and the longest row kept (rows are short keys;
/// a rare long one is freed).
const SPARE: usize = 64;
const SPARE_BYTES: usize = 256;

/// What the region's lock guards.
#[derive(Debug, Default)]
struct Held {
    rows: Rows,
    /// Buffers of released rows, reused for the next rows locked: a write takes and
    /// gives back a row lock without allocating.
    spare: Vec<Vec<u8>>,
    /// Writers waiting for a row: a release wakes waiters only when there are some (a
    /// condition variable's wake-up is a system call even with nobody waiting).
    waiters: usize,
}

impl Held {
    fn insert(&mut self, row: &[u8]) {
        let mut buf = self.spare.pop().unwrap_or_default();
        buf.clear();
        buf.extend_from_slice(row);
        self.rows.insert(buf);
    }

    fn remove(&mut self, row: &[u8]) {
        if let Some(buf) = self.rows.take(row) {
            if self.spare.len() < SPARE && buf.capacity() <= SPARE_BYTES {
                self.spare.push(buf);
            }
        }
    }
}

/// The set of locked rows of a region.
#[derive(Debug, Default)]
pub struct RowLocks {
    held: Mutex<Held>,
    released: Condvar,
    contention: Mutex<HashMap<Vec<u8>, Contention>>,
}

/// The rows a guard holds: one (a single-row write, the common case, without a vector)
/// or several, sorted and deduplicated.
#[derive(Debug)]
enum Locked<'a> {
    One(&'a [u8]),
    Many(Vec<&'a [u8]>),
}

impl<'a> Locked<'a> {
    fn rows(&self) -> &[&'a [u8]] {
        match self {
            Locked::One(r) => std::slice::from_ref(r),
            Locked::Many(v) => v,
        }
    }
}

/// Holds rows locked until dropped.
#[derive(Debug)]
pub struct RowLockGuard<'a> {
    locks: &'a RowLocks,
    locked: Locked<'a>,
    /// How many of `locked`'s rows are held (all of them once `lock_rows` returns).
    taken: usize,
}

fn lock(m: &Mutex<Held>) -> MutexGuard<'_, Held> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl RowLocks {
    /// Locks every row of `rows` (deduplicated, in sorted order), waiting at most `wait`
    /// of `clock`'s time for each. On a timeout, returns the row that could not be locked.
    pub fn lock_rows<'a>(
        &'a self,
        rows: &[&'a [u8]],
        wait: Duration,
        clock: &dyn Clock,
    ) -> Result<RowLockGuard<'a>, Vec<u8>> {
        let locked = match rows {
            [one] => Locked::One(one),
            _ => {
                let mut sorted = rows.to_vec();
                sorted.sort_unstable();
                sorted.dedup();
                Locked::Many(sorted)
            }
        };
        let mut guard = RowLockGuard {
            locks: self,
            locked,
            taken: 0,
        };
        for i in 0..guard.locked.rows().len() {
            let row = guard.locked.rows()[i];
            // On a timeout the guard releases the rows taken before this one.
            self.lock_one(row, wait, clock)?;
            guard.taken += 1;
        }
        Ok(guard)
    }

    fn lock_one(&self, row: &[u8], wait: Duration, clock: &dyn Clock) -> Result<(), Vec<u8>> {
        let mut held = lock(&self.held);
        if !held.rows.contains(row) {
            held.insert(row);
            return Ok(());
        }
        let started = clock.monotonic();
        let deadline = started + wait;
        held.waiters += 1;
        while held.rows.contains(row) {
            let now = clock.monotonic();
            if now >= deadline {
                held.waiters -= 1;
                drop(held);
                self.count(row, |c| {
                    c.waits += 1;
                    c.timeouts += 1;
                    c.wait_ms += (now - started).as_millis() as u64;
                });
                return Err(row.to_vec());
            }
            held = self
                .released
                .wait_timeout(held, (deadline - now).min(RECHECK))
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        held.waiters -= 1;
        held.insert(row);
        drop(held);
        let ms = (clock.monotonic() - started).as_millis() as u64;
        self.count(row, |c| {
            c.waits += 1;
            c.wait_ms += ms;
        });
        Ok(())
    }

    fn count(&self, row: &[u8], f: impl FnOnce(&mut Contention)) {
        let mut m = self.contention.lock().unwrap_or_else(|e| e.into_inner());
        if !m.contains_key(row) && m.len() >= COUNTED {
            // Room for the newcomer: the least contended row goes.
            if let Some(k) = m
                .iter()
                .min_by_key(|(_, c)| (c.wait_ms, c.waits + c.busy))
                .map(|(k, _)| k.clone())
            {
                m.remove(&k);
            }
        }
        f(m.entry(row.to_vec()).or_default());
    }

    /// Counts a write to `row` refused as RegionTooBusy.
    pub fn note_busy(&self, row: &[u8]) {
        self.count(row, |c| c.busy += 1);
    }

    /// The `n` most contended rows, most waited on first.
    pub fn hot_rows(&self, n: usize) -> Vec<(Vec<u8>, Contention)> {
        let m = self.contention.lock().unwrap_or_else(|e| e.into_inner());
        let mut v: Vec<(Vec<u8>, Contention)> = m.iter().map(|(k, c)| (k.clone(), *c)).collect();
        v.sort_by(|a, b| {
            (b.1.wait_ms, b.1.waits + b.1.busy)
                .cmp(&(a.1.wait_ms, a.1.waits + a.1.busy))
                .then_with(|| a.0.cmp(&b.0))
        });
        v.truncate(n);
        v
    }
}

impl Drop for RowLockGuard<'_> {
    fn drop(&mut self) {
        if self.taken == 0 {
            return;
        }
        let mut held = lock(&self.locks.held);
        for row in &self.locked.rows()[..self.taken] {
            held.remove(row);
        }
        let wake = held.waiters > 0;
        drop(held);
        if wake {
            self.locks.released.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cellar_io::{ManualClock, SystemClock};

    #[test]
    fn contention_is_counted_per_row() {
        let locks = RowLocks::default();
        let clock = ManualClock::new(0);
        let g = locks.lock_rows(&[b"hot"], RECHECK, &clock).unwrap();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                locks
                    .lock_rows(&[b"hot"], Duration::from_secs(1), &clock)
                    .err()
            });
            while !waiter.is_finished() {
                clock.advance(100);
                std::thread::yield_now();
            }
            assert!(waiter.join().unwrap().is_some());
        });
        drop(g);
        locks.note_busy(b"hot");
        let _ = locks.lock_rows(&[b"cold"], RECHECK, &clock).unwrap();
        let hot = locks.hot_rows(10);
        assert_eq!(hot.len(), 1, "an uncontended lock counts nothing: {hot:?}");
        assert_eq!(hot[0].0, b"hot");
        let c = hot[0].1;
        assert_eq!((c.waits, c.timeouts, c.busy), (1, 1, 1));
        assert!(c.wait_ms >= 1000, "{c:?}");
        // Bounded: the least contended go first.
        for i in 0..(COUNTED + 10) {
            locks.note_busy(format!("r{i}").as_bytes());
        }
        assert_eq!(locks.contention.lock().unwrap().len(), COUNTED);
        assert_eq!(locks.hot_rows(1)[0].0, b"hot");
    }

    #[test]
    fn a_waiter_times_out_on_the_clock() {
        let locks = RowLocks::default();
        let clock = ManualClock::new(0);
        let _g = locks.lock_rows(&[b"a"], RECHECK, &clock).unwrap();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                locks
                    .lock_rows(&[b"a"], Duration::from_secs(5), &clock)
                    .err()
            });
            // Manual time stands still: the waiter waits until the clock passes its
            // deadline, however long that takes in real time.
            while !waiter.is_finished() {
                clock.advance(1000);
                std::thread::yield_now();
            }
            assert_eq!(waiter.join().unwrap(), Some(b"a".to_vec()));
        });
        assert!(clock.now_millis() >= 5000);
    }

    #[test]
    fn a_held_row_times_out_others_do_not() {
        let clock = SystemClock;
        let locks = RowLocks::default();
        let g = locks
            .lock_rows(&[b"a", b"b"], Duration::from_millis(10), &clock)
            .unwrap();
        assert_eq!(
            locks
                .lock_rows(&[b"b"], Duration::from_millis(10), &clock)
                .unwrap_err(),
            b"b".to_vec()
        );
        assert!(locks
            .lock_rows(&[b"c"], Duration::from_millis(10), &clock)
            .is_ok());
        drop(g);
        assert!(locks
            .lock_rows(&[b"b", b"a"], Duration::from_millis(10), &clock)
            .is_ok());
    }

    #[test]
    fn writers_of_one_row_take_turns_and_wake_each_other() {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        let locks = RowLocks::default();
        let clock = SystemClock;
        let inside = AtomicBool::new(false);
        let turns = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in 0..4 {
                let (locks, inside, turns, clock) = (&locks, &inside, &turns, &clock);
                s.spawn(move || {
                    for i in 0..500 {
                        // Threads lock rows in both orders: sorted locking cannot deadlock.
                        let rows: [&[u8]; 2] = if (t + i) % 2 == 0 {
                            [b"hot", b"warm"]
                        } else {
                            [b"warm", b"hot"]
                        };
                        let g = if i % 3 == 0 {
                            locks.lock_rows(&rows, Duration::from_secs(30), clock)
                        } else {
                            locks.lock_rows(&rows[..1], Duration::from_secs(30), clock)
                        }
                        .unwrap();
                        // Rows overlap in "hot" or "warm" only as far as the
                        // single-row writers share theirs: track "hot" alone.
                        if g.locked.rows().contains(&&b"hot"[..]) {
                            assert!(!inside.swap(true, Ordering::SeqCst), "two holders");
                            std::thread::yield_now();
                            inside.store(false, Ordering::SeqCst);
                            turns.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        assert!(turns.load(Ordering::Relaxed) > 0);
        let held = lock(&locks.held);
        assert!(held.rows.is_empty() && held.waiters == 0);
        assert!(held.spare.len() <= SPARE);
    }

    #[test]
    fn released_rows_leave_their_buffers_for_the_next_lock() {
        let locks = RowLocks::default();
        let clock = SystemClock;
        for i in 0..1000u32 {
            let row = i.to_be_bytes();
            drop(locks.lock_rows(&[&row[..]], RECHECK, &clock).unwrap());
        }
        assert_eq!(lock(&locks.held).spare.len(), 1, "one buffer went round");
        // A long row's buffer is not kept.
        let long = vec![7u8; SPARE_BYTES * 4];
        drop(locks.lock_rows(&[&long[..]], RECHECK, &clock).unwrap());
        let held = lock(&locks.held);
        assert!(held.rows.is_empty());
        assert!(held.spare.iter().all(|b| b.capacity() <= SPARE_BYTES));
    }

    /// A release wakes a waiter at once; were the wake-up lost, the waiter would find
    /// the row free only at its next recheck (up to 10 ms later).
    #[test]
    #[allow(clippy::disallowed_methods)]
    fn a_release_wakes_the_waiter() {
        use std::time::Instant;
        let locks = RowLocks::default();
        let clock = SystemClock;
        let mut lags = Vec::new();
        for _ in 0..21 {
            let g = locks.lock_rows(&[b"r"], RECHECK, &clock).unwrap();
            let released = std::thread::scope(|s| {
                let waiter = s.spawn(|| {
                    let g = locks
                        .lock_rows(&[b"r"], Duration::from_secs(30), &clock)
                        .unwrap();
                    let at = Instant::now();
                    drop(g);
                    at
                });
                while lock(&locks.held).waiters == 0 {
                    std::thread::yield_now();
                }
                // Past the waiter's first recheck, so that only a wake-up is quick.
                std::thread::sleep(RECHECK + Duration::from_millis(3));
                let released = Instant::now();
                drop(g);
                let acquired = waiter.join().unwrap();
                acquired.saturating_duration_since(released)
            });
            lags.push(released);
        }
        lags.sort();
        assert!(lags[10] < Duration::from_micros(2500), "{lags:?}");
    }

    #[test]
    fn a_timeout_releases_the_rows_taken_before_it() {
        let clock = SystemClock;
        let locks = RowLocks::default();
        let g = locks
            .lock_rows(&[b"b"], Duration::from_millis(10), &clock)
            .unwrap();
        // "a" is taken first (sorted), then "b" times out: "a" must be free again.
        assert_eq!(
            locks
                .lock_rows(&[b"b", b"a"], Duration::from_millis(10), &clock)
                .unwrap_err(),
            b"b".to_vec()
        );
        assert!(locks
            .lock_rows(&[b"a"], Duration::from_millis(1), &clock)
            .is_ok());
        drop(g);
        assert!(lock(&locks.held).rows.is_empty());
    }
}
