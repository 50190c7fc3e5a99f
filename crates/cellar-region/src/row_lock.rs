//! Exclusive row locks with a bounded wait (`hbase.rowlock.wait.duration`). Several rows
//! are always locked in sorted order, so two multi-row operations cannot deadlock. The
//! wait is measured on the region's [`Clock`].

use std::collections::HashSet;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use cellar_io::Clock;

/// The longest a waiter sleeps before it looks at the clock again.
const RECHECK: Duration = Duration::from_millis(10);

/// The set of locked rows of a region.
#[derive(Debug, Default)]
pub struct RowLocks {
    held: Mutex<HashSet<Vec<u8>>>,
    released: Condvar,
}

/// Holds rows locked until dropped.
#[derive(Debug)]
pub struct RowLockGuard<'a> {
    locks: &'a RowLocks,
    rows: Vec<Vec<u8>>,
}

fn lock(m: &Mutex<HashSet<Vec<u8>>>) -> MutexGuard<'_, HashSet<Vec<u8>>> {
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
            let deadline = clock.monotonic() + wait;
            let mut held = lock(&self.held);
            while held.contains(&row) {
                let now = clock.monotonic();
                if now >= deadline {
                    return Err(row);
                }
                held = self
                    .released
                    .wait_timeout(held, (deadline - now).min(RECHECK))
                    .map(|(g, _)| g)
                    .unwrap_or_else(|e| e.into_inner().0);
            }
            held.insert(row.clone());
            guard.rows.push(row);
        }
        Ok(guard)
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
