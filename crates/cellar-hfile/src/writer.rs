//! Streams sorted cells into a store file: data blocks closed at the block size, the
//! block index, bloom filters, meta blocks, file info and the trailer.

use std::path::Path;

use cellar_io::FileSystem;
use std::cmp::Ordering;

use cellar_types::{
    compare_rows, compare_within_row, same_bytes, to_string_binary, Cell, CellType,
};

use crate::block::{BlockType, BlockWriter};
use crate::bloom::{BloomType, BloomWriter};
use crate::compression::Compression;
use crate::encoding::{CellFormat, DataBlockEncoding};
use crate::error::{HFileError, Result};
use crate::file_info::{self as fi, FileInfo};
use crate::index::{encode_single_level, short_separator, IndexEntry, IndexWriter};
use crate::trailer::{Trailer, KV_COMPARATOR, MAJOR_VERSION, MINOR_VERSION};

/// How a store file is written; defaults are HBase's.
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// BLOCKSIZE: a data block is closed once its cells reach this many bytes.
    pub block_size: usize,
    pub compression: Compression,
    pub encoding: DataBlockEncoding,
    pub bloom: BloomType,
    /// `io.storefile.bloom.block.size`.
    pub bloom_block_size: usize,
    /// `io.storefile.bloom.error.rate`.
    pub bloom_error_rate: f64,
    /// `hfile.index.block.max.size`.
    pub index_block_max_size: usize,
    /// `hfile.index.block.min.entries`.
    pub index_min_entries: usize,
    /// Write per-cell tags lengths (HFile v3 default).
    pub include_tags: bool,
    /// Compress tags through a per-block dictionary in PREFIX, DIFF and FAST_DIFF
    /// blocks (a family's `COMPRESS_TAGS`, HBase's default on; recorded as
    /// `hfile.TAGS_COMPRESSED`).
    pub compress_tags: bool,
    /// File creation time written as `hfile.CREATE_TIME_TS`.
    pub create_time: i64,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            block_size: 65536,
            compression: Compression::None,
            encoding: DataBlockEncoding::None,
            bloom: BloomType::Row,
            bloom_block_size: 131072,
            bloom_error_rate: 0.01,
            index_block_max_size: 131072,
            index_min_entries: 16,
            include_tags: true,
            compress_tags: false,
            create_time: 0,
        }
    }
}

/// What a finished file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSummary {
    pub entries: u64,
    pub data_blocks: u64,
    pub file_size: u64,
    pub index_levels: u32,
}

/// Writes one store file (one column family) from cells appended in sorted order.
pub struct HFileWriter {
    w: BlockWriter,
    opts: WriterOptions,
    fmt: CellFormat,
    block: Vec<Cell>,
    block_bytes: usize,
    prev_block_last_key: Option<Cell>,
    index: IndexWriter,
    bloom: Option<BloomWriter>,
    delete_bloom: BloomWriter,
    /// The bloom key of the cell being appended (kept: no allocation per row).
    hash_key: Vec<u8>,
    meta: Vec<(Vec<u8>, Vec<u8>)>,
    info: FileInfo,
    entries: u64,
    data_blocks: u64,
    key_bytes: u64,
    value_bytes: u64,
    max_seq: u64,
    max_tags: usize,
    min_ts: i64,
    max_ts: i64,
    earliest_put: i64,
    delete_family: u64,
    first_data_block: Option<u64>,
    last_data_block: u64,
}

impl HFileWriter {
    /// Creates the file at `path`.
    pub fn create(fs: &dyn FileSystem, path: &Path, opts: WriterOptions) -> Result<HFileWriter> {
        if !opts.compression.is_supported() {
            return Err(HFileError::Unsupported {
                what: format!("compression codec {}", opts.compression.name()),
            });
        }
        if opts.block_size == 0 {
            return Err(HFileError::InvalidOption(
                "block size must be positive".into(),
            ));
        }
        if !(opts.bloom_error_rate > 0.0 && opts.bloom_error_rate < 1.0) {
            return Err(HFileError::InvalidOption(
                "bloom error rate must be in (0, 1)".into(),
            ));
        }
        if let BloomType::RowPrefixFixedLength(0) = opts.bloom {
            return Err(HFileError::InvalidOption(
                "bloom prefix length must be positive".into(),
            ));
        }
        let file = fs.create(path)?;
        let bloom = (opts.bloom != BloomType::None)
            .then(|| BloomWriter::new(opts.bloom, opts.bloom_block_size, opts.bloom_error_rate));
        Ok(HFileWriter {
            w: BlockWriter::new(file, opts.compression),
            fmt: CellFormat {
                includes_tags: opts.include_tags,
                includes_mvcc: true,
                // As HBase: tags are compressed only in the buffered encodings.
                compress_tags: opts.include_tags
                    && opts.compress_tags
                    && matches!(
                        opts.encoding,
                        DataBlockEncoding::Prefix
                            | DataBlockEncoding::Diff
                            | DataBlockEncoding::FastDiff
                    ),
            },
            block: Vec::new(),
            block_bytes: 0,
            prev_block_last_key: None,
            index: IndexWriter::new(opts.index_block_max_size, opts.index_min_entries),
            bloom,
            hash_key: Vec::new(),
            delete_bloom: BloomWriter::new(
                BloomType::Row,
                opts.bloom_block_size,
                opts.bloom_error_rate,
            ),
            meta: Vec::new(),
            info: FileInfo::default(),
            entries: 0,
            data_blocks: 0,
            key_bytes: 0,
            value_bytes: 0,
            max_seq: 0,
            max_tags: 0,
            min_ts: i64::MAX,
            max_ts: i64::MIN,
            earliest_put: i64::MAX,
            delete_family: 0,
            first_data_block: None,
            last_data_block: u64::MAX,
            opts,
        })
    }

    /// Adds a file info entry (store-level keys such as `MAX_SEQ_ID_KEY`).
    pub fn add_file_info(&mut self, key: &[u8], value: impl Into<Vec<u8>>) {
        self.info.insert(key, value);
    }

    /// Adds a named meta block.
    pub fn add_meta_block(&mut self, name: &[u8], payload: Vec<u8>) {
        self.meta.push((name.to_vec(), payload));
    }

    /// Appends a cell; cells must come in sort order and share one family.
    pub fn append(&mut self, cell: Cell) -> Result<()> {
        if self.fmt.compress_tags && crate::encoding::split_tags(cell.tags()).is_none() {
            return Err(HFileError::InvalidOption(format!(
                "malformed tags cannot be compressed: {}",
                describe(&cell)
            )));
        }
        let (same_row, same_column, new_key) =
            match self.block.last().or(self.prev_block_last_key.as_ref()) {
                Some(last) => {
                    let same_row = same_bytes(last.row(), cell.row());
                    // One comparison gives both the order and whether the key is new:
                    // rows compared once, the rest of the key only within a row.
                    let keys = if same_row {
                        compare_within_row(&last.key_ref(), &cell.key_ref())
                    } else {
                        compare_rows(last.row(), cell.row())
                    };
                    if keys.then_with(|| cell.seq_id().cmp(&last.seq_id())) == Ordering::Greater {
                        return Err(HFileError::OutOfOrder {
                            previous: describe(last),
                            next: describe(&cell),
                        });
                    }
                    if !same_bytes(last.family(), cell.family()) {
                        return Err(HFileError::InvalidOption(format!(
                            "a store file holds one family: {} then {}",
                            to_string_binary(last.family()),
                            to_string_binary(cell.family())
                        )));
                    }
                    let same_column = same_row && same_bytes(last.qualifier(), cell.qualifier());
                    (same_row, same_column, keys != Ordering::Equal)
                }
                None => (false, false, false),
            };
        if new_key && self.block_bytes >= self.opts.block_size {
            self.finish_block()?;
        }
        if let Some(bloom) = &mut self.bloom {
            // A bloom holds each key once: a key equal to the last one's is not hashed
            // again.
            let new_key = match self.opts.bloom {
                BloomType::RowCol => !same_column,
                _ => !same_row,
            };
            if new_key {
                match self.opts.bloom {
                    BloomType::Row => bloom.add(cell.row()),
                    other => {
                        other.hash_key_into(cell.row(), cell.qualifier(), &mut self.hash_key);
                        bloom.add(&self.hash_key);
                    }
                }
            }
        }
        if matches!(
            cell.cell_type(),
            CellType::DeleteFamily | CellType::DeleteFamilyVersion
        ) {
            self.delete_family += 1;
            self.delete_bloom.add(cell.row());
        }
        self.entries += 1;
        self.key_bytes += cell.key_len() as u64;
        self.value_bytes += cell.value().len() as u64;
        self.max_seq = self.max_seq.max(cell.seq_id());
        self.max_tags = self.max_tags.max(cell.tags().len());
        self.min_ts = self.min_ts.min(cell.timestamp());
        self.max_ts = self.max_ts.max(cell.timestamp());
        if cell.cell_type() == CellType::Put {
            self.earliest_put = self.earliest_put.min(cell.timestamp());
        }
        self.block_bytes += cell.serialized_size(self.fmt.includes_tags);
        self.block.push(cell);
        Ok(())
    }

    fn finish_block(&mut self) -> Result<()> {
        if self.block.is_empty() {
            return Ok(());
        }
        let payload = self.opts.encoding.encode(&self.block, self.fmt);
        let block_type = if self.opts.encoding == DataBlockEncoding::None {
            BlockType::Data
        } else {
            BlockType::EncodedData
        };
        let h = self.w.write_block(block_type, &payload)?;
        self.first_data_block.get_or_insert(h.offset);
        self.last_data_block = h.offset;
        self.data_blocks += 1;
        let first = &self.block[0];
        let key = match &self.prev_block_last_key {
            Some(prev) => short_separator(&prev.key_ref(), &first.key_ref()),
            None => first.key_bytes(),
        };
        self.index.add(key, h);
        self.prev_block_last_key = self.block.pop();
        self.block.clear();
        self.block_bytes = 0;
        // Inline blocks follow the data block: leaf index, then bloom chunks.
        self.index.maybe_write_leaf(&mut self.w)?;
        if let Some(b) = &mut self.bloom {
            b.write_ready(&mut self.w)?;
        }
        self.delete_bloom.write_ready(&mut self.w)?;
        Ok(())
    }

    /// Writes everything that remains, syncs and closes the file.
    pub fn close(mut self) -> Result<FileSummary> {
        self.finish_block()?;
        self.index.finish_inline(&mut self.w)?;
        let bloom_meta = match &mut self.bloom {
            Some(b) => b.finish_inline(&mut self.w)?,
            None => None,
        };
        let delete_meta = self.delete_bloom.finish_inline(&mut self.w)?;
        // Non-scanned section: meta blocks.
        let mut meta_index = Vec::new();
        for (name, payload) in std::mem::take(&mut self.meta) {
            let h = self.w.write_block(BlockType::Meta, &payload)?;
            meta_index.push(IndexEntry {
                key: name,
                offset: h.offset,
                on_disk_size: h.on_disk_size,
            });
        }
        // Load-on-open section: root data index (after any intermediate levels), meta
        // index, file info, bloom metas.
        let index = std::mem::replace(&mut self.index, IndexWriter::new(1, 1));
        let before_index = self.w.uncompressed_total();
        let written = index.finish(&mut self.w)?;
        // HBase's totalUncompressedBytes counts every block but the data index's root and
        // intermediate levels (written by the index writer itself), plus the trailer.
        let index_blocks = self.w.uncompressed_total() - before_index;
        let mut meta_payload = Vec::new();
        encode_single_level(&meta_index, &mut meta_payload);
        self.w.write_block(BlockType::RootIndex, &meta_payload)?;
        self.fill_file_info();
        if let Some(b) = &self.bloom {
            if let Some(k) = b.last_key() {
                self.info.insert(fi::LAST_BLOOM_KEY, k.to_vec());
            }
        }
        let file_info_offset = self.w.offset();
        self.w
            .write_block(BlockType::FileInfo, &self.info.encode())?;
        if let Some(m) = bloom_meta {
            self.w.write_block(BlockType::GeneralBloomMeta, &m)?;
        }
        if let Some(m) = delete_meta {
            self.w.write_block(BlockType::DeleteFamilyBloomMeta, &m)?;
        }
        let trailer = Trailer {
            file_info_offset,
            load_on_open_offset: written.root_offset,
            uncompressed_data_index_size: written.uncompressed_size,
            total_uncompressed_bytes: self.w.uncompressed_total() - index_blocks
                + crate::trailer::TRAILER_SIZE as u64,
            data_index_count: written.root_entries,
            meta_index_count: meta_index.len() as u32,
            entry_count: self.entries,
            num_data_index_levels: written.levels,
            first_data_block_offset: self.first_data_block.unwrap_or(u64::MAX),
            last_data_block_offset: if self.data_blocks == 0 {
                u64::MAX
            } else {
                self.last_data_block
            },
            comparator_class_name: KV_COMPARATOR.into(),
            compression_codec: self.opts.compression.ordinal(),
            encryption_key: None,
            major_version: MAJOR_VERSION,
            minor_version: MINOR_VERSION,
        };
        self.w.write_raw(&trailer.encode())?;
        let file_size = self.w.finish()?;
        Ok(FileSummary {
            entries: self.entries,
            data_blocks: self.data_blocks,
            file_size,
            index_levels: written.levels,
        })
    }

    fn fill_file_info(&mut self) {
        let info = &mut self.info;
        if let Some(last) = &self.prev_block_last_key {
            info.insert(fi::LASTKEY, last.key_bytes());
        }
        let n = self.entries.max(1);
        info.insert(fi::AVG_KEY_LEN, ((self.key_bytes / n) as i32).to_be_bytes());
        info.insert(
            fi::AVG_VALUE_LEN,
            ((self.value_bytes / n) as i32).to_be_bytes(),
        );
        info.insert(fi::CREATE_TIME_TS, self.opts.create_time.to_be_bytes());
        info.insert(fi::KEY_VALUE_VERSION, 1i32.to_be_bytes());
        info.insert(fi::MAX_MEMSTORE_TS_KEY, (self.max_seq as i64).to_be_bytes());
        if !info.map.contains_key(fi::MAX_SEQ_ID_KEY) {
            info.insert(fi::MAX_SEQ_ID_KEY, (self.max_seq as i64).to_be_bytes());
        }
        if self.fmt.includes_tags {
            info.insert(fi::MAX_TAGS_LEN, (self.max_tags as i32).to_be_bytes());
            // HBase records the family's setting for every encoding but NONE
            // (ROW_INDEX_V1 says so and keeps its tags plain all the same).
            let recorded = self.opts.compress_tags && self.opts.encoding != DataBlockEncoding::None;
            // `Bytes.toBytes(boolean)`: 0xFF for true.
            info.insert(fi::TAGS_COMPRESSED, [if recorded { 0xFF } else { 0 }]);
        }
        // An empty tracker holds HBase's initial values (TimeRangeTracker).
        let (min, max) = if self.entries == 0 {
            (i64::MAX, -1)
        } else {
            (self.min_ts, self.max_ts)
        };
        info.insert(fi::TIMERANGE, FileInfo::encode_time_range(min, max));
        info.insert(fi::EARLIEST_PUT_TS, self.earliest_put.to_be_bytes());
        info.insert(
            fi::DELETE_FAMILY_COUNT,
            (self.delete_family as i64).to_be_bytes(),
        );
        info.insert(
            fi::BLOOM_FILTER_TYPE,
            self.opts.bloom.name().as_bytes().to_vec(),
        );
        if let BloomType::RowPrefixFixedLength(n) = self.opts.bloom {
            info.insert(fi::BLOOM_PARAM, (n as i32).to_be_bytes());
        }
        info.insert(
            fi::DATA_BLOCK_ENCODING,
            self.opts.encoding.name().as_bytes().to_vec(),
        );
    }
}

fn describe(c: &Cell) -> String {
    format!(
        "{}/{}:{}/{}/{}/seqid={}",
        to_string_binary(c.row()),
        to_string_binary(c.family()),
        to_string_binary(c.qualifier()),
        c.timestamp(),
        c.cell_type().name(),
        c.seq_id()
    )
}
