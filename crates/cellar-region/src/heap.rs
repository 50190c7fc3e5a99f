//! The merge heap of a store's read: positioned on the least cell of all its cursors
//! (MemStore segments and store files), in HBase order; reversed, row by row downward.

use std::cmp::Ordering;

use cellar_types::{compare_cells, row_prefix, Cell, KeyRef};

use crate::cursor::{CellCursor, Source};
use crate::error::Result;

/// Merges cursors: always positioned on the smallest cell of all of them. Reversed, it
/// walks rows downward: it is focused on one row at a time (cells of that row come in
/// forward order) and steps back to the previous row when done with it.
pub struct Heap {
    cursors: Vec<Source>,
    min: Option<usize>,
    /// The least cursor after `min` (forward only): while the cursor at `min` stays
    /// below it, stepping needs one comparison instead of one per cursor.
    second: Option<usize>,
    /// The row prefix of the cell at `second`: a stepped cursor whose row prefix is
    /// smaller is still the least without comparing rows byte by byte.
    second_prefix: u64,
    reversed: bool,
    focus: Option<Vec<u8>>,
}

impl Heap {
    /// The sources merged, in the order given (a Get's: the active segment first).
    pub(crate) fn sources(&self) -> &[Source] {
        &self.cursors
    }

    /// The sources, to be stepped without the heap: the heap's order is lost then
    /// (a Get read from its active segment alone, which then drops the heap).
    pub(crate) fn sources_mut(&mut self) -> &mut [Source] {
        &mut self.cursors
    }

    pub fn new(cursors: Vec<Source>) -> Heap {
        let mut h = Heap {
            cursors,
            min: None,
            second: None,
            second_prefix: 0,
            reversed: false,
            focus: None,
        };
        h.settle();
        h
    }

    /// A reversed heap, its cursors moved to the greatest row below `row` (empty: the
    /// last row).
    pub fn reversed(cursors: Vec<Source>, row: &[u8]) -> Result<Heap> {
        let mut h = Heap {
            cursors,
            min: None,
            second: None,
            second_prefix: 0,
            reversed: true,
            focus: None,
        };
        for c in &mut h.cursors {
            c.seek_to_previous_row(row)?;
        }
        h.settle();
        Ok(h)
    }

    pub fn is_reversed(&self) -> bool {
        self.reversed
    }

    fn in_focus(&self, c: &Source) -> bool {
        match (&self.focus, c.peek()) {
            (Some(f), Some(cell)) => cell.row() == f.as_slice(),
            _ => false,
        }
    }

    fn settle(&mut self) {
        if !self.reversed {
            self.cursors.retain(|c| c.peek().is_some());
        }
        let mut best: Option<(usize, &Cell)> = None;
        let mut second: Option<(usize, &Cell)> = None;
        for (i, c) in self.cursors.iter().enumerate() {
            if self.reversed && !self.in_focus(c) {
                continue;
            }
            if let Some(cell) = c.peek() {
                match best {
                    Some((_, b)) if compare_cells(cell, b) != Ordering::Less => match second {
                        Some((_, s)) if compare_cells(cell, s) != Ordering::Less => {}
                        _ => second = Some((i, cell)),
                    },
                    _ => {
                        second = best;
                        best = Some((i, cell));
                    }
                }
            }
        }
        self.min = best.map(|(i, _)| i);
        self.second_prefix = second.map_or(0, |(_, c)| row_prefix(c.row()));
        self.second = second.map(|(i, _)| i);
    }

    pub fn peek(&self) -> Option<&Cell> {
        self.min.and_then(|i| self.cursors[i].peek())
    }

    pub fn advance(&mut self) -> Result<()> {
        if let Some(i) = self.min {
            self.cursors[i].advance()?;
            if !self.reversed {
                if let Some(cell) = self.cursors[i].peek() {
                    let still_least = match self.second.and_then(|j| self.cursors[j].peek()) {
                        None => self.second.is_none(),
                        Some(other) => match row_prefix(cell.row()).cmp(&self.second_prefix) {
                            Ordering::Less => true,
                            Ordering::Greater => false,
                            Ordering::Equal => compare_cells(cell, other) == Ordering::Less,
                        },
                    };
                    if still_least {
                        return Ok(());
                    }
                }
            }
            self.settle();
        }
        Ok(())
    }

    pub fn reseek(&mut self, key: &KeyRef<'_>) -> Result<()> {
        for i in 0..self.cursors.len() {
            if self.reversed && !self.in_focus(&self.cursors[i]) {
                continue;
            }
            self.cursors[i].reseek(key)?;
        }
        self.settle();
        Ok(())
    }

    /// Whether the least cursor knows of another version of its column after its cell.
    pub(crate) fn column_goes_on(&self) -> bool {
        self.min.is_some_and(|i| self.cursors[i].column_goes_on())
    }

    /// Reversed: the row being read while it has cells left, otherwise the greatest
    /// row any cursor is on. (A cursor that moved past the focused row within it is
    /// stepped back when the row is done.)
    pub fn max_row(&self) -> Option<&[u8]> {
        if let (Some(f), Some(_)) = (&self.focus, self.peek()) {
            return Some(f.as_slice());
        }
        self.cursors
            .iter()
            .filter_map(|c| c.peek().map(|x| x.row()))
            .max()
    }

    /// Reversed: reads `row` next.
    pub fn focus(&mut self, row: &[u8]) {
        if self.focus.as_deref() != Some(row) {
            self.focus = Some(row.to_vec());
            self.settle();
        }
    }

    /// Reversed: done with `row`; every cursor on it or past it moves below it.
    pub fn step_back(&mut self, row: &[u8]) -> Result<()> {
        for c in &mut self.cursors {
            let past = c.peek().is_none_or(|x| x.row() >= row);
            if past {
                c.seek_to_previous_row(row)?;
            }
        }
        self.focus = None;
        self.settle();
        Ok(())
    }
}

impl crate::column_key::ColumnWalk for Heap {
    #[inline]
    fn peek(&self) -> Option<&Cell> {
        Heap::peek(self)
    }

    #[inline]
    fn advance(&mut self) -> Result<()> {
        Heap::advance(self)
    }

    fn reseek(&mut self, key: &KeyRef<'_>) -> Result<()> {
        Heap::reseek(self, key)
    }

    fn column_goes_on(&self) -> bool {
        Heap::column_goes_on(self)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::cursor::MemCursor;
    use crate::memstore::MemSegment;

    /// The heap merges cursors in cell order when rows share their first eight bytes,
    /// are shorter than eight or end in zero bytes (the row-prefix shortcut between
    /// the least cursor and the next must never reorder them).
    #[test]
    fn heap_merges_in_order_across_row_prefixes() {
        let rows: Vec<Vec<u8>> = [
            &b"abcdefgh"[..],
            b"abcdefgh\0",
            b"abcdefgh\x01",
            b"abcdefg",
            b"abcdefg\0",
            b"abcdefgi",
            b"abcdefghzz",
            b"b",
            b"",
            b"\0",
        ]
        .iter()
        .map(|r| r.to_vec())
        .collect();
        let segs: Vec<MemSegment> = (0..3).map(|_| MemSegment::new()).collect();
        let mut all = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            for q in 0..3u64 {
                let c = Cell::put(row, "f", format!("q{q}"), 1, "v")
                    .map(|c| c.with_seq_id(1 + q))
                    .unwrap_or_else(|e| panic!("{e}"));
                segs[(i + q as usize) % 3].add(c.clone(), 0);
                all.push(c);
            }
        }
        all.sort();
        let start = KeyRef::first_on_row(b"");
        let cursors: Vec<Source> = segs
            .into_iter()
            .map(|s| {
                Source::from(
                    MemCursor::new(Arc::new(s), 10, &start).unwrap_or_else(|e| panic!("{e}")),
                )
            })
            .collect();
        let mut heap = Heap::new(cursors);
        let mut got = Vec::new();
        while let Some(c) = heap.peek() {
            got.push(c.clone());
            heap.advance().unwrap_or_else(|e| panic!("{e}"));
        }
        assert_eq!(got, all);
    }
}
