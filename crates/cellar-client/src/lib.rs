//! `cellar-client`: an async Rust client that speaks HBase's own RPC protocol, so it
//! works against a Cellar server and, by construction, an HBase 2.x cluster.
//!
//! - [`Connection::connect`] takes one server's `host:port` and finds the master and
//!   `hbase:meta` through ClientMetaService (HBase 2.5+'s RPC registry).
//! - [`Table`]: get, put, delete, increment, append, check_and_mutate, mutate_row,
//!   mutate_rows (MultiRowMutationService), batch, and scan as a stream.
//! - [`Admin`]: tables, namespaces, flush, compact, split, merge, region listing,
//!   snapshots (take, list, delete, clone, restore).
//! - [`BufferedMutator`]: writes buffered up to `hbase.client.write.buffer`.
//! - [`migrate::DualWriter`]: writes to a table and its re-keyed successor together
//!   while `cellar migrate` moves the history.
//! - Bulk load calls: [`Connection::bulk_load_region`] and its prepare/cleanup.
//!
//! Region locations are cached and dropped when a server says a region moved;
//! retryable failures back off with HBase's schedule (`hbase.client.pause`,
//! `hbase.client.retries.number`); others fail at once. Results of a scan are
//! stitched from the server's partial results as HBase's client stitches them.

mod admin;
mod bulk_load;
mod config;
mod connection;
mod log_entries;
pub mod migrate;
mod mutator;
mod rpc;
mod scanner;
mod snapshots;
mod table;

pub use admin::Admin;
pub use cellar_api as api;
/// HBase's wire messages, for [`Connection::call_raw`].
pub use cellar_protocol::{pb, service};
pub use config::ClientConfig;
pub use connection::{Connection, RegionLocation};
pub use log_entries::{Hotspots, LogRecord};
pub use mutator::BufferedMutator;
pub use scanner::{ResultScanner, ScanStream};
pub use snapshots::SnapshotListing;
pub use table::Table;
