//! Errors of the embedded database, named after HBase's exceptions where one exists.

use std::path::PathBuf;

use thiserror::Error;

pub type Result<T, E = DbError> = std::result::Result<T, E>;

#[derive(Debug, Error)]
pub enum DbError {
    #[error(transparent)]
    Region(#[from] cellar_region::RegionError),
    #[error(transparent)]
    Api(#[from] cellar_api::Error),
    #[error(transparent)]
    Io(#[from] cellar_io::IoError),
    #[error(transparent)]
    Wal(#[from] cellar_wal::WalError),
    #[error("TableNotFoundException: {0}")]
    TableNotFound(String),
    #[error("TableExistsException: {0}")]
    TableExists(String),
    #[error("TableNotEnabledException: {0} is disabled")]
    TableNotEnabled(String),
    #[error("TableNotDisabledException: {0} is enabled; disable it first")]
    TableNotDisabled(String),
    #[error("NotServingRegionException: region {region} is not online: {reason}")]
    RegionNotServing { region: String, reason: String },
    #[error("the database at {path} is in use by another process ({reason})")]
    Locked { path: PathBuf, reason: String },
    #[error("cannot open {path}: {reason}")]
    Open { path: PathBuf, reason: String },
}

impl DbError {
    /// Whether retrying later may help.
    pub fn is_retryable(&self) -> bool {
        matches!(self, DbError::Region(e) if e.is_retryable())
    }
}
