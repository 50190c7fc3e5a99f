//! The cells of an HBase WAL entry, as HBase's `WALCellCodec` writes them: each a
//! 4-byte length and a KeyValue with its tags; or, in a compressed WAL, lengths as
//! varints and row, family, qualifier (and tags) through LRU dictionaries that live as
//! long as the file, so a name is written in full once and then by its index.

use cellar_types::{Cell, CellType, KeyRef, LruDictionary, NOT_IN_DICTIONARY};

use super::proto::ProtoError;

type Result<T> = std::result::Result<T, ProtoError>;

fn malformed(reason: impl Into<String>) -> ProtoError {
    ProtoError::Malformed(reason.into())
}

/// A cursor over the file's bytes; running out is a torn tail.
pub struct Input<'a> {
    pub buf: &'a [u8],
    pub pos: usize,
}

impl<'a> Input<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or(ProtoError::Truncated)?;
        let b = self.buf.get(self.pos..end).ok_or(ProtoError::Truncated)?;
        self.pos = end;
        Ok(b)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn i64(&mut self) -> Result<i64> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }

    /// `StreamUtils.readRawVarint32`: a protobuf varint of at most 5 bytes.
    fn varint32(&mut self) -> Result<usize> {
        let mut v = 0u64;
        for i in 0..5 {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return usize::try_from(v as u32).map_err(|_| malformed("length overflows"));
            }
        }
        Err(malformed("varint longer than 5 bytes"))
    }
}

/// The dictionaries of a compressed WAL file (HBase's `CompressionContext`).
pub struct Dictionaries {
    pub region: LruDictionary,
    pub table: LruDictionary,
    pub row: LruDictionary,
    pub family: LruDictionary,
    pub qualifier: LruDictionary,
    /// Present when the header says tags are compressed too.
    pub tags: Option<LruDictionary>,
}

impl Dictionaries {
    /// `recovered_edits`: HBase keeps one region and one table name in a recovered-edits
    /// file's dictionaries, 127 elsewhere.
    pub fn new(tag_compression: bool, recovered_edits: bool) -> Dictionaries {
        let names = if recovered_edits { 1 } else { 127 };
        Dictionaries {
            region: LruDictionary::new(names),
            table: LruDictionary::new(names),
            row: LruDictionary::new(i16::MAX as u16),
            family: LruDictionary::new(127),
            qualifier: LruDictionary::new(127),
            tags: tag_compression.then(|| LruDictionary::new(i16::MAX as u16)),
        }
    }
}

/// One dictionary-compressed element: 0xFF, a varint length and the bytes (then added
/// to the dictionary), or a 2-byte index.
fn read_element(input: &mut Input<'_>, dict: &mut LruDictionary) -> Result<Vec<u8>> {
    let status = input.u8()?;
    if status == NOT_IN_DICTIONARY {
        let n = input.varint32()?;
        let data = input.take(n)?.to_vec();
        dict.add(&data);
        Ok(data)
    } else {
        let low = input.u8()?;
        if status & 0x80 != 0 {
            return Err(malformed("negative dictionary index"));
        }
        let idx = u16::from_be_bytes([status, low]);
        dict.get(idx)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| malformed(format!("no dictionary entry at index {idx}")))
    }
}

/// A name in a compressed `WALKey` (region, table, scope family): the same encoding
/// inside a protobuf field.
pub fn uncompress_name(bytes: &[u8], dict: &mut LruDictionary) -> Result<Vec<u8>> {
    let mut input = Input { buf: bytes, pos: 0 };
    let name = read_element(&mut input, dict).map_err(|e| match e {
        ProtoError::Truncated => malformed("compressed name shorter than its encoding"),
        m => m,
    })?;
    if input.pos != bytes.len() {
        return Err(malformed("bytes after a compressed name"));
    }
    Ok(name)
}

/// One cell of an uncompressed file (`WALCellCodec.EnsureKvEncoder`).
pub fn read_plain_cell(input: &mut Input<'_>) -> Result<Cell> {
    let total = input.u32()? as usize;
    let kv = input.take(total)?;
    if kv.len() < 8 {
        return Err(malformed("KeyValue shorter than its two lengths"));
    }
    let key_len = u32::from_be_bytes([kv[0], kv[1], kv[2], kv[3]]) as usize;
    let value_len = u32::from_be_bytes([kv[4], kv[5], kv[6], kv[7]]) as usize;
    let value_end = 8usize
        .checked_add(key_len)
        .and_then(|n| n.checked_add(value_len))
        .filter(|n| *n <= kv.len())
        .ok_or_else(|| malformed("KeyValue lengths run past its length"))?;
    let key = &kv[8..8 + key_len];
    let value = &kv[8 + key_len..value_end];
    let tags = match kv.len() - value_end {
        0 => &[][..],
        1 => return Err(malformed("a single byte after the value")),
        _ => {
            let n = usize::from(u16::from_be_bytes([kv[value_end], kv[value_end + 1]]));
            if value_end + 2 + n != kv.len() {
                return Err(malformed(
                    "tags length disagrees with the KeyValue's length",
                ));
            }
            &kv[value_end + 2..]
        }
    };
    Cell::from_key(key, value, 0, tags).map_err(|e| malformed(e.to_string()))
}

/// One cell of a compressed file (`WALCellCodec.CompressedKvEncoder`).
pub fn read_compressed_cell(
    input: &mut Input<'_>,
    dicts: &mut Dictionaries,
    values: &mut Option<super::values::ValueDecompressor>,
) -> Result<Cell> {
    let key_len = input.varint32()?;
    let value_len = input.varint32()?;
    let tags_len = input.varint32()?;
    let row = read_element(input, &mut dicts.row)?;
    if row.len() > i16::MAX as usize {
        return Err(malformed("row longer than 32767 bytes"));
    }
    let family = read_element(input, &mut dicts.family)?;
    if family.len() > 127 {
        return Err(malformed("family longer than 127 bytes"));
    }
    let qualifier = read_element(input, &mut dicts.qualifier)?;
    let expected = 2 + row.len() + 1 + family.len() + qualifier.len() + 8 + 1;
    if expected != key_len {
        return Err(malformed(format!(
            "key length {key_len} disagrees with its parts ({expected})"
        )));
    }
    let timestamp = input.i64()?;
    let type_code = input.u8()?;
    let cell_type = CellType::from_code(type_code).map_err(|e| malformed(e.to_string()))?;
    let value = match values {
        Some(v) => {
            let n = input.varint32()?;
            v.decompress(input.take(n)?, value_len)?
        }
        None => input.take(value_len)?.to_vec(),
    };
    let tags = if tags_len == 0 {
        Vec::new()
    } else {
        match &mut dicts.tags {
            Some(dict) => read_tags(input, dict, tags_len)?,
            None => input.take(tags_len)?.to_vec(),
        }
    };
    let key = KeyRef {
        row: &row,
        family: &family,
        qualifier: &qualifier,
        timestamp,
        type_code: cell_type.code(),
    };
    Cell::from_parts(&key, &value, &tags, 0).map_err(|e| malformed(e.to_string()))
}

/// `TagCompressionContext.uncompressTags`: `len` bytes of serialized tags, each tag's
/// body written in full or by index.
fn read_tags(input: &mut Input<'_>, dict: &mut LruDictionary, len: usize) -> Result<Vec<u8>> {
    if len > usize::from(u16::MAX) {
        return Err(malformed("tags longer than 65535 bytes"));
    }
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        let tag = read_element(input, dict)?;
        let n = u16::try_from(tag.len()).map_err(|_| malformed("tag longer than 65535 bytes"))?;
        out.extend_from_slice(&n.to_be_bytes());
        out.extend_from_slice(&tag);
    }
    if out.len() != len {
        return Err(malformed("compressed tags longer than their length"));
    }
    Ok(out)
}
