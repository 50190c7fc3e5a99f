//! What the shell drives: a [`Connection`] and its [`Admin`], behind the few calls the
//! commands make. The embedded database is one such connection; a remote one is
//! another constructor of [`Client`].

use cellar_api::{FailedRegion, RegionStats, Result, TableDescriptor};

use crate::client::{Admin, Connection, Table};

/// A connection and its admin, as the shell's commands use them.
pub struct Client {
    conn: Box<dyn Connection>,
    admin: Box<dyn Admin>,
    limits: (u64, u64),
}

impl Client {
    pub fn new(conn: Box<dyn Connection>) -> Client {
        let admin = conn.admin();
        let d = cellar_region::Config::default();
        Client {
            conn,
            admin,
            limits: (d.max_row_size, d.max_file_size),
        }
    }

    pub fn connection(&self) -> &dyn Connection {
        self.conn.as_ref()
    }

    pub fn table(&self, name: &str) -> Result<Box<dyn Table>> {
        self.conn.table(name)
    }

    /// `hbase.table.max.rowsize` and the region split size the forecasts measure
    /// against (the connection's configuration; HBase's defaults through a server).
    pub fn row_limits(&self) -> (u64, u64) {
        self.limits
    }

    /// The limits forecasts measure against.
    pub fn with_row_limits(mut self, max_row_size: u64, split_size: u64) -> Client {
        self.limits = (max_row_size, split_size);
        self
    }

    pub fn table_exists(&self, name: &str) -> bool {
        self.admin.table_exists(name).unwrap_or(false)
    }

    pub fn is_enabled(&self, name: &str) -> Result<bool> {
        self.admin.is_table_enabled(name)
    }

    pub fn list_tables(&self) -> Vec<String> {
        self.admin.list_tables().unwrap_or_default()
    }

    pub fn describe(&self, name: &str) -> Result<(TableDescriptor, bool)> {
        self.admin.describe(name)
    }

    pub fn create_table_split(&self, desc: TableDescriptor, splits: Vec<Vec<u8>>) -> Result<()> {
        self.admin.create_table(desc, splits)
    }

    /// Reads the descriptor, lets `change` edit it, and writes it back.
    pub fn alter_table(
        &self,
        name: &str,
        change: impl FnOnce(&mut TableDescriptor) -> Result<()>,
    ) -> Result<()> {
        let (mut desc, _) = self.admin.describe(name)?;
        change(&mut desc)?;
        desc.name = name.to_string();
        self.admin.modify_table(desc)
    }

    pub fn disable_table(&self, name: &str) -> Result<()> {
        self.admin.disable_table(name)
    }

    pub fn enable_table(&self, name: &str) -> Result<()> {
        self.admin.enable_table(name)
    }

    pub fn drop_table(&self, name: &str) -> Result<()> {
        self.admin.delete_table(name)
    }

    pub fn truncate_table(&self, name: &str) -> Result<()> {
        self.admin.truncate_table(name)
    }

    pub fn flush(&self, name: &str) -> Result<()> {
        self.admin.flush(name)
    }

    pub fn compact(&self, name: &str, major: bool) -> Result<()> {
        self.admin.compact(name, major)
    }

    pub fn split(&self, name: &str, row: Option<&[u8]>) -> Result<usize> {
        self.admin.split(name, row)
    }

    pub fn merge_regions_named(&self, a: &str, b: &str) -> Result<()> {
        self.admin.merge_regions(a, b)
    }

    pub fn list_regions(&self, name: &str) -> Result<Vec<RegionStats>> {
        self.admin.list_regions(name)
    }

    pub fn failed_regions(&self) -> Vec<FailedRegion> {
        self.admin.failed_regions().unwrap_or_default()
    }

    pub fn admin(&self) -> &dyn Admin {
        self.admin.as_ref()
    }
}
