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
/// index): every write looks a row up in it three or four times.
type Held = HashSet<Vec<u8>, foldhash::fast::RandomState>;

/// The set of locked rows of a region.
#[derive(Debug, Default)]
pub struct RowLocks {
    held: Mutex<Held>,
    released: Condvar,
    contention: Mutex<HashMap<Vec<u8>, Contention>>,
}

/// Holds rows locked until dropped.
#[derive(Debug)]
pub struct RowLockGuard<'a> {
    locks: &'a RowLocks,
    rows: Vec<Vec<u8>>,
}

fn lock(m: &Mutex<Held>) -> MutexGuard<'_, Held> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl RowLocks {
    /// Locks every row of `rows` (deduplicated, in sorted order), waiting at most `wait`
    /// of `clock`'s time for each. On a timeout, returns the row that could not be locked.
    pub fn lock_rows(
        &self,
        rows: &[&[u8]],
        wait: Duration,
        clock: &dyn Clock,
    ) -> Result<RowLockGuard<'_>, Vec<u8>> {
        let mut sorted: Vec<Vec<u8>> = rows.iter().map(|r| r.to_vec()).collect();
        sorted.sort();
        sorted.dedup();
        let mut guard = RowLockGuard {
            locks: self,
            rows: Vec::with_capacity(sorted.len()),
        };
        for row in sorted {
            let started = clock.monotonic();
            let deadline = started + wait;
            let mut held = lock(&self.held);
            let waited = held.contains(&row);
            while held.contains(&row) {
                let now = clock.monotonic();
                if now >= deadline {
                    drop(held);
                    self.count(&row, |c| {
                        c.waits += 1;
                        c.timeouts += 1;
                        c.wait_ms += (now - started).as_millis() as u64;
                    });
                    return Err(row);
                }
                held = self
                    .released
                    .wait_timeout(held, (deadline - now).min(RECHECK))
                    .map(|(g, _)| g)
                    .unwrap_or_else(|e| e.into_inner().0);
            }
            held.insert(row.clone());
            drop(held);
            if waited {
                let ms = (clock.monotonic() - started).as_millis() as u64;
                self.count(&row, |c| {
                    c.waits += 1;
                    c.wait_ms += ms;
                });
            }
            guard.rows.push(row);
        }
        Ok(guard)
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
        let mut held = lock(&self.locks.held);
        for row in &self.rows {
            held.remove(row);
        }
        drop(held);
        self.locks.released.notify_all();
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
}
