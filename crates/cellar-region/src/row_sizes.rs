//! Large-row tracking in a store: every flush and compaction already streams the
//! store's cells in row order, so each row's bytes and cells are summed on the way, with
//! no extra pass. A store keeps every row at or above the watch level
//! (`cellar.largerow.watch.bytes` / `.cells`) and the few largest (for the status page).
//!
//! What a write saw combines with what was known: a major compaction saw whole rows and
//! replaces the record; a flush wrote only new cells, which add to a row's figures; a
//! minor compaction rewrote some files, a lower bound of a row's size. Sizes are
//! KeyValue bytes as HBase counts them (`Cell.getSerializedSize`: no tag bytes for a
//! cell without tags), so they agree with `hfile -s` and a census.

use std::collections::HashSet;
use std::sync::Mutex;

use cellar_types::same_bytes;

/// How many of the largest rows a store keeps whatever their size.
pub const KEPT: usize = 10;

/// The levels of row size that matter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Levels {
    /// `cellar.largerow.tracking`: whether flushes and compactions track rows at all
    /// (off only to measure what tracking costs).
    pub enabled: bool,
    /// Tracked from here (default 10 MiB or 100,000 cells).
    pub watch_bytes: u64,
    pub watch_cells: u64,
    /// Warned about from here (default 100 MiB or 1,000,000 cells).
    pub warn_bytes: u64,
    pub warn_cells: u64,
    /// `cellar.tombstone.warn.cells`: delete markers in one row from which reads of it
    /// skip enough to matter (default 10,000; a queue kept as a wide row).
    pub tombstone_cells: u64,
}

impl Default for Levels {
    fn default() -> Self {
        Levels {
            enabled: true,
            watch_bytes: 10 << 20,
            watch_cells: 100_000,
            warn_bytes: 100 << 20,
            warn_cells: 1_000_000,
            tombstone_cells: 10_000,
        }
    }
}

/// Where a row stands against the levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Below,
    Watch,
    Warn,
}

impl Levels {
    /// Whether a row's delete markers are a build-up worth reporting.
    pub fn tombstones(&self, deletes: u64) -> bool {
        deletes >= self.tombstone_cells
    }

    /// Whether a row is kept for its size or its delete markers.
    pub fn keeps(&self, r: &RowSize) -> bool {
        self.level(r.bytes, r.cells) > Level::Below || self.tombstones(r.deletes)
    }

    pub fn level(&self, bytes: u64, cells: u64) -> Level {
        if bytes >= self.warn_bytes || cells >= self.warn_cells {
            Level::Warn
        } else if bytes >= self.watch_bytes || cells >= self.watch_cells {
            Level::Watch
        } else {
            Level::Below
        }
    }
}

/// The bytes HBase counts for a cell.
pub fn cell_bytes(cell: &cellar_types::Cell) -> u64 {
    cell.serialized_size(!cell.tags().is_empty()) as u64
}

/// One row's size in one store, as a flush or compaction saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSize {
    pub row: Vec<u8>,
    pub family: Vec<u8>,
    /// KeyValue bytes of the row's cells.
    pub bytes: u64,
    pub cells: u64,
    /// Delete markers among its cells (reads of the row skip them).
    pub deletes: u64,
    /// When it was seen (ms).
    pub seen: i64,
    /// Whether a compaction saw it (the whole store) or a flush (only new cells).
    pub whole: bool,
}

/// Sums rows as their cells go by; keeps the largest, those at the watch level and
/// those already tracked (a flush's delta for them counts however small). The row being
/// summed lives in a reused buffer: a row allocates only when it is kept.
pub struct RowSizeTracker {
    family: Vec<u8>,
    seen: i64,
    whole: bool,
    levels: Levels,
    tracked: HashSet<Vec<u8>>,
    row: Vec<u8>,
    bytes: u64,
    cells: u64,
    deletes: u64,
    /// The column being counted, its versions so far, and the most of any column.
    column: Vec<u8>,
    column_versions: u64,
    max_versions: u64,
    top: Vec<RowSize>,
    /// The smallest bytes among `top` once it is full.
    top_min: u64,
    kept: Vec<RowSize>,
}

impl RowSizeTracker {
    pub fn new(family: &[u8], seen: i64, whole: bool) -> RowSizeTracker {
        RowSizeTracker::with_levels(family, seen, whole, Levels::default(), HashSet::new())
    }

    pub fn with_levels(
        family: &[u8],
        seen: i64,
        whole: bool,
        levels: Levels,
        tracked: HashSet<Vec<u8>>,
    ) -> RowSizeTracker {
        RowSizeTracker {
            family: family.to_vec(),
            seen,
            whole,
            levels,
            tracked,
            row: Vec::new(),
            bytes: 0,
            cells: 0,
            deletes: 0,
            column: Vec::new(),
            column_versions: 0,
            max_versions: 0,
            top: Vec::new(),
            top_min: 0,
            kept: Vec::new(),
        }
    }

    /// Counts one cell (cells arrive in row order).
    pub fn add(&mut self, row: &[u8], bytes: usize) {
        self.add_cell(row, bytes, false);
    }

    /// Counts one cell of the store: its row, its size, and (a put) one more version
    /// of its column.
    pub fn add_versioned(&mut self, row: &[u8], qualifier: &[u8], bytes: usize, delete: bool) {
        let same_row = self.cells > 0 && same_bytes(&self.row, row);
        if !delete {
            if same_row && self.column_versions > 0 && same_bytes(&self.column, qualifier) {
                self.column_versions += 1;
            } else {
                self.column.clear();
                self.column.extend_from_slice(qualifier);
                self.column_versions = 1;
            }
            self.max_versions = self.max_versions.max(self.column_versions);
        }
        self.add_to_row(same_row, row, bytes, delete);
    }

    /// The most versions of any one column this write held.
    pub fn max_versions(&self) -> u64 {
        self.max_versions
    }

    /// Counts one cell, a delete marker or not.
    pub fn add_cell(&mut self, row: &[u8], bytes: usize, delete: bool) {
        let same_row = self.cells > 0 && same_bytes(&self.row, row);
        self.add_to_row(same_row, row, bytes, delete);
    }

    /// Counts one cell; `same_row` says whether `row` is the row counted last.
    fn add_to_row(&mut self, same_row: bool, row: &[u8], bytes: usize, delete: bool) {
        if same_row {
            self.bytes += bytes as u64;
            self.cells += 1;
            self.deletes += u64::from(delete);
            return;
        }
        self.finish_row();
        self.row.clear();
        self.row.extend_from_slice(row);
        self.bytes = bytes as u64;
        self.cells = 1;
        self.deletes = u64::from(delete);
    }

    fn current(&self) -> RowSize {
        RowSize {
            row: self.row.clone(),
            family: self.family.clone(),
            bytes: self.bytes,
            cells: self.cells,
            deletes: self.deletes,
            seen: self.seen,
            whole: self.whole,
        }
    }

    fn finish_row(&mut self) {
        if self.cells == 0 {
            return;
        }
        if self.levels.level(self.bytes, self.cells) > Level::Below
            || self.levels.tombstones(self.deletes)
            || (!self.tracked.is_empty() && self.tracked.contains(&self.row))
        {
            self.kept.push(self.current());
        } else if self.top.len() < KEPT {
            self.top.push(self.current());
            if self.top.len() == KEPT {
                self.top_min = self.top.iter().map(|r| r.bytes).min().unwrap_or(0);
            }
        } else if self.bytes > self.top_min {
            let row = self.current();
            if let Some(min) = self.top.iter_mut().min_by_key(|r| r.bytes) {
                *min = row;
            }
            self.top_min = self.top.iter().map(|r| r.bytes).min().unwrap_or(0);
        }
        self.cells = 0;
    }

    /// The rows worth keeping, largest first.
    pub fn finish(mut self) -> Vec<RowSize> {
        self.finish_row();
        let mut out = self.kept;
        out.append(&mut self.top);
        sort(&mut out);
        out
    }
}

fn sort(rows: &mut [RowSize]) {
    rows.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.row.cmp(&b.row)));
}

/// What kind of write saw the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    Flush,
    Minor,
    Major,
}

/// A row that reached a higher level with a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crossing {
    pub row: RowSize,
    pub level: Level,
}

/// A store's record of its large rows.
#[derive(Debug, Default)]
pub struct LargestRows {
    rows: Mutex<Vec<RowSize>>,
    /// Rows that were at the watch level and fell below it (a major compaction saw them
    /// shrink), until taken.
    dropped: Mutex<Vec<Vec<u8>>>,
    /// The most versions of one column the store holds, as far as its writes showed.
    versions: std::sync::atomic::AtomicU64,
}

impl LargestRows {
    /// Takes in what a write saw (see the module's documentation); the rows that
    /// crossed a level up.
    pub fn record(&self, seen: Vec<RowSize>, write: Write, levels: &Levels) -> Vec<Crossing> {
        let mut rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        let before: Vec<(Vec<u8>, bool)> = rows
            .iter()
            .map(|r| (r.row.clone(), levels.keeps(r)))
            .collect();
        let levels_before: Vec<(Vec<u8>, Level)> = rows
            .iter()
            .map(|r| (r.row.clone(), levels.level(r.bytes, r.cells)))
            .collect();
        if write == Write::Major {
            *rows = seen;
        } else {
            for r in seen {
                match rows.iter_mut().find(|x| x.row == r.row) {
                    Some(x) if write == Write::Flush => {
                        x.bytes += r.bytes;
                        x.cells += r.cells;
                        x.deletes += r.deletes;
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
        }
        sort(&mut rows);
        // Every row at the watch level, and the largest few.
        let mut i = 0;
        rows.retain(|r| {
            i += 1;
            i <= KEPT || levels.keeps(r)
        });
        let mut dropped = self.dropped.lock().unwrap_or_else(|e| e.into_inner());
        for (row, was) in &before {
            let now = rows
                .iter()
                .find(|r| r.row == *row)
                .is_some_and(|r| levels.keeps(r));
            if *was && !now {
                dropped.push(row.clone());
            }
        }
        rows.iter()
            .filter_map(|r| {
                let now = levels.level(r.bytes, r.cells);
                let was = levels_before
                    .iter()
                    .find(|(row, _)| *row == r.row)
                    .map_or(Level::Below, |b| b.1);
                (now > was).then(|| Crossing {
                    row: r.clone(),
                    level: now,
                })
            })
            .collect()
    }

    /// Takes in the most versions of a column a write held: a major compaction's is the
    /// store's; a flush or minor compaction can only raise it.
    pub fn record_versions(&self, versions: u64, write: Write) {
        use std::sync::atomic::Ordering;
        if write == Write::Major {
            self.versions.store(versions, Ordering::Relaxed);
        } else {
            self.versions.fetch_max(versions, Ordering::Relaxed);
        }
    }

    /// The most versions of one column the store holds.
    pub fn versions(&self) -> u64 {
        self.versions.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The rows that fell below the watch level since last asked.
    pub fn take_dropped(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut *self.dropped.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Every kept row, largest first.
    pub fn get(&self) -> Vec<RowSize> {
        self.rows.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The rows at the watch level or above, or with a build-up of delete markers.
    pub fn over(&self, levels: &Levels) -> Vec<RowSize> {
        self.get().into_iter().filter(|r| levels.keeps(r)).collect()
    }

    /// The rows kept for their level (a flush's delta for them always counts).
    pub fn tracked(&self, levels: &Levels) -> HashSet<Vec<u8>> {
        self.over(levels).into_iter().map(|r| r.row).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn levels() -> Levels {
        Levels {
            enabled: true,
            watch_bytes: 1000,
            watch_cells: 100,
            warn_bytes: 10_000,
            warn_cells: 1000,
            tombstone_cells: 50,
        }
    }

    #[test]
    fn keeps_the_largest_rows_and_those_over_the_watch_level() {
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

        let mut t = RowSizeTracker::with_levels(b"f", 1, false, levels(), HashSet::new());
        for r in 0..30u32 {
            for _ in 0..=(r * 5) {
                t.add(format!("r{r:02}").as_bytes(), 10);
            }
        }
        // Ten rows of 100 cells or more, and the ten largest of the rest.
        assert_eq!(t.finish().len(), 10 + KEPT);
    }

    #[test]
    fn flushes_add_and_compactions_replace_and_crossings_are_reported() {
        let l = LargestRows::default();
        let lv = levels();
        let seen = |bytes| {
            vec![RowSize {
                row: b"w".to_vec(),
                family: b"f".to_vec(),
                bytes,
                cells: 1,
                deletes: 0,
                seen: 0,
                whole: false,
            }]
        };
        assert!(l.record(seen(100), Write::Flush, &lv).is_empty());
        let up = l.record(seen(950), Write::Flush, &lv);
        assert_eq!(up.len(), 1);
        assert_eq!((up[0].level, up[0].row.bytes), (Level::Watch, 1050));
        assert_eq!(l.get()[0].bytes, 1050);
        assert!(l.record(seen(900), Write::Minor, &lv).is_empty());
        assert_eq!(
            l.get()[0].bytes,
            1050,
            "a minor compaction saw part of the row"
        );
        let up = l.record(seen(12_000), Write::Major, &lv);
        assert_eq!(up[0].level, Level::Warn);
        assert!(l.take_dropped().is_empty());
        assert!(l.record(seen(120), Write::Major, &lv).is_empty());
        assert_eq!(l.get()[0].bytes, 120);
        assert!(l.over(&lv).is_empty());
        assert_eq!(l.take_dropped(), vec![b"w".to_vec()]);
        assert!(l.take_dropped().is_empty());
    }
}
