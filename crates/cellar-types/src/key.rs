//! The flat key of a cell, as HBase serializes it inside a KeyValue and in block indexes:
//! `rowLen:i16 row famLen:u8 family qualifier timestamp:i64 type:u8` (big-endian).

use crate::error::{Result, TypesError};

/// Fixed key overhead: row length 2 + family length 1 + timestamp 8 + type 1.
pub const KEY_INFRASTRUCTURE_SIZE: usize = 12;

/// Length of a flat key with these part lengths.
pub fn key_len(row: usize, family: usize, qualifier: usize) -> usize {
    KEY_INFRASTRUCTURE_SIZE + row + family + qualifier
}

/// A borrowed, parsed flat key. The type is kept as its raw code so that search keys
/// (Minimum, Maximum) and index keys written by other systems parse too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyRef<'a> {
    pub row: &'a [u8],
    pub family: &'a [u8],
    pub qualifier: &'a [u8],
    pub timestamp: i64,
    pub type_code: u8,
}

impl<'a> KeyRef<'a> {
    /// Parses a flat key that occupies all of `key`.
    pub fn parse(key: &'a [u8]) -> Result<KeyRef<'a>> {
        let bad = |reason| TypesError::MalformedKey { reason };
        if key.len() < KEY_INFRASTRUCTURE_SIZE {
            return Err(bad("shorter than 12 bytes"));
        }
        let row_len = i16::from_be_bytes([key[0], key[1]]);
        if row_len < 0 {
            return Err(bad("negative row length"));
        }
        let row_end = 2 + row_len as usize;
        if row_end + 1 + 9 > key.len() {
            return Err(bad("row length runs past the end of the key"));
        }
        let fam_len = key[row_end] as usize;
        let fam_start = row_end + 1;
        let fam_end = fam_start + fam_len;
        let ts_start = key.len() - 9;
        if fam_end > ts_start {
            return Err(bad("family length runs past the end of the key"));
        }
        let mut ts = [0u8; 8];
        ts.copy_from_slice(&key[ts_start..ts_start + 8]);
        Ok(KeyRef {
            row: &key[2..row_end],
            family: &key[fam_start..fam_end],
            qualifier: &key[fam_end..ts_start],
            timestamp: i64::from_be_bytes(ts),
            type_code: key[key.len() - 1],
        })
    }

    /// A search key that sorts before every cell of `row`.
    pub fn first_on_row(row: &'a [u8]) -> KeyRef<'a> {
        KeyRef {
            row,
            family: &[],
            qualifier: &[],
            timestamp: i64::MAX,
            type_code: 255,
        }
    }

    /// A search key that sorts after every cell of `row` (the "last on row" sentinel).
    pub fn last_on_row(row: &'a [u8]) -> KeyRef<'a> {
        KeyRef {
            row,
            family: &[],
            qualifier: &[],
            timestamp: i64::MIN,
            type_code: 0,
        }
    }

    /// A search key that sorts before every version of (row, family, qualifier).
    pub fn first_on_column(row: &'a [u8], family: &'a [u8], qualifier: &'a [u8]) -> KeyRef<'a> {
        KeyRef {
            row,
            family,
            qualifier,
            timestamp: i64::MAX,
            type_code: 255,
        }
    }

    /// Length of the flat serialization.
    pub fn len(&self) -> usize {
        key_len(self.row.len(), self.family.len(), self.qualifier.len())
    }

    /// Never true: a key has at least 12 bytes.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Appends the flat serialization to `out`.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.row.len() as u16).to_be_bytes());
        out.extend_from_slice(self.row);
        out.push(self.family.len() as u8);
        out.extend_from_slice(self.family);
        out.extend_from_slice(self.qualifier);
        out.extend_from_slice(&self.timestamp.to_be_bytes());
        out.push(self.type_code);
    }

    /// The flat serialization as a new vector.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        self.write(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_round_trips() {
        let k = KeyRef {
            row: b"row",
            family: b"f",
            qualifier: b"qq",
            timestamp: -5,
            type_code: 12,
        };
        let bytes = k.to_vec();
        assert_eq!(bytes.len(), k.len());
        assert_eq!(KeyRef::parse(&bytes).unwrap(), k);
    }

    #[test]
    fn malformed_keys_are_errors() {
        assert!(KeyRef::parse(&[0; 5]).is_err());
        // Row length pointing past the end.
        let mut k = KeyRef::first_on_row(b"abc").to_vec();
        k[1] = 200;
        assert!(KeyRef::parse(&k).is_err());
        // Negative row length.
        k[0] = 0x80;
        assert!(KeyRef::parse(&k).is_err());
        // Family length past the end.
        let mut k = KeyRef::first_on_row(b"abc").to_vec();
        k[5] = 50;
        assert!(KeyRef::parse(&k).is_err());
    }
}
