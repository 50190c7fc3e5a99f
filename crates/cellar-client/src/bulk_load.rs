//! Bulk load calls (ClientService's PrepareBulkLoad, BulkLoadHFile and CleanupBulkLoad,
//! as HBase's `BulkLoadHFilesTool` makes them): the server named by a region's location
//! loads HFiles by path from its own file system. Planning a load — checking files,
//! grouping them by region, cutting files that span regions — is the caller's (the
//! `cellar bulkload` tool does it).

use cellar_api::Result;
use cellar_protocol::convert::table_name_to_pb;
use cellar_protocol::{pb, service};

use crate::connection::{named, normalize, Connection, RegionLocation};

impl Connection {
    /// Starts a load into `table`; the token names it in the servers' logs.
    pub async fn prepare_bulk_load(&self, table: &str) -> Result<String> {
        let loc = self.locate(table, b"", false).await?;
        let req = pb::PrepareBulkLoadRequest {
            table_name: table_name_to_pb(&normalize(table)),
            region: Some(loc.specifier()),
        };
        let resp: pb::PrepareBulkLoadResponse = self
            .call_raw(&loc.server, service::CLIENT, "PrepareBulkLoad", &req)
            .await
            .map_err(|e| named(e, table))?
            .0;
        Ok(resp.bulk_token)
    }

    /// Has `region` load `(family, path)` files (paths on its server's file system) in
    /// one atomic step. `Ok(false)`: a file lies outside the region (it split since the
    /// files were grouped), nothing was loaded; look the regions up again.
    pub async fn bulk_load_region(
        &self,
        region: &RegionLocation,
        files: &[(Vec<u8>, String)],
        token: &str,
    ) -> Result<bool> {
        let req = pb::BulkLoadHFileRequest {
            region: region.specifier(),
            family_path: files
                .iter()
                .map(|(f, p)| pb::bulk_load_h_file_request::FamilyPath {
                    family: f.clone().into(),
                    path: p.clone(),
                })
                .collect(),
            assign_seq_num: Some(true),
            bulk_token: Some(token.to_string()),
            ..Default::default()
        };
        let resp: pb::BulkLoadHFileResponse = self
            .call_raw(&region.server, service::CLIENT, "BulkLoadHFile", &req)
            .await?
            .0;
        Ok(resp.loaded)
    }

    /// Ends a load.
    pub async fn cleanup_bulk_load(&self, table: &str, token: &str) -> Result<()> {
        let loc = self.locate(table, b"", false).await?;
        let req = pb::CleanupBulkLoadRequest {
            bulk_token: token.to_string(),
            region: Some(loc.specifier()),
        };
        let _: (pb::CleanupBulkLoadResponse, _) = self
            .call_raw(&loc.server, service::CLIENT, "CleanupBulkLoad", &req)
            .await?;
        Ok(())
    }
}
