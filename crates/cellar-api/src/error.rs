//! The error a client sees: what kind of failure it is, the HBase exception class a
//! client of HBase expects for it, and whether retrying can help. Every engine crate's
//! error maps onto [`ErrorKind`] with an exhaustive `match`; the message is formatted
//! once, here at the edge, from the engine error's fields.

use std::fmt;

/// Whether, and how, a client may retry a failed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Retry {
    /// The region moved or is not served here: look it up again, then retry.
    Relocate,
    /// A transient condition (a busy region, a lock wait): back off, then retry.
    Backoff,
    /// Retrying the same request gives the same answer.
    Never,
}

/// The kinds of failure a client can tell apart, each one HBase exception.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The region is not online on this server (closed, splitting, failed to open).
    NotServingRegion,
    /// The row is outside the region the request was addressed to.
    WrongRegion,
    /// The region is over its MemStore blocking limit.
    RegionTooBusy,
    /// A row lock could not be taken in time.
    LockTimeout,
    /// A read would return more than `hbase.table.max.rowsize` of one row.
    RowTooBig,
    /// The table does not exist.
    TableNotFound,
    /// The table already exists.
    TableExists,
    /// The table is disabled.
    TableNotEnabled,
    /// The table must be disabled first.
    TableNotDisabled,
    /// The namespace does not exist.
    NamespaceNotFound,
    /// The namespace already exists.
    NamespaceExists,
    /// A family named in the request is not in the table.
    NoSuchColumnFamily,
    /// The scanner id is unknown or has expired.
    UnknownScanner,
    /// A snapshot of that name already exists.
    SnapshotExists,
    /// No snapshot of that name exists.
    SnapshotNotFound,
    /// A mutation fails a sanity check (a cell over `hbase.server.keyvalue.maxsize`,
    /// a timestamp out of range).
    FailedSanityCheck,
    /// A malformed or invalid request (bad argument, bad attribute, bad filter).
    InvalidRequest,
    /// The request asks for something this server does not do.
    Unsupported,
    /// Stored data failed a check (checksum, structure): the request cannot be served.
    Corrupt,
    /// An input/output failure on the server; may pass.
    Io,
    /// The server stopped writing after a failed log write or sync; it must restart.
    ServerAborted,
    /// The server is shutting down.
    ServerStopped,
    /// The database is held by another process.
    Locked,
}

impl ErrorKind {
    /// The fully qualified Java class an HBase client expects for this failure.
    pub fn exception_class(self) -> &'static str {
        match self {
            ErrorKind::NotServingRegion => "org.apache.hadoop.hbase.NotServingRegionException",
            ErrorKind::WrongRegion => "org.apache.hadoop.hbase.regionserver.WrongRegionException",
            ErrorKind::RegionTooBusy => "org.apache.hadoop.hbase.RegionTooBusyException",
            ErrorKind::LockTimeout => "org.apache.hadoop.hbase.exceptions.TimeoutIOException",
            ErrorKind::RowTooBig => "org.apache.hadoop.hbase.regionserver.RowTooBigException",
            ErrorKind::TableNotFound => "org.apache.hadoop.hbase.TableNotFoundException",
            ErrorKind::TableExists => "org.apache.hadoop.hbase.TableExistsException",
            ErrorKind::TableNotEnabled => "org.apache.hadoop.hbase.TableNotEnabledException",
            ErrorKind::TableNotDisabled => "org.apache.hadoop.hbase.TableNotDisabledException",
            ErrorKind::NamespaceNotFound => "org.apache.hadoop.hbase.NamespaceNotFoundException",
            ErrorKind::NamespaceExists => "org.apache.hadoop.hbase.NamespaceExistException",
            ErrorKind::NoSuchColumnFamily => {
                "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException"
            }
            ErrorKind::UnknownScanner => "org.apache.hadoop.hbase.UnknownScannerException",
            ErrorKind::SnapshotExists => "org.apache.hadoop.hbase.snapshot.SnapshotExistsException",
            ErrorKind::SnapshotNotFound => {
                "org.apache.hadoop.hbase.snapshot.SnapshotDoesNotExistException"
            }
            ErrorKind::FailedSanityCheck => {
                "org.apache.hadoop.hbase.exceptions.FailedSanityCheckException"
            }
            ErrorKind::InvalidRequest => "org.apache.hadoop.hbase.DoNotRetryIOException",
            ErrorKind::Unsupported => "org.apache.hadoop.hbase.DoNotRetryIOException",
            ErrorKind::Corrupt => "org.apache.hadoop.hbase.io.hfile.CorruptHFileException",
            ErrorKind::Io => "java.io.IOException",
            ErrorKind::ServerAborted => {
                "org.apache.hadoop.hbase.regionserver.RegionServerAbortedException"
            }
            ErrorKind::ServerStopped => {
                "org.apache.hadoop.hbase.regionserver.RegionServerStoppedException"
            }
            ErrorKind::Locked => "org.apache.hadoop.hbase.DoNotRetryIOException",
        }
    }

    /// Whether a retry can help, and how.
    pub fn retry(self) -> Retry {
        match self {
            ErrorKind::NotServingRegion
            | ErrorKind::WrongRegion
            | ErrorKind::ServerAborted
            | ErrorKind::ServerStopped => Retry::Relocate,
            ErrorKind::RegionTooBusy | ErrorKind::LockTimeout | ErrorKind::Io => Retry::Backoff,
            ErrorKind::RowTooBig
            | ErrorKind::TableNotFound
            | ErrorKind::TableExists
            | ErrorKind::TableNotEnabled
            | ErrorKind::TableNotDisabled
            | ErrorKind::NamespaceNotFound
            | ErrorKind::NamespaceExists
            | ErrorKind::NoSuchColumnFamily
            | ErrorKind::UnknownScanner
            | ErrorKind::SnapshotExists
            | ErrorKind::SnapshotNotFound
            | ErrorKind::FailedSanityCheck
            | ErrorKind::InvalidRequest
            | ErrorKind::Unsupported
            | ErrorKind::Corrupt
            | ErrorKind::Locked => Retry::Never,
        }
    }

    /// HBase's `do_not_retry` flag of an exception response.
    pub fn do_not_retry(self) -> bool {
        self.retry() == Retry::Never
    }
}

/// A failure as a client receives it: its kind and its message, formatted once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    /// The table the failure is about, when there is one (a client's own messages name
    /// it: "Unknown table t!").
    table: Option<String>,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            table: None,
        }
    }

    /// The same error, about `table`.
    pub fn with_table(mut self, table: impl Into<String>) -> Error {
        self.table = Some(table.into());
        self
    }

    pub fn table(&self) -> Option<&str> {
        self.table.as_deref()
    }

    /// An invalid argument or attribute.
    pub fn invalid(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidRequest, message)
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn exception_class(&self) -> &'static str {
        self.kind.exception_class()
    }

    pub fn retry(&self) -> Retry {
        self.kind.retry()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<&cellar_types::TypesError> for ErrorKind {
    /// A cell that breaks a limit is a bad request; a key or KeyValue that does not
    /// parse comes from stored or received bytes that are damaged.
    fn from(e: &cellar_types::TypesError) -> ErrorKind {
        use cellar_types::TypesError;
        match e {
            TypesError::RowTooLong { .. }
            | TypesError::FamilyTooLong { .. }
            | TypesError::TagsTooLong { .. }
            | TypesError::BadEscape { .. } => ErrorKind::InvalidRequest,
            TypesError::UnknownType { .. }
            | TypesError::MalformedKey { .. }
            | TypesError::MalformedKeyValue { .. } => ErrorKind::Corrupt,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_and_retry_as_hbase_clients_expect() {
        assert_eq!(
            ErrorKind::NotServingRegion.exception_class(),
            "org.apache.hadoop.hbase.NotServingRegionException"
        );
        assert_eq!(ErrorKind::NotServingRegion.retry(), Retry::Relocate);
        assert_eq!(ErrorKind::RegionTooBusy.retry(), Retry::Backoff);
        assert!(ErrorKind::TableNotFound.do_not_retry());
        assert!(!ErrorKind::Io.do_not_retry());
        let e = Error::invalid("bad");
        assert_eq!(e.to_string(), "bad");
        assert_eq!(e.kind(), ErrorKind::InvalidRequest);
    }
}
