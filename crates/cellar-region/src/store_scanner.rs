//! One family's part of a read: a store scanner merges the family's sources and runs
//! the matcher over them, a row at a time. It sums the bytes it includes per call and
//! fails with RowTooBigException as soon as they pass `hbase.table.max.rowsize`, before
//! reading the rest of the row.

use cellar_filter::Filter;
use cellar_types::{compare_keys, same_bytes, Cell, KeyRef};

use crate::column_key::{skip_column, ColumnKey};
use crate::error::{RegionError, Result};
use crate::heap::Heap;
use crate::matcher::{MatchCode, Matcher};

/// Why a store stopped reading a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowProgress {
    /// Every cell of the row in this family has been seen.
    Done,
    /// A limit was reached; cells of the row may remain.
    More,
}

/// One family's part of a scan.
pub struct StoreScanner {
    heap: Heap,
    matcher: Matcher,
    max_row_size: u64,
    /// A returned cell that did not fit the last call, and whether the row ends after it.
    pending: Option<(Cell, bool)>,
    /// Whether the scan's filter needs this family to decide on a row (HBase's
    /// `isFamilyEssential`); the others are read on demand, for rows already kept.
    pub(crate) essential: bool,
    /// Closed for the rest of the scan: asked for a cell once the filter was done
    /// (HBase's matcher answers DONE_SCAN and its store scanner closes).
    closed: bool,
    /// The column being skipped.
    column: ColumnKey,
    /// The row being read is the last a forward read can return (a Get's row, an
    /// inclusive stop row): done with it, the store closes instead of seeking on.
    on_last_row: bool,
}

/// Steps a read takes within a column before it seeks past the rest of it.
pub(crate) const STEPS_BEFORE_SEEK: usize = 4;

impl StoreScanner {
    pub fn new(heap: Heap, matcher: Matcher, max_row_size: u64) -> StoreScanner {
        StoreScanner {
            heap,
            matcher,
            max_row_size,
            pending: None,
            essential: true,
            closed: false,
            column: ColumnKey::default(),
            on_last_row: false,
        }
    }

    /// Tells the store whether the row it reads or skips next is the read's last
    /// (HBase's `moreRowsMayExistAfter`): done with that row, the store closes rather
    /// than seeking its sources to the next one.
    pub(crate) fn set_on_last_row(&mut self, last: bool) {
        self.on_last_row = last;
    }

    /// Marks the family as one the filter does not need: read only for rows found in
    /// the needed families and kept by the filter (HBase's joined heap).
    pub fn on_demand(mut self) -> StoreScanner {
        self.essential = false;
        self
    }

    /// The merge heap (a Get from one source looks at its sources first).
    pub(crate) fn heap(&self) -> &Heap {
        &self.heap
    }

    /// The merge heap, the matcher and the row size limit (a Get from one source
    /// steps the heap's sources itself, `one_source_get.rs`).
    pub(crate) fn parts_mut(&mut self) -> (&mut Heap, &mut Matcher, u64) {
        (&mut self.heap, &mut self.matcher, self.max_row_size)
    }

    /// Brings a family read on demand to `row` (it is not moved by rows it skipped).
    pub(crate) fn catch_up(&mut self, row: &[u8]) -> Result<()> {
        if self.pending.is_none() && self.peek_row().is_some_and(|r| r < row) {
            self.heap.reseek(&KeyRef::first_on_row(row))?;
        }
        Ok(())
    }

    /// The row read next (reversed: the greatest row left).
    pub fn peek_row(&self) -> Option<&[u8]> {
        if self.closed {
            return None;
        }
        if let Some((c, _)) = &self.pending {
            return Some(c.row());
        }
        if self.heap.is_reversed() {
            return self.heap.max_row();
        }
        self.heap.peek().map(|c| c.row())
    }

    /// Moves forward to `key` (a flat key).
    pub fn seek(&mut self, key: &[u8]) -> Result<()> {
        let k = KeyRef::parse(key)?;
        self.heap.reseek(&k)
    }

    /// Moves past every cell of the column under the heap. Most columns hold one
    /// visible version, so the next cell is usually in the next column already: step a
    /// few times before seeking — a seek costs a comparison chain in every cursor —
    /// unless the MemStore knows more versions follow (see `column_key`). Reversed,
    /// it seeks at once.
    fn skip_to_next_column(&mut self) -> Result<()> {
        let steps = if self.heap.is_reversed() {
            0
        } else {
            STEPS_BEFORE_SEEK
        };
        skip_column(&mut self.heap, &mut self.column, steps)
    }

    /// Skips the rest of `row`; after the read's last row, closes instead.
    pub fn skip_row(&mut self, row: &[u8]) -> Result<()> {
        if self.heap.is_reversed() {
            return self.heap.step_back(row);
        }
        if self.on_last_row {
            self.closed = true;
            self.pending = None;
            return Ok(());
        }
        self.heap.reseek(&KeyRef::last_on_row(row))
    }

    /// Reads cells of `row`, appending the ones the read returns to `out`, until the row
    /// ends in this family or `out` holds `max_cells` cells or `max_bytes` bytes. The
    /// limits are checked when the next returned cell is found, not before: a cell that
    /// does not fit waits in `pending` for the next call, so `More` means a cell of the
    /// row really follows and a row's last fragment is always known as the last.
    pub fn read_row(
        &mut self,
        row: &[u8],
        mut filter: Option<&mut (dyn Filter + 'static)>,
        out: &mut Vec<Cell>,
        max_cells: usize,
        max_bytes: u64,
        bytes: &mut u64,
    ) -> Result<RowProgress> {
        let mut size: u64 = 0;
        if let Some((cell, ends_row)) = self.pending.take() {
            self.account(row, &cell, &mut size, bytes)?;
            out.push(cell);
            if ends_row {
                return Ok(RowProgress::Done);
            }
        }
        if self.heap.is_reversed() {
            self.heap.focus(row);
        }
        // Only cells of `row` reach the matcher below.
        self.matcher.enter_row(row);
        while let Some(cell) = self.heap.peek() {
            // As HBase's matcher, a done filter is asked before the row is: the store
            // closes at the next cell it is asked about, of this row or the next.
            if filter.as_deref().is_some_and(|f| f.filter_all_remaining()) {
                self.closed = true;
                self.pending = None;
                return Ok(RowProgress::Done);
            }
            if !same_bytes(cell.row(), row) {
                return Ok(RowProgress::Done);
            }
            let code = self.matcher.match_cell(cell, filter.as_deref_mut());
            // The empty qualifier also holds the family's delete markers, which may sort
            // after its puts: step through it instead of seeking past them.
            let in_empty_column = cell.qualifier().is_empty();
            let include = matches!(
                code,
                MatchCode::Include
                    | MatchCode::IncludeAndSeekNextCol
                    | MatchCode::IncludeAndSeekNextRow
            );
            // Limits apply between cells, once this call has something to return.
            let limited = !out.is_empty() && (out.len() >= max_cells || *bytes >= max_bytes);
            if include {
                // Straight into the row's cells (taken back below if over a limit): an
                // included cell is not moved through temporaries on the way.
                let c = cell.clone();
                out.push(match filter.as_deref() {
                    Some(f) => f.transform_cell(c),
                    None => c,
                });
            }
            let ends_row = matches!(
                code,
                MatchCode::IncludeAndSeekNextRow | MatchCode::SeekNextRow
            );
            match code {
                MatchCode::Include | MatchCode::Skip => self.heap.advance()?,
                MatchCode::IncludeAndSeekNextCol | MatchCode::SeekNextCol => {
                    if in_empty_column {
                        self.heap.advance()?;
                    } else {
                        self.skip_to_next_column()?;
                    }
                }
                MatchCode::IncludeAndSeekNextRow | MatchCode::SeekNextRow => {
                    self.skip_row(row)?;
                }
                // HBase's reversed store scanner never seeks forward, nor back within
                // a row (its heap stays on the cell, whose second visit the version
                // tracker skips): a hint there only steps to the next cell. A hint
                // into an earlier row seeks back to it (`backwardSeek`): the greatest
                // row at or below the hint's, the rows between never read.
                MatchCode::SeekTo(key) if self.heap.is_reversed() => {
                    let earlier_row = KeyRef::parse(&key)
                        .ok()
                        .filter(|k| k.row < row)
                        .map(|k| k.row.to_vec());
                    if let Some(mut target) = earlier_row {
                        target.push(0);
                        self.heap.step_back(&target)?;
                        self.close_if_done(filter.as_deref());
                        return Ok(RowProgress::Done);
                    }
                    self.matcher.hint_not_taken();
                    self.heap.advance()?;
                }
                MatchCode::SeekTo(key) => {
                    let (forward, later_row) = match (KeyRef::parse(&key), self.heap.peek()) {
                        (Ok(k), Some(c)) => (
                            compare_keys(&k, &c.key_ref()) == std::cmp::Ordering::Greater,
                            k.row > row,
                        ),
                        _ => (false, false),
                    };
                    // Within the empty qualifier the seek is stepped (the row's family
                    // markers may follow); a hint past the row leaves nothing of it to
                    // mask, and the store moves there as HBase's does.
                    if forward && (!in_empty_column || later_row) {
                        self.seek(&key)?;
                    } else {
                        self.heap.advance()?;
                    }
                }
            }
            if include {
                if limited {
                    if let Some(c) = out.pop() {
                        self.pending = Some((c, ends_row));
                    }
                    return Ok(RowProgress::More);
                }
                if let Some(c) = out.last() {
                    self.account(row, c, &mut size, bytes)?;
                }
            }
            if ends_row {
                self.close_if_done(filter.as_deref());
                return Ok(RowProgress::Done);
            }
        }
        if self.heap.is_reversed() {
            self.heap.step_back(row)?;
        }
        self.close_if_done(filter.as_deref());
        Ok(RowProgress::Done)
    }

    /// Once the row's cells are read, HBase's store scanner looks at the next cell it
    /// holds (of the next row in the scan's direction) and asks the matcher, which
    /// asks a done filter first: the store closes if it holds more.
    fn close_if_done(&mut self, filter: Option<&(dyn Filter + 'static)>) {
        if filter.is_some_and(|f| f.filter_all_remaining()) && self.peek_row().is_some() {
            self.closed = true;
        }
    }

    /// Counts a returned cell against the call's bytes and the row size limit.
    #[inline]
    fn account(&self, row: &[u8], c: &Cell, size: &mut u64, bytes: &mut u64) -> Result<()> {
        let n = c.serialized_size(true) as u64;
        *size += n;
        *bytes += n;
        if *size > self.max_row_size {
            return Err(self.row_too_big(row, c.family()));
        }
        Ok(())
    }

    #[cold]
    fn row_too_big(&self, row: &[u8], family: &[u8]) -> RegionError {
        RegionError::RowTooBig {
            limit: self.max_row_size,
            row: row.to_vec(),
            family: family.to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering as AtomicOrdering;
    use std::sync::Arc;

    use cellar_api::{FilterSpec, TimeRange};
    use cellar_types::Cell;

    use super::*;
    use crate::cursor::{MemCursor, Source};
    use crate::descriptor::FamilyDescriptor;
    use crate::matcher::MatchParams;
    use crate::memstore::MemSegment;

    /// Row `a` with 40 columns, then rows `b` and `c`.
    fn rows() -> Arc<MemSegment> {
        let seg = MemSegment::new();
        let mut seq = 0;
        let mut add = |row: &str, q: String| {
            seq += 1;
            let c = Cell::put(row, "f", q, 1, "v")
                .map(|c| c.with_seq_id(seq))
                .unwrap_or_else(|e| panic!("{e}"));
            seg.add(c, 0);
        };
        for q in 0..40 {
            add("a", format!("q{q:02}"));
        }
        add("b", "q00".into());
        add("c", "q00".into());
        Arc::new(seg)
    }

    /// Reads row `a` (the read's last row or not) through a filter that ends the row
    /// after three columns; returns the cells, the row the store is on next, and the
    /// cells its sources walked.
    fn read_a(seg: &Arc<MemSegment>, last_row: bool) -> (usize, Option<Vec<u8>>, usize) {
        let start = KeyRef::first_on_row(b"a");
        let cursor =
            MemCursor::new(seg.clone(), u64::MAX, &start).unwrap_or_else(|e| panic!("{e}"));
        let heap = Heap::new(vec![Source::Mem(cursor)]);
        let family = FamilyDescriptor::new("f");
        let params = MatchParams::new(&family, 1, TimeRange::ALL, None, false, 0);
        let mut scanner = StoreScanner::new(heap, Matcher::new(params), u64::MAX);
        scanner.set_on_last_row(last_row);
        let mut filter = cellar_filter::build(&FilterSpec::ColumnPagination {
            limit: 3,
            offset: 0,
            column_offset: None,
        })
        .unwrap_or_else(|e| panic!("{e}"));
        seg.walked.swap(0, AtomicOrdering::Relaxed);
        let (mut out, mut bytes) = (Vec::new(), 0);
        let progress = scanner
            .read_row(
                b"a",
                Some(filter.as_mut()),
                &mut out,
                usize::MAX,
                u64::MAX,
                &mut bytes,
            )
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(progress, RowProgress::Done);
        let next = scanner.peek_row().map(<[u8]>::to_vec);
        (out.len(), next, seg.walked.load(AtomicOrdering::Relaxed))
    }

    /// HBase's `moreRowsMayExistAfter`: a read whose last row is done (a Get, an
    /// inclusive stop row) closes the store rather than seeking past the row's other
    /// columns to the next row; a read that goes on seeks there.
    #[test]
    fn a_read_done_with_its_last_row_closes_instead_of_seeking_on() {
        let seg = rows();
        let (cells, next, walked_on) = read_a(&seg, false);
        assert_eq!((cells, next.as_deref()), (3, Some(&b"b"[..])));
        let (cells, next, walked_closed) = read_a(&seg, true);
        assert_eq!((cells, next), (3, None));
        assert!(
            walked_closed < walked_on,
            "closing walked {walked_closed} cells, seeking on {walked_on}"
        );
    }
}
