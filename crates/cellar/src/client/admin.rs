//! Administration through the in-process connection: the master's DDL and region
//! operations, answering `cellar_api::Error`.

use std::sync::Arc;

use cellar_api::{FailedRegion, RegionStats, Result, TableDescriptor};

use super::local::LocalConnection;
use super::Admin;

/// The master of this process, as a client administers it.
pub struct LocalAdmin {
    conn: Arc<LocalConnection>,
}

impl LocalAdmin {
    pub fn new(conn: Arc<LocalConnection>) -> LocalAdmin {
        LocalAdmin { conn }
    }
}

fn api<T>(r: crate::error::Result<T>) -> Result<T> {
    r.map_err(cellar_api::Error::from)
}

impl Admin for LocalAdmin {
    fn create_table(&self, desc: TableDescriptor, split_keys: Vec<Vec<u8>>) -> Result<()> {
        api(self.conn.master().create_table(desc, split_keys))
    }

    fn modify_table(&self, desc: TableDescriptor) -> Result<()> {
        let name = desc.name.clone();
        let r = api(self.conn.master().alter_table(&name, move |d| {
            *d = desc;
            Ok(())
        }));
        self.conn.invalidate(&name);
        r
    }

    fn disable_table(&self, name: &str) -> Result<()> {
        let r = api(self.conn.master().disable_table(name));
        self.conn.invalidate(name);
        r
    }

    fn enable_table(&self, name: &str) -> Result<()> {
        api(self.conn.master().enable_table(name))
    }

    fn is_table_enabled(&self, name: &str) -> Result<bool> {
        Ok(api(self.conn.master().describe(name))?.1)
    }

    fn delete_table(&self, name: &str) -> Result<()> {
        let r = api(self.conn.master().drop_table(name));
        self.conn.invalidate(name);
        r
    }

    fn truncate_table(&self, name: &str) -> Result<()> {
        let r = api(self.conn.master().truncate_table(name));
        self.conn.invalidate(name);
        r
    }

    fn describe(&self, name: &str) -> Result<(TableDescriptor, bool)> {
        api(self.conn.master().describe(name))
    }

    fn list_tables(&self) -> Result<Vec<String>> {
        Ok(self.conn.master().list_tables())
    }

    fn table_exists(&self, name: &str) -> Result<bool> {
        Ok(self.conn.master().table_exists(name))
    }

    fn flush(&self, name: &str) -> Result<()> {
        api(self.conn.master().flush_table(name))
    }

    fn compact(&self, name: &str, major: bool) -> Result<()> {
        api(self.conn.master().compact_table(name, major)).map(|_| ())
    }

    fn split(&self, name: &str, row: Option<&[u8]>) -> Result<usize> {
        api(self.conn.master().split(name, row))
    }

    fn merge_regions(&self, a: &str, b: &str) -> Result<()> {
        api(self.conn.master().merge_named(a, b))
    }

    fn snapshot(&self, table: &str, name: &str) -> Result<()> {
        api(self.conn.master().snapshot(table, name))
    }

    fn list_snapshots(&self) -> Result<Vec<(String, String, i64)>> {
        api(self.conn.master().list_snapshots()).map(|l| {
            l.into_iter()
                .map(|s| (s.name, s.table, s.creation_time))
                .collect()
        })
    }

    fn delete_snapshot(&self, name: &str) -> Result<()> {
        api(self.conn.master().delete_snapshot(name))
    }

    fn clone_snapshot(&self, name: &str, table: &str) -> Result<()> {
        api(self.conn.master().clone_snapshot(name, table))
    }

    fn restore_snapshot(&self, name: &str) -> Result<()> {
        api(self.conn.master().restore_snapshot(name))
    }

    fn list_regions(&self, name: &str) -> Result<Vec<RegionStats>> {
        api(self.conn.master().list_regions(name))
    }

    fn failed_regions(&self) -> Result<Vec<FailedRegion>> {
        Ok(self.conn.master().failed_regions())
    }

    fn create_namespace(&self, ns: &str) -> Result<()> {
        api(self.conn.master().create_namespace(ns))
    }

    fn delete_namespace(&self, ns: &str) -> Result<()> {
        api(self.conn.master().drop_namespace(ns))
    }

    fn list_namespaces(&self) -> Result<Vec<String>> {
        api(self.conn.master().list_namespaces())
    }

    fn list_namespace_tables(&self, ns: &str) -> Result<Vec<String>> {
        api(self.conn.master().namespace_tables(ns))
    }
}
