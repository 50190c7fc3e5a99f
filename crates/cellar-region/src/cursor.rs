//! Positioned cursors over the sources of one store — MemStore segments and store files
//! (`heap.rs` merges them in HBase order). Seeks only move forward (reseek), which
//! is all a forward scan needs and lets file cursors stay inside their current block.

use std::ops::Bound;
use std::sync::Arc;

use cellar_hfile::{FileScanner, HFileReader};
use cellar_types::{Cell, KeyRef};

use crate::error::{RegionError, Result};
use crate::memstore::{probe, MemKey, MemSegment};
use crate::skiplist::Position;
use crate::store::Half;

/// A forward cursor over sorted cells.
pub trait CellCursor: Send {
    /// The cell under the cursor.
    fn peek(&self) -> Option<&Cell>;
    /// Steps past the current cell.
    fn advance(&mut self) -> Result<()>;
    /// Moves forward to the first cell ≥ `key`; never moves backward.
    fn reseek(&mut self, key: &KeyRef<'_>) -> Result<()>;
    /// Moves to the first visible cell of the greatest row below `row` (an empty `row`
    /// means above every row); nothing when there is none (for reversed scans).
    fn seek_to_previous_row(&mut self, row: &[u8]) -> Result<()>;
    /// Whether another version of the column under the cursor is known to follow it
    /// (a MemStore cell that carries a jump past its column's older versions).
    fn column_goes_on(&self) -> bool {
        false
    }
}

/// One source of a store under a read: a MemStore segment or a store file. The merge
/// heap holds its sources by value and calls them without a virtual call (a read
/// steps its sources once per cell; a Get opens two or three of them).
pub enum Source {
    Mem(MemCursor),
    File(FileCursor),
}

impl From<MemCursor> for Source {
    fn from(c: MemCursor) -> Source {
        Source::Mem(c)
    }
}

impl From<FileCursor> for Source {
    fn from(c: FileCursor) -> Source {
        Source::File(c)
    }
}

impl CellCursor for Source {
    #[inline]
    fn peek(&self) -> Option<&Cell> {
        match self {
            Source::Mem(c) => c.peek(),
            Source::File(c) => c.peek(),
        }
    }

    #[inline]
    fn advance(&mut self) -> Result<()> {
        match self {
            Source::Mem(c) => c.advance(),
            Source::File(c) => c.advance(),
        }
    }

    fn reseek(&mut self, key: &KeyRef<'_>) -> Result<()> {
        match self {
            Source::Mem(c) => c.reseek(key),
            Source::File(c) => c.reseek(key),
        }
    }

    fn seek_to_previous_row(&mut self, row: &[u8]) -> Result<()> {
        match self {
            Source::Mem(c) => c.seek_to_previous_row(row),
            Source::File(c) => c.seek_to_previous_row(row),
        }
    }
    fn column_goes_on(&self) -> bool {
        match self {
            Source::Mem(c) => c.column_goes_on(),
            Source::File(_) => false,
        }
    }
}

/// A row above every real row (longer than the row-length limit).
fn beyond_rows() -> Vec<u8> {
    vec![0xff; cellar_types::MAX_ROW_LEN + 1]
}

/// A cursor over a MemStore segment, showing only cells at or below a read point. It
/// stands on a node of the segment's skip list (which lives as long as the segment the
/// cursor holds), so it hands out the cells where they lie: stepping follows one
/// pointer and copies nothing, and a reseek a few cells on steps there instead of
/// searching. Every cell at or below the read point was in the segment when the read
/// point was taken, so hiding the ones above it is all a read needs.
pub struct MemCursor {
    seg: Arc<MemSegment>,
    /// The visible cell under the cursor.
    at: Option<Position<MemKey>>,
    read_point: u64,
    /// A Get's cursor: it ends with its row.
    row_only: bool,
}

impl MemCursor {
    pub fn new(seg: Arc<MemSegment>, read_point: u64, start: &KeyRef<'_>) -> Result<MemCursor> {
        let at = seg.seek_visible(start, read_point);
        Ok(MemCursor {
            seg,
            at,
            read_point,
            row_only: false,
        })
    }

    /// A Get's cursor: the visible cells of `row` from `start`, ending with the row (a
    /// Get reads no further; a row not in the segment costs one hash lookup).
    pub fn for_row(
        seg: Arc<MemSegment>,
        read_point: u64,
        start: &KeyRef<'_>,
        row: &[u8],
    ) -> MemCursor {
        let at = seg.row_start_visible(start, row, read_point);
        MemCursor {
            seg,
            at,
            read_point,
            row_only: true,
        }
    }
}

impl CellCursor for MemCursor {
    #[inline]
    fn peek(&self) -> Option<&Cell> {
        self.at.and_then(|p| self.seg.cell_at(p))
    }

    fn advance(&mut self) -> Result<()> {
        if let Some(p) = self.at {
            self.at = self.seg.next_visible(p, self.read_point, self.row_only);
        }
        Ok(())
    }

    fn reseek(&mut self, key: &KeyRef<'_>) -> Result<()> {
        if let Some(p) = self.at {
            self.at = self
                .seg
                .reseek_visible(p, key, self.read_point, self.row_only);
        }
        Ok(())
    }

    fn column_goes_on(&self) -> bool {
        self.at.is_some_and(|p| self.seg.column_goes_on(p))
    }

    fn seek_to_previous_row(&mut self, row: &[u8]) -> Result<()> {
        let mut bound: Option<Vec<u8>> = (!row.is_empty()).then(|| row.to_vec());
        loop {
            let prev = match &bound {
                None => self.seg.last_before(Bound::Unbounded),
                Some(r) => {
                    let k = probe(&KeyRef::first_on_row(r))?;
                    self.seg.last_before(Bound::Excluded(&k))
                }
            };
            let Some(prev) = prev else {
                self.at = None;
                return Ok(());
            };
            let r = prev.row().to_vec();
            // The first visible cell of that row, looking no further than the row.
            self.at = self.seg.row_first_visible(&r, self.read_point);
            if self.at.is_some() {
                return Ok(());
            }
            bound = Some(r);
        }
    }
}

/// A cursor over one store file. It hides cells above its read point: a file flushed
/// or compacted after a scanner opened may hold writes the scanner must not see.
pub struct FileCursor {
    scanner: FileScanner<Arc<HFileReader>>,
    read_point: u64,
    /// For a split reference: only this half of the file is visible.
    half: Option<Half>,
    /// A bulk-loaded file's sequence id, given to each of its cells.
    stamp: Option<u64>,
    /// The current cell with that sequence id.
    stamped: Option<Cell>,
}

impl FileCursor {
    pub fn new(
        reader: Arc<HFileReader>,
        read_point: u64,
        start: &KeyRef<'_>,
        cache_blocks: bool,
        half: Option<Half>,
    ) -> Result<FileCursor> {
        FileCursor::with_stamp(reader, read_point, start, cache_blocks, half, None)
    }

    /// As [`FileCursor::new`]; with `stamp`, every cell of the file reads with that
    /// sequence id (a bulk-loaded file's, as HBase's StoreFileScanner gives them), so the
    /// file is visible from that id on, all of it or none.
    pub fn with_stamp(
        reader: Arc<HFileReader>,
        read_point: u64,
        start: &KeyRef<'_>,
        cache_blocks: bool,
        half: Option<Half>,
        stamp: Option<u64>,
    ) -> Result<FileCursor> {
        let mut scanner = FileScanner::new(reader);
        scanner.set_cache_blocks(cache_blocks);
        let sought = match &half {
            Some(h) if h.top && start.row < h.split_row.as_slice() => {
                scanner.seek(&KeyRef::first_on_row(&h.split_row))
            }
            _ => scanner.seek(start),
        };
        // The file's path names an error; it is copied only for one.
        sought.map_err(|e| RegionError::in_file(scanner.reader().path(), e))?;
        let mut c = FileCursor {
            scanner,
            read_point,
            half,
            stamp,
            stamped: None,
        };
        c.skip_invisible()?;
        Ok(c)
    }

    fn restamp(&mut self) {
        if let Some(n) = self.stamp {
            self.stamped = self.scanner.current().map(|c| c.clone().with_seq_id(n));
        }
    }

    /// A cursor at the first cell (of the half), seeing every cell.
    pub fn at_start(reader: Arc<HFileReader>, half: Option<Half>) -> Result<FileCursor> {
        FileCursor::new(reader, u64::MAX, &KeyRef::first_on_row(b""), true, half)
    }

    #[inline]
    fn in_half(&self, c: &Cell) -> bool {
        match &self.half {
            None => true,
            Some(h) if h.top => c.row() >= h.split_row.as_slice(),
            Some(h) => c.row() < h.split_row.as_slice(),
        }
    }

    /// A read error of this file, naming it.
    fn named(&self, e: cellar_hfile::HFileError) -> RegionError {
        RegionError::in_file(self.scanner.reader().path(), e)
    }

    fn park(&mut self) -> Result<()> {
        let r = self.scanner.seek(&KeyRef::last_on_row(&beyond_rows()));
        r.map_err(|e| self.named(e))?;
        self.stamped = None;
        Ok(())
    }

    /// Steps past cells above the read point (the common case, an unstamped file's
    /// visible cell, answered inline).
    #[inline]
    fn skip_invisible(&mut self) -> Result<()> {
        let visible = self.stamp.is_none()
            && self
                .scanner
                .current()
                .is_none_or(|c| c.seq_id() <= self.read_point);
        if visible {
            return Ok(());
        }
        self.skip_hidden()
    }

    fn skip_hidden(&mut self) -> Result<()> {
        if let Some(n) = self.stamp {
            // Every cell has the file's id: all visible, or none.
            if n > self.read_point {
                self.park()?;
            }
            self.restamp();
            return Ok(());
        }
        while self
            .scanner
            .current()
            .is_some_and(|c| c.seq_id() > self.read_point)
        {
            let r = self.scanner.advance();
            r.map_err(|e| self.named(e))?;
        }
        Ok(())
    }

    /// The row's first visible cell is wherever the scanner stands for a stamped file.
    fn visible_here(&self, c: &Cell) -> bool {
        match self.stamp {
            Some(n) => n <= self.read_point,
            None => c.seq_id() <= self.read_point,
        }
    }
}

impl CellCursor for FileCursor {
    #[inline]
    fn peek(&self) -> Option<&Cell> {
        if self.stamp.is_some() {
            return self.stamped.as_ref().filter(|c| self.in_half(c));
        }
        self.scanner.current().filter(|c| self.in_half(c))
    }

    #[inline]
    fn advance(&mut self) -> Result<()> {
        let r = self.scanner.advance();
        r.map_err(|e| self.named(e))?;
        self.skip_invisible()
    }

    fn reseek(&mut self, key: &KeyRef<'_>) -> Result<()> {
        let r = self.scanner.reseek(key);
        r.map_err(|e| self.named(e))?;
        self.skip_invisible()
    }

    fn seek_to_previous_row(&mut self, row: &[u8]) -> Result<()> {
        if self.stamp.is_some_and(|n| n > self.read_point) {
            return self.park();
        }
        let mut bound_row = if row.is_empty() {
            beyond_rows()
        } else {
            row.to_vec()
        };
        if let Some(h) = self.half.as_ref().filter(|h| !h.top) {
            if bound_row.as_slice() > h.split_row.as_slice() {
                bound_row = h.split_row.clone();
            }
        }
        loop {
            let before = self.scanner.seek_before(&KeyRef::first_on_row(&bound_row));
            if !before.map_err(|e| self.named(e))? {
                return self.park();
            }
            let Some(r) = self.scanner.current().map(|c| c.row().to_vec()) else {
                return Ok(());
            };
            if self
                .half
                .as_ref()
                .is_some_and(|h| h.top && r.as_slice() < h.split_row.as_slice())
            {
                return self.park();
            }
            let sought = self.scanner.seek(&KeyRef::first_on_row(&r));
            sought.map_err(|e| self.named(e))?;
            // The first visible cell of that row, looking no further than the row.
            while self
                .scanner
                .current()
                .is_some_and(|c| !self.visible_here(c) && c.row() == r.as_slice())
            {
                let stepped = self.scanner.advance();
                stepped.map_err(|e| self.named(e))?;
            }
            self.restamp();
            if self
                .scanner
                .current()
                .is_some_and(|c| c.row() == r.as_slice())
            {
                return Ok(());
            }
            bound_row = r;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(row: u32, q: u32, seq: u64) -> Cell {
        Cell::put(format!("r{row:04}"), "f", format!("q{q}"), 1, "v")
            .map(|c| c.with_seq_id(seq))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// 300 rows of 3 columns; every fifth cell written after the read point 1000.
    fn segment() -> (Arc<MemSegment>, Vec<Cell>) {
        let seg = MemSegment::new();
        let mut visible = Vec::new();
        let mut seq = 0;
        for row in 0..300 {
            for q in 0..3 {
                seq += 1;
                let s = if seq % 5 == 0 { 2000 + seq } else { seq };
                let c = cell(row, q, s);
                seg.add(c.clone(), 0);
                if s <= 1000 {
                    visible.push(c);
                }
            }
        }
        visible.sort();
        (Arc::new(seg), visible)
    }

    /// A reversed walk over rows, some written after the read point, costs a bounded
    /// number of cells per row: stepping back over an invisible row never walks forward
    /// past it.
    #[test]
    fn reversed_walk_skips_later_rows_in_constant_time() {
        let seg = MemSegment::new();
        let rows = 5_000u32;
        for row in 0..rows {
            seg.add(cell(row * 2, 0, 1), 0);
        }
        // Rows written after the read point, between the visible ones.
        for row in 0..800u32 {
            seg.add(cell(row * 6 + 1, 0, 2000), 0);
        }
        let seg = Arc::new(seg);
        let mut c = MemCursor::new(seg.clone(), 1000, &KeyRef::first_on_row(b"")).unwrap();
        c.seek_to_previous_row(b"").unwrap();
        let mut seen = 0;
        while let Some(x) = c.peek() {
            let row = x.row().to_vec();
            assert_eq!(x.seq_id(), 1, "{row:?}");
            seen += 1;
            c.seek_to_previous_row(&row).unwrap();
        }
        assert_eq!(seen, rows);
        let walked = seg.walked.load(std::sync::atomic::Ordering::Relaxed);
        assert!(walked < 4 * (rows as usize + 800), "walked {walked} cells");
    }

    /// A Get's cursor yields the row's visible cells and ends with the row.
    #[test]
    fn get_cursor_reads_its_row_and_ends_there() {
        let (seg, visible) = segment();
        for row in [0u32, 17, 299] {
            let name = cell(row, 0, 1).row().to_vec();
            let want: Vec<Cell> = visible
                .iter()
                .filter(|c| c.row() == name)
                .cloned()
                .collect();
            let mut c = MemCursor::for_row(seg.clone(), 1000, &KeyRef::first_on_row(&name), &name);
            let mut seen = Vec::new();
            while let Some(x) = c.peek() {
                assert_eq!(x.row(), name.as_slice(), "the cursor ends with the row");
                seen.push(x.clone());
                c.advance().unwrap();
            }
            assert_eq!(seen, want, "row {row}");
            // A reseek past the row ends the cursor too.
            let mut c = MemCursor::for_row(seg.clone(), 1000, &KeyRef::first_on_row(&name), &name);
            c.reseek(&KeyRef::last_on_row(&name)).unwrap();
            assert!(c.peek().is_none());
        }
        let absent = MemCursor::for_row(seg, 1000, &KeyRef::first_on_row(b"zz"), b"zz");
        assert!(absent.peek().is_none());
    }

    #[test]
    fn mem_cursor_steps_hiding_later_writes() {
        let (seg, visible) = segment();
        let mut c = MemCursor::new(seg, 1000, &KeyRef::first_on_row(b"")).unwrap();
        let mut seen = Vec::new();
        while let Some(x) = c.peek() {
            seen.push(x.clone());
            c.advance().unwrap();
        }
        assert_eq!(seen, visible);
    }

    /// Seeks column to column as a Get does (the newest version of each), returning the
    /// qualifiers seen and the cells the cursor stepped over.
    fn column_walk(versions: u64) -> (Vec<Vec<u8>>, usize) {
        column_walk_stamped(versions, |v| v as i64)
    }

    /// The qualifiers a column walk sees, in order.
    fn walk_columns() -> Vec<Vec<u8>> {
        (0..20).map(|q| format!("q{q:02}").into_bytes()).collect()
    }

    /// [`column_walk`] with the `v`th version of each column stamped `stamp(v)`.
    fn column_walk_stamped(versions: u64, stamp: impl Fn(u64) -> i64) -> (Vec<Vec<u8>>, usize) {
        let seg = MemSegment::new();
        let mut seq = 0;
        for q in 0..20 {
            for v in 0..versions {
                seq += 1;
                let c = Cell::put("row", "f", format!("q{q:02}"), stamp(v), "v")
                    .map(|c| c.with_seq_id(seq))
                    .unwrap_or_else(|e| panic!("{e}"));
                seg.add(c, 0);
            }
        }
        let seg = Arc::new(seg);
        let mut c = MemCursor::new(seg.clone(), u64::MAX, &KeyRef::first_on_row(b"row")).unwrap();
        let mut seen = Vec::new();
        while let Some(cell) = c.peek() {
            seen.push(cell.qualifier().to_vec());
            let next = KeyRef {
                row: cell.row(),
                family: cell.family(),
                qualifier: cell.qualifier(),
                timestamp: i64::MIN,
                type_code: 0,
            }
            .to_vec();
            c.reseek(&KeyRef::parse(&next).unwrap()).unwrap();
        }
        (seen, seg.walked.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// A reseek steps to a key a few cells on and searches for a farther one: a column
    /// walk over 100 versions of each column does not step over every version.
    #[test]
    fn mem_cursor_reseeks_step_near_and_search_far() {
        let want = walk_columns();
        let (seen, walked) = column_walk(100);
        assert_eq!(seen, want);
        assert!(walked <= 20 * 8, "walked {walked} cells of 2,000");
        let (seen, walked) = column_walk(1);
        assert_eq!(seen, want);
        assert!(walked <= 20 * 2, "walked {walked} cells of 20");
    }

    /// A column's newer versions, each written in front of the older ones, point past
    /// them: a reseek to the next column jumps there from the version it stands on (the
    /// jump, the step after it) instead of stepping four versions and searching from
    /// the top.
    #[test]
    fn mem_cursor_reseeks_jump_past_a_columns_versions() {
        let want = walk_columns();
        let (seen, walked) = column_walk(1_000);
        assert_eq!(seen, want);
        assert!(walked <= 20 * 2, "walked {walked} cells of 20,000");
        // Versions written in any order of their timestamps (older ones after newer:
        // the pointers then fall short of a column's end) read the same.
        for stamp in [
            |v: u64| -(v as i64),
            |v: u64| ((v * 7_919) % 1_000) as i64,
            |v: u64| (v % 3) as i64,
        ] {
            let (seen, _) = column_walk_stamped(1_000, stamp);
            assert_eq!(seen, want);
        }
    }

    #[test]
    fn mem_cursor_reseeks_near_and_far() {
        let (seg, visible) = segment();
        let mut c = MemCursor::new(seg, 1000, &KeyRef::first_on_row(b"r0010")).unwrap();
        let first = |row: &str| {
            visible
                .iter()
                .find(|x| x.row() >= row.as_bytes())
                .map(|x| x.row().to_vec())
        };
        assert_eq!(c.peek().map(|x| x.row().to_vec()), first("r0010"));
        // Near, then far, then backward (a no-op), then past the last row.
        for (row, expect) in [
            ("r0011", "r0011"),
            ("r0200", "r0200"),
            ("r0100", "r0200"),
            ("r0299", "r0299"),
        ] {
            c.reseek(&KeyRef::first_on_row(row.as_bytes())).unwrap();
            assert_eq!(c.peek().map(|x| x.row().to_vec()), first(expect), "{row}");
        }
        c.reseek(&KeyRef::first_on_row(b"r9999")).unwrap();
        assert!(c.peek().is_none());
    }
}
