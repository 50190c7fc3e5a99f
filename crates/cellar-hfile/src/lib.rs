//! Store files in the HFile v3 layout (see `docs/format/hfile.md`): the block format with
//! CRC32C checksums, per-block compression, the five data block encodings, the
//! multi-level block index, compound bloom filters, file info and the v3 trailer; a
//! streaming writer, a reader with seeks, and a shared LRU block cache.

mod api_map;
mod block;
mod bloom;
mod bytes;
mod cache;
mod compression;
mod encoding;
mod error;
pub mod file_info;
mod index;
mod reader;
mod root_index;
mod scanner;
mod trailer;
mod verify;
mod writer;

pub use block::{read_block, Block, BlockHandle, BlockHeader, BlockType, BlockWriter, HEADER_SIZE};
pub use bloom::{murmur_hash, BloomMeta, BloomType};
pub use cache::{BlockCache, CacheStats, Cached, DataBlock};
pub use compression::Compression;
pub use encoding::{CellFormat, DataBlockEncoding};
pub use error::{HFileError, Result};
pub use file_info::FileInfo;
pub use index::{parse_non_root as parse_index_block, IndexEntry, MidKeyMetadata};
pub use reader::HFileReader;
pub use scanner::{FileScanner, Scanner};
pub use trailer::{comparator_simple_name, Trailer, TRAILER_SIZE};
pub use writer::{FileSummary, HFileWriter, WriterOptions};
