//! `Cell` and `Result` messages ↔ Cellar's cells and row results, with the cells inline
//! or in the response's cell block.

use cellar_api::RowResult;
use cellar_types::{Cell, CellType};

use super::b;
use crate::cell_block::{BlockReader, Codec};
use crate::error::{ProtocolError, Result};
use crate::pb;

pub fn cell_to_pb(c: &Cell) -> pb::Cell {
    pb::Cell {
        row: Some(b(c.row())),
        family: Some(b(c.family())),
        qualifier: Some(b(c.qualifier())),
        timestamp: Some(c.timestamp() as u64),
        cell_type: Some(c.cell_type().code() as i32),
        value: Some(b(c.value())),
        tags: None,
    }
}

pub fn cell_from_pb(c: &pb::Cell) -> Result<Cell> {
    let code = c.cell_type.unwrap_or(CellType::Put.code() as i32);
    let t = u8::try_from(code)
        .ok()
        .and_then(|code| CellType::from_code(code).ok())
        .ok_or_else(|| ProtocolError::invalid("Cell.cell_type", code.to_string()))?;
    Cell::new(
        c.row.as_deref().unwrap_or_default(),
        c.family.as_deref().unwrap_or_default(),
        c.qualifier.as_deref().unwrap_or_default(),
        c.timestamp
            .map(|t| t as i64)
            .unwrap_or(cellar_types::LATEST_TIMESTAMP),
        t,
        c.value.as_deref().unwrap_or_default(),
    )
    .map_err(|e| ProtocolError::invalid("Cell", e.to_string()))
}

/// Encodes a result: cells into `block` when a codec was negotiated, inline otherwise.
pub fn result_to_pb(r: &RowResult, codec: Option<Codec>, block: &mut Vec<u8>) -> pb::Result {
    let mut out = pb::Result {
        exists: r.exists,
        partial: r.partial.then_some(true),
        ..Default::default()
    };
    match codec {
        Some(codec) => {
            // Room for the row's cells at once: a block grown by doubling copies them.
            block.reserve(r.cells.iter().map(|c| codec.block_size(c)).sum());
            for c in &r.cells {
                codec.write(c, block);
            }
            out.associated_cell_count = Some(r.cells.len() as i32);
        }
        None => out.cell = r.cells.iter().map(cell_to_pb).collect(),
    }
    out
}

/// Decodes a result, taking its `associated_cell_count` cells from `block`.
pub fn result_from_pb(r: &pb::Result, block: Option<&mut BlockReader>) -> Result<RowResult> {
    let mut cells = r
        .cell
        .iter()
        .map(cell_from_pb)
        .collect::<Result<Vec<_>>>()?;
    let n = r.associated_cell_count.unwrap_or(0);
    if n < 0 {
        return Err(ProtocolError::invalid(
            "associated_cell_count",
            n.to_string(),
        ));
    }
    if n > 0 {
        let block = block.ok_or(ProtocolError::Missing("cell block"))?;
        cells.extend(block.take(n as usize)?);
    }
    Ok(RowResult {
        row: cells.first().map(|c| c.row().to_vec()).unwrap_or_default(),
        cells,
        exists: r.exists,
        partial: r.partial.unwrap_or(false),
        cursor: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn sample() -> RowResult {
        let cells = vec![
            Cell::new("r", "f", "a", 9, CellType::Put, "x").unwrap(),
            Cell::new("r", "f", "b", 8, CellType::Put, "").unwrap(),
        ];
        RowResult {
            row: b"r".to_vec(),
            cells,
            partial: true,
            ..RowResult::default()
        }
    }

    #[test]
    fn inline_and_block_results_round_trip() {
        let r = sample();
        let mut block = Vec::new();
        let inline = result_to_pb(&r, None, &mut block);
        assert!(block.is_empty());
        assert_eq!(result_from_pb(&inline, None).unwrap(), r);
        let counted = result_to_pb(&r, Some(Codec::KeyValue), &mut block);
        assert!(counted.cell.is_empty());
        let mut reader = BlockReader::new(Codec::KeyValue, Bytes::from(block));
        assert_eq!(result_from_pb(&counted, Some(&mut reader)).unwrap(), r);
    }

    #[test]
    fn bad_cell_types_are_errors() {
        let mut c = cell_to_pb(&sample().cells[0]);
        c.cell_type = Some(99);
        assert!(cell_from_pb(&c).is_err());
    }
}
