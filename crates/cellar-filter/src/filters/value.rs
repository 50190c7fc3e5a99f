//! Filters deciding on values: ValueFilter, ColumnValueFilter, SingleColumnValueFilter
//! (and its Exclude form), DependentColumnFilter.

use std::collections::HashSet;

use cellar_types::Cell;

use crate::compare::{Comparable, CompareOp};
use crate::filter::{Filter, ReturnCode};

/// Cells whose value satisfies `value OP operand`.
#[derive(Debug)]
pub struct ValueCompare {
    pub op: CompareOp,
    pub cmp: Comparable,
}

impl Filter for ValueCompare {
    fn filter_cell(&mut self, cell: &Cell) -> ReturnCode {
        if !self.cmp.passes(self.op, cell.value()) {
            return ReturnCode::Skip;
        }
        ReturnCode::Include
    }
}

/// The cells of one column whose value satisfies `value OP operand` (HBase 2's
/// `ColumnValueFilter`: the matching cells only, not the row). Past the column, the row
/// is done.
#[derive(Debug)]
pub struct ColumnValue {
    pub family: Vec<u8>,
    pub qualifier: Vec<u8>,
    pub op: CompareOp,
    pub cmp: Comparable,
    pub column_found: bool,
}

impl Filter for ColumnValue {
    fn reset(&mut self) {
        self.column_found = false;
    }
    fn filter_cell(&mut self, cell: &Cell) -> ReturnCode {
        if cell.family() != self.family.as_slice() || cell.qualifier() != self.qualifier.as_slice()
        {
            return if self.column_found {
                ReturnCode::NextRow
            } else {
                ReturnCode::NextCol
            };
        }
        self.column_found = true;
        if self.cmp.passes(self.op, cell.value()) {
            ReturnCode::Include
        } else {
            ReturnCode::Skip
        }
    }
}

/// Whole rows, kept when one column's value satisfies `value OP operand`.
#[derive(Debug)]
pub struct SingleColumnValue {
    pub family: Vec<u8>,
    pub qualifier: Vec<u8>,
    pub op: CompareOp,
    pub cmp: Comparable,
    pub filter_if_missing: bool,
    pub latest_version_only: bool,
    pub exclude: bool,
    pub found: bool,
    pub matched: bool,
}

impl SingleColumnValue {
    fn is_tested(&self, cell: &Cell) -> bool {
        cell.family() == self.family.as_slice() && cell.qualifier() == self.qualifier.as_slice()
    }
}

impl Filter for SingleColumnValue {
    fn reset(&mut self) {
        self.found = false;
        self.matched = false;
    }
    fn filter_cell(&mut self, cell: &Cell) -> ReturnCode {
        if self.matched {
            return ReturnCode::Include;
        }
        if self.latest_version_only && self.found {
            return ReturnCode::NextRow;
        }
        if !self.is_tested(cell) {
            return ReturnCode::Include;
        }
        self.found = true;
        if !self.cmp.passes(self.op, cell.value()) {
            return if self.latest_version_only {
                ReturnCode::NextRow
            } else {
                ReturnCode::Include
            };
        }
        self.matched = true;
        ReturnCode::Include
    }
    fn filter_row_cells(&mut self, cells: &mut Vec<Cell>) {
        if self.exclude {
            let (f, q) = (self.family.clone(), self.qualifier.clone());
            cells.retain(|c| !(c.family() == f.as_slice() && c.qualifier() == q.as_slice()));
        }
    }
    fn filter_row(&mut self) -> bool {
        if self.found {
            !self.matched
        } else {
            self.filter_if_missing
        }
    }
    fn has_filter_row(&self) -> bool {
        true
    }
}

/// Keeps cells whose timestamp matches one of a reference column's (passing) versions.
#[derive(Debug)]
pub struct DependentColumn {
    pub family: Vec<u8>,
    pub qualifier: Vec<u8>,
    pub drop_dependent: bool,
    pub compare: Option<(CompareOp, Comparable)>,
    pub stamps: HashSet<i64>,
}

impl Filter for DependentColumn {
    fn reset(&mut self) {
        self.stamps.clear();
    }
    fn filter_cell(&mut self, cell: &Cell) -> ReturnCode {
        if cell.family() != self.family.as_slice() || cell.qualifier() != self.qualifier.as_slice()
        {
            return ReturnCode::Include;
        }
        if let Some((op, cmp)) = &self.compare {
            if !cmp.passes(*op, cell.value()) {
                return ReturnCode::Skip;
            }
        }
        self.stamps.insert(cell.timestamp());
        if self.drop_dependent {
            ReturnCode::Skip
        } else {
            ReturnCode::Include
        }
    }
    fn filter_row_cells(&mut self, cells: &mut Vec<Cell>) {
        let stamps = &self.stamps;
        cells.retain(|c| stamps.contains(&c.timestamp()));
    }
    fn has_filter_row(&self) -> bool {
        true
    }
}
