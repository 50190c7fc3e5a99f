//! Errors of the embedded database, named after HBase's exceptions where one exists.

use std::path::PathBuf;

use thiserror::Error;

pub type Result<T, E = DbError> = std::result::Result<T, E>;

#[derive(Debug, Error)]
#[non_exhaustive]
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
    #[error("NamespaceNotFoundException: {0}")]
    NamespaceNotFound(String),
    #[error("NamespaceExistException: {0}")]
    NamespaceExists(String),
    /// A namespace that cannot be removed: reserved, or holding tables.
    #[error("ConstraintException: {0}")]
    NamespaceConstraint(String),
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
    /// What kind of failure this is for a client.
    pub fn kind(&self) -> cellar_api::ErrorKind {
        use cellar_api::ErrorKind;
        match self {
            DbError::Region(e) => e.kind(),
            DbError::Api(e) => e.kind(),
            DbError::Io(e) => e.kind(),
            DbError::Wal(e) => e.kind(),
            DbError::TableNotFound(_) => ErrorKind::TableNotFound,
            DbError::TableExists(_) => ErrorKind::TableExists,
            DbError::NamespaceNotFound(_) => ErrorKind::NamespaceNotFound,
            DbError::NamespaceExists(_) => ErrorKind::NamespaceExists,
            DbError::NamespaceConstraint(_) => ErrorKind::InvalidRequest,
            DbError::TableNotEnabled(_) => ErrorKind::TableNotEnabled,
            DbError::TableNotDisabled(_) => ErrorKind::TableNotDisabled,
            DbError::RegionNotServing { .. } => ErrorKind::NotServingRegion,
            DbError::Locked { .. } => ErrorKind::Locked,
            DbError::Open { .. } => ErrorKind::Io,
        }
    }

    /// Whether retrying later may help.
    pub fn is_retryable(&self) -> bool {
        matches!(self, DbError::Region(e) if e.is_retryable())
    }
}

impl From<DbError> for cellar_api::Error {
    fn from(e: DbError) -> cellar_api::Error {
        let err = cellar_api::Error::new(e.kind(), e.to_string());
        match e {
            DbError::TableNotFound(t)
            | DbError::TableExists(t)
            | DbError::TableNotEnabled(t)
            | DbError::TableNotDisabled(t) => err.with_table(t),
            DbError::Region(_)
            | DbError::Api(_)
            | DbError::Io(_)
            | DbError::Wal(_)
            | DbError::NamespaceNotFound(_)
            | DbError::NamespaceExists(_)
            | DbError::NamespaceConstraint(_)
            | DbError::RegionNotServing { .. }
            | DbError::Locked { .. }
            | DbError::Open { .. } => err,
        }
    }
}
