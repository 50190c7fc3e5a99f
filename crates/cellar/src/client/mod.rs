//! The client side: [`Connection`], [`Table`] and [`Admin`] as HBase's client API has
//! them, in the shared vocabulary of `cellar-api` and answering `cellar_api::Error`. The
//! in-process implementation ([`LocalConnection`]) talks to the master and region
//! servers of this process directly: it locates a row's region (cached, and the cache
//! dropped when a region turns out not to be served or the row is outside it), retries
//! only what is retryable, with backoff, and stitches scan results as HBase's client
//! does. A network client is a second implementation of the same traits.

mod admin;
mod local;
mod remote;
mod scanner;
mod table;

use cellar_api::{
    Append, CheckAndMutate, CheckAndMutateResult, Delete, FailedRegion, Get, Increment, Mutation,
    Put, RegionStats, Result, RowMutations, RowResult, Scan, TableDescriptor,
};

pub use admin::LocalAdmin;
pub use local::LocalConnection;
pub use remote::RemoteConnection;
pub use scanner::ClientScanner;
pub use table::{LocalTable, TableScanner};

/// The results of a scan, in the scan's direction.
pub trait ResultScanner: Iterator<Item = Result<RowResult>> + Send {}

impl<T: Iterator<Item = Result<RowResult>> + Send> ResultScanner for T {}

/// Data operations on one table.
pub trait Table: Send + Sync {
    fn name(&self) -> &str;
    fn get(&self, get: &Get) -> Result<RowResult>;
    fn put(&self, put: Put) -> Result<()>;
    fn delete(&self, delete: Delete) -> Result<()>;
    fn increment(&self, inc: Increment) -> Result<RowResult>;
    fn append(&self, app: Append) -> Result<RowResult>;
    /// Several mutations of one row, atomically.
    fn mutate_row(&self, rm: &RowMutations) -> Result<RowResult>;
    fn check_and_mutate(&self, cam: &CheckAndMutate) -> Result<CheckAndMutateResult>;
    /// Mutations of several rows of one region, atomically.
    fn mutate_rows(&self, mutations: &[Mutation]) -> Result<()>;
    /// Each mutation on its own: one result per mutation.
    fn batch(&self, mutations: &[Mutation]) -> Vec<Result<RowResult>>;
    fn scan(&self, scan: &Scan) -> Result<Box<dyn ResultScanner>>;
}

/// Table and cluster administration.
pub trait Admin: Send + Sync {
    /// Creates a table pre-split at `split_keys` (none: one region).
    fn create_table(&self, desc: TableDescriptor, split_keys: Vec<Vec<u8>>) -> Result<()>;
    /// Replaces a table's descriptor (families added, changed or removed).
    fn modify_table(&self, desc: TableDescriptor) -> Result<()>;
    fn disable_table(&self, name: &str) -> Result<()>;
    fn enable_table(&self, name: &str) -> Result<()>;
    fn is_table_enabled(&self, name: &str) -> Result<bool>;
    fn delete_table(&self, name: &str) -> Result<()>;
    fn truncate_table(&self, name: &str) -> Result<()>;
    /// The descriptor and whether the table is enabled.
    fn describe(&self, name: &str) -> Result<(TableDescriptor, bool)>;
    fn list_tables(&self) -> Result<Vec<String>>;
    fn table_exists(&self, name: &str) -> Result<bool>;
    fn flush(&self, name: &str) -> Result<()>;
    fn compact(&self, name: &str, major: bool) -> Result<()>;
    /// Splits a table's regions (at `row`, or each at its own split point); returns how
    /// many split.
    fn split(&self, name: &str, row: Option<&[u8]>) -> Result<usize>;
    /// Merges two adjacent regions named by encoded or full region name.
    fn merge_regions(&self, a: &str, b: &str) -> Result<()>;
    fn list_regions(&self, name: &str) -> Result<Vec<RegionStats>>;
    fn failed_regions(&self) -> Result<Vec<FailedRegion>>;
    fn create_namespace(&self, ns: &str) -> Result<()>;
    /// Removes an empty namespace.
    fn delete_namespace(&self, ns: &str) -> Result<()>;
    fn list_namespaces(&self) -> Result<Vec<String>>;
    /// The tables of a namespace (full names).
    fn list_namespace_tables(&self, ns: &str) -> Result<Vec<String>>;
    /// Takes snapshot `name` of table `table`.
    fn snapshot(&self, table: &str, name: &str) -> Result<()> {
        let _ = (table, name);
        Err(snapshots_unsupported())
    }
    /// Completed snapshots: (name, table, creation time in ms).
    fn list_snapshots(&self) -> Result<Vec<(String, String, i64)>> {
        Err(snapshots_unsupported())
    }
    fn delete_snapshot(&self, name: &str) -> Result<()> {
        let _ = name;
        Err(snapshots_unsupported())
    }
    /// A new table `table` with the snapshot's contents.
    fn clone_snapshot(&self, name: &str, table: &str) -> Result<()> {
        let _ = (name, table);
        Err(snapshots_unsupported())
    }
    /// The snapshot's contents back into its (disabled) table.
    fn restore_snapshot(&self, name: &str) -> Result<()> {
        let _ = name;
        Err(snapshots_unsupported())
    }
}

fn snapshots_unsupported() -> cellar_api::Error {
    cellar_api::Error::new(
        cellar_api::ErrorKind::Unsupported,
        "this connection does not take snapshots",
    )
}

/// A connection to a Cellar (or HBase) deployment.
pub trait Connection: Send + Sync {
    fn table(&self, name: &str) -> Result<Box<dyn Table>>;
    fn admin(&self) -> Box<dyn Admin>;
    /// Rows many writers contend for.
    fn hot_rows(&self) -> Result<Vec<crate::hotspots::HotRow>> {
        Err(cellar_api::Error::new(
            cellar_api::ErrorKind::Unsupported,
            "this connection does not see the servers' row locks",
        ))
    }

    /// Families keeping far more versions than their reads ask for.
    fn version_waste(&self) -> Result<Vec<crate::hotspots::VersionWaste>> {
        Err(cellar_api::Error::new(
            cellar_api::ErrorKind::Unsupported,
            "this connection does not see the servers' stores",
        ))
    }

    /// The reads the servers logged as too large or too slow, newest first.
    fn large_responses(&self) -> Result<Vec<cellar_region::large_log::LargeResponse>> {
        Err(cellar_api::Error::new(
            cellar_api::ErrorKind::Unsupported,
            "this connection does not read the servers' large-response logs",
        ))
    }
}
