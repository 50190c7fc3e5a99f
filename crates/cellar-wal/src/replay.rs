//! Reading the log back on open: segments in order, each record checked. Whatever follows
//! the last valid record of the newest segment — a partial record or garbage — is a torn
//! tail, cut off and reported, as long as no valid record follows it; anything else bad
//! is an error naming the segment and offset.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cellar_io::FileSystem;

use crate::error::{Result, WalError};
use crate::record::{read_frame, Frame, WalEdit, SEGMENT_MAGIC};

/// Where a torn tail was cut off: the bytes after the last valid record of the newest
/// segment, when no valid record follows them (a write cut short by a crash, or garbage
/// the file system left there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    pub segment: PathBuf,
    /// Length the segment was cut to (the end of its last valid record).
    pub offset: u64,
    /// Bytes dropped.
    pub dropped_bytes: u64,
    /// Records begun in the dropped bytes, when their framing can be read: `Some(1)` for
    /// one record whose write did not complete; `None` when the bytes are not a record
    /// at all, so how many edits they held cannot be known.
    pub dropped_records: Option<u64>,
}

impl TornTail {
    /// The warning to print: what was cut and what that can mean, without claiming more
    /// than the bytes show.
    pub fn describe(&self) -> String {
        let what = match self.dropped_records {
            Some(1) => "one record whose write did not complete".to_string(),
            Some(n) => format!("{n} records whose writes did not complete"),
            None => "bytes that are not a WAL record (how many edits they held cannot be told)"
                .to_string(),
        };
        format!(
            "the WAL segment {} ended in {} bytes after its last valid record: {what}; cut to {} bytes. \
             Edits acknowledged with FSYNC_WAL were fsynced and are not among them; edits \
             acknowledged with weaker durability may be.",
            self.segment.display(),
            self.dropped_bytes,
            self.offset
        )
    }
}

/// Whether a valid record starts anywhere in `data` at or after `from` (then a bad frame
/// before it is damage in the middle of the log, not a torn tail).
fn valid_record_after(data: &[u8], from: usize) -> bool {
    (from..data.len()).any(|at| matches!(read_frame(&data[at..]), Frame::Record(..)))
}

/// What replay found.
#[derive(Debug, Clone, Default)]
pub struct ReplayReport {
    pub segments: usize,
    pub edits: u64,
    pub torn_tail: Option<TornTail>,
    /// The highest sequence id seen per region.
    pub max_seq_by_region: HashMap<String, u64>,
}

/// A segment on disk and the newest edit of each region in it.
#[derive(Debug, Clone)]
pub(crate) struct SegmentMeta {
    pub(crate) number: u64,
    pub(crate) path: PathBuf,
    pub(crate) regions: HashMap<String, u64>,
}

pub(crate) fn segment_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:020}.wal"))
}

/// Segment files of `dir`, oldest first.
pub(crate) fn list_segments(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let mut out = Vec::new();
    if !fs.exists(dir) {
        return Ok(out);
    }
    for path in fs.list_dir(dir)? {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(stem) = name.strip_suffix(".wal") else {
            continue;
        };
        if let Ok(n) = stem.parse::<u64>() {
            out.push((n, path));
        }
    }
    out.sort();
    Ok(out)
}

/// Replays every segment of `dir` into `on_edit`.
pub(crate) fn replay(
    fs: &dyn FileSystem,
    dir: &Path,
    on_edit: &mut dyn FnMut(WalEdit) -> Result<()>,
) -> Result<(Vec<SegmentMeta>, ReplayReport)> {
    let segments = list_segments(fs, dir)?;
    let mut report = ReplayReport {
        segments: segments.len(),
        ..ReplayReport::default()
    };
    let mut metas = Vec::new();
    let last = segments.len().saturating_sub(1);
    for (i, (number, path)) in segments.into_iter().enumerate() {
        let data = cellar_io::read_all(fs, &path)?;
        let is_last = i == last;
        let corrupt = |offset: u64, reason: String| WalError::Corrupt {
            path: path.clone(),
            offset,
            reason,
        };
        let mut meta = SegmentMeta {
            number,
            path: path.clone(),
            regions: HashMap::new(),
        };
        let mut torn_at: Option<usize> = None;
        let mut dropped_records: Option<u64> = None;
        if let Some(v) = newer_version(&data) {
            return Err(corrupt(
                0,
                format!(
                    "WAL segment format version {v} is newer than this release reads (version 01); open it with a newer Cellar"
                ),
            ));
        }
        if data.len() < SEGMENT_MAGIC.len() || &data[..SEGMENT_MAGIC.len()] != SEGMENT_MAGIC {
            if is_last && (SEGMENT_MAGIC.starts_with(&data) || !valid_record_after(&data, 0)) {
                // Created, then never (or never legibly) written.
                torn_at = Some(0);
            } else {
                return Err(corrupt(0, "not a Cellar WAL segment (bad magic)".into()));
            }
        }
        let mut pos = SEGMENT_MAGIC.len();
        while torn_at.is_none() && pos < data.len() {
            let rest = &data[pos..];
            match read_frame(rest) {
                Frame::Record(payload, used) => {
                    let edit = WalEdit::decode(payload).map_err(|r| corrupt(pos as u64, r))?;
                    let seen = meta.regions.entry(edit.region.clone()).or_insert(0);
                    *seen = (*seen).max(edit.seq_id);
                    let max = report
                        .max_seq_by_region
                        .entry(edit.region.clone())
                        .or_insert(0);
                    *max = (*max).max(edit.seq_id);
                    report.edits += 1;
                    on_edit(edit)?;
                    pos += used;
                }
                Frame::Incomplete if is_last => {
                    torn_at = Some(pos);
                    dropped_records = crate::record::length_checks_out(rest).then_some(1);
                }
                Frame::Incomplete => {
                    return Err(corrupt(pos as u64, "segment ends inside a record".into()))
                }
                Frame::BadPayload(_, end) if is_last && !valid_record_after(&data, pos + end) => {
                    torn_at = Some(pos);
                    dropped_records = (end == rest.len()).then_some(1);
                }
                Frame::BadHeader(_) if is_last && !valid_record_after(&data, pos + 1) => {
                    torn_at = Some(pos)
                }
                Frame::BadPayload(reason, _) | Frame::BadHeader(reason) => {
                    return Err(corrupt(pos as u64, reason))
                }
            }
        }
        if let Some(at) = torn_at {
            if at < SEGMENT_MAGIC.len() {
                // Created but never written: nothing in it was acknowledged.
                fs.remove_file(&path)?;
                fs.sync_dir(dir)?;
            } else {
                fs.set_len(&path, at as u64)?;
            }
            report.torn_tail = Some(TornTail {
                segment: path.clone(),
                offset: at as u64,
                dropped_bytes: (data.len() - at) as u64,
                dropped_records,
            });
            if at < SEGMENT_MAGIC.len() {
                continue;
            }
        }
        metas.push(meta);
    }
    Ok((metas, report))
}

/// The version of a segment written by a newer format (`CLWALnn\n` with nn > 01).
fn newer_version(data: &[u8]) -> Option<String> {
    let head = data.get(..SEGMENT_MAGIC.len())?;
    let digits = head.get(5..7)?;
    if !head.starts_with(b"CLWAL") || head[7] != b'\n' || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v = std::str::from_utf8(digits).ok()?;
    (v > "01").then(|| v.to_string())
}
