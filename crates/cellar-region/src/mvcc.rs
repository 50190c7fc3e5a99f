//! Multi-version concurrency control: every write takes the region's next sequence id
//! (which doubles as its MVCC write number); the read point advances only over
//! completed writes, in order, so a reader never sees half of a mutation. Open readers
//! register their read points, so flushes and compactions know the smallest one
//! (HBase's `getSmallestReadPoint`) and keep every cell such a reader can still see.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

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

/// The read points of a region's open readers (scanners and Gets), with how many
/// readers hold each.
#[derive(Debug, Default)]
pub struct ReadPoints {
    open: Mutex<BTreeMap<u64, usize>>,
}

/// A reader's registration; dropping it ends the reader.
#[derive(Debug)]
pub struct ReadPointGuard {
    points: Arc<ReadPoints>,
    read_point: u64,
}

impl ReadPointGuard {
    pub fn read_point(&self) -> u64 {
        self.read_point
    }
}

impl Drop for ReadPointGuard {
    fn drop(&mut self) {
        let mut open = lock(&self.points.open);
        if let Some(n) = open.get_mut(&self.read_point) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.read_point);
            }
        }
    }
}

impl ReadPoints {
    /// Takes the current read point for a new reader and registers it. Both happen under
    /// one lock with [`ReadPoints::smallest`], so no rewrite can miss a reader starting.
    pub fn open(self: &Arc<Self>, mvcc: &Mvcc) -> ReadPointGuard {
        let mut open = lock(&self.open);
        let read_point = mvcc.read_point();
        *open.entry(read_point).or_insert(0) += 1;
        ReadPointGuard {
            points: self.clone(),
            read_point,
        }
    }

    /// The smallest read point of any open reader, or of a reader starting now.
    pub fn smallest(&self, mvcc: &Mvcc) -> u64 {
        let open = lock(&self.open);
        let now = mvcc.read_point();
        open.keys().next().map_or(now, |first| (*first).min(now))
    }

    /// Readers open now.
    pub fn readers(&self) -> usize {
        lock(&self.open).values().sum()
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
