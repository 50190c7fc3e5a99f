//! Writing what the stores know of their large rows into `cellar:large_rows`: each row
//! at the watch level gets its entry (made on first sight) updated and a history point
//! when its size changed; a row a major compaction saw fall below the watch level
//! leaves the table. The table is made the first time there is something to write.

use cellar_api::{Delete, FamilyDescriptor, Get, Mutation, TableDescriptor};
use cellar_region::row_sizes::Level;

use super::entry::{key, Entry, FAMILY, TABLE};
use crate::error::Result;
use crate::master::{locked, Master};

impl Master {
    /// Brings `cellar:large_rows` up to date with the stores; the entries written.
    pub fn sync_large_rows(&self) -> Result<usize> {
        let _one = locked(&self.large_rows);
        let levels = self.config().large_row_levels;
        let mut seen = Vec::new();
        let mut dropped = Vec::new();
        for server in self.servers() {
            for region in server.online_regions() {
                let table = region.table().name.clone();
                if table.starts_with(&format!("{}:", cellar_api::SYSTEM_NAMESPACE)) {
                    continue;
                }
                for store in region.stores() {
                    for r in store.large_rows() {
                        seen.push((table.clone(), region.name().to_string(), r));
                    }
                    for row in store.take_dropped_large_rows() {
                        dropped.push(key(&table, &row, &store.family.name));
                    }
                }
            }
        }
        if seen.is_empty() && dropped.is_empty() {
            return Ok(0);
        }
        if !self.table_exists(TABLE) {
            let mut f = FamilyDescriptor::new(FAMILY);
            f.versions = 1;
            self.create_system_table(TableDescriptor::new(TABLE).with_family(f))?;
        }
        // Every change goes in one batch per region of the system table: one log sync,
        // not one per entry.
        let mut batches: Vec<(std::sync::Arc<cellar_region::Region>, Vec<Mutation>)> = Vec::new();
        let mut add = |region: std::sync::Arc<cellar_region::Region>, m: Mutation| match batches
            .iter_mut()
            .find(|(r, _)| r.name() == region.name())
        {
            Some((_, v)) => v.push(m),
            None => batches.push((region, vec![m])),
        };
        for (table, region, r) in seen {
            let k = key(&table, &r.row, &r.family);
            let sys = self.locate(TABLE, &k)?.region()?;
            let old = Entry::from_result(&sys.get(&Get::new(k.clone()))?);
            let level = match levels.level(r.bytes, r.cells) {
                Level::Warn => "warn",
                Level::Watch => "watch",
                Level::Below => "below",
            };
            let mut e = old.clone().unwrap_or_else(|| Entry {
                table: table.clone(),
                row: r.row.clone(),
                family: r.family.clone(),
                region: region.clone(),
                bytes: 0,
                cells: 0,
                deletes: 0,
                tombstones: false,
                first: r.seen,
                last: r.seen,
                level: level.to_string(),
                history: Vec::new(),
            });
            e.region = region;
            e.level = level.to_string();
            e.deletes = r.deletes;
            e.tombstones = levels.tombstones(r.deletes);
            e.observe(r.seen.max(e.last), r.bytes, r.cells);
            if old.as_ref() == Some(&e) {
                continue;
            }
            add(sys, Mutation::Put(e.to_put()));
        }
        for k in dropped {
            let sys = self.locate(TABLE, &k)?.region()?;
            add(sys, Mutation::Delete(Delete::new(k)));
        }
        let mut written = 0;
        for (region, muts) in batches {
            for r in region.batch(&muts) {
                r?;
                written += 1;
            }
        }
        Ok(written)
    }
}
