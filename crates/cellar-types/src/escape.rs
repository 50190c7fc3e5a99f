//! HBase's `Bytes.toStringBinary` / `toBytesBinary`: printable ASCII as is, every other
//! byte (and the backslash) as `\xNN` with upper-case hex.

use crate::error::{Result, TypesError};

/// Escapes bytes the way HBase's tools print them.
pub fn to_string_binary(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if (b' '..=b'~').contains(&b) && b != b'\\' {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

/// Parses a string with `\xNN` escapes back into bytes (the inverse of
/// [`to_string_binary`]; a backslash not followed by `xNN` is kept literally, as HBase does).
pub fn from_string_binary(s: &str) -> Result<Vec<u8>> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 1 < bytes.len() && bytes[i + 1] == b'x' {
            let hex = bytes
                .get(i + 2..i + 4)
                .ok_or_else(|| TypesError::BadEscape {
                    input: s.to_string(),
                })?;
            let text = std::str::from_utf8(hex).map_err(|_| TypesError::BadEscape {
                input: s.to_string(),
            })?;
            let v = u8::from_str_radix(text, 16).map_err(|_| TypesError::BadEscape {
                input: s.to_string(),
            })?;
            out.push(v);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Ok(out)
}

/// Lower-case hex of `bytes` (used in Cellar's text metadata files).
pub fn to_hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Parses hex written by [`to_hex`]; `None` for odd lengths or non-hex digits.
pub fn from_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips() {
        assert_eq!(to_hex(b"\x00\xffa"), "00ff61");
        assert_eq!(from_hex("00ff61"), Some(b"\x00\xffa".to_vec()));
        assert_eq!(from_hex("0"), None);
        assert_eq!(from_hex("zz"), None);
    }

    #[test]
    fn escapes_like_hbase() {
        assert_eq!(to_string_binary(b"abc"), "abc");
        assert_eq!(
            to_string_binary(&[0, 0xff, b'\\', b'~']),
            "\\x00\\xFF\\x5C~"
        );
    }

    #[test]
    fn round_trips_every_byte() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(from_string_binary(&to_string_binary(&all)).unwrap(), all);
        assert!(from_string_binary("\\xZZ").is_err());
        assert!(from_string_binary("\\x1").is_err());
    }
}
