//! Counters and registries that many threads touch on every read, split by thread so
//! that two cores do not pass one cache line back and forth: each thread is dealt a
//! shard when it first asks, and a total sums the shards.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// How many shards a split counter or registry has.
pub(crate) const SHARDS: usize = 8;

/// This thread's shard: threads are dealt shards in turn as they first ask.
pub(crate) fn thread_shard() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SHARD: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    SHARD.with(|s| *s)
}

/// One shard's count, on a cache line of its own.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Slot(AtomicU64);

/// A count that threads add to in their own shard (a region's read requests: one
/// shared counter was a write to one line from both cores on every Get).
#[derive(Debug, Default)]
pub struct SplitCounter {
    slots: [Slot; SHARDS],
}

impl SplitCounter {
    /// Adds `n` in this thread's shard.
    #[inline]
    pub fn add(&self, n: u64) {
        self.slots[thread_shard()].0.fetch_add(n, Ordering::Relaxed);
    }

    /// The total of every shard.
    pub fn get(&self) -> u64 {
        self.slots
            .iter()
            .map(|s| s.0.load(Ordering::Relaxed))
            .fold(0, u64::wrapping_add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds from many threads (more than shards) all count.
    #[test]
    fn adds_from_every_thread_count() {
        let c = SplitCounter::default();
        std::thread::scope(|s| {
            for _ in 0..(SHARDS * 2 + 3) {
                s.spawn(|| {
                    for _ in 0..1000 {
                        c.add(1);
                    }
                });
            }
        });
        assert_eq!(c.get(), (SHARDS as u64 * 2 + 3) * 1000);
        c.add(5);
        assert_eq!(c.get(), (SHARDS as u64 * 2 + 3) * 1000 + 5);
    }
}
