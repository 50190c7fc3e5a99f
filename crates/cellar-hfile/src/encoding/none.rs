//! NONE (§4.2): cells as KeyValues, each followed by a u16 tags length and tags (when
//! the file has tags) and the sequence id as a VLong (when it has mvcc). Decoded cells
//! share the block's buffer.

use cellar_types::{Bytes, Cell};

use super::CellFormat;
use crate::bytes::{put_vlong, Reader};
use crate::error::Result;

pub(super) fn encode_cell(cell: &Cell, fmt: CellFormat, out: &mut Vec<u8>) {
    cell.write_key_value(out, fmt.includes_tags);
    if fmt.includes_mvcc {
        put_vlong(out, cell.seq_id() as i64);
    }
}

pub(super) fn encode(cells: &[Cell], fmt: CellFormat, out: &mut Vec<u8>) {
    for cell in cells {
        encode_cell(cell, fmt, out);
    }
}

pub(super) fn decode(body: &Bytes, fmt: CellFormat, offset: u64) -> Result<Vec<Cell>> {
    let mut cells = Vec::new();
    let mut pos = 0;
    while pos < body.len() {
        let (cell, used) = Cell::read_key_value_shared(body, pos, fmt.includes_tags)?;
        pos += used;
        let cell = if fmt.includes_mvcc {
            let mut r = Reader::new(&body[pos..], offset);
            let seq = r.vlong()?;
            pos += r.pos();
            cell.with_seq_id(seq as u64)
        } else {
            cell
        };
        if cells.capacity() == 0 {
            // About as many cells as the first one's size fits in the block.
            cells.reserve((body.len() / pos.max(1)).clamp(1, 1 << 16));
        }
        cells.push(cell);
    }
    Ok(cells)
}
