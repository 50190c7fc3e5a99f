//! The region engine's error type. Variants named after HBase's exceptions carry the
//! same meaning (RowTooBig, RegionTooBusy, DoNotRetry for bad input); rows, families and
//! qualifiers are held as bytes and escaped (HBase's `toStringBinary`) only when the
//! error is printed. [`RegionError::kind`] maps every variant onto the client's
//! [`ErrorKind`].

use cellar_api::ErrorKind;
use cellar_types::to_string_binary;
use thiserror::Error;

pub type Result<T, E = RegionError> = std::result::Result<T, E>;

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RegionError {
    #[error(transparent)]
    Io(#[from] cellar_io::IoError),
    #[error(transparent)]
    HFile(#[from] cellar_hfile::HFileError),
    #[error(transparent)]
    Wal(#[from] cellar_wal::WalError),
    #[error(transparent)]
    Types(#[from] cellar_types::TypesError),
    #[error(transparent)]
    Api(#[from] cellar_api::Error),
    #[error(transparent)]
    Filter(#[from] cellar_filter::BuildError),
    #[error("RowTooBigException: Max row size allowed: {limit}, but the row is bigger than that, the row info: {}, column family: {}", to_string_binary(.row), to_string_binary(.family))]
    RowTooBig {
        limit: u64,
        row: Vec<u8>,
        family: Vec<u8>,
    },
    #[error("RegionTooBusyException: Over memstore limit={limit}, regionName={region}")]
    RegionTooBusy { region: String, limit: u64 },
    #[error("Cell[{}/{}:{}] with size {size} exceeds limit of {limit} bytes", to_string_binary(.row), to_string_binary(.family), to_string_binary(.qualifier))]
    CellTooLarge {
        row: Vec<u8>,
        family: Vec<u8>,
        qualifier: Vec<u8>,
        size: u64,
        limit: u64,
    },
    #[error("Column family {} does not exist in region {region}", to_string_binary(.family))]
    NoSuchColumnFamily { family: Vec<u8>, region: String },
    #[error("WrongRegionException: Requested row out of range for region {region}: {}", to_string_binary(.row))]
    WrongRegion { row: Vec<u8>, region: String },
    /// A later row of a multi-row mutation lies outside the region.
    #[error("Requested row out of range '{}'", to_string_binary(.row))]
    RowOutOfRange { row: Vec<u8> },
    /// A mutation of another row inside a one-row request.
    #[error("The row in {} doesn't match the original one {}", to_string_binary(.row), to_string_binary(.expected))]
    RowMismatch { row: Vec<u8>, expected: Vec<u8> },
    #[error("Timed out waiting for lock for row: {} in region {region}", to_string_binary(.row))]
    RowLockTimeout { row: Vec<u8>, region: String },
    #[error("Field is not a long, it's {len} bytes wide")]
    NotALong { len: usize },
    #[error("{0}")]
    InvalidMutation(String),
    #[error("{0}")]
    InvalidRead(String),
    #[error("region {0} is closed")]
    Closed(String),
    #[error("corrupt store {path}: {reason}")]
    CorruptStore { path: String, reason: String },
    #[error("store file {path}: {source}")]
    StoreFile {
        path: String,
        #[source]
        source: cellar_hfile::HFileError,
    },
    #[error("configuration: {0}")]
    Config(String),
    /// A file offered for bulk load that cannot be loaded (not a valid HFile, cells out
    /// of order, a cell of another family).
    #[error("bulk load file {path}: {reason}")]
    BadBulkLoadFile { path: String, reason: String },
    /// A file offered for bulk load holds rows outside the region.
    #[error("WrongRegionException: Bulk load file {path} does not fit inside region {region}")]
    BulkLoadOutsideRegion { path: String, region: String },
}

impl RegionError {
    /// An error of the store file at `path`, naming it.
    pub fn in_file(path: &std::path::Path, source: cellar_hfile::HFileError) -> RegionError {
        RegionError::StoreFile {
            path: path.display().to_string(),
            source,
        }
    }

    /// What kind of failure this is for a client.
    pub fn kind(&self) -> ErrorKind {
        match self {
            RegionError::Io(e) => e.kind(),
            RegionError::HFile(e) => e.kind(),
            RegionError::Wal(e) => e.kind(),
            RegionError::Types(e) => e.into(),
            RegionError::Api(e) => e.kind(),
            RegionError::Filter(e) => e.kind(),
            RegionError::RowTooBig { .. } => ErrorKind::RowTooBig,
            RegionError::RegionTooBusy { .. } => ErrorKind::RegionTooBusy,
            RegionError::CellTooLarge { .. } => ErrorKind::InvalidRequest,
            RegionError::NoSuchColumnFamily { .. } => ErrorKind::NoSuchColumnFamily,
            RegionError::WrongRegion { .. } => ErrorKind::WrongRegion,
            RegionError::RowOutOfRange { .. } => ErrorKind::InvalidRequest,
            RegionError::RowMismatch { .. } => ErrorKind::InvalidRequest,
            RegionError::RowLockTimeout { .. } => ErrorKind::LockTimeout,
            RegionError::NotALong { .. } => ErrorKind::InvalidRequest,
            RegionError::InvalidMutation(_) => ErrorKind::InvalidRequest,
            RegionError::InvalidRead(_) => ErrorKind::InvalidRequest,
            RegionError::BadBulkLoadFile { .. } => ErrorKind::InvalidRequest,
            RegionError::BulkLoadOutsideRegion { .. } => ErrorKind::WrongRegion,
            RegionError::Closed(_) => ErrorKind::NotServingRegion,
            RegionError::CorruptStore { .. } => ErrorKind::Corrupt,
            RegionError::StoreFile { source, .. } => source.kind(),
            RegionError::Config(_) => ErrorKind::InvalidRequest,
        }
    }

    /// Whether retrying the same request later may succeed (HBase's retryable exceptions).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            RegionError::RegionTooBusy { .. } | RegionError::RowLockTimeout { .. }
        )
    }
}

impl From<RegionError> for cellar_api::Error {
    fn from(e: RegionError) -> cellar_api::Error {
        cellar_api::Error::new(e.kind(), e.to_string())
    }
}
