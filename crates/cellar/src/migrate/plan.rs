//! A migration's plan and recorded progress (`<db>/.migrate/<new table>/`): the plan
//! (old table, new table, key map, snapshot name) in `plan.toml`, and one line per
//! step done in `steps` — so each step is idempotent and a stopped migration resumes.
//! Also the new table's creation, pre-split at quantiles of a sample of the old keys
//! mapped.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use cellar_api::{Error, ErrorKind, Scan};

use super::keymap::KeyMap;
use crate::error::Result;
use crate::master::Master;

/// What a migration moves, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub from: String,
    pub to: String,
    pub key_map: String,
    pub snapshot: String,
}

fn io(e: std::io::Error) -> Error {
    Error::new(ErrorKind::Io, e.to_string())
}

/// The state directory of the migration into `to`.
pub fn state_dir(root: &Path, to: &str) -> PathBuf {
    root.join(".migrate").join(to.replace(':', "_"))
}

impl Plan {
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
    pub fn save(&self, dir: &Path) -> Result<()> {
        KeyMap::parse(&self.key_map)?;
        std::fs::create_dir_all(dir).map_err(io)?;
        let path = dir.join("plan.toml");
        if let Ok(old) = Plan::load(dir) {
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
        let tmp = dir.join("plan.toml.tmp");
        std::fs::write(&tmp, self.text()).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)?;
        Ok(())
    }

    pub fn load(dir: &Path) -> Result<Plan> {
        let path = dir.join("plan.toml");
        let text = std::fs::read_to_string(&path).map_err(|e| {
            Error::invalid(format!("no migration planned ({}: {e})", path.display()))
        })?;
        let v: toml::Table = text
            .parse()
            .map_err(|e| Error::new(ErrorKind::Corrupt, format!("{}: {e}", path.display())))?;
        let get = |k: &str| -> Result<String> {
            v.get(k)
                .and_then(|x| x.as_str())
                .map(str::to_string)
                .ok_or_else(|| {
                    Error::new(ErrorKind::Corrupt, format!("{}: no {k}", path.display())).into()
                })
        };
        Ok(Plan {
            from: get("from")?,
            to: get("to")?,
            key_map: get("key_map")?,
            snapshot: get("snapshot")?,
        })
    }
}

/// The steps recorded as done.
pub fn steps(dir: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(dir.join("steps"))
        .map(|s| s.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Records a step as done.
pub fn record(dir: &Path, step: &str) -> Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("steps"))
        .map_err(io)?;
    writeln!(f, "{step}")
        .and_then(|_| f.sync_all())
        .map_err(io)?;
    Ok(())
}

/// Creates the new table (the old one's families) pre-split in `regions` at quantiles
/// of the old cells' mapped rows (a sample of up to 100,000); an existing table is left
/// as it is.
pub fn create(master: &Master, plan: &Plan, regions: usize) -> Result<usize> {
    if master.table_exists(&plan.to) {
        return Ok(master.locations(&plan.to)?.len());
    }
    let map = KeyMap::parse(&plan.key_map)?;
    let (mut desc, _) = master.describe(&plan.from)?;
    desc.name = plan.to.clone();
    let mut keys = Vec::new();
    for loc in master.locations(&plan.from)? {
        let scan = Scan::new()
            .start_row(loc.info.start.clone())
            .stop_row(loc.info.end.clone());
        for r in loc.region()?.scanner(&scan)? {
            for c in &r?.cells {
                let k = map.map(c.row(), c.qualifier(), c.timestamp())?.0;
                if keys.last() != Some(&k) {
                    keys.push(k);
                }
            }
            if keys.len() >= 100_000 {
                break;
            }
        }
    }
    keys.sort();
    keys.dedup();
    let n = regions.max(1);
    let mut splits: Vec<Vec<u8>> = (1..n)
        .filter_map(|i| keys.get(keys.len() * i / n).cloned())
        .filter(|k| !k.is_empty())
        .collect();
    splits.dedup();
    let count = splits.len() + 1;
    master.create_table(desc, splits)?;
    Ok(count)
}
