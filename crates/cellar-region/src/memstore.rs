//! The MemStore of one family: a concurrent skip list of cells in HBase order (sequence
//! ids descending among equal keys), with size accounting. A store keeps an active
//! segment and, while a flush runs, the snapshot being flushed.

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering as AtomicOrdering};

use cellar_types::{compare_cells, compare_keys, row_prefix, Cell, CellType, KeyRef};

use crate::skiplist::{Entry, Grouped, SkipList, Splice};

/// A cell ordered as store files order it.
///
/// The prefix comes last so that in a skip-list node it shares a cache line with the
/// node's next pointers, which follow the key: a step of a descent decided by the
/// prefix touches one line of the node.
#[derive(Debug, Clone)]
#[repr(C)]
pub struct MemKey {
    pub cell: Cell,
    /// The row's first 8 bytes, big-endian, zero-padded: unequal prefixes order two
    /// keys without reading their buffers (most comparisons of a skip-list descent).
    prefix: u64,
}

impl MemKey {
    pub fn new(cell: Cell) -> MemKey {
        MemKey {
            prefix: row_prefix(cell.row()),
            cell,
        }
    }
}

impl PartialEq for MemKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for MemKey {}
impl PartialOrd for MemKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for MemKey {
    fn cmp(&self, other: &Self) -> Ordering {
        // Rows order first; zero padding keeps prefix order consistent with row order
        // whenever the prefixes differ.
        self.prefix
            .cmp(&other.prefix)
            .then_with(|| compare_cells(&self.cell, &other.cell))
    }
}

impl Grouped for MemKey {
    fn group(&self) -> &[u8] {
        self.cell.row()
    }
}

/// Per-row bookkeeping of the row index beyond the row's name (its slot, the name's
/// allocation).
const ROW_OVERHEAD: usize = 48;

/// Per-cell bookkeeping beyond the serialized bytes (skip-list node, key object).
const CELL_OVERHEAD: usize = 96;

/// One immutable-once-snapshotted set of cells, in an insert-only skip list: no cell
/// is ever removed from a segment, so reads walk it without locks, and the cells of one
/// edit go in from where the previous one went.
#[derive(Debug)]
pub struct MemSegment {
    map: SkipList<MemKey>,
    counters: Counters,
    /// Cells the cursors' walks have stepped over (tests bound the cost of reads).
    #[cfg(test)]
    pub(crate) walked: AtomicUsize,
}

/// What every edit updates, on a cache line of its own: beside the list's head, each
/// write would take from the readers the line every seek starts from.
#[derive(Debug)]
#[repr(align(128))]
struct Counters {
    size: AtomicUsize,
    max_seq: AtomicU64,
    /// Oldest time any cell was added (ms), for periodic flushes.
    min_ts: AtomicI64,
}

impl Default for MemSegment {
    fn default() -> Self {
        MemSegment {
            map: SkipList::new(),
            counters: Counters {
                size: AtomicUsize::new(0),
                max_seq: AtomicU64::new(0),
                min_ts: AtomicI64::new(i64::MAX),
            },
            #[cfg(test)]
            walked: AtomicUsize::new(0),
        }
    }
}

/// The probe that sorts before every cell at or after `key` (any sequence id).
pub(crate) fn probe(key: &KeyRef<'_>) -> cellar_types::Result<MemKey> {
    let cell = Cell::new(
        key.row,
        key.family,
        key.qualifier,
        key.timestamp,
        CellType::from_code(key.type_code)?,
        Vec::new(),
    )?;
    Ok(MemKey::new(cell.with_seq_id(u64::MAX)))
}

impl MemSegment {
    pub fn new() -> MemSegment {
        MemSegment::default()
    }

    /// Adds a cell (its sequence id already set); returns the bytes accounted.
    pub fn add(&self, cell: Cell, now: i64) -> usize {
        self.add_all(std::iter::once(cell), now)
    }

    /// Adds cells of one edit (their sequence id already set), each placed from where
    /// the previous one went, updating the segment's counters once; returns the bytes
    /// accounted.
    pub fn add_all(&self, cells: impl Iterator<Item = Cell>, now: i64) -> usize {
        let mut splice = Splice::default();
        let mut size = 0;
        let mut max_seq = 0;
        let keys = cells.map(|cell| {
            size += cell.serialized_size(true) + CELL_OVERHEAD;
            max_seq = max_seq.max(cell.seq_id());
            MemKey::new(cell)
        });
        let (rows, names) = self.map.insert_grouped(keys, &mut splice);
        // A new row's entry in the row index: its name, and the map's slot for it.
        size += names + rows * ROW_OVERHEAD;
        if size > 0 {
            // Writers of every thread update these: a read first leaves the line
            // shared when nothing changes (the oldest edit time, mostly).
            if self.counters.max_seq.load(AtomicOrdering::Relaxed) < max_seq {
                self.counters
                    .max_seq
                    .fetch_max(max_seq, AtomicOrdering::Relaxed);
            }
            if self.counters.min_ts.load(AtomicOrdering::Relaxed) > now {
                self.counters.min_ts.fetch_min(now, AtomicOrdering::Relaxed);
            }
            self.counters.size.fetch_add(size, AtomicOrdering::Relaxed);
        }
        size
    }

    /// Accounted bytes.
    pub fn size(&self) -> usize {
        self.counters.size.load(AtomicOrdering::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn max_seq_id(&self) -> u64 {
        self.counters.max_seq.load(AtomicOrdering::Relaxed)
    }

    /// When the oldest cell arrived (ms), if any.
    pub fn oldest_edit_time(&self) -> Option<i64> {
        let t = self.counters.min_ts.load(AtomicOrdering::Relaxed);
        (t != i64::MAX).then_some(t)
    }

    /// Appends to `out` up to `max` cells from `from` (inclusive or not) with a sequence
    /// id ≤ `read_point`, walking the skip list once; returns how many it appended. With
    /// `row`, the walk stops at the first cell of another row (so a row whose cells are
    /// all above the read point costs its own cells, not the rest of the segment).
    pub(crate) fn visible_from(
        &self,
        from: Bound<&MemKey>,
        read_point: u64,
        max: usize,
        row: Option<&[u8]>,
        out: &mut VecDeque<Cell>,
    ) -> usize {
        if max == 0 {
            return 0;
        }
        self.walk(self.map.seek(from), read_point, max, row, out)
    }

    /// [`MemSegment::visible_from`] from `start` of `row` when `start` goes before
    /// every cell of the row here: the walk starts at the row's first cell, found by
    /// hash instead of a descent of the skip list (a row not here costs no walk at
    /// all). A later start (one column of a wide row) seeks as `visible_from` does.
    pub(crate) fn visible_in_row(
        &self,
        start: &KeyRef<'_>,
        row: &[u8],
        read_point: u64,
        max: usize,
        out: &mut VecDeque<Cell>,
    ) -> cellar_types::Result<usize> {
        if max == 0 {
            return Ok(0);
        }
        let Some(head) = self.map.group_head(row) else {
            return Ok(0);
        };
        if compare_keys(start, &head.key().cell.key_ref()) == Ordering::Greater {
            let from = probe(start)?;
            return Ok(self.walk(
                self.map.seek(Bound::Included(&from)),
                read_point,
                max,
                Some(row),
                out,
            ));
        }
        Ok(self.walk(Some(head), read_point, max, Some(row), out))
    }

    fn walk(
        &self,
        mut at: Option<Entry<'_, MemKey>>,
        read_point: u64,
        max: usize,
        row: Option<&[u8]>,
        out: &mut VecDeque<Cell>,
    ) -> usize {
        let mut n = 0;
        while let Some(e) = at {
            let c = &e.key().cell;
            #[cfg(test)]
            self.walked.fetch_add(1, AtomicOrdering::Relaxed);
            if row.is_some_and(|r| c.row() != r) {
                break;
            }
            if c.seq_id() <= read_point {
                out.push_back(c.clone());
                n += 1;
                if n == max {
                    break;
                }
            }
            at = e.next();
        }
        n
    }

    /// The last cell < `before` (any read point).
    pub(crate) fn last_before(&self, before: Bound<&MemKey>) -> Option<Cell> {
        self.map.last_before(before).map(|e| e.key().cell.clone())
    }

    /// Every cell in order (for flushing).
    pub fn cells(&self) -> impl Iterator<Item = Cell> + '_ {
        self.map.iter().map(|k| k.cell.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inline row prefix never changes the order cells compare in: rows around
    /// the 8-byte boundary, with zero bytes (the padding value) and 0xff.
    #[test]
    fn key_order_is_cell_order() {
        let mut rows: Vec<Vec<u8>> = vec![Vec::new()];
        for len in [1usize, 7, 8, 9, 10] {
            for fill in [0u8, 1, 0xff] {
                for last in [0u8, 1, 0xff] {
                    let mut r = vec![fill; len];
                    r[len - 1] = last;
                    rows.push(r);
                }
            }
        }
        let cells: Vec<Cell> = rows
            .iter()
            .flat_map(|r| {
                [
                    Cell::put(r, "f", "a", 5, "").map(|c| c.with_seq_id(3)),
                    Cell::new(r, "f", "", 9, CellType::DeleteFamily, "").map(|c| c.with_seq_id(1)),
                ]
            })
            .collect::<std::result::Result<_, _>>()
            .unwrap_or_else(|e| panic!("{e}"));
        for a in &cells {
            for b in &cells {
                let (ka, kb) = (MemKey::new(a.clone()), MemKey::new(b.clone()));
                assert_eq!(ka.cmp(&kb), compare_cells(a, b), "{a:?} vs {b:?}");
            }
        }
        let seg = MemSegment::new();
        for c in cells.iter().rev() {
            seg.add(c.clone(), 0);
        }
        let mut sorted = cells.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(seg.cells().collect::<Vec<_>>(), sorted);
    }
}
