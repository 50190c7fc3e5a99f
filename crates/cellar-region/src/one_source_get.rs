//! A Get answered from one source. A Get opens its one-row scanner as any read does:
//! in each store, the sources that may hold the row (the active MemStore segment, the
//! segment being flushed, the store files its bloom filters do not rule out), each
//! positioned at the row. When in every store at most one source stands on the row —
//! a row written since the last flush, or a row in one store file — and the read is
//! plain (whole families, no filter, no TTL, not raw), the row is read by stepping
//! that source directly: the same cells in the same order, decided by the same matcher
//! with the same moves on its verdicts, as the store scanner's merge of that one
//! source gives, without the merge heap's comparisons and the scanners' row assembly.
//! Otherwise — or at a verdict that seeks to a key — the scanner reads the row.

use cellar_types::{same_bytes, Cell, KeyRef};

use crate::cursor::{CellCursor, Source};
use crate::error::{RegionError, Result};
use crate::matcher::{MatchCode, Matcher};
use crate::scanner::{last_on_column, same_column, RegionScanner};
use cellar_api::RowResult;

/// What became of a Get offered to the one-source path.
pub(crate) enum Outcome {
    /// Read from one source in each store.
    Row(RowResult),
    /// Not for this path: the scanner is untouched, to read the row.
    Scan,
    /// A verdict asked for a seek to a key midway: the scanner's sources have moved,
    /// and the row is to be read by a new one. The matcher gives such verdicts for
    /// named columns and filters' hints, which plain reads do not have: this keeps a
    /// verdict the matcher may learn later from being stepped wrongly.
    Afresh,
}

fn on_row(source: &Source, row: &[u8]) -> bool {
    source.peek().is_some_and(|c| same_bytes(c.row(), row))
}

/// Reads the row `scanner` (a Get of `row`, just opened) is for from one source per
/// store when it may (see the module documentation), with room for `cells` cells;
/// RowTooBig past the row size limit in a store, as the scanner would.
pub(crate) fn read(scanner: &mut RegionScanner, row: &[u8], cells: usize) -> Result<Outcome> {
    if scanner.has_filter() {
        return Ok(Outcome::Scan);
    }
    let alone = scanner.stores_mut().iter_mut().all(|s| {
        let (heap, matcher, _) = s.parts_mut();
        matcher.params().is_plain() && heap.sources().iter().filter(|c| on_row(c, row)).count() <= 1
    });
    if !alone {
        return Ok(Outcome::Scan);
    }
    let mut out = Vec::with_capacity(cells.min(256));
    for s in scanner.stores_mut() {
        let (heap, matcher, max_row_size) = s.parts_mut();
        let Some(source) = heap.sources_mut().iter_mut().find(|c| on_row(c, row)) else {
            continue;
        };
        if !read_store(source, matcher, row, max_row_size, &mut out)? {
            return Ok(Outcome::Afresh);
        }
    }
    Ok(Outcome::Row(RowResult {
        row: row.to_vec(),
        cells: out,
        exists: None,
        partial: false,
        cursor: false,
    }))
}

/// One store's cells of `row` from `source` into `out`, as the store scanner's
/// `read_row` reads them from a merge of that one source; false at a seek to a key.
fn read_store(
    source: &mut Source,
    matcher: &mut Matcher,
    row: &[u8],
    max_row_size: u64,
    out: &mut Vec<Cell>,
) -> Result<bool> {
    let mut size: u64 = 0;
    matcher.enter_row(row);
    while let Some(cell) = source.peek() {
        if !same_bytes(cell.row(), row) {
            break;
        }
        let code = matcher.match_cell(cell, None);
        if matches!(
            code,
            MatchCode::Include
                | MatchCode::IncludeAndSeekNextCol
                | MatchCode::IncludeAndSeekNextRow
        ) {
            size += cell.serialized_size(true) as u64;
            if size > max_row_size {
                return Err(RegionError::RowTooBig {
                    limit: max_row_size,
                    row: row.to_vec(),
                    family: cell.family().to_vec(),
                });
            }
            out.push(cell.clone());
        }
        match code {
            MatchCode::Include | MatchCode::Skip => source.advance()?,
            // The empty qualifier also holds the family's delete markers, which may
            // sort after its puts: the store scanner steps through it.
            MatchCode::IncludeAndSeekNextCol | MatchCode::SeekNextCol
                if cell.qualifier().is_empty() =>
            {
                source.advance()?
            }
            MatchCode::IncludeAndSeekNextCol | MatchCode::SeekNextCol => {
                skip_to_next_column(source)?
            }
            MatchCode::IncludeAndSeekNextRow | MatchCode::SeekNextRow => break,
            // A seek to a key (a hint, or a skip within the empty qualifier) is the
            // store scanner's.
            MatchCode::SeekTo(_) => return Ok(false),
        }
    }
    Ok(true)
}

/// Past the column under `source`, as the store scanner's `skip_to_next_column`: a few
/// steps (the next column is usually a step away), then a seek.
fn skip_to_next_column(source: &mut Source) -> Result<()> {
    const STEPS_BEFORE_SEEK: usize = 4;
    let Some(current) = source.peek().cloned() else {
        return Ok(());
    };
    for _ in 0..STEPS_BEFORE_SEEK {
        source.advance()?;
        match source.peek() {
            Some(next) if same_column(next, &current) => {}
            _ => return Ok(()),
        }
    }
    source.reseek(&KeyRef::parse(&last_on_column(&current))?)
}
