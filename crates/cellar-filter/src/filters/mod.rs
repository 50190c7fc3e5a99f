//! The individual filters, by what they look at.

pub mod column;
pub mod row;
pub mod value;

use cellar_types::{Cell, KeyRef};

/// The flat key of the first cell of `row` (for hints).
pub(crate) fn first_on_row(row: &[u8]) -> Vec<u8> {
    KeyRef::first_on_row(row).to_vec()
}

/// The flat key of the first cell of (`cell`'s row and family, `qualifier`).
pub(crate) fn first_on_column(cell: &Cell, qualifier: &[u8]) -> Vec<u8> {
    KeyRef::first_on_column(cell.row(), cell.family(), qualifier).to_vec()
}
