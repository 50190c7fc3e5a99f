//! The fixed file trailer (§3.7): `TRABLK"$`, a length-delimited `FileTrailerProto`,
//! zero padding to 4096 bytes, and the version int `(minor << 24) | major`.

use cellar_io::ReadableFile;

use crate::block::BlockType;
use crate::bytes::{put_pb_varint, Reader};
use crate::error::{HFileError, Result};

/// Size of a v3 trailer.
pub const TRAILER_SIZE: usize = 4096;
/// Versions written by this crate.
pub const MAJOR_VERSION: u32 = 3;
pub const MINOR_VERSION: u32 = 3;
/// Marker of Cellar's trailer checksum, kept in the trailer's zero padding (HBase reads
/// the protobuf and ignores the padding, so the file stays an HBase file).
const CHECKSUM_MARKER: &[u8; 4] = b"CLC1";
const CHECKSUM_AT: usize = TRAILER_SIZE - 12;
/// Comparators whose order is HBase's KeyValue order: the names HBase 2 maps to
/// `CellComparatorImpl` in `FixedFileTrailer.getComparatorClass` (HBase 1's legacy
/// `KeyValue$KeyComparator` among them), and others that sort the same way. An absent
/// name means HBase's default, the cell comparator.
const KV_ORDER_COMPARATORS: [&str; 7] = [
    KV_COMPARATOR,
    "org.apache.hadoop.hbase.KeyValue$KeyComparator",
    "org.apache.hadoop.hbase.CellComparator",
    "org.apache.hadoop.hbase.CellComparatorImpl",
    "org.apache.hadoop.hbase.InnerStoreCellComparator",
    "org.apache.hudi.io.storage.HoodieHBaseKVComparator",
    "",
];
/// The names HBase maps to the `hbase:meta` comparator (rows compared by their
/// comma-separated parts): a different order, not served here.
const META_COMPARATORS: [&str; 5] = [
    "org.apache.hadoop.hbase.KeyValue$MetaComparator",
    "org.apache.hadoop.hbase.KeyValue$MetaKeyComparator",
    "org.apache.hadoop.hbase.CellComparator$MetaCellComparator",
    "org.apache.hadoop.hbase.CellComparatorImpl$MetaCellComparator",
    "org.apache.hadoop.hbase.MetaCellComparator",
];

/// The simple class name HBase 2 prints for a comparator named in a file (its
/// `createComparator` mapping; raw-bytes comparators print as `ByteArrayComparator`).
pub fn comparator_simple_name(name: &str) -> String {
    if KV_ORDER_COMPARATORS[..5].contains(&name) {
        return "CellComparatorImpl".into();
    }
    if META_COMPARATORS.contains(&name) {
        return "MetaCellComparator".into();
    }
    match name {
        ""
        | "org.apache.hadoop.hbase.KeyValue$RawBytesComparator"
        | "org.apache.hadoop.hbase.util.Bytes$ByteArrayComparator" => "ByteArrayComparator".into(),
        other => other.rsplit(['.', '$']).next().unwrap_or(other).to_string(),
    }
}
/// The comparator name HBase writes for user tables.
pub const KV_COMPARATOR: &str = "org.apache.hadoop.hbase.KeyValue$KVComparator";

/// The decoded trailer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trailer {
    pub file_info_offset: u64,
    pub load_on_open_offset: u64,
    pub uncompressed_data_index_size: u64,
    pub total_uncompressed_bytes: u64,
    pub data_index_count: u32,
    pub meta_index_count: u32,
    pub entry_count: u64,
    pub num_data_index_levels: u32,
    pub first_data_block_offset: u64,
    pub last_data_block_offset: u64,
    pub comparator_class_name: String,
    pub compression_codec: u32,
    pub encryption_key: Option<Vec<u8>>,
    pub major_version: u32,
    pub minor_version: u32,
}

impl Trailer {
    /// Serializes the trailer to exactly [`TRAILER_SIZE`] bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut msg = Vec::new();
        let mut varint = |field: u64, v: u64| {
            put_pb_varint(&mut msg, field << 3);
            put_pb_varint(&mut msg, v);
        };
        varint(1, self.file_info_offset);
        varint(2, self.load_on_open_offset);
        varint(3, self.uncompressed_data_index_size);
        varint(4, self.total_uncompressed_bytes);
        varint(5, self.data_index_count as u64);
        varint(6, self.meta_index_count as u64);
        varint(7, self.entry_count);
        varint(8, self.num_data_index_levels as u64);
        varint(9, self.first_data_block_offset);
        varint(10, self.last_data_block_offset);
        put_pb_varint(&mut msg, (11 << 3) | 2);
        put_pb_varint(&mut msg, self.comparator_class_name.len() as u64);
        msg.extend_from_slice(self.comparator_class_name.as_bytes());
        put_pb_varint(&mut msg, 12 << 3);
        put_pb_varint(&mut msg, self.compression_codec as u64);
        if let Some(key) = &self.encryption_key {
            put_pb_varint(&mut msg, (13 << 3) | 2);
            put_pb_varint(&mut msg, key.len() as u64);
            msg.extend_from_slice(key);
        }
        let mut out = Vec::with_capacity(TRAILER_SIZE);
        out.extend_from_slice(BlockType::Trailer.magic());
        put_pb_varint(&mut out, msg.len() as u64);
        out.extend_from_slice(&msg);
        out.resize(CHECKSUM_AT, 0);
        let version = (self.minor_version << 24) | (self.major_version & 0x00ff_ffff);
        let crc = crc32c::crc32c_append(crc32c::crc32c(&out), &version.to_be_bytes());
        out.extend_from_slice(CHECKSUM_MARKER);
        out.extend_from_slice(&crc.to_be_bytes());
        out.extend_from_slice(&version.to_be_bytes());
        out
    }

    /// Reads the trailer from the end of a file.
    pub fn read(file: &dyn ReadableFile) -> Result<Trailer> {
        let len = file.len();
        if len < 4 {
            return Err(HFileError::corrupt(
                0,
                format!("file of {len} bytes is too short to be a store file"),
            ));
        }
        let mut v = [0u8; 4];
        file.read_at(len - 4, &mut v)?;
        let version = u32::from_be_bytes(v);
        let major = version & 0x00ff_ffff;
        let minor = version >> 24;
        if major != 3 {
            return Err(if major == 2 || major == 1 {
                HFileError::Unsupported {
                    what: format!("HFile version {major}.{minor} (only v3 is read)"),
                }
            } else {
                HFileError::corrupt(
                    len - 4,
                    format!("not a store file: version field {version:#010x}"),
                )
            });
        }
        if len < TRAILER_SIZE as u64 {
            return Err(HFileError::corrupt(
                0,
                "file shorter than its 4096-byte trailer",
            ));
        }
        let start = len - TRAILER_SIZE as u64;
        let mut buf = vec![0u8; TRAILER_SIZE - 4];
        file.read_at(start, &mut buf)?;
        if &buf[..8] != BlockType::Trailer.magic() {
            return Err(HFileError::corrupt(start, "trailer magic missing"));
        }
        let mut r = Reader::new(&buf[8..], start + 8);
        let msg_len = usize::try_from(r.pb_varint()?)
            .map_err(|_| HFileError::corrupt(start, "trailer length overflows"))?;
        let msg = r.bytes(msg_len)?;
        let proto_end = 8 + r.pos();
        if &buf[CHECKSUM_AT..CHECKSUM_AT + 4] == CHECKSUM_MARKER {
            let stored = u32::from_be_bytes([
                buf[CHECKSUM_AT + 4],
                buf[CHECKSUM_AT + 5],
                buf[CHECKSUM_AT + 6],
                buf[CHECKSUM_AT + 7],
            ]);
            let computed = crc32c::crc32c_append(crc32c::crc32c(&buf[..CHECKSUM_AT]), &v);
            if stored != computed {
                return Err(HFileError::Checksum {
                    offset: start,
                    chunk: 0,
                    stored,
                    computed,
                });
            }
        }
        let padding_end = if &buf[CHECKSUM_AT..CHECKSUM_AT + 4] == CHECKSUM_MARKER {
            CHECKSUM_AT
        } else {
            buf.len()
        };
        if proto_end > padding_end || buf[proto_end..padding_end].iter().any(|b| *b != 0) {
            return Err(HFileError::corrupt(start, "trailer padding is not zero"));
        }
        let mut t = Trailer {
            major_version: major,
            minor_version: minor,
            compression_codec: 2,
            ..Trailer::default()
        };
        let mut r = Reader::new(msg, start + 8);
        while !r.is_empty() {
            let tag = r.pb_varint()?;
            let (field, wire) = (tag >> 3, tag & 7);
            match wire {
                0 => {
                    let v = r.pb_varint()?;
                    let v32 = || {
                        u32::try_from(v).map_err(|_| {
                            HFileError::corrupt(start, format!("trailer field {field} overflows"))
                        })
                    };
                    match field {
                        1 => t.file_info_offset = v,
                        2 => t.load_on_open_offset = v,
                        3 => t.uncompressed_data_index_size = v,
                        4 => t.total_uncompressed_bytes = v,
                        5 => t.data_index_count = v32()?,
                        6 => t.meta_index_count = v32()?,
                        7 => t.entry_count = v,
                        8 => t.num_data_index_levels = v32()?,
                        9 => t.first_data_block_offset = v,
                        10 => t.last_data_block_offset = v,
                        12 => t.compression_codec = v32()?,
                        _ => {}
                    }
                }
                2 => {
                    let n = usize::try_from(r.pb_varint()?).map_err(|_| {
                        HFileError::corrupt(start, "trailer field length overflows")
                    })?;
                    let bytes = r.bytes(n)?;
                    match field {
                        11 => t.comparator_class_name = String::from_utf8_lossy(bytes).into_owned(),
                        13 => t.encryption_key = Some(bytes.to_vec()),
                        _ => {}
                    }
                }
                1 => {
                    r.bytes(8)?;
                }
                5 => {
                    r.bytes(4)?;
                }
                _ => {
                    return Err(HFileError::corrupt(
                        start,
                        format!("bad protobuf wire type {wire} in trailer"),
                    ))
                }
            }
        }
        let name = t.comparator_class_name.as_str();
        if META_COMPARATORS.contains(&name) {
            return Err(HFileError::Unsupported {
                what: format!("comparator {name:?} (an hbase:meta store file)"),
            });
        }
        if !KV_ORDER_COMPARATORS.contains(&name) {
            return Err(HFileError::Unsupported {
                what: format!("comparator {name:?}"),
            });
        }
        let blocks_end = start;
        if t.load_on_open_offset > blocks_end || t.file_info_offset > blocks_end {
            return Err(HFileError::corrupt(
                start,
                "trailer offsets point past the trailer",
            ));
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cellar_io::{FileSystem, MemoryFs};
    use std::path::Path;

    /// The names HBase 2's `hfile -m` prints for the comparators files name.
    #[test]
    fn comparator_names_as_hbase_prints_them() {
        for (name, simple) in [
            ("", "ByteArrayComparator"),
            (
                "org.apache.hadoop.hbase.KeyValue$RawBytesComparator",
                "ByteArrayComparator",
            ),
            (
                "org.apache.hadoop.hbase.CellComparatorImpl",
                "CellComparatorImpl",
            ),
            (
                "org.apache.hadoop.hbase.KeyValue$KVComparator",
                "CellComparatorImpl",
            ),
            (
                "org.apache.hadoop.hbase.KeyValue$KeyComparator",
                "CellComparatorImpl",
            ),
            (
                "org.apache.hadoop.hbase.KeyValue$MetaComparator",
                "MetaCellComparator",
            ),
            (
                "org.apache.hudi.io.storage.HoodieHBaseKVComparator",
                "HoodieHBaseKVComparator",
            ),
        ] {
            assert_eq!(comparator_simple_name(name), simple, "{name}");
        }
    }

    #[test]
    fn round_trips_through_a_file() {
        let t = Trailer {
            file_info_offset: 1234,
            load_on_open_offset: 1000,
            uncompressed_data_index_size: 77,
            total_uncompressed_bytes: 5000,
            data_index_count: 3,
            meta_index_count: 1,
            entry_count: 42,
            num_data_index_levels: 2,
            first_data_block_offset: 0,
            last_data_block_offset: 900,
            comparator_class_name: KV_COMPARATOR.into(),
            compression_codec: 1,
            encryption_key: None,
            major_version: 3,
            minor_version: 3,
        };
        let bytes = t.encode();
        assert_eq!(bytes.len(), TRAILER_SIZE);
        assert_eq!(&bytes[TRAILER_SIZE - 4..], &[3, 0, 0, 3]);
        let fs = MemoryFs::new();
        let mut w = fs.create(Path::new("t")).unwrap();
        w.append(&vec![0u8; 2000]).unwrap();
        w.append(&bytes).unwrap();
        let f = fs.open(Path::new("t")).unwrap();
        assert_eq!(Trailer::read(f.as_ref()).unwrap(), t);
    }
}
