//! Cellar as a library: the roles — [`Master`] (catalog, DDL, assignment, split and
//! merge), [`RegionServer`] (hosts regions by encoded name) and the client
//! [`Connection`] — and the embedded [`Database`] that runs a master and one region
//! server in this process behind the in-process connection, plus the HBase-style shell
//! that drives a connection.

pub mod bigtable;
pub mod bulkload;
pub mod census;
pub mod client;
pub mod database;
mod error;
pub mod hashtable;
pub mod hbase_snapshot;
pub mod hotspots;
pub mod large_rows;
pub mod layout;
pub mod master;
pub mod migrate;
pub mod region_server;
pub mod server;
pub mod shell;
pub mod sizing;
pub mod snapshot_import;
pub mod thrift;

pub use client::{Admin, Connection, LocalConnection, LocalTable, Table};
pub use database::{Database, Options};
pub use error::{DbError, Result};
pub use master::{FailedRegion, Master, RegionStats};
pub use region_server::RegionServer;

/// The README's code blocks, compiled and run as doctests so its example stays true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
