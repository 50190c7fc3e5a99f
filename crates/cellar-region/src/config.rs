//! Configuration under HBase's key names and defaults, read once into a typed struct.
//! The file form is TOML with each key a quoted string:
//! `"hbase.table.max.rowsize" = 1048576`. An unknown key or a value of the wrong kind
//! is an error that names the key.

use std::time::Duration;

use crate::error::{RegionError, Result};

/// Every setting the engine reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `hbase.hregion.memstore.flush.size`
    pub memstore_flush_size: u64,
    /// `hbase.hregion.memstore.block.multiplier`
    pub memstore_block_multiplier: u64,
    /// `hbase.server.keyvalue.maxsize` (≤ 0 disables)
    pub keyvalue_max_size: i64,
    /// `hbase.table.max.rowsize`
    pub max_row_size: u64,
    /// `hbase.rowlock.wait.duration` (ms; ≤ 0 means 1 ms)
    pub row_lock_wait_ms: i64,
    /// `hbase.column.max.version`: VERSIONS of a family that does not say.
    pub column_max_version: u32,
    /// `hbase.hstore.compaction.min` (old name `hbase.hstore.compactionThreshold`)
    pub compaction_min: usize,
    /// `hbase.hstore.compaction.max`
    pub compaction_max: usize,
    /// `hbase.hstore.compaction.ratio`
    pub compaction_ratio: f64,
    /// `hbase.hstore.compaction.min.size`; unset, a region's memstore flush size (its
    /// table's `MEMSTORE_FLUSHSIZE`, else `hbase.hregion.memstore.flush.size`), as
    /// HBase's `CompactionConfiguration` takes it.
    pub compaction_min_size: Option<u64>,
    /// `hbase.hstore.compaction.max.size`
    pub compaction_max_size: u64,
    /// `hbase.hstore.blockingStoreFiles`
    pub blocking_store_files: usize,
    /// `hbase.hregion.majorcompaction` (ms; 0 disables periodic majors)
    pub major_compaction_period_ms: u64,
    /// `hbase.hregion.majorcompaction.jitter`
    pub major_compaction_jitter: f64,
    /// `hbase.hstore.time.to.purge.deletes` (ms)
    pub time_to_purge_deletes_ms: u64,
    /// `hbase.regionserver.hlog.blocksize` × `hbase.regionserver.logroll.multiplier`
    pub wal_block_size: u64,
    pub wal_roll_multiplier: f64,
    /// `hbase.regionserver.optionallogflushinterval` (ms)
    pub wal_async_flush_interval_ms: u64,
    /// `hbase.wal.hsync`: default durability becomes FSYNC_WAL.
    pub wal_hsync: bool,
    /// `hfile.block.cache.size`: fraction of `cellar.heap.size` given to the block cache.
    pub block_cache_fraction: f64,
    /// `cellar.heap.size`: the memory budget the fractions refer to (bytes).
    pub heap_size: u64,
    /// `hbase.hregion.scan.loadColumnFamiliesOnDemand`: whether reads that do not say
    /// load the families their filter does not need only for rows the filter keeps.
    pub load_families_on_demand: bool,
    /// `hbase.client.scanner.max.result.size`
    pub client_scanner_max_result_size: u64,
    /// `hbase.server.scanner.max.result.size`
    pub server_scanner_max_result_size: u64,
    /// `hbase.hregion.max.filesize`
    pub max_file_size: u64,
    /// `hbase.hregion.max.filesize.jitter`
    pub max_file_size_jitter: f64,
    /// `hbase.regionserver.region.split.policy`
    pub split_policy: String,
    /// `hbase.increasing.policy.initial.size` (0 = 2 × flush size)
    pub increasing_policy_initial_size: u64,
    /// `hbase.regionserver.regionSplitLimit`
    pub region_split_limit: usize,
    /// `hbase.busy.policy.minAge` (ms)
    pub busy_min_age_ms: u64,
    /// `hbase.busy.policy.blockedRequests` (fraction of writes blocked)
    pub busy_blocked_requests: f64,
    /// `hbase.busy.policy.aggWindow` (ms)
    pub busy_agg_window_ms: u64,
    /// `hbase.shell.timestamp.format.epoch`: the shell prints timestamps as epoch
    /// milliseconds instead of local ISO date-times.
    pub shell_timestamp_epoch: bool,
    /// `hbase.ipc.max.request.size`: the largest call frame a server reads.
    pub ipc_max_request_size: u64,
    /// `hbase.ipc.server.max.callqueue.length`: calls in flight on a server at once
    /// before new ones get CallQueueTooBigException.
    pub ipc_max_call_queue_length: usize,
    /// `cellar.ipc.server.max.connection.calls`: calls in flight on one connection.
    pub ipc_max_connection_calls: usize,
    /// `hbase.client.scanner.timeout.period`: a server closes a scanner not used for
    /// this long (its lease).
    pub scanner_timeout_ms: u64,
    /// `cellar.server.scanner.time.limit`: how long one scan call may look for rows
    /// before it answers with a heartbeat (0: half the scanner lease, HBase's rule).
    pub scanner_time_limit_ms: u64,
    /// `cellar.largerow.watch.bytes` / `.cells`, `cellar.largerow.warn.bytes` / `.cells`:
    /// the levels above which a row is tracked, and warned about.
    pub large_row_levels: crate::row_sizes::Levels,
    /// `hbase.ipc.warn.response.size` / `.time`, `hbase.regionserver.slowlog.ringbuffer.size`.
    pub large_log: crate::large_log::LargeLogConfig,
    /// `hbase.regionserver.thrift.framed.max_frame_size_in_mb`: the largest frame a
    /// framed Thrift client may send (MiB).
    pub thrift_max_frame_mb: u64,
    /// `hbase.regionserver.thrift.maxWorkerThreads`: Thrift connections served at once.
    pub thrift_max_workers: usize,
    /// `hbase.thrift.server.socket.read.timeout`: a Thrift connection silent this long
    /// is closed (ms).
    pub thrift_read_timeout_ms: u64,
    /// `cellar.hotrow.waits` / `cellar.hotrow.wait.ms`: lock waits (count, or time in
    /// all) from which a row is reported hot.
    pub hot_row_waits: u64,
    pub hot_row_wait_ms: u64,
    /// `hbase.zookeeper.quorum`: where a server registers itself (none: no ZooKeeper).
    pub zookeeper_quorum: Option<String>,
    /// `zookeeper.znode.parent`.
    pub znode_parent: String,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            memstore_flush_size: 134_217_728,
            memstore_block_multiplier: 4,
            keyvalue_max_size: 10_485_760,
            max_row_size: 1_073_741_824,
            row_lock_wait_ms: 30_000,
            column_max_version: 1,
            compaction_min: 3,
            compaction_max: 10,
            compaction_ratio: 1.2,
            compaction_min_size: None,
            compaction_max_size: i64::MAX as u64,
            blocking_store_files: 16,
            major_compaction_period_ms: 604_800_000,
            major_compaction_jitter: 0.5,
            time_to_purge_deletes_ms: 0,
            wal_block_size: 268_435_456,
            wal_roll_multiplier: 0.5,
            wal_async_flush_interval_ms: 1000,
            wal_hsync: false,
            block_cache_fraction: 0.4,
            heap_size: 1 << 30,
            load_families_on_demand: true,
            client_scanner_max_result_size: 2_097_152,
            server_scanner_max_result_size: 104_857_600,
            max_file_size: 10_737_418_240,
            max_file_size_jitter: 0.25,
            split_policy: "org.apache.hadoop.hbase.regionserver.SteppingSplitPolicy".into(),
            increasing_policy_initial_size: 0,
            region_split_limit: 1000,
            busy_min_age_ms: 600_000,
            busy_blocked_requests: 0.2,
            busy_agg_window_ms: 300_000,
            shell_timestamp_epoch: false,
            ipc_max_request_size: 268_435_456,
            ipc_max_call_queue_length: 300,
            ipc_max_connection_calls: 100,
            scanner_timeout_ms: 60_000,
            scanner_time_limit_ms: 0,
            large_row_levels: crate::row_sizes::Levels::default(),
            large_log: crate::large_log::LargeLogConfig::default(),
            thrift_max_frame_mb: 2,
            thrift_max_workers: 1000,
            thrift_read_timeout_ms: 60_000,
            hot_row_waits: 100,
            hot_row_wait_ms: 100,
            zookeeper_quorum: None,
            znode_parent: "/hbase".into(),
        }
    }
}

fn bad(key: &str, want: &str, got: &toml::Value) -> RegionError {
    RegionError::Config(format!("\"{key}\" must be {want}, got {got}"))
}

fn int(key: &str, v: &toml::Value) -> Result<i64> {
    match v {
        toml::Value::Integer(i) => Ok(*i),
        toml::Value::String(s) => s.trim().parse().map_err(|_| bad(key, "an integer", v)),
        _ => Err(bad(key, "an integer", v)),
    }
}

fn uint(key: &str, v: &toml::Value) -> Result<u64> {
    let i = int(key, v)?;
    u64::try_from(i).map_err(|_| bad(key, "a non-negative integer", v))
}

fn positive(key: &str, v: &toml::Value) -> Result<u64> {
    match uint(key, v)? {
        0 => Err(bad(key, "a positive integer", v)),
        n => Ok(n),
    }
}

fn float(key: &str, v: &toml::Value) -> Result<f64> {
    let f = match v {
        toml::Value::Float(f) => *f,
        toml::Value::Integer(i) => *i as f64,
        toml::Value::String(s) => s.trim().parse().map_err(|_| bad(key, "a number", v))?,
        _ => return Err(bad(key, "a number", v)),
    };
    if !f.is_finite() || f < 0.0 {
        return Err(bad(key, "a non-negative number", v));
    }
    Ok(f)
}

fn boolean(key: &str, v: &toml::Value) -> Result<bool> {
    match v {
        toml::Value::Boolean(b) => Ok(*b),
        toml::Value::String(s) if s.eq_ignore_ascii_case("true") => Ok(true),
        toml::Value::String(s) if s.eq_ignore_ascii_case("false") => Ok(false),
        _ => Err(bad(key, "true or false", v)),
    }
}

impl Config {
    /// Parses a configuration file's text; keys not named keep their defaults.
    pub fn from_toml(text: &str) -> Result<Config> {
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| RegionError::Config(e.to_string()))?;
        let mut c = Config::default();
        for (key, v) in &table {
            c.set(key, v)?;
        }
        Ok(c)
    }

    /// Sets one key from a TOML value.
    pub fn set(&mut self, key: &str, v: &toml::Value) -> Result<()> {
        match key {
            "hbase.hregion.memstore.flush.size" => self.memstore_flush_size = positive(key, v)?,
            "hbase.hregion.memstore.block.multiplier" => {
                self.memstore_block_multiplier = positive(key, v)?
            }
            "hbase.server.keyvalue.maxsize" => self.keyvalue_max_size = int(key, v)?,
            "hbase.table.max.rowsize" => self.max_row_size = positive(key, v)?,
            "hbase.rowlock.wait.duration" => self.row_lock_wait_ms = int(key, v)?,
            "hbase.column.max.version" => {
                self.column_max_version =
                    u32::try_from(positive(key, v)?).map_err(|_| bad(key, "a 32-bit count", v))?
            }
            "hbase.hstore.compaction.min" | "hbase.hstore.compactionThreshold" => {
                self.compaction_min = positive(key, v)? as usize
            }
            "hbase.hstore.compaction.max" => self.compaction_max = positive(key, v)? as usize,
            "hbase.hstore.compaction.ratio" => self.compaction_ratio = float(key, v)?,
            "hbase.hstore.compaction.min.size" => self.compaction_min_size = Some(uint(key, v)?),
            "hbase.hstore.compaction.max.size" => self.compaction_max_size = positive(key, v)?,
            "hbase.hstore.blockingStoreFiles" => {
                self.blocking_store_files = positive(key, v)? as usize
            }
            "hbase.hregion.majorcompaction" => self.major_compaction_period_ms = uint(key, v)?,
            "hbase.hregion.majorcompaction.jitter" => {
                self.major_compaction_jitter = float(key, v)?.min(1.0)
            }
            "hbase.hstore.time.to.purge.deletes" => self.time_to_purge_deletes_ms = uint(key, v)?,
            "hbase.regionserver.hlog.blocksize" => self.wal_block_size = positive(key, v)?,
            "hbase.regionserver.logroll.multiplier" => self.wal_roll_multiplier = float(key, v)?,
            "hbase.regionserver.optionallogflushinterval" => {
                self.wal_async_flush_interval_ms = positive(key, v)?
            }
            "hbase.wal.hsync" => self.wal_hsync = boolean(key, v)?,
            "hbase.hregion.scan.loadColumnFamiliesOnDemand" => {
                self.load_families_on_demand = boolean(key, v)?
            }
            "hfile.block.cache.size" => self.block_cache_fraction = float(key, v)?.min(0.8),
            "cellar.heap.size" => self.heap_size = positive(key, v)?,
            "hbase.client.scanner.max.result.size" => {
                self.client_scanner_max_result_size = positive(key, v)?
            }
            "hbase.server.scanner.max.result.size" => {
                self.server_scanner_max_result_size = positive(key, v)?
            }
            "hbase.hregion.max.filesize" => self.max_file_size = positive(key, v)?,
            "hbase.hregion.max.filesize.jitter" => {
                self.max_file_size_jitter = float(key, v)?.min(1.0)
            }
            "hbase.regionserver.region.split.policy" => {
                let name = match v {
                    toml::Value::String(s) => s.clone(),
                    _ => return Err(bad(key, "a class name", v)),
                };
                crate::split_policy::PolicyKind::parse(&name)
                    .map_err(|_| bad(key, "a split policy class", v))?;
                self.split_policy = name;
            }
            "hbase.increasing.policy.initial.size" => {
                self.increasing_policy_initial_size = uint(key, v)?
            }
            "hbase.busy.policy.minAge" => self.busy_min_age_ms = uint(key, v)?,
            "hbase.busy.policy.aggWindow" => self.busy_agg_window_ms = positive(key, v)?,
            "hbase.busy.policy.blockedRequests" => {
                let f = float(key, v)?;
                if !(0.00001..=0.99999).contains(&f) {
                    return Err(bad(key, "a fraction in (0.00001, 0.99999)", v));
                }
                self.busy_blocked_requests = f;
            }
            "hbase.shell.timestamp.format.epoch" => self.shell_timestamp_epoch = boolean(key, v)?,
            "hbase.ipc.max.request.size" => self.ipc_max_request_size = positive(key, v)?,
            "hbase.ipc.server.max.callqueue.length" => {
                self.ipc_max_call_queue_length = positive(key, v)? as usize
            }
            "cellar.ipc.server.max.connection.calls" => {
                self.ipc_max_connection_calls = positive(key, v)? as usize
            }
            "hbase.client.scanner.timeout.period" => self.scanner_timeout_ms = positive(key, v)?,
            "cellar.server.scanner.time.limit" => self.scanner_time_limit_ms = uint(key, v)?,
            "hbase.ipc.warn.response.size" => self.large_log.size_bytes = positive(key, v)?,
            "hbase.ipc.warn.response.time" => self.large_log.time_ms = positive(key, v)?,
            "hbase.regionserver.slowlog.ringbuffer.size" => {
                self.large_log.capacity = positive(key, v)? as usize
            }
            "hbase.regionserver.thrift.framed.max_frame_size_in_mb" => {
                self.thrift_max_frame_mb = positive(key, v)?
            }
            "hbase.regionserver.thrift.maxWorkerThreads" => {
                self.thrift_max_workers = positive(key, v)? as usize
            }
            "hbase.thrift.server.socket.read.timeout" => {
                self.thrift_read_timeout_ms = positive(key, v)?
            }
            "cellar.hotrow.waits" => self.hot_row_waits = positive(key, v)?,
            "cellar.hotrow.wait.ms" => self.hot_row_wait_ms = positive(key, v)?,
            "cellar.tombstone.warn.cells" => {
                self.large_row_levels.tombstone_cells = positive(key, v)?
            }
            "cellar.largerow.tracking" => self.large_row_levels.enabled = boolean(key, v)?,
            "cellar.largerow.watch.bytes" => self.large_row_levels.watch_bytes = positive(key, v)?,
            "cellar.largerow.watch.cells" => self.large_row_levels.watch_cells = positive(key, v)?,
            "cellar.largerow.warn.bytes" => self.large_row_levels.warn_bytes = positive(key, v)?,
            "cellar.largerow.warn.cells" => self.large_row_levels.warn_cells = positive(key, v)?,
            "hbase.zookeeper.quorum" => match v {
                toml::Value::String(s) if !s.trim().is_empty() => {
                    self.zookeeper_quorum = Some(s.trim().to_string())
                }
                toml::Value::String(_) => self.zookeeper_quorum = None,
                _ => return Err(bad(key, "a host:port list", v)),
            },
            "zookeeper.znode.parent" => match v {
                toml::Value::String(s) if s.starts_with('/') => self.znode_parent = s.clone(),
                _ => return Err(bad(key, "a znode path starting with /", v)),
            },
            "hbase.regionserver.regionSplitLimit" => {
                self.region_split_limit = uint(key, v)? as usize
            }
            _ => return Err(RegionError::Config(format!("unknown key \"{key}\""))),
        }
        Ok(())
    }

    /// WAL segment roll size.
    pub fn wal_roll_size(&self) -> u64 {
        ((self.wal_block_size as f64 * self.wal_roll_multiplier) as u64).max(4096)
    }

    /// Block cache capacity in bytes.
    pub fn block_cache_bytes(&self) -> usize {
        (self.heap_size as f64 * self.block_cache_fraction) as usize
    }

    /// Row-lock wait.
    pub fn row_lock_wait(&self) -> Duration {
        Duration::from_millis(self.row_lock_wait_ms.max(1) as u64)
    }

    /// Default durability when a table and a mutation both say USE_DEFAULT.
    pub fn default_durability(&self) -> cellar_wal::Durability {
        if self.wal_hsync {
            cellar_wal::Durability::FsyncWal
        } else {
            cellar_wal::Durability::SyncWal
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_hbase_names_and_defaults() {
        let c = Config::from_toml(
            "\"hbase.table.max.rowsize\" = 1048576\n\"hbase.hstore.compaction.ratio\" = 1.5\n\"hbase.wal.hsync\" = true\n",
        )
        .unwrap();
        assert_eq!(c.max_row_size, 1_048_576);
        assert_eq!(c.compaction_ratio, 1.5);
        assert!(c.wal_hsync);
        assert_eq!(c.memstore_flush_size, 134_217_728);
        assert_eq!(Config::default().wal_roll_size(), 134_217_728);
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_key() {
        let e = Config::from_toml("\"hbase.table.max.rowsise\" = 1").unwrap_err();
        assert!(e.to_string().contains("hbase.table.max.rowsise"), "{e}");
        let e = Config::from_toml("\"hbase.table.max.rowsize\" = \"big\"").unwrap_err();
        assert!(e.to_string().contains("hbase.table.max.rowsize"), "{e}");
        let e = Config::from_toml("\"hbase.hregion.memstore.flush.size\" = -5").unwrap_err();
        assert!(e.to_string().contains("flush.size"), "{e}");
        assert!(Config::from_toml("not toml at all = = =").is_err());
    }
}
