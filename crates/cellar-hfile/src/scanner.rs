//! Positioned iteration over a store file's cells: seek to the first cell at or after a
//! key, to the last cell before a key, or to the start; then step forward.

use std::cmp::Ordering;
use std::ops::Deref;
use std::sync::Arc;

use cellar_types::{compare_keys, Cell, KeyRef};

use crate::cache::DataBlock;
use crate::error::Result;
use crate::reader::HFileReader;

/// A cursor over one file, borrowing its reader.
pub type Scanner<'r> = FileScanner<&'r HFileReader>;

/// A cursor over one file that holds its reader by any pointer (`&HFileReader` or
/// `Arc<HFileReader>`, for scanners that outlive a borrow).
pub struct FileScanner<R: Deref<Target = HFileReader>> {
    reader: R,
    block: Option<Arc<DataBlock>>,
    pos: usize,
    cache_blocks: bool,
}

impl<R: Deref<Target = HFileReader>> FileScanner<R> {
    /// A cursor not yet positioned.
    pub fn new(reader: R) -> FileScanner<R> {
        FileScanner {
            reader,
            block: None,
            pos: 0,
            cache_blocks: true,
        }
    }

    /// Whether blocks this cursor reads from the file go into the block cache.
    pub fn set_cache_blocks(&mut self, cache: bool) {
        self.cache_blocks = cache;
    }

    /// The reader this cursor reads.
    pub fn reader(&self) -> &HFileReader {
        &self.reader
    }

    /// The cell under the cursor.
    #[inline]
    pub fn current(&self) -> Option<&Cell> {
        self.block.as_ref().and_then(|b| b.cells.get(self.pos))
    }

    /// The data block under the cursor.
    pub fn current_block(&self) -> Option<&Arc<DataBlock>> {
        self.block.as_ref()
    }

    /// Moves to the first cell of `block` or of the first non-empty block after it.
    fn settle_forward(
        &mut self,
        mut block: Option<Arc<DataBlock>>,
        mut pos: usize,
    ) -> Result<bool> {
        while let Some(b) = block {
            if pos < b.cells.len() {
                self.block = Some(b);
                self.pos = pos;
                return Ok(true);
            }
            block = self
                .reader
                .next_data_block_cached(b.next_offset(), self.cache_blocks)?;
            pos = 0;
        }
        self.block = None;
        self.pos = 0;
        Ok(false)
    }

    /// Positions at the first cell; false for an empty file.
    pub fn seek_to_first(&mut self) -> Result<bool> {
        let first = self.reader.first_data_block()?;
        self.settle_forward(first, 0)
    }

    /// Positions at the first cell whose key is ≥ `key` (sequence ids ignored); false
    /// when every cell sorts before it.
    pub fn seek(&mut self, key: &KeyRef<'_>) -> Result<bool> {
        let Some(at) = self.reader.locate(key)? else {
            return self.seek_to_first();
        };
        let block = self.reader.data_block_cached(at, self.cache_blocks)?;
        let pos = block.lower_bound(0, key);
        self.settle_forward(Some(block), pos)
    }

    /// Moves forward to the first cell whose key is ≥ `key`, searching the current block
    /// first (cheap when the target is near); never moves backward.
    pub fn reseek(&mut self, key: &KeyRef<'_>) -> Result<bool> {
        /// Cells looked at one by one before a search: a reseek mostly goes to the
        /// next column or row, a cell or two on.
        const NEAR: usize = 3;
        let Some(block) = self.block.as_ref() else {
            return Ok(false);
        };
        let cells = &block.cells;
        let Some(cur) = cells.get(self.pos) else {
            return Ok(false);
        };
        if compare_keys(&cur.key_ref(), key) != Ordering::Less {
            return Ok(true);
        }
        let near_end = cells.len().min(self.pos + 1 + NEAR);
        let near = cells[self.pos + 1..near_end]
            .iter()
            .position(|c| compare_keys(&c.key_ref(), key) != Ordering::Less);
        if let Some(i) = near {
            self.pos += 1 + i;
            return Ok(true);
        }
        let in_block = near_end < cells.len()
            && cells
                .last()
                .is_some_and(|last| compare_keys(&last.key_ref(), key) != Ordering::Less);
        if in_block {
            self.pos = block.lower_bound(near_end, key);
            return Ok(true);
        }
        self.seek(key)
    }

    /// Positions at the last cell whose key is < `key`; false when there is none.
    pub fn seek_before(&mut self, key: &KeyRef<'_>) -> Result<bool> {
        let Some(at) = self.reader.locate(key)? else {
            self.block = None;
            return Ok(false);
        };
        let mut block = Some(self.reader.data_block_at(at)?);
        let mut first = true;
        while let Some(b) = block {
            let pos = if first {
                b.lower_bound(0, key)
            } else {
                b.cells.len()
            };
            first = false;
            if pos > 0 {
                self.pos = pos - 1;
                self.block = Some(b);
                return Ok(true);
            }
            block = self.reader.prev_data_block(&b)?;
        }
        self.block = None;
        Ok(false)
    }

    /// Seeks to `key` and returns the newest cell with exactly that key, if any.
    pub fn seek_exact(&mut self, key: &KeyRef<'_>) -> Result<Option<Cell>> {
        if !self.seek(key)? {
            return Ok(None);
        }
        Ok(self
            .current()
            .filter(|c| compare_keys(&c.key_ref(), key) == Ordering::Equal)
            .cloned())
    }

    /// Steps to the next cell; false at the end.
    #[inline]
    pub fn advance(&mut self) -> Result<bool> {
        // Within the block: one step (the cell after is there).
        if let Some(b) = &self.block {
            if self.pos + 1 < b.cells.len() {
                self.pos += 1;
                return Ok(true);
            }
        }
        self.advance_block()
    }

    /// [`FileScanner::advance`] off the end of the current block.
    fn advance_block(&mut self) -> Result<bool> {
        match self.block.take() {
            None => Ok(false),
            Some(b) => {
                let pos = self.pos + 1;
                self.settle_forward(Some(b), pos)
            }
        }
    }

    /// Returns the cell under the cursor and steps past it.
    pub fn next_cell(&mut self) -> Result<Option<Cell>> {
        let cell = self.current().cloned();
        if cell.is_some() {
            self.advance()?;
        }
        Ok(cell)
    }
}
