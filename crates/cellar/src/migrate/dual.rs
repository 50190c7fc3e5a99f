//! Dual writes during a migration: a wrapper over the old and the new table (embedded or
//! remote, any [`Table`]) that writes each Put to the old table as given and to the new
//! one re-keyed by the migration's map. Cells without a timestamp get the writer's clock
//! first, so both tables hold the same timestamp (and a time-bucket map sees it). The
//! old table is written first: until the switch it is the source of truth, and a failed
//! second write is an error the caller retries (both writes are idempotent).

use std::collections::BTreeMap;

use cellar_api::{Put, Result};
use cellar_types::LATEST_TIMESTAMP;

use super::keymap::KeyMap;
use crate::client::Table;

pub struct DualWriter {
    old: Box<dyn Table>,
    new: Box<dyn Table>,
    map: KeyMap,
    clock: Box<dyn Fn() -> i64 + Send + Sync>,
}

impl DualWriter {
    /// `clock` gives milliseconds for cells written without a timestamp.
    pub fn new(
        old: Box<dyn Table>,
        new: Box<dyn Table>,
        map: KeyMap,
        clock: Box<dyn Fn() -> i64 + Send + Sync>,
    ) -> DualWriter {
        DualWriter {
            old,
            new,
            map,
            clock,
        }
    }

    /// Writes `put` to the old table and, re-keyed, to the new one.
    pub fn put(&self, mut put: Put) -> Result<()> {
        let now = (self.clock)();
        for c in &mut put.cells {
            if c.2 == LATEST_TIMESTAMP {
                c.2 = now;
            }
        }
        put.ts = now;
        self.old.put(put.clone())?;
        // One Put per new row the cells map to.
        let mut rows: BTreeMap<Vec<u8>, Put> = BTreeMap::new();
        for (family, qualifier, ts, value) in &put.cells {
            let (row, q) = self.map.map(&put.row, qualifier, *ts)?;
            let p = rows.entry(row.clone()).or_insert_with(|| {
                let mut p = Put::new(row);
                p.durability = put.durability;
                p
            });
            p.cells.push((family.clone(), q, *ts, value.clone()));
        }
        for (_, p) in rows {
            self.new.put(p)?;
        }
        Ok(())
    }
}
