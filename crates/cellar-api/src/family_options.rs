//! The storage options of a column family as a client names them: data block encoding,
//! compression and bloom filter, with HBase's attribute values. The engine maps each to
//! its own implementation.

/// `DATA_BLOCK_ENCODING`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DataBlockEncoding {
    #[default]
    None,
    Prefix,
    Diff,
    FastDiff,
    RowIndexV1,
}

impl DataBlockEncoding {
    pub const ALL: [DataBlockEncoding; 5] = [
        DataBlockEncoding::None,
        DataBlockEncoding::Prefix,
        DataBlockEncoding::Diff,
        DataBlockEncoding::FastDiff,
        DataBlockEncoding::RowIndexV1,
    ];

    pub fn name(self) -> &'static str {
        match self {
            DataBlockEncoding::None => "NONE",
            DataBlockEncoding::Prefix => "PREFIX",
            DataBlockEncoding::Diff => "DIFF",
            DataBlockEncoding::FastDiff => "FAST_DIFF",
            DataBlockEncoding::RowIndexV1 => "ROW_INDEX_V1",
        }
    }

    /// Parses an attribute value, case-insensitively.
    pub fn from_name(name: &str) -> Option<DataBlockEncoding> {
        Self::ALL
            .into_iter()
            .find(|e| e.name().eq_ignore_ascii_case(name))
    }
}

/// `COMPRESSION`: every algorithm HBase names; which ones a server can run is the
/// server's to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compression {
    Lzo,
    Gz,
    #[default]
    None,
    Snappy,
    Lz4,
    Bzip2,
    Zstd,
    Lzma,
    Brotli,
}

impl Compression {
    pub const ALL: [Compression; 9] = [
        Compression::Lzo,
        Compression::Gz,
        Compression::None,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Bzip2,
        Compression::Zstd,
        Compression::Lzma,
        Compression::Brotli,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Compression::Lzo => "LZO",
            Compression::Gz => "GZ",
            Compression::None => "NONE",
            Compression::Snappy => "SNAPPY",
            Compression::Lz4 => "LZ4",
            Compression::Bzip2 => "BZIP2",
            Compression::Zstd => "ZSTD",
            Compression::Lzma => "LZMA",
            Compression::Brotli => "BROTLI",
        }
    }

    /// Parses an attribute value, case-insensitively.
    pub fn from_name(name: &str) -> Option<Compression> {
        Self::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name))
    }
}

/// `BLOOMFILTER`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BloomType {
    None,
    #[default]
    Row,
    RowCol,
    /// The first N bytes of the row (`RowPrefixBloomFilter.prefix_length`).
    RowPrefixFixedLength(usize),
}

impl BloomType {
    pub fn name(self) -> &'static str {
        match self {
            BloomType::None => "NONE",
            BloomType::Row => "ROW",
            BloomType::RowCol => "ROWCOL",
            BloomType::RowPrefixFixedLength(_) => "ROWPREFIX_FIXED_LENGTH",
        }
    }

    /// Parses an attribute value; the prefix length comes from the family's
    /// configuration.
    pub fn from_name(name: &str, prefix_len: Option<usize>) -> Option<BloomType> {
        Some(match name.to_ascii_uppercase().as_str() {
            "NONE" => BloomType::None,
            "ROW" => BloomType::Row,
            "ROWCOL" => BloomType::RowCol,
            "ROWPREFIX_FIXED_LENGTH" => BloomType::RowPrefixFixedLength(prefix_len?),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for e in DataBlockEncoding::ALL {
            assert_eq!(DataBlockEncoding::from_name(e.name()), Some(e));
        }
        for c in Compression::ALL {
            assert_eq!(Compression::from_name(&c.name().to_lowercase()), Some(c));
        }
        assert_eq!(
            BloomType::from_name("rowprefix_fixed_length", Some(4)),
            Some(BloomType::RowPrefixFixedLength(4))
        );
        assert_eq!(BloomType::from_name("ROWPREFIX_FIXED_LENGTH", None), None);
        assert_eq!(DataBlockEncoding::from_name("PREFIX_TREE"), None);
    }
}
