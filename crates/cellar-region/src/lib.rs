//! The region engine: MemStores and store files per family, flushes and compactions,
//! row-atomic mutations under row locks and MVCC, and reads with HBase's exact
//! semantics (versions, deletes, time ranges, TTL, MIN_VERSIONS, KEEP_DELETED_CELLS),
//! all over the `cellar-io` file system and clock.

pub mod bulk_load;
mod column_key;
pub mod compaction;
pub mod compaction_matcher;
pub mod config;
pub mod counter;
pub mod cursor;
pub mod delete_tracker;
pub mod descriptor;
mod error;
mod get_room;
pub mod heap;
pub mod large_log;
pub mod manifest;
pub mod matcher;
pub mod memstore;
pub mod mvcc;
mod one_source_get;
mod read;
mod region;
mod row_clock;
pub mod row_lock;
pub mod row_sizes;
pub mod scanner;
mod skiplist;
pub mod split_policy;
pub mod store;
mod store_scanner;
mod store_upgrade;
mod write;

#[cfg(test)]
mod file_cursor_tests;
#[cfg(test)]
mod one_source_get_tests;
#[cfg(test)]
mod test_region;
#[cfg(test)]
mod visibility_tests;

pub use bulk_load::BulkLoadOutcome;
pub use cellar_api::{
    Append, CheckAndMutate, CheckAndMutateResult, Columns, Comparator, CompareOp, Condition,
    Delete, DeleteSpec, Durability, FamilyDescriptor, FilterSpec, Get, Increment, KeepDeletedCells,
    ListOp, Mutation, Put, RowMutations, RowResult, Scan, TableDescriptor, TimeRange, FOREVER,
};
pub use cellar_filter::{parse_filter, parse_filter_bytes};
pub use config::Config;
pub use descriptor::check_descriptor;
pub use error::{RegionError, Result};
pub use region::{CompactionOutcome, Frozen, Maintenance, Region, RegionContext, RegionMetrics};
pub use scanner::{CallLimits, RegionScanner, TimeLimit};
