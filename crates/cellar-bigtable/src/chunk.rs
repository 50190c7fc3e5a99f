//! ReadRows' cell chunks, both ways. [`RowChunker`] cuts the rows a read outputs into
//! `CellChunk`s as the protocol requires: the row key on a row's first chunk, the family
//! when it changes, the qualifier when family or qualifier changes, the timestamp and
//! labels on a cell's first chunk, a value longer than the chunk size split across
//! chunks with `value_size` on every chunk but the last, `commit_row` on the row's last.
//! [`ChunkReader`] is a client's merge of chunks back into rows, with every check of the
//! protocol's conformance cases; tests read the gateway's streams through it.

use crate::filter::Cell;
use crate::v2::read_rows_response::cell_chunk::RowStatus;
use crate::v2::read_rows_response::CellChunk;

/// Cuts rows into chunks of at most `max_value` value bytes.
pub struct RowChunker {
    max_value: usize,
}

impl RowChunker {
    pub fn new(max_value: usize) -> RowChunker {
        RowChunker {
            max_value: max_value.max(1),
        }
    }

    /// The chunks of one row (which has at least one cell); values are moved, not
    /// copied, unless they are split.
    pub fn chunks(&self, key: &[u8], cells: Vec<Cell>) -> Vec<CellChunk> {
        let mut out = Vec::with_capacity(cells.len());
        let mut prev: Option<(String, Vec<u8>)> = None;
        for c in cells {
            let new_family = prev.as_ref().is_none_or(|(f, _)| *f != c.family);
            let new_column = new_family || prev.as_ref().is_some_and(|(_, q)| *q != c.qualifier);
            let first_of_row = prev.is_none();
            let head = CellChunk {
                row_key: if first_of_row {
                    key.to_vec()
                } else {
                    Vec::new()
                },
                family_name: new_family.then(|| c.family.clone()),
                qualifier: new_column.then(|| c.qualifier.clone()),
                timestamp_micros: c.timestamp_micros,
                labels: c.labels,
                value: Vec::new(),
                value_size: 0,
                row_status: None,
            };
            prev = Some((c.family, c.qualifier));
            if c.value.len() <= self.max_value {
                out.push(CellChunk {
                    value: c.value,
                    ..head
                });
                continue;
            }
            let total = i32::try_from(c.value.len()).unwrap_or(i32::MAX);
            let pieces: Vec<&[u8]> = c.value.chunks(self.max_value).collect();
            let last = pieces.len() - 1;
            for (i, piece) in pieces.into_iter().enumerate() {
                let value_size = if i < last { total } else { 0 };
                out.push(if i == 0 {
                    CellChunk {
                        value: piece.to_vec(),
                        value_size,
                        ..head.clone()
                    }
                } else {
                    CellChunk {
                        value: piece.to_vec(),
                        value_size,
                        ..Default::default()
                    }
                });
            }
        }
        if let Some(last) = out.last_mut() {
            last.row_status = Some(RowStatus::CommitRow(true));
        }
        out
    }
}

/// A row merged from chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub key: Vec<u8>,
    pub cells: Vec<Cell>,
}

/// Where the merge stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    NewRow,
    NewCell,
    CellValue,
}

/// A client's merge of a ReadRows stream's chunks into rows.
#[derive(Debug)]
pub struct ChunkReader {
    state: State,
    reversed: bool,
    last_key: Option<Vec<u8>>,
    key: Vec<u8>,
    cells: Vec<Cell>,
    cell: Option<Cell>,
    family: Option<String>,
    qualifier: Option<Vec<u8>>,
}

impl ChunkReader {
    pub fn new(reversed: bool) -> ChunkReader {
        ChunkReader {
            state: State::NewRow,
            reversed,
            last_key: None,
            key: Vec::new(),
            cells: Vec::new(),
            cell: None,
            family: None,
            qualifier: None,
        }
    }

    /// Takes one chunk; a committed row when it ends one.
    pub fn push(&mut self, c: &CellChunk) -> Result<Option<Row>, String> {
        if let Some(RowStatus::ResetRow(true)) = c.row_status {
            if self.state == State::NewRow {
                return Err("reset_row with no row in progress".into());
            }
            if !c.row_key.is_empty()
                || c.family_name.is_some()
                || c.qualifier.is_some()
                || c.timestamp_micros != 0
                || !c.labels.is_empty()
                || !c.value.is_empty()
                || c.value_size != 0
            {
                return Err("reset_row chunk carries data".into());
            }
            self.reset();
            return Ok(None);
        }
        match self.state {
            State::NewRow => {
                if c.row_key.is_empty() {
                    return Err("a new row's chunk has no row key".into());
                }
                if c.family_name.is_none() || c.qualifier.is_none() {
                    return Err("a new row's chunk has no family or qualifier".into());
                }
                if let Some(last) = &self.last_key {
                    let in_order = if self.reversed {
                        c.row_key < *last
                    } else {
                        c.row_key > *last
                    };
                    if !in_order {
                        return Err("row keys out of order".into());
                    }
                }
                self.key = c.row_key.clone();
                self.start_cell(c)?;
            }
            State::NewCell => {
                if !c.row_key.is_empty() && c.row_key != self.key {
                    return Err("a chunk changes the row key within a row".into());
                }
                if c.family_name.is_some() && c.qualifier.is_none() {
                    return Err("a new family without a qualifier".into());
                }
                self.start_cell(c)?;
            }
            State::CellValue => {
                if !c.row_key.is_empty()
                    || c.family_name.is_some()
                    || c.qualifier.is_some()
                    || c.timestamp_micros != 0
                    || !c.labels.is_empty()
                {
                    return Err("a value's continuation carries cell data".into());
                }
                if let Some(cell) = &mut self.cell {
                    cell.value.extend_from_slice(&c.value);
                }
                self.after_value(c)?;
            }
        }
        self.finish_chunk(c)
    }

    fn start_cell(&mut self, c: &CellChunk) -> Result<(), String> {
        if let Some(f) = &c.family_name {
            self.family = Some(f.clone());
        }
        if let Some(q) = &c.qualifier {
            self.qualifier = Some(q.clone());
        }
        let (Some(family), Some(qualifier)) = (&self.family, &self.qualifier) else {
            return Err("a cell without family or qualifier".into());
        };
        self.cell = Some(Cell {
            family: family.clone(),
            qualifier: qualifier.clone(),
            timestamp_micros: c.timestamp_micros,
            value: c.value.clone(),
            labels: c.labels.clone(),
        });
        self.after_value(c)
    }

    fn after_value(&mut self, c: &CellChunk) -> Result<(), String> {
        if c.value_size > 0 {
            self.state = State::CellValue;
        } else {
            if let Some(cell) = self.cell.take() {
                self.cells.push(cell);
            }
            self.state = State::NewCell;
        }
        Ok(())
    }

    fn finish_chunk(&mut self, c: &CellChunk) -> Result<Option<Row>, String> {
        if let Some(RowStatus::CommitRow(true)) = c.row_status {
            if self.state == State::CellValue {
                return Err("commit_row inside a split value".into());
            }
            let row = Row {
                key: std::mem::take(&mut self.key),
                cells: std::mem::take(&mut self.cells),
            };
            self.last_key = Some(row.key.clone());
            self.reset();
            return Ok(Some(row));
        }
        Ok(None)
    }

    fn reset(&mut self) {
        self.state = State::NewRow;
        self.key.clear();
        self.cells.clear();
        self.cell = None;
        self.family = None;
        self.qualifier = None;
    }

    /// The stream ended: an error when a row was left uncommitted.
    pub fn finish(&self) -> Result<(), String> {
        if self.state == State::NewRow {
            Ok(())
        } else {
            Err("the stream ended inside a row".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(f: &str, q: &str, ts: i64, v: Vec<u8>) -> Cell {
        Cell {
            family: f.into(),
            qualifier: q.as_bytes().to_vec(),
            timestamp_micros: ts,
            value: v,
            labels: Vec::new(),
        }
    }

    #[test]
    fn rows_round_trip_through_chunks_large_values_split() {
        let rows = vec![
            (
                b"a".to_vec(),
                vec![
                    cell("f", "q", 2000, b"small".to_vec()),
                    cell("f", "q", 1000, vec![7u8; 2500]),
                    cell("f", "r", 1000, Vec::new()),
                    cell("g", "r", 1000, vec![1]),
                ],
            ),
            (b"b".to_vec(), vec![cell("f", "q", 5, vec![9u8; 1000])]),
        ];
        let chunker = RowChunker::new(1000);
        let mut reader = ChunkReader::new(false);
        let mut got = Vec::new();
        for (key, cells) in &rows {
            let chunks = chunker.chunks(key, cells.clone());
            // 2,500 bytes in chunks of 1,000: three chunks, value_size on the first two.
            for c in &chunks {
                if let Some(r) = reader.push(c).unwrap() {
                    got.push((r.key, r.cells));
                }
            }
        }
        reader.finish().unwrap();
        assert_eq!(got, rows);
        let chunks = chunker.chunks(&rows[0].0, rows[0].1.clone());
        assert_eq!(chunks.len(), 6);
        assert_eq!(chunks[1].value_size, 2500);
        assert_eq!(chunks[2].value_size, 2500);
        assert_eq!(chunks[3].value_size, 0);
        assert!(chunks[2].qualifier.is_none() && chunks[2].timestamp_micros == 0);
        assert!(chunks[4].family_name.is_none() && chunks[4].qualifier.is_some());
        assert_eq!(chunks[5].family_name.as_deref(), Some("g"));
    }
}
