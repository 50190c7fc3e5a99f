//! The I/O error type: what failed, on which path, and why.

use std::path::PathBuf;

/// An I/O failure, with the operation and path that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IoError {
    #[error("{op} {path}: {source}")]
    Os {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not found")]
    NotFound { path: PathBuf },
    #[error("{path}: read of {len} bytes at offset {offset} runs past the end of the file ({file_len} bytes)")]
    ShortRead {
        path: PathBuf,
        offset: u64,
        len: usize,
        file_len: u64,
    },
    #[error("{op} {path}: injected fault")]
    Injected { op: &'static str, path: PathBuf },
}

impl IoError {
    pub(crate) fn os(op: &'static str, path: &std::path::Path, source: std::io::Error) -> IoError {
        if source.kind() == std::io::ErrorKind::NotFound {
            IoError::NotFound {
                path: path.to_path_buf(),
            }
        } else {
            IoError::Os {
                op,
                path: path.to_path_buf(),
                source,
            }
        }
    }
}

impl IoError {
    /// What kind of failure this is for a client.
    pub fn kind(&self) -> cellar_api::ErrorKind {
        use cellar_api::ErrorKind;
        match self {
            IoError::Os { .. } | IoError::NotFound { .. } | IoError::Injected { .. } => {
                ErrorKind::Io
            }
            // A file shorter than its own metadata says.
            IoError::ShortRead { .. } => ErrorKind::Corrupt,
        }
    }
}

pub type Result<T> = std::result::Result<T, IoError>;
