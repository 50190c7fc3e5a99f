//! The producer side of a bulk load (what HBase users write a MapReduce job with
//! `HFileOutputFormat2` for): a sorted CSV or TSV of `row, family, qualifier,
//! timestamp, value` becomes HFiles under `OUT/<family>/`, one per family and region of
//! the target table, written with each family's settings, ready for `cellar bulkload`
//! (a Parquet file of the same columns too: `parquet_input`).
//!
//! The input must be in HBase's cell order within each family: rows ascending, then
//! qualifiers ascending, then timestamps descending (families may interleave). An empty
//! timestamp takes the time the file is written. With `escaped`, rows, qualifiers and
//! values are read as HBase's `Bytes.toStringBinary` prints them (`\xNN` for any byte).
//! A first line `row,family,qualifier,timestamp,value` is a header and skipped.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cellar_api::{Error, RegionInfo, TableDescriptor};
use cellar_hfile::HFileWriter;
use cellar_io::FileSystem;
use cellar_region::RegionError;
use cellar_types::{compare_cells, to_string_binary, Cell};

use crate::error::Result;

/// How the input is laid out.
#[derive(Debug, Clone)]
pub struct ProduceOptions {
    /// Field separator: `b','` (CSV, with quoting) or `b'\t'` (TSV).
    pub delimiter: u8,
    /// Fields are `Bytes.toStringBinary` text (`\xNN` escapes).
    pub escaped: bool,
    /// The timestamp of cells whose timestamp field is empty.
    pub now: i64,
}

/// What was written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProduceReport {
    pub cells: u64,
    /// The files written, by family.
    pub files: Vec<PathBuf>,
}

fn invalid(line: u64, why: impl std::fmt::Display) -> crate::error::DbError {
    Error::invalid(format!("line {line}: {why}")).into()
}

/// `Bytes.toBytesBinary`: `\xNN` is the byte NN; everything else is itself.
pub fn from_string_binary(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b.get(i + 1) == Some(&b'x') {
            let hex = b
                .get(i + 2..i + 4)
                .and_then(|h| std::str::from_utf8(h).ok());
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// One open output file.
struct Out {
    writer: HFileWriter,
    path: PathBuf,
}

/// One input record: row, family, qualifier, timestamp (`None`: the write time), value.
pub type Record = (Vec<u8>, Vec<u8>, Vec<u8>, Option<i64>, Vec<u8>);

/// The records of a CSV or TSV, each with its line number.
fn csv_records<'a>(
    input: impl Read + 'a,
    opts: &'a ProduceOptions,
) -> impl Iterator<Item = Result<(u64, Record)>> + 'a {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(opts.delimiter)
        .has_headers(false)
        .flexible(true)
        .quoting(opts.delimiter == b',')
        .from_reader(input);
    let mut record = csv::ByteRecord::new();
    let mut line = 0u64;
    std::iter::from_fn(move || loop {
        match reader.read_byte_record(&mut record) {
            Err(e) => return Some(Err(invalid(line + 1, e))),
            Ok(false) => return None,
            Ok(true) => {}
        }
        line += 1;
        if record.len() != 5 {
            return Some(Err(invalid(
                line,
                format!(
                    "{} fields; expected row, family, qualifier, timestamp, value",
                    record.len()
                ),
            )));
        }
        if line == 1
            && record
                .iter()
                .map(|f| String::from_utf8_lossy(f).to_ascii_lowercase())
                .eq(["row", "family", "qualifier", "timestamp", "value"].map(String::from))
        {
            continue;
        }
        let field = |i: usize| -> Vec<u8> {
            let raw = record.get(i).unwrap_or_default();
            if opts.escaped {
                from_string_binary(&String::from_utf8_lossy(raw))
            } else {
                raw.to_vec()
            }
        };
        let ts_text = String::from_utf8_lossy(record.get(3).unwrap_or_default())
            .trim()
            .to_string();
        let ts = if ts_text.is_empty() {
            None
        } else {
            match ts_text.parse::<i64>() {
                Ok(t) => Some(t),
                Err(_) => {
                    return Some(Err(invalid(
                        line,
                        format!("timestamp {ts_text:?} is not a number"),
                    )))
                }
            }
        };
        return Some(Ok((line, (field(0), field(1), field(2), ts, field(4)))));
    })
}

/// Writes the cells of a CSV or TSV `input` as HFiles under `out`, one per family and
/// region of `desc`/`regions` (start-key order).
pub fn write_hfiles(
    fs: &Arc<dyn FileSystem>,
    input: impl Read,
    desc: &TableDescriptor,
    regions: &[RegionInfo],
    out: &Path,
    opts: &ProduceOptions,
) -> Result<ProduceReport> {
    write_records(fs, csv_records(input, opts), desc, regions, out, opts.now)
}

/// Writes `records` (each with its record number, for errors) as HFiles under `out`.
pub fn write_records(
    fs: &Arc<dyn FileSystem>,
    records: impl Iterator<Item = Result<(u64, Record)>>,
    desc: &TableDescriptor,
    regions: &[RegionInfo],
    out: &Path,
    now: i64,
) -> Result<ProduceReport> {
    let mut report = ProduceReport::default();
    // The region being written, and each family's open file in it.
    let mut region: Option<usize> = None;
    let mut open: BTreeMap<Vec<u8>, Out> = BTreeMap::new();
    // The last cell per family, across regions (the order check).
    let mut last: BTreeMap<Vec<u8>, Cell> = BTreeMap::new();
    for r in records {
        let (line, (row, family, qualifier, ts, value)) = r?;
        let ts = ts.unwrap_or(now);
        let Some(fam) = desc.family(&family) else {
            return Err(invalid(
                line,
                format!(
                    "family '{}' is not in table {}",
                    to_string_binary(&family),
                    desc.name
                ),
            ));
        };
        let cell =
            Cell::put(&row, &family, &qualifier, ts, &value).map_err(|e| invalid(line, e))?;
        if let Some(prev) = last.get(&family) {
            if compare_cells(prev, &cell) != std::cmp::Ordering::Less {
                return Err(invalid(
                    line,
                    "out of order: the input must be sorted by row, then qualifier, then timestamp descending, within each family",
                ));
            }
        }
        // The region of this row; rows only go forward, so regions do too.
        let idx = regions
            .iter()
            .position(|r| r.end.is_empty() || row.as_slice() < r.end.as_slice())
            .unwrap_or(regions.len().saturating_sub(1));
        if region != Some(idx) {
            close_all(&mut open, &mut report)?;
            region = Some(idx);
        }
        if !open.contains_key(&family) {
            let dir = out.join(to_string_binary(&family));
            fs.create_dir_all(&dir)?;
            let name = match regions.get(idx) {
                Some(r) if !r.encoded.is_empty() => format!("{}-{}", r.encoded, report.files.len()),
                _ => format!("part-{}", report.files.len()),
            };
            let path = dir.join(name);
            let wopts = cellar_region::store::family_writer_options(fam, now);
            let writer =
                HFileWriter::create(fs.as_ref(), &path, wopts).map_err(RegionError::from)?;
            open.insert(family.clone(), Out { writer, path });
        }
        if let Some(o) = open.get_mut(&family) {
            o.writer.append(cell.clone()).map_err(RegionError::from)?;
        }
        last.insert(family, cell);
        report.cells += 1;
    }
    close_all(&mut open, &mut report)?;
    Ok(report)
}

fn close_all(open: &mut BTreeMap<Vec<u8>, Out>, report: &mut ProduceReport) -> Result<()> {
    for (_, o) in std::mem::take(open) {
        o.writer.close().map_err(RegionError::from)?;
        report.files.push(o.path);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::from_string_binary;

    #[test]
    fn string_binary_escapes() {
        assert_eq!(
            from_string_binary("a\\x00b\\xFF"),
            vec![b'a', 0, b'b', 0xff]
        );
        assert_eq!(from_string_binary("\\x4"), b"\\x4".to_vec());
        assert_eq!(from_string_binary("\\xzz"), b"\\xzz".to_vec());
        assert_eq!(from_string_binary("plain"), b"plain".to_vec());
    }
}
