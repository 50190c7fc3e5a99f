//! The two protobuf messages of an HBase WAL file, decoded by hand (`WALHeader` and
//! `WALKey` of HBase's `WAL.proto`, field numbers as there): a WAL file is HBase's format,
//! so reading it is the product's own work, and these messages are small.

/// Why a message could not be decoded: it ran out of bytes (a torn tail, when it is
/// the file's last) or it is malformed.
#[derive(Debug, PartialEq, Eq)]
pub enum ProtoError {
    Truncated,
    Malformed(String),
}

type Result<T> = std::result::Result<T, ProtoError>;

/// A cursor over protobuf bytes.
pub struct ProtoReader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> ProtoReader<'a> {
    pub fn new(buf: &'a [u8]) -> ProtoReader<'a> {
        ProtoReader { buf, pos: 0 }
    }

    pub fn pos(&self) -> usize {
        self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    pub fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = *self.buf.get(self.pos).ok_or(ProtoError::Truncated)?;
            self.pos += 1;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(ProtoError::Malformed("varint longer than 10 bytes".into()))
    }

    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or(ProtoError::Truncated)?;
        let b = self.buf.get(self.pos..end).ok_or(ProtoError::Truncated)?;
        self.pos = end;
        Ok(b)
    }

    /// A length-prefixed field or message.
    pub fn delimited(&mut self) -> Result<&'a [u8]> {
        let n = usize::try_from(self.varint()?)
            .map_err(|_| ProtoError::Malformed("length overflows".into()))?;
        self.bytes(n)
    }

    /// The next field's number and wire type.
    fn key(&mut self) -> Result<(u64, u8)> {
        let k = self.varint()?;
        Ok((k >> 3, (k & 7) as u8))
    }

    fn skip(&mut self, wire: u8) -> Result<()> {
        match wire {
            0 => self.varint().map(|_| ()),
            1 => self.bytes(8).map(|_| ()),
            2 => self.delimited().map(|_| ()),
            5 => self.bytes(4).map(|_| ()),
            w => Err(ProtoError::Malformed(format!("unsupported wire type {w}"))),
        }
    }
}

/// Inside a complete message, running out of bytes is malformation, not a torn tail.
fn inner(e: ProtoError) -> ProtoError {
    match e {
        ProtoError::Truncated => ProtoError::Malformed("field runs past its message".into()),
        m => m,
    }
}

/// `WALHeader`: how the file's cells are written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WalHeader {
    pub has_compression: bool,
    pub encrypted: bool,
    pub has_tag_compression: bool,
    pub writer_class: Option<String>,
    pub cell_codec_class: Option<String>,
    pub has_value_compression: bool,
    /// The ordinal of HBase's `Compression.Algorithm` (LZO 0, GZ 1, NONE 2, SNAPPY 3,
    /// LZ4 4, BZIP2 5, ZSTD 6, ...).
    pub value_compression_algorithm: Option<u32>,
}

impl WalHeader {
    pub fn decode(msg: &[u8]) -> Result<WalHeader> {
        let mut h = WalHeader::default();
        let mut r = ProtoReader::new(msg);
        while !r.is_empty() {
            let (field, wire) = r.key().map_err(inner)?;
            match (field, wire) {
                (1, 0) => h.has_compression = r.varint().map_err(inner)? != 0,
                (2, 2) => h.encrypted = !r.delimited().map_err(inner)?.is_empty(),
                (3, 0) => h.has_tag_compression = r.varint().map_err(inner)? != 0,
                (4, 2) => h.writer_class = Some(string(r.delimited().map_err(inner)?)?),
                (5, 2) => h.cell_codec_class = Some(string(r.delimited().map_err(inner)?)?),
                (6, 0) => h.has_value_compression = r.varint().map_err(inner)? != 0,
                (7, 0) => {
                    let v = r.varint().map_err(inner)?;
                    h.value_compression_algorithm = Some(u32::try_from(v).map_err(|_| {
                        ProtoError::Malformed("value compression algorithm overflows".into())
                    })?);
                }
                (_, w) => r.skip(w).map_err(inner)?,
            }
        }
        Ok(h)
    }
}

/// `WALKey` as written: names possibly dictionary-compressed (decoded by the caller).
#[derive(Debug, Clone, Default)]
pub struct RawWalKey<'a> {
    pub encoded_region_name: Option<&'a [u8]>,
    pub table_name: Option<&'a [u8]>,
    pub log_sequence_number: Option<u64>,
    pub write_time: Option<u64>,
    /// (most significant bits, least significant bits); the deprecated single
    /// `cluster_id` first when present.
    pub cluster_ids: Vec<(u64, u64)>,
    /// (family as written, scope type).
    pub scopes: Vec<(&'a [u8], u32)>,
    pub following_kv_count: u32,
    pub nonce_group: u64,
    pub nonce: u64,
    pub orig_sequence_number: Option<u64>,
    pub extended_attributes: Vec<(String, Vec<u8>)>,
}

impl<'a> RawWalKey<'a> {
    pub fn decode(msg: &'a [u8]) -> Result<RawWalKey<'a>> {
        let mut k = RawWalKey::default();
        let mut deprecated_cluster = None;
        let mut r = ProtoReader::new(msg);
        while !r.is_empty() {
            let (field, wire) = r.key().map_err(inner)?;
            match (field, wire) {
                (1, 2) => k.encoded_region_name = Some(r.delimited().map_err(inner)?),
                (2, 2) => k.table_name = Some(r.delimited().map_err(inner)?),
                (3, 0) => k.log_sequence_number = Some(r.varint().map_err(inner)?),
                (4, 0) => k.write_time = Some(r.varint().map_err(inner)?),
                (5, 2) => deprecated_cluster = Some(uuid(r.delimited().map_err(inner)?)?),
                (6, 2) => k.scopes.push(scope(r.delimited().map_err(inner)?)?),
                (7, 0) => {
                    k.following_kv_count = u32::try_from(r.varint().map_err(inner)?)
                        .map_err(|_| ProtoError::Malformed("cell count overflows".into()))?
                }
                (8, 2) => k.cluster_ids.push(uuid(r.delimited().map_err(inner)?)?),
                (9, 0) => k.nonce_group = r.varint().map_err(inner)?,
                (10, 0) => k.nonce = r.varint().map_err(inner)?,
                (11, 0) => k.orig_sequence_number = Some(r.varint().map_err(inner)?),
                (12, 2) => k
                    .extended_attributes
                    .push(attribute(r.delimited().map_err(inner)?)?),
                (_, w) => r.skip(w).map_err(inner)?,
            }
        }
        if let Some(c) = deprecated_cluster {
            k.cluster_ids.insert(0, c);
        }
        Ok(k)
    }
}

fn string(b: &[u8]) -> Result<String> {
    String::from_utf8(b.to_vec()).map_err(|_| ProtoError::Malformed("string is not UTF-8".into()))
}

/// HBase's `UUID` message: least significant bits (1), most significant bits (2).
fn uuid(msg: &[u8]) -> Result<(u64, u64)> {
    let (mut lsb, mut msb) = (0, 0);
    let mut r = ProtoReader::new(msg);
    while !r.is_empty() {
        let (field, wire) = r.key().map_err(inner)?;
        match (field, wire) {
            (1, 0) => lsb = r.varint().map_err(inner)?,
            (2, 0) => msb = r.varint().map_err(inner)?,
            (_, w) => r.skip(w).map_err(inner)?,
        }
    }
    Ok((msb, lsb))
}

fn scope(msg: &[u8]) -> Result<(&[u8], u32)> {
    let (mut family, mut kind) = (&[][..], 0);
    let mut r = ProtoReader::new(msg);
    while !r.is_empty() {
        let (field, wire) = r.key().map_err(inner)?;
        match (field, wire) {
            (1, 2) => family = r.delimited().map_err(inner)?,
            (2, 0) => kind = r.varint().map_err(inner)? as u32,
            (_, w) => r.skip(w).map_err(inner)?,
        }
    }
    Ok((family, kind))
}

fn attribute(msg: &[u8]) -> Result<(String, Vec<u8>)> {
    let (mut key, mut value) = (String::new(), Vec::new());
    let mut r = ProtoReader::new(msg);
    while !r.is_empty() {
        let (field, wire) = r.key().map_err(inner)?;
        match (field, wire) {
            (1, 2) => key = string(r.delimited().map_err(inner)?)?,
            (2, 2) => value = r.delimited().map_err(inner)?.to_vec(),
            (_, w) => r.skip(w).map_err(inner)?,
        }
    }
    Ok((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_with_every_field_decodes_and_unknown_fields_are_skipped() {
        let mut m = vec![
            0x0a, 2, b'r', b'1', 0x12, 1, b't', 0x18, 7, 0x20, 0x80, 0x01,
        ];
        m.extend_from_slice(&[0x32, 5, 0x0a, 1, b'f', 0x10, 1]); // scope f:1
        m.extend_from_slice(&[0x38, 3]); // three cells
        m.extend_from_slice(&[0x42, 4, 0x08, 2, 0x10, 1]); // cluster (1, 2)
        m.extend_from_slice(&[0x48, 5, 0x50, 6, 0x58, 9]);
        m.extend_from_slice(&[0xa8, 0x01, 1]); // unknown field 21
        let k = RawWalKey::decode(&m).unwrap();
        assert_eq!(k.encoded_region_name, Some(&b"r1"[..]));
        assert_eq!(k.table_name, Some(&b"t"[..]));
        assert_eq!((k.log_sequence_number, k.write_time), (Some(7), Some(128)));
        assert_eq!(k.scopes, vec![(&b"f"[..], 1)]);
        assert_eq!(k.following_kv_count, 3);
        assert_eq!(k.cluster_ids, vec![(1, 2)]);
        assert_eq!(
            (k.nonce_group, k.nonce, k.orig_sequence_number),
            (5, 6, Some(9))
        );
    }

    #[test]
    fn a_field_past_its_message_is_malformed_not_torn() {
        assert!(matches!(
            RawWalKey::decode(&[0x0a, 9, b'r']),
            Err(ProtoError::Malformed(_))
        ));
        let mut r = ProtoReader::new(&[0x85]);
        assert_eq!(r.delimited(), Err(ProtoError::Truncated));
    }
}
