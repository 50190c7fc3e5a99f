//! Time as the engine sees it: the system clock, or a manual clock tests move by hand.
//! Engine code reads wall time, measures elapsed time and sleeps only through a
//! [`Clock`] (`clippy.toml` bans the std calls elsewhere), so a simulated clock drives
//! TTLs, retries, lock waits and periodic work in tests.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A source of time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Wall-clock time in milliseconds since the Unix epoch.
    fn now_millis(&self) -> i64;

    /// Wall-clock time in milliseconds, possibly a few milliseconds behind
    /// [`Clock::now_millis`] but cheaper to read: for timing reads against thresholds
    /// of seconds (the large-response log times every row a scan returns).
    fn coarse_millis(&self) -> i64 {
        self.now_millis()
    }

    /// Monotonic time since an arbitrary origin, for deadlines and elapsed times.
    fn monotonic(&self) -> Duration;

    /// Lets `d` of this clock's time pass.
    fn sleep(&self, d: Duration);
}

/// The operating system's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

// The one place the engine's time meets the operating system's.
#[allow(clippy::disallowed_methods)]
impl Clock for SystemClock {
    fn now_millis(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    }

    /// The kernel's coarse real-time clock (its last tick, no clock-source read).
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    fn coarse_millis(&self) -> i64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec for the call's duration, and
        // CLOCK_REALTIME_COARSE is a clock every Linux kernel since 2.6.32 provides.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) };
        if rc != 0 {
            return self.now_millis();
        }
        // `time_t` and `c_long` are i64 here, narrower on 32-bit targets.
        #[allow(clippy::useless_conversion)]
        let millis = i64::from(ts.tv_sec) * 1000 + i64::from(ts.tv_nsec) / 1_000_000;
        millis
    }

    fn monotonic(&self) -> Duration {
        static ORIGIN: OnceLock<Instant> = OnceLock::new();
        ORIGIN.get_or_init(Instant::now).elapsed()
    }

    fn sleep(&self, d: Duration) {
        std::thread::sleep(d)
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

    /// The manual time itself (it never runs backwards unless `set` moves it).
    fn monotonic(&self) -> Duration {
        Duration::from_millis(self.now.load(Ordering::SeqCst).max(0) as u64)
    }

    /// Simulated: the clock moves forward by `d` at once (rounded up to a millisecond),
    /// and the caller waits at most 2 ms of real time, so a retry loop under a manual
    /// clock runs its course quickly while other threads (a split it waits for) still
    /// get to run.
    #[allow(clippy::disallowed_methods)]
    fn sleep(&self, d: Duration) {
        let ms = d.as_millis().max(1).min(i64::MAX as u128) as i64;
        self.now.fetch_add(ms, Ordering::SeqCst);
        std::thread::sleep(d.min(Duration::from_millis(2)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The coarse clock reads the same wall time as the precise one, at most a few
    /// ticks behind it; a manual clock's coarse time is its time.
    #[test]
    fn coarse_time_is_wall_time_a_tick_behind_at_most() {
        for _ in 0..1000 {
            let before = SystemClock.now_millis();
            let coarse = SystemClock.coarse_millis();
            let after = SystemClock.now_millis();
            // A kernel tick is at most 10 ms (HZ=100); allow a second tick.
            assert!(coarse <= after, "{coarse} > {after}");
            assert!(coarse >= before - 20, "{coarse} < {before} - 20");
        }
        let c = ManualClock::new(1234);
        assert_eq!(c.coarse_millis(), 1234);
    }

    #[test]
    fn manual_clock_moves_only_when_told() {
        let c = ManualClock::new(1000);
        assert_eq!(c.now_millis(), 1000);
        c.advance(500);
        assert_eq!(c.now_millis(), 1500);
        c.set(7);
        assert_eq!(c.now_millis(), 7);
        assert!(SystemClock.now_millis() > 1_600_000_000_000);
        c.sleep(Duration::from_millis(250));
        assert_eq!(c.now_millis(), 257);
        assert_eq!(c.monotonic(), Duration::from_millis(257));
        let a = SystemClock.monotonic();
        SystemClock.sleep(Duration::from_millis(2));
        assert!(SystemClock.monotonic() >= a + Duration::from_millis(2));
    }
}
