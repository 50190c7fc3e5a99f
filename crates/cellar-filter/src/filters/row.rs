//! Filters deciding on rows: PrefixFilter, InclusiveStopFilter, RowFilter, PageFilter,
//! FirstKeyOnlyFilter.

use std::cmp::Ordering;

use cellar_types::Cell;

use super::first_on_row;
use crate::compare::{Comparable, CompareOp};
use crate::filter::{Filter, ReturnCode};

/// Rows starting with a prefix (HBase 2.6's PrefixFilter): rows before it (in the
/// scan's direction) seek towards it by a hint, rows past it end the scan. Its
/// `filterRowKey` answers only "passed", so in an OR list a row before the prefix
/// still reaches its cells; `filterRow` says whether the row missed the prefix.
#[derive(Debug)]
pub struct Prefix {
    prefix: Vec<u8>,
    passed: bool,
    filter_row: bool,
    hint: bool,
    reversed: bool,
}

impl Prefix {
    pub fn new(prefix: Vec<u8>) -> Prefix {
        Prefix {
            prefix,
            passed: false,
            filter_row: true,
            hint: false,
            reversed: false,
        }
    }
}

/// HBase's `increaseLastNonMaxByte`: the last byte below 0x7f as a signed Java byte
/// (so 0x80..=0xff too, 0xff wrapping to 0x00) goes up by one.
fn increase_last_non_max_byte(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    if let Some(b) = out.iter_mut().rev().find(|b| (**b as i8) < i8::MAX) {
        *b = (*b as i8).wrapping_add(1) as u8;
    }
    out
}

impl Filter for Prefix {
    fn reset(&mut self) {
        self.filter_row = true;
    }
    fn filter_all_remaining(&self) -> bool {
        self.passed
    }
    fn filter_row_key(&mut self, row: &[u8]) -> bool {
        if self.passed {
            return true;
        }
        let n = self.prefix.len().min(row.len());
        let mut cmp = row[..n].cmp(&self.prefix[..n]);
        if cmp == Ordering::Equal && row.len() < self.prefix.len() {
            cmp = Ordering::Less;
        }
        if (!self.reversed && cmp == Ordering::Greater) || (self.reversed && cmp == Ordering::Less)
        {
            self.passed = true;
        }
        self.filter_row = cmp != Ordering::Equal;
        self.hint = (!self.reversed && cmp == Ordering::Less)
            || (self.reversed && cmp == Ordering::Greater);
        self.passed
    }
    fn filter_cell(&mut self, _cell: &Cell) -> ReturnCode {
        if self.hint {
            ReturnCode::SeekNextUsingHint
        } else if self.filter_row {
            ReturnCode::NextRow
        } else {
            ReturnCode::Include
        }
    }
    fn filter_row(&mut self) -> bool {
        self.filter_row
    }
    fn next_cell_hint(&self, _cell: &Cell) -> Option<Vec<u8>> {
        Some(if self.reversed {
            first_on_row(&increase_last_non_max_byte(&self.prefix))
        } else {
            first_on_row(&self.prefix)
        })
    }
    fn set_reversed(&mut self, reversed: bool) {
        self.reversed = reversed;
    }
}

/// Stops after the given row (inclusive).
#[derive(Debug)]
pub struct InclusiveStop {
    pub stop: Vec<u8>,
    pub done: bool,
    pub reversed: bool,
}

impl Filter for InclusiveStop {
    fn filter_all_remaining(&self) -> bool {
        self.done
    }
    fn filter_row_key(&mut self, row: &[u8]) -> bool {
        let cmp = row.cmp(self.stop.as_slice());
        self.done = if self.reversed {
            cmp == Ordering::Less
        } else {
            cmp == Ordering::Greater
        };
        self.done
    }
    fn filter_cell(&mut self, _cell: &Cell) -> ReturnCode {
        if self.done {
            ReturnCode::NextRow
        } else {
            ReturnCode::Include
        }
    }
    fn set_reversed(&mut self, reversed: bool) {
        self.reversed = reversed;
    }
}

/// Rows whose key satisfies `row OP operand`.
#[derive(Debug)]
pub struct RowCompare {
    pub op: CompareOp,
    pub cmp: Comparable,
    pub filter_out: bool,
}

impl Filter for RowCompare {
    fn reset(&mut self) {
        self.filter_out = false;
    }
    fn filter_row_key(&mut self, row: &[u8]) -> bool {
        self.filter_out = !self.cmp.passes(self.op, row);
        self.filter_out
    }
    fn filter_cell(&mut self, _cell: &Cell) -> ReturnCode {
        if self.filter_out {
            ReturnCode::NextRow
        } else {
            ReturnCode::Include
        }
    }
    fn filter_row(&mut self) -> bool {
        self.filter_out
    }
}

/// At most `page_size` rows (per region).
#[derive(Debug)]
pub struct Page {
    pub page_size: u64,
    pub rows_accepted: u64,
}

impl Filter for Page {
    fn filter_all_remaining(&self) -> bool {
        self.rows_accepted >= self.page_size
    }
    fn filter_cell(&mut self, _cell: &Cell) -> ReturnCode {
        ReturnCode::Include
    }
    fn filter_row(&mut self) -> bool {
        self.rows_accepted += 1;
        self.rows_accepted > self.page_size
    }
    fn has_filter_row(&self) -> bool {
        true
    }
}

/// Only the first cell of each row.
#[derive(Debug, Default)]
pub struct FirstKeyOnly {
    found: bool,
}

impl Filter for FirstKeyOnly {
    fn reset(&mut self) {
        self.found = false;
    }
    fn filter_cell(&mut self, _cell: &Cell) -> ReturnCode {
        if self.found {
            return ReturnCode::NextRow;
        }
        self.found = true;
        ReturnCode::Include
    }
}
