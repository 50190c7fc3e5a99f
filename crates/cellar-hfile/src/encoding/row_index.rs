//! ROW_INDEX_V1 (§4.6): NONE-format cells, then the row count, the offset of each
//! row's first cell (relative to the cells) and the byte length of the cells.

use cellar_types::{Bytes, Cell};

use super::{none, CellFormat};
use crate::bytes::Reader;
use crate::error::{HFileError, Result};

pub(super) fn encode(cells: &[Cell], fmt: CellFormat, out: &mut Vec<u8>) {
    let start = out.len();
    let mut offsets: Vec<u32> = Vec::new();
    let mut prev_row: Option<&[u8]> = None;
    for cell in cells {
        if prev_row != Some(cell.row()) {
            offsets.push((out.len() - start) as u32);
            prev_row = Some(cell.row());
        }
        none::encode_cell(cell, fmt, out);
    }
    let data_size = (out.len() - start) as u32;
    out.extend_from_slice(&(offsets.len() as u32).to_be_bytes());
    for o in offsets {
        out.extend_from_slice(&o.to_be_bytes());
    }
    out.extend_from_slice(&data_size.to_be_bytes());
}

pub(super) fn decode(body: &Bytes, fmt: CellFormat, offset: u64) -> Result<Vec<Cell>> {
    let bad = |why: &str| HFileError::corrupt(offset, format!("ROW_INDEX_V1 block: {why}"));
    if body.len() < 8 {
        return Err(bad("too short"));
    }
    let n = body.len();
    let data_size =
        u32::from_be_bytes([body[n - 4], body[n - 3], body[n - 2], body[n - 1]]) as usize;
    if data_size > n - 8 {
        return Err(bad("data size exceeds the block"));
    }
    let mut r = Reader::new(&body[data_size..n - 4], offset);
    let rows = r.len32()?;
    if rows.checked_mul(4) != Some(r.remaining()) {
        return Err(bad("row index length does not match its row count"));
    }
    let mut offsets = Vec::with_capacity(rows);
    for _ in 0..rows {
        offsets.push(r.len32()?);
    }
    let cells = none::decode(&body.slice(..data_size), fmt, offset)?;
    // Check the index agrees with the cells: each offset starts a new row.
    let mut expected = Vec::new();
    let mut pos = 0;
    let mut prev: Option<&[u8]> = None;
    for c in &cells {
        if prev != Some(c.row()) {
            expected.push(pos);
            prev = Some(c.row());
        }
        pos += c.serialized_size(fmt.includes_tags)
            + if fmt.includes_mvcc {
                crate::bytes::vlong_size(c.seq_id() as i64)
            } else {
                0
            };
    }
    if expected != offsets {
        return Err(bad("row index does not match the cells"));
    }
    Ok(cells)
}
