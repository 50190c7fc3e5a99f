//! HBase's region names on the wire: `table,startkey,regionid.encoded.` as raw bytes,
//! where `encoded` is the hex MD5 of `table,startkey,regionid` — what every HBase
//! client computes from a RegionInfo, so servers must answer to it. `hbase:meta`'s
//! single region keeps HBase's old-format name `hbase:meta,,1` (encoded `1588230740`).

use md5::{Digest, Md5};

use crate::error::{ProtocolError, Result};

/// The catalog table clients scan to locate regions.
pub const META_TABLE: &str = "hbase:meta";
/// `hbase:meta,,1`, the name of the catalog's only region.
pub const META_REGION_NAME: &[u8] = b"hbase:meta,,1";
/// The encoded name of `hbase:meta,,1`.
pub const META_ENCODED_NAME: &str = "1588230740";

fn prefix(table: &str, start: &[u8], id: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(table.len() + start.len() + 24);
    out.extend_from_slice(table.as_bytes());
    out.push(b',');
    out.extend_from_slice(start);
    out.push(b',');
    out.extend_from_slice(id.to_string().as_bytes());
    out
}

/// Characters of an MD5 encoded name (HBase's `MD5_HEX_LENGTH`).
pub const ENCODED_LEN: usize = 32;

/// The encoded name an HBase client computes for a region.
pub fn encoded_name(table: &str, start: &[u8], id: i64) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Md5::digest(prefix(table, start, id));
    let mut out = String::with_capacity(ENCODED_LEN);
    for b in digest {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    out
}

/// The encoded part a new-format full name carries (`….<32 hex digits>.`), as HBase's
/// `RegionInfo.encodeRegionName` reads it without hashing again; None for a name
/// without one (the old format of `hbase:meta,,1`, or a malformed name).
pub fn encoded_part(name: &[u8]) -> Option<&str> {
    let body = name.strip_suffix(b".")?;
    let start = body.len().checked_sub(ENCODED_LEN)?;
    let (head, encoded) = body.split_at(start);
    if !head.ends_with(b".") || !encoded.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    std::str::from_utf8(encoded).ok()
}

/// The full region name.
pub fn region_name(table: &str, start: &[u8], id: i64) -> Vec<u8> {
    if table == META_TABLE {
        return META_REGION_NAME.to_vec();
    }
    let mut out = prefix(table, start, id);
    out.push(b'.');
    out.extend_from_slice(encoded_name(table, start, id).as_bytes());
    out.push(b'.');
    out
}

/// A region name taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedName {
    pub table: String,
    pub start: Vec<u8>,
    pub id: i64,
}

/// Parses `table,start,id[.encoded.]` (the start key may hold commas; the table name
/// may not).
pub fn parse(name: &[u8]) -> Result<ParsedName> {
    let bad = || ProtocolError::invalid("region name", String::from_utf8_lossy(name).into_owned());
    let first = name.iter().position(|&c| c == b',').ok_or_else(bad)?;
    let last = name.iter().rposition(|&c| c == b',').ok_or_else(bad)?;
    if last == first {
        return Err(bad());
    }
    let table = std::str::from_utf8(&name[..first])
        .map_err(|_| bad())?
        .to_string();
    let start = name[first + 1..last].to_vec();
    let tail = &name[last + 1..];
    let id_end = tail
        .iter()
        .position(|&c| c == b'.' || c == b'_')
        .unwrap_or(tail.len());
    let id = std::str::from_utf8(&tail[..id_end])
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(bad)?;
    Ok(ParsedName { table, start, id })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_with_commas_in_keys() {
        let n = region_name("t", b"a,b", 1700000000000);
        let p = parse(&n).unwrap();
        assert_eq!(
            p,
            ParsedName {
                table: "t".into(),
                start: b"a,b".to_vec(),
                id: 1700000000000
            }
        );
        assert!(n.ends_with(format!(".{}.", encoded_name("t", b"a,b", 1700000000000)).as_bytes()));
        assert_eq!(parse(META_REGION_NAME).unwrap().table, META_TABLE);
        assert!(parse(b"nocomma").is_err());
        assert!(parse(b"t,x,notanumber").is_err());
    }

    #[test]
    fn encoded_name_is_hbase_md5() {
        // MD5("t,,1") computed independently.
        assert_eq!(
            encoded_name("t", b"", 1),
            format!("{:x}", Md5::digest(b"t,,1"))
        );
        assert_eq!(encoded_name("t", b"", 1).len(), 32);
    }

    #[test]
    fn the_encoded_part_of_a_full_name_is_read_not_hashed() {
        let n = region_name("ns:t", b"a.b,c", 1700000000000);
        assert_eq!(
            encoded_part(&n),
            Some(encoded_name("ns:t", b"a.b,c", 1700000000000).as_str())
        );
        assert_eq!(encoded_part(META_REGION_NAME), None);
        assert_eq!(encoded_part(b"t,,1"), None);
        assert_eq!(encoded_part(b"t,,1."), None);
        // 32 characters that are not hex digits, or no dot before them.
        assert_eq!(
            encoded_part(format!("t,,1.{}.", "z".repeat(32)).as_bytes()),
            None
        );
        assert_eq!(
            encoded_part(format!("t,,1{}.", "a".repeat(32)).as_bytes()),
            None
        );
    }
}
