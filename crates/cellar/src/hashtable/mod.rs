//! HBase's HashTable and SyncTable, for comparing two tables without moving their data:
//! a table is read in batches of rows (a batch ends once it has hashed `targetBatchSize`
//! bytes, and a region always starts one), and each batch's cells — row, family,
//! qualifier, timestamp (8 bytes, least significant first), value — go through MD5.
//! The output is HBase's own layout, so either side can be HBase:
//!
//! ```text
//! OUT/manifest                  properties: table, targetBatchSize, numHashFiles, ...
//! OUT/partitions                SequenceFile of the keys between hash files
//! OUT/hashes/part-r-NNNNN/data  MapFile data: batch start row -> 16-byte hash
//! OUT/hashes/part-r-NNNNN/index MapFile index
//! ```
//!
//! [`sync_ranges`] is SyncTable's dry run: the target table is hashed over exactly the
//! source's batch ranges, and every range whose hashes differ is reported.

pub mod seqfile;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cellar_api::{Error, ErrorKind, Result, RowResult, Scan};
use md5::{Digest, Md5};

use crate::client::Connection;
use seqfile::{immutable_bytes, to_immutable_bytes, IMMUTABLE_BYTES, LONG_WRITABLE, NULL_WRITABLE};

/// HashTable's default `--batchsize`.
pub const DEFAULT_BATCH_SIZE: u64 = 8000;
/// MapFile's default index interval.
const INDEX_INTERVAL: usize = 128;

/// What was hashed, and how (HashTable's `manifest` properties).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashSpec {
    pub table: String,
    pub batch_size: u64,
    pub num_hash_files: usize,
    pub families: Option<Vec<String>>,
    pub start_row: Vec<u8>,
    pub stop_row: Vec<u8>,
    pub scan_batch: u32,
    /// `None`: the scan's default (one version).
    pub versions: Option<u32>,
    pub start_time: i64,
    pub end_time: i64,
    pub raw: bool,
    pub ignore_timestamps: bool,
}

impl HashSpec {
    pub fn new(table: &str) -> HashSpec {
        HashSpec {
            table: table.to_string(),
            batch_size: DEFAULT_BATCH_SIZE,
            num_hash_files: 0,
            families: None,
            start_row: Vec::new(),
            stop_row: Vec::new(),
            scan_batch: 0,
            versions: None,
            start_time: 0,
            end_time: 0,
            raw: false,
            ignore_timestamps: false,
        }
    }

    fn scan(&self, start: &[u8], stop: &[u8]) -> Scan {
        let mut s = Scan::new()
            .start_row(start.to_vec())
            .stop_row(stop.to_vec())
            .raw(self.raw)
            .cache_blocks(false);
        if self.start_time != 0 || self.end_time != 0 {
            let end = if self.end_time == 0 {
                i64::MAX
            } else {
                self.end_time
            };
            s = s.time_range(self.start_time, end);
        }
        if self.scan_batch > 0 {
            s = s.batch(self.scan_batch);
        }
        if let Some(v) = self.versions {
            s = s.max_versions(v);
        }
        for f in self.families.iter().flatten() {
            s = s.add_family(f.as_bytes());
        }
        s
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Result<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return Err(Error::invalid(format!("not hex: {s}")));
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&s[i..i + 2], 16)
                .map_err(|_| Error::invalid(format!("not hex: {s}")))
        })
        .collect()
}

/// Java's `Properties` text, as far as HashTable writes it (`key=value` lines, `#`
/// comments, `\:` and `\=` escapes).
fn read_properties(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            let unescape = |s: &str| {
                s.replace("\\:", ":")
                    .replace("\\=", "=")
                    .replace("\\\\", "\\")
            };
            out.insert(unescape(k.trim()), unescape(v.trim()));
        }
    }
    out
}

/// A HashTable output read back.
#[derive(Debug, Clone)]
pub struct TableHash {
    pub spec: HashSpec,
    /// The keys between hash files.
    pub partitions: Vec<Vec<u8>>,
    /// (batch start row, MD5) in row order, across every hash file.
    pub hashes: Vec<(Vec<u8>, [u8; 16])>,
}

fn io_err(p: &Path, e: std::io::Error) -> Error {
    Error::new(ErrorKind::Io, format!("{}: {e}", p.display()))
}

/// Reads a HashTable output directory (HBase's or Cellar's).
pub fn read_hashes(dir: &Path) -> Result<TableHash> {
    let mpath = dir.join("manifest");
    let props = read_properties(&std::fs::read_to_string(&mpath).map_err(|e| io_err(&mpath, e))?);
    let get = |k: &str| props.get(k).cloned();
    let num = |k: &str| -> Result<Option<i64>> {
        get(k)
            .map(|v| {
                v.parse::<i64>()
                    .map_err(|_| Error::invalid(format!("manifest {k}={v}")))
            })
            .transpose()
    };
    let spec = HashSpec {
        table: get("table").ok_or_else(|| Error::invalid("manifest has no table"))?,
        batch_size: num("targetBatchSize")?
            .unwrap_or(DEFAULT_BATCH_SIZE as i64)
            .max(0) as u64,
        num_hash_files: num("numHashFiles")?.unwrap_or(1).max(1) as usize,
        families: get("columnFamilies").map(|f| f.split(',').map(str::to_string).collect()),
        start_row: get("startRowHex")
            .map(|h| unhex(&h))
            .transpose()?
            .unwrap_or_default(),
        stop_row: get("stopRowHex")
            .map(|h| unhex(&h))
            .transpose()?
            .unwrap_or_default(),
        scan_batch: num("scanBatch")?.unwrap_or(0).max(0) as u32,
        versions: num("versions")?.map(|v| v.max(0) as u32),
        start_time: num("startTimestamp")?.unwrap_or(0),
        end_time: num("endTimestamp")?.unwrap_or(0),
        raw: get("rawScan").is_some_and(|v| v == "true"),
        ignore_timestamps: false,
    };
    let ppath = dir.join("partitions");
    let pfile = seqfile::read(&std::fs::read(&ppath).map_err(|e| io_err(&ppath, e))?)?;
    let partitions = pfile
        .records
        .iter()
        .map(|(k, _)| immutable_bytes(k))
        .collect::<Result<Vec<_>>>()?;
    let mut hashes = Vec::new();
    for i in 0..spec.num_hash_files {
        let dpath = dir
            .join("hashes")
            .join(format!("part-r-{i:05}"))
            .join("data");
        let f = seqfile::read(&std::fs::read(&dpath).map_err(|e| io_err(&dpath, e))?)?;
        for (k, v) in f.records {
            let h = immutable_bytes(&v)?;
            let h: [u8; 16] = h.try_into().map_err(|_| {
                Error::new(
                    ErrorKind::Corrupt,
                    format!("{}: a hash that is not 16 bytes", dpath.display()),
                )
            })?;
            hashes.push((immutable_bytes(&k)?, h));
        }
    }
    Ok(TableHash {
        spec,
        partitions,
        hashes,
    })
}

/// HashTable's `ResultHasher`: MD5 over the cells of a batch of rows.
struct Hasher {
    md5: Md5,
    size: u64,
    ignore_timestamps: bool,
}

impl Hasher {
    fn new(ignore_timestamps: bool) -> Hasher {
        Hasher {
            md5: Md5::new(),
            size: 0,
            ignore_timestamps,
        }
    }
    fn add(&mut self, r: &RowResult) {
        for c in &r.cells {
            self.md5.update(c.row());
            self.md5.update(c.family());
            self.md5.update(c.qualifier());
            if !self.ignore_timestamps {
                self.md5.update(c.timestamp().to_le_bytes());
            }
            self.md5.update(c.value());
            self.size +=
                (c.row().len() + c.family().len() + c.qualifier().len() + 8 + c.value().len())
                    as u64;
        }
    }
    fn finish(&mut self) -> [u8; 16] {
        self.size = 0;
        let d = std::mem::take(&mut self.md5).finalize();
        let mut out = [0u8; 16];
        out.copy_from_slice(&d);
        out
    }
}

/// The table's region ranges meeting the spec's row range, as HashTable splits its job.
fn region_ranges(conn: &dyn Connection, spec: &HashSpec) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let regions = conn.admin().list_regions(&spec.table)?;
    let mut out = Vec::new();
    for r in regions {
        let (s, e) = (r.info.start, r.info.end);
        let begins_before_end = spec.start_row.is_empty() || e.is_empty() || spec.start_row < e;
        let ends_after_start = spec.stop_row.is_empty() || s.is_empty() || spec.stop_row > s;
        if begins_before_end && ends_after_start {
            // The scan of a region keeps to the spec's range too.
            let start = if spec.start_row > s {
                spec.start_row.clone()
            } else {
                s
            };
            let stop = match (spec.stop_row.is_empty(), e.is_empty()) {
                (true, _) => e,
                (false, true) => spec.stop_row.clone(),
                (false, false) => std::cmp::min(spec.stop_row.clone(), e),
            };
            out.push((start, stop));
        }
    }
    Ok(out)
}

/// HashTable over `spec.table`: the (batch start row, hash) pairs, and the partition
/// keys grouping regions into `num_hash_files` files.
pub fn hash_table(conn: &dyn Connection, spec: &mut HashSpec) -> Result<TableHash> {
    let ranges = region_ranges(conn, spec)?;
    let starts: Vec<Vec<u8>> = ranges.iter().map(|(s, _)| s.clone()).collect();
    let n = starts.len().max(1);
    let mut files = if spec.num_hash_files == 0 {
        n / 100
    } else {
        spec.num_hash_files
    };
    files = files.clamp(1, n);
    spec.num_hash_files = files;
    let partitions: Vec<Vec<u8>> = (1..files).map(|i| starts[n * i / files].clone()).collect();
    let table = conn.table(&spec.table)?;
    let mut hashes = Vec::new();
    for (start, stop) in &ranges {
        let mut h = Hasher::new(spec.ignore_timestamps);
        let mut batch_start = start.clone();
        let mut current: Option<Vec<u8>> = None;
        for r in table.scan(&spec.scan(start, stop))? {
            let r = r?;
            if current.as_deref() != Some(r.row.as_slice()) {
                current = Some(r.row.clone());
                if h.size >= spec.batch_size {
                    hashes.push((
                        std::mem::replace(&mut batch_start, r.row.clone()),
                        h.finish(),
                    ));
                }
            }
            h.add(&r);
        }
        hashes.push((batch_start, h.finish()));
    }
    Ok(TableHash {
        spec: spec.clone(),
        partitions,
        hashes,
    })
}

/// Writes a HashTable output in HBase's layout.
pub fn write_hashes(th: &TableHash, dir: &Path) -> Result<()> {
    fn io(p: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
        move |e| io_err(p, e)
    }
    std::fs::create_dir_all(dir.join("hashes")).map_err(io(dir))?;
    let s = &th.spec;
    let mut m = format!(
        "table={}\ntargetBatchSize={}\nnumHashFiles={}\nrawScan={}\n",
        s.table, s.batch_size, s.num_hash_files, s.raw
    );
    if let Some(f) = &s.families {
        m.push_str(&format!("columnFamilies={}\n", f.join(",")));
    }
    if !s.start_row.is_empty() {
        m.push_str(&format!("startRowHex={}\n", hex(&s.start_row)));
    }
    if !s.stop_row.is_empty() {
        m.push_str(&format!("stopRowHex={}\n", hex(&s.stop_row)));
    }
    if s.scan_batch > 0 {
        m.push_str(&format!("scanBatch={}\n", s.scan_batch));
    }
    if let Some(v) = s.versions {
        m.push_str(&format!("versions={v}\n"));
    }
    if s.start_time != 0 {
        m.push_str(&format!("startTimestamp={}\n", s.start_time));
    }
    if s.end_time != 0 {
        m.push_str(&format!("endTimestamp={}\n", s.end_time));
    }
    let sync = {
        let r = cellar_io::random_id();
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&r.to_be_bytes());
        b[8..].copy_from_slice(&(!r).to_be_bytes());
        b
    };
    let ppath = dir.join("partitions");
    let precs: Vec<(Vec<u8>, Vec<u8>)> = th
        .partitions
        .iter()
        .map(|p| (to_immutable_bytes(p), Vec::new()))
        .collect();
    let mut f = std::fs::File::create(&ppath).map_err(io(&ppath))?;
    seqfile::write(&mut f, IMMUTABLE_BYTES, NULL_WRITABLE, &precs, sync).map_err(io(&ppath))?;
    // Each hash goes to the file its key falls in, as the job's partitioner sends it.
    let mut per_file: Vec<Vec<(Vec<u8>, Vec<u8>)>> = vec![Vec::new(); s.num_hash_files.max(1)];
    for (k, h) in &th.hashes {
        let i = th.partitions.partition_point(|p| p <= k);
        if let Some(v) = per_file.get_mut(i) {
            v.push((to_immutable_bytes(k), to_immutable_bytes(h)));
        }
    }
    for (i, recs) in per_file.iter().enumerate() {
        let d = dir.join("hashes").join(format!("part-r-{i:05}"));
        std::fs::create_dir_all(&d).map_err(io(&d))?;
        let dpath = d.join("data");
        let mut f = std::fs::File::create(&dpath).map_err(io(&dpath))?;
        let offsets = seqfile::write(&mut f, IMMUTABLE_BYTES, IMMUTABLE_BYTES, recs, sync)
            .map_err(io(&dpath))?;
        let index: Vec<(Vec<u8>, Vec<u8>)> = recs
            .iter()
            .zip(&offsets)
            .step_by(INDEX_INTERVAL)
            .map(|((k, _), off)| (k.clone(), (*off as i64).to_be_bytes().to_vec()))
            .collect();
        let ipath = d.join("index");
        let mut f = std::fs::File::create(&ipath).map_err(io(&ipath))?;
        seqfile::write(&mut f, IMMUTABLE_BYTES, LONG_WRITABLE, &index, sync).map_err(io(&ipath))?;
    }
    std::fs::write(dir.join("hashes").join("_SUCCESS"), b"").map_err(io(dir))?;
    // The manifest last: its presence says the output is whole.
    let mpath = dir.join("manifest");
    std::fs::write(&mpath, m).map_err(io(&mpath))?;
    Ok(())
}

/// A batch range whose hashes differ between the source and the target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    pub start: Vec<u8>,
    /// Empty: to the end of the source's range.
    pub stop: Vec<u8>,
}

/// SyncTable's dry run: hashes `target_table` over exactly the batch ranges of
/// `source`, and lists every range that differs. Returns (ranges compared, mismatches).
pub fn sync_ranges(
    source: &TableHash,
    conn: &dyn Connection,
    target_table: &str,
    ignore_timestamps: bool,
) -> Result<(usize, Vec<Mismatch>)> {
    let mut spec = source.spec.clone();
    spec.table = target_table.to_string();
    let table = conn.table(target_table)?;
    let mut mismatches = Vec::new();
    let n = source.hashes.len();
    for (i, (start, want)) in source.hashes.iter().enumerate() {
        let stop = match source.hashes.get(i + 1) {
            Some((next, _)) => next.clone(),
            None => source.spec.stop_row.clone(),
        };
        let mut h = Hasher::new(ignore_timestamps);
        for r in table.scan(&spec.scan(start, &stop))? {
            h.add(&r?);
        }
        if &h.finish() != want {
            mismatches.push(Mismatch {
                start: start.clone(),
                stop,
            });
        }
    }
    Ok((n, mismatches))
}

/// Where a HashTable output would be written, checked: not an existing output.
pub fn check_out(dir: &Path) -> Result<PathBuf> {
    if dir.join("manifest").exists() {
        return Err(Error::invalid(format!(
            "{} already holds a hash table output",
            dir.display()
        )));
    }
    Ok(dir.to_path_buf())
}
