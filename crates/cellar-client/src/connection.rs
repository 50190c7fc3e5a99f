//! A connection to a cluster: found from one server's address through
//! ClientMetaService (HBase 2.5+'s RPC registry), RPC connections pooled per server
//! and service, and region locations read from `hbase:meta` (a reversed scan from
//! `table,row,99999999999999`, as HBase's client does) and cached until a call says
//! the region moved.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use cellar_api::{Error, ErrorKind, RegionInfo, Result, Retry};
use cellar_protocol::cell_block::{BlockReader, Codec};
use cellar_protocol::convert::{region_info_from_pb, result_from_pb, table_name_to_pb};
use cellar_protocol::region_name::{self, META_REGION_NAME};
use cellar_protocol::{pb, service};
use prost::Message;

use crate::config::ClientConfig;
use crate::rpc::RpcConnection;
use crate::{Admin, Table};

/// Where a region is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionLocation {
    pub info: RegionInfo,
    /// The region's name as its server knows it.
    pub name: Vec<u8>,
    /// `host:port` of the server holding it.
    pub server: String,
}

impl RegionLocation {
    pub fn specifier(&self) -> pb::RegionSpecifier {
        region_spec(&self.name)
    }
}

pub(crate) fn region_spec(name: &[u8]) -> pb::RegionSpecifier {
    pb::RegionSpecifier {
        r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
        value: name.to_vec().into(),
    }
}

pub(crate) struct Inner {
    pub(crate) cfg: ClientConfig,
    bootstrap: String,
    master: Mutex<String>,
    meta: Mutex<String>,
    pool: Mutex<HashMap<(String, &'static str), Arc<RpcConnection>>>,
    locations: Mutex<HashMap<String, BTreeMap<Vec<u8>, RegionLocation>>>,
    pub(crate) nonce_group: u64,
    nonce: std::sync::atomic::AtomicU64,
}

/// Meta rows read per page when locating a region, and pages read at most.
const LOCATE_ROWS: u32 = 8;
const LOCATE_PAGES: usize = 64;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A connection to a Cellar server or an HBase 2.x cluster.
#[derive(Clone)]
pub struct Connection {
    pub(crate) inner: Arc<Inner>,
}

fn address(s: &pb::ServerName) -> String {
    format!("{}:{}", s.host_name, s.port.unwrap_or(16020))
}

fn random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0x6365_6c6c_6172);
    h.finish()
}

impl Connection {
    /// Connects through the server at `addr` (`host:port`) with HBase's defaults.
    pub async fn connect(addr: &str) -> Result<Connection> {
        Connection::connect_with(addr, ClientConfig::default()).await
    }

    /// Connects through the server at `addr`, which tells where the master and
    /// `hbase:meta` are.
    pub async fn connect_with(addr: &str, cfg: ClientConfig) -> Result<Connection> {
        let inner = Arc::new(Inner {
            cfg,
            bootstrap: addr.to_string(),
            master: Mutex::new(addr.to_string()),
            meta: Mutex::new(addr.to_string()),
            pool: Mutex::new(HashMap::new()),
            locations: Mutex::new(HashMap::new()),
            nonce_group: random(),
            nonce: std::sync::atomic::AtomicU64::new(random()),
        });
        let conn = Connection { inner };
        conn.discover().await?;
        Ok(conn)
    }

    /// Finds the cluster through ZooKeeper: the master in `<parent>/master` and
    /// `hbase:meta`'s server in `<parent>/meta-region-server` (HBase's znodes).
    pub async fn connect_zookeeper(
        quorum: &str,
        parent: &str,
        cfg: ClientConfig,
    ) -> Result<Connection> {
        use zookeeper_client as zk;
        let zerr =
            |what: &str, e: zk::Error| Error::new(ErrorKind::Io, format!("ZooKeeper {what}: {e}"));
        let client = zk::Client::connect(quorum)
            .await
            .map_err(|e| zerr(&format!("connect to {quorum}"), e))?;
        let parent = parent.trim_end_matches('/');
        let read = |node: &'static str| {
            let path = format!("{parent}/{node}");
            let client = client.clone();
            async move {
                client
                    .get_data(&path)
                    .await
                    .map(|(d, _)| d)
                    .map_err(|e| zerr(&format!("read {path}"), e))
            }
        };
        let master: pb::Master = cellar_protocol::znode::decode(
            &read(cellar_protocol::znode::MASTER).await?,
            "master znode",
        )?;
        let meta: pb::MetaRegionServer = cellar_protocol::znode::decode(
            &read(cellar_protocol::znode::META_REGION_SERVER).await?,
            "meta-region-server znode",
        )?;
        let master = address(&master.master);
        let meta = address(&meta.server);
        let inner = Arc::new(Inner {
            cfg,
            bootstrap: master.clone(),
            master: Mutex::new(master),
            meta: Mutex::new(meta),
            pool: Mutex::new(HashMap::new()),
            locations: Mutex::new(HashMap::new()),
            nonce_group: random(),
            nonce: std::sync::atomic::AtomicU64::new(random()),
        });
        Ok(Connection { inner })
    }

    async fn discover(&self) -> Result<()> {
        let boot = self.inner.bootstrap.clone();
        let master: pb::GetActiveMasterResponse = self
            .retrying(|| {
                self.call_on(
                    &boot,
                    service::CLIENT_META,
                    "GetActiveMaster",
                    &pb::Empty {},
                )
            })
            .await?;
        if let Some(m) = master.server_name {
            *lock(&self.inner.master) = address(&m);
        }
        let meta: pb::GetMetaRegionLocationsResponse = self
            .retrying(|| {
                self.call_on(
                    &boot,
                    service::CLIENT_META,
                    "GetMetaRegionLocations",
                    &pb::Empty {},
                )
            })
            .await?;
        if let Some(s) = meta
            .meta_locations
            .first()
            .and_then(|l| l.server_name.as_ref())
        {
            *lock(&self.inner.meta) = address(s);
        }
        Ok(())
    }

    pub fn config(&self) -> &ClientConfig {
        &self.inner.cfg
    }

    pub fn table(&self, name: &str) -> Table {
        Table::new(self.clone(), name)
    }

    pub fn admin(&self) -> Admin {
        Admin::new(self.clone())
    }

    pub(crate) fn next_nonce(&self) -> u64 {
        self.inner
            .nonce
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }

    /// The pooled connection to `server` for `svc`, opened on first use or after it
    /// broke.
    pub(crate) async fn rpc(&self, server: &str, svc: &'static str) -> Result<Arc<RpcConnection>> {
        let key = (server.to_string(), svc);
        if let Some(c) = lock(&self.inner.pool).get(&key).filter(|c| !c.is_closed()) {
            return Ok(c.clone());
        }
        let codec = self.inner.cfg.cell_blocks.then_some(Codec::KeyValue);
        let c = RpcConnection::connect(
            server,
            svc,
            codec,
            &self.inner.cfg.user,
            self.inner.cfg.rpc_timeout,
        )
        .await?;
        lock(&self.inner.pool).insert(key, c.clone());
        Ok(c)
    }

    async fn call_on<Q: Message, R: Message + Default>(
        &self,
        server: &str,
        svc: &'static str,
        method: &str,
        req: &Q,
    ) -> Result<R> {
        let rpc = self.rpc(server, svc).await?;
        let (r, _) = rpc
            .call(method, req, &[], self.inner.cfg.rpc_timeout)
            .await?;
        Ok(r)
    }

    /// One call of `service.method` on `server`, with no retries: low-level access for
    /// tools and tests (the cell block of the response is returned as it came).
    pub async fn call_raw<Q: Message, R: Message + Default>(
        &self,
        server: &str,
        svc: &'static str,
        method: &str,
        req: &Q,
    ) -> Result<(R, bytes::Bytes)> {
        let rpc = self.rpc(server, svc).await?;
        rpc.call(method, req, &[], self.inner.cfg.rpc_timeout).await
    }

    /// Runs `f` until it succeeds, fails for good, or the retries run out; transient
    /// failures back off with HBase's schedule.
    pub(crate) async fn retrying<T, F, Fut>(&self, f: F) -> Result<T>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<T>>,
    {
        let mut attempt = 0;
        loop {
            match f().await {
                Ok(v) => return Ok(v),
                Err(e) if e.retry() != Retry::Never && attempt < self.inner.cfg.retries => {
                    tokio::time::sleep(self.inner.cfg.backoff(attempt)).await;
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// A MasterService call, retried while the master is unreachable or busy.
    pub(crate) async fn master<Q: Message, R: Message + Default>(
        &self,
        method: &str,
        req: &Q,
    ) -> Result<R> {
        self.retrying(|| async {
            let m = lock(&self.inner.master).clone();
            self.call_on(&m, service::MASTER, method, req).await
        })
        .await
    }

    /// A MasterService call about `table`: table errors name it.
    pub(crate) async fn master_for<Q: Message, R: Message + Default>(
        &self,
        table: &str,
        method: &str,
        req: &Q,
    ) -> Result<R> {
        self.master(method, req).await.map_err(|e| named(e, table))
    }

    /// An AdminService call to `server`.
    pub(crate) async fn admin_call<Q: Message, R: Message + Default>(
        &self,
        server: &str,
        method: &str,
        req: &Q,
    ) -> Result<R> {
        self.retrying(|| self.call_on(server, service::ADMIN, method, req))
            .await
    }

    /// Forgets the cached location of the region holding `row` (all of the table's
    /// when `row` is `None`).
    pub fn invalidate(&self, table: &str, row: Option<&[u8]>) {
        let mut locs = lock(&self.inner.locations);
        let Some(t) = locs.get_mut(table) else { return };
        match row {
            None => t.clear(),
            Some(row) => {
                let hit = t
                    .range(..=row.to_vec())
                    .next_back()
                    .filter(|(_, l)| l.info.contains(row))
                    .map(|(k, _)| k.clone());
                if let Some(k) = hit {
                    t.remove(&k);
                }
            }
        }
    }

    fn cached(&self, table: &str, row: &[u8]) -> Option<RegionLocation> {
        let locs = lock(&self.inner.locations);
        locs.get(table)?
            .range(..=row.to_vec())
            .next_back()
            .map(|(_, l)| l.clone())
            .filter(|l| l.info.contains(row))
    }

    /// The region of `table` holding `row`.
    pub async fn locate(&self, table: &str, row: &[u8], reload: bool) -> Result<RegionLocation> {
        if !reload {
            if let Some(l) = self.cached(table, row) {
                return Ok(l);
            }
        }
        let table = normalize(table);
        let mut start = table.as_bytes().to_vec();
        start.push(b',');
        start.extend_from_slice(row);
        start.extend_from_slice(b",99999999999999");
        // As HBase's locator: the nearest meta row at or before the row's key that is
        // not a split parent (offline; kept in meta until its daughters let go of its
        // files), paging back past such parents.
        let mut loc = None;
        let mut seen = false;
        for _ in 0..LOCATE_PAGES {
            let scan = pb::Scan {
                start_row: Some(start.clone().into()),
                stop_row: Some(format!("{table},,").into_bytes().into()),
                reversed: Some(true),
                caching: Some(LOCATE_ROWS),
                column: vec![pb::Column {
                    family: bytes::Bytes::from_static(b"info"),
                    qualifier: Vec::new(),
                }],
                ..Default::default()
            };
            let rows = self.scan_meta(scan, LOCATE_ROWS).await?;
            let last = rows.last().map(|r| r.row.clone());
            let page = rows.len();
            loc = rows
                .iter()
                // A later page starts (inclusively) at the last row of the one before.
                .filter(|r| !(seen && r.row == start))
                .filter_map(location_of)
                .find(|(l, _)| !l.info.offline || l.info.table != table);
            match (&loc, last) {
                (None, Some(last)) if page == LOCATE_ROWS as usize => {
                    // Every row here was a split parent: go on from the last one.
                    start = last;
                    seen = true;
                }
                _ => break,
            }
        }
        let loc = loc.filter(|(l, _)| l.info.table == table);
        let Some((loc, online)) = loc else {
            return Err(Error::new(ErrorKind::TableNotFound, table.clone()).with_table(table));
        };
        if !loc.info.contains(row) {
            return Err(Error::new(
                ErrorKind::NotServingRegion,
                format!("no region of {table} holds the row (a hole in hbase:meta)"),
            ));
        }
        if !online {
            return Err(self.offline_error(&table).await);
        }
        lock(&self.inner.locations)
            .entry(table)
            .or_default()
            .insert(loc.info.start.clone(), loc.clone());
        Ok(loc)
    }

    /// As HBase's client before it retries a region that was not serving
    /// (`RegionServerCallable.prepare`): a disabled table is an error of its own.
    pub(crate) async fn disabled_error(&self, table: &str) -> Option<Error> {
        let e = self.offline_error(&normalize(table)).await;
        (e.kind() == ErrorKind::TableNotEnabled).then_some(e)
    }

    async fn offline_error(&self, table: &str) -> Error {
        let req = pb::GetTableStateRequest {
            table_name: table_name_to_pb(table),
        };
        match self
            .master::<_, pb::GetTableStateResponse>("GetTableState", &req)
            .await
        {
            Ok(s) if s.table_state.state == pb::table_state::State::Disabled as i32 => {
                Error::new(ErrorKind::TableNotEnabled, format!("{table} is disabled."))
                    .with_table(table)
            }
            Ok(_) => Error::new(
                ErrorKind::NotServingRegion,
                format!("a region of {table} is offline"),
            ),
            Err(e) => e,
        }
    }

    /// Every region of `table`, in start-key order.
    pub async fn regions(&self, table: &str) -> Result<Vec<RegionLocation>> {
        let table = normalize(table);
        let scan = pb::Scan {
            start_row: Some(format!("{table},,").into_bytes().into()),
            stop_row: Some(format!("{table} ,,").into_bytes().into()),
            column: vec![pb::Column {
                family: bytes::Bytes::from_static(b"info"),
                qualifier: Vec::new(),
            }],
            ..Default::default()
        };
        // HBase reads the count as a Java int: i32::MAX is "all".
        let rows = self.scan_meta(scan, i32::MAX as u32).await?;
        let out: Vec<RegionLocation> = rows
            .iter()
            .filter_map(location_of)
            .filter(|(l, _)| l.info.table == table && !l.info.offline)
            .map(|(l, _)| l)
            .collect();
        if out.is_empty() {
            return Err(Error::new(ErrorKind::TableNotFound, table.clone()).with_table(table));
        }
        Ok(out)
    }

    async fn scan_meta(&self, scan: pb::Scan, rows: u32) -> Result<Vec<cellar_api::RowResult>> {
        self.retrying(|| async {
            let meta = lock(&self.inner.meta).clone();
            let rpc = self.rpc(&meta, service::CLIENT).await?;
            let req = pb::ScanRequest {
                region: Some(region_spec(META_REGION_NAME)),
                scan: Some(scan.clone()),
                number_of_rows: Some(rows),
                close_scanner: Some(true),
                ..Default::default()
            };
            let (resp, block): (pb::ScanResponse, _) = rpc
                .call("Scan", &req, &[], self.inner.cfg.rpc_timeout)
                .await?;
            decode_scan_results(&resp, block, rpc.codec())
        })
        .await
    }
}

/// The results of a scan response, inline or from its cell block.
pub(crate) fn decode_scan_results(
    resp: &pb::ScanResponse,
    block: bytes::Bytes,
    codec: Option<Codec>,
) -> Result<Vec<cellar_api::RowResult>> {
    if !resp.results.is_empty() || resp.cells_per_result.is_empty() {
        return resp
            .results
            .iter()
            .map(|r| result_from_pb(r, None).map_err(Error::from))
            .collect();
    }
    let codec =
        codec.ok_or_else(|| Error::invalid("a cell block on a connection without a codec"))?;
    let mut reader = BlockReader::new(codec, block);
    let mut out = Vec::new();
    for (i, &n) in resp.cells_per_result.iter().enumerate() {
        let cells = reader.take(n as usize).map_err(Error::from)?;
        out.push(cellar_api::RowResult {
            row: cells.first().map(|c| c.row().to_vec()).unwrap_or_default(),
            cells,
            partial: resp
                .partial_flag_per_result
                .get(i)
                .copied()
                .unwrap_or(false),
            ..Default::default()
        });
    }
    Ok(out)
}

/// A meta row's region location, and whether it has a server.
fn location_of(r: &cellar_api::RowResult) -> Option<(RegionLocation, bool)> {
    let info = r.value(b"info", b"regioninfo")?;
    let pbi = pb::RegionInfo::decode(info.strip_prefix(b"PBUF")?).ok()?;
    let info = region_info_from_pb(&pbi).ok()?;
    let server = r
        .value(b"info", b"server")
        .map(|s| String::from_utf8_lossy(s).into_owned());
    let name = region_name::region_name(&info.table, &info.start, info.id);
    let online = server.is_some();
    Some((
        RegionLocation {
            info,
            name,
            server: server.unwrap_or_default(),
        },
        online,
    ))
}

/// An error about a table, naming it (servers send only the class and message).
pub(crate) fn named(e: Error, table: &str) -> Error {
    match e.kind() {
        ErrorKind::TableNotFound
        | ErrorKind::TableExists
        | ErrorKind::TableNotEnabled
        | ErrorKind::TableNotDisabled
            if e.table().is_none() =>
        {
            e.with_table(normalize(table))
        }
        _ => e,
    }
}

/// `default:t` and `t` are one table.
pub(crate) fn normalize(table: &str) -> String {
    table.strip_prefix("default:").unwrap_or(table).to_string()
}
