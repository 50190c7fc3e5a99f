//! PREFIX (§4.3): each key stores only what differs from the previous key's flat bytes.

use cellar_types::{Cell, SharedCells};

use super::{after_cell, flat_key_common, read_after_cell, unencoded_size, BlockTags, CellFormat};
use crate::bytes::{put_cint, Reader};
use crate::error::{HFileError, Result};

/// Encodes cells; returns the unencoded size.
pub(super) fn encode(cells: &[Cell], fmt: CellFormat, out: &mut Vec<u8>) -> usize {
    let mut tags = BlockTags::new(fmt);
    let mut size = 0;
    let mut key = Vec::new();
    let mut prev: Option<&Cell> = None;
    for cell in cells {
        let common = prev.map_or(0, |p| flat_key_common(cell, p, true));
        key.clear();
        cell.write_key(&mut key);
        put_cint(out, key.len() - common);
        put_cint(out, cell.value().len());
        put_cint(out, common);
        out.extend_from_slice(&key[common..]);
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
    let mut key: Vec<u8> = Vec::new();
    while !r.is_empty() {
        let rest = r.cint()?;
        let value_len = r.cint()?;
        let common = r.cint()?;
        if common > key.len() {
            return Err(HFileError::corrupt(
                offset,
                "PREFIX cell shares more bytes than the previous key has",
            ));
        }
        key.truncate(common);
        key.extend_from_slice(r.bytes(rest)?);
        let value = r.bytes(value_len)?;
        let (tags_read, seq) = read_after_cell(&mut r, fmt, &mut tags)?;
        cells.push_flat(&key, value, &tags_read, seq)?;
    }
    Ok(cells.finish())
}
