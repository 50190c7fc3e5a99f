//! The block index (§3.4). The root level is a list of (offset i64, on-disk size i32,
//! key as a VInt-prefixed byte array); leaf and intermediate blocks hold an entry count,
//! a secondary index of entry offsets and the entries (offset, size, raw key).
//! The writer splits into leaf (inline), intermediate and root levels when a level
//! exceeds `hfile.index.block.max.size`.

use std::cmp::Ordering;

use cellar_types::{compare_keys, KeyRef};

use crate::block::{BlockHandle, BlockType, BlockWriter};
use crate::bytes::{put_byte_array, vlong_size, Reader};
use crate::error::{HFileError, Result};

/// One index entry: the first key (possibly shortened) of the block it points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub key: Vec<u8>,
    pub offset: u64,
    pub on_disk_size: u32,
}

/// Where a multi-level index's mid-key sits: (leaf offset, leaf size, entry in leaf).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MidKeyMetadata {
    pub leaf_offset: u64,
    pub leaf_on_disk_size: u32,
    pub entry: u32,
}

/// Parses a root-format index with `count` entries; returns the entries and the bytes
/// that follow them.
pub fn parse_root(payload: &[u8], count: usize, offset: u64) -> Result<(Vec<IndexEntry>, &[u8])> {
    let mut r = Reader::new(payload, offset);
    let mut entries = Vec::with_capacity(count.min(1 << 20));
    for _ in 0..count {
        let block_offset = r.i64()?;
        let size = r.i32()?;
        let key = r.byte_array()?.to_vec();
        entries.push(entry(block_offset, size, key, offset)?);
    }
    Ok((entries, &payload[r.pos()..]))
}

fn entry(block_offset: i64, size: i32, key: Vec<u8>, at: u64) -> Result<IndexEntry> {
    if block_offset < 0 || size <= 0 {
        return Err(HFileError::corrupt(
            at,
            "index entry with a negative offset or size",
        ));
    }
    Ok(IndexEntry {
        key,
        offset: block_offset as u64,
        on_disk_size: size as u32,
    })
}

/// Parses the mid-key metadata that follows a multi-level root.
pub fn parse_mid_key(rest: &[u8], offset: u64) -> Result<Option<MidKeyMetadata>> {
    if rest.len() < 16 {
        return Ok(None);
    }
    let mut r = Reader::new(rest, offset);
    let leaf_offset = r.i64()?;
    let size = r.i32()?;
    let e = r.i32()?;
    if leaf_offset < 0 || size < 0 || e < 0 {
        return Err(HFileError::corrupt(offset, "negative mid-key metadata"));
    }
    Ok(Some(MidKeyMetadata {
        leaf_offset: leaf_offset as u64,
        leaf_on_disk_size: size as u32,
        entry: e as u32,
    }))
}

/// Parses a leaf or intermediate index block.
pub fn parse_non_root(payload: &[u8], offset: u64) -> Result<Vec<IndexEntry>> {
    let mut r = Reader::new(payload, offset);
    let n = r.len32()?;
    let mut secondary = Vec::with_capacity(n.min(1 << 20) + 1);
    for _ in 0..=n {
        secondary.push(r.len32()?);
    }
    let base = r.pos();
    let mut entries = Vec::with_capacity(n.min(1 << 20));
    for i in 0..n {
        let (start, end) = (secondary[i], secondary[i + 1]);
        if end < start + 12 || base + end > payload.len() {
            return Err(HFileError::corrupt(
                offset,
                "index block secondary index is inconsistent",
            ));
        }
        let mut e = Reader::new(&payload[base + start..base + end], offset);
        let block_offset = e.i64()?;
        let size = e.i32()?;
        let key = e.bytes(end - start - 12)?.to_vec();
        entries.push(entry(block_offset, size, key, offset)?);
    }
    Ok(entries)
}

/// Searches a leaf or intermediate index block where it lies (HBase's
/// `binarySearchNonRootIndex`): the block offset and on-disk size of the last entry
/// whose key is ≤ `key`, or of the first entry when `key` sorts before all. Reads only
/// the keys the binary search compares; parses and copies nothing else.
pub fn search_non_root(payload: &[u8], key: &KeyRef<'_>, offset: u64) -> Result<(u64, u32)> {
    let bad = |what: &str| HFileError::corrupt(offset, what.to_string());
    let mut r = Reader::new(payload, offset);
    let n = r.len32()?;
    if n == 0 {
        return Err(bad("empty index block"));
    }
    let base = n
        .checked_add(2)
        .and_then(|w| w.checked_mul(4))
        .filter(|&b| b <= payload.len())
        .ok_or_else(|| bad("index block secondary index runs past the block"))?;
    let secondary = |i: usize| -> usize {
        let at = 4 + 4 * i;
        i32::from_be_bytes([
            payload[at],
            payload[at + 1],
            payload[at + 2],
            payload[at + 3],
        ]) as u32 as usize
    };
    // Entry `i`: (block offset, on-disk size, key), bounds checked.
    let entry_at = |i: usize| -> Result<(&[u8], &[u8])> {
        let (start, end) = (secondary(i), secondary(i + 1));
        if end < start.saturating_add(12) || end > payload.len() - base {
            return Err(bad("index block secondary index is inconsistent"));
        }
        let e = &payload[base + start..base + end];
        Ok((&e[..12], &e[12..]))
    };
    let (mut lo, mut hi) = (0usize, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let (_, k) = entry_at(mid)?;
        let k = KeyRef::parse(k)
            .map_err(|e| HFileError::corrupt(offset, format!("bad index key: {e}")))?;
        if compare_keys(&k, key) == Ordering::Greater {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let (head, _) = entry_at(lo.saturating_sub(1))?;
    let mut h = Reader::new(head, offset);
    let block_offset = h.i64()?;
    let size = h.i32()?;
    let e = entry(block_offset, size, Vec::new(), offset)?;
    Ok((e.offset, e.on_disk_size))
}

/// Index of the last entry whose key is ≤ `key`, or None when `key` sorts before all.
pub fn search(entries: &[IndexEntry], key: &KeyRef<'_>, offset: u64) -> Result<Option<usize>> {
    let mut lo = 0usize;
    let mut hi = entries.len();
    while lo < hi {
        let mid = (lo + hi) / 2;
        let k = KeyRef::parse(&entries[mid].key)
            .map_err(|e| HFileError::corrupt(offset, format!("bad index key: {e}")))?;
        if compare_keys(&k, key) == Ordering::Greater {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(lo.checked_sub(1))
}

fn root_size(entries: &[IndexEntry]) -> usize {
    entries
        .iter()
        .map(|e| 12 + vlong_size(e.key.len() as i64) + e.key.len())
        .sum()
}

fn non_root_size(entries: &[IndexEntry]) -> usize {
    4 + 4 * (entries.len() + 1) + entries.iter().map(|e| 12 + e.key.len()).sum::<usize>()
}

fn encode_root(entries: &[IndexEntry], out: &mut Vec<u8>) {
    for e in entries {
        out.extend_from_slice(&(e.offset as i64).to_be_bytes());
        out.extend_from_slice(&(e.on_disk_size as i32).to_be_bytes());
        put_byte_array(out, &e.key);
    }
}

fn encode_non_root(entries: &[IndexEntry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(non_root_size(entries));
    out.extend_from_slice(&(entries.len() as i32).to_be_bytes());
    let mut pos = 0i32;
    for e in entries {
        out.extend_from_slice(&pos.to_be_bytes());
        pos += 12 + e.key.len() as i32;
    }
    out.extend_from_slice(&pos.to_be_bytes());
    for e in entries {
        out.extend_from_slice(&(e.offset as i64).to_be_bytes());
        out.extend_from_slice(&(e.on_disk_size as i32).to_be_bytes());
        out.extend_from_slice(&e.key);
    }
    out
}

/// Builds the data block index while data blocks are written.
#[derive(Debug)]
pub struct IndexWriter {
    max_chunk: usize,
    min_entries: usize,
    /// Entries of data blocks not yet in a leaf block.
    leaf: Vec<IndexEntry>,
    /// Leaf blocks written so far, with the number of data blocks under each.
    leaves: Vec<(IndexEntry, u64)>,
    /// Sum of uncompressed index block sizes (for the trailer).
    pub uncompressed_size: u64,
}

/// The finished index.
#[derive(Debug)]
pub struct WrittenIndex {
    pub root_offset: u64,
    pub root_entries: u32,
    pub levels: u32,
    /// Sum of the uncompressed sizes of every index block.
    pub uncompressed_size: u64,
}

impl IndexWriter {
    pub fn new(max_chunk: usize, min_entries: usize) -> IndexWriter {
        IndexWriter {
            max_chunk: max_chunk.max(64),
            min_entries: min_entries.max(2),
            leaf: Vec::new(),
            leaves: Vec::new(),
            uncompressed_size: 0,
        }
    }

    /// Records a data block.
    pub fn add(&mut self, key: Vec<u8>, handle: BlockHandle) {
        self.leaf.push(IndexEntry {
            key,
            offset: handle.offset,
            on_disk_size: handle.on_disk_size,
        });
    }

    /// Writes a leaf block inline when the current one is full. Call after each data block.
    pub fn maybe_write_leaf(&mut self, w: &mut BlockWriter) -> Result<()> {
        if self.leaf.len() >= self.min_entries && non_root_size(&self.leaf) >= self.max_chunk {
            self.write_leaf(w)?;
        }
        Ok(())
    }

    fn write_leaf(&mut self, w: &mut BlockWriter) -> Result<()> {
        let payload = encode_non_root(&self.leaf);
        let h = w.write_block(BlockType::LeafIndex, &payload)?;
        self.uncompressed_size += h.uncompressed_size_without_header() as u64;
        let first = self.leaf[0].key.clone();
        let n = self.leaf.len() as u64;
        self.leaf.clear();
        self.leaves.push((
            IndexEntry {
                key: first,
                offset: h.offset,
                on_disk_size: h.on_disk_size,
            },
            n,
        ));
        Ok(())
    }

    /// Flushes the last leaf (for a multi-level index) inline, before any non-scanned block.
    pub fn finish_inline(&mut self, w: &mut BlockWriter) -> Result<()> {
        if !self.leaves.is_empty() && !self.leaf.is_empty() {
            self.write_leaf(w)?;
        }
        Ok(())
    }

    /// Writes intermediate levels (if needed) and the root block.
    pub fn finish(mut self, w: &mut BlockWriter) -> Result<WrittenIndex> {
        let mut levels = 1u32;
        let mut mid = None;
        let mut root: Vec<IndexEntry> = if self.leaves.is_empty() {
            std::mem::take(&mut self.leaf)
        } else {
            levels = 2;
            // Mid-key: data block (total - 1) / 2, located in its leaf.
            let total: u64 = self.leaves.iter().map(|(_, n)| n).sum();
            let target = (total - 1) / 2;
            let mut before = 0u64;
            for (e, n) in &self.leaves {
                if target < before + n {
                    mid = Some(MidKeyMetadata {
                        leaf_offset: e.offset,
                        leaf_on_disk_size: e.on_disk_size,
                        entry: (target - before) as u32,
                    });
                    break;
                }
                before += n;
            }
            self.leaves.into_iter().map(|(e, _)| e).collect()
        };
        while root_size(&root) > self.max_chunk && root.len() > self.min_entries && levels < 16 {
            let mut parent = Vec::new();
            let mut chunk: Vec<IndexEntry> = Vec::new();
            let flush = |chunk: &mut Vec<IndexEntry>,
                         parent: &mut Vec<IndexEntry>,
                         w: &mut BlockWriter,
                         size: &mut u64|
             -> Result<()> {
                let h = w.write_block(BlockType::IntermediateIndex, &encode_non_root(chunk))?;
                *size += h.uncompressed_size_without_header() as u64;
                parent.push(IndexEntry {
                    key: chunk[0].key.clone(),
                    offset: h.offset,
                    on_disk_size: h.on_disk_size,
                });
                chunk.clear();
                Ok(())
            };
            for e in root {
                chunk.push(e);
                if chunk.len() >= self.min_entries && non_root_size(&chunk) >= self.max_chunk {
                    flush(&mut chunk, &mut parent, w, &mut self.uncompressed_size)?;
                }
            }
            if !chunk.is_empty() {
                flush(&mut chunk, &mut parent, w, &mut self.uncompressed_size)?;
            }
            root = parent;
            levels += 1;
        }
        let mut payload = Vec::with_capacity(root_size(&root) + 16);
        encode_root(&root, &mut payload);
        if let Some(m) = mid {
            payload.extend_from_slice(&(m.leaf_offset as i64).to_be_bytes());
            payload.extend_from_slice(&(m.leaf_on_disk_size as i32).to_be_bytes());
            payload.extend_from_slice(&(m.entry as i32).to_be_bytes());
        }
        let h = w.write_block(BlockType::RootIndex, &payload)?;
        self.uncompressed_size += h.uncompressed_size_without_header() as u64;
        Ok(WrittenIndex {
            root_offset: h.offset,
            root_entries: root.len() as u32,
            levels,
            uncompressed_size: self.uncompressed_size,
        })
    }
}

/// Writes a single-level root index (meta index, bloom chunk index) into `out`.
pub fn encode_single_level(entries: &[IndexEntry], out: &mut Vec<u8>) {
    encode_root(entries, out);
}

/// HBase's `getMidpoint`: a short key k with left < k ≤ right, used as the index key of
/// the block that starts with `right` (`left` is the previous block's last key).
pub fn short_separator(left: &KeyRef<'_>, right: &KeyRef<'_>) -> Vec<u8> {
    fn minimum_midpoint(l: &[u8], r: &[u8]) -> Vec<u8> {
        let min = l.len().min(r.len());
        let diff = l.iter().zip(r).take_while(|(a, b)| a == b).count();
        if diff >= min {
            return r[..(diff + 1).min(r.len())].to_vec();
        }
        let lb = l[diff];
        if lb < 0xff && lb + 1 < r[diff] {
            let mut out = l[..diff].to_vec();
            out.push(lb + 1);
            out
        } else {
            r[..diff + 1].to_vec()
        }
    }
    match left.row.cmp(right.row) {
        Ordering::Less => {
            let row = minimum_midpoint(left.row, right.row);
            return KeyRef::first_on_row(&row).to_vec();
        }
        Ordering::Greater => return right.to_vec(),
        Ordering::Equal => {}
    }
    if left.family < right.family {
        let fam = minimum_midpoint(left.family, right.family);
        return KeyRef::first_on_column(right.row, &fam, &[]).to_vec();
    }
    if left.family == right.family && left.qualifier < right.qualifier {
        let q = minimum_midpoint(left.qualifier, right.qualifier);
        return KeyRef::first_on_column(right.row, right.family, &q).to_vec();
    }
    right.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separator_matches_hbase_example() {
        let l = KeyRef::first_on_column(b"hudi-key-000000469-abcdefghij", b"", b"").to_vec();
        let r = KeyRef::first_on_column(b"hudi-key-000000470-abcdefghij", b"", b"").to_vec();
        let l = KeyRef {
            type_code: 4,
            ..KeyRef::parse(&l).unwrap()
        };
        let r = KeyRef {
            type_code: 4,
            ..KeyRef::parse(&r).unwrap()
        };
        let s = short_separator(&l, &r);
        let k = KeyRef::parse(&s).unwrap();
        assert_eq!(k.row, b"hudi-key-00000047");
        assert_eq!(k.type_code, 255);
        assert_eq!(k.timestamp, i64::MAX);
        assert_eq!(compare_keys(&l, &k), Ordering::Less);
        assert_ne!(compare_keys(&k, &r), Ordering::Greater);
    }

    #[test]
    fn separators_always_between() {
        let keys: [(&[u8], &[u8], i64); 6] = [
            (b"a", b"q", 5),
            (b"a", b"q", 3),
            (b"a", b"r", 9),
            (b"ab", b"", 1),
            (b"b\xff", b"x", 1),
            (b"c", b"", 1),
        ];
        for w in keys.windows(2) {
            let l = KeyRef {
                row: w[0].0,
                family: b"f",
                qualifier: w[0].1,
                timestamp: w[0].2,
                type_code: 4,
            };
            let r = KeyRef {
                row: w[1].0,
                family: b"f",
                qualifier: w[1].1,
                timestamp: w[1].2,
                type_code: 4,
            };
            let s = short_separator(&l, &r);
            let k = KeyRef::parse(&s).unwrap();
            assert_eq!(compare_keys(&l, &k), Ordering::Less);
            assert_ne!(compare_keys(&k, &r), Ordering::Greater);
        }
    }

    #[test]
    fn non_root_round_trips_and_rejects_garbage() {
        let entries: Vec<IndexEntry> = (0..5)
            .map(|i| IndexEntry {
                key: KeyRef::first_on_row(&[i]).to_vec(),
                offset: i as u64 * 100,
                on_disk_size: 99,
            })
            .collect();
        let bytes = encode_non_root(&entries);
        assert_eq!(parse_non_root(&bytes, 0).unwrap(), entries);
        let mut root = Vec::new();
        encode_root(&entries, &mut root);
        assert_eq!(parse_root(&root, 5, 0).unwrap().0, entries);
        for cut in 0..bytes.len() {
            let _ = parse_non_root(&bytes[..cut], 0);
        }
        assert!(parse_root(&root, 6, 0).is_err());
        let k = KeyRef::first_on_row(&[2]);
        assert_eq!(search(&entries, &k, 0).unwrap(), Some(2));
        let k = KeyRef::last_on_row(&[2]);
        assert_eq!(search(&entries, &k, 0).unwrap(), Some(2));
        let k = KeyRef::first_on_row(&[]);
        assert_eq!(search(&entries, &k, 0).unwrap(), None);
    }

    #[test]
    fn non_root_search_in_place_agrees_with_parsing_and_rejects_garbage() {
        for count in [1u8, 2, 3, 7, 40] {
            let entries: Vec<IndexEntry> = (0..count)
                .map(|i| IndexEntry {
                    key: KeyRef::first_on_row(&[i * 2 + 1]).to_vec(),
                    offset: i as u64 * 100,
                    on_disk_size: 99 + i as u32,
                })
                .collect();
            let bytes = encode_non_root(&entries);
            for probe in 0..=(count * 2 + 2) {
                for k in [
                    KeyRef::first_on_row(&[probe]),
                    KeyRef::last_on_row(&[probe]),
                ] {
                    let want = &entries[search(&entries, &k, 0).unwrap().unwrap_or(0)];
                    assert_eq!(
                        search_non_root(&bytes, &k, 0).unwrap(),
                        (want.offset, want.on_disk_size),
                        "{count} entries, probe {probe}"
                    );
                }
            }
            let row = [count];
            let k = KeyRef::first_on_row(&row);
            for cut in 0..bytes.len() {
                let _ = search_non_root(&bytes[..cut], &k, 0);
            }
            let mut flipped = bytes.clone();
            for i in 0..flipped.len() {
                flipped[i] ^= 0xff;
                let _ = search_non_root(&flipped, &k, 0);
                flipped[i] ^= 0xff;
            }
        }
        assert!(search_non_root(&encode_non_root(&[]), &KeyRef::first_on_row(b"a"), 0).is_err());
    }
}
