//! A bounded LRU block cache shared between readers: raw blocks (index, bloom) and
//! decoded data blocks, keyed by (file id, block offset), bounded in bytes.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use std::cmp::Ordering;

use cellar_types::{compare_keys, row_prefix, same_bytes, Cell, KeyRef};

use crate::block::{Block, BlockHeader};

/// A decoded data block.
#[derive(Debug)]
pub struct DataBlock {
    pub offset: u64,
    pub header: BlockHeader,
    pub cells: Vec<Cell>,
    /// Bytes every row of the block starts with (sorted rows: the first and last
    /// rows' common prefix).
    common: usize,
    /// Each cell's row prefix after those common bytes (`cellar_types::row_prefix`),
    /// side by side: a seek narrows to the cells of its row's prefix through these
    /// 8-byte words, touching a few cache lines instead of every probed cell's struct
    /// and buffer.
    prefixes: Vec<u64>,
}

impl DataBlock {
    pub fn new(offset: u64, header: BlockHeader, cells: Vec<Cell>) -> DataBlock {
        let common = match (cells.first(), cells.last()) {
            (Some(a), Some(b)) => a
                .row()
                .iter()
                .zip(b.row())
                .take_while(|(x, y)| x == y)
                .count(),
            _ => 0,
        };
        let prefixes = cells
            .iter()
            .map(|c| row_prefix(c.row().get(common..).unwrap_or_default()))
            .collect();
        DataBlock {
            offset,
            header,
            cells,
            common,
            prefixes,
        }
    }

    /// Bytes held: the cells and the buffers they view (cells of NONE and ROW_INDEX_V1
    /// blocks view one shared buffer, which their views tile), and the row prefixes.
    pub fn heap_size(&self) -> usize {
        std::mem::size_of::<DataBlock>()
            + self.prefixes.len() * 8
            + self
                .cells
                .iter()
                .map(|c| std::mem::size_of::<Cell>() + c.buffer_len())
                .sum::<usize>()
    }

    /// The index of the first cell at or after `from` whose key is ≥ `key` (sequence
    /// ids ignored); `cells.len()` when there is none. The row prefixes bound the cells
    /// that can hold the answer; only those are compared in full.
    pub fn lower_bound(&self, from: usize, key: &KeyRef<'_>) -> usize {
        let from = from.min(self.cells.len());
        let full = |cells: &[Cell]| {
            cells.partition_point(|c| compare_keys(&c.key_ref(), key) == Ordering::Less)
        };
        let shares_common = self.cells.first().is_some_and(|first| {
            key.row.len() >= self.common
                && same_bytes(&key.row[..self.common], &first.row()[..self.common])
        });
        if !shares_common {
            // The key's row orders the same way against every row of the block.
            return from + full(&self.cells[from..]);
        }
        let kp = row_prefix(&key.row[self.common..]);
        let prefixes = &self.prefixes[from..];
        let lo = from + prefixes.partition_point(|p| *p < kp);
        let hi = from + prefixes.partition_point(|p| *p <= kp);
        // A seek mostly lands on the first cell of its prefix's run (a Get's first cell
        // of the row): one comparison settles it before the binary search.
        match self.cells.get(lo).filter(|_| lo < hi) {
            Some(c) if compare_keys(&c.key_ref(), key) != Ordering::Less => lo,
            Some(_) => lo + 1 + full(&self.cells[lo + 1..hi]),
            None => lo,
        }
    }

    /// Offset of the block that follows this one.
    pub fn next_offset(&self) -> u64 {
        self.offset + self.header.on_disk_size_with_header()
    }
}

/// What the cache holds.
#[derive(Debug, Clone)]
pub enum Cached {
    Raw(Arc<Block>),
    Data(Arc<DataBlock>),
}

impl Cached {
    fn size(&self) -> usize {
        match self {
            Cached::Raw(b) => b.heap_size(),
            Cached::Data(d) => d.heap_size(),
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    /// Keys are the cache's own (file id, offset): a fast hash, not SipHash.
    map: HashMap<(u64, u64), (Cached, usize, u64), foldhash::fast::RandomState>,
    order: BTreeMap<u64, (u64, u64)>,
    tick: u64,
    used: usize,
    hits: u64,
    misses: u64,
}

/// One shard: a least-recently-used map bounded by its share of the bytes.
#[derive(Debug)]
struct Shard {
    capacity: usize,
    inner: Mutex<Inner>,
}

/// A least-recently-used cache bounded by the bytes its blocks hold. A large cache is
/// split into shards by block, each with its own lock and its share of the bytes (as
/// RocksDB's LRU cache is): readers on several cores then rarely meet on one lock. A
/// cache under [`SHARD_BYTES`] per shard keeps one shard, exact LRU over all of it.
#[derive(Debug)]
pub struct BlockCache {
    shards: Vec<Shard>,
    /// log2 of the shard count.
    bits: u32,
}

/// The least bytes a shard holds (a shard must hold many blocks for its own LRU order
/// to stand for the whole cache's).
pub const SHARD_BYTES: usize = 8 << 20;

/// The most shards.
const MAX_SHARD_BITS: u32 = 4;

/// Hit and miss counts and bytes in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub used_bytes: usize,
    pub blocks: usize,
}

impl BlockCache {
    pub fn new(capacity_bytes: usize) -> BlockCache {
        let mut bits = 0;
        while bits < MAX_SHARD_BITS && capacity_bytes >> (bits + 1) >= SHARD_BYTES {
            bits += 1;
        }
        let shards = (0..1usize << bits)
            .map(|_| Shard {
                capacity: capacity_bytes >> bits,
                inner: Mutex::default(),
            })
            .collect();
        BlockCache { shards, bits }
    }

    /// How many shards the cache is split into.
    pub fn shard_count(&self) -> usize {
        self.shards.len()
    }

    fn shard(&self, file: u64, offset: u64) -> &Shard {
        if self.bits == 0 {
            return &self.shards[0];
        }
        let h =
            (file.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ offset).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        &self.shards[(h >> (64 - self.bits)) as usize]
    }

    pub fn get(&self, file: u64, offset: u64) -> Option<Cached> {
        self.shard(file, offset).get(file, offset)
    }

    pub fn insert(&self, file: u64, offset: u64, block: Cached) {
        self.shard(file, offset).insert(file, offset, block)
    }

    /// Drops every block of one file (when the file is deleted).
    pub fn evict_file(&self, file: u64) {
        for s in &self.shards {
            s.evict_file(file);
        }
    }

    pub fn stats(&self) -> CacheStats {
        let mut out = CacheStats {
            hits: 0,
            misses: 0,
            used_bytes: 0,
            blocks: 0,
        };
        for s in &self.shards {
            let g = s.lock();
            out.hits += g.hits;
            out.misses += g.misses;
            out.used_bytes += g.used;
            out.blocks += g.map.len();
        }
        out
    }
}

impl Shard {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn get(&self, file: u64, offset: u64) -> Option<Cached> {
        let mut g = self.lock();
        let inner = &mut *g;
        inner.tick += 1;
        let tick = inner.tick;
        let recent = inner.map.len() as u64 / 4;
        match inner.map.get_mut(&(file, offset)) {
            Some((block, _, t)) => {
                // A block used within the last quarter of the cache's worth of accesses
                // keeps its place: hot blocks skip the reordering, and a block that
                // recent is far from the eviction end anyway.
                if tick - *t > recent {
                    inner.order.remove(t);
                    *t = tick;
                    inner.order.insert(tick, (file, offset));
                }
                inner.hits += 1;
                Some(block.clone())
            }
            None => {
                inner.misses += 1;
                None
            }
        }
    }

    fn insert(&self, file: u64, offset: u64, block: Cached) {
        let size = block.size();
        if size > self.capacity {
            return;
        }
        let mut g = self.lock();
        let inner = &mut *g;
        inner.tick += 1;
        let tick = inner.tick;
        if let Some((_, old, t)) = inner.map.insert((file, offset), (block, size, tick)) {
            inner.order.remove(&t);
            inner.used -= old;
        }
        inner.order.insert(tick, (file, offset));
        inner.used += size;
        while inner.used > self.capacity {
            let Some((_, key)) = inner.order.pop_first() else {
                break;
            };
            if let Some((_, s, _)) = inner.map.remove(&key) {
                inner.used -= s;
            }
        }
    }

    fn evict_file(&self, file: u64) {
        let mut g = self.lock();
        let inner = &mut *g;
        let keys: Vec<_> = inner.map.keys().filter(|k| k.0 == file).copied().collect();
        for k in keys {
            if let Some((_, s, t)) = inner.map.remove(&k) {
                inner.order.remove(&t);
                inner.used -= s;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{BlockType, HEADER_SIZE};

    fn raw(n: usize) -> Cached {
        let header = BlockHeader {
            block_type: BlockType::Meta,
            on_disk_size_without_header: n as u32,
            uncompressed_size_without_header: n as u32,
            prev_block_offset: -1,
            checksum_type: 0,
            bytes_per_checksum: 0,
            on_disk_data_size_with_header: (HEADER_SIZE + n) as u32,
        };
        Cached::Raw(Arc::new(Block {
            offset: 0,
            header,
            payload: vec![0; n],
        }))
    }

    /// The prefix-narrowed search finds what a plain binary search over every cell
    /// finds, from any start: rows around the 8-byte boundary, zero bytes (the padding
    /// value), 0xff, several columns and versions a row, keys between and beyond cells.
    #[test]
    fn lower_bound_is_the_plain_binary_search() {
        use cellar_types::CellType;
        let mut rows: Vec<Vec<u8>> = vec![Vec::new(), b"user".to_vec()];
        for n in [
            5u64,
            50,
            123_456,
            123_457,
            9_999_999_999,
            18_446_744_073_709_551_615,
        ] {
            rows.push(format!("user{n}").into_bytes());
            rows.push(format!("user{n}0").into_bytes());
        }
        for len in [1usize, 7, 8, 9, 12] {
            for fill in [0u8, 1, 0xff] {
                for last in [0u8, 2, 0xff] {
                    let mut r = vec![fill; len];
                    r[len - 1] = last;
                    rows.push(r);
                }
            }
        }
        let mut cells = Vec::new();
        for r in rows.iter().filter(|r| !r.is_empty()) {
            for q in ["a", "c"] {
                for ts in [9, 5] {
                    cells.push(Cell::put(r, "f", q, ts, "v").unwrap_or_else(|e| panic!("{e}")));
                }
            }
        }
        cells.sort_by(cellar_types::compare_cells);
        let header = BlockHeader {
            block_type: BlockType::Data,
            on_disk_size_without_header: 0,
            uncompressed_size_without_header: 0,
            prev_block_offset: -1,
            checksum_type: 0,
            bytes_per_checksum: 0,
            on_disk_data_size_with_header: 0,
        };
        // The whole set as one block, and blocks of runs of it (whose rows share
        // longer prefixes).
        let mut blocks = vec![(0, DataBlock::new(0, header, cells.clone()))];
        for (i, run) in cells.chunks(7).enumerate() {
            blocks.push((i * 7, DataBlock::new(0, header, run.to_vec())));
        }
        let mut probes = Vec::new();
        for r in &rows {
            probes.push(KeyRef::first_on_row(r));
            for q in ["", "a", "b", "c", "d"] {
                for ts in [10, 9, 7, 5, 1] {
                    probes.push(KeyRef {
                        row: r,
                        family: b"f",
                        qualifier: q.as_bytes(),
                        timestamp: ts,
                        type_code: CellType::Put.code(),
                    });
                }
            }
        }
        for (start, block) in &blocks {
            let cells = &cells[*start..*start + block.cells.len()];
            for key in &probes {
                for from in [0, 1, cells.len() / 2, cells.len() - 1, cells.len()] {
                    let want = from
                        + cells[from..]
                            .partition_point(|c| compare_keys(&c.key_ref(), key) == Ordering::Less);
                    assert_eq!(block.lower_bound(from, key), want, "{key:?} from {from}");
                }
            }
        }
    }

    /// In a cache of many blocks, hits skip the reordering while recent; a block in use
    /// still outlives a stream of blocks read once, and the bound holds.
    #[test]
    fn a_hot_block_outlives_a_stream_of_cold_ones() {
        let one = raw(1000).size();
        let cache = BlockCache::new(one * 40);
        for i in 0..40 {
            cache.insert(1, i, raw(1000));
        }
        for i in 40..400 {
            assert!(cache.get(1, 0).is_some(), "the hot block went at {i}");
            cache.insert(1, i, raw(1000));
            assert!(cache.stats().used_bytes <= one * 40);
        }
        assert!(cache.get(1, 1).is_none(), "a cold block went");
        assert!(cache.get(1, 399).is_some());
        assert_eq!(cache.stats().blocks, 40);
    }

    /// A large cache splits into shards that share its bound: blocks of many files
    /// spread over all of them, the bytes held stay within the whole bound, recent
    /// blocks stay, and a file's eviction reaches every shard.
    #[test]
    fn shards_share_the_bound() {
        assert_eq!(
            BlockCache::new(4 << 20).shard_count(),
            1,
            "small: one exact LRU"
        );
        let cache = BlockCache::new(64 << 20);
        assert_eq!(cache.shard_count(), 8);
        let one = raw(256 << 10).size();
        for i in 0..1000u64 {
            cache.insert(i % 7, i * 4096, raw(256 << 10));
            assert!(cache.stats().used_bytes <= 64 << 20);
        }
        let st = cache.stats();
        assert!(st.blocks * one > 48 << 20, "the shards fill up: {st:?}");
        for s in &cache.shards {
            assert!(s.lock().map.len() > 10, "every shard holds blocks");
        }
        for i in 990..1000u64 {
            assert!(cache.get(i % 7, i * 4096).is_some(), "recent block {i}");
        }
        assert!(cache.get(0, 0).is_none(), "the first block went");
        for f in 0..7 {
            cache.evict_file(f);
        }
        assert_eq!(cache.stats().blocks, 0);
        assert_eq!(cache.stats().used_bytes, 0);
    }

    #[test]
    fn evicts_least_recently_used_within_its_bound() {
        let one = raw(1000).size();
        let cache = BlockCache::new(one * 3);
        cache.insert(1, 0, raw(1000));
        cache.insert(1, 1, raw(1000));
        cache.insert(1, 2, raw(1000));
        assert!(cache.get(1, 0).is_some());
        cache.insert(1, 3, raw(1000));
        assert!(cache.get(1, 1).is_none(), "least recently used goes first");
        assert!(cache.get(1, 0).is_some());
        assert!(cache.stats().used_bytes <= one * 3);
        cache.evict_file(1);
        assert_eq!(cache.stats().blocks, 0);
        assert_eq!(cache.stats().used_bytes, 0);
    }
}
