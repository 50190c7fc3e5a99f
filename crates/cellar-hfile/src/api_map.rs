//! The family options a client names (`cellar-api`) and the store-file implementations
//! that run them, one to one. The HBase attribute names live once, on the client's side;
//! the store-file types take theirs from there.

use cellar_api as api;

use crate::{BloomType, Compression, DataBlockEncoding};

impl From<api::DataBlockEncoding> for DataBlockEncoding {
    fn from(e: api::DataBlockEncoding) -> Self {
        match e {
            api::DataBlockEncoding::None => DataBlockEncoding::None,
            api::DataBlockEncoding::Prefix => DataBlockEncoding::Prefix,
            api::DataBlockEncoding::Diff => DataBlockEncoding::Diff,
            api::DataBlockEncoding::FastDiff => DataBlockEncoding::FastDiff,
            api::DataBlockEncoding::RowIndexV1 => DataBlockEncoding::RowIndexV1,
        }
    }
}

impl From<DataBlockEncoding> for api::DataBlockEncoding {
    fn from(e: DataBlockEncoding) -> Self {
        match e {
            DataBlockEncoding::None => api::DataBlockEncoding::None,
            DataBlockEncoding::Prefix => api::DataBlockEncoding::Prefix,
            DataBlockEncoding::Diff => api::DataBlockEncoding::Diff,
            DataBlockEncoding::FastDiff => api::DataBlockEncoding::FastDiff,
            DataBlockEncoding::RowIndexV1 => api::DataBlockEncoding::RowIndexV1,
        }
    }
}

impl From<api::Compression> for Compression {
    fn from(c: api::Compression) -> Self {
        match c {
            api::Compression::Lzo => Compression::Lzo,
            api::Compression::Gz => Compression::Gz,
            api::Compression::None => Compression::None,
            api::Compression::Snappy => Compression::Snappy,
            api::Compression::Lz4 => Compression::Lz4,
            api::Compression::Bzip2 => Compression::Bzip2,
            api::Compression::Zstd => Compression::Zstd,
            api::Compression::Lzma => Compression::Lzma,
            api::Compression::Brotli => Compression::Brotli,
        }
    }
}

impl From<Compression> for api::Compression {
    fn from(c: Compression) -> Self {
        match c {
            Compression::Lzo => api::Compression::Lzo,
            Compression::Gz => api::Compression::Gz,
            Compression::None => api::Compression::None,
            Compression::Snappy => api::Compression::Snappy,
            Compression::Lz4 => api::Compression::Lz4,
            Compression::Bzip2 => api::Compression::Bzip2,
            Compression::Zstd => api::Compression::Zstd,
            Compression::Lzma => api::Compression::Lzma,
            Compression::Brotli => api::Compression::Brotli,
        }
    }
}

impl From<api::BloomType> for BloomType {
    fn from(b: api::BloomType) -> Self {
        match b {
            api::BloomType::None => BloomType::None,
            api::BloomType::Row => BloomType::Row,
            api::BloomType::RowCol => BloomType::RowCol,
            api::BloomType::RowPrefixFixedLength(n) => BloomType::RowPrefixFixedLength(n),
        }
    }
}

impl From<BloomType> for api::BloomType {
    fn from(b: BloomType) -> Self {
        match b {
            BloomType::None => api::BloomType::None,
            BloomType::Row => api::BloomType::Row,
            BloomType::RowCol => api::BloomType::RowCol,
            BloomType::RowPrefixFixedLength(n) => api::BloomType::RowPrefixFixedLength(n),
        }
    }
}
