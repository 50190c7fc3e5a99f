//! Filters over filters: FilterList (MUST_PASS_ALL / MUST_PASS_ONE, with HBase's merging
//! of return codes and hints), WhileMatchFilter and SkipFilter.

use std::cmp::Ordering;

use cellar_types::{compare_keys, Cell, KeyRef};

use crate::filter::{Filter, ReturnCode};
use cellar_api::ListOp;

use ReturnCode::*;

fn is_in(rc: ReturnCode, set: &[ReturnCode]) -> bool {
    set.contains(&rc)
}

/// MUST_PASS_ALL: the larger step wins.
fn merge_and(rc: ReturnCode, local: ReturnCode) -> ReturnCode {
    if rc == SeekNextUsingHint {
        return SeekNextUsingHint;
    }
    match local {
        SeekNextUsingHint => SeekNextUsingHint,
        Include => rc,
        IncludeAndNextCol => {
            if is_in(rc, &[Include, IncludeAndNextCol]) {
                IncludeAndNextCol
            } else if rc == IncludeAndSeekNextRow {
                IncludeAndSeekNextRow
            } else if is_in(rc, &[Skip, NextCol]) {
                NextCol
            } else {
                NextRow
            }
        }
        IncludeAndSeekNextRow => {
            if is_in(rc, &[Include, IncludeAndNextCol, IncludeAndSeekNextRow]) {
                IncludeAndSeekNextRow
            } else {
                NextRow
            }
        }
        Skip => {
            if is_in(rc, &[Include, Skip]) {
                Skip
            } else if is_in(rc, &[IncludeAndNextCol, NextCol]) {
                NextCol
            } else {
                NextRow
            }
        }
        NextCol => {
            if is_in(rc, &[Include, IncludeAndNextCol, Skip, NextCol]) {
                NextCol
            } else {
                NextRow
            }
        }
        NextRow => NextRow,
    }
}

/// MUST_PASS_ONE: the smaller step wins.
fn merge_or(rc: Option<ReturnCode>, local: ReturnCode) -> ReturnCode {
    let Some(rc) = rc else {
        return local;
    };
    match local {
        Include => Include,
        IncludeAndNextCol => {
            if is_in(rc, &[Include, Skip, SeekNextUsingHint]) {
                Include
            } else {
                IncludeAndNextCol
            }
        }
        IncludeAndSeekNextRow => {
            if is_in(rc, &[Include, Skip, SeekNextUsingHint]) {
                Include
            } else if is_in(rc, &[IncludeAndNextCol, NextCol]) {
                IncludeAndNextCol
            } else {
                IncludeAndSeekNextRow
            }
        }
        Skip => {
            if is_in(rc, &[Include, IncludeAndNextCol, IncludeAndSeekNextRow]) {
                Include
            } else {
                Skip
            }
        }
        NextCol => {
            if rc == Include {
                Include
            } else if is_in(rc, &[NextCol, NextRow]) {
                NextCol
            } else if is_in(rc, &[IncludeAndNextCol, IncludeAndSeekNextRow]) {
                IncludeAndNextCol
            } else {
                Skip
            }
        }
        NextRow => {
            if is_in(rc, &[Skip, SeekNextUsingHint]) {
                Skip
            } else {
                rc
            }
        }
        SeekNextUsingHint => {
            if is_in(rc, &[Include, IncludeAndNextCol, IncludeAndSeekNextRow]) {
                Include
            } else if is_in(rc, &[Skip, NextCol, NextRow]) {
                Skip
            } else {
                SeekNextUsingHint
            }
        }
    }
}

fn key_cmp(cell: &Cell, key: &[u8]) -> Ordering {
    match KeyRef::parse(key) {
        Ok(k) => compare_keys(&cell.key_ref(), &k),
        Err(_) => Ordering::Greater,
    }
}

/// Several filters, AND or OR.
#[derive(Debug)]
pub struct FilterList {
    op: ListOp,
    filters: Vec<Box<dyn Filter>>,
    /// AND: the sub-filters that asked for a hint on the last cell.
    hinting: Vec<usize>,
    /// OR: each sub-filter's previous code and cell (so it is not re-asked about cells
    /// it already chose to skip), and which sub-filters included the last cell.
    prev: Vec<Option<(ReturnCode, Cell)>>,
    included: Vec<bool>,
    /// A reversed scan: HBase's list compares cells and hints the other way round
    /// (`FilterListBase.compareCell`).
    reversed: bool,
}

impl FilterList {
    pub fn new(op: ListOp, filters: Vec<Box<dyn Filter>>) -> FilterList {
        let n = filters.len();
        FilterList {
            op,
            filters,
            hinting: Vec::new(),
            prev: vec![None; n],
            included: vec![false; n],
            reversed: false,
        }
    }

    /// `compareCell`: key order, turned round in a reversed scan.
    fn directed(&self, o: Ordering) -> Ordering {
        if self.reversed {
            o.reverse()
        } else {
            o
        }
    }

    fn or_by_previous(&self, i: usize, cell: &Cell) -> Option<ReturnCode> {
        let (code, prev) = self.prev[i].as_ref()?;
        match code {
            SeekNextUsingHint => {
                let hint = self.filters[i].next_cell_hint(prev)?;
                (self.directed(key_cmp(cell, &hint)) == Ordering::Less).then_some(SeekNextUsingHint)
            }
            NextCol | IncludeAndNextCol => (prev.family() == cell.family()
                && prev.qualifier() == cell.qualifier())
            .then_some(NextCol),
            NextRow | IncludeAndSeekNextRow => (prev.family() == cell.family()).then_some(NextRow),
            Include | Skip => None,
        }
    }
}

impl Filter for FilterList {
    fn reset(&mut self) {
        for f in &mut self.filters {
            f.reset();
        }
        self.prev.iter_mut().for_each(|p| *p = None);
        self.hinting.clear();
    }

    fn filter_all_remaining(&self) -> bool {
        if self.filters.is_empty() {
            return false;
        }
        match self.op {
            ListOp::MustPassAll => self.filters.iter().any(|f| f.filter_all_remaining()),
            ListOp::MustPassOne => self.filters.iter().all(|f| f.filter_all_remaining()),
        }
    }

    fn filter_row_key(&mut self, row: &[u8]) -> bool {
        if self.filters.is_empty() {
            return false;
        }
        match self.op {
            ListOp::MustPassAll => {
                let mut out = false;
                for f in &mut self.filters {
                    if f.filter_all_remaining() || f.filter_row_key(row) {
                        out = true;
                    }
                }
                out
            }
            ListOp::MustPassOne => {
                let mut out = true;
                for f in &mut self.filters {
                    if !f.filter_all_remaining() && !f.filter_row_key(row) {
                        out = false;
                    }
                }
                out
            }
        }
    }

    fn filter_cell(&mut self, cell: &Cell) -> ReturnCode {
        if self.filters.is_empty() {
            return Include;
        }
        match self.op {
            ListOp::MustPassAll => {
                self.hinting.clear();
                let mut rc = Include;
                for (i, f) in self.filters.iter_mut().enumerate() {
                    if f.filter_all_remaining() {
                        return NextRow;
                    }
                    let local = f.filter_cell(cell);
                    if local == SeekNextUsingHint {
                        self.hinting.push(i);
                    }
                    rc = merge_and(rc, local);
                    if !rc.includes() {
                        return rc;
                    }
                }
                if !self.hinting.is_empty() {
                    return SeekNextUsingHint;
                }
                rc
            }
            ListOp::MustPassOne => {
                let mut rc: Option<ReturnCode> = None;
                let mut every_hint = true;
                for i in 0..self.filters.len() {
                    self.included[i] = false;
                    if self.filters[i].filter_all_remaining() {
                        continue;
                    }
                    let local = match self.or_by_previous(i, cell) {
                        Some(c) => c,
                        None => self.filters[i].filter_cell(cell),
                    };
                    self.prev[i] = if is_in(local, &[Include, Skip]) {
                        None
                    } else {
                        Some((local, cell.clone()))
                    };
                    if local != SeekNextUsingHint {
                        every_hint = false;
                    }
                    rc = Some(merge_or(rc, local));
                    if local.includes() {
                        self.included[i] = true;
                    }
                }
                if every_hint {
                    return SeekNextUsingHint;
                }
                rc.unwrap_or(Skip)
            }
        }
    }

    fn transform_cell(&self, mut cell: Cell) -> Cell {
        for (i, f) in self.filters.iter().enumerate() {
            if self.op == ListOp::MustPassAll || self.included[i] {
                cell = f.transform_cell(cell);
            }
        }
        cell
    }

    fn filter_row_cells(&mut self, cells: &mut Vec<Cell>) {
        for f in &mut self.filters {
            f.filter_row_cells(cells);
        }
    }

    /// As HBase's lists, the members are asked in order and the asking stops at the
    /// first answer that decides the list (AND: a member that drops the row; OR: one
    /// that keeps it), so a later PageFilter does not count a row an earlier member
    /// already decided.
    fn filter_row(&mut self) -> bool {
        if self.filters.is_empty() {
            return false;
        }
        match self.op {
            ListOp::MustPassAll => self.filters.iter_mut().any(|f| f.filter_row()),
            ListOp::MustPassOne => self.filters.iter_mut().all(|f| f.filter_row()),
        }
    }

    fn has_filter_row(&self) -> bool {
        self.filters.iter().any(|f| f.has_filter_row())
    }

    fn next_cell_hint(&self, cell: &Cell) -> Option<Vec<u8>> {
        match self.op {
            ListOp::MustPassAll => self
                .hinting
                .iter()
                .filter(|i| !self.filters[**i].filter_all_remaining())
                .filter_map(|i| self.filters[*i].next_cell_hint(cell))
                .max_by(|a, b| self.directed(cmp_keys(a, b))),
            ListOp::MustPassOne => {
                let mut best: Option<Vec<u8>> = None;
                for f in &self.filters {
                    if f.filter_all_remaining() {
                        continue;
                    }
                    let h = f.next_cell_hint(cell)?;
                    if best
                        .as_ref()
                        .is_none_or(|b| self.directed(cmp_keys(&h, b)) == Ordering::Less)
                    {
                        best = Some(h);
                    }
                }
                best
            }
        }
    }

    fn set_reversed(&mut self, reversed: bool) {
        self.reversed = reversed;
        for f in &mut self.filters {
            f.set_reversed(reversed);
        }
    }
}

fn cmp_keys(a: &[u8], b: &[u8]) -> Ordering {
    match (KeyRef::parse(a), KeyRef::parse(b)) {
        (Ok(x), Ok(y)) => compare_keys(&x, &y),
        _ => a.cmp(b),
    }
}

/// Ends the scan at the first cell or row its filter rejects.
#[derive(Debug)]
pub struct WhileMatchFilter {
    inner: Box<dyn Filter>,
    done: bool,
}

impl WhileMatchFilter {
    pub fn new(inner: Box<dyn Filter>) -> WhileMatchFilter {
        WhileMatchFilter { inner, done: false }
    }
}

impl Filter for WhileMatchFilter {
    fn reset(&mut self) {
        self.inner.reset();
    }
    fn filter_all_remaining(&self) -> bool {
        self.done || self.inner.filter_all_remaining()
    }
    fn filter_row_key(&mut self, row: &[u8]) -> bool {
        if self.filter_all_remaining() {
            return true;
        }
        let v = self.inner.filter_row_key(row);
        self.done |= v;
        v
    }
    // The wrapped filter is asked even once this one is done, as HBase's is: at
    // the top of a scan the region ends the scan (a done filter closes each store),
    // but wrapped in a SkipFilter or a list, later rows still reach it.
    fn filter_cell(&mut self, cell: &Cell) -> ReturnCode {
        let code = self.inner.filter_cell(cell);
        self.done |= code != Include;
        code
    }
    fn transform_cell(&self, cell: Cell) -> Cell {
        self.inner.transform_cell(cell)
    }
    // HBase's WhileMatchFilter does not pass filterRowCells on: a wrapped
    // DependentColumnFilter keeps every cell of a row (found by the HBase oracle).
    fn filter_row(&mut self) -> bool {
        let v = self.inner.filter_row();
        self.done |= v;
        v
    }
    fn has_filter_row(&self) -> bool {
        true
    }
    // No hint: HBase's WhileMatchFilter does not pass getNextCellHint on (a wrapped
    // filter's SEEK_NEXT_USING_HINT steps to the next cell), nor the reversed flag (the
    // wrapped filter runs as in a forward scan).
}

/// Drops a whole row when its filter rejects any of the row's cells.
#[derive(Debug)]
pub struct SkipFilter {
    inner: Box<dyn Filter>,
    filter_row: bool,
}

impl SkipFilter {
    pub fn new(inner: Box<dyn Filter>) -> SkipFilter {
        SkipFilter {
            inner,
            filter_row: false,
        }
    }
}

impl Filter for SkipFilter {
    fn reset(&mut self) {
        self.inner.reset();
        self.filter_row = false;
    }
    // HBase's SkipFilter asks its filter about cells only: never about the row key
    // (a wrapped RowFilter passes every cell) nor about ending the scan.
    fn filter_all_remaining(&self) -> bool {
        false
    }
    fn filter_row_key(&mut self, _row: &[u8]) -> bool {
        false
    }
    fn filter_cell(&mut self, cell: &Cell) -> ReturnCode {
        let code = self.inner.filter_cell(cell);
        self.filter_row |= code != Include;
        code
    }
    fn transform_cell(&self, cell: Cell) -> Cell {
        self.inner.transform_cell(cell)
    }
    fn filter_row(&mut self) -> bool {
        self.filter_row
    }
    fn has_filter_row(&self) -> bool {
        true
    }
    // No hint and no reversed flag passed on, as HBase's SkipFilter (see
    // WhileMatchFilter).
}
