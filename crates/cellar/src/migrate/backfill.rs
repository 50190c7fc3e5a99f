//! Backfill and verification of a re-key migration.
//!
//! Backfill: a snapshot of the old table is cloned to a scratch table (so reads see the
//! old table's data with its deletes and versions applied, as of one moment), each of
//! its regions is read, every cell re-keyed by the map and written, sorted, to an HFile
//! per family, and the files are bulk loaded into the new table (cut at its regions).
//! Loaded cells keep their timestamps, so writes made to the new table meanwhile (dual
//! writes) keep winning where they are newer. Each source region done is recorded in the
//! state directory: a backfill stopped half way resumes with the regions left.
//!
//! Verify: the old table's cells, re-keyed, against the new table's, row by new row:
//! cell counts and an MD5 of the cells; every old entity (old row) whose new rows differ
//! is reported, the heaviest entities first.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use cellar_api::{Scan, TableDescriptor};
use cellar_hfile::HFileWriter;
use cellar_region::RegionError;
use cellar_types::{compare_cells, to_string_binary, Cell};
use md5::{Digest, Md5};

use super::keymap::KeyMap;
use crate::client::Connection;
use crate::error::Result;
use crate::master::Master;

/// What a backfill did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BackfillReport {
    /// Source regions loaded by this run, and those an earlier run had done.
    pub regions: usize,
    pub skipped: usize,
    pub cells: u64,
}

fn done_file(state: &Path) -> PathBuf {
    state.join("backfill.done")
}

fn done_regions(state: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(done_file(state))
        .map(|s| s.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

fn mark_done(state: &Path, key: &str) -> Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(done_file(state))
        .map_err(|e| cellar_api::Error::new(cellar_api::ErrorKind::Io, e.to_string()))?;
    writeln!(f, "{key}")
        .and_then(|_| f.sync_all())
        .map_err(|e| cellar_api::Error::new(cellar_api::ErrorKind::Io, e.to_string()).into())
}

/// Re-keys one cell (timestamp, type, value and tags kept).
fn rekey(map: &KeyMap, c: &Cell) -> Result<Cell> {
    let (row, q) = map.map(c.row(), c.qualifier(), c.timestamp())?;
    Ok(
        Cell::new(row, c.family(), q, c.timestamp(), c.cell_type(), c.value())
            .map_err(|e| cellar_api::Error::invalid(e.to_string()))?,
    )
}

/// Backfills `to` with `from`'s data as of snapshot `snapshot` (taken now if missing),
/// re-keyed by `map`; `state` records progress.
pub fn backfill(
    master: &Master,
    from: &str,
    to: &str,
    map: &KeyMap,
    snapshot: &str,
    state: &Path,
) -> Result<BackfillReport> {
    std::fs::create_dir_all(state)
        .map_err(|e| cellar_api::Error::new(cellar_api::ErrorKind::Io, e.to_string()))?;
    if !master.list_snapshots()?.iter().any(|s| s.name == snapshot) {
        master.snapshot(from, snapshot)?;
    }
    let scratch = format!("{to}__backfill_source");
    if master.table_exists(&scratch) {
        master.disable_table(&scratch).ok();
        master.drop_table(&scratch)?;
    }
    master.clone_snapshot(snapshot, &scratch)?;
    let result = backfill_from(master, &scratch, to, map, state);
    master.disable_table(&scratch).ok();
    master.drop_table(&scratch).ok();
    result
}

fn backfill_from(
    master: &Master,
    scratch: &str,
    to: &str,
    map: &KeyMap,
    state: &Path,
) -> Result<BackfillReport> {
    let (desc, _): (TableDescriptor, bool) = master.describe(scratch)?;
    let done = done_regions(state);
    let mut report = BackfillReport::default();
    let versions = desc.families.iter().map(|f| f.versions).max().unwrap_or(1);
    let regions = master.locations(scratch)?;
    for loc in regions {
        // A source region is known by its start key (the clone's names are new).
        let key = to_string_binary(&loc.info.start);
        if done.contains(&key) {
            report.skipped += 1;
            continue;
        }
        let region = loc.region()?;
        let scan = Scan::new()
            .start_row(loc.info.start.clone())
            .stop_row(loc.info.end.clone())
            .max_versions(versions);
        let mut per_family: BTreeMap<Vec<u8>, Vec<Cell>> = BTreeMap::new();
        for r in region.scanner(&scan)? {
            for c in r?.cells {
                per_family
                    .entry(c.family().to_vec())
                    .or_default()
                    .push(rekey(map, &c)?);
            }
        }
        let tmp = state.join("pieces").join(&loc.info.encoded);
        let mut files = Vec::new();
        for (family, mut cells) in per_family {
            cells.sort_by(compare_cells);
            cells.dedup_by(|a, b| compare_cells(a, b) == std::cmp::Ordering::Equal);
            report.cells += cells.len() as u64;
            let fam = desc
                .family(&family)
                .ok_or_else(|| cellar_api::Error::invalid("a family the table lacks"))?;
            let dir = tmp.join(to_string_binary(&family));
            std::fs::create_dir_all(&dir)
                .map_err(|e| cellar_api::Error::new(cellar_api::ErrorKind::Io, e.to_string()))?;
            let path = dir.join("cells");
            let opts =
                cellar_region::store::family_writer_options(fam, master.clock().now_millis());
            let mut w = HFileWriter::create(master.fs().as_ref(), &path, opts)
                .map_err(RegionError::from)?;
            for c in cells {
                w.append(c).map_err(RegionError::from)?;
            }
            w.close().map_err(RegionError::from)?;
            files.push((family, path));
        }
        if !files.is_empty() {
            crate::bulkload::load_files(master, to, &files, &tmp.join("_tmp"))?;
        }
        let _ = std::fs::remove_dir_all(&tmp);
        mark_done(state, &key)?;
        report.regions += 1;
    }
    Ok(report)
}

/// One old entity whose re-keyed cells differ from the new table's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityDiff {
    pub entity: Vec<u8>,
    /// Its cells in the old table (re-keyed) and the new table's cells in the rows it
    /// maps to.
    pub old_cells: u64,
    pub new_cells: u64,
}

/// Per new row: cell count and a digest of the cells, in order.
#[derive(Default)]
struct RowSum {
    cells: u64,
    md5: Md5,
}

fn digest(c: &Cell, md5: &mut Md5) {
    for part in [c.row(), c.family(), c.qualifier(), c.value()] {
        md5.update((part.len() as u32).to_be_bytes());
        md5.update(part);
    }
    md5.update(c.timestamp().to_be_bytes());
}

/// Compares `to` with `from` re-keyed by `map`, cell for cell (all versions); the
/// differing old entities, heaviest first. With `sample`, only that many of the
/// heaviest entities are compared.
pub fn verify(
    conn: &dyn Connection,
    from: &str,
    to: &str,
    map: &KeyMap,
    sample: Option<usize>,
) -> Result<(usize, Vec<EntityDiff>)> {
    let scan = Scan::new().max_versions(u32::MAX);
    // Old side: per entity its cell count, and per new row its expected cells.
    let mut entity_cells: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    let mut expected: BTreeMap<Vec<u8>, Vec<Cell>> = BTreeMap::new();
    let mut owners: BTreeMap<Vec<u8>, BTreeSet<Vec<u8>>> = BTreeMap::new();
    for r in conn.table(from)?.scan(&scan)? {
        let r = r?;
        for c in &r.cells {
            let n = rekey(map, c)?;
            *entity_cells.entry(r.row.clone()).or_default() += 1;
            owners
                .entry(r.row.clone())
                .or_default()
                .insert(n.row().to_vec());
            expected.entry(n.row().to_vec()).or_default().push(n);
        }
    }
    let mut entities: Vec<(Vec<u8>, u64)> = entity_cells.into_iter().collect();
    entities.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if let Some(n) = sample {
        entities.truncate(n);
    }
    let t = conn.table(to)?;
    let mut diffs = Vec::new();
    for (entity, count) in &entities {
        let rows = owners.get(entity).cloned().unwrap_or_default();
        let (mut want, mut got) = (RowSum::default(), RowSum::default());
        let mut new_cells = 0;
        for row in &rows {
            let mut cells = expected.get(row).cloned().unwrap_or_default();
            cells.sort_by(compare_cells);
            for c in &cells {
                want.cells += 1;
                digest(c, &mut want.md5);
            }
            let get = cellar_api::Get::new(row.clone()).max_versions(u32::MAX);
            for c in &t.get(&get)?.cells {
                got.cells += 1;
                new_cells += 1;
                digest(c, &mut got.md5);
            }
        }
        if want.cells != got.cells || want.md5.finalize() != got.md5.finalize() {
            diffs.push(EntityDiff {
                entity: entity.clone(),
                old_cells: *count,
                new_cells,
            });
        }
    }
    Ok((entities.len(), diffs))
}
