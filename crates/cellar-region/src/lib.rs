//! The region engine: MemStores and store files per family, flushes and compactions,
//! row-atomic mutations under row locks and MVCC, and reads with HBase's exact
//! semantics (versions, deletes, time ranges, TTL, MIN_VERSIONS, KEEP_DELETED_CELLS),
//! all over the `cellar-io` file system and clock.

pub mod client_scanner;
pub mod compaction;
pub mod compaction_matcher;
pub mod config;
pub mod cursor;
pub mod delete_tracker;
pub mod descriptor;
mod error;
pub mod matcher;
pub mod memstore;
pub mod mutation;
pub mod mvcc;
pub mod read;
mod region;
pub mod row_lock;
pub mod scanner;
pub mod split_policy;
pub mod store;
mod write;

#[cfg(test)]
mod visibility_tests;

pub use cellar_filter::{parse_filter, parse_filter_bytes, Comparator, FilterSpec, ListOp};
pub use client_scanner::ClientScanner;
pub use config::Config;
pub use descriptor::{FamilyDescriptor, KeepDeletedCells, TableDescriptor, FOREVER};
pub use error::{RegionError, Result};
pub use mutation::{Append, CompareOp, Condition, Delete, DeleteSpec, Increment, Mutation, Put};
pub use read::{Columns, Get, RowResult, Scan, TimeRange};
pub use region::{CompactionOutcome, Maintenance, Region, RegionContext, RegionMetrics};
pub use scanner::{CallLimits, RegionScanner};
