//! The read path: a store scanner merges one family's sources and runs the matcher; the
//! region scanner assembles rows from its store scanners in family order. Each store
//! scanner sums the bytes it includes per row and fails with RowTooBigException as soon
//! as they pass `hbase.table.max.rowsize`, before the rest of the row is read.

use cellar_types::{to_string_binary, Cell, CellType, KeyRef};

use crate::cursor::Heap;
use crate::error::{RegionError, Result};
use crate::matcher::{MatchCode, Matcher};
use crate::read::{RowResult, Scan};

/// One family's part of a scan.
pub struct StoreScanner {
    family: Vec<u8>,
    heap: Heap,
    matcher: Matcher,
    max_row_size: u64,
}

impl StoreScanner {
    pub fn new(family: Vec<u8>, heap: Heap, matcher: Matcher, max_row_size: u64) -> StoreScanner {
        StoreScanner {
            family,
            heap,
            matcher,
            max_row_size,
        }
    }

    /// The row of the next cell.
    pub fn peek_row(&self) -> Option<&[u8]> {
        self.heap.peek().map(|c| c.row())
    }

    /// Consumes every cell of `row`, appending the ones the read returns to `out`.
    pub fn read_row(&mut self, row: &[u8], out: &mut Vec<Cell>) -> Result<()> {
        let mut size: u64 = 0;
        while let Some(cell) = self.heap.peek() {
            if cell.row() != row {
                break;
            }
            match self.matcher.match_cell(cell) {
                MatchCode::Include => {
                    size += cell.serialized_size(true) as u64;
                    if size > self.max_row_size {
                        return Err(RegionError::RowTooBig {
                            limit: self.max_row_size,
                            row: to_string_binary(row),
                            family: to_string_binary(&self.family),
                        });
                    }
                    out.push(cell.clone());
                    self.heap.advance()?;
                }
                // The empty qualifier also holds the family's delete markers, which may
                // sort after its puts: step through it instead of seeking past them.
                MatchCode::Skip => self.heap.advance()?,
                MatchCode::SeekNextCol if cell.qualifier().is_empty() => self.heap.advance()?,
                MatchCode::SeekNextCol => {
                    let (r, f, q) = (
                        cell.row().to_vec(),
                        cell.family().to_vec(),
                        cell.qualifier().to_vec(),
                    );
                    let key = KeyRef {
                        row: &r,
                        family: &f,
                        qualifier: &q,
                        timestamp: i64::MIN,
                        type_code: CellType::Minimum.code(),
                    };
                    self.heap.reseek(&key)?;
                }
            }
        }
        Ok(())
    }
}

/// Rows of a region in order.
pub struct RegionScanner {
    stores: Vec<StoreScanner>,
    scan: Scan,
    rows: u64,
    done: bool,
}

impl RegionScanner {
    pub fn new(stores: Vec<StoreScanner>, scan: Scan) -> RegionScanner {
        RegionScanner {
            stores,
            scan,
            rows: 0,
            done: false,
        }
    }

    /// The next row with at least one returned cell.
    pub fn next_row(&mut self) -> Result<Option<RowResult>> {
        while !self.done {
            if self.scan.limit.is_some_and(|l| self.rows >= l) {
                self.done = true;
                break;
            }
            let Some(row) = self
                .stores
                .iter()
                .filter_map(|s| s.peek_row())
                .min()
                .map(<[u8]>::to_vec)
            else {
                self.done = true;
                break;
            };
            if self.scan.is_past_stop(&row) {
                self.done = true;
                break;
            }
            let mut cells = Vec::new();
            for s in &mut self.stores {
                if s.peek_row() == Some(row.as_slice()) {
                    s.read_row(&row, &mut cells)?;
                }
            }
            if !cells.is_empty() {
                self.rows += 1;
                return Ok(Some(RowResult {
                    row,
                    cells,
                    exists: None,
                }));
            }
        }
        Ok(None)
    }
}

impl Iterator for RegionScanner {
    type Item = Result<RowResult>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_row() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
