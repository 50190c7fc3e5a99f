//! Positioned cursors over the sources of one store — MemStore segments and store files —
//! and the heap that merges them in HBase order. Seeks only move forward (reseek), which
//! is all a forward scan needs and lets file cursors stay inside their current block.

use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::Arc;

use cellar_hfile::{FileScanner, HFileReader};
use cellar_types::{compare_cells, compare_keys, Cell, KeyRef};

use crate::error::Result;
use crate::memstore::{probe, MemKey, MemSegment};

/// A forward cursor over sorted cells.
pub trait CellCursor: Send {
    /// The cell under the cursor.
    fn peek(&self) -> Option<&Cell>;
    /// Steps past the current cell.
    fn advance(&mut self) -> Result<()>;
    /// Moves forward to the first cell ≥ `key`; never moves backward.
    fn reseek(&mut self, key: &KeyRef<'_>) -> Result<()>;
}

/// A cursor over a MemStore segment, showing only cells at or below a read point.
pub struct MemCursor {
    seg: Arc<MemSegment>,
    cur: Option<Cell>,
    read_point: u64,
}

impl MemCursor {
    pub fn new(seg: Arc<MemSegment>, read_point: u64, start: &KeyRef<'_>) -> Result<MemCursor> {
        let p = probe(start)?;
        let cur = seg.first_from(Bound::Included(&p), read_point);
        Ok(MemCursor {
            seg,
            cur,
            read_point,
        })
    }
}

impl CellCursor for MemCursor {
    fn peek(&self) -> Option<&Cell> {
        self.cur.as_ref()
    }

    fn advance(&mut self) -> Result<()> {
        if let Some(c) = self.cur.take() {
            let k = MemKey(c);
            self.cur = self.seg.first_from(Bound::Excluded(&k), self.read_point);
        }
        Ok(())
    }

    fn reseek(&mut self, key: &KeyRef<'_>) -> Result<()> {
        if let Some(c) = &self.cur {
            if compare_keys(&c.key_ref(), key) != Ordering::Less {
                return Ok(());
            }
            let p = probe(key)?;
            self.cur = self.seg.first_from(Bound::Included(&p), self.read_point);
        }
        Ok(())
    }
}

/// A cursor over one store file. It hides cells above its read point: a file flushed
/// or compacted after a scanner opened may hold writes the scanner must not see.
pub struct FileCursor {
    scanner: FileScanner<Arc<HFileReader>>,
    read_point: u64,
}

impl FileCursor {
    pub fn new(
        reader: Arc<HFileReader>,
        read_point: u64,
        start: &KeyRef<'_>,
    ) -> Result<FileCursor> {
        let mut scanner = FileScanner::new(reader);
        scanner.seek(start)?;
        let mut c = FileCursor {
            scanner,
            read_point,
        };
        c.skip_invisible()?;
        Ok(c)
    }

    /// A cursor at the first cell, seeing every cell.
    pub fn at_start(reader: Arc<HFileReader>) -> Result<FileCursor> {
        let mut scanner = FileScanner::new(reader);
        scanner.seek_to_first()?;
        Ok(FileCursor {
            scanner,
            read_point: u64::MAX,
        })
    }

    fn skip_invisible(&mut self) -> Result<()> {
        while self
            .scanner
            .current()
            .is_some_and(|c| c.seq_id() > self.read_point)
        {
            self.scanner.advance()?;
        }
        Ok(())
    }
}

impl CellCursor for FileCursor {
    fn peek(&self) -> Option<&Cell> {
        self.scanner.current()
    }

    fn advance(&mut self) -> Result<()> {
        self.scanner.advance()?;
        self.skip_invisible()
    }

    fn reseek(&mut self, key: &KeyRef<'_>) -> Result<()> {
        self.scanner.reseek(key)?;
        self.skip_invisible()
    }
}

/// Merges cursors: always positioned on the smallest cell of all of them.
pub struct Heap {
    cursors: Vec<Box<dyn CellCursor>>,
    min: Option<usize>,
}

impl Heap {
    pub fn new(cursors: Vec<Box<dyn CellCursor>>) -> Heap {
        let mut h = Heap { cursors, min: None };
        h.settle();
        h
    }

    fn settle(&mut self) {
        self.cursors.retain(|c| c.peek().is_some());
        let mut best: Option<(usize, &Cell)> = None;
        for (i, c) in self.cursors.iter().enumerate() {
            if let Some(cell) = c.peek() {
                match best {
                    Some((_, b)) if compare_cells(cell, b) != Ordering::Less => {}
                    _ => best = Some((i, cell)),
                }
            }
        }
        self.min = best.map(|(i, _)| i);
    }

    pub fn peek(&self) -> Option<&Cell> {
        self.min.and_then(|i| self.cursors[i].peek())
    }

    pub fn advance(&mut self) -> Result<()> {
        if let Some(i) = self.min {
            self.cursors[i].advance()?;
            self.settle();
        }
        Ok(())
    }

    pub fn reseek(&mut self, key: &KeyRef<'_>) -> Result<()> {
        for c in &mut self.cursors {
            c.reseek(key)?;
        }
        self.settle();
        Ok(())
    }
}
