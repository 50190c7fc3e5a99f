//! The write-ahead log (see `docs/format/wal.md`): every atomic mutation is one edit — its
//! region, sequence id and cells — framed with a length and a CRC32C in append-only
//! segment files. Concurrent writers share syncs (group commit); each edit asks for a
//! durability level; segments roll by size and are removed once every edit in them is
//! flushed to store files. Opening the log replays it, truncating a torn tail and
//! refusing corruption in the middle.

mod error;
mod gather;
pub mod hbase;
mod record;
mod replay;
mod wal;

pub use cellar_api::Durability;
pub use error::{Result, WalError};
pub use record::WalEdit;
pub use replay::{ReplayReport, TornTail};
pub use wal::{Wal, WalOptions, WalStats};
