//! The filter contract, as HBase's `Filter`: per row `reset`, `filter_all_remaining`,
//! `filter_row_key`; per cell `filter_cell` (after deletes, time range and column
//! selection, before version counting) and `transform_cell`; then `filter_row_cells` and
//! `filter_row`; `next_cell_hint` after SEEK_NEXT_USING_HINT.

use std::fmt::Debug;

use cellar_types::Cell;

/// What to do with a cell (HBase's `Filter.ReturnCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReturnCode {
    Include,
    IncludeAndNextCol,
    IncludeAndSeekNextRow,
    Skip,
    NextCol,
    NextRow,
    SeekNextUsingHint,
}

impl ReturnCode {
    /// Whether the cell is kept.
    pub fn includes(self) -> bool {
        matches!(
            self,
            ReturnCode::Include | ReturnCode::IncludeAndNextCol | ReturnCode::IncludeAndSeekNextRow
        )
    }
}

/// A stateful filter run by one scanner.
pub trait Filter: Debug + Send {
    /// A new row starts.
    fn reset(&mut self) {}
    /// True ends the whole scan.
    fn filter_all_remaining(&self) -> bool {
        false
    }
    /// True drops the row (asked once per row, with its key).
    fn filter_row_key(&mut self, _row: &[u8]) -> bool {
        false
    }
    /// The verdict on one cell.
    fn filter_cell(&mut self, cell: &Cell) -> ReturnCode;
    /// Rewrites an included cell.
    fn transform_cell(&self, cell: Cell) -> Cell {
        cell
    }
    /// Edits the row's cells once they are all known (only with `has_filter_row`).
    fn filter_row_cells(&mut self, _cells: &mut Vec<Cell>) {}
    /// True drops the row after its cells are known (only with `has_filter_row`).
    fn filter_row(&mut self) -> bool {
        false
    }
    /// Whether the row-level hooks are used (then a row cannot be split into batches).
    fn has_filter_row(&self) -> bool {
        false
    }
    /// The key to seek to after SEEK_NEXT_USING_HINT on `cell` (a flat key; see
    /// `cellar_types::KeyRef`).
    fn next_cell_hint(&self, _cell: &Cell) -> Option<Vec<u8>> {
        None
    }
    /// The scan runs backward.
    fn set_reversed(&mut self, _reversed: bool) {}
    /// Whether the filter decides on cells alone: `filter_cell`, `transform_cell` and
    /// `next_cell_hint`, with no row-key, row or row-cells verdict and never done
    /// before the read ends (a Get may then be read by stepping its one source).
    fn cells_only(&self) -> bool {
        false
    }
}
