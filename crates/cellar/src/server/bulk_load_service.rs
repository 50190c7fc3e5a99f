//! ClientService's bulk load calls, as HBase's clients drive them
//! (`BulkLoadHFilesTool`): PrepareBulkLoad hands out a token, BulkLoadHFile has one
//! region take HFiles named by path on this server's file system (`file:` URIs or plain
//! paths), CleanupBulkLoad ends the load. A file reaching outside the region (the
//! region split since the client grouped its files) answers `loaded = false`, as
//! HBase's region does, so the client regroups and tries again; any other failure
//! loads nothing and is an error.

use std::path::PathBuf;

use cellar_api::{Error, ErrorKind};
use cellar_protocol::pb;
use cellar_region::RegionError;

use super::client_service::region;
use super::dispatch::{unknown_method, Call, CallResult, Reply};

pub fn call(call: &Call<'_>, method: &str) -> CallResult {
    match method {
        "BulkLoadHFile" => bulk_load(call),
        "PrepareBulkLoad" => prepare(call),
        "CleanupBulkLoad" => {
            let _req: pb::CleanupBulkLoadRequest = call.param("CleanupBulkLoadRequest")?;
            Ok(Reply::new(pb::CleanupBulkLoadResponse {}))
        }
        _ => Err(unknown_method("ClientService", method)),
    }
}

fn prepare(call: &Call<'_>) -> CallResult {
    let req: pb::PrepareBulkLoadRequest = call.param("PrepareBulkLoadRequest")?;
    let table = cellar_protocol::convert::table_name_from_pb(&req.table_name)?.to_string();
    // The table must exist; the token only names the load in the server's log.
    call.master().describe(&table)?;
    let token = format!("cellar-bulkload-{:016x}", cellar_io::random_id());
    tracing::info!(table = %table, token = %token, "bulk load prepared");
    Ok(Reply::new(pb::PrepareBulkLoadResponse {
        bulk_token: token,
    }))
}

/// A path as HBase's clients send it: `file:/x`, `file:///x` or `/x`.
fn local_path(s: &str) -> Result<PathBuf, Error> {
    let p = match s.strip_prefix("file:") {
        Some(rest) => rest.strip_prefix("//").unwrap_or(rest),
        None if s.contains("://") => {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!("bulk load from {s}: only files on this server's file system load"),
            ))
        }
        None => s,
    };
    if p.is_empty() {
        return Err(Error::invalid("bulk load: an empty path"));
    }
    Ok(PathBuf::from(p))
}

fn bulk_load(call: &Call<'_>) -> CallResult {
    let req: pb::BulkLoadHFileRequest = call.param("BulkLoadHFileRequest")?;
    let region = region(call, &req.region)?;
    let mut files = Vec::with_capacity(req.family_path.len());
    for fp in &req.family_path {
        files.push((fp.family.to_vec(), local_path(&fp.path)?));
    }
    let loaded = match region.bulk_load(&files) {
        Ok(_) => true,
        Err(RegionError::BulkLoadOutsideRegion { path, region }) => {
            tracing::warn!(
                file = %path,
                region = %region,
                "bulk load: a file does not fit the region (split since?); nothing loaded"
            );
            false
        }
        Err(e) => return Err(Error::from(e).into()),
    };
    Ok(Reply::new(pb::BulkLoadHFileResponse { loaded }))
}

#[cfg(test)]
mod tests {
    use super::local_path;

    #[test]
    fn paths_as_hbase_clients_send_them() {
        assert_eq!(local_path("file:/tmp/x").unwrap().to_str(), Some("/tmp/x"));
        assert_eq!(
            local_path("file:///tmp/x").unwrap().to_str(),
            Some("/tmp/x")
        );
        assert_eq!(local_path("/tmp/x").unwrap().to_str(), Some("/tmp/x"));
        assert!(local_path("hdfs://nn/x").is_err());
        assert!(local_path("").is_err());
    }
}
