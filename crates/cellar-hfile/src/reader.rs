//! Opens a store file: trailer, load-on-open section (root index, meta index, file
//! info, bloom metas), then blocks on demand through the shared block cache.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use cellar_io::{FileSystem, ReadableFile};
use cellar_types::{Bytes, KeyRef};

use crate::block::{read_block, Block, BlockHeader, BlockType, HEADER_SIZE};
use crate::bloom::{BloomMeta, BloomType};
use crate::cache::{BlockCache, Cached, DataBlock};
use crate::compression::Compression;
use crate::encoding::{CellFormat, DataBlockEncoding};
use crate::error::{HFileError, Result};
use crate::file_info::{self as fi, FileInfo};
use crate::index::{
    parse_mid_key, parse_non_root, parse_root, search_non_root, IndexEntry, MidKeyMetadata,
};
use crate::root_index::RootIndex;
use crate::scanner::Scanner;
use crate::trailer::{Trailer, TRAILER_SIZE};

static NEXT_FILE_ID: AtomicU64 = AtomicU64::new(1);

/// An open store file. Shareable between threads; each scan takes a [`Scanner`].
pub struct HFileReader {
    file: Arc<dyn ReadableFile>,
    id: u64,
    trailer: Trailer,
    info: FileInfo,
    root: RootIndex,
    mid_key_meta: Option<MidKeyMetadata>,
    meta_index: Vec<IndexEntry>,
    fmt: CellFormat,
    compression: Compression,
    blocks_end: u64,
    bloom: Option<(BloomType, BloomMeta)>,
    delete_bloom: Option<BloomMeta>,
    /// The bloom chunks read so far, kept with the open file (RocksDB's filter blocks
    /// outside the cache, its default): a bloom check is then a hash and a bit test,
    /// without a block-cache lookup. One slot per chunk of `bloom`, then of
    /// `delete_bloom`.
    bloom_chunks: Vec<OnceLock<Arc<Block>>>,
    cache: Option<Arc<BlockCache>>,
    /// Why the blooms are bypassed, once one was found damaged (blooms are advisory:
    /// every answer is then "maybe", and reads go to the data blocks).
    bloom_damage: std::sync::Mutex<Option<String>>,
    /// Whether `bloom_damage` is set (checked on every bloom query without the lock).
    bloom_damaged: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for HFileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HFileReader")
            .field("path", &self.file.path())
            .field("entries", &self.trailer.entry_count)
            .finish()
    }
}

impl HFileReader {
    /// Opens `path` on `fs`.
    pub fn open(
        fs: &dyn FileSystem,
        path: &Path,
        cache: Option<Arc<BlockCache>>,
    ) -> Result<HFileReader> {
        HFileReader::open_file(fs.open(path)?, cache)
    }

    /// Opens an already open file.
    pub fn open_file(
        file: Arc<dyn ReadableFile>,
        cache: Option<Arc<BlockCache>>,
    ) -> Result<HFileReader> {
        let trailer = Trailer::read(file.as_ref())?;
        let compression =
            Compression::from_ordinal(trailer.compression_codec).ok_or_else(|| {
                HFileError::corrupt(
                    0,
                    format!("unknown compression ordinal {}", trailer.compression_codec),
                )
            })?;
        if !compression.is_supported() {
            return Err(HFileError::Unsupported {
                what: format!("compression codec {}", compression.name()),
            });
        }
        if trailer.encryption_key.is_some() {
            return Err(HFileError::Unsupported {
                what: "encrypted store files".into(),
            });
        }
        if trailer.num_data_index_levels > 16 {
            return Err(HFileError::corrupt(
                0,
                format!(
                    "{} data index levels (at most 16)",
                    trailer.num_data_index_levels
                ),
            ));
        }
        let blocks_end = file.len() - TRAILER_SIZE as u64;
        let read = |offset: u64| read_block(file.as_ref(), offset, blocks_end, compression);

        // Root data index, then the meta index, then file info and bloom metas.
        let root_block = read(trailer.load_on_open_offset)?;
        expect_type(&root_block, BlockType::RootIndex)?;
        let (root, rest) = parse_root(
            &root_block.payload,
            trailer.data_index_count as usize,
            root_block.offset,
        )?;
        let mid_key_meta = if trailer.num_data_index_levels > 1 {
            parse_mid_key(rest, root_block.offset)?
        } else {
            None
        };
        let mut offset = root_block.offset + root_block.header.on_disk_size_with_header();
        let meta_block = read(offset)?;
        expect_type(&meta_block, BlockType::RootIndex)?;
        let (meta_index, _) = parse_root(
            &meta_block.payload,
            trailer.meta_index_count as usize,
            meta_block.offset,
        )?;
        offset += meta_block.header.on_disk_size_with_header();
        let mut info = None;
        let mut bloom_meta = None;
        let mut delete_bloom = None;
        let mut bloom_damage = None;
        while offset < blocks_end {
            let b = match read(offset) {
                Ok(b) => b,
                Err(e) => match bloom_meta_size(file.as_ref(), offset, blocks_end) {
                    // A damaged bloom meta block: open without that bloom.
                    Some(size) => {
                        bloom_damage.get_or_insert(e.to_string());
                        offset += size;
                        continue;
                    }
                    None => return Err(e),
                },
            };
            match b.header.block_type {
                BlockType::FileInfo => {
                    if b.offset != trailer.file_info_offset {
                        return Err(HFileError::corrupt(
                            b.offset,
                            "file info block is not where the trailer says",
                        ));
                    }
                    info = Some(FileInfo::decode(&b.payload, b.offset)?)
                }
                BlockType::GeneralBloomMeta => match BloomMeta::parse(&b.payload, b.offset) {
                    Ok(m) => bloom_meta = Some(m),
                    Err(e) => {
                        bloom_damage.get_or_insert(e.to_string());
                    }
                },
                BlockType::DeleteFamilyBloomMeta => match BloomMeta::parse(&b.payload, b.offset) {
                    Ok(m) => delete_bloom = Some(m),
                    Err(e) => {
                        bloom_damage.get_or_insert(e.to_string());
                    }
                },
                _ => {}
            }
            offset += b.header.on_disk_size_with_header();
        }
        let info = info
            .ok_or_else(|| HFileError::corrupt(trailer.file_info_offset, "no file info block"))?;
        let includes_tags = info.get(fi::MAX_TAGS_LEN).is_some();
        let includes_mvcc = info.get_i32(fi::KEY_VALUE_VERSION) == Some(1);
        let tags_compressed = info
            .get(fi::TAGS_COMPRESSED)
            .is_some_and(|v| v.first().is_some_and(|b| *b != 0));
        let bloom = match bloom_meta {
            Some(meta) => {
                let name = info
                    .get(fi::BLOOM_FILTER_TYPE)
                    .map(|v| String::from_utf8_lossy(v).into_owned());
                let prefix = info
                    .get_i32(fi::BLOOM_PARAM)
                    .or_else(|| info.get_i32(fi::BLOOM_PARAM_OLD))
                    .and_then(|n| usize::try_from(n).ok());
                let t = name
                    .as_deref()
                    .and_then(|n| BloomType::from_name(n, prefix))
                    .unwrap_or(BloomType::Row);
                (t != BloomType::None).then_some((t, meta))
            }
            None => None,
        };
        let chunk_slots = bloom.as_ref().map_or(0, |(_, m)| m.chunks.len())
            + delete_bloom.as_ref().map_or(0, |m| m.chunks.len());
        Ok(HFileReader {
            bloom_chunks: (0..chunk_slots).map(|_| OnceLock::new()).collect(),
            id: NEXT_FILE_ID.fetch_add(1, Ordering::Relaxed),
            file,
            trailer,
            info,
            root: RootIndex::new(root),
            mid_key_meta,
            meta_index,
            fmt: CellFormat {
                includes_tags,
                includes_mvcc,
                compress_tags: includes_tags && tags_compressed,
            },
            compression,
            blocks_end,
            bloom,
            delete_bloom,
            cache,
            bloom_damage: std::sync::Mutex::new(None),
            bloom_damaged: std::sync::atomic::AtomicBool::new(false),
        }
        .with_bloom_damage(bloom_damage))
    }

    fn with_bloom_damage(self, damage: Option<String>) -> HFileReader {
        if let Some(d) = damage {
            self.bloom_damaged(d);
        }
        self
    }

    /// Records a damaged bloom (warning once per file); from then on every bloom
    /// answer is "maybe".
    fn bloom_damaged(&self, why: String) {
        let mut d = self.bloom_damage.lock().unwrap_or_else(|e| e.into_inner());
        if d.is_none() {
            tracing::warn!(
                file = %self.file.path().display(),
                "bloom filter damaged, bypassed (reads use the data blocks): {why}"
            );
            *d = Some(why);
            self.bloom_damaged.store(true, Ordering::Release);
        }
    }

    /// Why this file's blooms are bypassed, if one was found damaged.
    pub fn bloom_damage(&self) -> Option<String> {
        self.bloom_damage
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The file's identity in the block cache.
    pub fn id(&self) -> u64 {
        self.id
    }
    pub fn path(&self) -> &Path {
        self.file.path()
    }
    pub fn trailer(&self) -> &Trailer {
        &self.trailer
    }
    pub fn file_info(&self) -> &FileInfo {
        &self.info
    }
    pub fn entry_count(&self) -> u64 {
        self.trailer.entry_count
    }
    pub fn file_size(&self) -> u64 {
        self.file.len()
    }
    pub(crate) fn file_handle(&self) -> &dyn ReadableFile {
        self.file.as_ref()
    }
    pub fn compression(&self) -> Compression {
        self.compression
    }
    pub fn cell_format(&self) -> CellFormat {
        self.fmt
    }
    pub fn root_index(&self) -> &[IndexEntry] {
        self.root.entries()
    }
    pub fn meta_index(&self) -> &[IndexEntry] {
        &self.meta_index
    }
    pub fn bloom(&self) -> Option<&(BloomType, BloomMeta)> {
        self.bloom.as_ref()
    }
    pub fn delete_family_bloom(&self) -> Option<&BloomMeta> {
        self.delete_bloom.as_ref()
    }
    pub fn cache(&self) -> Option<&Arc<BlockCache>> {
        self.cache.as_ref()
    }

    /// The data block encoding named in the file info.
    pub fn data_block_encoding(&self) -> Result<DataBlockEncoding> {
        match self.info.get(fi::DATA_BLOCK_ENCODING) {
            None => Ok(DataBlockEncoding::None),
            Some(v) => {
                let name = String::from_utf8_lossy(v);
                DataBlockEncoding::from_name(&name).ok_or_else(|| HFileError::Unsupported {
                    what: format!("data block encoding {name}"),
                })
            }
        }
    }

    /// The last key of the file (file info LASTKEY).
    pub fn last_key(&self) -> Option<&[u8]> {
        self.info.get(fi::LASTKEY)
    }

    /// True when the file has at least one data block.
    pub fn has_data(&self) -> bool {
        self.trailer.entry_count > 0 && self.trailer.first_data_block_offset < self.blocks_end
    }

    /// Reads a block (through the cache).
    pub fn block_at(&self, offset: u64) -> Result<Arc<Block>> {
        if let Some(Cached::Raw(b)) = self.cache.as_ref().and_then(|c| c.get(self.id, offset)) {
            return Ok(b);
        }
        let b = Arc::new(read_block(
            self.file.as_ref(),
            offset,
            self.blocks_end,
            self.compression,
        )?);
        if let Some(c) = &self.cache {
            c.insert(self.id, offset, Cached::Raw(b.clone()));
        }
        Ok(b)
    }

    /// Reads and decodes the data block at `offset` (through the cache).
    pub fn data_block_at(&self, offset: u64) -> Result<Arc<DataBlock>> {
        self.data_block_cached(offset, true)
    }

    /// Reads and decodes the data block at `offset`, from the cache when there; with
    /// `cache` false a block read from the file is not added to it (HBase's
    /// `Scan.setCacheBlocks(false)`, for scans that would only evict hot blocks).
    pub fn data_block_cached(&self, offset: u64, cache: bool) -> Result<Arc<DataBlock>> {
        if let Some(Cached::Data(d)) = self.cache.as_ref().and_then(|c| c.get(self.id, offset)) {
            return Ok(d);
        }
        let b = read_block(
            self.file.as_ref(),
            offset,
            self.blocks_end,
            self.compression,
        )?;
        self.decode_data_block(b, cache)
    }

    /// Decodes a data block read from the file (cells share its payload) and caches it
    /// when `cache`.
    fn decode_data_block(&self, b: Block, cache: bool) -> Result<Arc<DataBlock>> {
        let offset = b.offset;
        if !b.header.block_type.is_data() {
            return Err(HFileError::corrupt(
                offset,
                format!(
                    "expected a data block, found {}",
                    b.header.block_type.name()
                ),
            ));
        }
        let encoded = b.header.block_type == BlockType::EncodedData;
        let payload = Bytes::from(b.payload);
        let cells = DataBlockEncoding::decode_shared(&payload, encoded, self.fmt, offset)?;
        let d = Arc::new(DataBlock::new(offset, b.header, cells));
        if let Some(c) = self.cache.as_ref().filter(|_| cache) {
            c.insert(self.id, offset, Cached::Data(d.clone()));
        }
        Ok(d)
    }

    /// The data block that follows the block ending at `offset`, skipping inline index
    /// and bloom blocks; None past the last data block.
    pub fn next_data_block(&self, offset: u64) -> Result<Option<Arc<DataBlock>>> {
        self.next_data_block_cached(offset, true)
    }

    /// [`HFileReader::next_data_block`], caching what it reads only when `cache`.
    pub fn next_data_block_cached(
        &self,
        mut offset: u64,
        cache: bool,
    ) -> Result<Option<Arc<DataBlock>>> {
        loop {
            if !self.has_data() || offset > self.trailer.last_data_block_offset {
                return Ok(None);
            }
            // A decoded data block already cached answers without reading the raw one
            // (which would also evict it: both live under the block's offset).
            if let Some(Cached::Data(d)) = self.cache.as_ref().and_then(|c| c.get(self.id, offset))
            {
                return Ok(Some(d));
            }
            let b = match self.cache.as_ref().and_then(|c| c.get(self.id, offset)) {
                Some(Cached::Raw(b)) => b,
                _ => {
                    let b = read_block(
                        self.file.as_ref(),
                        offset,
                        self.blocks_end,
                        self.compression,
                    )?;
                    if b.header.block_type.is_data() {
                        return self.decode_data_block(b, cache).map(Some);
                    }
                    Arc::new(b)
                }
            };
            if b.header.block_type.is_data() {
                return self.data_block_cached(offset, cache).map(Some);
            }
            offset += b.header.on_disk_size_with_header();
        }
    }

    /// The first data block, if any.
    pub fn first_data_block(&self) -> Result<Option<Arc<DataBlock>>> {
        if !self.has_data() {
            return Ok(None);
        }
        self.next_data_block(self.trailer.first_data_block_offset)
    }

    /// The data block before `block`, if any.
    pub fn prev_data_block(&self, block: &DataBlock) -> Result<Option<Arc<DataBlock>>> {
        let prev = block.header.prev_block_offset;
        if prev < 0 {
            return Ok(None);
        }
        if prev as u64 >= block.offset {
            return Err(HFileError::corrupt(
                block.offset,
                "previous block offset does not precede the block",
            ));
        }
        self.data_block_at(prev as u64).map(Some)
    }

    /// The offset of the data block that may hold `key`, descending every index level
    /// (each non-root level searched where its cached block lies); None when `key`
    /// sorts before the first block.
    pub fn locate(&self, key: &KeyRef<'_>) -> Result<Option<u64>> {
        let Some(i) = self.root.search(key, self.trailer.load_on_open_offset)? else {
            return Ok(None);
        };
        let mut at = self.root.entries()[i].offset;
        for _ in 1..self.trailer.num_data_index_levels.max(1) {
            let b = self.block_at(at)?;
            if !matches!(
                b.header.block_type,
                BlockType::LeafIndex | BlockType::IntermediateIndex
            ) {
                return Err(HFileError::corrupt(
                    at,
                    "index entry does not point at an index block",
                ));
            }
            at = search_non_root(&b.payload, key, at)?.0;
        }
        Ok(Some(at))
    }

    /// HBase's mid-key: from the mid-key metadata of a multi-level index, else the
    /// middle root entry. Possibly a shortened key; its row is a valid split point.
    pub fn mid_key(&self) -> Result<Option<Vec<u8>>> {
        if self.root.entries().is_empty() {
            return Ok(None);
        }
        if let Some(m) = self.mid_key_meta {
            let b = self.block_at(m.leaf_offset)?;
            let entries = parse_non_root(&b.payload, m.leaf_offset)?;
            return entries
                .get(m.entry as usize)
                .map(|e| Some(e.key.clone()))
                .ok_or_else(|| HFileError::corrupt(m.leaf_offset, "mid-key entry out of range"));
        }
        let root = self.root.entries();
        Ok(Some(root[root.len() / 2].key.clone()))
    }

    /// Reads a named meta block.
    pub fn meta_block(&self, name: &[u8]) -> Result<Option<Vec<u8>>> {
        match self.meta_index.iter().find(|e| e.key == name) {
            None => Ok(None),
            Some(e) => Ok(Some(self.block_at(e.offset)?.payload.clone())),
        }
    }

    /// A bloom's answer; a damaged bloom answers "maybe" (and is bypassed from then on).
    /// `first_slot`: where `meta`'s chunks start in `bloom_chunks`.
    fn bloom_check(
        &self,
        meta: &BloomMeta,
        first_slot: usize,
        hash_key: &[u8],
        cell_keys: bool,
    ) -> Result<bool> {
        if self.bloom_damaged.load(Ordering::Acquire) {
            return Ok(true);
        }
        let Some(i) = meta.chunk_index_for(hash_key, cell_keys) else {
            return Ok(false);
        };
        let slot = self.bloom_chunks.get(first_slot + i);
        if let Some(b) = slot.and_then(OnceLock::get) {
            return Ok(meta.chunk_contains(&b.payload, hash_key));
        }
        let offset = meta.chunks[i].offset;
        let b = match self.block_at(offset) {
            Ok(b) => b,
            Err(e) => {
                self.bloom_damaged(e.to_string());
                return Ok(true);
            }
        };
        if b.header.block_type != BlockType::Bloom {
            self.bloom_damaged(format!(
                "bloom index points at a non-bloom block at offset {offset}"
            ));
            return Ok(true);
        }
        let found = meta.chunk_contains(&b.payload, hash_key);
        if let Some(slot) = slot {
            let _ = slot.set(b);
        }
        Ok(found)
    }

    /// False when the bloom filter proves the row is absent. Without a usable bloom the
    /// answer is true.
    pub fn might_contain_row(&self, row: &[u8]) -> Result<bool> {
        if !self.has_data() {
            return Ok(false);
        }
        match &self.bloom {
            Some((t @ (BloomType::Row | BloomType::RowPrefixFixedLength(_)), meta)) => {
                if let BloomType::RowPrefixFixedLength(n) = t {
                    if row.len() < *n {
                        return Ok(true);
                    }
                }
                let key = match t {
                    BloomType::RowPrefixFixedLength(n) => &row[..(*n).min(row.len())],
                    _ => row,
                };
                self.bloom_check(meta, 0, key, false)
            }
            _ => Ok(true),
        }
    }

    /// False when a ROWCOL bloom proves (row, qualifier) is absent; other blooms answer
    /// for the row.
    pub fn might_contain_row_col(&self, row: &[u8], qualifier: &[u8]) -> Result<bool> {
        match &self.bloom {
            Some((BloomType::RowCol, meta)) => {
                self.bloom_check(meta, 0, &BloomType::RowCol.hash_key(row, qualifier), true)
            }
            _ => self.might_contain_row(row),
        }
    }

    /// False when the file provably holds no DeleteFamily marker for `row`.
    pub fn might_contain_delete_family(&self, row: &[u8]) -> Result<bool> {
        if self.info.get_i64(fi::DELETE_FAMILY_COUNT) == Some(0) {
            return Ok(false);
        }
        match &self.delete_bloom {
            Some(meta) => {
                // The delete bloom's slots follow the general bloom's.
                let first = self.bloom.as_ref().map_or(0, |(_, m)| m.chunks.len());
                self.bloom_check(meta, first, row, false)
            }
            None => Ok(true),
        }
    }

    /// A scanner positioned nowhere; call a seek first.
    pub fn scanner(&self) -> Scanner<'_> {
        Scanner::new(self)
    }
}

/// When the load-on-open block at `offset` cannot be read but its header says it is a
/// bloom meta block, the block's size (so that it can be skipped).
fn bloom_meta_size(file: &dyn ReadableFile, offset: u64, limit: u64) -> Option<u64> {
    let mut head = [0u8; HEADER_SIZE];
    if offset.checked_add(HEADER_SIZE as u64)? > limit {
        return None;
    }
    file.read_at(offset, &mut head).ok()?;
    let h = BlockHeader::parse(&head, offset).ok()?;
    let size = h.on_disk_size_with_header();
    let bloom = matches!(
        h.block_type,
        BlockType::GeneralBloomMeta | BlockType::DeleteFamilyBloomMeta
    );
    (bloom && size > 0 && offset.checked_add(size)? <= limit).then_some(size)
}

fn expect_type(b: &Block, t: BlockType) -> Result<()> {
    if b.header.block_type != t {
        return Err(HFileError::corrupt(
            b.offset,
            format!(
                "expected {} block, found {}",
                t.name(),
                b.header.block_type.name()
            ),
        ));
    }
    Ok(())
}
