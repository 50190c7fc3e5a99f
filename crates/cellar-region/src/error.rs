//! The region engine's error type. Variants named after HBase's exceptions carry the
//! same meaning (RowTooBig, RegionTooBusy, DoNotRetry for bad input).

use thiserror::Error;

pub type Result<T, E = RegionError> = std::result::Result<T, E>;

#[derive(Debug, Error)]
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
    #[error("RowTooBigException: Max row size allowed: {limit}, but the row is bigger than that, the row info: {row}, column family: {family}")]
    RowTooBig {
        limit: u64,
        row: String,
        family: String,
    },
    #[error("RegionTooBusyException: Over memstore limit={limit}, regionName={region}")]
    RegionTooBusy { region: String, limit: u64 },
    #[error("Cell[{cell}] with size {size} exceeds limit of {limit} bytes")]
    CellTooLarge { cell: String, size: u64, limit: u64 },
    #[error("Column family {family} does not exist in region {region}")]
    NoSuchColumnFamily { family: String, region: String },
    #[error("WrongRegionException: Requested row out of range for region {region}: {row}")]
    WrongRegion { row: String, region: String },
    #[error("Timed out waiting for lock for row: {row} in region {region}")]
    RowLockTimeout { row: String, region: String },
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
}

impl RegionError {
    /// An error of the store file at `path`, naming it.
    pub fn in_file(path: &std::path::Path, source: cellar_hfile::HFileError) -> RegionError {
        RegionError::StoreFile {
            path: path.display().to_string(),
            source,
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
