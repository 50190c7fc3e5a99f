//! Hadoop's SequenceFile (version 6), as far as HBase's HashTable output uses it: the
//! header (key and value class names, compression flags, codec, metadata, sync marker),
//! then records of `length, key length, key, value`, with sync escapes between them.
//! Values may be record-compressed with Hadoop's DefaultCodec (zlib); block-compressed
//! files are refused by name. Keys and values come back as their serialized bytes; an
//! `ImmutableBytesWritable` is a 4-byte length and the bytes, a `LongWritable` 8 bytes.

use std::io::{Read, Write};

use cellar_api::{Error, ErrorKind, Result};

const MAGIC: &[u8; 3] = b"SEQ";
const VERSION: u8 = 6;
const SYNC_ESCAPE: i32 = -1;
const SYNC_SIZE: usize = 16;
/// Hadoop writes a sync marker after this many bytes of records.
const SYNC_INTERVAL: u64 = 100 * (4 + SYNC_SIZE as u64);
const DEFAULT_CODEC: &str = "org.apache.hadoop.io.compress.DefaultCodec";

pub const IMMUTABLE_BYTES: &str = "org.apache.hadoop.hbase.io.ImmutableBytesWritable";
pub const NULL_WRITABLE: &str = "org.apache.hadoop.io.NullWritable";
pub const LONG_WRITABLE: &str = "org.apache.hadoop.io.LongWritable";

fn corrupt(why: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Corrupt, format!("sequence file: {why}"))
}

struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| corrupt(format!("truncated at byte {}", self.pos)))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn i32(&mut self) -> Result<i32> {
        let s = self.take(4)?;
        Ok(i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
    /// Hadoop's `WritableUtils.readVInt`.
    fn vint(&mut self) -> Result<i64> {
        let first = self.u8()? as i8;
        if first >= -112 {
            return Ok(i64::from(first));
        }
        let negative = first < -120;
        let len = if negative {
            -119 - i32::from(first)
        } else {
            -111 - i32::from(first)
        };
        let mut v: i64 = 0;
        for _ in 0..len - 1 {
            v = (v << 8) | i64::from(self.u8()?);
        }
        Ok(if negative { !v } else { v })
    }
    fn text(&mut self) -> Result<String> {
        let n = self.vint()?;
        let n = usize::try_from(n).map_err(|_| corrupt("a negative string length"))?;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| corrupt("a name that is not UTF-8"))
    }
}

/// A whole SequenceFile read into memory.
#[derive(Debug, Clone)]
pub struct SequenceFile {
    pub key_class: String,
    pub value_class: String,
    /// (key bytes, value bytes) in file order; values decompressed.
    pub records: Vec<(Vec<u8>, Vec<u8>)>,
}

/// Parses a SequenceFile.
pub fn read(bytes: &[u8]) -> Result<SequenceFile> {
    let mut c = Cursor { b: bytes, pos: 0 };
    if c.take(3)? != MAGIC {
        return Err(corrupt("not a sequence file (no SEQ magic)"));
    }
    let version = c.u8()?;
    if version != VERSION {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!("sequence file version {version} (6 is read)"),
        ));
    }
    let key_class = c.text()?;
    let value_class = c.text()?;
    let compressed = c.u8()? != 0;
    let block = c.u8()? != 0;
    if compressed {
        let codec = c.text()?;
        if block {
            return Err(Error::new(
                ErrorKind::Unsupported,
                "block-compressed sequence files",
            ));
        }
        if codec != DEFAULT_CODEC {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!("sequence file codec {codec}"),
            ));
        }
    }
    let meta = c.i32()?;
    for _ in 0..meta.max(0) {
        c.text()?;
        c.text()?;
    }
    let sync = c.take(SYNC_SIZE)?.to_vec();
    let mut records = Vec::new();
    while c.pos < bytes.len() {
        let mut len = c.i32()?;
        if len == SYNC_ESCAPE {
            if c.take(SYNC_SIZE)? != sync.as_slice() {
                return Err(corrupt("a sync marker that does not match the header's"));
            }
            if c.pos == bytes.len() {
                break;
            }
            len = c.i32()?;
        }
        let key_len = c.i32()?;
        if len < 0 || key_len < 0 || key_len > len {
            return Err(corrupt(format!(
                "a record of {len} bytes with a {key_len}-byte key"
            )));
        }
        let key = c.take(key_len as usize)?.to_vec();
        let raw = c.take((len - key_len) as usize)?;
        let value = if compressed {
            let mut out = Vec::new();
            flate2::read::ZlibDecoder::new(raw)
                .read_to_end(&mut out)
                .map_err(|e| corrupt(format!("a value that does not inflate: {e}")))?;
            out
        } else {
            raw.to_vec()
        };
        records.push((key, value));
    }
    Ok(SequenceFile {
        key_class,
        value_class,
        records,
    })
}

/// The bytes of a serialized `ImmutableBytesWritable`.
pub fn immutable_bytes(b: &[u8]) -> Result<Vec<u8>> {
    let mut c = Cursor { b, pos: 0 };
    let n = c.i32()?;
    let n = usize::try_from(n).map_err(|_| corrupt("a negative length"))?;
    let v = c.take(n)?.to_vec();
    if c.pos != b.len() {
        return Err(corrupt("bytes after an ImmutableBytesWritable"));
    }
    Ok(v)
}

/// Serializes bytes as an `ImmutableBytesWritable`.
pub fn to_immutable_bytes(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + b.len());
    out.extend_from_slice(&(b.len() as i32).to_be_bytes());
    out.extend_from_slice(b);
    out
}

fn write_vint(out: &mut Vec<u8>, v: i64) {
    if (-112..=127).contains(&v) {
        out.push(v as i8 as u8);
        return;
    }
    let (mut len, v) = if v < 0 { (-120i64, !v) } else { (-112i64, v) };
    let mut tmp = v;
    while tmp != 0 {
        tmp >>= 8;
        len -= 1;
    }
    out.push(len as i8 as u8);
    let n = if len < -120 {
        -(len + 120)
    } else {
        -(len + 112)
    };
    for i in (0..n).rev() {
        out.push(((v >> (i * 8)) & 0xff) as u8);
    }
}

fn write_text(out: &mut Vec<u8>, s: &str) {
    write_vint(out, s.len() as i64);
    out.extend_from_slice(s.as_bytes());
}

/// Writes an uncompressed SequenceFile of `records` (serialized keys and values).
/// Returns the bytes and, for each record, the offset it starts at (for a MapFile
/// index).
pub fn write(
    w: &mut dyn Write,
    key_class: &str,
    value_class: &str,
    records: &[(Vec<u8>, Vec<u8>)],
    sync: [u8; SYNC_SIZE],
) -> std::io::Result<Vec<u64>> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    write_text(&mut out, key_class);
    write_text(&mut out, value_class);
    out.push(0); // not compressed
    out.push(0); // not block-compressed
    out.extend_from_slice(&0i32.to_be_bytes()); // no metadata
    out.extend_from_slice(&sync);
    let mut last_sync = out.len() as u64;
    let mut offsets = Vec::with_capacity(records.len());
    for (k, v) in records {
        if out.len() as u64 >= last_sync + SYNC_INTERVAL {
            out.extend_from_slice(&SYNC_ESCAPE.to_be_bytes());
            out.extend_from_slice(&sync);
            last_sync = out.len() as u64;
        }
        offsets.push(out.len() as u64);
        out.extend_from_slice(&((k.len() + v.len()) as i32).to_be_bytes());
        out.extend_from_slice(&(k.len() as i32).to_be_bytes());
        out.extend_from_slice(k);
        out.extend_from_slice(v);
    }
    w.write_all(&out)?;
    Ok(offsets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vints_round_trip() {
        for v in [0i64, 1, 127, 128, 300, -1, -112, -113, -1000, 1 << 40] {
            let mut b = Vec::new();
            write_vint(&mut b, v);
            let mut c = Cursor { b: &b, pos: 0 };
            assert_eq!(c.vint().unwrap(), v, "{v}");
            assert_eq!(c.pos, b.len());
        }
    }

    #[test]
    fn files_round_trip_and_damage_is_refused() {
        let recs: Vec<(Vec<u8>, Vec<u8>)> = (0..500)
            .map(|i| {
                (
                    to_immutable_bytes(format!("k{i:04}").as_bytes()),
                    to_immutable_bytes(&[i as u8; 16]),
                )
            })
            .collect();
        let mut out = Vec::new();
        let offsets = write(&mut out, IMMUTABLE_BYTES, IMMUTABLE_BYTES, &recs, [7; 16]).unwrap();
        assert_eq!(offsets.len(), 500);
        let f = read(&out).unwrap();
        assert_eq!(f.key_class, IMMUTABLE_BYTES);
        assert_eq!(f.records, recs);
        assert!(read(&out[..out.len() - 3]).is_err());
        assert!(read(b"SEX\x06").is_err());
        let mut bad = out.clone();
        let at = offsets[400] as usize;
        bad[at] ^= 0xff;
        assert!(read(&bad).is_err());
    }
}
