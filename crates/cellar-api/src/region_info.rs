//! Region info, as HBase's `RegionInfo`: which table, which row range, when it was
//! made, and the encoded name a server hosts it by.

use cellar_types::to_string_binary;

/// One region of a table: the rows in `[start, end)` (empty = unbounded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionInfo {
    pub table: String,
    pub start: Vec<u8>,
    pub end: Vec<u8>,
    /// Creation time (ms), HBase's region id.
    pub id: i64,
    /// The name servers host the region by (also its directory name).
    pub encoded: String,
    /// A split parent: no longer serving, kept until its daughters hold no references.
    pub offline: bool,
}

impl RegionInfo {
    /// HBase's region name: `table,startkey,id.encoded.`
    pub fn region_name(&self) -> String {
        format!(
            "{},{},{}.{}.",
            self.table,
            to_string_binary(&self.start),
            self.id,
            self.encoded
        )
    }

    /// Whether `row` is in `[start, end)`.
    pub fn contains(&self, row: &[u8]) -> bool {
        (self.start.is_empty() || self.start.as_slice() <= row)
            && (self.end.is_empty() || row < self.end.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ranges() {
        let r = RegionInfo {
            table: "t".into(),
            start: b"a\x00".to_vec(),
            end: b"m".to_vec(),
            id: 17,
            encoded: "abc".into(),
            offline: false,
        };
        assert_eq!(r.region_name(), "t,a\\x00,17.abc.");
        assert!(r.contains(b"a\x00") && r.contains(b"lz") && !r.contains(b"m"));
        assert!(!r.contains(b"a"));
    }
}
