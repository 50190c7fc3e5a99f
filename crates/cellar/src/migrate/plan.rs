//! A migration's plan and recorded progress (`<state>/<new table>/`): the plan (old
//! table, new table, key map, snapshot name) in `plan.toml`, the steps done in `steps`,
//! and the source regions a backfill has loaded in `backfill.done` — each file replaced
//! atomically, on the file system the migration works on.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use cellar_api::{Error, ErrorKind};
use cellar_io::FileSystem;

use super::keymap::KeyMap;
use crate::database::files::write_atomic;
use crate::error::Result;

/// What a migration moves, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub from: String,
    pub to: String,
    pub key_map: String,
    pub snapshot: String,
}

/// The state directory of the migration into `to` under `root`.
pub fn state_dir(root: &Path, to: &str) -> PathBuf {
    root.join(to.replace(':', "_"))
}

impl Plan {
    /// The plan moving `from` into `to` by `key_map`.
    pub fn new(from: &str, to: &str, key_map: &str) -> Plan {
        Plan {
            from: from.to_string(),
            to: to.to_string(),
            key_map: key_map.to_string(),
            snapshot: format!("migrate-{}", to.replace(':', "_")),
        }
    }

    fn text(&self) -> String {
        let q = |s: &str| format!("{:?}", s);
        format!(
            "from = {}\nto = {}\nkey_map = {}\nsnapshot = {}\n",
            q(&self.from),
            q(&self.to),
            q(&self.key_map),
            q(&self.snapshot)
        )
    }

    /// Records the plan; the same plan again is a no-op, a different one an error.
    pub fn save(&self, fs: &dyn FileSystem, dir: &Path) -> Result<()> {
        KeyMap::parse(&self.key_map)?;
        let path = dir.join("plan.toml");
        if fs.exists(&path) {
            let old = Plan::load(fs, dir)?;
            if &old == self {
                return Ok(());
            }
            return Err(Error::invalid(format!(
                "{} already plans a different migration into {}",
                path.display(),
                self.to
            ))
            .into());
        }
        write_atomic(fs, &path, self.text().as_bytes())
    }

    pub fn load(fs: &dyn FileSystem, dir: &Path) -> Result<Plan> {
        let path = dir.join("plan.toml");
        let bytes = cellar_io::read_all(fs, &path).map_err(|e| {
            Error::invalid(format!("no migration planned ({}: {e})", path.display()))
        })?;
        let corrupt = |why: String| Error::new(ErrorKind::Corrupt, why);
        let text =
            String::from_utf8(bytes).map_err(|e| corrupt(format!("{}: {e}", path.display())))?;
        let v: toml::Table = text
            .parse()
            .map_err(|e| corrupt(format!("{}: {e}", path.display())))?;
        let get = |k: &str| -> Result<String> {
            v.get(k)
                .and_then(|x| x.as_str())
                .map(str::to_string)
                .ok_or_else(|| corrupt(format!("{}: no {k}", path.display())).into())
        };
        Ok(Plan {
            from: get("from")?,
            to: get("to")?,
            key_map: get("key_map")?,
            snapshot: get("snapshot")?,
        })
    }
}

fn read_lines(fs: &dyn FileSystem, path: &Path) -> Result<BTreeSet<String>> {
    if !fs.exists(path) {
        return Ok(BTreeSet::new());
    }
    let bytes = cellar_io::read_all(fs, path)?;
    Ok(String::from_utf8_lossy(&bytes)
        .lines()
        .map(str::to_string)
        .collect())
}

fn add_line(fs: &dyn FileSystem, path: &Path, line: &str) -> Result<()> {
    let mut lines = read_lines(fs, path)?;
    if lines.insert(line.to_string()) {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        write_atomic(fs, path, text.as_bytes())?;
    }
    Ok(())
}

/// The steps recorded as done.
pub fn steps(fs: &dyn FileSystem, dir: &Path) -> Result<BTreeSet<String>> {
    read_lines(fs, &dir.join("steps"))
}

/// Records a step as done (again: no change).
pub fn record(fs: &dyn FileSystem, dir: &Path, step: &str) -> Result<()> {
    add_line(fs, &dir.join("steps"), step)
}

/// The source regions (by start key) a backfill has loaded.
pub fn backfilled(fs: &dyn FileSystem, dir: &Path) -> Result<BTreeSet<String>> {
    read_lines(fs, &dir.join("backfill.done"))
}

/// Records a source region as loaded.
pub fn record_backfilled(fs: &dyn FileSystem, dir: &Path, region: &str) -> Result<()> {
    add_line(fs, &dir.join("backfill.done"), region)
}
