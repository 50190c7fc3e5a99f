//! Bloom filters (§3.5) in HBase's compound layout: chunks of about
//! `io.storefile.bloom.block.size` bytes written inline as `BLMFBLK2` blocks, a meta block
//! (`BLMFMET2` / `DFBLMET2`) with the parameters and a root index of the chunks. Bits are
//! set by HBase's MurmurHash (v2) with combinatorial double hashing.

use std::cmp::Ordering;

use cellar_types::{compare_keys, KeyRef};

use crate::block::{BlockType, BlockWriter};
use crate::bytes::{put_byte_array, Reader};
use crate::error::{HFileError, Result};
use crate::index::{encode_single_level, parse_root, IndexEntry};

/// Hash type code of MurmurHash in the meta block.
const MURMUR_HASH: i32 = 1;
/// Meta block version of a compound bloom.
const COMPOUND_VERSION: i32 = 3;
/// `hbase.bloomfilter.max.fold`.
const MAX_FOLD: u32 = 7;
const CELL_COMPARATOR: &str = "org.apache.hadoop.hbase.CellComparatorImpl";

/// The family's BLOOMFILTER setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BloomType {
    None,
    Row,
    RowCol,
    /// The first N bytes of the row (`RowPrefixBloomFilter.prefix_length`).
    RowPrefixFixedLength(usize),
}

impl BloomType {
    pub fn name(self) -> &'static str {
        cellar_api::BloomType::from(self).name()
    }

    /// Parses a file info / attribute value; the prefix length comes separately.
    pub fn from_name(name: &str, prefix_len: Option<usize>) -> Option<BloomType> {
        cellar_api::BloomType::from_name(name, prefix_len).map(Into::into)
    }

    /// The bytes hashed for a (row, qualifier), and whether index keys are cell keys.
    pub fn hash_key(self, row: &[u8], qualifier: &[u8]) -> Vec<u8> {
        let mut key = Vec::new();
        self.hash_key_into(row, qualifier, &mut key);
        key
    }

    /// [`BloomType::hash_key`] into a buffer the caller keeps (no allocation per key
    /// once it has grown).
    pub fn hash_key_into(self, row: &[u8], qualifier: &[u8], key: &mut Vec<u8>) {
        key.clear();
        match self {
            BloomType::None | BloomType::Row => key.extend_from_slice(row),
            BloomType::RowCol => KeyRef::first_on_column(row, b"", qualifier).write(key),
            BloomType::RowPrefixFixedLength(n) => key.extend_from_slice(&row[..n.min(row.len())]),
        }
    }
}

/// HBase's `MurmurHash.hash` (MurmurHash2, 32-bit, Java's signed-byte tail).
pub fn murmur_hash(data: &[u8], seed: i32) -> i32 {
    let m: i32 = 0x5bd1_e995;
    let r = 24;
    let len = data.len();
    let mut h: i32 = seed ^ (len as i32);
    let chunks = len / 4;
    for i in 0..chunks {
        let b = &data[i * 4..i * 4 + 4];
        let mut k = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        k = k.wrapping_mul(m);
        k ^= ((k as u32) >> r) as i32;
        k = k.wrapping_mul(m);
        h = h.wrapping_mul(m);
        h ^= k;
    }
    let tail = &data[chunks * 4..];
    if !tail.is_empty() {
        if tail.len() >= 3 {
            h ^= (tail[2] as i8 as i32) << 16;
        }
        if tail.len() >= 2 {
            h ^= (tail[1] as i8 as i32) << 8;
        }
        h ^= tail[0] as i8 as i32;
        h = h.wrapping_mul(m);
    }
    h ^= ((h as u32) >> 13) as i32;
    h = h.wrapping_mul(m);
    h ^= ((h as u32) >> 15) as i32;
    h
}

/// The bit positions a key sets in a chunk of `bits` bits.
///
/// Position `i` is `|(hash1 + i * hash2) % bits|` (Java's remainder, signed like the
/// dividend). Chunks written with a power-of-two size (the default 128 KiB, and every
/// fold of it) take the remainder as a mask of the magnitude, which is the same number:
/// `|c % 2^k| = |c| mod 2^k`. The division is most of a bloom add's time otherwise.
fn positions(key: &[u8], hash_count: u32, bits: u64) -> impl Iterator<Item = u64> {
    let hash1 = murmur_hash(key, 0);
    let hash2 = murmur_hash(key, hash1);
    let mask = bits.is_power_of_two().then(|| bits - 1);
    let bits = bits as i64;
    (0..hash_count).map(move |i| {
        let composite = hash1.wrapping_add((i as i32).wrapping_mul(hash2)) as i64;
        match mask {
            Some(m) => composite.unsigned_abs() & m,
            None => (composite % bits).unsigned_abs(),
        }
    })
}

fn ideal_max_keys(bits: u64, error_rate: f64) -> u64 {
    let ln2 = std::f64::consts::LN_2;
    (bits as f64 * (ln2 * ln2 / -error_rate.ln())) as u64
}

fn optimal_hash_count(max_keys: u64, bits: u64) -> u32 {
    let per_key = bits / max_keys.max(1);
    (std::f64::consts::LN_2 * per_key as f64).ceil().max(1.0) as u32
}

struct Chunk {
    bits: Vec<u8>,
    keys: u64,
    max_keys: u64,
    first_key: Vec<u8>,
}

impl Chunk {
    /// Folds the chunk while it is at most half full (`compactBloom`).
    fn fold(&mut self) {
        let mut pieces = 1usize;
        let mut size = self.bits.len();
        let mut max_keys = self.max_keys;
        while size.is_multiple_of(2) && max_keys > self.keys * 2 && pieces < (1 << MAX_FOLD) {
            pieces <<= 1;
            size >>= 1;
            max_keys >>= 1;
        }
        if pieces > 1 {
            for p in 1..pieces {
                for i in 0..size {
                    self.bits[i] |= self.bits[p * size + i];
                }
            }
            self.bits.truncate(size);
            self.max_keys = max_keys;
        }
    }
}

/// Writes a compound bloom filter.
pub struct BloomWriter {
    bloom_type: BloomType,
    chunk_bytes: usize,
    chunk_max_keys: u64,
    hash_count: u32,
    current: Option<Chunk>,
    ready: Vec<Chunk>,
    chunks: Vec<IndexEntry>,
    total_keys: u64,
    total_max_keys: u64,
    total_bytes: u64,
    last_hash_key: Option<Vec<u8>>,
}

impl BloomWriter {
    pub fn new(bloom_type: BloomType, chunk_bytes_hint: usize, error_rate: f64) -> BloomWriter {
        // computeFoldableByteSize: round up to a multiple of 2^MAX_FOLD.
        let unit = 1usize << MAX_FOLD;
        let chunk_bytes = chunk_bytes_hint.max(unit).div_ceil(unit) * unit;
        let bits = chunk_bytes as u64 * 8;
        let max_keys = ideal_max_keys(bits, error_rate).max(1);
        BloomWriter {
            bloom_type,
            chunk_bytes,
            chunk_max_keys: max_keys,
            hash_count: optimal_hash_count(max_keys, bits),
            current: None,
            ready: Vec::new(),
            chunks: Vec::new(),
            total_keys: 0,
            total_max_keys: 0,
            total_bytes: 0,
            last_hash_key: None,
        }
    }

    /// The last key added (for `LAST_BLOOM_KEY`).
    pub fn last_key(&self) -> Option<&[u8]> {
        self.last_hash_key.as_deref()
    }

    /// Adds a key unless it equals the previous one. `index_key` is the key the chunk
    /// index records for the first key of a chunk.
    pub fn add(&mut self, hash_key: &[u8]) {
        if self.last_hash_key.as_deref() == Some(hash_key) {
            return;
        }
        if self.current.as_ref().is_some_and(|c| c.keys >= c.max_keys) {
            if let Some(c) = self.current.take() {
                self.ready.push(c);
            }
        }
        let chunk = self.current.get_or_insert_with(|| Chunk {
            bits: vec![0u8; self.chunk_bytes],
            keys: 0,
            max_keys: self.chunk_max_keys,
            first_key: hash_key.to_vec(),
        });
        let bits = chunk.bits.len() as u64 * 8;
        for p in positions(hash_key, self.hash_count, bits) {
            chunk.bits[(p >> 3) as usize] |= 1 << (p & 7);
        }
        chunk.keys += 1;
        self.total_keys += 1;
        match &mut self.last_hash_key {
            Some(last) => {
                last.clear();
                last.extend_from_slice(hash_key);
            }
            None => self.last_hash_key = Some(hash_key.to_vec()),
        }
    }

    fn write_chunk(&mut self, mut chunk: Chunk, w: &mut BlockWriter) -> Result<()> {
        chunk.fold();
        let h = w.write_block(BlockType::Bloom, &chunk.bits)?;
        self.total_max_keys += chunk.max_keys;
        self.total_bytes += chunk.bits.len() as u64;
        self.chunks.push(IndexEntry {
            key: chunk.first_key,
            offset: h.offset,
            on_disk_size: h.on_disk_size,
        });
        Ok(())
    }

    /// Writes full chunks inline; call at data block boundaries.
    pub fn write_ready(&mut self, w: &mut BlockWriter) -> Result<()> {
        for chunk in std::mem::take(&mut self.ready) {
            self.write_chunk(chunk, w)?;
        }
        Ok(())
    }

    /// Writes the last chunk inline; returns the meta block payload, or None when no
    /// key was added.
    pub fn finish_inline(&mut self, w: &mut BlockWriter) -> Result<Option<Vec<u8>>> {
        self.write_ready(w)?;
        if let Some(c) = self.current.take() {
            self.write_chunk(c, w)?;
        }
        if self.chunks.is_empty() {
            return Ok(None);
        }
        let mut out = Vec::new();
        out.extend_from_slice(&COMPOUND_VERSION.to_be_bytes());
        out.extend_from_slice(&(self.total_bytes as i64).to_be_bytes());
        out.extend_from_slice(&(self.hash_count as i32).to_be_bytes());
        out.extend_from_slice(&MURMUR_HASH.to_be_bytes());
        out.extend_from_slice(&(self.total_keys as i64).to_be_bytes());
        out.extend_from_slice(&(self.total_max_keys as i64).to_be_bytes());
        out.extend_from_slice(&(self.chunks.len() as i32).to_be_bytes());
        let comparator: &[u8] = if self.bloom_type == BloomType::RowCol {
            CELL_COMPARATOR.as_bytes()
        } else {
            b""
        };
        put_byte_array(&mut out, comparator);
        encode_single_level(&self.chunks, &mut out);
        Ok(Some(out))
    }
}

/// A bloom filter's meta block, decoded.
#[derive(Debug, Clone)]
pub struct BloomMeta {
    pub total_byte_size: i64,
    pub hash_count: u32,
    pub hash_type: i32,
    pub total_key_count: i64,
    pub total_max_keys: i64,
    pub comparator: String,
    pub chunks: Vec<IndexEntry>,
}

impl BloomMeta {
    pub fn parse(payload: &[u8], offset: u64) -> Result<BloomMeta> {
        let mut r = Reader::new(payload, offset);
        let version = r.i32()?;
        if version != COMPOUND_VERSION {
            return Err(HFileError::Unsupported {
                what: format!("bloom filter meta version {version}"),
            });
        }
        let total_byte_size = r.i64()?;
        let hash_count = r.i32()?;
        let hash_type = r.i32()?;
        let total_key_count = r.i64()?;
        let total_max_keys = r.i64()?;
        let num_chunks = r.len32()?;
        let comparator = String::from_utf8_lossy(r.byte_array()?).into_owned();
        if !(1..=64).contains(&hash_count) {
            return Err(HFileError::corrupt(
                offset,
                format!("bloom hash count {hash_count}"),
            ));
        }
        if hash_type != MURMUR_HASH {
            return Err(HFileError::Unsupported {
                what: format!("bloom hash type {hash_type}"),
            });
        }
        let (chunks, _) = parse_root(&payload[r.pos()..], num_chunks, offset)?;
        Ok(BloomMeta {
            total_byte_size,
            hash_count: hash_count as u32,
            hash_type,
            total_key_count,
            total_max_keys,
            comparator,
            chunks,
        })
    }

    /// The chunk that may hold `hash_key`: the last whose first key is ≤ it.
    pub fn chunk_for(&self, hash_key: &[u8], cell_keys: bool) -> Option<&IndexEntry> {
        self.chunk_index_for(hash_key, cell_keys)
            .map(|i| &self.chunks[i])
    }

    /// The position in `chunks` of the chunk that would hold `hash_key`.
    pub fn chunk_index_for(&self, hash_key: &[u8], cell_keys: bool) -> Option<usize> {
        let idx = self.chunks.partition_point(|c| {
            let ord = if cell_keys {
                match (KeyRef::parse(&c.key), KeyRef::parse(hash_key)) {
                    (Ok(a), Ok(b)) => compare_keys(&a, &b),
                    _ => c.key.as_slice().cmp(hash_key),
                }
            } else {
                c.key.as_slice().cmp(hash_key)
            };
            ord != Ordering::Greater
        });
        idx.checked_sub(1)
    }

    /// True when `hash_key` may be in `chunk_bits`.
    pub fn chunk_contains(&self, chunk_bits: &[u8], hash_key: &[u8]) -> bool {
        if chunk_bits.is_empty() {
            return false;
        }
        let bits = chunk_bits.len() as u64 * 8;
        positions(hash_key, self.hash_count, bits)
            .all(|p| chunk_bits[(p >> 3) as usize] & (1 << (p & 7)) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur_matches_reference_values() {
        // MurmurHash2 of the empty input with seed 0 is 0.
        assert_eq!(murmur_hash(b"", 0), 0);
        // Different inputs and seeds give different hashes; the tail handles signed bytes.
        assert_ne!(murmur_hash(b"a", 0), murmur_hash(b"b", 0));
        assert_ne!(murmur_hash(b"\xff", 0), murmur_hash(b"\x7f", 0));
        assert_ne!(murmur_hash(b"abcd", 0), murmur_hash(b"abcd", 1));
    }

    /// The positions as HBase computes them, with the remainder taken every time.
    fn reference_positions(key: &[u8], hash_count: u32, bits: u64) -> Vec<u64> {
        let hash1 = murmur_hash(key, 0);
        let hash2 = murmur_hash(key, hash1);
        (0..hash_count)
            .map(|i| {
                let composite = hash1.wrapping_add((i as i32).wrapping_mul(hash2)) as i64;
                (composite % bits as i64).unsigned_abs()
            })
            .collect()
    }

    #[test]
    fn positions_equal_the_remainder_for_every_chunk_size() {
        // Power-of-two sizes take the mask, the others the remainder; both must give
        // HBase's positions, negative composites included.
        let sizes = [8u64, 1024, 1 << 20, 1 << 17, 1000, 131_064 * 8, 3];
        for i in 0..5000u32 {
            let key = format!("dev{:05}#{:020}", i % 97, u64::MAX - u64::from(i) * 7919);
            for bits in sizes {
                let got: Vec<u64> = positions(key.as_bytes(), 7, bits).collect();
                assert_eq!(
                    got,
                    reference_positions(key.as_bytes(), 7, bits),
                    "{key} {bits}"
                );
                assert!(got.iter().all(|&p| p < bits));
            }
        }
        // Extreme composites: i32::MIN's magnitude is 2^31.
        for bits in sizes {
            for c in [i32::MIN, i32::MIN + 1, -1, 0, 1, i32::MAX] {
                let c = c as i64;
                let want = (c % bits as i64).unsigned_abs();
                let got = if bits.is_power_of_two() {
                    c.unsigned_abs() & (bits - 1)
                } else {
                    want
                };
                assert_eq!(got, want, "{c} {bits}");
            }
        }
    }

    #[test]
    fn hash_keys_into_a_kept_buffer_equal_fresh_ones() {
        let mut buf = b"left over from the last key".to_vec();
        for t in [
            BloomType::Row,
            BloomType::RowCol,
            BloomType::RowPrefixFixedLength(3),
            BloomType::RowPrefixFixedLength(64),
        ] {
            t.hash_key_into(b"row-1", b"q", &mut buf);
            assert_eq!(buf, t.hash_key(b"row-1", b"q"));
        }
        BloomType::Row.hash_key_into(b"r", b"", &mut buf);
        assert_eq!(buf, b"r");
    }

    #[test]
    fn chunk_folding_keeps_every_key() {
        let mut w = BloomWriter::new(BloomType::Row, 131072, 0.01);
        let keys: Vec<Vec<u8>> = (0..1000u32)
            .map(|i| format!("row{i}").into_bytes())
            .collect();
        for k in &keys {
            w.add(k);
        }
        let mut chunk = w.current.take().unwrap();
        chunk.fold();
        assert!(chunk.bits.len() < 131072);
        let meta = BloomMeta {
            total_byte_size: chunk.bits.len() as i64,
            hash_count: w.hash_count,
            hash_type: MURMUR_HASH,
            total_key_count: 1000,
            total_max_keys: chunk.max_keys as i64,
            comparator: String::new(),
            chunks: Vec::new(),
        };
        for k in &keys {
            assert!(meta.chunk_contains(&chunk.bits, k));
        }
        let false_positives = (0..10000u32)
            .filter(|i| meta.chunk_contains(&chunk.bits, format!("other{i}").as_bytes()))
            .count();
        assert!(false_positives < 300, "{false_positives} false positives");
    }
}
