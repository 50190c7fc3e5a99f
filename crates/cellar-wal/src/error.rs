//! The WAL's error type.

use std::path::PathBuf;

use thiserror::Error;

pub type Result<T, E = WalError> = std::result::Result<T, E>;

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum WalError {
    #[error(transparent)]
    Io(#[from] cellar_io::IoError),
    #[error("corrupt WAL segment {path} at offset {offset}: {reason}")]
    Corrupt {
        path: PathBuf,
        offset: u64,
        reason: String,
    },
    #[error("{path}: {what} cannot be read")]
    Unsupported { path: PathBuf, what: String },
    #[error("the WAL is poisoned by an earlier failed write or sync ({cause}); writes are refused until the store is reopened")]
    Poisoned { cause: String },
    #[error("the WAL is closed")]
    Closed,
    #[error("edit cannot be logged: {0}")]
    InvalidEdit(String),
}

impl WalError {
    /// What kind of failure this is for a client.
    pub fn kind(&self) -> cellar_api::ErrorKind {
        use cellar_api::ErrorKind;
        match self {
            WalError::Io(e) => e.kind(),
            WalError::Corrupt { .. } => ErrorKind::Corrupt,
            WalError::Unsupported { .. } => ErrorKind::Unsupported,
            WalError::Poisoned { .. } => ErrorKind::ServerAborted,
            WalError::Closed => ErrorKind::ServerStopped,
            WalError::InvalidEdit(_) => ErrorKind::InvalidRequest,
        }
    }
}
