//! Gathering a group before a shared fsync. Writers that wait for an fsync fall into
//! two alternating groups when the leader syncs at once: those whose edits the running
//! fsync covers, and those who logged during it. Each writer then waits for two
//! fsyncs. Instead, a leader waits briefly until as many FSYNC_WAL edits are logged as
//! took part in the last round (the last group and the writers that queued behind it),
//! so one fsync covers all of them. The wait is bounded by half of the last fsync's
//! duration and ends as soon as the group is complete; a lone writer never waits.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// The longest a leader waits for its group, however slow the disk.
const MAX_PATIENCE: Duration = Duration::from_millis(1);

#[derive(Default)]
struct Plan {
    /// FSYNC_WAL edits covered by the last fsync (a running count).
    covered: u64,
    /// How many edits the next fsync should gather past `covered`.
    expected: u64,
    /// How long the next leader may wait for them.
    patience: Duration,
}

/// See the module documentation.
#[derive(Default)]
pub(crate) struct Gather {
    /// FSYNC_WAL edits logged so far (a running count).
    logged: AtomicU64,
    /// The count a leader waits for; 0 while nobody waits.
    target: AtomicU64,
    plan: Mutex<Plan>,
    arrived: Condvar,
}

fn lock(m: &Mutex<Plan>) -> MutexGuard<'_, Plan> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Gather {
    /// Records that the FSYNC_WAL edits logged now number `count`; wakes a leader whose
    /// group is then complete. Called in log order.
    pub(crate) fn logged(&self, count: u64) {
        self.logged.store(count, Ordering::SeqCst);
        let target = self.target.load(Ordering::SeqCst);
        if target != 0 && count >= target {
            let _plan = lock(&self.plan);
            self.arrived.notify_one();
        }
    }

    /// Waits, as the leader of the next fsync, until the group is complete or the
    /// patience runs out.
    pub(crate) fn wait_for_group(&self) {
        let plan = lock(&self.plan);
        if plan.expected <= 1 || plan.patience.is_zero() {
            return;
        }
        let target = plan.covered + plan.expected;
        if self.logged.load(Ordering::SeqCst) >= target {
            return;
        }
        self.target.store(target, Ordering::SeqCst);
        let patience = plan.patience;
        let (plan, _) = self
            .arrived
            .wait_timeout_while(plan, patience, |_| {
                self.logged.load(Ordering::SeqCst) < target
            })
            .unwrap_or_else(|e| e.into_inner());
        self.target.store(0, Ordering::SeqCst);
        drop(plan);
    }

    /// Learns from an fsync that covered the first `covered` FSYNC_WAL edits and took
    /// `took`: the next group should hold this one and those that queued behind it.
    pub(crate) fn synced(&self, covered: u64, took: Duration) {
        let mut plan = lock(&self.plan);
        if covered <= plan.covered {
            return;
        }
        let group = covered - plan.covered;
        let queued = self.logged.load(Ordering::SeqCst).saturating_sub(covered);
        plan.covered = covered;
        plan.expected = group + queued;
        plan.patience = (took / 2).min(MAX_PATIENCE);
    }

    /// How many edits the next fsync will wait for (tests).
    #[cfg(test)]
    pub(crate) fn expected(&self) -> u64 {
        lock(&self.plan).expected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Logs FSYNC_WAL edits `from..=to`.
    fn log(g: &Gather, from: u64, to: u64) {
        for n in from..=to {
            g.logged(n);
        }
    }

    #[test]
    fn a_lone_writer_never_waits() {
        let g = Gather::default();
        g.logged(1);
        g.synced(1, Duration::from_millis(10));
        assert_eq!(g.expected(), 1);
        g.logged(2);
        // Would block for the patience (1 ms) if it waited; returns at once.
        g.wait_for_group();
        g.synced(2, Duration::from_millis(10));
        assert_eq!(g.expected(), 1);
    }

    #[test]
    fn the_next_group_holds_this_one_and_those_queued_behind_it() {
        let g = Gather::default();
        log(&g, 1, 8);
        g.synced(5, Duration::from_millis(4));
        // Five were synced, three queued meanwhile: eight take part.
        assert_eq!(g.expected(), 8);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| g.wait_for_group());
            log(&g, 9, 13);
            waiter.join().map_err(|_| "leader panicked").unwrap();
        });
        g.synced(13, Duration::from_millis(4));
        assert_eq!(g.expected(), 8);
    }

    #[test]
    fn an_incomplete_group_waits_no_longer_than_the_patience() {
        let g = Gather::default();
        log(&g, 1, 4);
        g.synced(4, Duration::from_micros(400));
        // Nobody else comes: the leader gives up after 200 µs and the plan shrinks.
        g.logged(5);
        g.wait_for_group();
        g.synced(5, Duration::from_micros(400));
        assert_eq!(g.expected(), 1);
    }
}
