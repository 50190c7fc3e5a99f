//! What a read returns: the cells of one row, whether more of the row follows, and
//! cursor results.

use cellar_types::Cell;

/// The cells of one row, in HBase order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RowResult {
    pub row: Vec<u8>,
    pub cells: Vec<Cell>,
    /// For `check_existence_only` Gets.
    pub exists: Option<bool>,
    /// More cells of this row may follow in the next Result (`mayHaveMoreCellsInRow`).
    pub partial: bool,
    /// A cursor result (`Result.isCursor()`): no cells, only the row a scan that asked
    /// for cursors (`need_cursor_result`) had reached when it returned.
    pub cursor: bool,
}

impl RowResult {
    /// A cursor result at `row`.
    pub fn cursor_at(row: Vec<u8>) -> RowResult {
        RowResult {
            row,
            cursor: true,
            ..RowResult::default()
        }
    }

    /// `mayHaveMoreCellsInRow()`.
    pub fn may_have_more_cells_in_row(&self) -> bool {
        self.partial
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The newest value of a column.
    pub fn value(&self, family: &[u8], qualifier: &[u8]) -> Option<&[u8]> {
        self.cells
            .iter()
            .find(|c| c.family() == family && c.qualifier() == qualifier)
            .map(|c| c.value())
    }

    /// Serialized size of the cells.
    pub fn size(&self) -> u64 {
        self.cells
            .iter()
            .map(|c| c.serialized_size(true) as u64)
            .sum()
    }
}
