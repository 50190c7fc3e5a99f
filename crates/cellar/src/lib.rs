//! Cellar as a library: the embedded [`Database`] (tables of regions over a local
//! directory) and the HBase-style shell that drives it.

pub mod database;
pub mod shell;

pub use database::{Database, DbError, FailedRegion, Options, Table};
