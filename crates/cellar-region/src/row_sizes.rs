//! The largest rows a store has written: every flush and compaction already streams a
//! store's cells in row order, so the bytes and cells of each row are summed on the way
//! with no extra pass, and the largest few are kept (what the status page shows; the
//! full wide-row tracking builds on this).

use std::sync::Mutex;

/// How many of the largest rows a store keeps.
pub const KEPT: usize = 10;

/// One row's size in one store, as a flush or compaction saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSize {
    pub row: Vec<u8>,
    pub family: Vec<u8>,
    /// Serialized KeyValue bytes of the row's cells in the written file.
    pub bytes: u64,
    pub cells: u64,
    /// When it was seen (ms).
    pub seen: i64,
    /// Whether a compaction saw it (the whole store) or a flush (only new cells).
    pub whole: bool,
}

/// Sums rows as their cells go by; keeps the largest.
pub struct RowSizeTracker {
    family: Vec<u8>,
    seen: i64,
    whole: bool,
    current: Option<RowSize>,
    top: Vec<RowSize>,
}

impl RowSizeTracker {
    pub fn new(family: &[u8], seen: i64, whole: bool) -> RowSizeTracker {
        RowSizeTracker {
            family: family.to_vec(),
            seen,
            whole,
            current: None,
            top: Vec::new(),
        }
    }

    /// Counts one cell (cells arrive in row order).
    pub fn add(&mut self, row: &[u8], bytes: usize) {
        match &mut self.current {
            Some(c) if c.row == row => {
                c.bytes += bytes as u64;
                c.cells += 1;
            }
            _ => {
                self.finish_row();
                self.current = Some(RowSize {
                    row: row.to_vec(),
                    family: self.family.clone(),
                    bytes: bytes as u64,
                    cells: 1,
                    seen: self.seen,
                    whole: self.whole,
                });
            }
        }
    }

    fn finish_row(&mut self) {
        let Some(c) = self.current.take() else { return };
        if self.top.len() < KEPT {
            self.top.push(c);
        } else if let Some(min) = self.top.iter_mut().min_by_key(|r| r.bytes) {
            if c.bytes > min.bytes {
                *min = c;
            }
        }
    }

    /// The largest rows, largest first.
    pub fn finish(mut self) -> Vec<RowSize> {
        self.finish_row();
        self.top
            .sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.row.cmp(&b.row)));
        self.top
    }
}

/// What kind of write saw the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    Flush,
    Minor,
    Major,
}

/// A store's record of its largest rows.
#[derive(Debug, Default)]
pub struct LargestRows {
    rows: Mutex<Vec<RowSize>>,
}

impl LargestRows {
    /// Takes in what a write saw. A major compaction saw whole rows: its figures
    /// replace the record; a flush wrote only new cells, which add to a row's figures;
    /// a minor compaction rewrote some of a row's cells, a lower bound of its size.
    pub fn record(&self, seen: Vec<RowSize>, write: Write) {
        let mut rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        if write == Write::Major {
            *rows = seen;
            return;
        }
        for r in seen {
            match rows.iter_mut().find(|x| x.row == r.row) {
                Some(x) if write == Write::Flush => {
                    x.bytes += r.bytes;
                    x.cells += r.cells;
                    x.seen = r.seen;
                }
                Some(x) => {
                    if r.bytes > x.bytes {
                        *x = r;
                    }
                }
                None => rows.push(r),
            }
        }
        rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.row.cmp(&b.row)));
        rows.truncate(KEPT);
    }

    pub fn get(&self) -> Vec<RowSize> {
        self.rows.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_largest_rows() {
        let mut t = RowSizeTracker::new(b"f", 1, false);
        for r in 0..30u32 {
            for _ in 0..=r {
                t.add(format!("r{r:02}").as_bytes(), 10);
            }
        }
        let top = t.finish();
        assert_eq!(top.len(), KEPT);
        assert_eq!(top[0].row, b"r29");
        assert_eq!((top[0].bytes, top[0].cells), (300, 30));
        assert_eq!(top[KEPT - 1].row, b"r20");
    }

    #[test]
    fn flushes_add_and_compactions_replace() {
        let l = LargestRows::default();
        let flush = |bytes| {
            vec![RowSize {
                row: b"w".to_vec(),
                family: b"f".to_vec(),
                bytes,
                cells: 1,
                seen: 0,
                whole: false,
            }]
        };
        l.record(flush(100), Write::Flush);
        l.record(flush(50), Write::Flush);
        assert_eq!(l.get()[0].bytes, 150);
        l.record(flush(90), Write::Minor);
        assert_eq!(
            l.get()[0].bytes,
            150,
            "a minor compaction saw part of the row"
        );
        l.record(flush(120), Write::Major);
        assert_eq!(l.get()[0].bytes, 120);
    }
}
