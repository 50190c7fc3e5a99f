//! Importing a snapshot HBase exported (`ExportSnapshot`: `.hbase-snapshot/NAME/` with
//! its `.snapshotinfo` and `data.manifest`, the files under `archive/data/...`) as a new
//! Cellar table: the same families and settings, the same region boundaries (split
//! parents left out), and every store file of every region loaded as it is — HBase's
//! files are HFile v3, which Cellar reads, 1.x comparator names included. A split
//! daughter's reference is rewritten as the half it stands for. Each region takes its
//! files one at a time, oldest first (by the sequence id each file records), so a newer
//! file's cell still wins over an older one's at the same coordinates. An import is all
//! or nothing: a failure drops the half-made table, and so does the next open after a
//! crash (a journal under `.importing/` names the table until its last file is in).

use std::path::{Path, PathBuf};

use cellar_api::{Error, ErrorKind};
use cellar_hfile::HFileReader;
use cellar_types::to_string_binary;

use crate::error::{DbError, Result};
use crate::hbase_snapshot::{read_snapshot, read_snapshot_in, HBaseSnapshot};
use crate::master::Master;

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    pub table: String,
    pub regions: usize,
    /// Store files loaded, and how many of them were reference halves rewritten.
    pub files: usize,
    pub halves: usize,
    pub cells: u64,
}

/// Imports snapshot `name` found under `root` (an export's directory or an HBase root
/// directory) as table `table` (default: the snapshot's own table name).
pub fn import_snapshot(
    master: &Master,
    root: &Path,
    name: &str,
    table: Option<&str>,
) -> Result<ImportReport> {
    import_with(master, root, name, table, false)
}

/// As [`import_snapshot`]; with `link`, store files become second names of the
/// snapshot's files (hard links) instead of copies: a clone of one of this database's
/// own snapshots, whose archived files never change.
pub(crate) fn import_with(
    master: &Master,
    root: &Path,
    name: &str,
    table: Option<&str>,
    link: bool,
) -> Result<ImportReport> {
    // An export is read from the local disk; a clone from the database's own.
    let snap = if link {
        read_snapshot_in(master.fs().clone(), root, name)?
    } else {
        read_snapshot(root, name)?
    };
    let mut desc = cellar_protocol::convert::table_from_pb(&snap.schema)
        .map_err(|e| Error::new(ErrorKind::Corrupt, format!("snapshot {name}: {e}")))?;
    if let Some(t) = table {
        desc.name = t.to_string();
    }
    let table = desc.name.clone();
    let mut serving: Vec<_> = snap
        .regions
        .iter()
        .filter(|r| !(r.split && r.info.offline))
        .collect();
    serving.sort_by(|a, b| a.info.start.cmp(&b.info.start));
    let splits: Vec<Vec<u8>> = serving
        .iter()
        .skip(1)
        .map(|r| r.info.start.clone())
        .collect();
    let journal = journal_path(master, &table);
    crate::database::files::write_atomic(master.fs().as_ref(), &journal, table.as_bytes())?;
    if let Err(e) = master.create_table(desc, splits) {
        remove_journal(master, &journal)?;
        return Err(e);
    }
    let tmp = master
        .root()
        .join(".tmp")
        .join(format!("import-{:016x}", cellar_io::random_id()));
    let result = load_regions(master, &snap, &serving, &table, &tmp, link);
    let fs = master.fs();
    if fs.is_dir(&tmp) {
        let _ = crate::database::files::remove_tree(fs.as_ref(), &tmp);
    }
    match result {
        Ok(mut report) => {
            remove_journal(master, &journal)?;
            report.table = table;
            Ok(report)
        }
        Err(e) => {
            // All or nothing: the half-made table goes.
            let _ = master.disable_table(&table);
            let _ = master.drop_table(&table);
            remove_journal(master, &journal)?;
            Err(e)
        }
    }
}

fn journal_dir(master: &Master) -> PathBuf {
    master.root().join(".importing")
}

fn journal_path(master: &Master, table: &str) -> PathBuf {
    journal_dir(master).join(format!("{:x}", md5_of(table.as_bytes())))
}

fn md5_of(bytes: &[u8]) -> u128 {
    use md5::{Digest, Md5};
    u128::from_be_bytes(Md5::digest(bytes).into())
}

fn remove_journal(master: &Master, journal: &Path) -> Result<()> {
    let fs = master.fs();
    fs.remove_file(journal)?;
    fs.sync_dir(&journal_dir(master))?;
    Ok(())
}

/// Drops every table an import or clone was making when the process stopped (its
/// journal is still there), so the table is absent, as if never begun.
pub(crate) fn roll_back_unfinished(master: &Master) -> Result<()> {
    let fs = master.fs().clone();
    let dir = journal_dir(master);
    if !fs.is_dir(&dir) {
        return Ok(());
    }
    for journal in fs.list_dir(&dir)? {
        if journal.extension().is_some_and(|e| e == "tmp") {
            // A journal never completed: its import never began.
            fs.remove_file(&journal)?;
            continue;
        }
        let table =
            String::from_utf8_lossy(&cellar_io::read_all(fs.as_ref(), &journal)?).into_owned();
        if master.table_exists(&table) {
            tracing::warn!(table = %table, "dropping a table whose import or clone a stop interrupted");
            if master.describe(&table)?.1 {
                master.disable_table(&table)?;
            }
            master.drop_table(&table)?;
        }
        fs.remove_file(&journal)?;
    }
    fs.sync_dir(&dir)?;
    Ok(())
}

fn load_regions(
    master: &Master,
    snap: &HBaseSnapshot,
    serving: &[&crate::hbase_snapshot::SnapshotRegion],
    table: &str,
    tmp: &Path,
    link: bool,
) -> Result<ImportReport> {
    let fs = master.fs().clone();
    let (desc, _) = master.describe(table)?;
    let locations = master.locations(table)?;
    let mut report = ImportReport {
        regions: serving.len(),
        ..Default::default()
    };
    for r in serving {
        let loc = locations
            .iter()
            .find(|l| l.info.start == r.info.start)
            .ok_or_else(|| DbError::RegionNotServing {
                region: to_string_binary(&r.info.start),
                reason: "the new table has no region starting there".into(),
            })?;
        let region = loc.region()?;
        // (max sequence id, family, path) of every file, oldest first.
        let mut files: Vec<(u64, Vec<u8>, PathBuf)> = Vec::new();
        for (family, list) in &r.families {
            let fam = desc.family(family).ok_or_else(|| {
                Error::new(
                    ErrorKind::Corrupt,
                    format!(
                        "snapshot {}: region files of family '{}' the schema lacks",
                        snap.name,
                        to_string_binary(family)
                    ),
                )
            })?;
            for f in list {
                let src = snap.source(r, family, f)?;
                let path = match &f.reference {
                    None => src,
                    Some((split_row, top)) => {
                        let dir = tmp.join(&r.info.encoded).join(to_string_binary(family));
                        fs.create_dir_all(&dir)?;
                        let dest = dir.join(&f.name);
                        let (lo, hi): (&[u8], &[u8]) = if *top {
                            (split_row, &[])
                        } else {
                            (&[], split_row)
                        };
                        let now = master.clock().now_millis();
                        let n = crate::bulkload::write_piece(&fs, &src, fam, lo, hi, &dest, now)?;
                        if n == 0 {
                            // Nothing of the parent's file on this side.
                            continue;
                        }
                        report.halves += 1;
                        dest
                    }
                };
                let reader = HFileReader::open(fs.as_ref(), &path, None).map_err(|e| {
                    Error::new(ErrorKind::Corrupt, format!("{}: {e}", path.display()))
                })?;
                if reader.entry_count() == 0 {
                    // An empty flush or compaction output: nothing to load.
                    continue;
                }
                let seq = reader
                    .file_info()
                    .get_i64(cellar_hfile::file_info::MAX_SEQ_ID_KEY)
                    .unwrap_or(0)
                    .max(0) as u64;
                files.push((seq, family.clone(), path));
            }
        }
        files.sort_by_key(|f| f.0);
        for (_, family, path) in files {
            let out = region.bulk_load_with(&[(family, path)], link)?;
            report.files += 1;
            report.cells += out.cells;
        }
    }
    Ok(report)
}
