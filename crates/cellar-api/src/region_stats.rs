//! What a client learns about regions: their statistics (as `list_regions` and
//! `status 'detailed'` report them) and the regions that failed to open.

use crate::region_info::RegionInfo;
use crate::server_name::ServerName;

/// What `list_regions` reports of a region.
#[derive(Debug, Clone)]
pub struct RegionStats {
    pub info: RegionInfo,
    /// The server hosting it (`host,port,startcode`), when it is online.
    pub server: Option<ServerName>,
    pub store_files: usize,
    pub store_files_size: u64,
    pub memstore_size: u64,
    pub read_requests: u64,
    pub write_requests: u64,
    /// Bytes of the largest store's files, and the size the split policy splits at.
    pub largest_store_size: u64,
    pub split_threshold: u64,
    /// Where the region would split (after the policy's truncation).
    pub split_point: Option<Vec<u8>>,
    /// The wide-row alarm: why a region over its split threshold has not split.
    pub alarm: Option<String>,
}

/// A region that could not open, and why (the file and the reason).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedRegion {
    pub table: String,
    /// HBase's region name: `table,startkey,id.encoded.`
    pub region: String,
    pub reason: String,
}
