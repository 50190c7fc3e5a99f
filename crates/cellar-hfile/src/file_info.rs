//! File info (§3.6): a sorted byte-string map, stored as `PBUF` + a length-delimited
//! `FileInfoProto { repeated BytesBytesPair map_entry = 1 }`.

use std::collections::BTreeMap;

use crate::bytes::{put_pb_varint, Reader};
use crate::error::{HFileError, Result};

pub const LASTKEY: &[u8] = b"hfile.LASTKEY";
pub const AVG_KEY_LEN: &[u8] = b"hfile.AVG_KEY_LEN";
pub const AVG_VALUE_LEN: &[u8] = b"hfile.AVG_VALUE_LEN";
pub const CREATE_TIME_TS: &[u8] = b"hfile.CREATE_TIME_TS";
pub const MAX_TAGS_LEN: &[u8] = b"hfile.MAX_TAGS_LEN";
pub const TAGS_COMPRESSED: &[u8] = b"hfile.TAGS_COMPRESSED";
pub const KEY_VALUE_VERSION: &[u8] = b"KEY_VALUE_VERSION";
pub const MAX_MEMSTORE_TS_KEY: &[u8] = b"MAX_MEMSTORE_TS_KEY";
pub const MAX_SEQ_ID_KEY: &[u8] = b"MAX_SEQ_ID_KEY";
pub const TIMERANGE: &[u8] = b"TIMERANGE";
pub const EARLIEST_PUT_TS: &[u8] = b"EARLIEST_PUT_TS";
pub const DELETE_FAMILY_COUNT: &[u8] = b"DELETE_FAMILY_COUNT";
pub const BLOOM_FILTER_TYPE: &[u8] = b"BLOOM_FILTER_TYPE";
/// The bloom's parameter, the prefix length of ROWPREFIX_FIXED_LENGTH (HBase's
/// `BLOOM_FILTER_PARAM_KEY`).
pub const BLOOM_PARAM: &[u8] = b"BLOOM_FILTER_PARAM";
/// The name earlier Cellar versions wrote it under (read still).
pub const BLOOM_PARAM_OLD: &[u8] = b"BLOOM_PARAM";
pub const LAST_BLOOM_KEY: &[u8] = b"LAST_BLOOM_KEY";
pub const DATA_BLOCK_ENCODING: &[u8] = b"DATA_BLOCK_ENCODING";
pub const MAJOR_COMPACTION_KEY: &[u8] = b"MAJOR_COMPACTION_KEY";

const PB_MAGIC: &[u8] = b"PBUF";

/// The file info map.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileInfo {
    pub map: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl FileInfo {
    pub fn get(&self, key: &[u8]) -> Option<&[u8]> {
        self.map.get(key).map(Vec::as_slice)
    }

    pub fn insert(&mut self, key: &[u8], value: impl Into<Vec<u8>>) {
        self.map.insert(key.to_vec(), value.into());
    }

    /// A big-endian i32 entry.
    pub fn get_i32(&self, key: &[u8]) -> Option<i32> {
        let v = self.get(key)?;
        Some(i32::from_be_bytes(v.try_into().ok()?))
    }

    /// A big-endian i64 entry.
    pub fn get_i64(&self, key: &[u8]) -> Option<i64> {
        let v = self.get(key)?;
        Some(i64::from_be_bytes(v.try_into().ok()?))
    }

    /// The TIMERANGE entry as (min, max): two big-endian longs (HBase 1, and HBase 2 since
    /// HBASE-21012), or the protobuf form HBase 2.0.0–2.0.1 wrote.
    pub fn time_range(&self) -> Option<(i64, i64)> {
        let v = self.get(TIMERANGE)?;
        if let Some(pb) = v.strip_prefix(PB_MAGIC) {
            let mut r = Reader::new(pb, 0);
            let (mut from, mut to) = (0i64, i64::MAX);
            while !r.is_empty() {
                let tag = r.pb_varint().ok()?;
                let val = r.pb_varint().ok()? as i64;
                match tag {
                    0x08 => from = val,
                    0x10 => to = val,
                    _ => return None,
                }
            }
            Some((from, to))
        } else if v.len() == 16 {
            let a = i64::from_be_bytes(v[..8].try_into().ok()?);
            let b = i64::from_be_bytes(v[8..].try_into().ok()?);
            Some((a, b))
        } else {
            None
        }
    }

    /// Encodes a time range the way HBase 2 writes it (HBASE-21012: `writeLong(min)`,
    /// `writeLong(max)`, readable by HBase 1 too).
    pub fn encode_time_range(min: i64, max: i64) -> Vec<u8> {
        let mut out = Vec::with_capacity(16);
        out.extend_from_slice(&min.to_be_bytes());
        out.extend_from_slice(&max.to_be_bytes());
        out
    }

    /// The protobuf form HBase 2.0.0–2.0.1 wrote (HBASE-18754), read for old files.
    pub fn encode_time_range_pb(min: i64, max: i64) -> Vec<u8> {
        let mut out = PB_MAGIC.to_vec();
        out.push(0x08);
        put_pb_varint(&mut out, min as u64);
        out.push(0x10);
        put_pb_varint(&mut out, max as u64);
        out
    }

    /// Serializes the map as a file info block payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut msg = Vec::new();
        for (k, v) in &self.map {
            let mut pair = Vec::with_capacity(k.len() + v.len() + 8);
            pair.push(0x0a);
            put_pb_varint(&mut pair, k.len() as u64);
            pair.extend_from_slice(k);
            pair.push(0x12);
            put_pb_varint(&mut pair, v.len() as u64);
            pair.extend_from_slice(v);
            msg.push(0x0a);
            put_pb_varint(&mut msg, pair.len() as u64);
            msg.extend_from_slice(&pair);
        }
        let mut out = PB_MAGIC.to_vec();
        put_pb_varint(&mut out, msg.len() as u64);
        out.extend_from_slice(&msg);
        out
    }

    /// Parses a file info block payload found at `offset`.
    pub fn decode(payload: &[u8], offset: u64) -> Result<FileInfo> {
        let bad = |why: &str| HFileError::corrupt(offset, format!("file info: {why}"));
        let body = payload
            .strip_prefix(PB_MAGIC)
            .ok_or_else(|| bad("missing PBUF magic (pre-2.0 file info is not supported)"))?;
        let mut r = Reader::new(body, offset + 4);
        let len = usize::try_from(r.pb_varint()?).map_err(|_| bad("length overflows"))?;
        let mut r = Reader::new(r.bytes(len)?, offset);
        let mut info = FileInfo::default();
        while !r.is_empty() {
            if r.pb_varint()? != 0x0a {
                return Err(bad("unexpected field"));
            }
            let n = usize::try_from(r.pb_varint()?).map_err(|_| bad("length overflows"))?;
            let mut p = Reader::new(r.bytes(n)?, offset);
            let (mut key, mut value) = (None, None);
            while !p.is_empty() {
                let tag = p.pb_varint()?;
                let n = usize::try_from(p.pb_varint()?).map_err(|_| bad("length overflows"))?;
                let bytes = p.bytes(n)?.to_vec();
                match tag {
                    0x0a => key = Some(bytes),
                    0x12 => value = Some(bytes),
                    _ => return Err(bad("unexpected pair field")),
                }
            }
            match (key, value) {
                (Some(k), Some(v)) => {
                    info.map.insert(k, v);
                }
                _ => return Err(bad("pair without key or value")),
            }
        }
        Ok(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let mut fi = FileInfo::default();
        fi.insert(AVG_KEY_LEN, 17i32.to_be_bytes());
        fi.insert(MAX_SEQ_ID_KEY, 99i64.to_be_bytes());
        fi.insert(TIMERANGE, FileInfo::encode_time_range(5, 9));
        let back = FileInfo::decode(&fi.encode(), 0).unwrap();
        assert_eq!(back, fi);
        assert_eq!(back.get_i32(AVG_KEY_LEN), Some(17));
        assert_eq!(back.get_i64(MAX_SEQ_ID_KEY), Some(99));
        assert_eq!(back.time_range(), Some((5, 9)));
        // HBase 2 writes two longs (HBASE-21012); the 2.0.0 protobuf form still reads.
        assert_eq!(
            FileInfo::encode_time_range(5, 9),
            [0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 9]
        );
        let mut pb = FileInfo::default();
        pb.insert(TIMERANGE, FileInfo::encode_time_range_pb(-1, 1 << 40));
        assert_eq!(pb.time_range(), Some((-1, 1 << 40)));
        assert!(FileInfo::decode(b"PBUF\x05\x0a", 0).is_err());
        assert!(FileInfo::decode(b"nope", 0).is_err());
    }
}
