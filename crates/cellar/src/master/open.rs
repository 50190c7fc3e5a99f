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

use super::{catalog, meta_dir, Master, Slot, TableEntry, TableState, DEFAULT_NAMESPACE};
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
            snapshots: Mutex::new(()),
            procedures: Default::default(),
            large_rows: Mutex::new(()),
        };
        master.load_tables(by_region)?;
        crate::snapshot_import::roll_back_unfinished(&master)?;
        super::restore::finish_unfinished(&master)?;
        Ok(master)
    }

    /// Reads a table's `.tablestate`: its state word and, for a table of the layout
    /// before the catalog, its one region. `None` when there is no state file.
    fn read_state(&self, dir: &std::path::Path) -> Result<Option<(String, Option<String>)>> {
        let path = dir.join(".tablestate");
        if !self.fs.exists(&path) {
            return Ok(None);
        }
        let text =
            String::from_utf8_lossy(&cellar_io::read_all(self.fs.as_ref(), &path)?).into_owned();
        let state: toml::Table = text.parse().map_err(|e: toml::de::Error| DbError::Open {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        let word = state
            .get("state")
            .and_then(|v| v.as_str())
            .unwrap_or("ENABLED")
            .to_string();
        let region = state
            .get("region")
            .and_then(|v| v.as_str())
            .map(str::to_string);
        Ok(Some((word, region)))
    }

    /// Region directories under a table directory.
    fn region_dirs(&self, dir: &std::path::Path) -> Result<Vec<String>> {
        let mut out = Vec::new();
        if !self.fs.exists(dir) {
            return Ok(out);
        }
        for sub in self.fs.list_dir(dir)? {
            let name = sub.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if self.fs.is_dir(&sub) && !name.starts_with('.') {
                out.push(name.to_string());
            }
        }
        Ok(out)
    }

    /// Opens every table. The catalog says which tables and regions exist; a table's
    /// directory says how it is described and whether it is enabled. What a crash
    /// leaves behind is finished or undone here: a drop that committed (or was marked
    /// DELETING) is completed, a create that did not commit is removed (it never held
    /// data). Nothing else is deleted because metadata is missing: a table whose
    /// descriptor is missing or damaged stays listed and offline, its WAL edits kept; a
    /// directory with regions the catalog does not know is reported and left alone.
    fn load_tables(&self, mut by_region: HashMap<String, Vec<WalEdit>>) -> Result<()> {
        self.fs
            .create_dir_all(&self.root.join("data").join(DEFAULT_NAMESPACE))?;
        let mut names = catalog::table_names(&self.meta)?;
        for ns in self.list_namespaces()? {
            if ns == cellar_api::SYSTEM_NAMESPACE {
                continue;
            }
            let ns_dir = super::namespace_dir(&self.root, &ns);
            if !self.fs.exists(&ns_dir) {
                continue;
            }
            for dir in self.fs.list_dir(&ns_dir)? {
                if let Some(n) = dir.file_name().and_then(|n| n.to_str()) {
                    if self.fs.is_dir(&dir) {
                        names.insert(if ns == DEFAULT_NAMESPACE {
                            n.to_string()
                        } else {
                            format!("{ns}:{n}")
                        });
                    }
                }
            }
        }
        // Edits of these regions are kept even though no region serves them.
        let mut keep_edits: HashSet<String> = HashSet::new();
        let mut tables = BTreeMap::new();
        for name in names {
            let dir = super::table_dir(&self.root, &name);
            let state = self.read_state(&dir)?;
            let deleting = state.as_ref().is_some_and(|(w, _)| w == "DELETING");
            let mut infos = catalog::regions_of(&self.meta, &name)?;
            if deleting {
                // A drop that did not finish: finish it.
                catalog::delete_regions(&self.meta, &infos)?;
                let dirs = self.region_dirs(&dir)?;
                remove_tree(self.fs.as_ref(), &dir)?;
                for r in infos.iter().map(|i| i.encoded.clone()).chain(dirs) {
                    by_region.remove(&r);
                }
                tracing::warn!(table = %name, "finished a drop that a crash interrupted");
                continue;
            }
            if infos.is_empty() {
                if let Some(old) = state.as_ref().and_then(|(_, r)| r.clone()) {
                    // A table written before the catalog kept its one region in
                    // .tablestate.
                    let info = RegionInfo {
                        table: name.clone(),
                        start: Vec::new(),
                        end: Vec::new(),
                        id: 0,
                        encoded: old,
                        offline: false,
                    };
                    catalog::put_regions(&self.meta, std::slice::from_ref(&info))?;
                    infos.push(info);
                } else {
                    let dirs = self.region_dirs(&dir)?;
                    if dirs.is_empty() {
                        // A create that did not reach its catalog commit.
                        tracing::warn!(table = %name, "removing a table whose creation did not complete");
                        remove_tree(self.fs.as_ref(), &dir)?;
                    } else {
                        tracing::warn!(
                            table = %name,
                            "table directory with regions the catalog does not know; left alone"
                        );
                        keep_edits.extend(dirs);
                    }
                    continue;
                }
            }
            let enabled = state.as_ref().is_none_or(|(w, _)| w != "DISABLED");
            if state.is_none() {
                // The create committed in the catalog before its state file was written.
                self.write_state(&name, true)?;
            }
            let (parents, infos): (Vec<RegionInfo>, Vec<RegionInfo>) =
                infos.into_iter().partition(|i| i.offline);
            let desc = match self.read_desc(&dir) {
                Ok(d) => d,
                Err(e) => {
                    let reason = format!("the table's descriptor cannot be read: {e}");
                    tracing::warn!(table = %name, "table stays offline: {reason}");
                    let t = self.damaged_table(&name, infos, parents, &mut by_region, &reason);
                    tables.insert(name.clone(), t);
                    continue;
                }
            };
            // Region directories the catalog does not know are leftovers of a split or
            // merge that did not commit.
            let known: HashSet<&str> = infos
                .iter()
                .chain(parents.iter())
                .map(|i| i.encoded.as_str())
                .collect();
            for sub in self.region_dirs(&dir)? {
                if !known.contains(sub.as_str()) {
                    remove_tree(self.fs.as_ref(), &dir.join(&sub))?;
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
                    damaged: None,
                }),
            );
        }
        *super::write(&self.tables) = tables;
        // Edits of regions that no longer exist never need replaying.
        if let Some(s) = self.servers.first() {
            for region in by_region.keys().filter(|r| !keep_edits.contains(*r)) {
                s.wal().forget_region(region)?;
            }
        }
        Ok(())
    }

    fn read_desc(&self, dir: &std::path::Path) -> Result<cellar_api::TableDescriptor> {
        let path = dir.join(".tabledesc");
        let text =
            String::from_utf8_lossy(&cellar_io::read_all(self.fs.as_ref(), &path)?).into_owned();
        cellar_region::descriptor::from_toml(&text).map_err(|e| DbError::Open {
            path,
            reason: e.to_string(),
        })
    }

    /// A table whose descriptor cannot be read: listed, disabled, every region offline
    /// with the reason, its WAL edits handed to the server and kept there.
    fn damaged_table(
        &self,
        name: &str,
        infos: Vec<RegionInfo>,
        parents: Vec<RegionInfo>,
        by_region: &mut HashMap<String, Vec<WalEdit>>,
        reason: &str,
    ) -> Arc<TableState> {
        let mut regions = Vec::new();
        for info in infos {
            let server = self.pick_server();
            if let Some(edits) = by_region.remove(&info.encoded) {
                let mut m = HashMap::new();
                m.insert(info.encoded.clone(), edits);
                self.server(server).add_recovered_edits(m);
            }
            regions.push(Slot {
                info,
                server,
                failed: Some(reason.to_string()),
            });
        }
        for p in &parents {
            by_region.remove(&p.encoded);
        }
        TableState::new(TableEntry {
            desc: cellar_api::TableDescriptor::new(name),
            enabled: false,
            regions,
            parents,
            damaged: Some(reason.to_string()),
        })
    }
}
