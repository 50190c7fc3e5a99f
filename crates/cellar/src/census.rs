//! `cellar census`: every row's cell count and bytes, read from a snapshot's store
//! files (so serving carries no load beyond the snapshot itself) — the job HBase users
//! write in Spark over a snapshot, built in. A row's bytes are counted two ways: the
//! sizing formula (row + family + qualifier + value + 20 per cell) and the exact
//! serialized size HBase counts (`Cell.getSerializedSize`: tags only when present) —
//! the same figure large-row tracking and `hfile -s` use. Every cell the files hold
//! counts: each version and each delete marker takes its space until a compaction.
//!
//! A region is read by merging its files by row (all families together), holding one
//! row's sums at a time; a daughter's reference reads its half. Regions run in
//! parallel; each one's rows go to the caller in row order with the region's index.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cellar_api::{Error, ErrorKind, Result};
use cellar_hfile::{BlockCache, FileScanner, HFileReader};

use crate::hbase_snapshot::{HBaseSnapshot, SnapshotRegion};

/// One row's totals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowCensus {
    pub row: Vec<u8>,
    pub cells: u64,
    /// Row + family + qualifier + value + 20 bytes per cell (the sizing formula).
    pub formula_bytes: u64,
    /// HBase's serialized size.
    pub serialized_bytes: u64,
}

/// The regions of a snapshot that serve (split parents left out), in key order.
pub fn serving_regions(snap: &HBaseSnapshot) -> Vec<&SnapshotRegion> {
    let mut r: Vec<&SnapshotRegion> = snap
        .regions
        .iter()
        .filter(|r| !(r.split && r.info.offline))
        .collect();
    r.sort_by(|a, b| a.info.start.cmp(&b.info.start));
    r
}

struct Source {
    scanner: FileScanner<Arc<HFileReader>>,
    /// A reference's half: rows from the split row on (top) or below it.
    half: Option<(Vec<u8>, bool)>,
    done: bool,
}

impl Source {
    fn current_row(&self) -> Option<&[u8]> {
        if self.done {
            return None;
        }
        self.scanner.current().map(|c| c.row())
    }
}

fn corrupt(what: &str, e: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Corrupt, format!("{what}: {e}"))
}

/// Counts one region's rows, giving each to `visit` in row order.
pub fn census_region(
    snap: &HBaseSnapshot,
    region: &SnapshotRegion,
    cache: &Arc<BlockCache>,
    visit: &mut dyn FnMut(RowCensus) -> Result<()>,
) -> Result<()> {
    let mut sources = Vec::new();
    for (family, files) in &region.families {
        for f in files {
            let path = snap.source(region, family, f)?;
            let what = path.display().to_string();
            let reader = HFileReader::open(snap.fs.as_ref(), &path, Some(cache.clone()))
                .map_err(|e| corrupt(&what, e))?;
            let mut scanner = FileScanner::new(Arc::new(reader));
            scanner.set_cache_blocks(false);
            let more = scanner.seek_to_first().map_err(|e| corrupt(&what, e))?;
            let mut s = Source {
                scanner,
                half: f.reference.clone(),
                done: !more,
            };
            // A top half starts at the split row.
            if let Some((split, true)) = &s.half {
                while s.current_row().is_some_and(|r| r < split.as_slice()) {
                    s.done = !s.scanner.advance().map_err(|e| corrupt(&what, e))?;
                }
            }
            sources.push((what, s));
        }
    }
    loop {
        // The smallest current row of every source not yet past its half.
        for (_, s) in &mut sources {
            if let (Some((split, false)), Some(r)) = (&s.half, s.current_row()) {
                if r >= split.as_slice() {
                    s.done = true;
                }
            }
        }
        let Some(row) = sources
            .iter()
            .filter_map(|(_, s)| s.current_row())
            .min()
            .map(<[u8]>::to_vec)
        else {
            return Ok(());
        };
        let mut sums = RowCensus {
            row,
            ..Default::default()
        };
        for (what, s) in &mut sources {
            while s.current_row() == Some(sums.row.as_slice()) {
                if let Some(c) = s.scanner.current() {
                    sums.cells += 1;
                    sums.formula_bytes += (c.row().len()
                        + c.family().len()
                        + c.qualifier().len()
                        + c.value().len()
                        + 20) as u64;
                    sums.serialized_bytes += cellar_region::row_sizes::cell_bytes(c);
                }
                s.done = !s.scanner.advance().map_err(|e| corrupt(what, e))?;
            }
        }
        visit(sums)?;
    }
}

/// Counts every serving region of `snap` on `threads` threads; `visit` gets each
/// region's index (in key order) and its rows in order, and `done` each finished
/// region's index.
pub fn census(
    snap: &HBaseSnapshot,
    threads: usize,
    visit: &(dyn Fn(usize, RowCensus) -> Result<()> + Sync),
    done: &(dyn Fn(usize) + Sync),
) -> Result<()> {
    let regions = serving_regions(snap);
    let cache = Arc::new(BlockCache::new(8 << 20));
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    let worker = || {
        while !failed.load(Ordering::SeqCst) {
            let i = next.fetch_add(1, Ordering::SeqCst);
            let Some(region) = regions.get(i) else { break };
            let result = census_region(snap, region, &cache, &mut |r| visit(i, r));
            match result {
                Ok(()) => done(i),
                Err(e) => {
                    failed.store(true, Ordering::SeqCst);
                    first_error
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert(e);
                }
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads.clamp(1, regions.len().max(1)) {
            s.spawn(worker);
        }
        worker();
    });
    match first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
