//! Data block encodings (§4): how the cells of one data block are laid out before
//! compression. Ids are stored as a 2-byte short at the start of an encoded block
//! (`DATABLKE`); NONE blocks (`DATABLK*`) carry no id.

mod diff;
mod fast_diff;
mod none;
mod prefix;
mod row_index;

use std::borrow::Cow;

use cellar_types::{Bytes, Cell, LruDictionary, SharedCells, NOT_IN_DICTIONARY};

use crate::bytes::{put_cint, put_pb_varint, put_vlong, vlong_size, Reader};
use crate::error::{HFileError, Result};

/// The per-file facts every encoder needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellFormat {
    /// Every cell carries a tags length (v3 files with `MAX_TAGS_LEN`).
    pub includes_tags: bool,
    /// Every cell is followed by its sequence id as a VLong (`KEY_VALUE_VERSION` = 1).
    pub includes_mvcc: bool,
    /// Tags in PREFIX, DIFF and FAST_DIFF blocks go through a per-block dictionary
    /// (`hfile.TAGS_COMPRESSED`; NONE and ROW_INDEX_V1 blocks keep them plain).
    pub compress_tags: bool,
}

/// A data block encoding, by HBase's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataBlockEncoding {
    None,
    Prefix,
    Diff,
    FastDiff,
    RowIndexV1,
}

impl DataBlockEncoding {
    pub const ALL: [DataBlockEncoding; 5] = [
        DataBlockEncoding::None,
        DataBlockEncoding::Prefix,
        DataBlockEncoding::Diff,
        DataBlockEncoding::FastDiff,
        DataBlockEncoding::RowIndexV1,
    ];

    pub fn id(self) -> i16 {
        match self {
            DataBlockEncoding::None => 0,
            DataBlockEncoding::Prefix => 2,
            DataBlockEncoding::Diff => 3,
            DataBlockEncoding::FastDiff => 4,
            DataBlockEncoding::RowIndexV1 => 7,
        }
    }

    pub fn from_id(id: i16) -> Result<DataBlockEncoding> {
        Ok(match id {
            0 => DataBlockEncoding::None,
            2 => DataBlockEncoding::Prefix,
            3 => DataBlockEncoding::Diff,
            4 => DataBlockEncoding::FastDiff,
            7 => DataBlockEncoding::RowIndexV1,
            1 | 5 | 6 => {
                return Err(HFileError::Unsupported {
                    what: format!("data block encoding id {id}"),
                })
            }
            _ => {
                return Err(HFileError::corrupt(
                    0,
                    format!("unknown data block encoding id {id}"),
                ))
            }
        })
    }

    /// HBase's attribute value (`FAST_DIFF`, ...).
    pub fn name(self) -> &'static str {
        cellar_api::DataBlockEncoding::from(self).name()
    }

    pub fn from_name(name: &str) -> Option<DataBlockEncoding> {
        cellar_api::DataBlockEncoding::from_name(name).map(Into::into)
    }

    /// Encodes sorted cells into a block payload (with the id when not NONE).
    pub fn encode(self, cells: &[Cell], fmt: CellFormat) -> Vec<u8> {
        // Room for every cell as a KeyValue with its tags and its sequence id (a VLong
        // of at most 9 bytes): NONE fills it without growing, the others stay below.
        let per_cell = if fmt.includes_mvcc { 9 } else { 0 };
        let mut out = Vec::with_capacity(
            cells
                .iter()
                .map(|c| c.serialized_size(true) + per_cell)
                .sum::<usize>()
                + 16,
        );
        if self != DataBlockEncoding::None {
            out.extend_from_slice(&self.id().to_be_bytes());
        }
        match self {
            DataBlockEncoding::None => none::encode(cells, fmt, &mut out),
            DataBlockEncoding::RowIndexV1 => row_index::encode(cells, fmt, &mut out),
            DataBlockEncoding::Prefix | DataBlockEncoding::Diff | DataBlockEncoding::FastDiff => {
                let size_at = out.len();
                out.extend_from_slice(&0i32.to_be_bytes());
                let unencoded = match self {
                    DataBlockEncoding::Prefix => prefix::encode(cells, fmt, &mut out),
                    DataBlockEncoding::Diff => diff::encode(cells, fmt, &mut out),
                    _ => fast_diff::encode(cells, fmt, &mut out),
                };
                out[size_at..size_at + 4].copy_from_slice(&(unencoded as i32).to_be_bytes());
            }
        }
        out
    }

    /// Decodes a block payload. `encoded` says whether it came from a `DATABLKE` block
    /// (which starts with the encoding id); `offset` is the block offset, for errors.
    pub fn decode(
        payload: &[u8],
        encoded: bool,
        fmt: CellFormat,
        offset: u64,
    ) -> Result<Vec<Cell>> {
        DataBlockEncoding::decode_shared(&Bytes::copy_from_slice(payload), encoded, fmt, offset)
    }

    /// [`DataBlockEncoding::decode`] of a shared payload: NONE and ROW_INDEX_V1 cells
    /// share its buffer instead of copying their bytes.
    pub fn decode_shared(
        payload: &Bytes,
        encoded: bool,
        fmt: CellFormat,
        offset: u64,
    ) -> Result<Vec<Cell>> {
        let mut r = Reader::new(payload, offset);
        let encoding = if encoded {
            DataBlockEncoding::from_id(r.u16()? as i16).map_err(|e| with_offset(e, offset))?
        } else {
            DataBlockEncoding::None
        };
        let shared = payload.slice(r.pos()..);
        let body = &payload[r.pos()..];
        let cells = match encoding {
            DataBlockEncoding::None => none::decode(&shared, fmt, offset),
            DataBlockEncoding::RowIndexV1 => row_index::decode(&shared, fmt, offset),
            DataBlockEncoding::Prefix => {
                rebuild(body, offset, |b, c| prefix::decode(b, c, fmt, offset))
            }
            DataBlockEncoding::Diff => {
                rebuild(body, offset, |b, c| diff::decode(b, c, fmt, offset))
            }
            DataBlockEncoding::FastDiff => {
                rebuild(body, offset, |b, c| fast_diff::decode(b, c, fmt, offset))
            }
        };
        cells.map_err(|e| match e {
            HFileError::Cell(t) => {
                HFileError::corrupt(offset, format!("bad cell in data block: {t}"))
            }
            e => e,
        })
    }

    /// The encoding id of an encoded block payload.
    pub fn of_payload(payload: &[u8], offset: u64) -> Result<DataBlockEncoding> {
        let mut r = Reader::new(payload, offset);
        DataBlockEncoding::from_id(r.u16()? as i16).map_err(|e| with_offset(e, offset))
    }
}

fn with_offset(e: HFileError, offset: u64) -> HFileError {
    match e {
        HFileError::Corrupt { reason, .. } => HFileError::Corrupt { offset, reason },
        e => e,
    }
}

/// Decodes a PREFIX, DIFF or FAST_DIFF body (its unencoded size first) with `decode`,
/// into one buffer with room for the cells that size counts, bounded by what the body
/// could plausibly expand to (the field is not trusted for an allocation).
fn rebuild(
    body: &[u8],
    offset: u64,
    decode: impl FnOnce(&[u8], SharedCells) -> Result<Vec<Cell>>,
) -> Result<Vec<Cell>> {
    let (size, rest) = body
        .split_first_chunk::<4>()
        .ok_or_else(|| HFileError::corrupt(offset, "encoded block missing its unencoded size"))?;
    let unencoded = u32::from_be_bytes(*size) as usize;
    let cells = SharedCells::with_capacity(unencoded.min(rest.len().saturating_mul(8)));
    decode(rest, cells)
}

/// The cell's KeyValue size as counted by the encoders' `unencodedSize`.
fn unencoded_size(cell: &Cell, fmt: CellFormat) -> usize {
    cell.serialized_size(fmt.includes_tags)
        + if fmt.includes_mvcc {
            vlong_size(cell.seq_id() as i64)
        } else {
            0
        }
}

/// The tags state of one block of a buffered encoder: with tag compression, HBase's
/// `TagCompressionContext`, an LRU dictionary of `Byte.MAX_VALUE` entries emptied at
/// every block, through which each tag (type and value) is written in full the first
/// time and by index after.
pub(super) struct BlockTags {
    dict: Option<LruDictionary>,
}

impl BlockTags {
    pub(super) fn new(fmt: CellFormat) -> BlockTags {
        BlockTags {
            dict: (fmt.includes_tags && fmt.compress_tags).then(|| LruDictionary::new(127)),
        }
    }
}

/// The tags of a cell one by one (type and value of each); `None` when malformed.
pub(crate) fn split_tags(tags: &[u8]) -> Option<Vec<&[u8]>> {
    cellar_types::tag_bodies(tags)
}

/// Writes what follows each cell in the buffered encoders: tags (7-bit length, then
/// the bytes, or each tag through the block's dictionary) and the sequence id.
fn after_cell(cell: &Cell, fmt: CellFormat, tags: &mut BlockTags, out: &mut Vec<u8>) {
    if fmt.includes_tags && cell.tags().is_empty() {
        out.push(0);
    } else if fmt.includes_tags {
        put_cint(out, cell.tags().len());
        match (&mut tags.dict, split_tags(cell.tags())) {
            (Some(dict), Some(each)) => {
                for t in each {
                    match dict.find(t) {
                        Some(idx) => out.extend_from_slice(&idx.to_be_bytes()),
                        None => {
                            out.push(NOT_IN_DICTIONARY);
                            put_pb_varint(out, t.len() as u64);
                            out.extend_from_slice(t);
                        }
                    }
                }
            }
            // The writer refuses malformed tags when it compresses them.
            _ => out.extend_from_slice(cell.tags()),
        }
    }
    if fmt.includes_mvcc {
        put_vlong(out, cell.seq_id() as i64);
    }
}

/// Reads what follows each cell in the buffered encoders: (tags, seq id).
fn read_after_cell<'a>(
    r: &mut Reader<'a>,
    fmt: CellFormat,
    tags: &mut BlockTags,
) -> Result<(Cow<'a, [u8]>, u64)> {
    let read = if fmt.includes_tags {
        let n = r.cint()?;
        match &mut tags.dict {
            Some(dict) if n > 0 => Cow::Owned(uncompress_tags(r, dict, n)?),
            _ => Cow::Borrowed(r.bytes(n)?),
        }
    } else {
        Cow::Borrowed(&[][..])
    };
    let seq = if fmt.includes_mvcc {
        r.vlong()? as u64
    } else {
        0
    };
    Ok((read, seq))
}

/// `TagCompressionContext.uncompressTags`: `len` bytes of tags, each tag written in
/// full (0xFF, varint length, bytes; added to the dictionary) or as a 2-byte index.
fn uncompress_tags(r: &mut Reader<'_>, dict: &mut LruDictionary, len: usize) -> Result<Vec<u8>> {
    // A cell's tags fit a u16 length in a KeyValue.
    if len > usize::from(u16::MAX) {
        return Err(r.corrupt("tags longer than 65535 bytes"));
    }
    let mut out = Vec::with_capacity(len.min(r.remaining() * 2));
    while out.len() < len {
        let status = r.u8()?;
        if status == NOT_IN_DICTIONARY {
            let n =
                usize::try_from(r.pb_varint()?).map_err(|_| r.corrupt("tag length overflows"))?;
            let t = r.bytes(n)?;
            let n16 = u16::try_from(n).map_err(|_| r.corrupt("tag longer than 65535 bytes"))?;
            out.extend_from_slice(&n16.to_be_bytes());
            out.extend_from_slice(t);
            dict.add(t);
        } else {
            let low = r.u8()?;
            if status & 0x80 != 0 {
                return Err(r.corrupt("negative tag dictionary index"));
            }
            let idx = u16::from_be_bytes([status, low]);
            let t = dict
                .get(idx)
                .ok_or_else(|| r.corrupt("tag dictionary index with no entry"))?;
            // A tag read by index is at most as long as the one it repeats.
            out.extend_from_slice(&(t.len() as u16).to_be_bytes());
            out.extend_from_slice(t);
        }
    }
    if out.len() != len {
        return Err(r.corrupt("compressed tags longer than their length"));
    }
    Ok(out)
}

/// Common prefix length of two byte strings.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    // Eight bytes at a time, then the first differing byte of the word that differs.
    let mut i = 0;
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        let diff = u64::from_le_bytes(x.try_into().unwrap_or_default())
            ^ u64::from_le_bytes(y.try_into().unwrap_or_default());
        if diff != 0 {
            return i + (diff.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i + a[i..]
        .iter()
        .zip(&b[i..])
        .take_while(|(x, y)| x == y)
        .count()
}

/// `findCommonPrefixInFlatKey(cur, prev, bypassFamilyCheck = true, withTsType)`: the shared
/// prefix of two flat keys of the same family.
fn flat_key_common(cur: &Cell, prev: &Cell, with_ts_type: bool) -> usize {
    let (r1, r2) = (cur.row().len() as u16, prev.row().len() as u16);
    if r1 != r2 {
        return common_prefix(&r1.to_be_bytes(), &r2.to_be_bytes());
    }
    let row_common = common_prefix(cur.row(), prev.row());
    let mut common = 2 + row_common;
    if row_common != cur.row().len() {
        return common;
    }
    common += 1 + cur.family().len();
    let q_common = common_prefix(cur.qualifier(), prev.qualifier());
    common += q_common;
    if !with_ts_type || cur.qualifier().len().max(prev.qualifier().len()) != q_common {
        return common;
    }
    let ts_common = common_prefix(
        &cur.timestamp().to_be_bytes(),
        &prev.timestamp().to_be_bytes(),
    );
    common += ts_common;
    if ts_common != 8 {
        return common;
    }
    if cur.cell_type() == prev.cell_type() {
        common += 1;
    }
    common
}

/// Writes the row part of a key past `common` bytes of `rowLen|row`, then the whole
/// qualifier (family omitted): `writeRowKeyExcludingCommon` + `writeQualifier`.
fn write_row_then_qualifier(cell: &Cell, common: usize, out: &mut Vec<u8>) {
    let len = (cell.row().len() as u16).to_be_bytes();
    let skip = match common {
        0 => {
            out.extend_from_slice(&len);
            0
        }
        1 => {
            out.push(len[1]);
            0
        }
        c => c - 2,
    };
    out.extend_from_slice(&cell.row()[skip.min(cell.row().len())..]);
    out.extend_from_slice(cell.qualifier());
}

/// The decoded coordinates of the previous cell, used by DIFF and FAST_DIFF.
#[derive(Debug, Clone, Default)]
struct PrevKey {
    row: Vec<u8>,
    family: Vec<u8>,
    qualifier: Vec<u8>,
    timestamp: i64,
    type_code: u8,
    key_len: usize,
    value_len: usize,
}

/// Reads row and qualifier of a DIFF / FAST_DIFF cell given `common` bytes shared with
/// `prev` and the cell's key length, into `prev` (its buffers reused, not reallocated).
fn read_row_and_qualifier(
    r: &mut Reader<'_>,
    prev: &mut PrevKey,
    common: usize,
    key_len: usize,
) -> Result<()> {
    let corrupt = |why: &str| HFileError::corrupt(0, format!("encoded cell: {why}"));
    let fam = prev.family.len();
    if common < prev.row.len() + 2 {
        let prev_len = (prev.row.len() as u16).to_be_bytes();
        let row_len = match common {
            0 => r.u16()? as usize,
            1 => u16::from_be_bytes([prev_len[0], r.u8()?]) as usize,
            _ => prev.row.len(),
        };
        let kept = common.saturating_sub(2);
        if kept > row_len || kept > prev.row.len() {
            return Err(corrupt("common prefix longer than the row"));
        }
        let tail = r.bytes(row_len - kept)?;
        let q_len = key_len
            .checked_sub(12 + row_len + fam)
            .ok_or_else(|| corrupt("key length too short for its row"))?;
        let qualifier = r.bytes(q_len)?;
        prev.row.truncate(kept);
        prev.row.extend_from_slice(tail);
        prev.qualifier.clear();
        prev.qualifier.extend_from_slice(qualifier);
    } else {
        let q_common = common
            .checked_sub(2 + prev.row.len() + 1 + fam)
            .filter(|q| *q <= prev.qualifier.len())
            .ok_or_else(|| corrupt("common prefix inconsistent with the previous key"))?;
        let q_len = key_len
            .checked_sub(12 + prev.row.len() + fam)
            .filter(|q| *q >= q_common)
            .ok_or_else(|| corrupt("key length too short for its row"))?;
        let tail = r.bytes(q_len - q_common)?;
        prev.qualifier.truncate(q_common);
        prev.qualifier.extend_from_slice(tail);
    }
    Ok(())
}

/// Adds the cell `prev` now describes to the block's cells.
fn push_cell(
    cells: &mut SharedCells,
    prev: &PrevKey,
    value: &[u8],
    tags: &[u8],
    seq: u64,
) -> Result<()> {
    let key = cellar_types::KeyRef {
        row: &prev.row,
        family: &prev.family,
        qualifier: &prev.qualifier,
        timestamp: prev.timestamp,
        type_code: prev.type_code,
    };
    Ok(cells.push(&key, value, tags, seq)?)
}

#[cfg(test)]
mod tests;
