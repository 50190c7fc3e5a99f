//! Compactions: which files to merge (HBase's exploring ratio policy with the
//! `hbase.hstore.compaction.*` keys), and the stream of cells a flush or compaction
//! writes, each judged by the [`CompactionMatcher`] (what a minor and a major compaction
//! drop is described there).

use std::sync::Arc;

use cellar_types::Cell;

use crate::compaction_matcher::CompactionMatcher;
use crate::config::Config;
use crate::error::Result;
use crate::heap::Heap;
use crate::store::StoreFile;

/// HBase's `removeUnneededFiles`, run before a compaction picks its files: with a TTL
/// and no MIN_VERSIONS, a file whose newest cell has expired goes whole, without being
/// rewritten, except the store's newest file (it holds the highest sequence id).
pub fn remove_expired_files(store: &crate::store::Store, now: i64) -> Result<()> {
    let Some(ttl) = store.family.ttl_millis() else {
        return Ok(());
    };
    if store.family.min_versions > 0 {
        return Ok(());
    }
    let oldest_unexpired = now.saturating_sub(ttl);
    let mut files = store.files();
    files.sort_by_key(|f| f.max_seq_id);
    files.pop();
    // As HBase reads a file's time range: a missing range, or the tracker's initial -1
    // (an empty file), means "newest timestamp unknown", so such a file never expires.
    let newest = |f: &StoreFile| match f.time_range {
        Some((_, max)) if max != -1 => max,
        _ => i64::MAX,
    };
    let expired: Vec<_> = files
        .into_iter()
        .filter(|f| newest(f) < oldest_unexpired)
        .collect();
    if !expired.is_empty() {
        tracing::info!(
            family = %cellar_types::to_string_binary(&store.family.name),
            files = expired.len(),
            "expired store files removed"
        );
        store.commit_compaction(&expired, None)?;
    }
    Ok(())
}

/// Picks files for a minor compaction: the contiguous window (oldest first) of
/// `compaction.min..=compaction.max` files with the most files (then the smallest total)
/// in which every file is at most `ratio` × the sum of the others, windows whose total is
/// under `min_size` (`compaction.min.size`, by default the region's flush size) passing
/// automatically. Empty when nothing qualifies.
pub fn select_minor(files: &[Arc<StoreFile>], c: &Config, min_size: u64) -> Vec<Arc<StoreFile>> {
    let candidates: Vec<&Arc<StoreFile>> = files
        .iter()
        .filter(|f| f.size <= c.compaction_max_size)
        .collect();
    let sizes: Vec<u64> = candidates.iter().map(|f| f.size).collect();
    match select_window(&sizes, c, min_size) {
        Some(range) => candidates[range].iter().map(|f| (*f).clone()).collect(),
        None => Vec::new(),
    }
}

/// The exploring policy over file sizes (oldest first): the window to compact, if any.
pub fn select_window(sizes: &[u64], c: &Config, min_size: u64) -> Option<std::ops::Range<usize>> {
    let n = sizes.len();
    let min = c.compaction_min.max(2);
    let max = c.compaction_max.max(min);
    if n < min {
        return None;
    }
    let mut best: Option<(usize, usize, u64)> = None; // (start, len, total)
    for start in 0..n {
        for len in min..=max.min(n - start) {
            let window = &sizes[start..start + len];
            let total: u64 = window.iter().sum();
            if total > c.compaction_max_size {
                continue;
            }
            let in_ratio = total < min_size
                || window
                    .iter()
                    .all(|s| *s as f64 <= c.compaction_ratio * (total - s) as f64);
            if !in_ratio {
                continue;
            }
            let better = match best {
                None => true,
                Some((_, blen, btotal)) => len > blen || (len == blen && total < btotal),
            };
            if better {
                best = Some((start, len, total));
            }
        }
    }
    if let Some((start, len, _)) = best {
        return Some(start..start + len);
    }
    if n < c.blocking_store_files {
        return None;
    }
    // Stuck at the blocking count: compact the smallest window anyway.
    (0..=n - min)
        .min_by_key(|s| sizes[*s..*s + min].iter().sum::<u64>())
        .map(|s| s..s + min)
}

/// Whether a periodic major compaction is due for a store whose oldest file was created
/// at `oldest_create_time`. The jitter is fixed per store (`seed`).
pub fn major_due(files: &[Arc<StoreFile>], c: &Config, now: i64, seed: u64) -> bool {
    if c.major_compaction_period_ms == 0 || files.is_empty() {
        return false;
    }
    if files.len() == 1 && files[0].major {
        return false;
    }
    let oldest = files
        .iter()
        .map(|f| {
            f.reader
                .file_info()
                .get_i64(cellar_hfile::file_info::CREATE_TIME_TS)
                .unwrap_or(0)
        })
        .min()
        .unwrap_or(0);
    let period = c.major_compaction_period_ms as f64;
    // A deterministic fraction in [-1, 1) from the seed.
    let frac =
        ((seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0;
    let due_after = (period + period * c.major_compaction_jitter * frac).max(0.0) as i64;
    now.saturating_sub(oldest) >= due_after
}

/// The cells of a flush or compaction, in order, with the matcher's drops applied.
pub struct CompactionStream {
    heap: Heap,
    matcher: CompactionMatcher,
    pub kept: u64,
    pub dropped: u64,
}

impl CompactionStream {
    pub fn new(heap: Heap, matcher: CompactionMatcher) -> CompactionStream {
        CompactionStream {
            heap,
            matcher,
            kept: 0,
            dropped: 0,
        }
    }

    fn next_cell(&mut self) -> Result<Option<Cell>> {
        loop {
            let Some(cell) = self.heap.peek().cloned() else {
                return Ok(None);
            };
            self.heap.advance()?;
            let keep = self.matcher.keep(&cell);
            if keep {
                self.kept += 1;
                return Ok(Some(cell));
            }
            self.dropped += 1;
        }
    }
}

impl Iterator for CompactionStream {
    type Item = Result<Cell>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_cell().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf() -> Config {
        Config::default()
    }

    #[test]
    fn too_few_files_select_nothing() {
        assert_eq!(select_window(&[10, 10], &conf(), 0), None);
    }

    #[test]
    fn the_ratio_excludes_a_big_old_file() {
        // 1000 > 1.2 × (10+10+10): the window without it wins.
        assert_eq!(select_window(&[1000, 10, 10, 10], &conf(), 0), Some(1..4));
        // Everything in ratio: all four.
        assert_eq!(select_window(&[30, 10, 10, 10], &conf(), 0), Some(0..4));
    }

    #[test]
    fn windows_are_capped_at_compaction_max() {
        let sizes = vec![10u64; 15];
        assert_eq!(select_window(&sizes, &conf(), 0).map(|r| r.len()), Some(10));
    }

    #[test]
    fn small_windows_pass_under_min_size() {
        // 5000 > 1.2 × 20: out of ratio, but the window is under the minimum size.
        assert_eq!(select_window(&[5000, 10, 10], &conf(), 1 << 20), Some(0..3));
        // A window of exactly the minimum size takes the ratio test (HBase: size >=
        // minCompactSize); one byte under, it passes.
        assert_eq!(select_window(&[5000, 10, 10], &conf(), 5020), None);
        assert_eq!(select_window(&[5000, 10, 10], &conf(), 5021), Some(0..3));
    }

    #[test]
    fn a_stuck_store_compacts_its_smallest_window() {
        let c = Config {
            blocking_store_files: 4,
            ..conf()
        };
        // Each file is far larger than the sum of the next ones: no window in ratio.
        let sizes = [100_000, 10_000, 1_000, 100, 10];
        assert_eq!(select_window(&sizes, &conf(), 0), None);
        assert_eq!(select_window(&sizes, &c, 0), Some(2..5));
    }
}
