//! The client side of a scan (§7.3–7.4): fetches Results from a region scanner in round
//! trips bounded by `caching` rows and `maxResultSize` bytes (the server may cut rows
//! between cells at the size limit), and stitches fragments back as HBase's client does:
//! whole rows by default (CompleteScanResultCache), groups of exactly `batch` cells
//! (BatchScanResultCache), or the fragments themselves when partial results are allowed
//! (AllowPartialScanResultCache). Whole rows larger than `hbase.table.max.rowsize` fail
//! with RowTooBig as soon as they pass it, so no row is held whole beyond that size.

use std::collections::VecDeque;

use cellar_api::{RowResult, Scan};
use cellar_region::{CallLimits, Config, Region, RegionError, RegionScanner, Result};

enum Cache {
    Complete {
        row: Option<RowResult>,
        bytes: u64,
    },
    Batch {
        batch: usize,
        row: Option<RowResult>,
    },
    AllowPartial,
}

/// A row past `hbase.table.max.rowsize` as the client finds it (no family named).
fn row_too_big(limit: u64, row: &[u8]) -> RegionError {
    RegionError::RowTooBig {
        limit,
        row: row.to_vec(),
        family: Vec::new(),
    }
}

/// A scan as a client sees it: an iterator of Results.
pub struct ClientScanner {
    region: RegionScanner,
    limits: CallLimits,
    cache: Cache,
    /// Results of the last call not yet looked at, in order.
    incoming: std::vec::IntoIter<RowResult>,
    /// Results stitched or split from them, ready to go out.
    ready: VecDeque<RowResult>,
    more: bool,
    /// A call found nothing once the filter was done: the whole scan is over, not
    /// only this region's part (HBase's `moreResults` false).
    scan_over: bool,
    max_row_size: u64,
    /// Round trips made so far.
    pub calls: u64,
}

impl ClientScanner {
    /// A scan of `region` as a client runs it.
    pub fn open(region: &Region, scan: &Scan) -> Result<ClientScanner> {
        Ok(ClientScanner::new(
            region.scanner(scan)?,
            scan,
            region.config(),
        ))
    }

    pub fn new(region: RegionScanner, scan: &Scan, config: &Config) -> ClientScanner {
        let bytes = scan
            .max_result_size
            .unwrap_or(config.client_scanner_max_result_size)
            .min(config.server_scanner_max_result_size)
            .max(1);
        let cache = if scan.allow_partial_results {
            Cache::AllowPartial
        } else if let Some(b) = scan.batch {
            Cache::Batch {
                batch: b.max(1) as usize,
                row: None,
            }
        } else {
            Cache::Complete {
                row: None,
                bytes: 0,
            }
        };
        ClientScanner {
            region,
            limits: CallLimits {
                time_limit: None,
                rows: scan.caching.map_or(usize::MAX, |c| c.max(1) as usize),
                bytes,
                cells_per_result: scan.batch.map_or(usize::MAX, |b| b.max(1) as usize),
                allow_partial: true,
            },
            cache,
            incoming: Vec::new().into_iter(),
            ready: VecDeque::new(),
            more: true,
            scan_over: false,
            max_row_size: config.max_row_size,
            calls: 0,
        }
    }

    /// Takes in one Result of a call: returns it when it can go out as it is (a whole
    /// row, the common case), or holds it in the cache (fragments stitched or split,
    /// then ready).
    fn add(&mut self, r: RowResult) -> Result<Option<RowResult>> {
        match &mut self.cache {
            Cache::AllowPartial => {
                if !r.cells.is_empty() {
                    return Ok(Some(r));
                }
            }
            Cache::Complete { row, bytes } => {
                if row.is_none() && !r.partial {
                    // A whole row in one Result (the common case) goes out as it came.
                    if r.size() > self.max_row_size {
                        return Err(row_too_big(self.max_row_size, &r.row));
                    }
                    if !r.cells.is_empty() {
                        return Ok(Some(r));
                    }
                    return Ok(None);
                }
                let acc = row.get_or_insert_with(|| RowResult {
                    row: r.row.clone(),
                    ..RowResult::default()
                });
                *bytes += r.size();
                if *bytes > self.max_row_size {
                    return Err(row_too_big(self.max_row_size, &r.row));
                }
                acc.cells.extend(r.cells);
                if !r.partial {
                    let done = row.take();
                    *bytes = 0;
                    return Ok(done.filter(|d| !d.cells.is_empty()));
                }
            }
            Cache::Batch { batch, row } => {
                let acc = row.get_or_insert_with(|| RowResult {
                    row: r.row.clone(),
                    ..RowResult::default()
                });
                acc.cells.extend(r.cells);
                while acc.cells.len() >= *batch {
                    let rest = acc.cells.split_off(*batch);
                    let full = std::mem::replace(&mut acc.cells, rest);
                    let last = acc.cells.is_empty() && !r.partial;
                    self.ready.push_back(RowResult {
                        row: acc.row.clone(),
                        cells: full,
                        exists: None,
                        partial: !last,
                        cursor: false,
                    });
                }
                if !r.partial {
                    if let Some(d) = row.take().filter(|d| !d.cells.is_empty()) {
                        self.ready.push_back(RowResult {
                            partial: false,
                            ..d
                        });
                    }
                }
            }
        }
        Ok(None)
    }

    /// Whether the scan ends with this region (its filter is done).
    pub fn scan_over(&self) -> bool {
        self.scan_over
    }

    /// The next Result.
    pub fn next_result(&mut self) -> Result<Option<RowResult>> {
        loop {
            if let Some(r) = self.ready.pop_front() {
                return Ok(Some(r));
            }
            // The call's Results are taken in one at a time: a whole row goes out
            // without being moved into the queue.
            if let Some(r) = self.incoming.next() {
                if let Some(out) = self.add(r)? {
                    return Ok(Some(out));
                }
                continue;
            }
            if !self.more {
                return Ok(None);
            }
            let (results, more) = self.region.next_call(&self.limits)?;
            self.calls += 1;
            self.more = more;
            if results.is_empty() && self.region.filter_done() {
                self.scan_over = true;
                self.more = false;
            }
            self.incoming = results.into_iter();
        }
    }
}

impl Iterator for ClientScanner {
    type Item = Result<RowResult>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_result() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => None,
            Err(e) => {
                self.more = false;
                self.ready.clear();
                self.incoming = Vec::new().into_iter();
                Some(Err(e))
            }
        }
    }
}
