//! HBase's cell sort order (`CellComparatorImpl`, non-meta tables): row ascending, the
//! "last on row" sentinel, family, qualifier ascending, timestamp descending, type
//! descending, then sequence id descending.

use std::cmp::Ordering;

use crate::cell::Cell;
use crate::key::KeyRef;
use crate::short_bytes::compare_bytes;

/// Unsigned lexicographic comparison of rows (a shorter prefix sorts first).
#[inline]
pub fn compare_rows(a: &[u8], b: &[u8]) -> Ordering {
    compare_bytes(a, b)
}

/// Compares two keys, ignoring sequence ids.
#[inline]
pub fn compare_keys(a: &KeyRef<'_>, b: &KeyRef<'_>) -> Ordering {
    let rows = compare_rows(a.row, b.row);
    if rows != Ordering::Equal {
        return rows;
    }
    compare_within_row(a, b)
}

/// Compares two keys of one row (the caller knows the rows are equal), ignoring
/// sequence ids.
#[inline]
pub fn compare_within_row(a: &KeyRef<'_>, b: &KeyRef<'_>) -> Ordering {
    // A Minimum-typed key with no family and no qualifier is "last on row".
    if a.family.is_empty() && a.qualifier.is_empty() && a.type_code == 0 {
        return Ordering::Greater;
    }
    if b.family.is_empty() && b.qualifier.is_empty() && b.type_code == 0 {
        return Ordering::Less;
    }
    compare_bytes(a.family, b.family)
        .then_with(|| compare_bytes(a.qualifier, b.qualifier))
        .then_with(|| b.timestamp.cmp(&a.timestamp))
        .then_with(|| b.type_code.cmp(&a.type_code))
}

/// Compares two cells: keys first, then sequence id descending (later writes first).
#[inline]
pub fn compare_cells(a: &Cell, b: &Cell) -> Ordering {
    compare_keys(&a.key_ref(), &b.key_ref()).then_with(|| b.seq_id().cmp(&a.seq_id()))
}

/// A row's first 8 bytes, big-endian, zero-padded. Row order never contradicts it:
/// `a < b` implies `row_prefix(a) <= row_prefix(b)`, so unequal prefixes order two rows
/// without reading them (sorted structures keep these side by side to search cheaply).
#[inline]
pub fn row_prefix(row: &[u8]) -> u64 {
    // One load for rows of eight bytes or more; shorter ones are shifted in byte by
    // byte. (Copying into a zeroed array and reading it back called the library's
    // memcpy for every cell a scan stepped, and stalled reading the bytes it stored.)
    if let Some(head) = row.first_chunk::<8>() {
        return u64::from_be_bytes(*head);
    }
    let mut v = 0u64;
    for (i, &b) in row.iter().enumerate() {
        v |= u64::from(b) << (56 - 8 * i);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::CellType;

    fn c(row: &str, fam: &str, q: &str, ts: i64, t: CellType, seq: u64) -> Cell {
        Cell::new(row, fam, q, ts, t, "").unwrap().with_seq_id(seq)
    }

    #[test]
    fn order_follows_hbase() {
        let mut cells = vec![
            c("b", "f", "a", 1, CellType::Put, 1),
            c("a", "g", "a", 1, CellType::Put, 1),
            c("a", "f", "b", 1, CellType::Put, 1),
            c("a", "f", "a", 1, CellType::Put, 1),
            c("a", "f", "a", 2, CellType::Put, 1),
            c("a", "f", "a", 2, CellType::Delete, 1),
            c("a", "f", "a", 2, CellType::Put, 9),
            c("a", "f", "", 2, CellType::DeleteFamily, 1),
            c("ab", "f", "a", 1, CellType::Put, 1),
        ];
        cells.sort();
        let got: Vec<_> = cells
            .iter()
            .map(|c| {
                format!(
                    "{}/{}:{}/{}/{}/{}",
                    String::from_utf8_lossy(c.row()),
                    String::from_utf8_lossy(c.family()),
                    String::from_utf8_lossy(c.qualifier()),
                    c.timestamp(),
                    c.cell_type().name(),
                    c.seq_id()
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                "a/f:/2/DeleteFamily/1",
                "a/f:a/2/Delete/1",
                "a/f:a/2/Put/9",
                "a/f:a/2/Put/1",
                "a/f:a/1/Put/1",
                "a/f:b/1/Put/1",
                "a/g:a/1/Put/1",
                "ab/f:a/1/Put/1",
                "b/f:a/1/Put/1",
            ]
        );
    }

    #[test]
    fn last_on_row_sorts_after_every_cell_of_its_row() {
        let cell = c("r", "zzz", "zzz", i64::MIN, CellType::Minimum, 0);
        let last = KeyRef::last_on_row(b"r");
        assert_eq!(compare_keys(&cell.key_ref(), &last), Ordering::Less);
        assert_eq!(compare_keys(&last, &cell.key_ref()), Ordering::Greater);
        let next_row = KeyRef::first_on_row(b"r\0");
        assert_eq!(compare_keys(&last, &next_row), Ordering::Less);
        let first = KeyRef::first_on_row(b"r");
        assert_eq!(compare_keys(&first, &cell.key_ref()), Ordering::Less);
    }

    #[test]
    fn cell_order_is_key_order_then_sequence_id() {
        let mut cells = Vec::new();
        for row in ["", "a", "ab", "b"] {
            for (family, qualifier) in [("", ""), ("f", ""), ("f", "q"), ("fq", ""), ("g", "a")] {
                for ts in [0, 5] {
                    for t in [CellType::Minimum, CellType::Put, CellType::DeleteColumn] {
                        for seq in [1, 2] {
                            cells.push(c(row, family, qualifier, ts, t, seq));
                        }
                    }
                }
            }
        }
        for a in &cells {
            for b in &cells {
                let expected = compare_keys(&a.key_ref(), &b.key_ref())
                    .then_with(|| b.seq_id().cmp(&a.seq_id()));
                assert_eq!(compare_cells(a, b), expected, "{a:?} vs {b:?}");
            }
        }
    }

    /// A row's prefix is its first eight bytes, big-endian, zero-padded, at every
    /// length around the one-load boundary; and it never orders two rows against
    /// their byte order.
    #[test]
    fn row_prefix_is_the_padded_first_eight_bytes() {
        for len in 0..=12usize {
            let row: Vec<u8> = (0..len)
                .map(|i| 0xF0 ^ (i as u8).wrapping_mul(37))
                .collect();
            let mut padded = [0u8; 8];
            let n = len.min(8);
            padded[..n].copy_from_slice(&row[..n]);
            assert_eq!(row_prefix(&row), u64::from_be_bytes(padded), "length {len}");
        }
        let rows: [&[u8]; 9] = [
            b"",
            b"\0",
            b"a",
            b"a\0",
            b"ab",
            b"abcdefg",
            b"abcdefgh",
            b"abcdefgh\0",
            b"\xff\xff",
        ];
        for a in rows {
            for b in rows {
                if a < b {
                    assert!(row_prefix(a) <= row_prefix(b), "{a:?} {b:?}");
                }
            }
        }
    }
}
