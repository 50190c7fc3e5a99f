//! Exclusive row locks with a bounded wait (`hbase.rowlock.wait.duration`). Several rows
//! are always locked in sorted order, so two multi-row operations cannot deadlock.

use std::collections::HashSet;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

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
    /// for each. On a timeout, returns the row that could not be locked.
    pub fn lock_rows(&self, rows: &[&[u8]], wait: Duration) -> Result<RowLockGuard<'_>, Vec<u8>> {
        let mut sorted: Vec<Vec<u8>> = rows.iter().map(|r| r.to_vec()).collect();
        sorted.sort();
        sorted.dedup();
        let mut guard = RowLockGuard {
            locks: self,
            rows: Vec::with_capacity(sorted.len()),
        };
        for row in sorted {
            let deadline = Instant::now() + wait;
            let mut held = lock(&self.held);
            while held.contains(&row) {
                let now = Instant::now();
                if now >= deadline {
                    return Err(row);
                }
                held = self
                    .released
                    .wait_timeout(held, deadline - now)
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

    #[test]
    fn a_held_row_times_out_others_do_not() {
        let locks = RowLocks::default();
        let g = locks
            .lock_rows(&[b"a", b"b"], Duration::from_millis(10))
            .unwrap();
        assert_eq!(
            locks
                .lock_rows(&[b"b"], Duration::from_millis(10))
                .unwrap_err(),
            b"b".to_vec()
        );
        assert!(locks.lock_rows(&[b"c"], Duration::from_millis(10)).is_ok());
        drop(g);
        assert!(locks
            .lock_rows(&[b"b", b"a"], Duration::from_millis(10))
            .is_ok());
    }
}
