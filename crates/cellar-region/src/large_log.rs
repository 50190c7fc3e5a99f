//! The large-response log (HBase's `responseTooLarge` / `responseTooSlow` slow log):
//! every read whose one result is over `hbase.ipc.warn.response.size` bytes or took
//! over `hbase.ipc.warn.response.time` ms is logged with its table, region and row, the
//! request's shape (a Get of the whole row? a scan without a batch?) and the fix, and
//! kept in a bounded ring (`hbase.regionserver.slowlog.ringbuffer.size`) the shell
//! (`get_largelog_responses`) and the status page show. A read that fails with
//! RowTooBigException is kept there too, with the row and the read that hit it.

use std::collections::VecDeque;
use std::sync::Mutex;

use cellar_api::{Get, Scan};

/// The thresholds and the ring's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LargeLogConfig {
    pub size_bytes: u64,
    pub time_ms: u64,
    pub capacity: usize,
}

impl Default for LargeLogConfig {
    fn default() -> Self {
        LargeLogConfig {
            size_bytes: 100 << 20,
            time_ms: 10_000,
            capacity: 256,
        }
    }
}

/// One logged read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LargeResponse {
    /// When it finished (ms).
    pub at: i64,
    pub table: String,
    pub region: String,
    pub row: Vec<u8>,
    /// `Get` or `Scan`.
    pub op: &'static str,
    pub bytes: u64,
    pub cells: u64,
    pub millis: u64,
    /// `responseTooLarge` and/or `responseTooSlow`.
    pub kind: String,
    /// What the request asked for, and what to change.
    pub shape: String,
    pub advice: String,
}

/// What a read looked like, for the log.
#[derive(Debug, Clone)]
pub struct Shape {
    pub op: &'static str,
    pub text: String,
    pub advice: String,
}

fn paginates(filter: Option<&cellar_api::FilterSpec>) -> bool {
    matches!(
        filter,
        Some(cellar_api::FilterSpec::ColumnPagination { .. })
    )
}

impl Shape {
    pub fn of_get(get: &Get) -> Shape {
        let restricted = !get.columns.is_empty();
        let mut text = if restricted {
            format!("Get of {} famil(ies) named", get.columns.len())
        } else {
            "unrestricted Get (every column of the row)".to_string()
        };
        if get.max_versions > 1 {
            text.push_str(&format!(", {} versions", get.max_versions));
        }
        let advice = if paginates(get.filter.as_ref()) {
            "the page is large: ask for fewer columns per page".to_string()
        } else {
            "restrict columns, page with setBatch or ColumnPaginationFilter".to_string()
        };
        Shape {
            op: "Get",
            text,
            advice,
        }
    }

    pub fn of_scan(scan: &Scan) -> Shape {
        let mut parts = Vec::new();
        if scan.columns.is_empty() {
            parts.push("every column".to_string());
        }
        if scan.batch.unwrap_or(0) == 0 && !scan.allow_partial_results {
            parts.push("no batch (whole rows per result)".to_string());
        } else if let Some(b) = scan.batch {
            parts.push(format!("batch {b}"));
        }
        Shape {
            op: "Scan",
            text: format!("Scan with {}", parts.join(", ")),
            advice: "page wide rows with setBatch (or setAllowPartialResults), restrict columns, or use ColumnPaginationFilter".to_string(),
        }
    }
}

/// The ring, and how many reads of each kind it has seen in all.
#[derive(Debug, Default)]
pub struct LargeLog {
    config: LargeLogConfig,
    ring: Mutex<VecDeque<LargeResponse>>,
    /// Reads over the size threshold, over the time threshold, and refused as
    /// RowTooBigException, since the server started.
    pub too_large: std::sync::atomic::AtomicU64,
    pub too_slow: std::sync::atomic::AtomicU64,
    pub row_too_big: std::sync::atomic::AtomicU64,
}

impl LargeLog {
    pub fn new(config: LargeLogConfig) -> LargeLog {
        LargeLog {
            config,
            ..Default::default()
        }
    }

    /// Whether a read of at most `bytes` bytes that took `millis` ms may be over a
    /// threshold: when not, [`LargeLog::note`] need not be called (every read asks).
    #[inline]
    pub fn may_log(&self, bytes: u64, millis: u64) -> bool {
        bytes > self.config.size_bytes || millis > self.config.time_ms
    }

    /// Logs the read when it is over a threshold (`shape` describes it, asked only
    /// then); whether it was.
    #[allow(clippy::too_many_arguments)]
    pub fn note(
        &self,
        at: i64,
        table: &str,
        region: &str,
        row: &[u8],
        shape: &dyn Fn() -> Shape,
        bytes: u64,
        cells: u64,
        millis: u64,
    ) -> bool {
        let large = bytes > self.config.size_bytes;
        let slow = millis > self.config.time_ms;
        if !large && !slow {
            return false;
        }
        // Described only when logged: every read passes here.
        let shape = shape();
        use std::sync::atomic::Ordering::Relaxed;
        if large {
            self.too_large.fetch_add(1, Relaxed);
        }
        if slow {
            self.too_slow.fetch_add(1, Relaxed);
        }
        let kind = match (large, slow) {
            (true, true) => "responseTooLarge, responseTooSlow",
            (true, false) => "responseTooLarge",
            _ => "responseTooSlow",
        };
        tracing::warn!(
            table,
            region,
            row = %cellar_types::to_string_binary(row),
            bytes,
            cells,
            millis,
            shape = %shape.text,
            advice = %shape.advice,
            "({kind}) a {} returned a large or slow result",
            shape.op
        );
        self.push(LargeResponse {
            at,
            table: table.to_string(),
            region: region.to_string(),
            row: row.to_vec(),
            op: shape.op,
            bytes,
            cells,
            millis,
            kind: kind.to_string(),
            shape: shape.text.clone(),
            advice: shape.advice.clone(),
        });
        true
    }

    /// Logs a read that failed with RowTooBigException (always, whatever the
    /// thresholds).
    pub fn note_row_too_big(
        &self,
        at: i64,
        table: &str,
        region: &str,
        row: &[u8],
        shape: &dyn Fn() -> Shape,
        limit: u64,
    ) {
        let shape = shape();
        self.row_too_big
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::warn!(
            table,
            region,
            row = %cellar_types::to_string_binary(row),
            limit,
            shape = %shape.text,
            "RowTooBigException: a {} read a row over hbase.table.max.rowsize",
            shape.op
        );
        self.push(LargeResponse {
            at,
            table: table.to_string(),
            region: region.to_string(),
            row: row.to_vec(),
            op: shape.op,
            bytes: limit,
            cells: 0,
            millis: 0,
            kind: "RowTooBigException".to_string(),
            shape: shape.text.clone(),
            advice: format!(
                "the row is over hbase.table.max.rowsize ({limit} bytes): {}",
                shape.advice
            ),
        });
    }

    fn push(&self, e: LargeResponse) {
        let mut ring = self.ring.lock().unwrap_or_else(|e| e.into_inner());
        if ring.len() >= self.config.capacity.max(1) {
            ring.pop_front();
        }
        ring.push_back(e);
    }

    /// The logged reads, newest first.
    pub fn entries(&self) -> Vec<LargeResponse> {
        let ring = self.ring.lock().unwrap_or_else(|e| e.into_inner());
        ring.iter().rev().cloned().collect()
    }
}
