//! Split policies with HBase's names and formulas (§5.2) and the split point (§5.3):
//! when a region should split, and at which row — never inside a row.

use crate::config::Config;
use crate::descriptor::TableDescriptor;
use crate::error::{RegionError, Result};

/// The policies HBase ships.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyKind {
    ConstantSize,
    IncreasingToUpperBound,
    Stepping,
    KeyPrefix,
    DelimitedKeyPrefix,
    Disabled,
    Busy,
}

impl PolicyKind {
    /// Parses a class name, short or fully qualified.
    pub fn parse(name: &str) -> Result<PolicyKind> {
        let short = name.rsplit('.').next().unwrap_or(name).trim();
        Ok(match short {
            "ConstantSizeRegionSplitPolicy" => PolicyKind::ConstantSize,
            "IncreasingToUpperBoundRegionSplitPolicy" => PolicyKind::IncreasingToUpperBound,
            "SteppingSplitPolicy" => PolicyKind::Stepping,
            "KeyPrefixRegionSplitPolicy" => PolicyKind::KeyPrefix,
            "DelimitedKeyPrefixRegionSplitPolicy" => PolicyKind::DelimitedKeyPrefix,
            "DisabledRegionSplitPolicy" => PolicyKind::Disabled,
            "BusyRegionSplitPolicy" => PolicyKind::Busy,
            _ => {
                return Err(RegionError::InvalidMutation(format!(
                    "Unknown split policy {name}"
                )))
            }
        })
    }

    pub fn class_name(self) -> &'static str {
        match self {
            PolicyKind::ConstantSize => {
                "org.apache.hadoop.hbase.regionserver.ConstantSizeRegionSplitPolicy"
            }
            PolicyKind::IncreasingToUpperBound => {
                "org.apache.hadoop.hbase.regionserver.IncreasingToUpperBoundRegionSplitPolicy"
            }
            PolicyKind::Stepping => "org.apache.hadoop.hbase.regionserver.SteppingSplitPolicy",
            PolicyKind::KeyPrefix => {
                "org.apache.hadoop.hbase.regionserver.KeyPrefixRegionSplitPolicy"
            }
            PolicyKind::DelimitedKeyPrefix => {
                "org.apache.hadoop.hbase.regionserver.DelimitedKeyPrefixRegionSplitPolicy"
            }
            PolicyKind::Disabled => {
                "org.apache.hadoop.hbase.regionserver.DisabledRegionSplitPolicy"
            }
            PolicyKind::Busy => "org.apache.hadoop.hbase.regionserver.BusyRegionSplitPolicy",
        }
    }
}

/// A table's split policy, configured.
#[derive(Debug, Clone)]
pub struct SplitPolicy {
    pub kind: PolicyKind,
    /// `MAX_FILESIZE` or `hbase.hregion.max.filesize`, with the policy's jitter applied.
    pub max_file_size: u64,
    /// Size for a table's first region (IncreasingToUpperBound family).
    pub initial_size: u64,
    pub prefix_length: Option<usize>,
    pub delimiter: Option<Vec<u8>>,
    /// BusyRegionSplitPolicy: minimum region age (ms) and blocked-write fraction.
    pub busy_min_age_ms: u64,
    pub busy_blocked_fraction: f64,
    pub busy_agg_window_ms: u64,
}

impl SplitPolicy {
    /// The policy of `table`; `seed` fixes the jitter per region.
    pub fn for_table(table: &TableDescriptor, config: &Config, seed: u64) -> Result<SplitPolicy> {
        let kind = PolicyKind::parse(
            table
                .split_policy
                .as_deref()
                .unwrap_or(&config.split_policy),
        )?;
        let max = table.max_file_size.unwrap_or(config.max_file_size) as f64;
        // threshold += threshold × (rand[0,1) − 0.5) × jitter, rand fixed per region.
        let rand = (seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 / (1u64 << 53) as f64;
        let jitter = if table.max_file_size.is_some() {
            0.0
        } else {
            config.max_file_size_jitter
        };
        let max_file_size = (max + max * (rand - 0.5) * jitter).max(1.0) as u64;
        let flush = table
            .memstore_flush_size
            .unwrap_or(config.memstore_flush_size);
        let initial_size = if config.increasing_policy_initial_size > 0 {
            config.increasing_policy_initial_size
        } else {
            flush.saturating_mul(2)
        };
        let conf = |k: &str| table.configuration.get(k).cloned();
        // HBase 2.4+'s RegionSplitRestriction keys do the same for any policy.
        let restriction = conf("hbase.regionserver.region.split_restriction.type");
        let prefix_length = conf("KeyPrefixRegionSplitPolicy.prefix_length")
            .or_else(|| conf("prefix_split_key_policy.prefix_length"))
            .or_else(|| {
                restriction
                    .as_deref()
                    .filter(|r| r.eq_ignore_ascii_case("KeyPrefix"))
                    .and_then(|_| conf("hbase.regionserver.region.split_restriction.prefix_length"))
            })
            .map(|v| {
                v.trim().parse::<usize>().map_err(|_| {
                    RegionError::InvalidMutation(format!(
                        "bad KeyPrefixRegionSplitPolicy.prefix_length '{v}'"
                    ))
                })
            })
            .transpose()?;
        let delimiter = conf("DelimitedKeyPrefixRegionSplitPolicy.delimiter")
            .or_else(|| {
                restriction
                    .as_deref()
                    .filter(|r| r.eq_ignore_ascii_case("DelimitedKeyPrefix"))
                    .and_then(|_| conf("hbase.regionserver.region.split_restriction.delimiter"))
            })
            .map(|d| d.into_bytes());
        if let Some(r) = &restriction {
            let ok = (r.eq_ignore_ascii_case("KeyPrefix") && prefix_length.is_some_and(|n| n > 0))
                || (r.eq_ignore_ascii_case("DelimitedKeyPrefix")
                    && delimiter.as_ref().is_some_and(|d| !d.is_empty()))
                || r.eq_ignore_ascii_case("None");
            if !ok {
                return Err(RegionError::InvalidMutation(format!(
                    "split restriction '{r}' needs hbase.regionserver.region.split_restriction.prefix_length or .delimiter"
                )));
            }
        }
        if kind == PolicyKind::KeyPrefix && prefix_length.is_none_or(|n| n == 0) {
            return Err(RegionError::InvalidMutation(
                "KeyPrefixRegionSplitPolicy needs CONFIGURATION KeyPrefixRegionSplitPolicy.prefix_length > 0".into(),
            ));
        }
        if kind == PolicyKind::DelimitedKeyPrefix && delimiter.as_ref().is_none_or(|d| d.is_empty())
        {
            return Err(RegionError::InvalidMutation(
                "DelimitedKeyPrefixRegionSplitPolicy needs CONFIGURATION DelimitedKeyPrefixRegionSplitPolicy.delimiter".into(),
            ));
        }
        Ok(SplitPolicy {
            kind,
            max_file_size,
            initial_size,
            prefix_length,
            delimiter,
            busy_min_age_ms: config.busy_min_age_ms,
            busy_blocked_fraction: config.busy_blocked_requests,
            busy_agg_window_ms: config.busy_agg_window_ms,
        })
    }

    /// The size a store must pass to split, with `regions` regions of the table on this
    /// server.
    pub fn size_to_check(&self, regions: usize) -> u64 {
        match self.kind {
            PolicyKind::ConstantSize => self.max_file_size,
            PolicyKind::Disabled => u64::MAX,
            PolicyKind::Stepping => {
                if regions == 1 {
                    self.initial_size.min(self.max_file_size)
                } else {
                    self.max_file_size
                }
            }
            PolicyKind::IncreasingToUpperBound
            | PolicyKind::KeyPrefix
            | PolicyKind::DelimitedKeyPrefix
            | PolicyKind::Busy => {
                if regions == 0 || regions > 100 {
                    self.max_file_size
                } else {
                    let cube = (regions as u128).pow(3);
                    (self.initial_size as u128 * cube).min(self.max_file_size as u128) as u64
                }
            }
        }
    }

    /// Whether a region whose largest store holds `largest_store` bytes should split.
    pub fn should_split(&self, largest_store: u64, regions: usize) -> bool {
        self.kind != PolicyKind::Disabled && largest_store > self.size_to_check(regions)
    }

    /// BusyRegionSplitPolicy's extra trigger: a region at least `minAge` old whose
    /// blocked-request rate (see [`BusyRate`]) reached `blockedRequests`.
    pub fn is_busy(&self, age_ms: u64, blocked_rate: f64) -> bool {
        self.kind == PolicyKind::Busy
            && age_ms >= self.busy_min_age_ms
            && blocked_rate >= self.busy_blocked_fraction
    }
}

/// HBase's `BusyRegionSplitPolicy.updateRate`: blocked requests over write requests in
/// the current aggregation window, blended with the previous window's rate by the share
/// of the window elapsed; zero until the region has lived one window.
#[derive(Debug, Clone)]
pub struct BusyRate {
    start: i64,
    prev_time: i64,
    blocked: u64,
    writes: u64,
    rate: f64,
}

impl BusyRate {
    pub fn new(now: i64) -> BusyRate {
        BusyRate {
            start: now,
            prev_time: now,
            blocked: 0,
            writes: 0,
            rate: 0.0,
        }
    }

    /// The rate now, given the region's counters so far.
    pub fn update(&mut self, now: i64, blocked: u64, writes: u64, window_ms: u64) -> f64 {
        let window = window_ms.max(1) as f64;
        let cur = (blocked - self.blocked.min(blocked)) as f64
            / ((writes - self.writes.min(writes)) as f64 + 0.00001);
        if (now - self.prev_time) as f64 >= window {
            self.rate = cur;
            self.prev_time = now;
            self.blocked = blocked;
            self.writes = writes;
            cur
        } else if (now - self.start) as f64 >= window {
            let slice = (now - self.prev_time) as f64 / window;
            (1.0 - slice) * self.rate + slice * cur
        } else {
            0.0
        }
    }
}

impl SplitPolicy {
    /// Whether `split 't', 'row'` may split the region.
    pub fn allows_manual(&self) -> bool {
        self.kind != PolicyKind::Disabled
    }

    /// The split row after the key-prefix policies' (or split restriction's) truncation.
    pub fn truncate(&self, row: Vec<u8>) -> Vec<u8> {
        let kind = match self.kind {
            PolicyKind::KeyPrefix | PolicyKind::DelimitedKeyPrefix => self.kind,
            _ if self.prefix_length.is_some() => PolicyKind::KeyPrefix,
            _ if self.delimiter.is_some() => PolicyKind::DelimitedKeyPrefix,
            other => other,
        };
        match kind {
            PolicyKind::KeyPrefix => {
                let n = self.prefix_length.unwrap_or(row.len()).min(row.len());
                row[..n].to_vec()
            }
            PolicyKind::DelimitedKeyPrefix => {
                let d = self.delimiter.clone().unwrap_or_default();
                match row.windows(d.len().max(1)).position(|w| w == d.as_slice()) {
                    Some(i) if !d.is_empty() => row[..i].to_vec(),
                    _ => row,
                }
            }
            _ => row,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::FamilyDescriptor;

    fn table(policy: &str) -> TableDescriptor {
        let mut t = TableDescriptor::new("t").with_family(FamilyDescriptor::new("f"));
        t.split_policy = Some(policy.to_string());
        t
    }

    #[test]
    fn sizes_follow_hbase_formulas() {
        let c = Config {
            max_file_size_jitter: 0.0,
            ..Config::default()
        };
        let mb = 1u64 << 20;
        let p = SplitPolicy::for_table(&table("IncreasingToUpperBoundRegionSplitPolicy"), &c, 7)
            .unwrap();
        assert_eq!(p.size_to_check(1), 256 * mb);
        assert_eq!(p.size_to_check(2), 2048 * mb);
        assert_eq!(p.size_to_check(3), 6912 * mb);
        assert_eq!(p.size_to_check(4), 10240 * mb);
        let s = SplitPolicy::for_table(
            &table("org.apache.hadoop.hbase.regionserver.SteppingSplitPolicy"),
            &c,
            7,
        )
        .unwrap();
        assert_eq!(s.size_to_check(1), 256 * mb);
        assert_eq!(s.size_to_check(2), 10240 * mb);
        let k = SplitPolicy::for_table(&table("ConstantSizeRegionSplitPolicy"), &c, 7).unwrap();
        assert_eq!(k.size_to_check(1), 10240 * mb);
        let b = SplitPolicy::for_table(&table("BusyRegionSplitPolicy"), &c, 7).unwrap();
        assert!(!b.is_busy(599_999, 0.5), "too young");
        assert!(b.is_busy(600_000, 0.2));
        assert!(!b.is_busy(600_000, 0.19));
        assert!(!k.is_busy(10_000_000, 1.0), "only the busy policy");
        // The rate: nothing in the first window, then blocked/writes, blended.
        let mut r = BusyRate::new(0);
        assert_eq!(r.update(100_000, 50, 100, 300_000), 0.0);
        let full = r.update(300_000, 50, 100, 300_000);
        assert!((full - 0.5).abs() < 1e-6);
        // Half a window later with no new blocks: half the old rate.
        let half = r.update(450_000, 50, 200, 300_000);
        assert!((half - 0.25).abs() < 1e-3, "{half}");
        let d = SplitPolicy::for_table(&table("DisabledRegionSplitPolicy"), &c, 7).unwrap();
        assert!(!d.should_split(u64::MAX - 1, 1) && !d.allows_manual());
        // MEMSTORE_FLUSHSIZE changes the initial size.
        let mut t = table("SteppingSplitPolicy");
        t.memstore_flush_size = Some(mb);
        assert_eq!(
            SplitPolicy::for_table(&t, &c, 7).unwrap().size_to_check(1),
            2 * mb
        );
    }

    #[test]
    fn jitter_stays_within_an_eighth() {
        let c = Config::default();
        for seed in 0..200 {
            let p =
                SplitPolicy::for_table(&table("ConstantSizeRegionSplitPolicy"), &c, seed).unwrap();
            let m = c.max_file_size as f64;
            assert!((p.max_file_size as f64 - m).abs() <= m * 0.125 + 1.0);
        }
    }

    #[test]
    fn key_prefix_policies_truncate_split_rows() {
        let c = Config::default();
        let mut t = table("KeyPrefixRegionSplitPolicy");
        assert!(
            SplitPolicy::for_table(&t, &c, 1).is_err(),
            "needs a prefix length"
        );
        t.configuration.insert(
            "KeyPrefixRegionSplitPolicy.prefix_length".into(),
            "4".into(),
        );
        let p = SplitPolicy::for_table(&t, &c, 1).unwrap();
        assert_eq!(p.truncate(b"user1234".to_vec()), b"user");
        assert_eq!(p.truncate(b"ab".to_vec()), b"ab");
        let mut t = table("DelimitedKeyPrefixRegionSplitPolicy");
        t.configuration.insert(
            "DelimitedKeyPrefixRegionSplitPolicy.delimiter".into(),
            "|".into(),
        );
        let p = SplitPolicy::for_table(&t, &c, 1).unwrap();
        assert_eq!(p.truncate(b"tenant0042|order|0001".to_vec()), b"tenant0042");
        assert_eq!(p.truncate(b"nodelim".to_vec()), b"nodelim");
        assert!(PolicyKind::parse("NoSuchPolicy").is_err());
        // The 2.4+ split restriction works with any policy.
        let mut t = table("SteppingSplitPolicy");
        t.configuration.insert(
            "hbase.regionserver.region.split_restriction.type".into(),
            "DelimitedKeyPrefix".into(),
        );
        assert!(SplitPolicy::for_table(&t, &c, 1).is_err());
        t.configuration.insert(
            "hbase.regionserver.region.split_restriction.delimiter".into(),
            "#".into(),
        );
        let p = SplitPolicy::for_table(&t, &c, 1).unwrap();
        assert_eq!(p.truncate(b"dev42#2026".to_vec()), b"dev42");
        let mut t = table("SteppingSplitPolicy");
        t.configuration.insert(
            "hbase.regionserver.region.split_restriction.type".into(),
            "KeyPrefix".into(),
        );
        t.configuration.insert(
            "hbase.regionserver.region.split_restriction.prefix_length".into(),
            "3".into(),
        );
        let p = SplitPolicy::for_table(&t, &c, 1).unwrap();
        assert_eq!(p.truncate(b"abcdef".to_vec()), b"abc");
    }
}
