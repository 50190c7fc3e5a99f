//! The block format (§3.2): a 33-byte header, the (compressed) payload, then one CRC32C
//! per `bytes_per_checksum` chunk of header + payload. Every block read verifies the
//! checksums before anything is decoded.

use cellar_io::{ReadableFile, WritableFile};

use crate::compression::Compression;
use crate::error::{HFileError, Result};

/// Size of a block header with HBase checksums.
pub const HEADER_SIZE: usize = 33;
/// Default checksum chunk (`hbase.hstore.bytes.per.checksum`).
pub const DEFAULT_BYTES_PER_CHECKSUM: u32 = 16384;
/// Checksum type code for CRC32C.
pub const CHECKSUM_CRC32C: u8 = 2;

/// The kinds of block, by their 8-byte magic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockType {
    Data,
    EncodedData,
    LeafIndex,
    Bloom,
    Meta,
    IntermediateIndex,
    RootIndex,
    FileInfo,
    GeneralBloomMeta,
    DeleteFamilyBloomMeta,
    Trailer,
    IndexV1,
}

impl BlockType {
    pub fn magic(self) -> &'static [u8; 8] {
        match self {
            BlockType::Data => b"DATABLK*",
            BlockType::EncodedData => b"DATABLKE",
            BlockType::LeafIndex => b"IDXLEAF2",
            BlockType::Bloom => b"BLMFBLK2",
            BlockType::Meta => b"METABLKc",
            BlockType::IntermediateIndex => b"IDXINTE2",
            BlockType::RootIndex => b"IDXROOT2",
            BlockType::FileInfo => b"FILEINF2",
            BlockType::GeneralBloomMeta => b"BLMFMET2",
            BlockType::DeleteFamilyBloomMeta => b"DFBLMET2",
            BlockType::Trailer => b"TRABLK\"$",
            BlockType::IndexV1 => b"IDXBLK)+",
        }
    }

    pub fn from_magic(magic: &[u8]) -> Option<BlockType> {
        use BlockType::*;
        [
            Data,
            EncodedData,
            LeafIndex,
            Bloom,
            Meta,
            IntermediateIndex,
            RootIndex,
            FileInfo,
            GeneralBloomMeta,
            DeleteFamilyBloomMeta,
            Trailer,
            IndexV1,
        ]
        .into_iter()
        .find(|t| &t.magic()[..] == magic)
    }

    pub fn is_data(self) -> bool {
        matches!(self, BlockType::Data | BlockType::EncodedData)
    }

    /// The magic as text, for tools.
    pub fn name(self) -> String {
        String::from_utf8_lossy(self.magic()).into_owned()
    }
}

/// A parsed block header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockHeader {
    pub block_type: BlockType,
    /// Compressed payload plus checksums.
    pub on_disk_size_without_header: u32,
    pub uncompressed_size_without_header: u32,
    /// Offset of the previous block of the same type, or -1.
    pub prev_block_offset: i64,
    pub checksum_type: u8,
    pub bytes_per_checksum: u32,
    /// Header plus on-disk payload, without checksums.
    pub on_disk_data_size_with_header: u32,
}

impl BlockHeader {
    /// Parses and sanity-checks a header read at `offset`.
    pub fn parse(buf: &[u8], offset: u64) -> Result<BlockHeader> {
        if buf.len() < HEADER_SIZE {
            return Err(HFileError::corrupt(offset, "block header truncated"));
        }
        let block_type = BlockType::from_magic(&buf[..8]).ok_or_else(|| {
            HFileError::corrupt(
                offset,
                format!(
                    "unknown block magic {}",
                    cellar_types::to_string_binary(&buf[..8])
                ),
            )
        })?;
        let i32_at = |p: usize| i32::from_be_bytes([buf[p], buf[p + 1], buf[p + 2], buf[p + 3]]);
        let nonneg = |p: usize, what: &str| -> Result<u32> {
            u32::try_from(i32_at(p)).map_err(|_| {
                HFileError::corrupt(offset, format!("negative {what} in block header"))
            })
        };
        let mut prev = [0u8; 8];
        prev.copy_from_slice(&buf[16..24]);
        let h = BlockHeader {
            block_type,
            on_disk_size_without_header: nonneg(8, "on-disk size")?,
            uncompressed_size_without_header: nonneg(12, "uncompressed size")?,
            prev_block_offset: i64::from_be_bytes(prev),
            checksum_type: buf[24],
            bytes_per_checksum: nonneg(25, "bytes per checksum")?,
            on_disk_data_size_with_header: nonneg(29, "data size")?,
        };
        let data = h.on_disk_data_size_with_header as usize;
        if data < HEADER_SIZE {
            return Err(HFileError::corrupt(
                offset,
                "block data size smaller than its header",
            ));
        }
        if h.checksum_type > 2 {
            return Err(HFileError::corrupt(
                offset,
                format!("unknown checksum type {}", h.checksum_type),
            ));
        }
        if h.checksum_type != 0 && h.bytes_per_checksum == 0 {
            return Err(HFileError::corrupt(offset, "zero bytes per checksum"));
        }
        if h.on_disk_size_without_header as usize + HEADER_SIZE < data + h.checksum_bytes() {
            return Err(HFileError::corrupt(
                offset,
                "block sizes in header are inconsistent",
            ));
        }
        Ok(h)
    }

    /// Bytes of checksums that follow the data.
    pub fn checksum_bytes(&self) -> usize {
        if self.checksum_type == 0 {
            return 0;
        }
        (self.on_disk_data_size_with_header as usize).div_ceil(self.bytes_per_checksum as usize) * 4
    }

    /// Whole block on disk: header, payload and checksums.
    pub fn on_disk_size_with_header(&self) -> u64 {
        self.on_disk_size_without_header as u64 + HEADER_SIZE as u64
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.block_type.magic());
        out.extend_from_slice(&self.on_disk_size_without_header.to_be_bytes());
        out.extend_from_slice(&self.uncompressed_size_without_header.to_be_bytes());
        out.extend_from_slice(&self.prev_block_offset.to_be_bytes());
        out.push(self.checksum_type);
        out.extend_from_slice(&self.bytes_per_checksum.to_be_bytes());
        out.extend_from_slice(&self.on_disk_data_size_with_header.to_be_bytes());
    }
}

/// A block read from a file: its header, its offset and its uncompressed payload.
#[derive(Debug)]
pub struct Block {
    pub offset: u64,
    pub header: BlockHeader,
    pub payload: Vec<u8>,
}

impl Block {
    /// Bytes this block holds in memory (for cache accounting).
    pub fn heap_size(&self) -> usize {
        self.payload.len() + std::mem::size_of::<Block>()
    }
}

fn crc32(kind: u8, data: &[u8]) -> u32 {
    match kind {
        1 => crc32_ieee(data),
        _ => crc32c::crc32c(data),
    }
}

/// The checksum of `a` followed by `b` (a chunk that starts in a block's header).
fn crc32_pair(kind: u8, a: &[u8], b: &[u8]) -> u32 {
    match kind {
        1 => crc32_ieee_from(crc32_ieee(a), b),
        _ => crc32c::crc32c_append(crc32c::crc32c(a), b),
    }
}

/// Plain CRC32 (checksum type 1), bitwise; only old files use it.
fn crc32_ieee(data: &[u8]) -> u32 {
    crc32_ieee_from(0, data)
}

/// The plain CRC32 of the bytes whose CRC32 is `start` followed by `data`.
fn crc32_ieee_from(start: u32, data: &[u8]) -> u32 {
    let mut crc = !start;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Reads, verifies and decompresses the block at `offset`. `limit` is the end of the
/// region blocks may occupy (the start of the trailer).
pub fn read_block(
    file: &dyn ReadableFile,
    offset: u64,
    limit: u64,
    compression: Compression,
) -> Result<Block> {
    if offset
        .checked_add(HEADER_SIZE as u64)
        .is_none_or(|end| end > limit)
    {
        return Err(HFileError::corrupt(
            offset,
            "block header runs past the block section",
        ));
    }
    let mut head = [0u8; HEADER_SIZE];
    file.read_at(offset, &mut head)?;
    let header = BlockHeader::parse(&head, offset)?;
    let total = header.on_disk_size_with_header();
    if offset + total > limit {
        return Err(HFileError::corrupt(
            offset,
            "block runs past the block section",
        ));
    }
    // The body (payload, then checksums) is read apart from the header: an
    // uncompressed block's payload is then its own buffer, where it was copied out of
    // one holding the whole block.
    let data_end = header.on_disk_data_size_with_header as usize;
    let mut body = vec![0u8; total as usize - HEADER_SIZE];
    file.read_at(offset + HEADER_SIZE as u64, &mut body)?;
    let sums = body.split_off(data_end - HEADER_SIZE);
    if header.checksum_type != 0 {
        let per = header.bytes_per_checksum as usize;
        // Chunks of `per` bytes over the header and the payload together.
        for chunk in 0..data_end.div_ceil(per) {
            let (lo, hi) = (chunk * per, ((chunk + 1) * per).min(data_end));
            let computed = if lo < HEADER_SIZE {
                crc32_pair(
                    header.checksum_type,
                    &head[lo..hi.min(HEADER_SIZE)],
                    &body[..hi.saturating_sub(HEADER_SIZE)],
                )
            } else {
                crc32(
                    header.checksum_type,
                    &body[lo - HEADER_SIZE..hi - HEADER_SIZE],
                )
            };
            let s = &sums[chunk * 4..chunk * 4 + 4];
            let stored = u32::from_be_bytes([s[0], s[1], s[2], s[3]]);
            if stored != computed {
                return Err(HFileError::Checksum {
                    offset,
                    chunk,
                    stored,
                    computed,
                });
            }
        }
    }
    let expected = header.uncompressed_size_without_header as usize;
    // HBase 2 compresses every block (data, index, file info, bloom) with the file's codec.
    let payload = if compression == Compression::None {
        if body.len() != expected {
            return Err(HFileError::corrupt(
                offset,
                format!(
                    "uncompressed block holds {} bytes, header says {expected}",
                    body.len()
                ),
            ));
        }
        body
    } else {
        compression.decompress(&body, expected, offset)?
    };
    Ok(Block {
        offset,
        header,
        payload,
    })
}

/// Writes blocks to a file, tracking offsets and the previous block of each type.
pub struct BlockWriter {
    file: Box<dyn WritableFile>,
    compression: Compression,
    bytes_per_checksum: u32,
    prev_offsets: std::collections::HashMap<BlockType, i64>,
    offset: u64,
    /// Header plus uncompressed payload of every block written so far.
    uncompressed_total: u64,
}

/// Where a written block landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockHandle {
    pub offset: u64,
    /// Whole block on disk, header and checksums included.
    pub on_disk_size: u32,
    /// Header plus uncompressed payload.
    pub uncompressed_size_with_header: u32,
}

impl BlockHandle {
    /// The uncompressed payload alone.
    pub fn uncompressed_size_without_header(&self) -> u32 {
        self.uncompressed_size_with_header - HEADER_SIZE as u32
    }
}

impl BlockWriter {
    pub fn new(file: Box<dyn WritableFile>, compression: Compression) -> BlockWriter {
        BlockWriter {
            file,
            compression,
            bytes_per_checksum: DEFAULT_BYTES_PER_CHECKSUM,
            prev_offsets: Default::default(),
            offset: 0,
            uncompressed_total: 0,
        }
    }

    /// Current end of file.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Header plus uncompressed payload of every block written so far.
    pub fn uncompressed_total(&self) -> u64 {
        self.uncompressed_total
    }

    /// Compresses, checksums and appends one block.
    pub fn write_block(&mut self, block_type: BlockType, payload: &[u8]) -> Result<BlockHandle> {
        let packed;
        let on_disk_payload: &[u8] = if self.compression != Compression::None {
            packed = self.compression.compress(payload)?;
            &packed
        } else {
            payload
        };
        let too_big = || HFileError::InvalidOption("block larger than 2 GiB".into());
        let data_size = u32::try_from(HEADER_SIZE + on_disk_payload.len())
            .ok()
            .filter(|s| *s <= i32::MAX as u32)
            .ok_or_else(too_big)?;
        let sums = (data_size as usize).div_ceil(self.bytes_per_checksum as usize) * 4;
        let header = BlockHeader {
            block_type,
            on_disk_size_without_header: (on_disk_payload.len() + sums) as u32,
            uncompressed_size_without_header: u32::try_from(payload.len())
                .map_err(|_| too_big())?,
            prev_block_offset: *self.prev_offsets.get(&block_type).unwrap_or(&-1),
            checksum_type: CHECKSUM_CRC32C,
            bytes_per_checksum: self.bytes_per_checksum,
            on_disk_data_size_with_header: data_size,
        };
        let mut out = Vec::with_capacity(data_size as usize + sums);
        header.write(&mut out);
        out.extend_from_slice(on_disk_payload);
        let mut crcs = Vec::with_capacity(sums);
        for chunk in out.chunks(self.bytes_per_checksum as usize) {
            crcs.extend_from_slice(&crc32c::crc32c(chunk).to_be_bytes());
        }
        out.extend_from_slice(&crcs);
        self.file.append(&out)?;
        let handle = BlockHandle {
            offset: self.offset,
            on_disk_size: out.len() as u32,
            uncompressed_size_with_header: (HEADER_SIZE + payload.len()) as u32,
        };
        self.prev_offsets.insert(block_type, self.offset as i64);
        self.offset += out.len() as u64;
        self.uncompressed_total += handle.uncompressed_size_with_header as u64;
        Ok(handle)
    }

    /// Appends raw bytes (the trailer).
    pub fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.file.append(bytes)?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Makes the file durable and closes it.
    pub fn finish(mut self) -> Result<u64> {
        self.file.sync()?;
        Ok(self.offset)
    }
}

#[cfg(test)]
#[path = "block_tests.rs"]
mod tests;
