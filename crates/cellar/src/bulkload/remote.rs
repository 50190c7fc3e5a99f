//! A bulk load through a server: the files are checked, grouped and cut here, then each
//! region's server loads its group by path (ClientService BulkLoadHFile), so the paths
//! must be readable by the server (the same machine, or a shared file system). A region
//! that answers "not loaded" has split since; its files are grouped again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cellar_api::{RegionInfo, TableDescriptor};
use cellar_io::{Clock, FileSystem, LocalFs, SystemClock};

use super::{BulkLoadReport, LoadTarget};
use crate::client::RemoteConnection;
use crate::error::Result;

/// A table's regions through a server, for one bulk load: [`RemoteTarget::prepare`]
/// asks the server for a load token, [`RemoteTarget::cleanup`] gives it back.
pub struct RemoteTarget<'a> {
    conn: &'a RemoteConnection,
    table: String,
    token: String,
}

impl<'a> RemoteTarget<'a> {
    /// Prepares a load into `table` (ClientService PrepareBulkLoad).
    pub fn prepare(conn: &'a RemoteConnection, table: &str) -> Result<RemoteTarget<'a>> {
        let token = conn.block_on(conn.inner().prepare_bulk_load(table))?;
        Ok(RemoteTarget {
            conn,
            table: table.to_string(),
            token,
        })
    }

    /// Ends the load (CleanupBulkLoad); failures are logged, the load is done.
    pub fn cleanup(self) {
        let c = self.conn.inner();
        if let Err(e) = self
            .conn
            .block_on(c.cleanup_bulk_load(&self.table, &self.token))
        {
            tracing::warn!(table = %self.table, error = %e, "bulk load cleanup failed");
        }
    }
}

impl LoadTarget for RemoteTarget<'_> {
    fn fs(&self) -> Arc<dyn FileSystem> {
        Arc::new(LocalFs::new())
    }
    fn now(&self) -> i64 {
        SystemClock.now_millis()
    }
    fn describe(&self, table: &str) -> Result<TableDescriptor> {
        let c = self.conn.inner();
        Ok(self.conn.block_on(c.admin().describe(table))?.0)
    }
    fn regions(&self, table: &str) -> Result<Vec<RegionInfo>> {
        let c = self.conn.inner();
        c.invalidate(table, None);
        Ok(self
            .conn
            .block_on(c.regions(table))?
            .into_iter()
            .map(|l| l.info)
            .collect())
    }
    fn load(
        &self,
        table: &str,
        region: &RegionInfo,
        files: &[(Vec<u8>, PathBuf)],
    ) -> Result<Option<u64>> {
        let c = self.conn.inner();
        let loc = self
            .conn
            .block_on(c.regions(table))?
            .into_iter()
            .find(|l| l.info.encoded == region.encoded);
        let Some(loc) = loc else {
            return Ok(None);
        };
        let mut paths = Vec::with_capacity(files.len());
        let mut cells = 0;
        for (f, p) in files {
            let abs = std::fs::canonicalize(p)
                .map_err(|e| cellar_api::Error::invalid(format!("{}: {e}", p.display())))?;
            cells += cellar_hfile::HFileReader::open(&LocalFs::new(), &abs, None)
                .map(|r| r.entry_count())
                .unwrap_or(0);
            paths.push((f.clone(), abs.display().to_string()));
        }
        let loaded = self
            .conn
            .block_on(c.bulk_load_region(&loc, &paths, &self.token))?;
        Ok(loaded.then_some(cells))
    }
}

/// Loads the HFiles of `dir` (`DIR/<family>/<file>`) into `table` through the server
/// `conn` is connected to.
pub fn load_dir(conn: &RemoteConnection, table: &str, dir: &Path) -> Result<BulkLoadReport> {
    let target = RemoteTarget::prepare(conn, table)?;
    let result = super::load_dir(&target, table, dir);
    target.cleanup();
    result
}
