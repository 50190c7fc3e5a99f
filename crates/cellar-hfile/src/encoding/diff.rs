//! DIFF (§4.4): the family once per block, then per cell a flag byte, optional lengths,
//! the shared prefix length, the unshared row/qualifier bytes, the timestamp as a value
//! or a difference from the previous one (1–8 little-endian bytes), an optional type
//! byte and the value.

use cellar_types::{Cell, SharedCells};

use super::{
    after_cell, flat_key_common, push_cell, read_after_cell, read_row_and_qualifier,
    unencoded_size, write_row_then_qualifier, BlockTags, CellFormat, PrevKey,
};
use crate::bytes::{put_cint, Reader};
use crate::error::{HFileError, Result};

const SAME_KEY_LENGTH: u8 = 0x01;
const SAME_VALUE_LENGTH: u8 = 0x02;
const SAME_TYPE: u8 = 0x04;
const TIMESTAMP_IS_DIFF: u8 = 0x08;
const TIMESTAMP_LENGTH_MASK: u8 = 0x70;
const TIMESTAMP_LENGTH_SHIFT: u8 = 4;
const TIMESTAMP_SIGN: u8 = 0x80;

/// `ByteBufferUtils.longFitsIn`.
pub(super) fn long_fits_in(v: i64) -> usize {
    if v < 0 {
        return 8;
    }
    let bits = 64 - v.leading_zeros() as usize;
    bits.div_ceil(8).max(1)
}

/// `ByteBufferUtils.putLong(out, v, n)`: n little-endian bytes.
pub(super) fn put_long(out: &mut Vec<u8>, v: i64, n: usize) {
    out.extend_from_slice(&v.to_le_bytes()[..n]);
}

fn read_long(r: &mut Reader<'_>, n: usize) -> Result<i64> {
    let mut b = [0u8; 8];
    b[..n].copy_from_slice(r.bytes(n)?);
    Ok(i64::from_le_bytes(b))
}

/// Encodes cells; returns the unencoded size.
pub(super) fn encode(cells: &[Cell], fmt: CellFormat, out: &mut Vec<u8>) -> usize {
    let mut tags = BlockTags::new(fmt);
    let mut size = 0;
    let mut prev: Option<&Cell> = None;
    for cell in cells {
        let mut flag = 0u8;
        let key_len = cell.key_len();
        let value_len = cell.value().len();
        let mut common = 0;
        let ts_bytes: usize;
        let ts_written: i64;
        match prev {
            None => {
                let mut ts = cell.timestamp();
                if ts < 0 {
                    flag |= TIMESTAMP_SIGN;
                    ts = ts.wrapping_neg();
                }
                ts_bytes = long_fits_in(ts);
                ts_written = ts;
                flag |= ((ts_bytes - 1) as u8) << TIMESTAMP_LENGTH_SHIFT;
                out.push(cell.family().len() as u8);
                out.extend_from_slice(cell.family());
            }
            Some(p) => {
                common = flat_key_common(cell, p, false);
                if key_len == p.key_len() {
                    flag |= SAME_KEY_LENGTH;
                }
                if value_len == p.value().len() {
                    flag |= SAME_VALUE_LENGTH;
                }
                if cell.cell_type() == p.cell_type() {
                    flag |= SAME_TYPE;
                }
                let mut ts = cell.timestamp();
                let mut diff = p.timestamp().wrapping_sub(ts);
                let negative_ts = ts < 0;
                if negative_ts {
                    ts = ts.wrapping_neg();
                }
                let ts_fits = long_fits_in(ts);
                let negative_diff = diff < 0;
                if negative_diff {
                    diff = diff.wrapping_neg();
                }
                let diff_fits = long_fits_in(diff);
                if diff_fits < ts_fits {
                    flag |= ((diff_fits - 1) as u8) << TIMESTAMP_LENGTH_SHIFT;
                    flag |= TIMESTAMP_IS_DIFF;
                    if negative_diff {
                        flag |= TIMESTAMP_SIGN;
                    }
                    ts_bytes = diff_fits;
                    ts_written = diff;
                } else {
                    flag |= ((ts_fits - 1) as u8) << TIMESTAMP_LENGTH_SHIFT;
                    if negative_ts {
                        flag |= TIMESTAMP_SIGN;
                    }
                    ts_bytes = ts_fits;
                    ts_written = ts;
                }
            }
        }
        out.push(flag);
        if flag & SAME_KEY_LENGTH == 0 {
            put_cint(out, key_len);
        }
        if flag & SAME_VALUE_LENGTH == 0 {
            put_cint(out, value_len);
        }
        put_cint(out, common);
        let row_len = cell.row().len();
        if common < row_len + 2 {
            write_row_then_qualifier(cell, common, out);
        } else {
            let q_common = common - (row_len + 2) - (cell.family().len() + 1);
            out.extend_from_slice(&cell.qualifier()[q_common..]);
        }
        put_long(out, ts_written, ts_bytes);
        if flag & SAME_TYPE == 0 {
            out.push(cell.cell_type().code());
        }
        out.extend_from_slice(cell.value());
        after_cell(cell, fmt, &mut tags, out);
        size += unencoded_size(cell, fmt);
        prev = Some(cell);
    }
    size
}

pub(super) fn decode(
    body: &[u8],
    mut cells: SharedCells,
    fmt: CellFormat,
    offset: u64,
) -> Result<Vec<Cell>> {
    let mut tags = BlockTags::new(fmt);
    let mut r = Reader::new(body, offset);
    if r.is_empty() {
        return Ok(Vec::new());
    }
    let fam_len = r.u8()? as usize;
    let mut prev = PrevKey {
        family: r.bytes(fam_len)?.to_vec(),
        ..PrevKey::default()
    };
    let mut first = true;
    while !r.is_empty() {
        let flag = r.u8()?;
        let key_len = if flag & SAME_KEY_LENGTH == 0 {
            r.cint()?
        } else {
            prev.key_len
        };
        let value_len = if flag & SAME_VALUE_LENGTH == 0 {
            r.cint()?
        } else {
            prev.value_len
        };
        let common = r.cint()?;
        if first
            && (common != 0
                || flag & (SAME_KEY_LENGTH | SAME_VALUE_LENGTH | SAME_TYPE | TIMESTAMP_IS_DIFF)
                    != 0)
        {
            return Err(HFileError::corrupt(
                offset,
                "DIFF block's first cell refers to a previous cell",
            ));
        }
        read_row_and_qualifier(&mut r, &mut prev, common, key_len)
            .map_err(|e| relocate(e, offset))?;
        let n = (((flag & TIMESTAMP_LENGTH_MASK) >> TIMESTAMP_LENGTH_SHIFT) + 1) as usize;
        let mut ts = read_long(&mut r, n)?;
        if flag & TIMESTAMP_SIGN != 0 {
            ts = ts.wrapping_neg();
        }
        if flag & TIMESTAMP_IS_DIFF != 0 {
            ts = prev.timestamp.wrapping_sub(ts);
        }
        let type_code = if flag & SAME_TYPE == 0 {
            r.u8()?
        } else {
            prev.type_code
        };
        let value = r.bytes(value_len)?;
        let (tags_read, seq) = read_after_cell(&mut r, fmt, &mut tags)?;
        prev.timestamp = ts;
        prev.type_code = type_code;
        prev.key_len = key_len;
        prev.value_len = value_len;
        push_cell(&mut cells, &prev, value, &tags_read, seq)?;
        first = false;
    }
    Ok(cells.finish())
}

pub(super) fn relocate(e: HFileError, offset: u64) -> HFileError {
    match e {
        HFileError::Corrupt { reason, .. } => HFileError::Corrupt { offset, reason },
        e => e,
    }
}
