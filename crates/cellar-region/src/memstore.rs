//! The MemStore of one family: a concurrent skip list of cells in HBase order (sequence
//! ids descending among equal keys), with size accounting. A store keeps an active
//! segment and, while a flush runs, the snapshot being flushed.

use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::atomic::{AtomicI64, AtomicU64, AtomicUsize, Ordering as AtomicOrdering};

use cellar_types::{
    compare_cells, compare_keys, compare_within_row, row_prefix, same_bytes, Cell, CellType, KeyRef,
};

use crate::skiplist::{Entry, Grouped, Position, SkipList, Splice};

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

    fn same_run(&self, other: &Self) -> bool {
        self.prefix == other.prefix
            && same_bytes(self.cell.qualifier(), other.cell.qualifier())
            && same_bytes(self.cell.family(), other.cell.family())
            && same_bytes(self.cell.row(), other.cell.row())
    }

    fn cmp_in_group(&self, other: &Self) -> Ordering {
        compare_within_row(&self.cell.key_ref(), &other.cell.key_ref())
            .then_with(|| other.cell.seq_id().cmp(&self.cell.seq_id()))
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

/// Whether `x` goes before every cell at or after `key` (`prefix` is the row prefix of
/// `key`): the order of [`probe`] of `key`, without building it.
fn goes_before(x: &MemKey, key: &KeyRef<'_>, prefix: u64) -> bool {
    match x.prefix.cmp(&prefix) {
        Ordering::Less => true,
        Ordering::Greater => false,
        Ordering::Equal => compare_keys(&x.cell.key_ref(), key) == Ordering::Less,
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

    /// The first key at or after `key` (any sequence id), found without building a
    /// key to compare with.
    fn seek_key(&self, key: &KeyRef<'_>) -> Option<Entry<'_, MemKey>> {
        let prefix = row_prefix(key.row);
        self.map.seek_where(|x| goes_before(x, key, prefix))
    }

    /// The first visible cell (sequence id at or below `read_point`) from `at` on; with
    /// `row` (its name and prefix), none past that row: a row whose cells are all above
    /// the read point costs its own cells, not the rest of the segment.
    fn first_visible<'a>(
        &'a self,
        mut at: Option<Entry<'a, MemKey>>,
        read_point: u64,
        row: Option<(&[u8], u64)>,
    ) -> Option<Entry<'a, MemKey>> {
        while let Some(e) = at {
            let k = e.key();
            #[cfg(test)]
            self.walked.fetch_add(1, AtomicOrdering::Relaxed);
            if let Some((r, prefix)) = row {
                if k.prefix != prefix || !same_bytes(k.cell.row(), r) {
                    return None;
                }
            }
            if k.cell.seq_id() <= read_point {
                return Some(e);
            }
            at = e.next();
        }
        None
    }

    /// The first visible cell at or after `key`.
    pub(crate) fn seek_visible(
        &self,
        key: &KeyRef<'_>,
        read_point: u64,
    ) -> Option<Position<MemKey>> {
        self.first_visible(self.seek_key(key), read_point, None)
            .map(|e| e.position())
    }

    /// The first visible cell of `row` at or after `start`. When `start` goes before
    /// every cell of the row here, the walk starts at the row's first cell, found by
    /// hash instead of a descent of the skip list (a row not here costs no walk at
    /// all); a later start (one column of a wide row) searches as a seek does.
    pub(crate) fn row_start_visible(
        &self,
        start: &KeyRef<'_>,
        row: &[u8],
        read_point: u64,
    ) -> Option<Position<MemKey>> {
        let head = self.map.group_head(row)?;
        let from = if compare_keys(start, &head.key().cell.key_ref()) == Ordering::Greater {
            self.seek_key(start)
        } else {
            Some(head)
        };
        self.first_visible(from, read_point, Some((row, row_prefix(row))))
            .map(|e| e.position())
    }

    /// The cell at `pos` (a position of this segment; `None` for another's).
    pub(crate) fn cell_at(&self, pos: Position<MemKey>) -> Option<&Cell> {
        self.map.entry(pos).map(|e| &e.key().cell)
    }

    /// Whether the cell at `pos` carries a jump past its column's older versions: an
    /// older version of its column follows it here.
    pub(crate) fn column_goes_on(&self, pos: Position<MemKey>) -> bool {
        self.map.entry(pos).is_some_and(|e| e.skip().is_some())
    }

    /// The visible cell after the one at `pos`; with `same_row`, none of a later row.
    pub(crate) fn next_visible(
        &self,
        pos: Position<MemKey>,
        read_point: u64,
        same_row: bool,
    ) -> Option<Position<MemKey>> {
        let e = self.map.entry(pos)?;
        let row = same_row.then(|| (e.key().cell.row(), e.key().prefix));
        self.first_visible(e.next(), read_point, row)
            .map(|e| e.position())
    }

    /// From `pos` to the first visible cell at or after `key` (`pos` itself when it is
    /// there already; with `same_row`, none of a later row than `pos`'s). A key a few
    /// cells on is reached by stepping, as most reseeks of a scan go to the next
    /// column or row; a farther one by a search from the top.
    pub(crate) fn reseek_visible(
        &self,
        pos: Position<MemKey>,
        key: &KeyRef<'_>,
        read_point: u64,
        same_row: bool,
    ) -> Option<Position<MemKey>> {
        const STEPS: usize = 4;
        let e = self.map.entry(pos)?;
        let prefix = row_prefix(key.row);
        if !goes_before(e.key(), key, prefix) {
            return Some(pos);
        }
        let row = same_row.then(|| (e.key().cell.row(), e.key().prefix));
        let mut at = match e.skip() {
            Some(s) if goes_before(s.key(), key, prefix) => Some(s),
            _ => e.next(),
        };
        let mut steps = 0;
        while let Some(n) = at {
            if !goes_before(n.key(), key, prefix) {
                break;
            }
            #[cfg(test)]
            self.walked.fetch_add(1, AtomicOrdering::Relaxed);
            steps += 1;
            if steps == STEPS {
                at = self.seek_key(key);
                break;
            }
            // Past a column's versions at one jump when the whole way lies before
            // `key` (a hot column's thousands of versions between two reseeks).
            at = match n.skip() {
                Some(s) if goes_before(s.key(), key, prefix) => Some(s),
                _ => n.next(),
            };
        }
        self.first_visible(at, read_point, row)
            .map(|e| e.position())
    }

    /// The first visible cell of `row` (for reversed scans).
    pub(crate) fn row_first_visible(
        &self,
        row: &[u8],
        read_point: u64,
    ) -> Option<Position<MemKey>> {
        let from = self.seek_key(&KeyRef::first_on_row(row));
        self.first_visible(from, read_point, Some((row, row_prefix(row))))
            .map(|e| e.position())
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
