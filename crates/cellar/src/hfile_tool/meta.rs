//! `-m`, `-b` and `-h`: trailer, file info, mid-key, bloom meta, the block index and the
//! block headers.

use std::io::{self, Write};

use cellar_hfile::{file_info as fi, BlockType, HFileError, HFileReader, IndexEntry};
use cellar_types::to_string_binary;

use super::{flat_key_string, ToolError};

/// How HBase's printer shows a file info value.
fn info_value(key: &[u8], value: &[u8], reader: &HFileReader) -> String {
    let long_keys: [&[u8]; 6] = [
        fi::MAX_SEQ_ID_KEY,
        fi::CREATE_TIME_TS,
        fi::EARLIEST_PUT_TS,
        fi::MAX_MEMSTORE_TS_KEY,
        fi::DELETE_FAMILY_COUNT,
        b"BULKLOAD_TIMESTAMP",
    ];
    let int_keys: [&[u8]; 5] = [
        fi::AVG_KEY_LEN,
        fi::AVG_VALUE_LEN,
        fi::KEY_VALUE_VERSION,
        fi::MAX_TAGS_LEN,
        fi::BLOOM_PARAM,
    ];
    if long_keys.contains(&key) && value.len() == 8 {
        let mut b = [0u8; 8];
        b.copy_from_slice(value);
        return i64::from_be_bytes(b).to_string();
    }
    if int_keys.contains(&key) && value.len() == 4 {
        return i32::from_be_bytes([value[0], value[1], value[2], value[3]]).to_string();
    }
    if key == fi::TIMERANGE {
        if let Some((min, max)) = reader.file_info().time_range() {
            return format!("{min}....{max}");
        }
    }
    if key == fi::LASTKEY {
        return flat_key_string(value);
    }
    if (key == fi::TAGS_COMPRESSED || key == fi::MAJOR_COMPACTION_KEY) && value.len() == 1 {
        return (value[0] != 0).to_string();
    }
    to_string_binary(value)
}

pub fn print_meta(reader: &HFileReader, out: &mut dyn Write) -> Result<(), ToolError> {
    let t = reader.trailer();
    let first_key = {
        let mut s = reader.scanner();
        if s.seek_to_first()? {
            s.current().map(|c| super::key_string(&c.key_ref()))
        } else {
            None
        }
    };
    writeln!(
        out,
        "reader={}, compression={}, firstKey={}, lastKey={}, avgKeyLen={}, avgValueLen={}, entries={}, length={}",
        reader.path().display(),
        reader.compression().name().to_lowercase(),
        first_key.unwrap_or_else(|| "null".into()),
        reader.last_key().map(flat_key_string).unwrap_or_else(|| "null".into()),
        reader.file_info().get_i32(fi::AVG_KEY_LEN).unwrap_or(0),
        reader.file_info().get_i32(fi::AVG_VALUE_LEN).unwrap_or(0),
        t.entry_count,
        reader.file_size()
    )?;
    writeln!(out, "Trailer:")?;
    writeln!(
        out,
        "    fileinfoOffset={}, loadOnOpenDataOffset={}, dataIndexCount={}, metaIndexCount={}, totalUncomressedBytes={}, entryCount={}, compressionCodec={}, uncompressedDataIndexSize={}, numDataIndexLevels={}, firstDataBlockOffset={}, lastDataBlockOffset={}, comparatorClassName={}, encryptionKey={}, majorVersion={}, minorVersion={}",
        t.file_info_offset,
        t.load_on_open_offset,
        t.data_index_count,
        t.meta_index_count,
        t.total_uncompressed_bytes,
        t.entry_count,
        reader.compression().name(),
        t.uncompressed_data_index_size,
        t.num_data_index_levels,
        t.first_data_block_offset as i64,
        t.last_data_block_offset as i64,
        t.comparator_class_name,
        if t.encryption_key.is_some() { "PRESENT" } else { "NONE" },
        t.major_version,
        t.minor_version
    )?;
    writeln!(out, "Fileinfo:")?;
    for (k, v) in &reader.file_info().map {
        writeln!(
            out,
            "    {} = {}",
            to_string_binary(k),
            info_value(k, v, reader)
        )?;
    }
    match reader.mid_key()? {
        Some(k) => writeln!(out, "Mid-key: {}", flat_key_string(&k))?,
        None => writeln!(out, "Unable to retrieve the midkey")?,
    }
    writeln!(out, "Bloom filter:")?;
    match reader.bloom() {
        Some((_, m)) => print_bloom(m, out)?,
        None => writeln!(out, "    Not present")?,
    }
    writeln!(out, "Delete Family Bloom filter:")?;
    match reader.delete_family_bloom() {
        Some(m) => print_bloom(m, out)?,
        None => writeln!(out, "    Not present")?,
    }
    Ok(())
}

/// A bloom's statistics as HBase 2's `CompoundBloomFilter.toString` prints them.
fn print_bloom(m: &cellar_hfile::BloomMeta, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "    BloomSize: {}", m.total_byte_size)?;
    writeln!(out, "    No of Keys in bloom: {}", m.total_key_count)?;
    writeln!(out, "    Max Keys for bloom: {}", m.total_max_keys)?;
    if m.total_max_keys > 0 {
        // Java's percent format: the fraction rounded half-even to a whole percent.
        let filled = m.total_key_count as f64 * 100.0 / m.total_max_keys as f64;
        writeln!(out, "    Percentage filled: {}%", round_half_even(filled))?;
    }
    writeln!(out, "    Number of chunks: {}", m.chunks.len())?;
    writeln!(
        out,
        "    Comparator: {}",
        cellar_hfile::comparator_simple_name(&m.comparator)
    )
}

fn round_half_even(x: f64) -> i64 {
    let floor = x.floor();
    let diff = x - floor;
    let f = floor as i64;
    if diff > 0.5 || (diff == 0.5 && f % 2 != 0) {
        f + 1
    } else {
        f
    }
}

/// Prints every level of the data block index, depth first.
pub fn print_index(reader: &HFileReader, out: &mut dyn Write) -> Result<(), ToolError> {
    let levels = reader.trailer().num_data_index_levels.max(1);
    writeln!(
        out,
        "Block Index: {} level(s), {} root entries",
        levels,
        reader.root_index().len()
    )?;
    print_level(reader, reader.root_index(), 1, levels, out)
}

fn print_level(
    reader: &HFileReader,
    entries: &[IndexEntry],
    level: u32,
    levels: u32,
    out: &mut dyn Write,
) -> Result<(), ToolError> {
    let indent = "  ".repeat(level as usize);
    for (i, e) in entries.iter().enumerate() {
        let kind = if level == levels {
            "data block"
        } else {
            "index block"
        };
        writeln!(
            out,
            "{indent}key={} offset={} dataSize={} ({kind} {i})",
            flat_key_string(&e.key),
            e.offset,
            e.on_disk_size
        )?;
        if level < levels {
            let b = reader.block_at(e.offset)?;
            if !matches!(
                b.header.block_type,
                BlockType::LeafIndex | BlockType::IntermediateIndex
            ) {
                return Err(ToolError::File(HFileError::Corrupt {
                    offset: e.offset,
                    reason: "index entry points at a non-index block".into(),
                }));
            }
            let children = cellar_hfile::parse_index_block(&b.payload, e.offset)?;
            print_level(reader, &children, level + 1, levels, out)?;
        }
    }
    Ok(())
}

/// Walks every block from the start of the file to the trailer, printing its header.
pub fn print_block_headers(reader: &HFileReader, out: &mut dyn Write) -> Result<(), ToolError> {
    writeln!(out, "Block Headers:")?;
    let end = reader.file_size() - cellar_hfile::TRAILER_SIZE as u64;
    let mut offset = 0u64;
    while offset < end {
        let b = reader.block_at(offset)?;
        let h = &b.header;
        writeln!(
            out,
            "[blockType={}, fileOffset={}, onDiskSizeWithoutHeader={}, uncompressedSizeWithoutHeader={}, prevBlockOffset={}, checksumType={}, bytesPerChecksum={}, onDiskDataSizeWithHeader={}]",
            h.block_type.name(),
            offset,
            h.on_disk_size_without_header,
            h.uncompressed_size_without_header,
            h.prev_block_offset,
            match h.checksum_type {
                0 => "NULL",
                1 => "CRC32",
                _ => "CRC32C",
            },
            h.bytes_per_checksum,
            h.on_disk_data_size_with_header
        )?;
        offset += h.on_disk_size_with_header();
    }
    Ok(())
}
