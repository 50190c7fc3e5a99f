//! FAST_DIFF (§4.5): like DIFF, but the timestamp shares leading big-endian bytes with
//! the previous one, the family is taken from the first cell's full key, and a value
//! identical to the previous cell's is not written again.

use cellar_types::{Cell, KeyRef, SharedCells};

use super::diff::relocate;
use super::{
    after_cell, common_prefix, flat_key_common, push_cell, read_after_cell, read_row_and_qualifier,
    unencoded_size, write_row_then_qualifier, BlockTags, CellFormat, PrevKey,
};
use crate::bytes::{put_cint, Reader};
use crate::error::{HFileError, Result};

const TIMESTAMP_COMMON_MASK: u8 = 0x07;
const SAME_KEY_LENGTH: u8 = 0x08;
const SAME_VALUE_LENGTH: u8 = 0x10;
const SAME_TYPE: u8 = 0x20;
const SAME_VALUE: u8 = 0x40;

/// Encodes cells; returns the unencoded size.
pub(super) fn encode(cells: &[Cell], fmt: CellFormat, out: &mut Vec<u8>) -> usize {
    let mut tags = BlockTags::new(fmt);
    let mut size = 0;
    let mut prev: Option<&Cell> = None;
    for cell in cells {
        let key_len = cell.key_len();
        let value_len = cell.value().len();
        match prev {
            None => {
                out.push(0);
                put_cint(out, key_len);
                put_cint(out, value_len);
                put_cint(out, 0);
                cell.write_key(out);
                out.extend_from_slice(cell.value());
            }
            Some(p) => {
                let mut flag = 0u8;
                let common = flat_key_common(cell, p, false);
                if key_len == p.key_len() {
                    flag |= SAME_KEY_LENGTH;
                }
                if value_len == p.value().len() {
                    flag |= SAME_VALUE_LENGTH;
                }
                if cell.cell_type() == p.cell_type() {
                    flag |= SAME_TYPE;
                }
                let ts = cell.timestamp().to_be_bytes();
                let ts_common = common_prefix(&ts[..7], &p.timestamp().to_be_bytes()[..7]);
                flag |= ts_common as u8;
                if cell.value() == p.value() {
                    flag |= SAME_VALUE;
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
                out.extend_from_slice(&ts[ts_common..]);
                if flag & SAME_TYPE == 0 {
                    out.push(cell.cell_type().code());
                }
                if flag & SAME_VALUE == 0 {
                    out.extend_from_slice(cell.value());
                }
            }
        }
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
    let mut prev = PrevKey::default();
    let mut prev_value: &[u8] = &[];
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
        if first {
            if flag != 0 || common != 0 {
                return Err(HFileError::corrupt(
                    offset,
                    "FAST_DIFF block's first cell refers to a previous cell",
                ));
            }
            let key = KeyRef::parse(r.bytes(key_len)?)?;
            prev.row.extend_from_slice(key.row);
            prev.family.extend_from_slice(key.family);
            prev.qualifier.extend_from_slice(key.qualifier);
            prev.timestamp = key.timestamp;
            prev.type_code = key.type_code;
        } else {
            read_row_and_qualifier(&mut r, &mut prev, common, key_len)
                .map_err(|e| relocate(e, offset))?;
            let ts_common = (flag & TIMESTAMP_COMMON_MASK) as usize;
            let mut ts = prev.timestamp.to_be_bytes();
            ts[ts_common..].copy_from_slice(r.bytes(8 - ts_common)?);
            prev.timestamp = i64::from_be_bytes(ts);
            if flag & SAME_TYPE == 0 {
                prev.type_code = r.u8()?;
            }
        }
        let value = if flag & SAME_VALUE == 0 {
            r.bytes(value_len)?
        } else {
            if prev_value.len() != value_len {
                return Err(HFileError::corrupt(
                    offset,
                    "FAST_DIFF same-value flag with a different length",
                ));
            }
            prev_value
        };
        let (tags_read, seq) = read_after_cell(&mut r, fmt, &mut tags)?;
        prev.key_len = key_len;
        prev.value_len = value_len;
        prev_value = value;
        push_cell(&mut cells, &prev, value, &tags_read, seq)?;
        first = false;
    }
    Ok(cells.finish())
}
