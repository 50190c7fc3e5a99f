//! Table DDL: create (optionally pre-split), alter, disable, enable, drop, truncate, and
//! flush and compact of a whole table. Each runs under its table's procedure lock (and
//! creation and deletion under the master's DDL lock); region lists are swapped in under
//! their write lock only once the files and the catalog are written.

use cellar_api::{RegionInfo, TableDescriptor};

use super::{catalog, locked, read, table_dir, write, Master, Slot, TableEntry, TableState};
use crate::database::files::{remove_tree, write_atomic};
use crate::error::{DbError, Result};

impl Master {
    fn write_desc(&self, desc: &TableDescriptor) -> Result<()> {
        let path = table_dir(&self.root, &desc.name).join(".tabledesc");
        write_atomic(
            self.fs.as_ref(),
            &path,
            cellar_region::descriptor::to_toml(desc).as_bytes(),
        )
    }

    pub(super) fn write_state(&self, table: &str, enabled: bool) -> Result<()> {
        let path = table_dir(&self.root, table).join(".tablestate");
        let text = format!(
            "state = \"{}\"\n",
            if enabled { "ENABLED" } else { "DISABLED" }
        );
        write_atomic(self.fs.as_ref(), &path, text.as_bytes())
    }

    /// Marks a drop in progress: an open after a crash finishes it.
    fn write_deleting(&self, table: &str) -> Result<()> {
        let path = table_dir(&self.root, table).join(".tablestate");
        write_atomic(self.fs.as_ref(), &path, b"state = \"DELETING\"\n")
    }

    fn sync_namespace(&self, table: &str) -> Result<()> {
        let dir = table_dir(&self.root, table);
        let ns = dir.parent().unwrap_or(&self.root);
        Ok(self.fs.sync_dir(ns)?)
    }

    /// Creates a table pre-split at `split_keys` (N keys make N+1 regions).
    pub fn create_table(&self, desc: TableDescriptor, split_keys: Vec<Vec<u8>>) -> Result<()> {
        self.create_table_in(desc, split_keys, false)
    }

    /// Creates one of the system namespace's own tables.
    pub(crate) fn create_system_table(&self, desc: TableDescriptor) -> Result<()> {
        self.create_table_in(desc, Vec::new(), true)
    }

    fn create_table_in(
        &self,
        mut desc: TableDescriptor,
        split_keys: Vec<Vec<u8>>,
        system: bool,
    ) -> Result<()> {
        for f in &mut desc.families {
            if f.versions == 1 && self.config.column_max_version != 1 {
                f.versions = self.config.column_max_version;
            }
        }
        cellar_region::check_descriptor(&desc)?;
        cellar_region::split_policy::SplitPolicy::for_table(&desc, &self.config, 0)?;
        let keys = catalog::check_splits(split_keys)
            .map_err(|m| DbError::Region(cellar_region::RegionError::InvalidMutation(m)))?;
        desc.name = super::normalize(&desc.name);
        let _ddl = locked(&self.ddl);
        if self.table_exists(&desc.name) {
            return Err(DbError::TableExists(desc.name));
        }
        let ns = desc
            .name
            .split_once(':')
            .map_or(super::DEFAULT_NAMESPACE, |(n, _)| n);
        if ns == cellar_api::SYSTEM_NAMESPACE && !system {
            return Err(DbError::NamespaceConstraint(format!(
                "Table {}: the {ns} namespace holds only system tables",
                desc.name
            )));
        }
        if !self.namespace_exists(ns) {
            return Err(DbError::NamespaceNotFound(ns.to_string()));
        }
        let id = self.clock.now_millis();
        let mut bounds = vec![Vec::new()];
        bounds.extend(keys);
        let mut infos = Vec::new();
        for (i, start) in bounds.iter().enumerate() {
            let end = bounds.get(i + 1).cloned().unwrap_or_default();
            infos.push(catalog::new_region(&desc.name, start.clone(), end, id));
        }
        self.write_desc(&desc)?;
        catalog::put_regions(&self.meta, &infos)?;
        self.write_state(&desc.name, true)?;
        self.sync_namespace(&desc.name)?;
        let mut regions = Vec::new();
        for info in infos {
            let server = self.pick_server();
            self.server(server).open_region(&desc, &info)?;
            regions.push(Slot {
                info,
                server,
                failed: None,
            });
        }
        write(&self.tables).insert(
            desc.name.clone(),
            TableState::new(TableEntry {
                desc,
                enabled: true,
                regions,
                parents: Vec::new(),
                damaged: None,
            }),
        );
        Ok(())
    }

    /// Changes a table's descriptor: families added, changed or removed (a removed
    /// family's files are deleted). Its regions are flushed, closed and reopened.
    pub fn alter_table(
        &self,
        name: &str,
        change: impl FnOnce(&mut TableDescriptor) -> cellar_api::Result<()>,
    ) -> Result<()> {
        let st = self.state(name)?;
        let _proc = locked(&st.procedure);
        let (old, slots, enabled) = {
            let e = read(&st.entry);
            if let Some(why) = &e.damaged {
                return Err(DbError::Open {
                    path: table_dir(&self.root, name),
                    reason: why.clone(),
                });
            }
            (e.desc.clone(), e.regions.clone(), e.enabled)
        };
        let mut desc = old.clone();
        change(&mut desc)?;
        desc.name = name.to_string();
        cellar_region::check_descriptor(&desc)?;
        cellar_region::split_policy::SplitPolicy::for_table(&desc, &self.config, 0)?;
        for slot in &slots {
            self.unassign(slot)?;
        }
        // The descriptor is the commit; a removed family's files go only after it (a
        // crash in between leaves a directory no family names, which nothing reads).
        self.write_desc(&desc)?;
        for slot in &slots {
            let region_dir = table_dir(&self.root, name).join(&slot.info.encoded);
            for f in &old.families {
                if desc.family(&f.name).is_none() {
                    let dir = region_dir.join(cellar_region::store::family_dir_name(&f.name));
                    remove_tree(self.fs.as_ref(), &dir)?;
                }
            }
        }
        let mut reopened = slots;
        if enabled {
            for slot in &mut reopened {
                self.assign(&desc, slot);
            }
        }
        let mut e = write(&st.entry);
        e.desc = desc;
        e.regions = reopened;
        Ok(())
    }

    /// Flushes and closes the table's regions; it refuses reads and writes until enabled.
    pub fn disable_table(&self, name: &str) -> Result<()> {
        let st = self.state(name)?;
        let _proc = locked(&st.procedure);
        let slots = {
            let e = read(&st.entry);
            if !e.enabled {
                return Err(DbError::TableNotEnabled(name.to_string()));
            }
            e.regions.clone()
        };
        // Clients see the table disabled from here on.
        write(&st.entry).enabled = false;
        let closed = (|| -> Result<()> {
            for slot in &slots {
                self.unassign(slot)?;
            }
            self.write_state(name, false)
        })();
        if closed.is_err() {
            write(&st.entry).enabled = true;
        }
        closed
    }

    pub fn enable_table(&self, name: &str) -> Result<()> {
        let st = self.state(name)?;
        let _proc = locked(&st.procedure);
        let (desc, mut slots) = {
            let e = read(&st.entry);
            if e.enabled {
                return Err(DbError::TableNotDisabled(name.to_string()));
            }
            if let Some(why) = &e.damaged {
                return Err(DbError::Open {
                    path: table_dir(&self.root, name),
                    reason: why.clone(),
                });
            }
            (e.desc.clone(), e.regions.clone())
        };
        // A region that cannot open stays offline (reported by `failed_regions`); the
        // others serve.
        for slot in &mut slots {
            self.assign(&desc, slot);
        }
        self.write_state(name, true)?;
        let mut e = write(&st.entry);
        e.regions = slots;
        e.enabled = true;
        Ok(())
    }

    /// Deletes a disabled table and its data.
    pub fn drop_table(&self, name: &str) -> Result<()> {
        let _ddl = locked(&self.ddl);
        let st = self.state(name)?;
        let _proc = locked(&st.procedure);
        let infos: Vec<RegionInfo> = {
            let e = read(&st.entry);
            if e.enabled {
                return Err(DbError::TableNotDisabled(name.to_string()));
            }
            e.regions
                .iter()
                .map(|s| s.info.clone())
                .chain(e.parents.iter().cloned())
                .collect()
        };
        self.write_deleting(name)?;
        catalog::delete_regions(&self.meta, &infos)?;
        remove_tree(self.fs.as_ref(), &table_dir(&self.root, name))?;
        self.sync_namespace(name)?;
        for info in &infos {
            for s in &self.servers {
                s.discard_recovered_edits(&info.encoded);
                s.wal().forget_region(&info.encoded)?;
            }
        }
        write(&self.tables).remove(&super::normalize(name));
        Ok(())
    }

    /// Empties a table, keeping its descriptor (disable, drop, create, as HBase's shell).
    pub fn truncate_table(&self, name: &str) -> Result<()> {
        let (desc, enabled) = self.describe(name)?;
        if enabled {
            self.disable_table(name)?;
        }
        self.drop_table(name)?;
        self.create_table(desc, Vec::new())
    }

    /// Flushes a table's MemStores. As HBase's flush-table procedure, this asks for no
    /// compaction: files accumulate until a MemStore flush or the periodic check.
    pub fn flush_table(&self, name: &str) -> Result<()> {
        // A region that went offline since (split, merge) has been flushed by its close.
        for r in self.locations(name)?.iter().filter_map(|l| l.region().ok()) {
            r.flush_only()?;
        }
        self.note_large_rows();
        Ok(())
    }

    /// Records what the last flushes and compactions saw of large rows; a failure is
    /// logged, the data operation is done.
    pub(crate) fn note_large_rows(&self) {
        if let Err(e) = self.sync_large_rows() {
            tracing::warn!(error = %e, "could not update {}", crate::large_rows::TABLE);
        }
    }

    /// Compacts a table (`major`: every file, dropping deleted and expired cells).
    pub fn compact_table(
        &self,
        name: &str,
        major: bool,
    ) -> Result<cellar_region::CompactionOutcome> {
        let mut out = cellar_region::CompactionOutcome::default();
        for r in self.locations(name)?.iter().filter_map(|l| l.region().ok()) {
            let o = r.compact(major)?;
            out.stores.extend(o.stores);
            out.cells_kept += o.cells_kept;
            out.cells_dropped += o.cells_dropped;
        }
        self.janitor(name)?;
        self.note_large_rows();
        Ok(out)
    }
}
