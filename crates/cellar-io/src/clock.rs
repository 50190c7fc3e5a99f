//! Time as the engine sees it: the system clock, or a manual clock tests move by hand.

use std::sync::atomic::{AtomicI64, Ordering};

/// A source of wall-clock time in milliseconds since the Unix epoch.
pub trait Clock: Send + Sync + std::fmt::Debug {
    fn now_millis(&self) -> i64;
}

/// The operating system's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_millis(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    }
}

/// A clock that only moves when told to.
#[derive(Debug, Default)]
pub struct ManualClock {
    now: AtomicI64,
}

impl ManualClock {
    pub fn new(start_millis: i64) -> ManualClock {
        ManualClock {
            now: AtomicI64::new(start_millis),
        }
    }

    pub fn set(&self, millis: i64) {
        self.now.store(millis, Ordering::SeqCst);
    }

    pub fn advance(&self, millis: i64) {
        self.now.fetch_add(millis, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_millis(&self) -> i64 {
        self.now.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::new(1000);
        assert_eq!(c.now_millis(), 1000);
        c.advance(500);
        assert_eq!(c.now_millis(), 1500);
        c.set(7);
        assert_eq!(c.now_millis(), 7);
        assert!(SystemClock.now_millis() > 1_600_000_000_000);
    }
}
