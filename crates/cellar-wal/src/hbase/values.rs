//! WAL value compression (`hbase.regionserver.wal.value.enablecompression`): each value
//! is written through the file's one compression stream, flushed after the value. With
//! GZ, HBase's codec finishes the stream at each flush and starts a new one, so every
//! value's bytes are one whole gzip member.

use std::io::Read;

use super::proto::ProtoError;

/// HBase's `Compression.Algorithm` ordinal of GZ.
pub const GZ: u32 = 1;

/// The names of HBase's `Compression.Algorithm` ordinals.
pub fn algorithm_name(ordinal: u32) -> &'static str {
    match ordinal {
        0 => "LZO",
        1 => "GZ",
        2 => "NONE",
        3 => "SNAPPY",
        4 => "LZ4",
        5 => "BZIP2",
        6 => "ZSTD",
        _ => "unknown",
    }
}

/// Decompresses the values of one file (GZ: each value stands alone).
pub struct ValueDecompressor;

impl ValueDecompressor {
    /// `None` for an algorithm Cellar does not read in WAL values.
    pub fn new(algorithm: u32) -> Option<ValueDecompressor> {
        (algorithm == GZ).then_some(ValueDecompressor)
    }

    /// One value of `len` bytes from its compressed bytes.
    pub fn decompress(&self, compressed: &[u8], len: usize) -> Result<Vec<u8>, ProtoError> {
        let mut out = vec![0u8; len];
        if len == 0 {
            // HBase skips an empty value's bytes without decoding them.
            return Ok(out);
        }
        flate2::read::GzDecoder::new(compressed)
            .read_exact(&mut out)
            .map_err(|e| ProtoError::Malformed(format!("compressed value: {e}")))?;
        Ok(out)
    }
}
