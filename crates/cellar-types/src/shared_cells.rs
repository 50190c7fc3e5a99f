//! `SharedCells`: cells rebuilt one at a time (from a prefix- or diff-encoded block)
//! into one buffer that they then all view, as the cells of an unencoded block view
//! the block. One allocation for the block instead of one per cell, and a clone of any
//! of its cells counts a reference on that one buffer.

use bytes::Bytes;

use crate::cell::{check_lengths, Cell, CellType, Parts};
use crate::error::Result;
use crate::key::KeyRef;

/// A builder of cells sharing one buffer (`key | value | tags` of each, back to back).
#[derive(Default)]
pub struct SharedCells {
    buf: Vec<u8>,
    /// The cells, viewing nothing until [`SharedCells::finish`] gives them the buffer.
    cells: Vec<Cell>,
    /// Where each cell's bytes start in `buf`.
    starts: Vec<usize>,
}

impl SharedCells {
    /// A builder expecting about `bytes` bytes of cells.
    pub fn with_capacity(bytes: usize) -> SharedCells {
        SharedCells {
            buf: Vec::with_capacity(bytes),
            cells: Vec::new(),
            starts: Vec::new(),
        }
    }

    /// Adds a cell, enforcing the type code and the row, family and tag limits (as
    /// [`Cell::from_parts`]).
    pub fn push(&mut self, key: &KeyRef<'_>, value: &[u8], tags: &[u8], seq_id: u64) -> Result<()> {
        let cell_type = CellType::from_code(key.type_code)?;
        check_lengths(key.row.len(), key.family.len(), tags.len())?;
        let start = self.buf.len();
        key.write(&mut self.buf);
        self.buf.extend_from_slice(value);
        self.buf.extend_from_slice(tags);
        let parts = Parts {
            value_len: value.len(),
            tags_gap: 0,
            tags_len: tags.len(),
        };
        if self.cells.capacity() == 0 {
            // The first cell's size over the buffer's expected size: about how many
            // cells the block holds, so the lists do not grow a doubling at a time.
            let each = (self.buf.len() - start).max(1);
            let n = (self.buf.capacity() / each).clamp(1, 1 << 16);
            self.cells.reserve(n);
            self.starts.reserve(n);
        }
        self.cells
            .push(Cell::view(Bytes::new(), key, cell_type, parts, seq_id));
        self.starts.push(start);
        Ok(())
    }

    /// Adds a cell from a flat serialized key (see [`KeyRef`]).
    pub fn push_flat(&mut self, key: &[u8], value: &[u8], tags: &[u8], seq_id: u64) -> Result<()> {
        self.push(&KeyRef::parse(key)?, value, tags, seq_id)
    }

    /// Cells added so far.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// True when no cell was added.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The cells, in the order added, each viewing its bytes in the one buffer.
    pub fn finish(self) -> Vec<Cell> {
        let shared = Bytes::from(self.buf);
        let mut cells = self.cells;
        let mut next = shared.len();
        // Backwards: each cell ends where the next one starts.
        for (cell, &start) in cells.iter_mut().zip(&self.starts).rev() {
            cell.buf = shared.slice(start..next);
            next = start;
        }
        cells
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_view_one_buffer_and_read_as_built() {
        let own = [
            Cell::put(b"row1", b"f", b"q1", 5, b"v1").unwrap(),
            Cell::put(b"row1", b"f", b"", 4, b"")
                .unwrap()
                .with_seq_id(9),
            Cell::new(b"r", b"fam", b"q", 1, CellType::DeleteColumn, b"")
                .unwrap()
                .with_tags(b"\x00\x02\x01x")
                .unwrap(),
            Cell::put(b"", b"", b"", i64::MIN, b"value").unwrap(),
        ];
        let mut b = SharedCells::with_capacity(16);
        assert!(b.is_empty());
        for c in &own {
            b.push(&c.key_ref(), c.value(), c.tags(), c.seq_id())
                .unwrap();
        }
        b.push_flat(own[0].key(), b"other", b"", 3).unwrap();
        assert_eq!(b.len(), 5);
        let cells = b.finish();
        assert_eq!(&cells[..4], &own[..]);
        for (got, want) in cells.iter().zip(&own) {
            assert_eq!(got.seq_id(), want.seq_id());
            assert_eq!(got.tags(), want.tags());
            assert_eq!(got.buffer_len(), want.buffer_len());
        }
        assert_eq!(cells[4].key(), own[0].key());
        assert_eq!(cells[4].value(), b"other");
        assert_eq!(cells[4].seq_id(), 3);
        // The views tile the buffer: their lengths add up to what was written.
        let total: usize = cells.iter().map(Cell::buffer_len).sum();
        let written: usize = own.iter().map(Cell::buffer_len).sum::<usize>() + own[0].key_len() + 5;
        assert_eq!(total, written);
        // Every view is a slice of one allocation.
        let base = cells[0].row().as_ptr() as usize - 2;
        let mut offset = 0;
        for c in &cells {
            assert_eq!(c.key().as_ptr() as usize, base + offset);
            offset += c.buffer_len();
        }
    }

    #[test]
    fn refuses_what_a_cell_may_not_hold() {
        let mut b = SharedCells::default();
        let long = vec![b'r'; crate::MAX_ROW_LEN + 1];
        let key = KeyRef {
            row: &long,
            family: b"f",
            qualifier: b"q",
            timestamp: 1,
            type_code: CellType::Put.code(),
        };
        assert!(b.push(&key, b"", b"", 0).is_err());
        let key = KeyRef {
            row: b"r",
            type_code: 3,
            ..key
        };
        assert!(b.push(&key, b"", b"", 0).is_err());
        assert!(b.push_flat(b"\x00\x05ab", b"", b"", 0).is_err());
        assert!(b.is_empty());
        assert!(b.finish().is_empty());
    }
}
