//! Errors of the store-file layer. Corruption is always a typed error, never a panic.

use cellar_io::IoError;
use cellar_types::TypesError;

/// A store-file failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HFileError {
    #[error(transparent)]
    Io(#[from] IoError),
    #[error("checksum mismatch in block at offset {offset}, chunk {chunk}: stored {stored:#010x}, computed {computed:#010x}")]
    Checksum {
        offset: u64,
        chunk: usize,
        stored: u32,
        computed: u32,
    },
    #[error("corrupt store file at offset {offset}: {reason}")]
    Corrupt { offset: u64, reason: String },
    #[error("unsupported store file feature: {what}")]
    Unsupported { what: String },
    #[error("bad cell in store file: {0}")]
    Cell(#[from] TypesError),
    #[error("cells appended out of order: {previous} then {next}")]
    OutOfOrder { previous: String, next: String },
    #[error("invalid writer option: {0}")]
    InvalidOption(String),
}

impl HFileError {
    pub(crate) fn corrupt(offset: u64, reason: impl Into<String>) -> HFileError {
        HFileError::Corrupt {
            offset,
            reason: reason.into(),
        }
    }
}

impl HFileError {
    /// What kind of failure this is for a client.
    pub fn kind(&self) -> cellar_api::ErrorKind {
        use cellar_api::ErrorKind;
        match self {
            HFileError::Io(e) => e.kind(),
            HFileError::Checksum { .. } | HFileError::Corrupt { .. } => ErrorKind::Corrupt,
            HFileError::Unsupported { .. } => ErrorKind::Unsupported,
            HFileError::Cell(e) => e.into(),
            // Cells out of order reaching a writer is a fault of the server itself.
            HFileError::OutOfOrder { .. } => ErrorKind::Io,
            HFileError::InvalidOption(_) => ErrorKind::InvalidRequest,
        }
    }
}

pub type Result<T> = std::result::Result<T, HFileError>;
