//! Moving a read past the rest of a column: once the matcher has what it wants of a
//! column (its versions, or a SEEK_NEXT_COL), the column's other cells are skipped. The
//! column is copied out of its cell (no reference taken on the cell's buffer) and the
//! read steps a few cells, as HBase's `trySkipToNextColumn` does, or seeks at once when
//! the MemStore knows that more versions of the column follow.

use cellar_types::{same_bytes, Cell, CellType, KeyRef};

use crate::cursor::CellCursor;
use crate::error::Result;

/// What can be moved past a column: a store's merge heap or one of its sources.
pub(crate) trait ColumnWalk {
    fn peek(&self) -> Option<&Cell>;
    fn advance(&mut self) -> Result<()>;
    fn reseek(&mut self, key: &KeyRef<'_>) -> Result<()>;
    /// Whether another version of the column under the walk is known to follow it (a
    /// MemStore cell that carries a jump past its column's older versions).
    fn column_goes_on(&self) -> bool;
}

impl<C: CellCursor> ColumnWalk for C {
    #[inline]
    fn peek(&self) -> Option<&Cell> {
        CellCursor::peek(self)
    }

    #[inline]
    fn advance(&mut self) -> Result<()> {
        CellCursor::advance(self)
    }

    fn reseek(&mut self, key: &KeyRef<'_>) -> Result<()> {
        CellCursor::reseek(self, key)
    }

    fn column_goes_on(&self) -> bool {
        CellCursor::column_goes_on(self)
    }
}

/// A column's row, family and qualifier, copied into a buffer the read keeps: the
/// start of the cell's flat key (row length, row, family length, family, qualifier),
/// which names the column alone, in one copy.
#[derive(Debug, Default)]
pub(crate) struct ColumnKey {
    buf: Vec<u8>,
    row_len: usize,
    family_len: usize,
}

/// The bytes of a flat key after its column: timestamp and type.
const KEY_TAIL: usize = 9;

/// The part of `cell`'s flat key that names its column.
fn column_part(cell: &Cell) -> &[u8] {
    let key = cell.key();
    key.get(..key.len().saturating_sub(KEY_TAIL))
        .unwrap_or_default()
}

impl ColumnKey {
    fn set(&mut self, cell: &Cell) {
        self.buf.clear();
        self.buf.extend_from_slice(column_part(cell));
        self.row_len = cell.row().len();
        self.family_len = cell.family().len();
    }

    fn part(&self, from: usize, to: usize) -> &[u8] {
        self.buf.get(from..to).unwrap_or_default()
    }

    fn row(&self) -> &[u8] {
        self.part(2, 2 + self.row_len)
    }

    fn family(&self) -> &[u8] {
        let start = 3 + self.row_len;
        self.part(start, start + self.family_len)
    }

    fn qualifier(&self) -> &[u8] {
        self.part(3 + self.row_len + self.family_len, self.buf.len())
    }

    /// Whether `cell` is of this column.
    pub(crate) fn holds(&self, cell: &Cell) -> bool {
        same_bytes(column_part(cell), &self.buf)
    }

    /// The key after every cell of the column.
    pub(crate) fn last_on_column(&self) -> KeyRef<'_> {
        KeyRef {
            row: self.row(),
            family: self.family(),
            qualifier: self.qualifier(),
            timestamp: i64::MIN,
            type_code: CellType::Minimum.code(),
        }
    }
}

/// Moves `walk` past every cell of the column under it, `column` its scratch buffer:
/// up to `steps` steps (the next column is usually a step away), then a seek; a seek
/// at once where more versions of the column are known to follow. Once the least cell
/// is past the column, every source is, which is where a seek would have left them.
pub(crate) fn skip_column<W: ColumnWalk>(
    walk: &mut W,
    column: &mut ColumnKey,
    steps: usize,
) -> Result<()> {
    let Some(current) = walk.peek() else {
        return Ok(());
    };
    column.set(current);
    let mut left = steps;
    loop {
        if left == 0 || walk.column_goes_on() {
            return walk.reseek(&column.last_on_column());
        }
        walk.advance()?;
        left -= 1;
        match walk.peek() {
            Some(next) if column.holds(next) => {}
            _ => return Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering as AtomicOrdering;
    use std::sync::Arc;

    use cellar_api::TimeRange;
    use cellar_types::{Cell, KeyRef};

    use super::{skip_column, ColumnKey, ColumnWalk};
    use crate::cursor::{MemCursor, Source};
    use crate::descriptor::FamilyDescriptor;
    use crate::heap::Heap;
    use crate::matcher::{MatchParams, Matcher};
    use crate::memstore::MemSegment;
    use crate::store_scanner::{RowProgress, StoreScanner};

    /// A segment holding `versions` versions (timestamps 1..=versions, written oldest
    /// first as updates arrive) of 20 columns of `row`, and one cell of a later row.
    fn hot_row(versions: i64) -> Arc<MemSegment> {
        let seg = MemSegment::new();
        let mut seq = 0;
        for ts in 1..=versions {
            for q in 0..20 {
                seq += 1;
                let c = Cell::put("row", "f", format!("q{q:02}"), ts, format!("v{ts}"))
                    .map(|c| c.with_seq_id(seq))
                    .unwrap_or_else(|e| panic!("{e}"));
                seg.add(c, 0);
            }
        }
        let later = Cell::put("rox", "f", "q00", 1, "x")
            .map(|c| c.with_seq_id(seq + 1))
            .unwrap_or_else(|e| panic!("{e}"));
        seg.add(later, 0);
        Arc::new(seg)
    }

    fn newest(versions: i64) -> Vec<(Vec<u8>, Vec<u8>)> {
        (0..20)
            .map(|q| {
                (
                    format!("q{q:02}").into_bytes(),
                    format!("v{versions}").into_bytes(),
                )
            })
            .collect()
    }

    fn columns(cells: &[Cell]) -> Vec<(Vec<u8>, Vec<u8>)> {
        cells
            .iter()
            .map(|c| (c.qualifier().to_vec(), c.value().to_vec()))
            .collect()
    }

    fn walked(seg: &MemSegment) -> usize {
        seg.walked.swap(0, AtomicOrdering::Relaxed)
    }

    /// A Get's read of a row whose columns hold many versions in the MemStore (a hot
    /// row under updates) goes past each column's older versions at one jump: about
    /// three cells a column, whatever the number of versions, in the merge heap's read
    /// as in a read of the one source.
    #[test]
    fn a_hot_columns_versions_are_jumped_not_stepped() {
        for versions in [1, 2, 5, 40, 1_000] {
            let seg = hot_row(versions);
            let start = KeyRef::first_on_row(b"row");
            let read =
                |seg: &Arc<MemSegment>| MemCursor::for_row(seg.clone(), u64::MAX, &start, b"row");
            walked(&seg);
            // Through the merge heap and the matcher (a Get of every column, one version).
            let family = FamilyDescriptor::new("f");
            let params = MatchParams::new(&family, 1, TimeRange::ALL, None, false, 0);
            let heap = Heap::new(vec![Source::Mem(read(&seg))]);
            let mut scanner = StoreScanner::new(heap, Matcher::new(params), u64::MAX);
            let (mut out, mut bytes) = (Vec::new(), 0);
            let progress = scanner
                .read_row(b"row", None, &mut out, usize::MAX, u64::MAX, &mut bytes)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(progress, RowProgress::Done);
            assert_eq!(columns(&out), newest(versions), "{versions} versions");
            let heap_walk = walked(&seg);
            // The matcher includes a column's newest cell, steps once, then skips.
            assert!(
                heap_walk <= 20 * 3 + 1,
                "{versions} versions: walked {heap_walk}"
            );
            // A source alone, skipped column by column.
            let mut source = Source::Mem(read(&seg));
            let (mut column, mut seen) = (ColumnKey::default(), Vec::new());
            while let Some(c) = source.peek() {
                seen.push(c.clone());
                skip_column(&mut source, &mut column, 4).unwrap_or_else(|e| panic!("{e}"));
            }
            assert_eq!(columns(&seen), newest(versions), "{versions} versions");
            let source_walk = walked(&seg);
            assert!(
                source_walk <= 20 * 2 + 1,
                "{versions} versions: walked {source_walk}"
            );
        }
    }

    /// Where no jump is known (one version a column), the skip steps to the next
    /// column instead of seeking, and a column key matches its own cells only.
    #[test]
    fn a_single_versions_column_is_stepped_past() {
        let seg = hot_row(1);
        let start = KeyRef::first_on_row(b"row");
        let mut source = Source::Mem(MemCursor::for_row(seg.clone(), u64::MAX, &start, b"row"));
        assert!(!source.column_goes_on());
        let mut column = ColumnKey::default();
        let first = source.peek().cloned().unwrap_or_else(|| panic!("no cell"));
        skip_column(&mut source, &mut column, 4).unwrap_or_else(|e| panic!("{e}"));
        assert!(column.holds(&first));
        let next = source.peek().cloned().unwrap_or_else(|| panic!("no cell"));
        assert_eq!(next.qualifier(), b"q01");
        assert!(!column.holds(&next));
        // Another row, family or qualifier is another column, however the bytes
        // of the three would run together.
        for (row, family, qualifier) in [
            ("row", "f", "q0"),
            ("rowf", "", "q00"),
            ("ro", "wf", "q00"),
            ("row", "fq", "00"),
            ("rox", "f", "q00"),
        ] {
            let other = Cell::put(row, family, qualifier, 1, "v").unwrap_or_else(|e| panic!("{e}"));
            assert!(!column.holds(&other), "{row}/{family}/{qualifier}");
        }
        let same = Cell::put("row", "f", "q00", 7, "w").unwrap_or_else(|e| panic!("{e}"));
        assert!(column.holds(&same));
        let key = column.last_on_column();
        assert_eq!(
            (key.row, key.family, key.qualifier),
            (&b"row"[..], &b"f"[..], &b"q00"[..])
        );
    }
}
