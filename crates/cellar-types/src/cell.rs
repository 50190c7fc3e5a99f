//! `Cell` and `CellType`: one versioned value of one column of one row.

use crate::error::{Result, TypesError};
use bytes::Bytes;

use crate::key::KeyRef;

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
    #[inline]
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
    #[inline]
    pub fn is_delete(self) -> bool {
        (8..=14).contains(&self.code())
    }
}

/// One cell: coordinates, value, the sequence id (MVCC write number) and optional tags.
///
/// The key, value and tags live in one shared buffer (`key | value | [2-byte gap] tags`),
/// so that cloning a cell copies no bytes and cells decoded from a store-file block
/// share the block's buffer instead of owning copies.
///
/// Invariants (checked by every constructor): row ≤ 32767 bytes, family ≤ 127 bytes,
/// tags ≤ 32767 bytes.
#[derive(Clone)]
pub struct Cell {
    pub(crate) buf: Bytes,
    key_len: u32,
    value_len: u32,
    row_len: u16,
    family_len: u8,
    /// Bytes between the value and the tags (2 when the buffer keeps a tags length).
    tags_gap: u8,
    tags_len: u16,
    cell_type: CellType,
    timestamp: i64,
    seq_id: u64,
}

impl Cell {
    /// Builds a cell, enforcing the row and family limits.
    pub fn new(
        row: impl AsRef<[u8]>,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        timestamp: i64,
        cell_type: CellType,
        value: impl AsRef<[u8]>,
    ) -> Result<Cell> {
        let key = KeyRef {
            row: row.as_ref(),
            family: family.as_ref(),
            qualifier: qualifier.as_ref(),
            timestamp,
            type_code: cell_type.code(),
        };
        Cell::from_parts(&key, value.as_ref(), &[], 0)
    }

    /// Builds a cell owning a new buffer (`key | value | tags`), enforcing the type code
    /// and the row, family and tag limits.
    pub fn from_parts(key: &KeyRef<'_>, value: &[u8], tags: &[u8], seq_id: u64) -> Result<Cell> {
        let cell_type = CellType::from_code(key.type_code)?;
        check_lengths(key.row.len(), key.family.len(), tags.len())?;
        let mut buf = Vec::with_capacity(key.len() + value.len() + tags.len());
        key.write(&mut buf);
        buf.extend_from_slice(value);
        buf.extend_from_slice(tags);
        let parts = Parts {
            value_len: value.len(),
            tags_gap: 0,
            tags_len: tags.len(),
        };
        Ok(Cell::view(Bytes::from(buf), key, cell_type, parts, seq_id))
    }

    /// A cell over `buf`, which holds `key | value | [tags_gap bytes] tags` (checked by
    /// the callers).
    pub(crate) fn view(
        buf: Bytes,
        key: &KeyRef<'_>,
        cell_type: CellType,
        parts: Parts,
        seq_id: u64,
    ) -> Cell {
        Cell {
            buf,
            key_len: key.len() as u32,
            value_len: parts.value_len as u32,
            row_len: key.row.len() as u16,
            family_len: key.family.len() as u8,
            tags_gap: parts.tags_gap,
            tags_len: parts.tags_len as u16,
            cell_type,
            timestamp: key.timestamp,
            seq_id,
        }
    }

    /// A Put cell.
    pub fn put(
        row: impl AsRef<[u8]>,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        timestamp: i64,
        value: impl AsRef<[u8]>,
    ) -> Result<Cell> {
        Cell::new(row, family, qualifier, timestamp, CellType::Put, value)
    }

    /// Returns the cell with this sequence id.
    #[inline]
    pub fn with_seq_id(mut self, seq_id: u64) -> Cell {
        self.seq_id = seq_id;
        self
    }

    /// Returns the cell with these serialized tags.
    pub fn with_tags(self, tags: impl AsRef<[u8]>) -> Result<Cell> {
        Cell::from_parts(&self.key_ref(), self.value(), tags.as_ref(), self.seq_id)
    }

    /// Builds a cell from a flat serialized key (see [`KeyRef`]) and a value.
    pub fn from_key(key: &[u8], value: &[u8], seq_id: u64, tags: &[u8]) -> Result<Cell> {
        Cell::from_parts(&KeyRef::parse(key)?, value, tags, seq_id)
    }

    #[inline]
    pub fn row(&self) -> &[u8] {
        &self.buf[2..2 + self.row_len as usize]
    }
    #[inline]
    pub fn family(&self) -> &[u8] {
        let start = 3 + self.row_len as usize;
        &self.buf[start..start + self.family_len as usize]
    }
    #[inline]
    pub fn qualifier(&self) -> &[u8] {
        let start = 3 + self.row_len as usize + self.family_len as usize;
        &self.buf[start..self.key_len as usize - 9]
    }
    #[inline]
    pub fn timestamp(&self) -> i64 {
        self.timestamp
    }
    #[inline]
    pub fn cell_type(&self) -> CellType {
        self.cell_type
    }
    #[inline]
    pub fn value(&self) -> &[u8] {
        let start = self.key_len as usize;
        &self.buf[start..start + self.value_len as usize]
    }
    #[inline]
    pub fn seq_id(&self) -> u64 {
        self.seq_id
    }
    #[inline]
    pub fn tags(&self) -> &[u8] {
        let start = self.key_len as usize + self.value_len as usize + self.tags_gap as usize;
        &self.buf[start..start + self.tags_len as usize]
    }

    /// The flat key bytes (see [`KeyRef`]).
    #[inline]
    pub fn key(&self) -> &[u8] {
        &self.buf[..self.key_len as usize]
    }

    /// The key as a borrowed view.
    #[inline]
    pub fn key_ref(&self) -> KeyRef<'_> {
        KeyRef {
            row: self.row(),
            family: self.family(),
            qualifier: self.qualifier(),
            timestamp: self.timestamp,
            type_code: self.cell_type.code(),
        }
    }

    /// Length of the flat key: 2 + row + 1 + family + qualifier + 8 + 1.
    #[inline]
    pub fn key_len(&self) -> usize {
        self.key_len as usize
    }

    /// Appends the flat key to `out`.
    pub fn write_key(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.key());
    }

    /// The flat key as a new vector.
    pub fn key_bytes(&self) -> Vec<u8> {
        self.key().to_vec()
    }

    /// Bytes of memory this cell's buffer view covers (key, value and tags).
    #[inline]
    pub fn buffer_len(&self) -> usize {
        self.buf.len()
    }

    /// Serialized KeyValue size: 8 + key + value (+ 2 + tags when `with_tags`).
    #[inline]
    pub fn serialized_size(&self, with_tags: bool) -> usize {
        8 + self.key_len as usize
            + self.value_len as usize
            + if with_tags {
                2 + self.tags_len as usize
            } else {
                0
            }
    }

    /// Appends the KeyValue serialization (§1.1): key length, value length, key, value,
    /// and when `with_tags` the u16 tags length and the tags.
    #[inline]
    pub fn write_key_value(&self, out: &mut Vec<u8>, with_tags: bool) {
        out.extend_from_slice(&self.key_len.to_be_bytes());
        out.extend_from_slice(&self.value_len.to_be_bytes());
        out.extend_from_slice(&self.buf[..self.key_len as usize + self.value_len as usize]);
        if with_tags {
            out.extend_from_slice(&self.tags_len.to_be_bytes());
            out.extend_from_slice(self.tags());
        }
    }

    /// Parses one KeyValue from the front of `buf`; returns the cell (seq id 0) and the
    /// bytes consumed.
    pub fn read_key_value(buf: &[u8], with_tags: bool) -> Result<(Cell, usize)> {
        let (layout, end) = parse_key_value(buf, with_tags)?;
        let cell = Cell::from_key(
            &buf[8..layout.key_end],
            &buf[layout.key_end..layout.value_end],
            0,
            &buf[layout.tags_start..end],
        )?;
        Ok((cell, end))
    }

    /// Parses one KeyValue at `pos` of a shared buffer into a cell (seq id 0) that
    /// shares the buffer; returns it and the bytes consumed.
    pub fn read_key_value_shared(
        buf: &Bytes,
        pos: usize,
        with_tags: bool,
    ) -> Result<(Cell, usize)> {
        let slice = buf.get(pos..).unwrap_or_default();
        let (layout, end) = parse_key_value(slice, with_tags)?;
        let k = KeyRef::parse(&slice[8..layout.key_end])?;
        let cell_type = CellType::from_code(k.type_code)?;
        let parts = Parts {
            value_len: layout.value_end - layout.key_end,
            tags_gap: (layout.tags_start - layout.value_end) as u8,
            tags_len: end - layout.tags_start,
        };
        check_lengths(k.row.len(), k.family.len(), parts.tags_len)?;
        let view = buf.slice(pos + 8..pos + end);
        Ok((Cell::view(view, &k, cell_type, parts, 0), end))
    }
}

/// Lengths of a cell's buffer after its key.
pub(crate) struct Parts {
    pub(crate) value_len: usize,
    /// Bytes between the value and the tags (a tags length kept in the buffer).
    pub(crate) tags_gap: u8,
    pub(crate) tags_len: usize,
}

/// Offsets of one KeyValue's parts inside its serialization.
struct KeyValueLayout {
    key_end: usize,
    value_end: usize,
    tags_start: usize,
}

fn parse_key_value(buf: &[u8], with_tags: bool) -> Result<(KeyValueLayout, usize)> {
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
    let mut tags_start = value_end;
    if with_tags {
        if end + 2 > buf.len() {
            return Err(bad("tags length runs past the end of the buffer"));
        }
        let tags_len = u16::from_be_bytes([buf[end], buf[end + 1]]) as usize;
        end += 2;
        if end + tags_len > buf.len() {
            return Err(bad("tags run past the end of the buffer"));
        }
        tags_start = end;
        end += tags_len;
    }
    Ok((
        KeyValueLayout {
            key_end,
            value_end,
            tags_start,
        },
        end,
    ))
}

pub(crate) fn check_lengths(row: usize, family: usize, tags: usize) -> Result<()> {
    if row > MAX_ROW_LEN {
        return Err(TypesError::RowTooLong { len: row });
    }
    if family > MAX_FAMILY_LEN {
        return Err(TypesError::FamilyTooLong { len: family });
    }
    if tags > i16::MAX as usize {
        return Err(TypesError::TagsTooLong { len: tags });
    }
    Ok(())
}

impl std::fmt::Debug for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cell")
            .field("row", &crate::escape::to_string_binary(self.row()))
            .field("family", &crate::escape::to_string_binary(self.family()))
            .field(
                "qualifier",
                &crate::escape::to_string_binary(self.qualifier()),
            )
            .field("timestamp", &self.timestamp)
            .field("cell_type", &self.cell_type)
            .field("value", &crate::escape::to_string_binary(self.value()))
            .field("seq_id", &self.seq_id)
            .field("tags", &self.tags())
            .finish()
    }
}

impl PartialEq for Cell {
    fn eq(&self, other: &Cell) -> bool {
        self.seq_id == other.seq_id
            && self.key() == other.key()
            && self.value() == other.value()
            && self.tags() == other.tags()
    }
}

impl Eq for Cell {}

impl std::hash::Hash for Cell {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state);
        self.value().hash(state);
        self.tags().hash(state);
        self.seq_id.hash(state);
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
    fn shared_key_values_view_their_buffer() {
        let a = Cell::put("row", "fam", "qual", 9, "value").unwrap();
        let b = Cell::put("row2", "f", "", 3, "")
            .unwrap()
            .with_tags(vec![0, 2, 1, 9])
            .unwrap();
        for with_tags in [false, true] {
            let mut out = Vec::new();
            a.write_key_value(&mut out, with_tags);
            b.write_key_value(&mut out, with_tags);
            let buf = Bytes::from(out.clone());
            let (a2, used) = Cell::read_key_value_shared(&buf, 0, with_tags).unwrap();
            let (b2, used2) = Cell::read_key_value_shared(&buf, used, with_tags).unwrap();
            assert_eq!(used + used2, out.len());
            assert_eq!(a2, a);
            let b_expect = if with_tags {
                b.clone()
            } else {
                b.clone().with_tags(Vec::new()).unwrap()
            };
            assert_eq!(b2, b_expect);
            assert_eq!(b2.row(), b"row2");
            assert_eq!(b2.qualifier(), b"");
            // Re-serializing the view gives the same bytes.
            let mut again = Vec::new();
            a2.write_key_value(&mut again, with_tags);
            b2.write_key_value(&mut again, with_tags);
            assert_eq!(again, out);
            for cut in 0..out.len() {
                let short = Bytes::from(out[..cut].to_vec());
                let ok = Cell::read_key_value_shared(&short, 0, with_tags).is_ok();
                assert_eq!(ok, cut >= used, "cut {cut}");
            }
        }
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
