//! Starting the master: opens the catalog region (replaying its WAL edits), reads every
//! table found on disk, hands the WAL edits of their regions to the region servers and
//! assigns the regions of enabled tables (and of disabled ones that have edits to
//! replay, which are flushed and closed again).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use cellar_api::RegionInfo;
use cellar_io::{Clock, FileSystem};
use cellar_region::{Config, Region};
use cellar_wal::WalEdit;

use super::{catalog, meta_dir, Master, Slot, TableEntry, TableState, NAMESPACE};
use crate::database::files::remove_tree;
use crate::error::{DbError, Result};
use crate::region_server::RegionServer;

/// What a master starts from.
pub struct MasterParts {
    pub root: PathBuf,
    pub fs: Arc<dyn FileSystem>,
    pub clock: Arc<dyn Clock>,
    pub config: Arc<Config>,
    pub servers: Vec<Arc<RegionServer>>,
}

impl Master {
    /// Opens the catalog and every table; `edits` are the WAL's unflushed edits.
    pub fn open(parts: MasterParts, edits: Vec<WalEdit>) -> Result<Master> {
        let MasterParts {
            root,
            fs,
            clock,
            config,
            servers,
        } = parts;
        let first = servers.first().ok_or_else(|| DbError::Open {
            path: root.clone(),
            reason: "a master needs at least one region server".into(),
        })?;
        let meta = Region::open(
            &meta_dir(&root),
            catalog::META_REGION,
            catalog::meta_descriptor(),
            first.context(),
        )?;
        let mut by_region: HashMap<String, Vec<WalEdit>> = HashMap::new();
        for e in edits {
            if e.region == catalog::META_REGION {
                meta.replay(&e)?;
            } else {
                by_region.entry(e.region.clone()).or_default().push(e);
            }
        }
        let master = Master {
            root,
            fs,
            clock,
            config,
            meta: Arc::new(meta),
            tables: RwLock::new(BTreeMap::new()),
            servers,
            ddl: Mutex::new(()),
        };
        master.load_tables(by_region)?;
        Ok(master)
    }

    fn load_tables(&self, mut by_region: HashMap<String, Vec<WalEdit>>) -> Result<()> {
        let ns = self.root.join("data").join(NAMESPACE);
        self.fs.create_dir_all(&ns)?;
        let mut tables = BTreeMap::new();
        for dir in self.fs.list_dir(&ns)? {
            let desc_path = dir.join(".tabledesc");
            let state_path = dir.join(".tablestate");
            if !self.fs.exists(&desc_path) || !self.fs.exists(&state_path) {
                continue;
            }
            let text = String::from_utf8_lossy(&cellar_io::read_all(self.fs.as_ref(), &desc_path)?)
                .into_owned();
            let desc = cellar_region::descriptor::from_toml(&text)?;
            let state: toml::Table =
                String::from_utf8_lossy(&cellar_io::read_all(self.fs.as_ref(), &state_path)?)
                    .parse()
                    .map_err(|e: toml::de::Error| DbError::Open {
                        path: state_path.clone(),
                        reason: e.to_string(),
                    })?;
            let enabled = state.get("state").and_then(|v| v.as_str()) == Some("ENABLED");
            let mut infos = catalog::regions_of(&self.meta, &desc.name)?;
            if infos.is_empty() {
                // A table written before the catalog kept its one region in .tablestate.
                let Some(old) = state.get("region").and_then(|v| v.as_str()) else {
                    continue;
                };
                let info = RegionInfo {
                    table: desc.name.clone(),
                    start: Vec::new(),
                    end: Vec::new(),
                    id: 0,
                    encoded: old.to_string(),
                    offline: false,
                };
                catalog::put_regions(&self.meta, std::slice::from_ref(&info))?;
                infos.push(info);
            }
            let (parents, infos): (Vec<RegionInfo>, Vec<RegionInfo>) =
                infos.into_iter().partition(|i| i.offline);
            // Region directories the catalog does not know are leftovers of a split that
            // did not commit.
            let known: HashSet<&str> = infos
                .iter()
                .chain(parents.iter())
                .map(|i| i.encoded.as_str())
                .collect();
            for sub in self.fs.list_dir(&dir)? {
                let name = sub.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                if self.fs.is_dir(&sub) && !name.starts_with('.') && !known.contains(name) {
                    remove_tree(self.fs.as_ref(), &sub)?;
                }
            }
            let mut regions = Vec::new();
            for info in infos {
                let server = self.pick_server();
                let edits = by_region.remove(&info.encoded).unwrap_or_default();
                let has_edits = !edits.is_empty();
                if has_edits {
                    let mut m = HashMap::new();
                    m.insert(info.encoded.clone(), edits);
                    self.server(server).add_recovered_edits(m);
                }
                let mut slot = Slot {
                    info,
                    server,
                    failed: None,
                };
                if enabled || has_edits {
                    self.assign(&desc, &mut slot);
                    if !enabled && slot.failed.is_none() {
                        if let Err(e) = self.unassign(&slot) {
                            self.server(server).abort_region(&slot.info.encoded);
                            slot.failed = Some(format!("closing after replay: {e}"));
                        }
                    }
                }
                regions.push(slot);
            }
            for p in &parents {
                by_region.remove(&p.encoded);
            }
            tables.insert(
                desc.name.clone(),
                TableState::new(TableEntry {
                    desc,
                    enabled,
                    regions,
                    parents,
                }),
            );
        }
        *super::write(&self.tables) = tables;
        // Edits of regions that no longer exist never need replaying.
        if let Some(s) = self.servers.first() {
            for region in by_region.keys() {
                s.wal().forget_region(region)?;
            }
        }
        Ok(())
    }
}
