//! Dual writes during a migration over any [`Table`] of this crate (embedded or remote):
//! the blocking twin of `cellar_client::migrate::DualWriter`, with the same re-keying
//! ([`rekey_put`], [`rekey_delete`]): each write goes to the old table as given, then to
//! the new one re-keyed; unstamped cells get the writer's clock first so both tables
//! hold the same timestamp.

use cellar_api::{Delete, Put, Result};
use cellar_client::migrate::{rekey_delete, rekey_put, KeyMap};

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
        let news = rekey_put(&self.map, &mut put, (self.clock)())?;
        self.old.put(put)?;
        for p in news {
            self.new.put(p)?;
        }
        Ok(())
    }

    /// Applies `delete` to the old table and, re-keyed, to the new one.
    pub fn delete(&self, mut delete: Delete) -> Result<()> {
        let news = rekey_delete(&self.map, &mut delete, (self.clock)())?;
        self.old.delete(delete)?;
        for d in news {
            self.new.delete(d)?;
        }
        Ok(())
    }
}
