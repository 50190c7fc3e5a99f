//! HBase's snapshots on disk, as `hbase snapshot` takes them and `ExportSnapshot` copies
//! them: `.hbase-snapshot/NAME/.snapshotinfo` (a `SnapshotDescription`), its
//! `data.manifest` (the table's schema and, per region, its store files: whole files,
//! or a split daughter's reference to half of its parent's), and the files themselves
//! under `archive/data/` (or `data/` in a live root). This reads a snapshot's regions and
//! their cells, resolving references to halves and links to the files they name.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cellar_api::{Error, ErrorKind, RegionInfo, Result};
use cellar_hfile::{BlockCache, HFileReader};
use cellar_io::{FileSystem, LocalFs};
use cellar_protocol::pb;
use cellar_types::{compare_cells, to_string_binary, Cell};
use prost::Message;

/// One store file of a snapshot region.
#[derive(Debug, Clone)]
pub struct SnapshotStoreFile {
    pub name: String,
    /// A split daughter's reference: the split row, and whether it is the top half
    /// (rows at or after the split row) or the bottom.
    pub reference: Option<(Vec<u8>, bool)>,
    pub size: Option<u64>,
}

/// One region of a snapshot.
#[derive(Debug, Clone)]
pub struct SnapshotRegion {
    pub info: RegionInfo,
    /// A split parent (offline, kept for its daughters' references).
    pub split: bool,
    /// Store files by family.
    pub families: Vec<(Vec<u8>, Vec<SnapshotStoreFile>)>,
}

/// A snapshot read from its manifest.
#[derive(Debug, Clone)]
pub struct HBaseSnapshot {
    pub root: PathBuf,
    pub name: String,
    /// `namespace:table`, or the bare name in the default namespace.
    pub table: String,
    pub creation_time: i64,
    /// `DISABLED`, `FLUSH` or `SKIPFLUSH`.
    pub kind: &'static str,
    pub version: i32,
    pub families: usize,
    pub regions: Vec<SnapshotRegion>,
    /// The table's schema as the snapshot recorded it.
    pub schema: pb::TableSchema,
    /// Where its files are read from.
    pub fs: Arc<dyn FileSystem>,
}

fn corrupt(what: &Path, why: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Corrupt, format!("{}: {why}", what.display()))
}

fn read(fs: &dyn FileSystem, path: &Path) -> Result<Vec<u8>> {
    cellar_io::read_all(fs, path)
        .map_err(|e| Error::new(ErrorKind::Io, format!("{}: {e}", path.display())))
}

/// Reads snapshot `name` under `root` (an exported snapshot's directory or an HBase
/// root directory).
pub fn read_snapshot(root: &Path, name: &str) -> Result<HBaseSnapshot> {
    read_snapshot_in(Arc::new(LocalFs), root, name)
}

/// As [`read_snapshot`], on the file system `fs`.
pub fn read_snapshot_in(fs: Arc<dyn FileSystem>, root: &Path, name: &str) -> Result<HBaseSnapshot> {
    if name.is_empty() || name.contains('/') || name.starts_with('.') {
        return Err(Error::invalid(format!("not a snapshot name: {name:?}")));
    }
    let dir = root.join(".hbase-snapshot").join(name);
    let info_path = dir.join(".snapshotinfo");
    let desc = pb::SnapshotDescription::decode(read(fs.as_ref(), &info_path)?.as_slice())
        .map_err(|e| corrupt(&info_path, e))?;
    let manifest_path = dir.join("data.manifest");
    let manifest = pb::SnapshotDataManifest::decode(read(fs.as_ref(), &manifest_path)?.as_slice())
        .map_err(|e| corrupt(&manifest_path, e))?;
    let mut regions = Vec::new();
    for rm in &manifest.region_manifests {
        let info = cellar_protocol::convert::region_info_from_pb(&rm.region_info)
            .map_err(|e| corrupt(&manifest_path, e))?;
        let mut families = Vec::new();
        for ff in &rm.family_files {
            let mut files = Vec::new();
            for sf in &ff.store_files {
                let reference = match &sf.reference {
                    Some(r) => Some((
                        split_row(&r.splitkey).ok_or_else(|| {
                            corrupt(&manifest_path, "a reference's split key is malformed")
                        })?,
                        r.range == pb::reference::Range::Top as i32,
                    )),
                    None => None,
                };
                if sf.name.is_empty() || sf.name.contains('/') {
                    return Err(corrupt(&manifest_path, "a store file without a plain name"));
                }
                files.push(SnapshotStoreFile {
                    name: sf.name.clone(),
                    reference,
                    size: sf.file_size,
                });
            }
            families.push((ff.family_name.to_vec(), files));
        }
        regions.push(SnapshotRegion {
            info,
            split: rm.region_info.split.unwrap_or(false),
            families,
        });
    }
    regions.sort_by(|a, b| {
        a.info
            .start
            .cmp(&b.info.start)
            .then(a.info.id.cmp(&b.info.id))
    });
    let kind = match desc.r#type {
        Some(0) => "DISABLED",
        Some(2) => "SKIPFLUSH",
        _ => "FLUSH",
    };
    Ok(HBaseSnapshot {
        root: root.to_path_buf(),
        name: desc.name,
        table: desc.table.unwrap_or_default(),
        creation_time: desc.creation_time.unwrap_or(0),
        kind,
        version: desc.version.unwrap_or(0),
        families: manifest.table_schema.column_families.len(),
        regions,
        schema: manifest.table_schema,
        fs,
    })
}

/// The row of a split key (a whole key: 2-byte row length, the row, ...).
fn split_row(key: &[u8]) -> Option<Vec<u8>> {
    let n = usize::from(u16::from_be_bytes([*key.first()?, *key.get(1)?]));
    key.get(2..2 + n).map(<[u8]>::to_vec)
}

impl HBaseSnapshot {
    fn table_dir(&self, base: &str, table: &str) -> PathBuf {
        let (ns, t) = table.split_once(':').unwrap_or(("default", table));
        self.root.join(base).join("data").join(ns).join(t)
    }

    /// Where a store file's bytes are: in the archive (where an export puts them) or
    /// the live data directory. A reference names its parent's file
    /// (`FILE.PARENT`); a link names another table's (`[NS=]TABLE=REGION-FILE`).
    pub fn locate(&self, region: &str, family: &[u8], name: &str) -> Result<PathBuf> {
        let family = String::from_utf8_lossy(family).into_owned();
        let (table, region, file) = if let Some((link, file)) =
            name.contains('=').then(|| name.rsplit_once('-')).flatten()
        {
            let (table, region) = link.rsplit_once('=').unwrap_or(("", link));
            (
                table.replacen('=', ":", 1),
                region.to_string(),
                file.to_string(),
            )
        } else {
            (self.table.clone(), region.to_string(), name.to_string())
        };
        for base in ["archive", ""] {
            let p = self
                .table_dir(base, &table)
                .join(&region)
                .join(&family)
                .join(&file);
            if self.fs.exists(&p) && !self.fs.is_dir(&p) {
                return Ok(p);
            }
        }
        Err(Error::new(
            ErrorKind::Io,
            format!(
                "store file {name} of region {region} family {family} is in neither archive/ nor data/ under {}",
                self.root.display()
            ),
        ))
    }

    /// Where the bytes of a region's store file are: its own, or for a reference
    /// (`FILE.PARENT`) the parent region's file it is half of.
    pub fn source(
        &self,
        region: &SnapshotRegion,
        family: &[u8],
        f: &SnapshotStoreFile,
    ) -> Result<PathBuf> {
        if f.reference.is_none() {
            return self.locate(&region.info.encoded, family, &f.name);
        }
        let (file, parent) = f.name.rsplit_once('.').ok_or_else(|| {
            Error::new(
                ErrorKind::Corrupt,
                format!("reference {} names no parent region", f.name),
            )
        })?;
        self.locate(parent, family, file)
    }

    /// Every cell of a region, in HBase's order, references read as their halves.
    pub fn cells(&self, region: &SnapshotRegion) -> Result<Vec<Cell>> {
        let cache = Arc::new(BlockCache::new(4 << 20));
        let mut out = Vec::new();
        for (family, files) in &region.families {
            for f in files {
                let path = self.source(region, family, f)?;
                let reader = HFileReader::open(self.fs.as_ref(), &path, Some(cache.clone()))
                    .map_err(|e| corrupt(&path, e))?;
                let mut scanner = reader.scanner();
                let mut more = scanner.seek_to_first().map_err(|e| corrupt(&path, e))?;
                while more {
                    let Some(cell) = scanner.current().cloned() else {
                        break;
                    };
                    let keep = match &f.reference {
                        Some((row, true)) => cell.row() >= row.as_slice(),
                        Some((row, false)) => cell.row() < row.as_slice(),
                        None => true,
                    };
                    if keep {
                        out.push(cell);
                    }
                    more = scanner.advance().map_err(|e| corrupt(&path, e))?;
                }
            }
        }
        out.sort_by(compare_cells);
        Ok(out)
    }
}

/// The snapshot as the oracle lists it (testdata/snapshot/hbase-2.6): its description,
/// each region with its files, then the cells of each region that serves (split
/// parents do not).
pub fn listing(s: &HBaseSnapshot) -> Result<String> {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "snapshot {} table={} type={} version={} families={}",
        s.name, s.table, s.kind, s.version, s.families
    );
    for r in &s.regions {
        let _ = writeln!(
            t,
            "region [{}, {}) id={} split={} offline={}",
            to_string_binary(&r.info.start),
            to_string_binary(&r.info.end),
            r.info.id,
            r.split,
            r.info.offline
        );
        let mut files: Vec<String> = Vec::new();
        for (family, fs) in &r.families {
            for f in fs {
                let what = match &f.reference {
                    Some((_, top)) => format!(
                        "reference {} of {}",
                        if *top { "TOP" } else { "BOTTOM" },
                        f.name.split_once('.').map_or("", |(_, p)| p)
                    ),
                    None => "hfile".to_string(),
                };
                files.push(format!("  file {} {what}", String::from_utf8_lossy(family)));
            }
        }
        files.sort();
        for f in files {
            let _ = writeln!(t, "{f}");
        }
    }
    for r in s.regions.iter().filter(|r| !(r.info.offline && r.split)) {
        let _ = writeln!(
            t,
            "cells of [{}, {})",
            to_string_binary(&r.info.start),
            to_string_binary(&r.info.end)
        );
        for c in s.cells(r)? {
            let _ = writeln!(
                t,
                "  {}/{}:{}/{}/{} value={}",
                to_string_binary(c.row()),
                to_string_binary(c.family()),
                to_string_binary(c.qualifier()),
                c.timestamp(),
                c.cell_type().name(),
                to_string_binary(c.value())
            );
        }
    }
    Ok(t)
}
