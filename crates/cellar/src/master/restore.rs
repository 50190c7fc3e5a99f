//! `restore_snapshot`: a disabled table's contents replaced by a snapshot's — the table
//! dropped, the snapshot cloned in its place, the table left disabled.
//!
//! A journal under `.restoring/` names the snapshot and the table from before the drop
//! until the restored table is disabled; opening the database finishes a restore a stop
//! interrupted (the half-made clone is dropped first, then the clone made again), so a
//! restore never leaves the table missing or half there.

use std::path::PathBuf;

use cellar_io::FileSystem;

use super::snapshot::{check_name, snapshot_missing};
use super::Master;
use crate::database::files::write_atomic;
use crate::error::{DbError, Result};

fn journal_dir(master: &Master) -> PathBuf {
    master.root().join(".restoring")
}

fn journal_path(master: &Master, table: &str) -> PathBuf {
    let mut hex = String::new();
    for b in table.bytes() {
        hex.push_str(&format!("{b:02x}"));
    }
    journal_dir(master).join(hex)
}

impl Master {
    /// Replaces the snapshot's table's contents with the snapshot's (the table must be
    /// disabled, and stays so).
    pub fn restore_snapshot(&self, name: &str) -> Result<()> {
        self.restore_snapshot_into(name, None)
    }

    /// As [`Master::restore_snapshot`], into `table` (default: the snapshot's own).
    pub fn restore_snapshot_into(&self, name: &str, table: Option<&str>) -> Result<()> {
        check_name(name)?;
        let info = self
            .list_snapshots()?
            .into_iter()
            .find(|s| s.name == name)
            .ok_or_else(|| snapshot_missing(name))?;
        let table = table.map_or(info.table, str::to_string);
        if self.table_exists(&table) && self.describe(&table)?.1 {
            return Err(DbError::TableNotDisabled(table));
        }
        let journal = journal_path(self, &table);
        let fs = self.fs().clone();
        write_atomic(fs.as_ref(), &journal, format!("{name}\n{table}").as_bytes())?;
        let result = self.replace_with_clone(name, &table);
        fs.remove_file(&journal)?;
        fs.sync_dir(&journal_dir(self))?;
        result
    }

    fn replace_with_clone(&self, name: &str, table: &str) -> Result<()> {
        if self.table_exists(table) {
            if self.describe(table)?.1 {
                self.disable_table(table)?;
            }
            self.drop_table(table)?;
        }
        self.clone_snapshot(name, table)?;
        self.disable_table(table)
    }
}

/// Finishes every restore a stop interrupted (run at open, after half-made clones are
/// dropped).
pub(crate) fn finish_unfinished(master: &Master) -> Result<()> {
    let fs: &dyn FileSystem = master.fs().as_ref();
    let dir = journal_dir(master);
    if !fs.is_dir(&dir) {
        return Ok(());
    }
    for journal in fs.list_dir(&dir)? {
        if journal.extension().is_some_and(|e| e == "tmp") {
            // Never completed: the restore never began.
            fs.remove_file(&journal)?;
            continue;
        }
        let text = String::from_utf8_lossy(&cellar_io::read_all(fs, &journal)?).into_owned();
        if let Some((name, table)) = text.split_once('\n') {
            if master.list_snapshots()?.iter().any(|s| s.name == name) {
                tracing::warn!(snapshot = %name, table = %table, "finishing a restore a stop interrupted");
                master.replace_with_clone(name, table)?;
            }
        }
        fs.remove_file(&journal)?;
    }
    fs.sync_dir(&dir)?;
    Ok(())
}
