//! The WAL's error type.

use std::path::PathBuf;

use thiserror::Error;

pub type Result<T, E = WalError> = std::result::Result<T, E>;

#[derive(Debug, Error)]
pub enum WalError {
    #[error(transparent)]
    Io(#[from] cellar_io::IoError),
    #[error("corrupt WAL segment {path} at offset {offset}: {reason}")]
    Corrupt {
        path: PathBuf,
        offset: u64,
        reason: String,
    },
    #[error("the WAL is poisoned by an earlier failed write or sync ({cause}); writes are refused until the store is reopened")]
    Poisoned { cause: String },
    #[error("the WAL is closed")]
    Closed,
    #[error("edit cannot be logged: {0}")]
    InvalidEdit(String),
}
