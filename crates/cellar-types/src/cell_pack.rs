//! The cells of one edit in one buffer they share: a Get of the row then reads them
//! side by side and takes one reference count for all of them, and none keeps alive a
//! larger buffer it was cut from (a request's cell block).

use bytes::Bytes;

use crate::cell::{check_lengths, Cell, CellType, Parts};
use crate::error::Result;
use crate::key::KeyRef;

/// One Put cell of a row to build: family, qualifier, timestamp, value.
pub type PutParts<'a> = (&'a [u8], &'a [u8], i64, &'a [u8]);

impl Cell {
    /// The cells with their bytes moved into one buffer they share.
    pub fn pack(cells: Vec<Cell>) -> Vec<Cell> {
        let total = cells.iter().map(|c| c.buf.len()).sum();
        let mut joined = Vec::with_capacity(total);
        for c in &cells {
            joined.extend_from_slice(&c.buf);
        }
        let joined = Bytes::from(joined);
        let mut at = 0;
        cells
            .into_iter()
            .map(|mut c| {
                let n = c.buf.len();
                c.buf = joined.slice(at..at + n);
                at += n;
                c
            })
            .collect()
    }

    /// Put cells of `row` written straight into one buffer they share: what
    /// [`Cell::pack`] makes of cells built one by one, without a buffer per cell first.
    /// The row and family limits are checked as [`Cell::put`] checks them.
    pub fn puts_packed<'a, I>(row: &[u8], parts: I) -> Result<Vec<Cell>>
    where
        I: IntoIterator<Item = PutParts<'a>>,
        I::IntoIter: Clone,
    {
        let parts = parts.into_iter();
        let key = |&(family, qualifier, timestamp, _): &PutParts<'a>| KeyRef {
            row,
            family,
            qualifier,
            timestamp,
            type_code: CellType::Put.code(),
        };
        let mut total = 0;
        let mut count = 0;
        for p in parts.clone() {
            let k = key(&p);
            check_lengths(k.row.len(), k.family.len(), 0)?;
            total += k.len() + p.3.len();
            count += 1;
        }
        let mut buf = Vec::with_capacity(total);
        for p in parts.clone() {
            key(&p).write(&mut buf);
            buf.extend_from_slice(p.3);
        }
        let buf = Bytes::from(buf);
        let mut cells = Vec::with_capacity(count);
        let mut at = 0;
        for p in parts {
            let k = key(&p);
            let n = k.len() + p.3.len();
            let value = Parts {
                value_len: p.3.len(),
                tags_gap: 0,
                tags_len: 0,
            };
            cells.push(Cell::view(
                buf.slice(at..at + n),
                &k,
                CellType::Put,
                value,
                0,
            ));
            at += n;
        }
        Ok(cells)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::TypesError;

    fn side_by_side(cells: &[Cell]) {
        for (a, b) in cells.iter().zip(&cells[1..]) {
            let end = a.buf.as_ptr() as usize + a.buf.len();
            assert_eq!(end, b.buf.as_ptr() as usize);
        }
    }

    #[test]
    fn packed_cells_are_equal_and_lie_side_by_side() {
        let cells: Vec<Cell> = (0..5)
            .map(|i| {
                Cell::put(
                    format!("row{i}"),
                    "f",
                    format!("q{i}"),
                    i,
                    vec![i as u8; 10 * i as usize],
                )
                .map(|c| c.with_seq_id(7))
            })
            .collect::<Result<_>>()
            .unwrap();
        let tagged = cells[0].clone().with_tags([1u8, 0, 1, b'x']).unwrap();
        let mut all = cells.clone();
        all.push(tagged.clone());
        let packed = Cell::pack(all);
        assert_eq!(&packed[..5], &cells[..]);
        assert_eq!(packed[5], tagged);
        assert_eq!(packed[5].tags(), tagged.tags());
        side_by_side(&packed);
        assert!(packed.iter().all(|c| c.seq_id() == 7));
        assert!(Cell::pack(Vec::new()).is_empty());
    }

    #[test]
    fn puts_built_packed_equal_puts_built_one_by_one() {
        let values: Vec<Vec<u8>> = (0..6).map(|i| vec![i as u8; 7 * i]).collect();
        let quals: Vec<String> = (0..6).map(|i| format!("q{i}")).collect();
        let parts: Vec<PutParts<'_>> = (0..6)
            .map(|i| {
                let family: &[u8] = if i < 3 { b"a" } else { b"bb" };
                (
                    family,
                    quals[i].as_bytes(),
                    100 - i as i64,
                    values[i].as_slice(),
                )
            })
            .collect();
        let packed = Cell::puts_packed(b"row", parts.iter().copied()).unwrap();
        let single: Vec<Cell> = parts
            .iter()
            .map(|(f, q, ts, v)| Cell::put(b"row", f, q, *ts, v).unwrap())
            .collect();
        assert_eq!(packed, single);
        for (p, s) in packed.iter().zip(&single) {
            assert_eq!(p.value(), s.value());
            assert_eq!(p.timestamp(), s.timestamp());
            assert_eq!(p.cell_type(), CellType::Put);
            assert!(p.tags().is_empty());
        }
        side_by_side(&packed);
        assert!(Cell::puts_packed(b"row", std::iter::empty())
            .unwrap()
            .is_empty());
    }

    #[test]
    fn puts_built_packed_keep_the_limits() {
        let long_row = vec![b'r'; crate::MAX_ROW_LEN + 1];
        let err = Cell::puts_packed(&long_row, [(&b"f"[..], &b"q"[..], 1, &b"v"[..])]);
        assert!(matches!(err, Err(TypesError::RowTooLong { .. })));
        let long_family = [b'f'; crate::MAX_FAMILY_LEN + 1];
        let err = Cell::puts_packed(b"r", [(&long_family[..], &b"q"[..], 1, &b"v"[..])]);
        assert!(matches!(err, Err(TypesError::FamilyTooLong { .. })));
    }
}
