//! ClientService's Scan: open a scanner on a region (or on `hbase:meta`), return
//! batches of Results in round trips bounded by `number_of_rows`, the scan's
//! `max_result_size` (capped by `hbase.server.scanner.max.result.size`) and `batch`,
//! and close it at the region's end, at the client's `limit_of_rows`, on request, or
//! when its lease runs out. A region's end answers `more_results_in_region = false`
//! (the client moves to the next region); the row limit answers `more_results =
//! false` (the scan is over). Calls must carry the `next_call_seq` the scanner
//! expects.

use std::collections::VecDeque;

use cellar_api::{Error, ErrorKind, RowResult};
use cellar_protocol::convert::{result_to_pb, scan_from_pb};
use cellar_protocol::pb;
use cellar_region::{CallLimits, TimeLimit};

use super::dispatch::{Call, CallError, CallResult, Reply};
use super::meta;
use super::regions::Target;
use super::scanners::{lock, OpenScanner, Source};

const OUT_OF_ORDER: &str = "org.apache.hadoop.hbase.exceptions.OutOfOrderScannerNextException";

pub fn scan(call: &Call<'_>) -> CallResult {
    let req: pb::ScanRequest = call.param("ScanRequest")?;
    let scanners = &call.ctx.scanners;
    let ttl = scanners.ttl_ms();
    if let (Some(pscan), None) = (&req.scan, req.scanner_id) {
        let region = req
            .region
            .as_ref()
            .ok_or_else(|| Error::invalid("a new scan names no region"))?;
        let mut scan = scan_from_pb(pscan)?;
        scan.limit = None;
        let target = call.ctx.regions.resolve(call.master(), region)?;
        let source = match target {
            Target::Meta => {
                let now = call.ctx.db.region_server().clock().now_millis();
                Source::Meta(VecDeque::from(meta::scan(
                    meta::rows(call.master(), &call.ctx.server_name, now),
                    &scan,
                )))
            }
            Target::Region(r, _) => Source::Region {
                scanner: Box::new(r.scanner(&scan)?),
                region: r,
            },
        };
        let (id, handle) = scanners.open(
            source,
            scan,
            req.limit_of_rows.unwrap_or(0) as u64,
            req.client_handles_partials.unwrap_or(false),
            call.conn.id,
        );
        if req.number_of_rows == Some(0) && !req.close_scanner.unwrap_or(false) {
            return Ok(Reply::new(pb::ScanResponse {
                scanner_id: Some(id),
                more_results: Some(true),
                more_results_in_region: Some(true),
                ttl: Some(ttl),
                ..Default::default()
            }));
        }
        let mut g = lock(&handle);
        return next(call, &mut g, id, &req);
    }
    let id = req
        .scanner_id
        .ok_or_else(|| Error::invalid("a scan request with neither a scan nor a scanner id"))?;
    if req.close_scanner.unwrap_or(false) && req.number_of_rows.unwrap_or(0) == 0 {
        scanners.close(id);
        return Ok(Reply::new(pb::ScanResponse {
            scanner_id: Some(id),
            more_results: Some(false),
            ..Default::default()
        }));
    }
    let handle = scanners.get(id)?;
    let mut g = lock(&handle);
    if req.renew.unwrap_or(false) {
        g.touch(scanners.now());
        return Ok(Reply::new(pb::ScanResponse {
            scanner_id: Some(id),
            more_results: Some(true),
            ttl: Some(ttl),
            ..Default::default()
        }));
    }
    if let Some(seq) = req.next_call_seq {
        if seq != g.next_seq {
            let expected = g.next_seq;
            drop(g);
            scanners.close(id);
            return Err(CallError::with_class(
                Error::new(
                    ErrorKind::UnknownScanner,
                    format!(
                        "Expected nextCallSeq: {expected} But the nextCallSeq got from client: {seq}; scanner={id}"
                    ),
                ),
                OUT_OF_ORDER,
                true,
            ));
        }
    }
    // HBase reads `limit_of_rows` afresh on every call, as the rows still wanted (its
    // client sends what is left of the scan's limit each time).
    if let Some(l) = req.limit_of_rows.filter(|l| *l > 0) {
        g.limit_of_rows = g.rows + u64::from(l);
    }
    next(call, &mut g, id, &req)
}

fn next(call: &Call<'_>, g: &mut OpenScanner, id: u64, req: &pb::ScanRequest) -> CallResult {
    let scanners = &call.ctx.scanners;
    let config = call.ctx.db.config();
    let mut rows = match req.number_of_rows {
        Some(n) if n > 0 => n as usize,
        _ => g.scan.caching.map_or(i32::MAX as usize, |c| c as usize),
    };
    if g.limit_of_rows > 0 {
        rows = rows.min(g.limit_of_rows.saturating_sub(g.rows).max(1) as usize);
    }
    // HBase's time-limited scans: a call that finds nothing for long answers with a
    // heartbeat (when the client handles them) instead of keeping the client waiting
    // past its timeouts.
    let time_limit = req.client_handles_heartbeats.unwrap_or(false).then(|| {
        let clock = call.ctx.db.region_server().clock().clone();
        let limit = match config.scanner_time_limit_ms {
            0 => config.scanner_timeout_ms / 2,
            ms => ms,
        };
        let deadline = clock.monotonic() + std::time::Duration::from_millis(limit);
        TimeLimit { clock, deadline }
    });
    let limits = CallLimits {
        time_limit,
        rows,
        bytes: g
            .scan
            .max_result_size
            .unwrap_or(config.client_scanner_max_result_size)
            .min(config.server_scanner_max_result_size)
            .max(1),
        cells_per_result: g.scan.batch.map_or(usize::MAX, |b| b.max(1) as usize),
        allow_partial: g.client_handles_partials,
    };
    let mut heartbeat = None;
    let mut filter_done = false;
    let step =
        match &mut g.source {
            Source::Region { scanner, .. } => scanner
                .next_call(&limits)
                .map_err(Error::from)
                .inspect(|_| {
                    heartbeat = scanner.take_heartbeat();
                    filter_done = scanner.filter_done();
                }),
            Source::Meta(q) => {
                let n = limits.rows.min(q.len());
                let out: Vec<RowResult> = q.drain(..n).collect();
                let more = !q.is_empty();
                Ok((out, more))
            }
        };
    let (results, more_in_region) = match step {
        Ok(x) => x,
        Err(e) => {
            scanners.close(id);
            return Err(e.into());
        }
    };
    g.rows += results.iter().filter(|r| !r.partial).count() as u64;
    // Only calls that carry a sequence number advance it (the opening call does not).
    if req.next_call_seq.is_some() {
        g.next_seq += 1;
    }
    g.touch(scanners.now());
    let limit_reached = g.limit_of_rows > 0 && g.rows >= g.limit_of_rows;
    // As HBase: a call that returns nothing once the filter is done ends the scan
    // (the client does not go on to the next region); one with results does not.
    let scan_over = limit_reached || (filter_done && results.is_empty());
    if req.close_scanner.unwrap_or(false) || !more_in_region || scan_over {
        scanners.close(id);
    }
    // The call's cell block at its full size at once: grown a row at a time, a block
    // of a hundred rows is copied over and over as it doubles.
    let mut cells = Vec::with_capacity(call.conn.codec.map_or(0, |codec| {
        results
            .iter()
            .flat_map(|r| &r.cells)
            .map(|c| codec.block_size(c))
            .sum()
    }));
    let beat = heartbeat.is_some() && results.is_empty();
    let mut resp = pb::ScanResponse {
        scanner_id: Some(id),
        more_results: Some(!scan_over),
        more_results_in_region: Some(more_in_region && !scan_over),
        ttl: Some(scanners.ttl_ms()),
        heartbeat_message: beat.then_some(true),
        cursor: heartbeat
            .filter(|_| beat && g.scan.need_cursor_result)
            .map(|row| pb::Cursor {
                row: Some(row.into()),
            }),
        ..Default::default()
    };
    for r in &results {
        let pr = result_to_pb(r, call.conn.codec, &mut cells);
        if call.conn.codec.is_some() {
            resp.cells_per_result.push(r.cells.len() as u32);
            resp.partial_flag_per_result.push(r.partial);
        } else {
            resp.results.push(pr);
        }
    }
    Ok(Reply::with_cells(resp, cells))
}
