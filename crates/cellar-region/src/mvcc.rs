//! Multi-version concurrency control: every write takes the region's next sequence id
//! (which doubles as its MVCC write number); the read point advances only over
//! completed writes, in order, so a reader never sees half of a mutation.

use std::collections::BTreeSet;
use std::sync::{Condvar, Mutex, MutexGuard};

#[derive(Debug)]
struct State {
    next: u64,
    pending: BTreeSet<u64>,
    read_point: u64,
}

/// Write numbers and the read point of one region.
#[derive(Debug)]
pub struct Mvcc {
    state: Mutex<State>,
    advanced: Condvar,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
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
            }),
            advanced: Condvar::new(),
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
        let mut s = lock(&self.state);
        s.pending.remove(&seq);
        let rp = match s.pending.first() {
            Some(first) => first - 1,
            None => s.next - 1,
        };
        if rp > s.read_point {
            s.read_point = rp;
            self.advanced.notify_all();
        }
        while s.read_point < seq {
            s = self.advanced.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Highest write number whose write and all earlier ones are complete.
    pub fn read_point(&self) -> u64 {
        lock(&self.state).read_point
    }

    /// Highest write number handed out.
    pub fn last_assigned(&self) -> u64 {
        lock(&self.state).next - 1
    }

    /// Raises the next write number above `seq` (after replaying edits).
    pub fn advance_to(&self, seq: u64) {
        let mut s = lock(&self.state);
        if s.next <= seq {
            s.next = seq + 1;
            if s.pending.is_empty() {
                s.read_point = seq;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

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
