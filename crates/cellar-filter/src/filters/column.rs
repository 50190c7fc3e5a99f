//! Filters deciding on columns and keys: ColumnPrefix, MultipleColumnPrefix, ColumnRange,
//! ColumnPagination, ColumnCountGet, Family, Qualifier, Timestamps, KeyOnly.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use cellar_types::Cell;

use super::first_on_column;
use crate::compare::{Comparable, CompareOp};
use crate::filter::{Filter, ReturnCode};

/// Columns whose qualifier starts with a prefix; seeks to it.
#[derive(Debug)]
pub struct ColumnPrefix {
    pub prefix: Vec<u8>,
}

impl Filter for ColumnPrefix {
    fn cells_only(&self) -> bool {
        true
    }
    fn filter_cell(&mut self, cell: &Cell) -> ReturnCode {
        let q = cell.qualifier();
        let n = self.prefix.len().min(q.len());
        match q[..n].cmp(&self.prefix[..n]) {
            Ordering::Less => ReturnCode::SeekNextUsingHint,
            Ordering::Greater => ReturnCode::NextRow,
            Ordering::Equal if q.len() < self.prefix.len() => ReturnCode::SeekNextUsingHint,
            Ordering::Equal => ReturnCode::Include,
        }
    }
    fn next_cell_hint(&self, cell: &Cell) -> Option<Vec<u8>> {
        Some(first_on_column(cell, &self.prefix))
    }
}

/// Columns whose qualifier starts with any of several prefixes.
#[derive(Debug)]
pub struct MultipleColumnPrefix {
    prefixes: BTreeSet<Vec<u8>>,
    hint: Option<Vec<u8>>,
}

impl MultipleColumnPrefix {
    pub fn new(prefixes: &[Vec<u8>]) -> MultipleColumnPrefix {
        MultipleColumnPrefix {
            prefixes: prefixes.iter().cloned().collect(),
            hint: None,
        }
    }
}

impl Filter for MultipleColumnPrefix {
    fn cells_only(&self) -> bool {
        true
    }
    fn filter_cell(&mut self, cell: &Cell) -> ReturnCode {
        let q = cell.qualifier().to_vec();
        let lesser = self.prefixes.range(..=q.clone()).next_back().cloned();
        match lesser {
            Some(p) => {
                if q.starts_with(&p) {
                    return ReturnCode::Include;
                }
                match self
                    .prefixes
                    .range((std::ops::Bound::Excluded(p), std::ops::Bound::Unbounded))
                    .next()
                {
                    None => ReturnCode::NextRow,
                    Some(next) => {
                        self.hint = Some(next.clone());
                        ReturnCode::SeekNextUsingHint
                    }
                }
            }
            None => {
                self.hint = self.prefixes.iter().next().cloned();
                if self.hint.is_none() {
                    return ReturnCode::Include;
                }
                ReturnCode::SeekNextUsingHint
            }
        }
    }
    fn next_cell_hint(&self, cell: &Cell) -> Option<Vec<u8>> {
        self.hint.as_ref().map(|h| first_on_column(cell, h))
    }
}

/// Columns in a qualifier range; seeks to its start.
#[derive(Debug)]
pub struct ColumnRange {
    pub min: Option<Vec<u8>>,
    pub min_inclusive: bool,
    pub max: Option<Vec<u8>>,
    pub max_inclusive: bool,
}

impl Filter for ColumnRange {
    fn cells_only(&self) -> bool {
        true
    }
    fn filter_cell(&mut self, cell: &Cell) -> ReturnCode {
        let q = cell.qualifier();
        if let Some(min) = &self.min {
            match q.cmp(min.as_slice()) {
                Ordering::Less => return ReturnCode::SeekNextUsingHint,
                Ordering::Equal if !self.min_inclusive => return ReturnCode::NextCol,
                _ => {}
            }
        }
        let Some(max) = &self.max else {
            return ReturnCode::Include;
        };
        match q.cmp(max.as_slice()) {
            Ordering::Less => ReturnCode::Include,
            Ordering::Equal if self.max_inclusive => ReturnCode::Include,
            _ => ReturnCode::NextRow,
        }
    }
    fn next_cell_hint(&self, cell: &Cell) -> Option<Vec<u8>> {
        self.min.as_ref().map(|m| first_on_column(cell, m))
    }
}

/// A page of columns per row: `limit` from the `offset`-th, or from a column (inclusive).
#[derive(Debug)]
pub struct ColumnPagination {
    pub limit: u32,
    pub offset: u32,
    pub column_offset: Option<Vec<u8>>,
    pub count: u64,
}

impl Filter for ColumnPagination {
    fn cells_only(&self) -> bool {
        true
    }
    fn reset(&mut self) {
        self.count = 0;
    }
    fn filter_cell(&mut self, cell: &Cell) -> ReturnCode {
        if let Some(col) = &self.column_offset {
            if self.count >= self.limit as u64 {
                return ReturnCode::NextRow;
            }
            if self.count == 0 && cell.qualifier() < col.as_slice() {
                return ReturnCode::SeekNextUsingHint;
            }
            self.count += 1;
            return ReturnCode::IncludeAndNextCol;
        }
        if self.count >= self.offset as u64 + self.limit as u64 {
            return ReturnCode::NextRow;
        }
        let code = if self.count < self.offset as u64 {
            ReturnCode::NextCol
        } else {
            ReturnCode::IncludeAndNextCol
        };
        self.count += 1;
        code
    }
    fn next_cell_hint(&self, cell: &Cell) -> Option<Vec<u8>> {
        self.column_offset
            .as_ref()
            .map(|c| first_on_column(cell, c))
    }
}

/// The first `limit` columns, then the scan ends (meant for Gets).
#[derive(Debug)]
pub struct ColumnCountGet {
    pub limit: u32,
    pub count: u64,
}

impl Filter for ColumnCountGet {
    fn reset(&mut self) {
        self.count = 0;
    }
    fn filter_all_remaining(&self) -> bool {
        self.count > self.limit as u64
    }
    fn filter_cell(&mut self, _cell: &Cell) -> ReturnCode {
        self.count += 1;
        if self.filter_all_remaining() {
            ReturnCode::NextCol
        } else {
            ReturnCode::IncludeAndNextCol
        }
    }
}

/// Cells whose family satisfies `family OP operand`; others skip the rest of the family.
#[derive(Debug)]
pub struct FamilyCompare {
    pub op: CompareOp,
    pub cmp: Comparable,
}

impl Filter for FamilyCompare {
    fn cells_only(&self) -> bool {
        true
    }
    fn filter_cell(&mut self, cell: &Cell) -> ReturnCode {
        if !cell.family().is_empty() && !self.cmp.passes(self.op, cell.family()) {
            return ReturnCode::NextRow;
        }
        ReturnCode::Include
    }
}

/// Cells whose qualifier satisfies `qualifier OP operand`.
#[derive(Debug)]
pub struct QualifierCompare {
    pub op: CompareOp,
    pub cmp: Comparable,
}

impl Filter for QualifierCompare {
    fn cells_only(&self) -> bool {
        true
    }
    fn filter_cell(&mut self, cell: &Cell) -> ReturnCode {
        if !self.cmp.passes(self.op, cell.qualifier()) {
            return ReturnCode::Skip;
        }
        ReturnCode::Include
    }
}

/// Cells with one of the listed timestamps.
#[derive(Debug)]
pub struct Timestamps {
    set: BTreeSet<i64>,
    min: i64,
    /// Seek to the next listed timestamp instead of skipping (HBase's `canHint`).
    can_hint: bool,
}

impl Timestamps {
    pub fn new(ts: &[i64], can_hint: bool) -> Timestamps {
        let set: BTreeSet<i64> = ts.iter().copied().collect();
        let min = set.iter().next().copied().unwrap_or(i64::MAX);
        Timestamps { set, min, can_hint }
    }
}

impl Filter for Timestamps {
    fn cells_only(&self) -> bool {
        true
    }
    fn filter_cell(&mut self, cell: &Cell) -> ReturnCode {
        let ts = cell.timestamp();
        if self.set.contains(&ts) {
            ReturnCode::Include
        } else if ts < self.min {
            ReturnCode::NextCol
        } else if self.can_hint {
            // Seek to the next listed (smaller) timestamp of the column.
            ReturnCode::SeekNextUsingHint
        } else {
            // Step on: the column's delete markers between here and there are seen.
            ReturnCode::Skip
        }
    }
    fn next_cell_hint(&self, cell: &Cell) -> Option<Vec<u8>> {
        let next = self.set.range(..cell.timestamp()).next_back()?;
        Some(
            cellar_types::KeyRef {
                row: cell.row(),
                family: cell.family(),
                qualifier: cell.qualifier(),
                timestamp: *next,
                type_code: cellar_types::CellType::Maximum.code(),
            }
            .to_vec(),
        )
    }
}

/// Keys only: values become empty (or their 4-byte length).
#[derive(Debug)]
pub struct KeyOnly {
    pub len_as_value: bool,
}

impl Filter for KeyOnly {
    fn cells_only(&self) -> bool {
        true
    }
    fn filter_cell(&mut self, _cell: &Cell) -> ReturnCode {
        ReturnCode::Include
    }
    fn transform_cell(&self, cell: Cell) -> Cell {
        let value = if self.len_as_value {
            (cell.value().len() as i32).to_be_bytes().to_vec()
        } else {
            Vec::new()
        };
        Cell::new(
            cell.row(),
            cell.family(),
            cell.qualifier(),
            cell.timestamp(),
            cell.cell_type(),
            value,
        )
        .map(|c| c.with_seq_id(cell.seq_id()))
        .unwrap_or(cell)
    }
}
