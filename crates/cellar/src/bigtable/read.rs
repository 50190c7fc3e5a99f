//! ReadRows: the request's row set as ordered key ranges scanned one after another
//! (keys already sent skipped, so overlapping ranges send a row once), every version of
//! every cell read, Bigtable's filter applied per row, rows cut into chunks and sent in
//! responses of about a mebibyte of whole rows, the row limit counted in rows returned, a
//! `last_scanned_row_key` after a long run of rows the filter left out, and the request's
//! statistics last when it asks for them.

use std::sync::Arc;
use std::time::Instant;

use cellar_api::Scan;
use cellar_bigtable::chunk::RowChunker;
use cellar_bigtable::filter::filter_row;
use cellar_bigtable::v2::read_rows_request::RequestStatsView;
use cellar_bigtable::v2::request_stats::StatsView;
use cellar_bigtable::v2::row_range::{EndKey, StartKey};
use cellar_bigtable::v2::{
    FullReadStatsView, ReadIterationStats, ReadRowsRequest, ReadRowsResponse, RequestLatencyStats,
    RequestStats,
};
use tokio::sync::mpsc::Sender;
use tonic::Status;

use super::TableName;
use crate::client::Connection;

/// Value bytes a chunk carries at most.
const CHUNK_VALUE: usize = 1 << 20;
/// Bytes of chunks after which a response is sent at the next row's end.
const RESPONSE_BYTES: usize = 1 << 20;
/// Rows the filter may leave out in a row before the client hears how far the scan got.
const SKIPPED_ROWS: usize = 1000;

/// One key range: start and end (empty end: the table's end), each closed or open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyRange {
    pub start: Vec<u8>,
    pub start_closed: bool,
    pub end: Vec<u8>,
    pub end_closed: bool,
}

/// The ranges a row set covers, in scan order.
pub(crate) fn ranges(req: &ReadRowsRequest) -> Vec<KeyRange> {
    let mut out = Vec::new();
    if let Some(rs) = &req.rows {
        for k in &rs.row_keys {
            out.push(KeyRange {
                start: k.clone(),
                start_closed: true,
                end: k.clone(),
                end_closed: true,
            });
        }
        for r in &rs.row_ranges {
            let (start, start_closed) = match &r.start_key {
                Some(StartKey::StartKeyClosed(k)) => (k.clone(), true),
                Some(StartKey::StartKeyOpen(k)) => (k.clone(), false),
                None => (Vec::new(), true),
            };
            let (end, end_closed) = match &r.end_key {
                Some(EndKey::EndKeyClosed(k)) => (k.clone(), true),
                Some(EndKey::EndKeyOpen(k)) => (k.clone(), false),
                None => (Vec::new(), false),
            };
            out.push(KeyRange {
                start,
                start_closed,
                end,
                end_closed,
            });
        }
    }
    let whole = req
        .rows
        .as_ref()
        .is_none_or(|rs| rs.row_keys.is_empty() && rs.row_ranges.is_empty());
    if whole {
        out.push(KeyRange {
            start: Vec::new(),
            start_closed: true,
            end: Vec::new(),
            end_closed: false,
        });
    }
    if req.reversed {
        // Highest end first; an empty end is the table's end.
        out.sort_by(|a, b| match (a.end.is_empty(), b.end.is_empty()) {
            (true, true) => std::cmp::Ordering::Equal,
            (true, false) => std::cmp::Ordering::Less,
            (false, true) => std::cmp::Ordering::Greater,
            (false, false) => b.end.cmp(&a.end),
        });
    } else {
        out.sort_by(|a, b| a.start.cmp(&b.start));
    }
    out
}

fn scan_of(r: &KeyRange, reversed: bool) -> Scan {
    let s = Scan::new().max_versions(i32::MAX as u32).reversed(reversed);
    if reversed {
        let s = if r.end.is_empty() {
            s
        } else {
            s.with_start_row(r.end.clone(), r.end_closed)
        };
        if r.start.is_empty() {
            s
        } else {
            s.with_stop_row(r.start.clone(), r.start_closed)
        }
    } else {
        let s = if r.start.is_empty() {
            s
        } else {
            s.with_start_row(r.start.clone(), r.start_closed)
        };
        if r.end.is_empty() {
            s
        } else {
            s.with_stop_row(r.end.clone(), r.end_closed)
        }
    }
}

/// A small pseudo-random source for `row_sample_filter`.
fn sampler() -> impl FnMut() -> f64 {
    #[allow(clippy::disallowed_methods)] // a seed, not a clock reading
    let mut x = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0x9e37_79b9_7f4a_7c15, |d| d.as_nanos() as u64)
        | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Runs the read, sending responses on `tx` (on a blocking thread).
pub(crate) fn run(
    conn: Arc<dyn Connection>,
    req: ReadRowsRequest,
    tx: Sender<Result<ReadRowsResponse, Status>>,
) {
    #[allow(clippy::disallowed_methods)] // the request's own latency, reported to it
    let started = Instant::now();
    if let Err(e) = read(&conn, &req, &tx, started) {
        let _ = tx.blocking_send(Err(e));
    }
}

fn read(
    conn: &Arc<dyn Connection>,
    req: &ReadRowsRequest,
    tx: &Sender<Result<ReadRowsResponse, Status>>,
    started: Instant,
) -> Result<(), Status> {
    if req.rows_limit < 0 {
        return Err(Status::invalid_argument("rows_limit must not be negative"));
    }
    let name = TableName::parse(&req.table_name)?;
    let st = super::table_status(&name);
    let table = conn.table(&name.cellar()).map_err(&st)?;
    let limit = if req.rows_limit == 0 {
        u64::MAX
    } else {
        req.rows_limit as u64
    };
    let chunker = RowChunker::new(CHUNK_VALUE);
    let mut sample = sampler();
    let mut stats = ReadIterationStats::default();
    let mut pending = ReadRowsResponse::default();
    let mut pending_bytes = 0usize;
    let mut skipped = 0usize;
    let mut last: Option<Vec<u8>> = None;
    let send = |r: ReadRowsResponse| -> Result<(), Status> {
        tx.blocking_send(Ok(r))
            .map_err(|_| Status::cancelled("the client went away"))
    };
    'ranges: for range in ranges(req) {
        for row in table.scan(&scan_of(&range, req.reversed)).map_err(&st)? {
            let row = row.map_err(&st)?;
            if let Some(l) = &last {
                let seen = if req.reversed {
                    row.row >= *l
                } else {
                    row.row <= *l
                };
                if seen {
                    continue;
                }
            }
            last = Some(row.row.clone());
            stats.rows_seen_count += 1;
            stats.cells_seen_count += row.cells.len() as i64;
            let cells = super::bigtable_cells(&row.cells);
            let out = filter_row(req.filter.as_ref(), &row.row, cells, &mut sample)
                .map_err(|e| Status::invalid_argument(e.0))?;
            match out {
                Some(cells) if !cells.is_empty() => {
                    skipped = 0;
                    stats.rows_returned_count += 1;
                    stats.cells_returned_count += cells.len() as i64;
                    // A row never spans responses: clients (google-cloud-bigtable's
                    // Python merger among them) expect each response to start a row.
                    for c in chunker.chunks(&row.row, cells) {
                        pending_bytes += c.value.len() + 64;
                        pending.chunks.push(c);
                    }
                    if pending_bytes >= RESPONSE_BYTES {
                        send(std::mem::take(&mut pending))?;
                        pending_bytes = 0;
                    }
                    if stats.rows_returned_count as u64 >= limit {
                        break 'ranges;
                    }
                }
                _ => {
                    skipped += 1;
                    if skipped >= SKIPPED_ROWS && pending.chunks.is_empty() {
                        send(ReadRowsResponse {
                            last_scanned_row_key: row.row.clone(),
                            ..Default::default()
                        })?;
                        skipped = 0;
                    }
                }
            }
        }
    }
    if !pending.chunks.is_empty() {
        send(pending)?;
    }
    if req.request_stats_view == RequestStatsView::RequestStatsFull as i32 {
        let elapsed = started.elapsed();
        send(ReadRowsResponse {
            request_stats: Some(RequestStats {
                stats_view: Some(StatsView::FullReadStatsView(FullReadStatsView {
                    read_iteration_stats: Some(stats),
                    request_latency_stats: Some(RequestLatencyStats {
                        frontend_server_latency: Some(prost_types::Duration {
                            seconds: elapsed.as_secs() as i64,
                            nanos: elapsed.subsec_nanos() as i32,
                        }),
                    }),
                })),
            }),
            ..Default::default()
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cellar_bigtable::v2::{RowRange, RowSet};

    #[test]
    fn row_sets_become_ordered_ranges() {
        let req = ReadRowsRequest {
            rows: Some(RowSet {
                row_keys: vec![b"m".to_vec(), b"a".to_vec()],
                row_ranges: vec![RowRange {
                    start_key: Some(StartKey::StartKeyOpen(b"c".to_vec())),
                    end_key: None,
                }],
            }),
            ..Default::default()
        };
        let r = ranges(&req);
        let starts: Vec<&[u8]> = r.iter().map(|r| r.start.as_slice()).collect();
        assert_eq!(starts, [&b"a"[..], b"c", b"m"]);
        assert!(!r[1].start_closed && r[1].end.is_empty());
        let rev = ReadRowsRequest {
            reversed: true,
            ..req
        };
        let rr = ranges(&rev);
        let ends: Vec<&[u8]> = rr.iter().map(|r| r.end.as_slice()).collect();
        assert_eq!(ends, [&b""[..], b"m", b"a"], "the open end first");
        assert_eq!(ranges(&ReadRowsRequest::default()).len(), 1);
    }
}
