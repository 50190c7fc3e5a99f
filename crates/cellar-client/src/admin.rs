//! Administration over MasterService (tables, namespaces, split, merge) and
//! AdminService (flush and compact, region by region).

use cellar_api::{Error, ErrorKind, FailedRegion, RegionStats, Result, TableDescriptor};
use cellar_protocol::convert::{
    kind_of_class, namespace_to_pb, region_info_to_pb, server_name_from_pb, table_from_pb,
    table_name_to_pb, table_to_pb,
};
use cellar_protocol::pb;

use crate::connection::{normalize, Connection};

/// Cluster administration.
#[derive(Clone)]
pub struct Admin {
    conn: Connection,
}

/// How long a DDL call waits for its procedure (HBase's
/// `hbase.client.sync.wait.timeout.msec` is ten minutes).
const PROCEDURE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

fn tname(name: &str) -> pb::TableNameRequest {
    pb::TableNameRequest {
        table_name: table_name_to_pb(&normalize(name)),
        nonce_group: None,
        nonce: None,
    }
}

impl Admin {
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    pub(crate) fn new(conn: Connection) -> Admin {
        Admin { conn }
    }

    /// Waits for a master procedure to finish, as HBase's Admin does for its DDL
    /// futures (`getProcedureResult` until FINISHED); its failure is the call's.
    pub(crate) async fn wait_procedure(&self, proc: pb::ProcedureResponse) -> Result<()> {
        let Some(proc_id) = proc.proc_id else {
            return Ok(());
        };
        let req = pb::GetProcedureResultRequest { proc_id };
        let started = tokio::time::Instant::now();
        let mut pause = std::time::Duration::from_millis(10);
        loop {
            let r: pb::GetProcedureResultResponse =
                self.conn.master("getProcedureResult", &req).await?;
            use pb::get_procedure_result_response::State;
            match State::try_from(r.state) {
                Ok(State::Finished) => {
                    return match r.exception.and_then(|x| x.generic_exception) {
                        None => Ok(()),
                        Some(g) => {
                            let class = g.class_name.unwrap_or_default();
                            let msg = g.message.unwrap_or_else(|| class.clone());
                            Err(Error::new(kind_of_class(&class), msg))
                        }
                    };
                }
                // A procedure the master no longer knows has finished long ago.
                Ok(State::NotFound) => return Ok(()),
                _ => {}
            }
            if started.elapsed() > PROCEDURE_TIMEOUT {
                return Err(Error::new(
                    ErrorKind::Io,
                    format!("procedure {proc_id} did not finish within {PROCEDURE_TIMEOUT:?}"),
                ));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(std::time::Duration::from_millis(200));
        }
    }

    pub async fn create_table(
        &self,
        desc: TableDescriptor,
        split_keys: Vec<Vec<u8>>,
    ) -> Result<()> {
        let req = pb::CreateTableRequest {
            table_schema: table_to_pb(&desc),
            split_keys: split_keys.into_iter().map(Into::into).collect(),
            nonce_group: None,
            nonce: None,
        };
        let proc: pb::ProcedureResponse = self
            .conn
            .master_for(&desc.name, "CreateTable", &req)
            .await?;
        self.wait_procedure(proc).await?;
        Ok(())
    }

    pub async fn modify_table(&self, desc: TableDescriptor) -> Result<()> {
        let req = pb::ModifyTableRequest {
            table_name: table_name_to_pb(&normalize(&desc.name)),
            table_schema: table_to_pb(&desc),
            nonce_group: None,
            nonce: None,
            reopen_regions: Some(true),
        };
        let proc: pb::ProcedureResponse = self
            .conn
            .master_for(&desc.name, "ModifyTable", &req)
            .await?;
        self.wait_procedure(proc).await?;
        self.conn.invalidate(&normalize(&desc.name), None);
        Ok(())
    }

    pub async fn disable_table(&self, name: &str) -> Result<()> {
        let proc: pb::ProcedureResponse = self
            .conn
            .master_for(name, "DisableTable", &tname(name))
            .await?;
        self.wait_procedure(proc).await?;
        self.conn.invalidate(&normalize(name), None);
        Ok(())
    }

    pub async fn enable_table(&self, name: &str) -> Result<()> {
        let proc: pb::ProcedureResponse = self
            .conn
            .master_for(name, "EnableTable", &tname(name))
            .await?;
        self.wait_procedure(proc).await?;
        self.conn.invalidate(&normalize(name), None);
        Ok(())
    }

    pub async fn is_table_enabled(&self, name: &str) -> Result<bool> {
        let req = pb::GetTableStateRequest {
            table_name: table_name_to_pb(&normalize(name)),
        };
        let r: pb::GetTableStateResponse =
            self.conn.master_for(name, "GetTableState", &req).await?;
        Ok(r.table_state.state == pb::table_state::State::Enabled as i32)
    }

    pub async fn delete_table(&self, name: &str) -> Result<()> {
        let proc: pb::ProcedureResponse = self
            .conn
            .master_for(name, "DeleteTable", &tname(name))
            .await?;
        self.wait_procedure(proc).await?;
        self.conn.invalidate(&normalize(name), None);
        Ok(())
    }

    /// Empties a disabled table (`preserve_splits` keeps its region boundaries).
    pub async fn truncate_table(&self, name: &str, preserve_splits: bool) -> Result<()> {
        let req = pb::TruncateTableRequest {
            table_name: table_name_to_pb(&normalize(name)),
            preserve_splits: Some(preserve_splits),
            nonce_group: None,
            nonce: None,
        };
        let proc: pb::ProcedureResponse = self.conn.master_for(name, "TruncateTable", &req).await?;
        self.wait_procedure(proc).await?;
        self.conn.invalidate(&normalize(name), None);
        Ok(())
    }

    pub async fn describe(&self, name: &str) -> Result<(TableDescriptor, bool)> {
        let req = pb::GetTableDescriptorsRequest {
            table_names: vec![table_name_to_pb(&normalize(name))],
            ..Default::default()
        };
        let r: pb::GetTableDescriptorsResponse = self
            .conn
            .master_for(name, "GetTableDescriptors", &req)
            .await?;
        let schema = r.table_schema.first().ok_or_else(|| {
            Error::new(ErrorKind::TableNotFound, name.to_string()).with_table(name)
        })?;
        let desc = table_from_pb(schema)?;
        Ok((desc, self.is_table_enabled(name).await?))
    }

    pub async fn list_tables(&self) -> Result<Vec<String>> {
        let r: pb::GetTableNamesResponse = self
            .conn
            .master("GetTableNames", &pb::GetTableNamesRequest::default())
            .await?;
        r.table_names
            .iter()
            .map(|t| Ok(cellar_protocol::convert::table_name_from_pb(t)?.to_string()))
            .collect()
    }

    /// Whether the table exists — system tables too, as HBase's `tableExists` (which
    /// reads the catalog) sees them.
    pub async fn table_exists(&self, name: &str) -> Result<bool> {
        let n = normalize(name);
        let req = pb::GetTableNamesRequest {
            include_sys_tables: Some(true),
            ..Default::default()
        };
        let r: pb::GetTableNamesResponse = self.conn.master("GetTableNames", &req).await?;
        for t in &r.table_names {
            if cellar_protocol::convert::table_name_from_pb(t)?.to_string() == n {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Flushes a table: the master's FlushTable procedure (HBase 2.6, Cellar), or on
    /// servers without it each region in turn.
    pub async fn flush(&self, name: &str) -> Result<()> {
        let req = pb::FlushTableRequest {
            table_name: table_name_to_pb(&normalize(name)),
            ..Default::default()
        };
        match self
            .conn
            .master_for::<_, pb::FlushTableResponse>(name, "FlushTable", &req)
            .await
        {
            Ok(resp) => {
                return self
                    .wait_procedure(pb::ProcedureResponse {
                        proc_id: resp.proc_id,
                    })
                    .await;
            }
            // An older server: no such method.
            Err(e)
                if e.kind() == ErrorKind::Unsupported && e.message().contains("Unknown method") => {
            }
            Err(e) => return Err(e),
        }
        for loc in self.conn.regions(name).await? {
            let req = pb::FlushRegionRequest {
                region: loc.specifier(),
                ..Default::default()
            };
            let _: pb::FlushRegionResponse = self
                .conn
                .admin_call(&loc.server, "FlushRegion", &req)
                .await?;
        }
        Ok(())
    }

    pub async fn compact(&self, name: &str, major: bool) -> Result<()> {
        for loc in self.conn.regions(name).await? {
            let req = pb::CompactRegionRequest {
                region: loc.specifier(),
                major: Some(major),
                family: None,
            };
            let _: pb::Empty = self
                .conn
                .admin_call(&loc.server, "CompactRegion", &req)
                .await?;
        }
        Ok(())
    }

    /// Whether a compaction is running in any region of the table (HBase's
    /// `Admin.getCompactionState` from each region's GetRegionInfo; HBase compacts in
    /// the background after CompactRegion answers).
    pub async fn compaction_running(&self, name: &str) -> Result<bool> {
        for loc in self.conn.regions(name).await? {
            let req = pb::GetRegionInfoRequest {
                region: loc.specifier(),
                compaction_state: Some(true),
                ..Default::default()
            };
            let resp: pb::GetRegionInfoResponse = self
                .conn
                .admin_call(&loc.server, "GetRegionInfo", &req)
                .await?;
            if resp.compaction_state.unwrap_or(0) != 0 {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Splits the region holding `row` there, or every region at its own split point;
    /// returns how many regions were asked to split.
    pub async fn split(&self, name: &str, row: Option<&[u8]>) -> Result<usize> {
        let regions = self.conn.regions(name).await?;
        let targets: Vec<_> = match row {
            Some(r) => regions.into_iter().filter(|l| l.info.contains(r)).collect(),
            None => regions,
        };
        let mut n = 0;
        for loc in &targets {
            let req = pb::SplitTableRegionRequest {
                region_info: region_info_to_pb(&loc.info),
                split_row: row.map(|r| r.to_vec().into()),
                nonce_group: None,
                nonce: None,
            };
            match self
                .conn
                .master::<_, pb::ProcedureResponse>("SplitRegion", &req)
                .await
            {
                Ok(proc) => {
                    self.wait_procedure(proc).await?;
                    n += 1
                }
                Err(e) if row.is_none() && e.kind() == ErrorKind::InvalidRequest => {}
                Err(e) => return Err(e),
            }
        }
        self.conn.invalidate(&normalize(name), None);
        Ok(n)
    }

    /// Runs the master's catalog janitor now (HBase's `runCatalogJanitor`): split and
    /// merge parents nothing references any more are deleted. How many it deleted.
    pub async fn run_catalog_janitor(&self) -> Result<i32> {
        let r: pb::RunCatalogScanResponse = self
            .conn
            .master("RunCatalogScan", &pb::RunCatalogScanRequest {})
            .await?;
        Ok(r.scan_result.unwrap_or(0))
    }

    /// Merges two adjacent regions named by encoded or full region name.
    pub async fn merge_regions(&self, a: &str, b: &str) -> Result<()> {
        let spec = |n: &str| {
            let t = if n.contains(',') {
                pb::region_specifier::RegionSpecifierType::RegionName
            } else {
                pb::region_specifier::RegionSpecifierType::EncodedRegionName
            };
            pb::RegionSpecifier {
                r#type: t as i32,
                value: n.as_bytes().to_vec().into(),
            }
        };
        let req = pb::MergeTableRegionsRequest {
            region: vec![spec(a), spec(b)],
            forcible: Some(false),
            nonce_group: None,
            nonce: None,
        };
        let proc: pb::ProcedureResponse = self.conn.master("MergeTableRegions", &req).await?;
        self.wait_procedure(proc).await?;
        Ok(())
    }

    /// The regions of a table with their sizes and request counts (from the cluster
    /// status the master reports).
    pub async fn list_regions(&self, name: &str) -> Result<Vec<RegionStats>> {
        let regions = self.conn.regions(name).await?;
        let status: pb::GetClusterStatusResponse = self
            .conn
            .master("GetClusterStatus", &pb::GetClusterStatusRequest::default())
            .await?;
        let loads: Vec<(&pb::ServerName, &pb::RegionLoad)> = status
            .cluster_status
            .live_servers
            .iter()
            .flat_map(|s| {
                s.server_load
                    .region_loads
                    .iter()
                    .map(move |l| (&s.server, l))
            })
            .collect();
        Ok(regions
            .into_iter()
            .map(|l| {
                let (server, load) = match loads
                    .iter()
                    .find(|(_, r)| r.region_specifier.value[..] == l.name[..])
                {
                    Some((s, r)) => (Some(server_name_from_pb(s)), Some(*r)),
                    None => (None, None),
                };
                let mb = |v: Option<u32>| v.unwrap_or(0) as u64 * 1024 * 1024;
                RegionStats {
                    info: l.info.clone(),
                    server,
                    store_files: load.and_then(|r| r.storefiles).unwrap_or(0) as usize,
                    store_files_size: mb(load.and_then(|r| r.storefile_size_mb)),
                    memstore_size: mb(load.and_then(|r| r.mem_store_size_mb)),
                    read_requests: load.and_then(|r| r.read_requests_count).unwrap_or(0),
                    write_requests: load.and_then(|r| r.write_requests_count).unwrap_or(0),
                    largest_store_size: mb(load.and_then(|r| r.storefile_size_mb)),
                    split_threshold: 0,
                    split_point: None,
                    alarm: None,
                }
            })
            .collect())
    }

    /// Regions that failed to open (not reported over HBase's protocol: empty).
    pub async fn failed_regions(&self) -> Result<Vec<FailedRegion>> {
        Ok(Vec::new())
    }

    pub async fn create_namespace(&self, ns: &str) -> Result<()> {
        let req = pb::NamespaceRequest {
            namespace_descriptor: namespace_to_pb(ns),
            nonce_group: None,
            nonce: None,
        };
        let proc: pb::ProcedureResponse = self.conn.master("CreateNamespace", &req).await?;
        self.wait_procedure(proc).await?;
        Ok(())
    }

    pub async fn delete_namespace(&self, ns: &str) -> Result<()> {
        let req = pb::NamespaceNameRequest {
            namespace_name: ns.to_string(),
            nonce_group: None,
            nonce: None,
        };
        let proc: pb::ProcedureResponse = self.conn.master("DeleteNamespace", &req).await?;
        self.wait_procedure(proc).await?;
        Ok(())
    }

    pub async fn list_namespaces(&self) -> Result<Vec<String>> {
        let r: pb::ListNamespacesResponse =
            self.conn.master("ListNamespaces", &pb::Empty {}).await?;
        Ok(r.namespace_name)
    }

    pub async fn list_namespace_tables(&self, ns: &str) -> Result<Vec<String>> {
        let req = pb::NamespaceNameRequest {
            namespace_name: ns.to_string(),
            nonce_group: None,
            nonce: None,
        };
        let r: pb::ListTableNamesByNamespaceResponse =
            self.conn.master("ListTableNamesByNamespace", &req).await?;
        r.table_name
            .iter()
            .map(|t| Ok(cellar_protocol::convert::table_name_from_pb(t)?.to_string()))
            .collect()
    }
}
