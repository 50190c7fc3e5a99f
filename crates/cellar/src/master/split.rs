//! Splitting and merging regions. A split closes the parent (flushing it), writes
//! reference files — each daughter's half of every parent file — into the daughters'
//! directories, and then commits in one atomic catalog mutation: the parent marked
//! offline, both daughters added. A crash before the commit leaves the parent serving
//! (the daughters' directories are removed as leftovers on open); after it, the
//! daughters serve through the references. Daughters rewrite their references in their
//! next compaction; the janitor then deletes the parent. A split point is always a row:
//! never inside one. Merges work the same way with whole-file references to both
//! parents. Each runs under its table's procedure lock; the region list is swapped
//! under its write lock only once the daughters serve.

use std::sync::Arc;

use cellar_region::split_policy::SplitPolicy;
use cellar_region::{Region, RegionError};
use cellar_types::to_string_binary;

use super::{catalog, locked, read, table_dir, write, Master, Slot, TableState};
use crate::database::files::remove_tree;
use crate::error::{DbError, Result};

fn refused(msg: String) -> DbError {
    DbError::Region(RegionError::InvalidMutation(msg))
}

impl Master {
    /// Splits the region holding `row` at `row`, or — without a row — every region that
    /// has a split point (HBase's `split 't'` / `split 't', 'row'`). Returns how many
    /// regions split.
    pub fn split(&self, table: &str, row: Option<&[u8]>) -> Result<usize> {
        let st = self.state(table)?;
        let _proc = locked(&st.procedure);
        let (desc, slots) = {
            let e = read(&st.entry);
            if !e.enabled {
                return Err(DbError::TableNotEnabled(table.to_string()));
            }
            let targets: Vec<Slot> = match row {
                Some(r) => vec![e.regions[e.region_index(r)].clone()],
                None => e.regions.clone(),
            };
            (e.desc.clone(), targets)
        };
        let n = read(&st.entry).regions.len();
        let mut done = 0;
        for slot in slots.into_iter().rev() {
            let Ok(region) = self.server(slot.server).region(&slot.info.encoded) else {
                continue;
            };
            let policy = SplitPolicy::for_table(&desc, &self.config, region.seed())?;
            if !policy.allows_manual() {
                return Err(refused(format!(
                    "Split is disabled for table {table} by DisabledRegionSplitPolicy"
                )));
            }
            let point = match row {
                Some(r) => r.to_vec(),
                None => match region.split_point() {
                    Ok(p) => policy.truncate(p),
                    Err(_) if n > 1 => continue,
                    Err(why) => {
                        return Err(refused(format!(
                            "Region {} cannot split: {why}",
                            slot.info.region_name()
                        )))
                    }
                },
            };
            let info = &slot.info;
            if point.as_slice() <= info.start.as_slice()
                || (!info.end.is_empty() && point.as_slice() >= info.end.as_slice())
            {
                return Err(refused(format!(
                    "Split row '{}' is not inside region {} (a split point must fall between its rows)",
                    to_string_binary(&point),
                    info.region_name()
                )));
            }
            if region.stores().any(|s| s.has_references()) {
                return Err(refused(format!(
                    "Region {} still holds references from its own split; compact it first",
                    info.region_name()
                )));
            }
            self.split_slot(&st, &slot, point)?;
            done += 1;
        }
        Ok(done)
    }

    /// Splits the region of `slot` at `point`.
    fn split_slot(&self, st: &TableState, slot: &Slot, point: Vec<u8>) -> Result<()> {
        let desc = read(&st.entry).desc.clone();
        let parent = slot.info.clone();
        let server = self.server(slot.server).clone();
        let id = self.clock.now_millis().max(parent.id + 1);
        let a = catalog::new_region(&parent.table, parent.start.clone(), point.clone(), id);
        let b = catalog::new_region(&parent.table, point.clone(), parent.end.clone(), id);
        let dir = table_dir(&self.root, &parent.table);
        let attempt = (|| -> Result<()> {
            server.split_region(&parent, &point, &a, &b)?;
            self.fs.sync_dir(&dir)?;
            let mut offline = parent.clone();
            offline.offline = true;
            catalog::put_regions(&self.meta, &[offline, a.clone(), b.clone()])?;
            Ok(())
        })();
        if let Err(e) = attempt {
            // Not committed: the parent serves on; the daughters' directories go.
            let _ = remove_tree(self.fs.as_ref(), &dir.join(&a.encoded));
            let _ = remove_tree(self.fs.as_ref(), &dir.join(&b.encoded));
            if !server.is_online(&parent.encoded) {
                server.open_region(&desc, &parent)?;
            }
            return Err(e);
        }
        server.open_region(&desc, &a)?;
        server.open_region(&desc, &b)?;
        for r in [&a, &b] {
            server.request_compaction(&r.encoded);
        }
        let mut e = write(&st.entry);
        if let Some(idx) = e
            .regions
            .iter()
            .position(|s| s.info.encoded == parent.encoded)
        {
            let sa = Slot {
                info: a,
                server: slot.server,
                failed: None,
            };
            let sb = Slot {
                info: b,
                server: slot.server,
                failed: None,
            };
            e.regions.splice(idx..=idx, [sa, sb]);
        }
        let mut offline = parent;
        offline.offline = true;
        e.parents.push(offline);
        drop(e);
        self.procedures
            .splits
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::info!(table = %desc.name, at = %cellar_types::to_string_binary(&point), "region split");
        Ok(())
    }

    /// Deletes split and merge parents no daughter references any more.
    pub fn janitor(&self, table: &str) -> Result<usize> {
        let Ok(st) = self.state(table) else {
            return Ok(0);
        };
        let _proc = locked(&st.procedure);
        let (parents, slots, enabled) = {
            let e = read(&st.entry);
            (e.parents.clone(), e.regions.clone(), e.enabled)
        };
        // A region that is not online cannot be asked what it references: keep every
        // parent until all are.
        if !slots
            .iter()
            .all(|s| self.server(s.server).is_online(&s.info.encoded))
        {
            return Ok(0);
        }
        let mut removed = Vec::new();
        for parent in parents {
            let referenced = slots.iter().any(|s| {
                self.server(s.server)
                    .region(&s.info.encoded)
                    .is_ok_and(|r| {
                        r.stores().any(|st| {
                            st.files().iter().any(|f| {
                                f.half
                                    .as_ref()
                                    .is_some_and(|h| h.parent_region == parent.encoded)
                            })
                        })
                    })
            });
            if referenced || !enabled {
                continue;
            }
            catalog::delete_regions(&self.meta, std::slice::from_ref(&parent))?;
            remove_tree(
                self.fs.as_ref(),
                &table_dir(&self.root, table).join(&parent.encoded),
            )?;
            for s in &self.servers {
                s.wal().forget_region(&parent.encoded)?;
            }
            removed.push(parent.encoded);
        }
        write(&st.entry)
            .parents
            .retain(|p| !removed.contains(&p.encoded));
        Ok(removed.len())
    }

    /// After a flush or compaction: splits the region if its table's policy says so.
    pub fn maybe_split(&self, region: &Arc<Region>) -> Result<bool> {
        let table = region.table().name.clone();
        let Ok(st) = self.state(&table) else {
            return Ok(false);
        };
        let n = read(&st.entry).regions.len();
        let start = region.start_key().to_vec();
        if n >= self.config.region_split_limit {
            return Ok(false);
        }
        let policy = SplitPolicy::for_table(region.table(), &self.config, region.seed())?;
        let busy = policy.is_busy(region.age_ms(), region.blocked_rate());
        if !busy && !policy.should_split(region.largest_store_size(), n) {
            return Ok(false);
        }
        let Ok(point) = region.split_point().map(|p| policy.truncate(p)) else {
            return Ok(false);
        };
        if point.as_slice() <= start.as_slice() {
            return Ok(false);
        }
        Ok(self.split(&table, Some(&point))? > 0)
    }

    /// Merges two adjacent regions of a table, named by a row of each (HBase's
    /// `merge_region`). The merged region serves through references to both parents'
    /// files until it compacts; the commit is one atomic catalog mutation.
    pub fn merge(&self, table: &str, row_a: &[u8], row_b: &[u8]) -> Result<()> {
        let st = self.state(table)?;
        let _proc = locked(&st.procedure);
        let (desc, sa, sb) = {
            let e = read(&st.entry);
            if !e.enabled {
                return Err(DbError::TableNotEnabled(table.to_string()));
            }
            let (x, y) = (e.region_index(row_a), e.region_index(row_b));
            let (ia, ib) = (x.min(y), x.max(y));
            if ib != ia + 1 {
                return Err(refused(format!(
                    "Regions {} and {} are not adjacent",
                    e.regions[ia].info.region_name(),
                    e.regions[ib].info.region_name()
                )));
            }
            (e.desc.clone(), e.regions[ia].clone(), e.regions[ib].clone())
        };
        for s in [&sa, &sb] {
            match self.server(s.server).region(&s.info.encoded) {
                Ok(r) if r.stores().any(|st| st.has_references()) => {
                    return Err(refused(format!(
                        "Region {} still holds references; compact it first",
                        s.info.region_name()
                    )));
                }
                Ok(_) => {}
                Err(_) => {
                    return Err(refused(format!(
                        "Region {} is not online{}",
                        s.info.region_name(),
                        s.failed
                            .as_deref()
                            .map(|f| format!(": {f}"))
                            .unwrap_or_default()
                    )));
                }
            }
        }
        let (a, b) = (sa.info.clone(), sb.info.clone());
        let server = self.server(sa.server).clone();
        let id = self.clock.now_millis().max(a.id.max(b.id) + 1);
        let merged = catalog::new_region(table, a.start.clone(), b.end.clone(), id);
        let dir = table_dir(&self.root, table);
        let attempt = (|| -> Result<()> {
            server.merge_regions([&a, &b], &merged)?;
            self.fs.sync_dir(&dir)?;
            let (mut oa, mut ob) = (a.clone(), b.clone());
            oa.offline = true;
            ob.offline = true;
            catalog::put_regions(&self.meta, &[oa, ob, merged.clone()])?;
            Ok(())
        })();
        if let Err(e) = attempt {
            let _ = remove_tree(self.fs.as_ref(), &dir.join(&merged.encoded));
            for p in [&a, &b] {
                if !server.is_online(&p.encoded) {
                    server.open_region(&desc, p)?;
                }
            }
            return Err(e);
        }
        server.open_region(&desc, &merged)?;
        server.request_compaction(&merged.encoded);
        let mut e = write(&st.entry);
        if let Some(ia) = e.regions.iter().position(|s| s.info.encoded == a.encoded) {
            let slot = Slot {
                info: merged,
                server: sa.server,
                failed: None,
            };
            e.regions.splice(ia..=ia + 1, [slot]);
        }
        for mut p in [a, b] {
            p.offline = true;
            e.parents.push(p);
        }
        drop(e);
        self.procedures
            .merges
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::info!(table = %table, "regions merged");
        Ok(())
    }

    /// `merge_region 'a', 'b'`: merges two adjacent regions named by their encoded names
    /// (or full region names).
    pub fn merge_named(&self, a: &str, b: &str) -> Result<()> {
        let find = |name: &str| -> Option<(String, Vec<u8>)> {
            let tables: Vec<(String, Arc<TableState>)> = read(&self.tables)
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            tables.into_iter().find_map(|(t, st)| {
                read(&st.entry)
                    .regions
                    .iter()
                    .find(|s| {
                        s.info.encoded == name
                            || s.info.region_name() == name
                            || name.trim_end_matches('.').ends_with(&s.info.encoded)
                    })
                    .map(|s| (t.clone(), s.info.start.clone()))
            })
        };
        let (Some((ta, ra)), Some((tb, rb))) = (find(a), find(b)) else {
            return Err(refused(format!("Unknown region {a} or {b}")));
        };
        if ta != tb {
            return Err(refused("Cannot merge regions of different tables".into()));
        }
        self.merge(&ta, &ra, &rb)
    }
}
