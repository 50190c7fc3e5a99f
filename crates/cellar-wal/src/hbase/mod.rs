//! HBase's own WAL files, as its region servers write them (`ProtobufLogWriter`): the
//! magic `PWAL`, a length-delimited `WALHeader`, then entries — a length-delimited
//! `WALKey` followed by its cells (`WALCellCodec`, plain or dictionary-compressed) — and,
//! once the file was closed, an empty `WALTrailer`, its length and the magic `LAWP`.
//! A file whose writer died has no trailer and may end inside an entry: that tail is
//! reported, not read. Everything else that does not parse is a typed error naming the
//! offset, never a guess.

mod codec;
mod proto;
mod values;

use std::path::Path;

use cellar_types::Cell;

use crate::error::{Result, WalError};
use codec::{Dictionaries, Input};
pub use proto::WalHeader;
use proto::{ProtoError, ProtoReader, RawWalKey};
pub use values::algorithm_name;

/// The magic at the start of an HBase WAL file.
pub const MAGIC: &[u8; 4] = b"PWAL";
/// The magic at the end of a closed one.
pub const TRAILER_MAGIC: &[u8; 4] = b"LAWP";
/// The only cell codec HBase writes WAL files with (encryption aside).
pub const CELL_CODEC: &str = "org.apache.hadoop.hbase.regionserver.wal.WALCellCodec";

/// One entry: the key of one atomic edit and its cells.
#[derive(Debug, Clone)]
pub struct HBaseWalEntry {
    /// Where the entry starts and ends in the file.
    pub offset: u64,
    pub end: u64,
    pub table: Vec<u8>,
    pub encoded_region_name: Vec<u8>,
    pub sequence_id: u64,
    pub write_time: u64,
    /// Clusters that consumed the edit (most, least significant bits).
    pub cluster_ids: Vec<(u64, u64)>,
    /// Replication scopes by family.
    pub scopes: Vec<(Vec<u8>, u32)>,
    pub nonce_group: u64,
    pub nonce: u64,
    pub orig_sequence_number: Option<u64>,
    pub extended_attributes: Vec<(String, Vec<u8>)>,
    pub cells: Vec<Cell>,
}

/// A whole HBase WAL file.
#[derive(Debug, Clone)]
pub struct HBaseWal {
    pub header: WalHeader,
    pub entries: Vec<HBaseWalEntry>,
    /// Whether the file was closed (a trailer is present).
    pub trailer: bool,
    /// Where an incomplete last entry starts, in a file without a trailer.
    pub torn_tail: Option<u64>,
}

/// Whether `bytes` start as an HBase WAL file.
pub fn is_hbase_wal(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// Reads an HBase WAL file held in `bytes` (`path` names it in errors and says whether
/// it is a recovered-edits file, whose dictionaries HBase sizes differently).
pub fn read_hbase_wal(bytes: &[u8], path: &Path) -> Result<HBaseWal> {
    let corrupt = |offset: usize, reason: String| WalError::Corrupt {
        path: path.to_path_buf(),
        offset: offset as u64,
        reason,
    };
    let unsupported = |what: String| WalError::Unsupported {
        path: path.to_path_buf(),
        what,
    };
    if !is_hbase_wal(bytes) {
        return Err(corrupt(0, "not an HBase WAL file (no PWAL magic)".into()));
    }
    let mut r = ProtoReader::new(&bytes[4..]);
    let header = match r.delimited() {
        Ok(msg) => {
            WalHeader::decode(msg).map_err(|e| corrupt(4, format!("WAL header: {}", why(e))))?
        }
        Err(_) => return Err(corrupt(4, "the WAL header is cut short".into())),
    };
    let mut pos = 4 + r.pos();
    if header.encrypted {
        return Err(unsupported("an encrypted WAL file".into()));
    }
    if let Some(codec) = &header.cell_codec_class {
        if codec != CELL_CODEC {
            return Err(unsupported(format!("cells written with {codec}")));
        }
    }
    let mut values = None;
    if header.has_compression && header.has_value_compression {
        let algorithm = header.value_compression_algorithm.unwrap_or(values::GZ);
        values = Some(values::ValueDecompressor::new(algorithm).ok_or_else(|| {
            unsupported(format!(
                "values compressed with {} (Cellar reads GZ-compressed WAL values)",
                algorithm_name(algorithm)
            ))
        })?);
    }
    let (edits_end, trailer) = trailer_start(bytes, pos);
    let recovered = path.to_string_lossy().contains("recovered.edits");
    let mut dicts = header
        .has_compression
        .then(|| Dictionaries::new(header.has_tag_compression, recovered));
    let mut entries = Vec::new();
    let mut torn_tail = None;
    while pos < edits_end {
        match read_entry(&bytes[..edits_end], pos, dicts.as_mut(), &mut values) {
            Ok(e) => {
                pos = e.end as usize;
                entries.push(e);
            }
            Err((ProtoError::Truncated, _)) if !trailer => {
                torn_tail = Some(pos as u64);
                break;
            }
            Err((ProtoError::Truncated, at)) => {
                return Err(corrupt(at, "an entry runs into the trailer".into()))
            }
            Err((ProtoError::Malformed(m), at)) => return Err(corrupt(at, m)),
        }
    }
    Ok(HBaseWal {
        header,
        entries,
        trailer,
        torn_tail,
    })
}

fn why(e: ProtoError) -> String {
    match e {
        ProtoError::Truncated => "cut short".into(),
        ProtoError::Malformed(m) => m,
    }
}

/// Where the entries end: before a valid trailer (its length, then `LAWP`), else at
/// the file's end. As HBase's reader, a negative or impossible trailer length means no
/// trailer.
fn trailer_start(bytes: &[u8], edits_start: usize) -> (usize, bool) {
    let len = bytes.len();
    if len < edits_start + 8 || &bytes[len - 4..] != TRAILER_MAGIC {
        return (len, false);
    }
    let size = i32::from_be_bytes([
        bytes[len - 8],
        bytes[len - 7],
        bytes[len - 6],
        bytes[len - 5],
    ]);
    match usize::try_from(size) {
        Ok(size) if len - 8 >= edits_start + size => (len - 8 - size, true),
        _ => (len, false),
    }
}

/// One entry at `pos`; on failure, why and where.
fn read_entry(
    bytes: &[u8],
    pos: usize,
    mut dicts: Option<&mut Dictionaries>,
    values: &mut Option<values::ValueDecompressor>,
) -> std::result::Result<HBaseWalEntry, (ProtoError, usize)> {
    let mut r = ProtoReader::new(&bytes[pos..]);
    let msg = r.delimited().map_err(|e| (e, pos))?;
    let key = RawWalKey::decode(msg).map_err(|e| (e, pos))?;
    let missing = |what: &str| {
        (
            ProtoError::Malformed(format!("WAL key without {what}")),
            pos,
        )
    };
    let region = key.encoded_region_name.ok_or_else(|| missing("a region"))?;
    let table = key.table_name.ok_or_else(|| missing("a table"))?;
    let name = |raw: &[u8], dict: Option<&mut cellar_types::LruDictionary>| match dict {
        Some(d) => codec::uncompress_name(raw, d).map_err(|e| (e, pos)),
        None => Ok(raw.to_vec()),
    };
    let encoded_region_name = name(region, dicts.as_deref_mut().map(|d| &mut d.region))?;
    let table = name(table, dicts.as_deref_mut().map(|d| &mut d.table))?;
    let mut scopes = Vec::new();
    for (family, kind) in &key.scopes {
        let f = name(family, dicts.as_deref_mut().map(|d| &mut d.family))?;
        scopes.push((f, *kind));
    }
    let mut input = Input {
        buf: bytes,
        pos: pos + r.pos(),
    };
    let mut cells = Vec::with_capacity((key.following_kv_count as usize).min(4096));
    for _ in 0..key.following_kv_count {
        let at = input.pos;
        let cell = match dicts.as_deref_mut() {
            Some(d) => codec::read_compressed_cell(&mut input, d, values),
            None => codec::read_plain_cell(&mut input),
        }
        .map_err(|e| (e, at))?;
        cells.push(cell);
    }
    Ok(HBaseWalEntry {
        offset: pos as u64,
        end: input.pos as u64,
        table,
        encoded_region_name,
        sequence_id: key
            .log_sequence_number
            .ok_or_else(|| missing("a sequence id"))?,
        write_time: key.write_time.ok_or_else(|| missing("a write time"))?,
        cluster_ids: key.cluster_ids,
        scopes,
        nonce_group: key.nonce_group,
        nonce: key.nonce,
        orig_sequence_number: key.orig_sequence_number,
        extended_attributes: key.extended_attributes,
        cells,
    })
}
