//! The client traits over the network: [`RemoteConnection`] wraps `cellar-client` (HBase's
//! RPC protocol) in the blocking [`Connection`] / [`Table`] / [`Admin`] interface, so the
//! shell and other synchronous callers run unchanged against a `cellar server` or an
//! HBase cluster. It owns a small tokio runtime and blocks on it.

use std::sync::Arc;

use cellar_api::{
    Append, CheckAndMutate, CheckAndMutateResult, Delete, Error, ErrorKind, FailedRegion, Get,
    Increment, Mutation, Put, RegionStats, Result, RowMutations, RowResult, Scan, TableDescriptor,
};
use tokio::runtime::Runtime;

use super::{Admin, Connection, ResultScanner, Table};

/// The client's own runtime: one worker for its connections' I/O; callers block on it.
fn runtime() -> Result<Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("cellar-client")
        .enable_all()
        .build()
        .map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot start the client runtime: {e}"),
            )
        })
}

/// A connection to a server over HBase's RPC protocol.
#[derive(Clone)]
pub struct RemoteConnection {
    rt: Arc<Runtime>,
    conn: cellar_client::Connection,
}

impl RemoteConnection {
    /// Connects through the server at `addr` (`host:port`).
    pub fn connect(addr: &str) -> Result<RemoteConnection> {
        RemoteConnection::connect_with(addr, cellar_client::ClientConfig::default())
    }

    pub fn connect_with(addr: &str, cfg: cellar_client::ClientConfig) -> Result<RemoteConnection> {
        let rt = runtime()?;
        let conn = rt.block_on(cellar_client::Connection::connect_with(addr, cfg))?;
        Ok(RemoteConnection {
            rt: Arc::new(rt),
            conn,
        })
    }

    /// Finds the cluster through ZooKeeper (`hbase.zookeeper.quorum`).
    pub fn connect_zookeeper(quorum: &str, parent: &str) -> Result<RemoteConnection> {
        RemoteConnection::connect_zookeeper_with(
            quorum,
            parent,
            cellar_client::ClientConfig::default(),
        )
    }

    pub fn connect_zookeeper_with(
        quorum: &str,
        parent: &str,
        cfg: cellar_client::ClientConfig,
    ) -> Result<RemoteConnection> {
        let rt = runtime()?;
        let conn = rt.block_on(cellar_client::Connection::connect_zookeeper(
            quorum, parent, cfg,
        ))?;
        Ok(RemoteConnection {
            rt: Arc::new(rt),
            conn,
        })
    }

    pub fn inner(&self) -> &cellar_client::Connection {
        &self.conn
    }

    /// Runs `f` on the connection's runtime, blocking until it is done.
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }
}

impl Connection for RemoteConnection {
    fn table(&self, name: &str) -> Result<Box<dyn Table>> {
        Ok(Box::new(RemoteTable {
            rt: self.rt.clone(),
            table: self.conn.table(name),
        }))
    }

    fn admin(&self) -> Box<dyn Admin> {
        Box::new(RemoteAdmin {
            rt: self.rt.clone(),
            admin: self.conn.admin(),
        })
    }

    fn hot_rows(&self) -> Result<Vec<crate::hotspots::HotRow>> {
        let h = self.rt.block_on(self.conn.admin().hotspots(None))?;
        Ok(h.hot_rows
            .into_iter()
            .map(|r| crate::hotspots::HotRow {
                table: r.table_name,
                region: r.region_name,
                row: r.row.to_vec(),
                contention: cellar_region::row_lock::Contention {
                    waits: r.waits,
                    wait_ms: r.wait_ms,
                    timeouts: r.timeouts,
                    busy: r.busy,
                },
                advice: crate::hotspots::HOT_ROW_ADVICE,
            })
            .collect())
    }

    fn version_waste(&self) -> Result<Vec<crate::hotspots::VersionWaste>> {
        let h = self.rt.block_on(self.conn.admin().hotspots(None))?;
        Ok(h.versions
            .into_iter()
            .map(|w| {
                crate::hotspots::VersionWaste::new(
                    w.table_name,
                    w.family.to_vec(),
                    w.stored,
                    w.asked,
                    w.configured,
                )
            })
            .collect())
    }

    /// The servers' large and slow logs (AdminService GetLogEntries), read back into
    /// entries: a Cellar server's `param` names the table, row, shape and fix; another
    /// server's is kept whole as the shape.
    fn large_responses(&self) -> Result<Vec<cellar_region::large_log::LargeResponse>> {
        let admin = self.conn.admin();
        let mut records = self.rt.block_on(admin.log_entries(true, 256, None))?;
        for r in self.rt.block_on(admin.log_entries(false, 256, None))? {
            if !records.contains(&r) {
                records.push(r);
            }
        }
        let mut out: Vec<_> = records.into_iter().map(record_to_entry).collect();
        out.sort_by_key(|e| std::cmp::Reverse(e.at));
        Ok(out)
    }
}

struct RemoteTable {
    rt: Arc<Runtime>,
    table: cellar_client::Table,
}

impl Table for RemoteTable {
    fn name(&self) -> &str {
        self.table.name()
    }

    fn get(&self, get: &Get) -> Result<RowResult> {
        self.rt.block_on(self.table.get(get))
    }

    fn put(&self, put: Put) -> Result<()> {
        self.rt.block_on(self.table.put(put))
    }

    fn delete(&self, delete: Delete) -> Result<()> {
        self.rt.block_on(self.table.delete(delete))
    }

    fn increment(&self, inc: Increment) -> Result<RowResult> {
        self.rt.block_on(self.table.increment(inc))
    }

    fn append(&self, app: Append) -> Result<RowResult> {
        self.rt.block_on(self.table.append(app))
    }

    fn mutate_row(&self, rm: &RowMutations) -> Result<RowResult> {
        self.rt.block_on(self.table.mutate_row(rm))
    }

    fn check_and_mutate(&self, cam: &CheckAndMutate) -> Result<CheckAndMutateResult> {
        self.rt.block_on(self.table.check_and_mutate(cam))
    }

    fn mutate_rows(&self, mutations: &[Mutation]) -> Result<()> {
        self.rt.block_on(self.table.mutate_rows(mutations))
    }

    fn batch(&self, mutations: &[Mutation]) -> Vec<Result<RowResult>> {
        self.rt.block_on(self.table.batch(mutations))
    }

    fn scan(&self, scan: &Scan) -> Result<Box<dyn ResultScanner>> {
        Ok(Box::new(RemoteScanner {
            rt: self.rt.clone(),
            inner: Some(self.table.scan(scan)),
        }))
    }
}

struct RemoteScanner {
    rt: Arc<Runtime>,
    inner: Option<cellar_client::ResultScanner>,
}

impl Iterator for RemoteScanner {
    type Item = Result<RowResult>;

    fn next(&mut self) -> Option<Self::Item> {
        let s = self.inner.as_mut()?;
        let r = self.rt.block_on(s.next());
        if r.is_none() {
            self.inner = None;
        }
        r
    }
}

impl Drop for RemoteScanner {
    fn drop(&mut self) {
        if let Some(s) = self.inner.take() {
            self.rt.block_on(s.close());
        }
    }
}

struct RemoteAdmin {
    rt: Arc<Runtime>,
    admin: cellar_client::Admin,
}

impl Admin for RemoteAdmin {
    fn create_table(&self, desc: TableDescriptor, split_keys: Vec<Vec<u8>>) -> Result<()> {
        self.rt.block_on(self.admin.create_table(desc, split_keys))
    }

    fn modify_table(&self, desc: TableDescriptor) -> Result<()> {
        self.rt.block_on(self.admin.modify_table(desc))
    }

    fn disable_table(&self, name: &str) -> Result<()> {
        self.rt.block_on(self.admin.disable_table(name))
    }

    fn enable_table(&self, name: &str) -> Result<()> {
        self.rt.block_on(self.admin.enable_table(name))
    }

    fn is_table_enabled(&self, name: &str) -> Result<bool> {
        self.rt.block_on(self.admin.is_table_enabled(name))
    }

    fn delete_table(&self, name: &str) -> Result<()> {
        self.rt.block_on(self.admin.delete_table(name))
    }

    /// The shell's truncate: disable if needed, then empty the table keeping nothing of
    /// its splits (HBase shell's `truncate`).
    fn truncate_table(&self, name: &str) -> Result<()> {
        self.rt.block_on(async {
            if self.admin.is_table_enabled(name).await? {
                self.admin.disable_table(name).await?;
            }
            self.admin.truncate_table(name, false).await
        })
    }

    fn describe(&self, name: &str) -> Result<(TableDescriptor, bool)> {
        self.rt.block_on(self.admin.describe(name))
    }

    fn list_tables(&self) -> Result<Vec<String>> {
        self.rt.block_on(self.admin.list_tables())
    }

    fn table_exists(&self, name: &str) -> Result<bool> {
        self.rt.block_on(self.admin.table_exists(name))
    }

    fn flush(&self, name: &str) -> Result<()> {
        self.rt.block_on(self.admin.flush(name))
    }

    fn compact(&self, name: &str, major: bool) -> Result<()> {
        self.rt.block_on(self.admin.compact(name, major))
    }

    fn split(&self, name: &str, row: Option<&[u8]>) -> Result<usize> {
        self.rt.block_on(self.admin.split(name, row))
    }

    fn merge_regions(&self, a: &str, b: &str) -> Result<()> {
        self.rt.block_on(self.admin.merge_regions(a, b))
    }

    fn list_regions(&self, name: &str) -> Result<Vec<RegionStats>> {
        self.rt.block_on(self.admin.list_regions(name))
    }

    fn failed_regions(&self) -> Result<Vec<FailedRegion>> {
        self.rt.block_on(self.admin.failed_regions())
    }

    fn create_namespace(&self, ns: &str) -> Result<()> {
        self.rt.block_on(self.admin.create_namespace(ns))
    }

    fn delete_namespace(&self, ns: &str) -> Result<()> {
        self.rt.block_on(self.admin.delete_namespace(ns))
    }

    fn list_namespaces(&self) -> Result<Vec<String>> {
        self.rt.block_on(self.admin.list_namespaces())
    }

    fn list_namespace_tables(&self, ns: &str) -> Result<Vec<String>> {
        self.rt.block_on(self.admin.list_namespace_tables(ns))
    }

    fn snapshot(&self, table: &str, name: &str) -> Result<()> {
        self.rt.block_on(self.admin.snapshot(table, name))
    }

    fn list_snapshots(&self) -> Result<Vec<(String, String, i64)>> {
        let l = self.rt.block_on(self.admin.list_snapshots())?;
        Ok(l.into_iter()
            .map(|s| (s.name, s.table, s.creation_time))
            .collect())
    }

    fn delete_snapshot(&self, name: &str) -> Result<()> {
        self.rt.block_on(self.admin.delete_snapshot(name))
    }

    fn clone_snapshot(&self, name: &str, table: &str) -> Result<()> {
        self.rt.block_on(self.admin.clone_snapshot(name, table))
    }

    fn restore_snapshot(&self, name: &str) -> Result<()> {
        self.rt.block_on(self.admin.restore_snapshot(name))
    }
}

/// A logged call as a large-response entry.
fn record_to_entry(r: cellar_client::LogRecord) -> cellar_region::large_log::LargeResponse {
    let mut fields = std::collections::HashMap::new();
    for part in r.param.split("; ") {
        if let Some((k, v)) = part.split_once('=') {
            fields.insert(k.to_string(), v.to_string());
        }
    }
    let get = |k: &str| fields.get(k).cloned();
    cellar_region::large_log::LargeResponse {
        at: r.start_time + i64::from(r.processing_ms),
        table: get("table").unwrap_or_default(),
        region: r.region,
        row: get("row")
            .and_then(|t| cellar_types::from_string_binary(&t).ok())
            .unwrap_or_default(),
        op: match r.method.as_str() {
            "Get" => "Get",
            "Scan" => "Scan",
            "Multi" => "Multi",
            _ => "Call",
        },
        bytes: r.response_size.max(0) as u64,
        cells: get("cells").and_then(|c| c.parse().ok()).unwrap_or(0),
        millis: r.processing_ms.max(0) as u64,
        kind: get("kind").unwrap_or_else(|| match r.kind.as_str() {
            "LARGE_LOG" => "responseTooLarge".to_string(),
            "ALL" => "responseTooLarge, responseTooSlow".to_string(),
            _ => "responseTooSlow".to_string(),
        }),
        shape: get("shape").unwrap_or_else(|| r.param.clone()),
        advice: get("fix").unwrap_or_default(),
    }
}
