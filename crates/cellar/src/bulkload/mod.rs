//! Bulk load into a table (HBase's `completebulkload` / `LoadIncrementalHFiles`): the
//! HFiles of a directory laid out as `DIR/<family>/<file>` become store files of the
//! table's regions.
//!
//! Every file is checked before anything is loaded (its family is one of the table's,
//! it is a valid HFile with its cells in order and all of its family), so a bad file
//! leaves the table as it was. A file whose rows span region boundaries is cut into one
//! piece per region (written under `DIR/<family>/_tmp/`, removed afterwards). Each
//! region then loads its files in one atomic step ([`Region::bulk_load`]): the loaded
//! cells read as written at the load's sequence id. A region that split or moved
//! meanwhile is looked up again and its files regrouped, a few times over. Empty files
//! are skipped, as HBase's tool skips them.
//!
//! The same planning drives a load through a server ([`remote`]): the grouped files go
//! to each region's server as ClientService BulkLoadHFile calls.
//!
//! [`Region::bulk_load`]: cellar_region::Region::bulk_load

mod pieces;
pub(crate) use pieces::write_piece;
pub mod parquet_input;
pub mod produce;
pub mod remote;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cellar_api::{Error, ErrorKind, RegionInfo, TableDescriptor};
use cellar_io::FileSystem;
use cellar_types::to_string_binary;

use crate::error::{DbError, Result};
use crate::master::Master;

/// How many times a load regroups its files after regions changed under it.
const ATTEMPTS: usize = 10;

/// What a load did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulkLoadReport {
    /// Files found (empty ones included).
    pub files: usize,
    /// Files skipped because they hold no cells.
    pub empty: Vec<PathBuf>,
    /// Files cut at region boundaries, and the pieces written for them.
    pub split_files: usize,
    pub pieces: usize,
    /// Regions that loaded something, and the cells loaded.
    pub regions: usize,
    pub cells: u64,
}

/// Where a load goes: the table's schema and regions, and a region's atomic load.
pub trait LoadTarget: Sync {
    fn fs(&self) -> Arc<dyn FileSystem>;
    fn now(&self) -> i64;
    fn describe(&self, table: &str) -> Result<TableDescriptor>;
    /// The table's regions in start-key order.
    fn regions(&self, table: &str) -> Result<Vec<RegionInfo>>;
    /// Loads `files` into `region` in one step: `Some(cells)` when loaded, `None` when
    /// the region no longer holds their rows (split, merged, moved): regroup.
    fn load(
        &self,
        table: &str,
        region: &RegionInfo,
        files: &[(Vec<u8>, PathBuf)],
    ) -> Result<Option<u64>>;
}

/// The regions of this process's master.
impl LoadTarget for Master {
    fn fs(&self) -> Arc<dyn FileSystem> {
        Master::fs(self).clone()
    }
    fn now(&self) -> i64 {
        self.clock().now_millis()
    }
    fn describe(&self, table: &str) -> Result<TableDescriptor> {
        Ok(Master::describe(self, table)?.0)
    }
    fn regions(&self, table: &str) -> Result<Vec<RegionInfo>> {
        Ok(self.locations(table)?.into_iter().map(|l| l.info).collect())
    }
    fn load(
        &self,
        table: &str,
        region: &RegionInfo,
        files: &[(Vec<u8>, PathBuf)],
    ) -> Result<Option<u64>> {
        let loc = self
            .locations(table)?
            .into_iter()
            .find(|l| l.info.encoded == region.encoded);
        let Some(loc) = loc else {
            return Ok(None);
        };
        match loc.region().and_then(|r| Ok(r.bulk_load(files)?)) {
            Ok(o) => Ok(Some(o.cells)),
            Err(e) if retry_elsewhere(&e) => {
                tracing::info!(region = %region.region_name(), "bulk load: the region changed ({e}); regrouping its files");
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

/// One file to load, checked: its family, path and first and last rows.
#[derive(Debug, Clone)]
struct Item {
    family: Vec<u8>,
    path: PathBuf,
    first: Vec<u8>,
    last: Vec<u8>,
}

/// The `(family, file)` pairs of a bulk load directory: each subdirectory is a family;
/// names starting with `.` or `_` are not files to load (HBase's `_tmp`, `_SUCCESS`).
pub fn list_dir(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<(Vec<u8>, PathBuf)>> {
    if !fs.is_dir(dir) {
        return Err(Error::invalid(format!("{} is not a directory", dir.display())).into());
    }
    let mut out = Vec::new();
    let mut families = fs.list_dir(dir)?;
    families.sort();
    for fam_dir in families {
        let Some(name) = fam_dir.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.starts_with('.') || name.starts_with('_') || !fs.is_dir(&fam_dir) {
            continue;
        }
        let mut files = fs.list_dir(&fam_dir)?;
        files.sort();
        for f in files {
            let Some(fname) = f.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if fname.starts_with('.') || fname.starts_with('_') || fs.is_dir(&f) {
                continue;
            }
            out.push((name.as_bytes().to_vec(), f));
        }
    }
    Ok(out)
}

/// Checks one file: valid, in order, all of `family`. `None` for a file without cells.
fn check_file(fs: &dyn FileSystem, family: &[u8], path: &Path) -> Result<Option<Item>> {
    Ok(
        cellar_region::bulk_load::check_hfile(fs, family, path)?.map(|f| Item {
            family: family.to_vec(),
            path: path.to_path_buf(),
            first: f.first_row,
            last: f.last_row,
        }),
    )
}

/// Loads the HFiles of `dir` (`DIR/<family>/<file>`) into `table`.
pub fn load_dir(target: &dyn LoadTarget, table: &str, dir: &Path) -> Result<BulkLoadReport> {
    let files = list_dir(target.fs().as_ref(), dir)?;
    load_files(target, table, &files, &dir.join("_tmp"))
}

/// Loads `(family, path)` files into `table`; pieces of files cut at region
/// boundaries are written under `tmp` (removed afterwards).
pub fn load_files(
    target: &dyn LoadTarget,
    table: &str,
    files: &[(Vec<u8>, PathBuf)],
    tmp: &Path,
) -> Result<BulkLoadReport> {
    let fs = &target.fs();
    let desc = target.describe(table)?;
    let unknown: Vec<String> = files
        .iter()
        .filter(|(f, _)| desc.family(f).is_none())
        .map(|(f, _)| to_string_binary(f))
        .collect();
    if !unknown.is_empty() {
        let valid: Vec<String> = desc
            .families
            .iter()
            .map(|f| to_string_binary(&f.name))
            .collect();
        return Err(Error::new(
            ErrorKind::NoSuchColumnFamily,
            format!(
                "Unmatched family names found: unmatched family names in HFiles to be bulkloaded: {unknown:?}; valid family names of table {table} are: {valid:?}"
            ),
        )
        .into());
    }
    let mut report = BulkLoadReport {
        files: files.len(),
        ..Default::default()
    };
    // 1. Check every file first: a bad one loads nothing.
    let mut items = Vec::new();
    for (family, path) in files {
        match check_file(fs.as_ref(), family, path)? {
            Some(item) => items.push(item),
            None => {
                tracing::warn!(file = %path.display(), "bulk load: the file holds no cells; skipped");
                report.empty.push(path.clone());
            }
        }
    }
    let mut written: Vec<PathBuf> = Vec::new();
    let result = load_items(target, table, &desc, items, tmp, &mut report, &mut written);
    for p in &written {
        if fs.exists(p) {
            let _ = fs.remove_file(p);
        }
    }
    // The pieces' directories (one per family), then `tmp` itself, when empty.
    if fs.is_dir(tmp) {
        for d in fs.list_dir(tmp).unwrap_or_default() {
            if fs.is_dir(&d) && fs.list_dir(&d).is_ok_and(|l| l.is_empty()) {
                let _ = fs.remove_dir(&d);
            }
        }
        if fs.list_dir(tmp).is_ok_and(|l| l.is_empty()) {
            let _ = fs.remove_dir(tmp);
        }
    }
    result.map(|()| report)
}

fn load_items(
    target: &dyn LoadTarget,
    table: &str,
    desc: &TableDescriptor,
    mut items: Vec<Item>,
    tmp: &Path,
    report: &mut BulkLoadReport,
    written: &mut Vec<PathBuf>,
) -> Result<()> {
    let fs = &target.fs();
    let mut loaded_regions = std::collections::BTreeSet::new();
    for attempt in 0..ATTEMPTS {
        if items.is_empty() {
            break;
        }
        // 2. Group by region, cutting files that span several.
        let regions = target.regions(table)?;
        let mut groups: BTreeMap<usize, Vec<Item>> = BTreeMap::new();
        for item in std::mem::take(&mut items) {
            let inside: Vec<usize> = regions
                .iter()
                .enumerate()
                .filter(|(_, r)| {
                    let starts_before_end = r.end.is_empty() || item.first < r.end;
                    let ends_after_start = item.last >= r.start;
                    starts_before_end && ends_after_start
                })
                .map(|(i, _)| i)
                .collect();
            if inside.len() <= 1 {
                let i = inside.first().copied().unwrap_or(0);
                groups.entry(i).or_default().push(item);
                continue;
            }
            report.split_files += 1;
            let family = desc.family(&item.family).ok_or_else(|| {
                Error::new(
                    ErrorKind::NoSuchColumnFamily,
                    to_string_binary(&item.family),
                )
            })?;
            let fam_tmp = tmp.join(to_string_binary(&item.family));
            fs.create_dir_all(&fam_tmp)?;
            for i in inside {
                let r = &regions[i];
                let name = format!(
                    "{}.{}.{attempt}",
                    item.path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    r.encoded
                );
                let dest = fam_tmp.join(name);
                written.push(dest.clone());
                let n = pieces::write_piece(
                    fs,
                    &item.path,
                    family,
                    &r.start,
                    &r.end,
                    &dest,
                    target.now(),
                )?;
                if n == 0 {
                    continue;
                }
                report.pieces += 1;
                if let Some(piece) = check_file(fs.as_ref(), &item.family, &dest)? {
                    groups.entry(i).or_default().push(piece);
                }
            }
        }
        // 3. Each region loads its files atomically.
        for (i, group) in groups {
            let Some(region) = regions.get(i) else {
                items.extend(group);
                continue;
            };
            let pairs: Vec<(Vec<u8>, PathBuf)> = group
                .iter()
                .map(|it| (it.family.clone(), it.path.clone()))
                .collect();
            match target.load(table, region, &pairs)? {
                Some(cells) => {
                    report.cells += cells;
                    loaded_regions.insert(region.encoded.clone());
                }
                None => items.extend(group),
            }
        }
    }
    if !items.is_empty() {
        return Err(DbError::RegionNotServing {
            region: table.to_string(),
            reason: format!(
                "regions kept changing; {} files were not loaded",
                items.len()
            ),
        });
    }
    report.regions = loaded_regions.len();
    Ok(())
}

/// Whether a region's refusal means its rows now live elsewhere (it split, merged or
/// closed while the load was planned).
fn retry_elsewhere(e: &DbError) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WrongRegion | ErrorKind::NotServingRegion
    )
}
