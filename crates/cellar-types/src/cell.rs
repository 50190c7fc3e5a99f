//! `Cell` and `CellType`: one versioned value of one column of one row.

use crate::error::{Result, TypesError};
use crate::key::{self, KeyRef};

/// The largest row key, in bytes (`Short.MAX_VALUE`).
pub const MAX_ROW_LEN: usize = i16::MAX as usize;
/// The largest family name, in bytes (a signed byte).
pub const MAX_FAMILY_LEN: usize = i8::MAX as usize;
/// "Stamp me with the server's time": HBase's `HConstants.LATEST_TIMESTAMP`.
pub const LATEST_TIMESTAMP: i64 = i64::MAX;

/// The type byte of a cell (`KeyValue.Type`). The codes are part of the file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CellType {
    /// Search sentinel only: sorts after every real type at equal coordinates.
    Minimum,
    Put,
    Delete,
    DeleteFamilyVersion,
    DeleteColumn,
    DeleteFamily,
    /// Search sentinel only: sorts before every real type at equal coordinates.
    Maximum,
}

impl CellType {
    /// The on-disk code.
    pub fn code(self) -> u8 {
        match self {
            CellType::Minimum => 0,
            CellType::Put => 4,
            CellType::Delete => 8,
            CellType::DeleteFamilyVersion => 10,
            CellType::DeleteColumn => 12,
            CellType::DeleteFamily => 14,
            CellType::Maximum => 255,
        }
    }

    /// Parses an on-disk code.
    pub fn from_code(code: u8) -> Result<CellType> {
        Ok(match code {
            0 => CellType::Minimum,
            4 => CellType::Put,
            8 => CellType::Delete,
            10 => CellType::DeleteFamilyVersion,
            12 => CellType::DeleteColumn,
            14 => CellType::DeleteFamily,
            255 => CellType::Maximum,
            _ => return Err(TypesError::UnknownType { code }),
        })
    }

    /// HBase's name, as printed by tools (`Put`, `DeleteColumn`, ...).
    pub fn name(self) -> &'static str {
        match self {
            CellType::Minimum => "Minimum",
            CellType::Put => "Put",
            CellType::Delete => "Delete",
            CellType::DeleteFamilyVersion => "DeleteFamilyVersion",
            CellType::DeleteColumn => "DeleteColumn",
            CellType::DeleteFamily => "DeleteFamily",
            CellType::Maximum => "Maximum",
        }
    }

    /// True for the four delete marker types (codes 8..=14).
    pub fn is_delete(self) -> bool {
        (8..=14).contains(&self.code())
    }
}

/// One cell: coordinates, value, the sequence id (MVCC write number) and optional tags.
///
/// Invariants (checked by every constructor): row ≤ 32767 bytes, family ≤ 127 bytes,
/// tags ≤ 32767 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cell {
    row: Vec<u8>,
    family: Vec<u8>,
    qualifier: Vec<u8>,
    timestamp: i64,
    cell_type: CellType,
    value: Vec<u8>,
    seq_id: u64,
    tags: Vec<u8>,
}

impl Cell {
    /// Builds a cell, enforcing the row, family and tag limits.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        row: impl Into<Vec<u8>>,
        family: impl Into<Vec<u8>>,
        qualifier: impl Into<Vec<u8>>,
        timestamp: i64,
        cell_type: CellType,
        value: impl Into<Vec<u8>>,
    ) -> Result<Cell> {
        let cell = Cell {
            row: row.into(),
            family: family.into(),
            qualifier: qualifier.into(),
            timestamp,
            cell_type,
            value: value.into(),
            seq_id: 0,
            tags: Vec::new(),
        };
        cell.validate()?;
        Ok(cell)
    }

    /// A Put cell.
    pub fn put(
        row: impl Into<Vec<u8>>,
        family: impl Into<Vec<u8>>,
        qualifier: impl Into<Vec<u8>>,
        timestamp: i64,
        value: impl Into<Vec<u8>>,
    ) -> Result<Cell> {
        Cell::new(row, family, qualifier, timestamp, CellType::Put, value)
    }

    fn validate(&self) -> Result<()> {
        if self.row.len() > MAX_ROW_LEN {
            return Err(TypesError::RowTooLong {
                len: self.row.len(),
            });
        }
        if self.family.len() > MAX_FAMILY_LEN {
            return Err(TypesError::FamilyTooLong {
                len: self.family.len(),
            });
        }
        if self.tags.len() > i16::MAX as usize {
            return Err(TypesError::TagsTooLong {
                len: self.tags.len(),
            });
        }
        Ok(())
    }

    /// Returns the cell with this sequence id.
    pub fn with_seq_id(mut self, seq_id: u64) -> Cell {
        self.seq_id = seq_id;
        self
    }

    /// Returns the cell with these serialized tags.
    pub fn with_tags(mut self, tags: impl Into<Vec<u8>>) -> Result<Cell> {
        self.tags = tags.into();
        self.validate()?;
        Ok(self)
    }

    /// Builds a cell from a flat serialized key (see [`KeyRef`]) and a value.
    pub fn from_key(key: &[u8], value: &[u8], seq_id: u64, tags: &[u8]) -> Result<Cell> {
        let k = KeyRef::parse(key)?;
        let cell = Cell {
            row: k.row.to_vec(),
            family: k.family.to_vec(),
            qualifier: k.qualifier.to_vec(),
            timestamp: k.timestamp,
            cell_type: CellType::from_code(k.type_code)?,
            value: value.to_vec(),
            seq_id,
            tags: tags.to_vec(),
        };
        cell.validate()?;
        Ok(cell)
    }

    pub fn row(&self) -> &[u8] {
        &self.row
    }
    pub fn family(&self) -> &[u8] {
        &self.family
    }
    pub fn qualifier(&self) -> &[u8] {
        &self.qualifier
    }
    pub fn timestamp(&self) -> i64 {
        self.timestamp
    }
    pub fn cell_type(&self) -> CellType {
        self.cell_type
    }
    pub fn value(&self) -> &[u8] {
        &self.value
    }
    pub fn seq_id(&self) -> u64 {
        self.seq_id
    }
    pub fn tags(&self) -> &[u8] {
        &self.tags
    }

    /// The key as a borrowed view.
    pub fn key_ref(&self) -> KeyRef<'_> {
        KeyRef {
            row: &self.row,
            family: &self.family,
            qualifier: &self.qualifier,
            timestamp: self.timestamp,
            type_code: self.cell_type.code(),
        }
    }

    /// Length of the flat key: 2 + row + 1 + family + qualifier + 8 + 1.
    pub fn key_len(&self) -> usize {
        key::key_len(self.row.len(), self.family.len(), self.qualifier.len())
    }

    /// Appends the flat key to `out`.
    pub fn write_key(&self, out: &mut Vec<u8>) {
        self.key_ref().write(out);
    }

    /// The flat key as a new vector.
    pub fn key_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.key_len());
        self.write_key(&mut out);
        out
    }

    /// Serialized KeyValue size: 8 + key + value (+ 2 + tags when `with_tags`).
    pub fn serialized_size(&self, with_tags: bool) -> usize {
        8 + self.key_len() + self.value.len() + if with_tags { 2 + self.tags.len() } else { 0 }
    }

    /// Appends the KeyValue serialization (§1.1): key length, value length, key, value,
    /// and when `with_tags` the u16 tags length and the tags.
    pub fn write_key_value(&self, out: &mut Vec<u8>, with_tags: bool) {
        out.extend_from_slice(&(self.key_len() as u32).to_be_bytes());
        out.extend_from_slice(&(self.value.len() as u32).to_be_bytes());
        self.write_key(out);
        out.extend_from_slice(&self.value);
        if with_tags {
            out.extend_from_slice(&(self.tags.len() as u16).to_be_bytes());
            out.extend_from_slice(&self.tags);
        }
    }

    /// Parses one KeyValue from the front of `buf`; returns the cell (seq id 0) and the
    /// bytes consumed.
    pub fn read_key_value(buf: &[u8], with_tags: bool) -> Result<(Cell, usize)> {
        let bad = |reason| TypesError::MalformedKeyValue { reason };
        if buf.len() < 8 {
            return Err(bad("shorter than its two length fields"));
        }
        let key_len = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
        let value_len = u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]]) as usize;
        let key_end = 8usize
            .checked_add(key_len)
            .ok_or(bad("key length overflows"))?;
        let value_end = key_end
            .checked_add(value_len)
            .ok_or(bad("value length overflows"))?;
        if value_end > buf.len() {
            return Err(bad("key or value runs past the end of the buffer"));
        }
        let mut end = value_end;
        let mut tags: &[u8] = &[];
        if with_tags {
            if end + 2 > buf.len() {
                return Err(bad("tags length runs past the end of the buffer"));
            }
            let tags_len = u16::from_be_bytes([buf[end], buf[end + 1]]) as usize;
            end += 2;
            if end + tags_len > buf.len() {
                return Err(bad("tags run past the end of the buffer"));
            }
            tags = &buf[end..end + tags_len];
            end += tags_len;
        }
        let cell = Cell::from_key(&buf[8..key_end], &buf[key_end..value_end], 0, tags)?;
        Ok((cell, end))
    }
}

impl PartialOrd for Cell {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Cell {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        crate::comparator::compare_cells(self, other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_codes_round_trip() {
        for code in 0..=255u8 {
            if let Ok(t) = CellType::from_code(code) {
                assert_eq!(t.code(), code);
            }
        }
        assert_eq!(CellType::Put.code(), 4);
        assert_eq!(CellType::DeleteFamily.code(), 14);
        assert!(CellType::DeleteColumn.is_delete());
        assert!(!CellType::Put.is_delete());
        assert!(CellType::from_code(5).is_err());
    }

    #[test]
    fn limits_are_enforced() {
        assert!(Cell::put(vec![0u8; MAX_ROW_LEN], "f", "q", 1, "v").is_ok());
        assert_eq!(
            Cell::put(vec![0u8; MAX_ROW_LEN + 1], "f", "q", 1, "v"),
            Err(TypesError::RowTooLong { len: 32768 })
        );
        assert!(Cell::put("r", vec![b'f'; 127], "q", 1, "v").is_ok());
        assert_eq!(
            Cell::put("r", vec![b'f'; 128], "q", 1, "v"),
            Err(TypesError::FamilyTooLong { len: 128 })
        );
    }

    #[test]
    fn key_value_layout_is_hbase_s() {
        let c = Cell::put("row", "fam", "qual", 0x0102030405060708, "value").unwrap();
        let mut out = Vec::new();
        c.write_key_value(&mut out, false);
        let mut expected = Vec::new();
        expected.extend_from_slice(&(2 + 3 + 1 + 3 + 4 + 8 + 1u32).to_be_bytes());
        expected.extend_from_slice(&5u32.to_be_bytes());
        expected.extend_from_slice(&[0, 3]);
        expected.extend_from_slice(b"row");
        expected.push(3);
        expected.extend_from_slice(b"famqual");
        expected.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        expected.push(4);
        expected.extend_from_slice(b"value");
        assert_eq!(out, expected);
        assert_eq!(out.len(), c.serialized_size(false));
        let (back, used) = Cell::read_key_value(&out, false).unwrap();
        assert_eq!(back, c);
        assert_eq!(used, out.len());
    }

    #[test]
    fn key_value_with_tags_round_trips() {
        let c = Cell::put("r", "f", "", 7, "")
            .unwrap()
            .with_tags(vec![0, 2, 1, 9])
            .unwrap();
        let mut out = Vec::new();
        c.write_key_value(&mut out, true);
        assert_eq!(out.len(), c.serialized_size(true));
        let (back, used) = Cell::read_key_value(&out, true).unwrap();
        assert_eq!(back, c);
        assert_eq!(used, out.len());
    }

    #[test]
    fn truncated_key_values_are_errors() {
        let c = Cell::put("row", "fam", "qual", 1, "value").unwrap();
        let mut out = Vec::new();
        c.write_key_value(&mut out, true);
        for cut in 0..out.len() {
            assert!(
                Cell::read_key_value(&out[..cut], true).is_err(),
                "cut {cut}"
            );
        }
    }
}
