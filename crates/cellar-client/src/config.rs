//! Client settings, under HBase's client configuration key names.

use std::time::Duration;

/// How a client behaves; the defaults are HBase 2.x's.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `hbase.client.retries.number`.
    pub retries: u32,
    /// `hbase.client.pause`: the base of the backoff between retries.
    pub pause: Duration,
    /// `hbase.rpc.timeout`.
    pub rpc_timeout: Duration,
    /// `hbase.client.write.buffer`: bytes a BufferedMutator holds before it flushes.
    pub write_buffer: usize,
    /// `hbase.client.keyvalue.maxsize`: cells larger than this are refused before they
    /// are sent (≤ 0: no check).
    pub keyvalue_max_size: i64,
    /// `hbase.client.scanner.caching`: rows per scan round trip.
    pub scanner_caching: u32,
    /// `hbase.client.scanner.max.result.size`: bytes per scan round trip.
    pub scanner_max_result_size: u64,
    /// The user named in connection headers.
    pub user: String,
    /// Ask servers for KeyValueCodec cell blocks (as HBase's Java client does) rather
    /// than cells inline in protobuf.
    pub cell_blocks: bool,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            retries: 15,
            pause: Duration::from_millis(100),
            rpc_timeout: Duration::from_secs(60),
            write_buffer: 2 * 1024 * 1024,
            keyvalue_max_size: 10 * 1024 * 1024,
            scanner_caching: i32::MAX as u32,
            scanner_max_result_size: 2 * 1024 * 1024,
            user: std::env::var("USER").unwrap_or_else(|_| "cellar".into()),
            cell_blocks: true,
        }
    }
}

/// HBase's `RETRY_BACKOFF` multipliers of the pause.
const BACKOFF: [u32; 13] = [1, 2, 3, 5, 10, 20, 40, 100, 100, 100, 100, 200, 200];

impl ClientConfig {
    /// The pause before retry `attempt` (0-based), capped as HBase caps it.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let i = (attempt as usize).min(BACKOFF.len() - 1);
        self.pause * BACKOFF[i]
    }
}
