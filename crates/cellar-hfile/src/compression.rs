//! Per-block compression (§3.8). The ordinal is stored in the trailer and never reordered.
//! GZ is a plain gzip stream (Hadoop's `GzipCodec`); SNAPPY, LZ4 and ZSTD use Hadoop's
//! block framing (`BlockCompressorStream`): for each run of input, its uncompressed length
//! (i32), then one or more (compressed length i32, compressed bytes) pieces.

use std::io::{Read, Write};

use crate::error::{HFileError, Result};

/// A block compression codec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    Lzo,
    Gz,
    None,
    Snappy,
    Lz4,
    Bzip2,
    Zstd,
    Lzma,
    Brotli,
}

/// Never pre-allocate more than this on the word of a (possibly corrupt) header.
const MAX_PREALLOC: usize = 8 << 20;

/// Largest run of input compressed as one Hadoop block.
const HADOOP_BLOCK: usize = 256 * 1024;

impl Compression {
    /// The ordinal stored in the trailer.
    pub fn ordinal(self) -> u32 {
        match self {
            Compression::Lzo => 0,
            Compression::Gz => 1,
            Compression::None => 2,
            Compression::Snappy => 3,
            Compression::Lz4 => 4,
            Compression::Bzip2 => 5,
            Compression::Zstd => 6,
            Compression::Lzma => 7,
            Compression::Brotli => 8,
        }
    }

    pub fn from_ordinal(ordinal: u32) -> Option<Compression> {
        Some(match ordinal {
            0 => Compression::Lzo,
            1 => Compression::Gz,
            2 => Compression::None,
            3 => Compression::Snappy,
            4 => Compression::Lz4,
            5 => Compression::Bzip2,
            6 => Compression::Zstd,
            7 => Compression::Lzma,
            8 => Compression::Brotli,
            _ => return None,
        })
    }

    /// HBase's attribute value (`NONE`, `GZ`, ...).
    pub fn name(self) -> &'static str {
        cellar_api::Compression::from(self).name()
    }

    /// Parses an attribute value, case-insensitively.
    pub fn from_name(name: &str) -> Option<Compression> {
        cellar_api::Compression::from_name(name).map(Into::into)
    }

    /// True for the codecs Cellar reads and writes.
    pub fn is_supported(self) -> bool {
        matches!(
            self,
            Compression::None
                | Compression::Gz
                | Compression::Snappy
                | Compression::Lz4
                | Compression::Zstd
        )
    }

    fn unsupported(self) -> HFileError {
        HFileError::Unsupported {
            what: format!("compression codec {}", self.name()),
        }
    }

    /// Compresses one block payload.
    pub fn compress(self, input: &[u8]) -> Result<Vec<u8>> {
        match self {
            Compression::None => Ok(input.to_vec()),
            Compression::Gz => {
                let mut enc = flate2::write::GzEncoder::new(
                    Vec::with_capacity(input.len() / 2),
                    flate2::Compression::default(),
                );
                enc.write_all(input).map_err(gz_err)?;
                enc.finish().map_err(gz_err)
            }
            Compression::Snappy | Compression::Lz4 | Compression::Zstd => {
                let mut out = Vec::with_capacity(input.len() / 2 + 16);
                for chunk in input.chunks(HADOOP_BLOCK) {
                    out.extend_from_slice(&(chunk.len() as u32).to_be_bytes());
                    let packed = self.compress_raw(chunk)?;
                    out.extend_from_slice(&(packed.len() as u32).to_be_bytes());
                    out.extend_from_slice(&packed);
                }
                Ok(out)
            }
            _ => Err(self.unsupported()),
        }
    }

    fn compress_raw(self, chunk: &[u8]) -> Result<Vec<u8>> {
        match self {
            Compression::Snappy => snap::raw::Encoder::new()
                .compress_vec(chunk)
                .map_err(|e| HFileError::InvalidOption(format!("snappy: {e}"))),
            Compression::Lz4 => Ok(lz4_flex::block::compress(chunk)),
            Compression::Zstd => zstd::bulk::compress(chunk, 3)
                .map_err(|e| HFileError::InvalidOption(format!("zstd: {e}"))),
            _ => Err(self.unsupported()),
        }
    }

    /// Decompresses one block payload that must inflate to exactly `expected` bytes.
    /// `offset` is the block's file offset, for errors.
    pub fn decompress(self, input: &[u8], expected: usize, offset: u64) -> Result<Vec<u8>> {
        let bad =
            |why: String| HFileError::corrupt(offset, format!("{} block: {why}", self.name()));
        let out = match self {
            Compression::None => input.to_vec(),
            Compression::Gz => {
                let mut out = Vec::with_capacity(expected.min(MAX_PREALLOC));
                let dec = flate2::read::MultiGzDecoder::new(input);
                dec.take(expected as u64 + 1)
                    .read_to_end(&mut out)
                    .map_err(|e| bad(e.to_string()))?;
                out
            }
            Compression::Snappy | Compression::Lz4 | Compression::Zstd => {
                let mut out = Vec::with_capacity(expected.min(MAX_PREALLOC));
                let mut pos = 0usize;
                let be32 = |pos: usize| -> Result<usize> {
                    let b = input
                        .get(pos..pos + 4)
                        .ok_or_else(|| bad("truncated framing".into()))?;
                    Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
                };
                while pos < input.len() {
                    let raw_len = be32(pos)?;
                    pos += 4;
                    if out.len() + raw_len > expected {
                        return Err(bad("inflates past the block's stated size".into()));
                    }
                    let goal = out.len() + raw_len;
                    while out.len() < goal {
                        let packed_len = be32(pos)?;
                        pos += 4;
                        let packed = input
                            .get(pos..pos + packed_len)
                            .ok_or_else(|| bad("truncated piece".into()))?;
                        pos += packed_len;
                        let room = goal - out.len();
                        let piece = self.decompress_raw(packed, room).map_err(bad)?;
                        if piece.len() > room {
                            return Err(bad("piece inflates past its run".into()));
                        }
                        out.extend_from_slice(&piece);
                    }
                }
                out
            }
            _ => return Err(self.unsupported()),
        };
        if out.len() != expected {
            return Err(bad(format!(
                "inflated to {} bytes, header says {expected}",
                out.len()
            )));
        }
        Ok(out)
    }

    /// Inflates one piece into at most `room` bytes. The output buffer is sized by what
    /// `packed` can really inflate to (each codec's largest expansion), never by a length
    /// field alone, so a damaged header cannot make it allocate gigabytes.
    fn decompress_raw(self, packed: &[u8], room: usize) -> std::result::Result<Vec<u8>, String> {
        match self {
            Compression::Snappy => {
                let n = snap::raw::decompress_len(packed).map_err(|e| e.to_string())?;
                // A 2-byte copy emits at most 64 bytes.
                if n > room || n > packed.len().saturating_mul(32).saturating_add(64) {
                    return Err("snappy piece larger than its run".into());
                }
                snap::raw::Decoder::new()
                    .decompress_vec(packed)
                    .map_err(|e| e.to_string())
            }
            Compression::Lz4 => {
                // An LZ4 sequence inflates at most 255-fold.
                let cap = room.min(packed.len().saturating_mul(255).saturating_add(64));
                let mut out = vec![0u8; cap];
                let n = lz4_flex::block::decompress_into(packed, &mut out)
                    .map_err(|e| e.to_string())?;
                out.truncate(n);
                Ok(out)
            }
            Compression::Zstd => {
                use std::io::Read as _;
                // Streamed: the buffer grows with the output actually produced.
                let dec =
                    zstd::stream::read::Decoder::with_buffer(packed).map_err(|e| e.to_string())?;
                let mut out = Vec::with_capacity(room.min(packed.len().saturating_mul(4)));
                dec.take(room as u64 + 1)
                    .read_to_end(&mut out)
                    .map_err(|e| e.to_string())?;
                Ok(out)
            }
            _ => Err(format!("{} unsupported", self.name())),
        }
    }
}

fn gz_err(e: std::io::Error) -> HFileError {
    HFileError::InvalidOption(format!("gzip: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Compression; 5] = [
        Compression::None,
        Compression::Gz,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];

    #[test]
    fn ordinals_and_names() {
        for o in 0..=8 {
            let c = Compression::from_ordinal(o).unwrap();
            assert_eq!(c.ordinal(), o);
            assert_eq!(Compression::from_name(&c.name().to_lowercase()), Some(c));
        }
        assert_eq!(Compression::None.ordinal(), 2);
        assert_eq!(Compression::Zstd.ordinal(), 6);
        assert!(Compression::from_ordinal(9).is_none());
    }

    #[test]
    fn round_trip_every_codec() {
        let data: Vec<u8> = (0..600_000u32)
            .map(|i| (i % 251) as u8 ^ (i / 7) as u8)
            .collect();
        for c in ALL {
            for input in [&data[..], &data[..10], &[][..]] {
                let packed = c.compress(input).unwrap();
                assert_eq!(
                    c.decompress(&packed, input.len(), 0).unwrap(),
                    input,
                    "{c:?}"
                );
                if !input.is_empty() {
                    assert!(c.decompress(&packed, input.len() - 1, 0).is_err());
                }
            }
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for c in ALL {
            if c == Compression::None {
                continue;
            }
            for garbage in [
                &[1u8, 2, 3][..],
                &[0, 0, 0, 9, 0, 0, 0, 3, 1, 2, 3],
                &[0xff; 40],
            ] {
                assert!(c.decompress(garbage, 9, 0).is_err(), "{c:?}");
            }
        }
        assert!(Compression::Lzo.compress(b"x").is_err());
    }
}
