//! Splitting regions. A split closes the parent (flushing it), writes reference files —
//! each daughter's half of every parent file — into the daughters' directories, and then
//! commits in one atomic catalog mutation: the parent marked offline, both daughters
//! added. A crash before the commit leaves the parent serving (the daughters' directories
//! are removed as leftovers on open); after it, the daughters serve through the
//! references. Daughters rewrite their references in their next compaction; the janitor
//! then deletes the parent. A split point is always a row: never inside one.

use std::sync::Arc;

use cellar_region::split_policy::SplitPolicy;
use cellar_region::{Region, RegionError};
use cellar_types::to_string_binary;

use super::catalog::{self, RegionInfo};
use super::error::{DbError, Result};
use super::{lock_mut, remove_tree, table_dir, Database, Inner, Slot, TableEntry};

fn refused(msg: String) -> DbError {
    DbError::Region(RegionError::InvalidMutation(msg))
}

impl Database {
    /// Splits the region holding `row` at `row`, or — without a row — every region that
    /// has a split point (HBase's `split 't'` / `split 't', 'row'`). Returns how many
    /// regions split.
    pub fn split(&self, table: &str, row: Option<&[u8]>) -> Result<usize> {
        self.inner.split_table(table, row)
    }

    /// Deletes split parents no daughter references any more.
    pub fn clean_split_parents(&self, table: &str) -> Result<usize> {
        self.inner.janitor(table)
    }
}

impl Inner {
    pub(crate) fn split_table(&self, table: &str, row: Option<&[u8]>) -> Result<usize> {
        let mut tables = lock_mut(&self.tables);
        let t = tables
            .get_mut(table)
            .ok_or_else(|| DbError::TableNotFound(table.to_string()))?;
        if !t.enabled {
            return Err(DbError::TableNotEnabled(table.to_string()));
        }
        let targets: Vec<usize> = match row {
            Some(r) => vec![t.region_index(r)],
            None => (0..t.regions.len()).collect(),
        };
        let n = t.regions.len();
        let mut done = 0;
        for idx in targets.into_iter().rev() {
            let Some(region) = t.regions[idx].region.clone() else {
                continue;
            };
            let policy = SplitPolicy::for_table(&t.desc, &self.config, region.seed())?;
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
                            t.regions[idx].info.region_name()
                        )))
                    }
                },
            };
            let info = &t.regions[idx].info;
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
            self.split_slot(t, idx, point)?;
            done += 1;
        }
        Ok(done)
    }

    /// Splits `t.regions[idx]` at `point`.
    fn split_slot(&self, t: &mut TableEntry, idx: usize, point: Vec<u8>) -> Result<()> {
        let parent = t.regions[idx].info.clone();
        let Some(region) = t.regions[idx].region.take() else {
            return Ok(());
        };
        let id = self.clock.now_millis().max(parent.id + 1);
        let a = RegionInfo::new(&parent.table, parent.start.clone(), point.clone(), id);
        let b = RegionInfo::new(&parent.table, point.clone(), parent.end.clone(), id);
        let dir = table_dir(&self.root, &parent.table);
        let attempt = (|| -> Result<()> {
            region.close()?;
            for store in region.stores() {
                let fam = cellar_region::store::family_dir_name(&store.family.name);
                store.write_references(
                    &point,
                    &dir.join(&a.encoded).join(&fam),
                    &dir.join(&b.encoded).join(&fam),
                    &parent.encoded,
                )?;
            }
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
            t.regions[idx].region = Some(self.open_region(&t.desc, &parent)?);
            return Err(e);
        }
        let ra = self.open_region(&t.desc, &a)?;
        let rb = self.open_region(&t.desc, &b)?;
        for r in [&ra, &rb] {
            self.request_compaction(r);
        }
        t.regions
            .splice(idx..=idx, [Slot::open(a, ra), Slot::open(b, rb)]);
        let mut offline = parent;
        offline.offline = true;
        t.parents.push(offline);
        Ok(())
    }

    fn request_compaction(&self, r: &Arc<Region>) {
        if let Some(tx) = &self.maintenance {
            let _ = tx.send(cellar_region::Maintenance::Compact(r.name().to_string()));
        }
    }

    /// Removes split parents whose daughters no longer reference their files.
    pub(crate) fn janitor(&self, table: &str) -> Result<usize> {
        let mut tables = lock_mut(&self.tables);
        let Some(t) = tables.get_mut(table) else {
            return Ok(0);
        };
        let mut removed = 0;
        let mut keep = Vec::new();
        for parent in std::mem::take(&mut t.parents) {
            let suffix = format!(".{}", parent.encoded);
            let referenced = t.regions.iter().any(|s| {
                s.region.as_ref().is_some_and(|r| {
                    r.stores()
                        .any(|st| st.files().iter().any(|f| f.name.ends_with(&suffix)))
                })
            });
            if referenced || !t.enabled {
                keep.push(parent);
                continue;
            }
            catalog::delete_regions(&self.meta, std::slice::from_ref(&parent))?;
            remove_tree(
                self.fs.as_ref(),
                &table_dir(&self.root, table).join(&parent.encoded),
            )?;
            self.wal.forget_region(&parent.encoded)?;
            removed += 1;
        }
        t.parents = keep;
        Ok(removed)
    }

    /// After a flush or compaction: splits the region if its table's policy says so.
    pub(crate) fn maybe_split(&self, region: &Arc<Region>) -> Result<bool> {
        let table = region.table().name.clone();
        let (n, start) = {
            let tables = super::lock(&self.tables);
            let Some(t) = tables.get(&table) else {
                return Ok(false);
            };
            (t.regions.len(), region.start_key().to_vec())
        };
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
        Ok(self.split_table(&table, Some(&point))? > 0)
    }
}

impl Database {
    /// Merges two adjacent regions of a table, named by a row of each (HBase's
    /// `merge_region`). The merged region serves through references to both parents'
    /// files until it compacts; the commit is one atomic catalog mutation.
    pub fn merge_regions(&self, table: &str, row_a: &[u8], row_b: &[u8]) -> Result<()> {
        self.inner.merge(table, row_a, row_b)
    }
}

impl Inner {
    fn merge(&self, table: &str, row_a: &[u8], row_b: &[u8]) -> Result<()> {
        let mut tables = lock_mut(&self.tables);
        let t = tables
            .get_mut(table)
            .ok_or_else(|| DbError::TableNotFound(table.to_string()))?;
        if !t.enabled {
            return Err(DbError::TableNotEnabled(table.to_string()));
        }
        let (ia, ib) = {
            let (x, y) = (t.region_index(row_a), t.region_index(row_b));
            (x.min(y), x.max(y))
        };
        if ib != ia + 1 {
            return Err(refused(format!(
                "Regions {} and {} are not adjacent",
                t.regions[ia].info.region_name(),
                t.regions[ib].info.region_name()
            )));
        }
        for idx in [ia, ib] {
            if let Some(r) = &t.regions[idx].region {
                if r.stores().any(|s| s.has_references()) {
                    return Err(refused(format!(
                        "Region {} still holds references; compact it first",
                        t.regions[idx].info.region_name()
                    )));
                }
            }
        }
        for idx in [ia, ib] {
            if t.regions[idx].region.is_none() {
                return Err(refused(format!(
                    "Region {} is not online{}",
                    t.regions[idx].info.region_name(),
                    t.regions[idx]
                        .failed
                        .as_deref()
                        .map(|f| format!(": {f}"))
                        .unwrap_or_default()
                )));
            }
        }
        let (a, b) = (t.regions[ia].info.clone(), t.regions[ib].info.clone());
        let (Some(ra), Some(rb)) = (t.regions[ia].region.take(), t.regions[ib].region.take())
        else {
            return Ok(());
        };
        let id = self.clock.now_millis().max(a.id.max(b.id) + 1);
        let merged = RegionInfo::new(table, a.start.clone(), b.end.clone(), id);
        let dir = table_dir(&self.root, table);
        let attempt = (|| -> Result<()> {
            ra.close()?;
            rb.close()?;
            for (r, parent) in [(&ra, &a), (&rb, &b)] {
                for store in r.stores() {
                    let fam = cellar_region::store::family_dir_name(&store.family.name);
                    store.write_whole_references(
                        &dir.join(&merged.encoded).join(&fam),
                        &parent.encoded,
                    )?;
                }
            }
            self.fs.sync_dir(&dir)?;
            let (mut oa, mut ob) = (a.clone(), b.clone());
            oa.offline = true;
            ob.offline = true;
            catalog::put_regions(&self.meta, &[oa, ob, merged.clone()])?;
            Ok(())
        })();
        if let Err(e) = attempt {
            let _ = remove_tree(self.fs.as_ref(), &dir.join(&merged.encoded));
            t.regions[ia].region = Some(self.open_region(&t.desc, &a)?);
            t.regions[ib].region = Some(self.open_region(&t.desc, &b)?);
            return Err(e);
        }
        let rm = self.open_region(&t.desc, &merged)?;
        self.request_compaction(&rm);
        t.regions.splice(ia..=ib, [Slot::open(merged, rm)]);
        for mut p in [a, b] {
            p.offline = true;
            t.parents.push(p);
        }
        Ok(())
    }
}

impl Database {
    /// `merge_region 'a', 'b'`: merges two adjacent regions named by their encoded names
    /// (or full region names).
    pub fn merge_regions_named(&self, a: &str, b: &str) -> Result<()> {
        let find = |name: &str| -> Option<(String, Vec<u8>)> {
            let tables = super::lock(&self.inner.tables);
            tables.iter().find_map(|(t, e)| {
                e.regions
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
        self.merge_regions(&ta, &ra, &rb)
    }
}
