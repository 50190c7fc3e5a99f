//! A bounded LRU block cache shared between readers: raw blocks (index, bloom) and
//! decoded data blocks, keyed by (file id, block offset), bounded in bytes.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use cellar_types::Cell;

use crate::block::{Block, BlockHeader};

/// A decoded data block.
#[derive(Debug)]
pub struct DataBlock {
    pub offset: u64,
    pub header: BlockHeader,
    pub cells: Vec<Cell>,
}

impl DataBlock {
    /// Bytes held: the cells and the buffers they view (cells of NONE and ROW_INDEX_V1
    /// blocks view one shared buffer, which their views tile).
    pub fn heap_size(&self) -> usize {
        std::mem::size_of::<DataBlock>()
            + self
                .cells
                .iter()
                .map(|c| std::mem::size_of::<Cell>() + c.buffer_len())
                .sum::<usize>()
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
    map: HashMap<(u64, u64), (Cached, usize, u64)>,
    order: BTreeMap<u64, (u64, u64)>,
    tick: u64,
    used: usize,
    hits: u64,
    misses: u64,
}

/// A least-recently-used cache bounded by the bytes its blocks hold.
#[derive(Debug)]
pub struct BlockCache {
    capacity: usize,
    inner: Mutex<Inner>,
}

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
        BlockCache {
            capacity: capacity_bytes,
            inner: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn get(&self, file: u64, offset: u64) -> Option<Cached> {
        let mut g = self.lock();
        let inner = &mut *g;
        inner.tick += 1;
        let tick = inner.tick;
        match inner.map.get_mut(&(file, offset)) {
            Some((block, _, t)) => {
                inner.order.remove(t);
                *t = tick;
                inner.order.insert(tick, (file, offset));
                inner.hits += 1;
                Some(block.clone())
            }
            None => {
                inner.misses += 1;
                None
            }
        }
    }

    pub fn insert(&self, file: u64, offset: u64, block: Cached) {
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

    /// Drops every block of one file (when the file is deleted).
    pub fn evict_file(&self, file: u64) {
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

    pub fn stats(&self) -> CacheStats {
        let g = self.lock();
        CacheStats {
            hits: g.hits,
            misses: g.misses,
            used_bytes: g.used,
            blocks: g.map.len(),
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
