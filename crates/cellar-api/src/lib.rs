//! Cellar's client vocabulary, shared by the engine, the embedded database, servers and
//! clients: mutations (Put, the four Delete kinds, Increment, Append, RowMutations,
//! CheckAndMutate), reads (Get, Scan) and their results, filter specs, table and family
//! descriptors, durability, table names with namespaces, region info, server names, and
//! the error a client sees. Nothing here runs a store: a client depends on this crate
//! without pulling in skip lists, codecs or the WAL.

mod check_and_mutate;
mod descriptor;
mod durability;
mod error;
mod family_options;
mod filter;
mod mutation;
mod read;
mod region_info;
mod region_stats;
mod result;
mod server_name;
mod shell_text;
mod table_name;

pub use cellar_types::{Cell, CellType, LATEST_TIMESTAMP};
pub use check_and_mutate::{CheckAndMutate, CheckAndMutateResult, Condition};
pub use descriptor::{FamilyDescriptor, KeepDeletedCells, TableDescriptor, FOREVER};
pub use durability::Durability;
pub use error::{Error, ErrorKind, Result, Retry};
pub use family_options::{BloomType, Compression, DataBlockEncoding};
pub use filter::{Comparator, CompareOp, FilterSpec, ListOp};
pub use mutation::{Append, Delete, DeleteSpec, Increment, Mutation, Put, PutCell, RowMutations};
pub use read::{Columns, Get, Scan, TimeRange};
pub use region_info::RegionInfo;
pub use region_stats::{FailedRegion, RegionStats};
pub use result::RowResult;
pub use server_name::ServerName;
pub use shell_text::ttl_text;
pub use table_name::{is_legal_namespace, TableName, DEFAULT_NAMESPACE, SYSTEM_NAMESPACE};
