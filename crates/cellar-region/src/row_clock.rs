//! Server timestamps that never fall behind a row's own counters. HBase 2.x stamps an
//! increment's or append's new cell `max(now, old + 1)`, so a counter updated several
//! times within one millisecond runs ahead of the clock; a put or delete the server
//! then stamps with the plain clock lands *behind* the counter and is masked by it
//! (happybase's `counter_set` right after `counter_inc` is lost). A region remembers,
//! per row, how far its increments and appends ran ahead, and stamps that row's
//! server-timestamped mutations no earlier; a row leaves the record once the clock has
//! caught up. Rows no counter ran ahead on pay one relaxed load.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use cellar_types::Cell;

/// Rows recorded before a write sweeps out those the clock has caught up with.
const SWEEP_AT: usize = 1024;

#[derive(Debug, Default)]
pub(crate) struct RowClock {
    ahead: Mutex<HashMap<Vec<u8>, i64>>,
    any: AtomicBool,
}

impl RowClock {
    /// The time to stamp `row`'s server-timestamped cells with: the clock, or the
    /// newest timestamp an increment or append gave the row when that is later.
    /// Called with the row locked.
    pub(crate) fn now(&self, row: &[u8], clock_now: i64) -> i64 {
        if !self.any.load(Ordering::Relaxed) {
            return clock_now;
        }
        let mut ahead = self.ahead.lock().unwrap_or_else(|p| p.into_inner());
        // A row the clock has caught up with is forgotten when it writes again; the
        // others in a sweep once the record grows, so a write never walks it all.
        let now = match ahead.get(row) {
            Some(ts) if *ts > clock_now => *ts,
            Some(_) => {
                ahead.remove(row);
                clock_now
            }
            None => clock_now,
        };
        if ahead.len() > SWEEP_AT {
            ahead.retain(|_, ts| *ts > clock_now);
        }
        if ahead.is_empty() {
            self.any.store(false, Ordering::Relaxed);
        }
        now
    }

    /// Records the cells an increment or append of `row` wrote that run ahead of the
    /// clock. Called with the row locked.
    pub(crate) fn note(&self, row: &[u8], written: &[Cell], clock_now: i64) {
        let Some(newest) = written.iter().map(Cell::timestamp).max() else {
            return;
        };
        if newest <= clock_now {
            return;
        }
        let mut ahead = self.ahead.lock().unwrap_or_else(|p| p.into_inner());
        let ts = ahead.entry(row.to_vec()).or_insert(newest);
        *ts = (*ts).max(newest);
        self.any.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(ts: i64) -> Cell {
        Cell::put(&b"r"[..], &b"f"[..], &b"q"[..], ts, &b"v"[..]).unwrap()
    }

    #[test]
    fn rows_ahead_of_the_clock_keep_their_time_until_it_catches_up() {
        let c = RowClock::default();
        assert_eq!(c.now(b"r", 100), 100);
        c.note(b"r", &[cell(100)], 100);
        assert_eq!(c.now(b"r", 100), 100, "not ahead: nothing recorded");
        c.note(b"r", &[cell(102), cell(101)], 100);
        assert_eq!(c.now(b"r", 100), 102);
        assert_eq!(c.now(b"other", 100), 100);
        assert_eq!(c.now(b"r", 101), 102);
        assert_eq!(c.now(b"r", 103), 103);
        assert!(!c.any.load(Ordering::Relaxed), "caught up: forgotten");
    }
}
