//! A latency histogram cheap enough for every call: fixed bucket bounds (the ones
//! Prometheus clients use for request latency, extended down to 50 µs), atomic counts,
//! a sum and a count; read as cumulative buckets for the Prometheus text format.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the buckets, in seconds (the last bucket is +Inf).
pub const BOUNDS: [f64; 17] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0,
];

#[derive(Debug, Default)]
pub struct Histogram {
    buckets: [AtomicU64; BOUNDS.len() + 1],
    sum_nanos: AtomicU64,
    count: AtomicU64,
}

/// A histogram read at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramSnapshot {
    /// (upper bound in seconds, observations at or below it); the last is +Inf.
    pub cumulative: Vec<(f64, u64)>,
    pub sum_secs: f64,
    pub count: u64,
}

impl Histogram {
    pub fn record(&self, d: Duration) {
        let secs = d.as_secs_f64();
        let i = BOUNDS
            .iter()
            .position(|&b| secs <= b)
            .unwrap_or(BOUNDS.len());
        self.buckets[i].fetch_add(1, Ordering::Relaxed);
        self.sum_nanos
            .fetch_add(d.as_nanos().min(u64::MAX as u128) as u64, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> HistogramSnapshot {
        let mut total = 0;
        let mut cumulative = Vec::with_capacity(BOUNDS.len() + 1);
        for (i, b) in self.buckets.iter().enumerate() {
            total += b.load(Ordering::Relaxed);
            cumulative.push((BOUNDS.get(i).copied().unwrap_or(f64::INFINITY), total));
        }
        HistogramSnapshot {
            cumulative,
            sum_secs: self.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9,
            count: self.count.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative() {
        let h = Histogram::default();
        h.record(Duration::from_micros(30));
        h.record(Duration::from_millis(3));
        h.record(Duration::from_secs(30));
        let s = h.snapshot();
        assert_eq!(s.count, 3);
        assert_eq!(s.cumulative[0], (0.00005, 1));
        let at_5ms = s.cumulative.iter().find(|(b, _)| *b == 0.005).map(|x| x.1);
        assert_eq!(at_5ms, Some(2));
        assert_eq!(s.cumulative.last().map(|x| x.1), Some(3));
        assert!(s.cumulative.last().is_some_and(|x| x.0.is_infinite()));
        assert!((s.sum_secs - 30.00303).abs() < 1e-6);
    }
}
