//! A Get answered from one source. A Get opens its one-row scanner as any read does:
//! in each store, the sources that may hold the row (the active MemStore segment, the
//! segment being flushed, the store files its bloom filters do not rule out), each
//! positioned at the row. When in every store at most one source stands on the row —
//! a row written since the last flush, or a row in one store file — and the Get has no
//! filter or one that decides on cells alone (a page of columns, a column range or
//! prefix: `Filter::cells_only`), the row is read by stepping that source directly,
//! the filter asked about its cells as the store scanner asks it: the same cells in the
//! same order, decided by the same matcher (columns, versions, time range, TTL,
//! MIN_VERSIONS, delete markers) with the same moves on its verdicts, as the store
//! scanner's `read_row` makes over a merge of that one source, without the merge
//! heap's comparisons and the scanners' row assembly. Otherwise the scanner reads the
//! row.

use std::cmp::Ordering;

use cellar_filter::Filter;
use cellar_types::{compare_keys, same_bytes, Cell, KeyRef};

use crate::column_key::{skip_column, ColumnKey};
use crate::cursor::{CellCursor, Source};
use crate::error::{RegionError, Result};
use crate::matcher::{MatchCode, Matcher};
use crate::scanner::{RegionScanner, STEPS_BEFORE_SEEK};
use cellar_api::RowResult;

/// What became of a Get offered to the one-source path.
pub(crate) enum Outcome {
    /// Read from one source in each store.
    Row(RowResult),
    /// Not for this path: the scanner is untouched, to read the row.
    Scan,
}

fn on_row(source: &Source, row: &[u8]) -> bool {
    source.peek().is_some_and(|c| same_bytes(c.row(), row))
}

/// Reads the row `scanner` (a Get of `row`, just opened) is for from one source per
/// store when it may (see the module documentation), with room for `cells` cells;
/// RowTooBig past the row size limit in a store, as the scanner would.
pub(crate) fn read(scanner: &mut RegionScanner, row: &[u8], cells: usize) -> Result<Outcome> {
    if !scanner.filter_cells_only() {
        return Ok(Outcome::Scan);
    }
    let alone = scanner
        .stores()
        .iter()
        .all(|s| s.heap().sources().iter().filter(|c| on_row(c, row)).count() <= 1);
    if !alone {
        return Ok(Outcome::Scan);
    }
    let mut out = Vec::with_capacity(cells);
    let mut column = ColumnKey::default();
    let (stores, mut filter) = scanner.stores_and_filter_mut();
    for s in stores {
        let (heap, matcher, max_row_size) = s.parts_mut();
        let Some(source) = heap.sources_mut().iter_mut().find(|c| on_row(c, row)) else {
            continue;
        };
        let store = StoreRead {
            matcher,
            row,
            max_row_size,
            filter: filter.as_deref_mut(),
        };
        read_store(source, store, &mut out, &mut column)?;
    }
    Ok(Outcome::Row(RowResult {
        row: row.to_vec(),
        cells: out,
        exists: None,
        partial: false,
        cursor: false,
    }))
}

/// What one store's read of the row decides with.
struct StoreRead<'a> {
    matcher: &'a mut Matcher,
    row: &'a [u8],
    max_row_size: u64,
    /// The Get's filter, one that decides on cells alone.
    filter: Option<&'a mut (dyn Filter + 'static)>,
}

/// One store's cells of `row` from `source` into `out`, as the store scanner's
/// `read_row` (forward, with no filter or one that decides on cells alone) reads them
/// from a merge of that one source.
fn read_store(
    source: &mut Source,
    read: StoreRead<'_>,
    out: &mut Vec<Cell>,
    column: &mut ColumnKey,
) -> Result<()> {
    let StoreRead {
        matcher,
        row,
        max_row_size,
        mut filter,
    } = read;
    let mut size: u64 = 0;
    matcher.enter_row(row);
    while let Some(cell) = source.peek() {
        if !same_bytes(cell.row(), row) {
            break;
        }
        let code = matcher.match_cell(cell, filter.as_deref_mut());
        let in_empty_column = cell.qualifier().is_empty();
        if matches!(
            code,
            MatchCode::Include
                | MatchCode::IncludeAndSeekNextCol
                | MatchCode::IncludeAndSeekNextRow
        ) {
            let kept = match filter.as_deref() {
                Some(f) => f.transform_cell(cell.clone()),
                None => cell.clone(),
            };
            size += kept.serialized_size(true) as u64;
            if size > max_row_size {
                return Err(RegionError::RowTooBig {
                    limit: max_row_size,
                    row: row.to_vec(),
                    family: kept.family().to_vec(),
                });
            }
            out.push(kept);
        }
        match code {
            MatchCode::Include | MatchCode::Skip => source.advance()?,
            // The empty qualifier also holds the family's delete markers, which may
            // sort after its puts: the store scanner steps through it.
            MatchCode::IncludeAndSeekNextCol | MatchCode::SeekNextCol if in_empty_column => {
                source.advance()?
            }
            MatchCode::IncludeAndSeekNextCol | MatchCode::SeekNextCol => {
                skip_column(source, column, STEPS_BEFORE_SEEK)?
            }
            MatchCode::IncludeAndSeekNextRow | MatchCode::SeekNextRow => break,
            // Within the empty qualifier a seek is stepped (the row's family markers
            // may follow); a hint past the row leaves nothing of it to mask.
            MatchCode::SeekTo(key) => {
                let to = KeyRef::parse(&key)?;
                let (forward, later_row) = match source.peek() {
                    Some(c) => (
                        compare_keys(&to, &c.key_ref()) == Ordering::Greater,
                        to.row > row,
                    ),
                    None => (false, false),
                };
                if forward && (!in_empty_column || later_row) {
                    source.reseek(&to)?;
                } else {
                    source.advance()?;
                }
            }
        }
    }
    Ok(())
}
