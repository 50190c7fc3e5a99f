//! The `backfill` step: the old table's history, as of one snapshot, re-keyed into the
//! new table by bulk load.
//!
//! The snapshot is cloned to a scratch table (so reads see the old table's data with its
//! deletes and versions applied, as of one moment); each of the scratch table's regions
//! is read, every cell re-keyed by the map and written as sorted runs of bounded size,
//! one HFile per family and run, and the files are bulk loaded into the new table (cut
//! at its regions; runs may overlap, which a load allows). Regions are read and loaded
//! in parallel. Loaded cells keep their timestamps, so writes made to the new table
//! meanwhile (dual writes, deletes included) keep winning where they are newer.
//!
//! Each source region loaded is recorded in the state directory: a backfill stopped
//! anywhere resumes with the regions left (a region loaded but not yet recorded loads
//! again, which adds identical cells and changes nothing a read sees). When every
//! region is in, the step is recorded, then the scratch table and the snapshot go.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use cellar_api::{Scan, TableDescriptor};
use cellar_hfile::HFileWriter;
use cellar_io::FileSystem;
use cellar_region::RegionError;
use cellar_types::{compare_cells, to_string_binary, Cell};

use super::create::region_ranges;
use super::keymap::KeyMap;
use super::plan::{backfilled, record, record_backfilled, steps, Plan};
use super::verify::rekey;
use super::Site;
use crate::error::Result;

/// What a backfill did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BackfillReport {
    /// Source regions loaded by this run, and those an earlier run had done.
    pub regions: usize,
    pub skipped: usize,
    /// Cells written by this run.
    pub cells: u64,
}

/// How a backfill runs.
#[derive(Debug, Clone, Copy)]
pub struct BackfillOptions {
    /// Source regions read and loaded at once.
    pub threads: usize,
    /// Bytes of re-keyed cells a region's reader holds before writing them as a run.
    pub run_bytes: usize,
}

impl Default for BackfillOptions {
    fn default() -> Self {
        BackfillOptions {
            threads: 2,
            run_bytes: 64 << 20,
        }
    }
}

/// Where a backfill is, for a progress display.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// Source regions in all, and loaded (by this run or an earlier one).
    pub regions: usize,
    pub done: usize,
    /// Cells read and re-keyed by this run.
    pub cells: u64,
}

fn scratch_name(plan: &Plan) -> String {
    format!("{}__backfill_source", plan.to)
}

fn drop_table(site: &Site, name: &str) -> Result<()> {
    let admin = site.conn.admin();
    if admin.table_exists(name)? {
        if admin.is_table_enabled(name)? {
            admin.disable_table(name)?;
        }
        admin.delete_table(name)?;
    }
    Ok(())
}

/// Removes what a finished backfill no longer needs (again: no change).
fn clean_up(site: &Site, plan: &Plan) -> Result<()> {
    drop_table(site, &scratch_name(plan))?;
    let admin = site.conn.admin();
    if admin.list_snapshots()?.iter().any(|s| s.0 == plan.snapshot) {
        admin.delete_snapshot(&plan.snapshot)?;
    }
    let fs = site.target.fs();
    let pieces = site.state.join("pieces");
    if fs.is_dir(&pieces) {
        crate::database::files::remove_tree(fs.as_ref(), &pieces)?;
    }
    Ok(())
}

/// Backfills `plan.to` with `plan.from`'s data as of the plan's snapshot (taken now if
/// it does not exist yet), calling `progress` as regions load.
pub fn backfill(
    site: &Site,
    plan: &Plan,
    opts: BackfillOptions,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<BackfillReport> {
    let fs = site.target.fs();
    fs.create_dir_all(&site.state)?;
    if steps(fs.as_ref(), &site.state)?.contains("backfill") {
        clean_up(site, plan)?;
        let n = backfilled(fs.as_ref(), &site.state)?.len();
        return Ok(BackfillReport {
            skipped: n,
            ..Default::default()
        });
    }
    let map = KeyMap::parse(&plan.key_map)?;
    let admin = site.conn.admin();
    let scratch = scratch_name(plan);
    if !admin.list_snapshots()?.iter().any(|s| s.0 == plan.snapshot) {
        // A scratch table left by a crash belongs to no snapshot now.
        drop_table(site, &scratch)?;
        admin.snapshot(&plan.from, &plan.snapshot)?;
    }
    if !admin.table_exists(&scratch)? {
        admin.clone_snapshot(&plan.snapshot, &scratch)?;
    } else if !admin.is_table_enabled(&scratch)? {
        admin.enable_table(&scratch)?;
    }
    let report = load_regions(site, plan, &map, &scratch, opts, progress)?;
    record(fs.as_ref(), &site.state, "backfill")?;
    clean_up(site, plan)?;
    Ok(report)
}

fn load_regions(
    site: &Site,
    plan: &Plan,
    map: &KeyMap,
    scratch: &str,
    opts: BackfillOptions,
    progress: &(dyn Fn(&Progress) + Sync),
) -> Result<BackfillReport> {
    let fs = site.target.fs();
    let (desc, _): (TableDescriptor, bool) = site.conn.admin().describe(scratch)?;
    let done = backfilled(fs.as_ref(), &site.state)?;
    // A source region is known by its start key (the clone's region names are new).
    let ranges = region_ranges(site, scratch)?;
    let todo: Vec<(usize, Vec<u8>, Vec<u8>)> = ranges
        .iter()
        .enumerate()
        .filter(|(_, (s, _))| !done.contains(&to_string_binary(s)))
        .map(|(i, (s, e))| (i, s.clone(), e.clone()))
        .collect();
    let skipped = ranges.len() - todo.len();
    let next = AtomicUsize::new(0);
    let loaded = AtomicUsize::new(0);
    let cells = AtomicU64::new(0);
    let failed = AtomicBool::new(false);
    let first_error = Mutex::new(None);
    let record_lock = Mutex::new(());
    let report_progress = || {
        progress(&Progress {
            regions: ranges.len(),
            done: skipped + loaded.load(Ordering::SeqCst),
            cells: cells.load(Ordering::SeqCst),
        })
    };
    report_progress();
    let worker = || {
        while !failed.load(Ordering::SeqCst) {
            let i = next.fetch_add(1, Ordering::SeqCst);
            let Some((index, start, end)) = todo.get(i) else {
                break;
            };
            let region = RegionJob {
                site,
                plan,
                map,
                scratch,
                desc: &desc,
                run_bytes: opts.run_bytes,
                dir: site.state.join("pieces").join(format!("r{index:06}")),
                cells: &cells,
            };
            let result = region.run(start, end).and_then(|()| {
                let _held = record_lock.lock().unwrap_or_else(|e| e.into_inner());
                record_backfilled(fs.as_ref(), &site.state, &to_string_binary(start))
            });
            match result {
                Ok(()) => {
                    loaded.fetch_add(1, Ordering::SeqCst);
                    report_progress();
                }
                Err(e) => {
                    failed.store(true, Ordering::SeqCst);
                    let mut slot = first_error.lock().unwrap_or_else(|e| e.into_inner());
                    slot.get_or_insert(e);
                }
            }
        }
    };
    let threads = opts.threads.clamp(1, todo.len().max(1));
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(worker);
        }
        worker();
    });
    if let Some(e) = first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    Ok(BackfillReport {
        regions: loaded.into_inner(),
        skipped,
        cells: cells.into_inner(),
    })
}

/// One source region's read, re-key and load.
struct RegionJob<'a> {
    site: &'a Site<'a>,
    plan: &'a Plan,
    map: &'a KeyMap,
    scratch: &'a str,
    desc: &'a TableDescriptor,
    run_bytes: usize,
    dir: PathBuf,
    cells: &'a AtomicU64,
}

impl RegionJob<'_> {
    fn run(&self, start: &[u8], end: &[u8]) -> Result<()> {
        let fs = self.site.target.fs();
        // What a stopped run left of this region is written again.
        if fs.is_dir(&self.dir) {
            crate::database::files::remove_tree(fs.as_ref(), &self.dir)?;
        }
        let versions = self
            .desc
            .families
            .iter()
            .map(|f| f.versions)
            .max()
            .unwrap_or(1);
        let scan = Scan::new()
            .start_row(start.to_vec())
            .stop_row(end.to_vec())
            .max_versions(versions)
            .batch(10_000)
            .allow_partial_results(true);
        let mut buffer: BTreeMap<Vec<u8>, Vec<Cell>> = BTreeMap::new();
        let mut held = 0usize;
        let mut files: Vec<(Vec<u8>, PathBuf)> = Vec::new();
        for r in self.site.conn.table(self.scratch)?.scan(&scan)? {
            for c in r?.cells {
                let n = rekey(self.map, &c)?;
                held += n.buffer_len();
                buffer.entry(n.family().to_vec()).or_default().push(n);
                self.cells.fetch_add(1, Ordering::Relaxed);
            }
            if held >= self.run_bytes {
                self.write_runs(fs.as_ref(), &mut buffer, &mut files)?;
                held = 0;
            }
        }
        self.write_runs(fs.as_ref(), &mut buffer, &mut files)?;
        if !files.is_empty() {
            crate::bulkload::load_files(
                self.site.target,
                &self.plan.to,
                &files,
                &self.dir.join("_tmp"),
            )?;
        }
        crate::database::files::remove_tree(fs.as_ref(), &self.dir)?;
        Ok(())
    }

    /// Writes each family's buffered cells, sorted, as one more run file.
    fn write_runs(
        &self,
        fs: &dyn FileSystem,
        buffer: &mut BTreeMap<Vec<u8>, Vec<Cell>>,
        files: &mut Vec<(Vec<u8>, PathBuf)>,
    ) -> Result<()> {
        for (family, mut cells) in std::mem::take(buffer) {
            cells.sort_by(compare_cells);
            cells.dedup_by(|a, b| compare_cells(a, b) == std::cmp::Ordering::Equal);
            let fam = self
                .desc
                .family(&family)
                .ok_or_else(|| cellar_api::Error::invalid("a family the table lacks"))?;
            let dir = self.dir.join(to_string_binary(&family));
            fs.create_dir_all(&dir)?;
            let path = run_path(&dir, files.len());
            let opts = cellar_region::store::family_writer_options(fam, self.site.target.now());
            let mut w = HFileWriter::create(fs, &path, opts).map_err(RegionError::from)?;
            for c in cells {
                w.append(c).map_err(RegionError::from)?;
            }
            w.close().map_err(RegionError::from)?;
            files.push((family, path));
        }
        Ok(())
    }
}

fn run_path(dir: &Path, n: usize) -> PathBuf {
    dir.join(format!("run{n:05}"))
}
