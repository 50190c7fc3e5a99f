//! A scan across a table's regions, as HBase's client runs it: a scanner opened on
//! each region in turn (in the scan's direction), batches fetched with the
//! `next_call_seq` each expects, and the server's partial Results stitched back into
//! whole rows (or exactly `batch` cells, or passed through when the scan allows
//! partial results). A region that moves or splits mid-scan, an expired lease or an
//! out-of-order call reopens the scan after the last row returned, so nothing is
//! returned twice or skipped.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use cellar_api::{Error, ErrorKind, Result, Retry, RowResult, Scan};
use cellar_protocol::convert::scan_to_pb;
use cellar_protocol::{pb, service};

use crate::connection::{decode_scan_results, RegionLocation};
use crate::table::Table;

struct Open {
    loc: RegionLocation,
    id: u64,
    seq: u64,
}

/// The results of a scan.
pub struct ResultScanner {
    table: Table,
    scan: Scan,
    open: Option<Open>,
    /// Where the next region scan starts, and whether that row is included.
    from: Option<(Vec<u8>, bool)>,
    ready: VecDeque<RowResult>,
    /// Cells of the row being stitched (complete-row or batch mode).
    row: Option<RowResult>,
    /// The last row handed out whole (a restart resumes after it).
    last_row: Option<Vec<u8>>,
    /// The row of the last Result handed out, when it was partial.
    partial_row: Option<Vec<u8>>,
    rows: u64,
    done: bool,
    attempt: u32,
}

impl ResultScanner {
    pub(crate) fn new(table: Table, scan: Scan) -> ResultScanner {
        ResultScanner {
            table,
            from: Some((scan.start_row.clone(), scan.start_inclusive)),
            scan,
            open: None,
            ready: VecDeque::new(),
            row: None,
            last_row: None,
            partial_row: None,
            rows: 0,
            done: false,
            attempt: 0,
        }
    }

    /// The next Result, or `None` at the end of the scan.
    pub async fn next(&mut self) -> Option<Result<RowResult>> {
        loop {
            if let Some(r) = self.ready.pop_front() {
                if r.cursor {
                    // Where a long, empty stretch of the scan had got to.
                    return Some(Ok(r));
                }
                // A batched row may end on a Result still marked partial (HBase marks
                // it so when the batch filled at the row's last cell): the next row
                // completes it, as HBase's own client counts.
                if let Some(p) = self.partial_row.take() {
                    if p != r.row {
                        self.rows += 1;
                        self.last_row = Some(p);
                    }
                }
                if r.partial {
                    self.partial_row = Some(r.row.clone());
                } else {
                    self.rows += 1;
                    self.last_row = Some(r.row.clone());
                }
                return Some(Ok(r));
            }
            if self.done {
                return None;
            }
            if let Err(e) = self.fetch().await {
                let e = match e.kind() {
                    ErrorKind::NotServingRegion => self
                        .table
                        .connection()
                        .disabled_error(self.table.name())
                        .await
                        .unwrap_or(e),
                    _ => e,
                };
                let retryable = e.retry() != Retry::Never || e.kind() == ErrorKind::UnknownScanner;
                if retryable && self.attempt < self.table.connection().config().retries {
                    // The failed scanner is closed before a new one opens, as HBase's
                    // client does: left open it would hold its read point (keeping
                    // cells a compaction could drop) until its lease ran out.
                    if e.kind() != ErrorKind::UnknownScanner {
                        if let Some(o) = &self.open {
                            let (id, server) = (o.id, o.loc.server.clone());
                            self.close_on_server(id, &server).await;
                        }
                    }
                    self.restart();
                    tokio::time::sleep(self.table.connection().config().backoff(self.attempt))
                        .await;
                    self.attempt += 1;
                    continue;
                }
                self.done = true;
                self.close_current().await;
                return Some(Err(crate::connection::named(e, self.table.name())));
            }
        }
    }

    /// Collects every remaining Result.
    pub async fn collect(mut self) -> Result<Vec<RowResult>> {
        let mut out = Vec::new();
        while let Some(r) = self.next().await {
            out.push(r?);
        }
        Ok(out)
    }

    /// Closes the scanner on the server (also done at the end of the scan).
    pub async fn close(mut self) {
        self.done = true;
        self.close_current().await;
    }

    async fn close_current(&mut self) {
        if let Some(o) = self.open.take() {
            self.close_on_server(o.id, &o.loc.server).await;
        }
    }

    /// Asks the server to close scanner `id` (best effort: it may be gone already).
    async fn close_on_server(&self, id: u64, server: &str) {
        let req = pb::ScanRequest {
            scanner_id: Some(id),
            close_scanner: Some(true),
            number_of_rows: Some(0),
            ..Default::default()
        };
        if let Ok(rpc) = self.table.connection().rpc(server, service::CLIENT).await {
            let _ = rpc
                .call::<_, pb::ScanResponse>(
                    "Scan",
                    &req,
                    &[],
                    self.table.connection().config().rpc_timeout,
                )
                .await;
        }
    }

    /// After a failure: drop the open scanner and any half-stitched row, and resume
    /// after the last row returned whole.
    fn restart(&mut self) {
        if let Some(o) = self.open.take() {
            self.table
                .connection()
                .invalidate(self.table.name(), Some(&o.loc.info.start));
        }
        self.row = None;
        // The row is read again from its start: not a finished row.
        self.partial_row = None;
        self.from = Some(match &self.last_row {
            Some(r) => (r.clone(), false),
            None => (self.scan.start_row.clone(), self.scan.start_inclusive),
        });
    }

    fn remaining_limit(&self) -> Option<u64> {
        self.scan.limit.map(|l| l.saturating_sub(self.rows))
    }

    async fn fetch(&mut self) -> Result<()> {
        if self.open.is_none() {
            // Rows never span regions: a row left partial by the last region is whole.
            if let Some(p) = self.partial_row.take() {
                self.rows += 1;
                self.last_row = Some(p);
            }
        }
        if self.open.is_none()
            && self.scan.batch.is_some_and(|b| b > 0)
            && self
                .scan
                .filter
                .as_ref()
                .is_some_and(|f| f.has_filter_row())
        {
            // HBase's client refuses this in Scan.setBatch; its server would answer
            // with a plain IOException, retried until the retries run out.
            return Err(Error::new(
                ErrorKind::InvalidRequest,
                "IncompatibleFilterException: Cannot set batch on a scan using a filter that returns true for filter.hasFilterRow",
            ));
        }
        if self.remaining_limit() == Some(0) {
            self.done = true;
            self.close_current().await;
            return Ok(());
        }
        let conn = self.table.connection().clone();
        let cfg = conn.config().clone();
        // HBase reads these counts as Java ints.
        let caching = self
            .scan
            .caching
            .unwrap_or(cfg.scanner_caching)
            .clamp(1, i32::MAX as u32);
        let remaining = self
            .remaining_limit()
            .map(|l| l.min(i32::MAX as u64) as u32);
        let (loc, req) = match &mut self.open {
            Some(o) => (
                o.loc.clone(),
                pb::ScanRequest {
                    scanner_id: Some(o.id),
                    number_of_rows: Some(caching),
                    // HBase's server applies the limit per call: what is left of it.
                    limit_of_rows: remaining,
                    next_call_seq: Some(o.seq),
                    client_handles_partials: Some(true),
                    client_handles_heartbeats: Some(true),
                    ..Default::default()
                },
            ),
            None => {
                let Some((from, inclusive)) = self.from.clone() else {
                    self.done = true;
                    return Ok(());
                };
                let loc = self.region_for(&from, inclusive).await?;
                let mut s = self.scan.clone();
                s.start_row = from;
                s.start_inclusive = inclusive;
                if s.max_result_size.is_none() {
                    s.max_result_size = Some(cfg.scanner_max_result_size);
                }
                let req = pb::ScanRequest {
                    region: Some(loc.specifier()),
                    scan: Some(scan_to_pb(&s)),
                    number_of_rows: Some(caching),
                    client_handles_partials: Some(true),
                    client_handles_heartbeats: Some(true),
                    limit_of_rows: remaining,
                    ..Default::default()
                };
                (loc, req)
            }
        };
        let rpc = conn.rpc(&loc.server, service::CLIENT).await?;
        let (resp, block): (pb::ScanResponse, _) =
            rpc.call("Scan", &req, &[], cfg.rpc_timeout).await?;
        let results = decode_scan_results(&resp, block, rpc.codec())?;
        // Retries are counted until the scan moves on: a call that succeeds without a
        // result (reopening where the last failure left off) does not start them over.
        if !results.is_empty() {
            self.attempt = 0;
        }
        match (&mut self.open, resp.scanner_id) {
            (Some(o), _) => o.seq += 1,
            (None, Some(id)) => {
                self.open = Some(Open {
                    loc: loc.clone(),
                    id,
                    seq: 0,
                })
            }
            (None, None) => {}
        }
        let heartbeat = resp.heartbeat_message.unwrap_or(false) && results.is_empty();
        for r in results {
            self.add(r);
        }
        if heartbeat && self.scan.need_cursor_result && self.row.is_none() {
            if let Some(row) = resp.cursor.as_ref().and_then(|c| c.row.clone()) {
                self.ready.push_back(RowResult::cursor_at(row.to_vec()));
            }
        }
        let more = resp.more_results.unwrap_or(true);
        let more_in_region = resp.more_results_in_region.unwrap_or(true);
        if !more {
            self.finish_row();
            self.open = None;
            self.done = true;
        } else if !more_in_region {
            // Rows never span regions: a row still being stitched is whole, and
            // counts against the limit before the next region is asked (found by the
            // HBase oracle: its size limits leave a region's last row marked partial).
            self.finish_row();
            self.open = None;
            self.from = self.next_region(&loc);
            if self.from.is_none() {
                self.done = true;
            }
        }
        Ok(())
    }

    /// The region to open at `from`: forward, the one holding it; reversed, the one
    /// holding it, or for an exclusive region-boundary start the one before.
    async fn region_for(&self, from: &[u8], inclusive: bool) -> Result<RegionLocation> {
        let conn = self.table.connection();
        if !self.scan.reversed {
            return conn.locate(self.table.name(), from, false).await;
        }
        if from.is_empty() {
            let regions = conn.regions(self.table.name()).await?;
            return regions.last().cloned().ok_or_else(|| {
                Error::new(ErrorKind::TableNotFound, self.table.name().to_string())
            });
        }
        let loc = conn.locate(self.table.name(), from, false).await?;
        if !inclusive && loc.info.start.as_slice() == from {
            let regions = conn.regions(self.table.name()).await?;
            return regions
                .into_iter()
                .find(|r| r.info.end.as_slice() == from)
                .ok_or_else(|| {
                    Error::new(
                        ErrorKind::NotServingRegion,
                        "no region before the scan start",
                    )
                });
        }
        Ok(loc)
    }

    /// Where the scan continues after `loc`, or `None` when it is over.
    fn next_region(&self, loc: &RegionLocation) -> Option<(Vec<u8>, bool)> {
        if self.scan.reversed {
            if loc.info.start.is_empty() {
                return None;
            }
            if !self.scan.stop_row.is_empty()
                && self.scan.stop_row.as_slice() >= loc.info.start.as_slice()
            {
                return None;
            }
            Some((loc.info.start.clone(), false))
        } else {
            if loc.info.end.is_empty() {
                return None;
            }
            if !self.scan.stop_row.is_empty()
                && self.scan.stop_row.as_slice() <= loc.info.end.as_slice()
            {
                return None;
            }
            Some((loc.info.end.clone(), true))
        }
    }

    fn finish_row(&mut self) {
        if let Some(r) = self.row.take().filter(|r| !r.cells.is_empty()) {
            self.ready.push_back(RowResult {
                partial: false,
                ..r
            });
        }
    }

    /// Adds a server Result to the stitcher.
    fn add(&mut self, r: RowResult) {
        if self.scan.allow_partial_results {
            self.ready.push_back(r);
            return;
        }
        if let Some(cur) = &self.row {
            if cur.row != r.row {
                self.finish_row();
            }
        }
        let partial = r.partial;
        match &mut self.row {
            Some(cur) => cur.cells.extend(r.cells),
            None => self.row = Some(RowResult { partial: true, ..r }),
        }
        if let Some(batch) = self.scan.batch.map(|b| b.max(1) as usize) {
            while self.row.as_ref().is_some_and(|c| c.cells.len() >= batch) {
                let Some(cur) = self.row.as_mut() else { break };
                let rest = cur.cells.split_off(batch);
                let head = RowResult {
                    row: cur.row.clone(),
                    cells: std::mem::replace(&mut cur.cells, rest),
                    partial: true,
                    ..RowResult::default()
                };
                let last = !partial && cur.cells.is_empty();
                self.ready.push_back(RowResult {
                    partial: !last,
                    ..head
                });
                if last {
                    self.row = None;
                }
            }
        }
        if !partial {
            self.finish_row();
        }
    }

    /// The scan as a `Stream` of Results.
    pub fn into_stream(self) -> ScanStream {
        ScanStream {
            inner: Some(self),
            pending: None,
        }
    }
}

type Step =
    Pin<Box<dyn std::future::Future<Output = (ResultScanner, Option<Result<RowResult>>)> + Send>>;

/// A scan as a `futures_core::Stream`.
pub struct ScanStream {
    inner: Option<ResultScanner>,
    pending: Option<Step>,
}

impl futures_core::Stream for ScanStream {
    type Item = Result<RowResult>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.pending.is_none() {
            let Some(mut s) = self.inner.take() else {
                return Poll::Ready(None);
            };
            self.pending = Some(Box::pin(async move {
                let r = s.next().await;
                (s, r)
            }));
        }
        let Some(fut) = self.pending.as_mut() else {
            return Poll::Ready(None);
        };
        match fut.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready((s, r)) => {
                self.pending = None;
                if r.is_some() {
                    self.inner = Some(s);
                }
                Poll::Ready(r)
            }
        }
    }
}
