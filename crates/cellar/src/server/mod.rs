//! `cellar server`: HBase's RPC protocol in front of one embedded database — HBase's
//! standalone mode, a master and a region server in one process. ClientService,
//! MasterService, AdminService and ClientMetaService all answer on one port (HBase's
//! region-server port, 16020 by default); `hbase:meta` is served from Cellar's
//! catalog so HBase clients locate regions as they always do.
//!
//! The server runs on its own tokio runtime: one task accepts, one task per
//! connection reads frames and answers Gets itself, and the engine's other calls
//! (which may wait on row locks and log syncs) run on the runtime's blocking pool. Shutdown stops accepting, lets calls in flight finish and answer,
//! then closes the database (flushing it).

mod admin_service;
mod bulk_load_service;
mod client_service;
mod connection;
mod context;
mod dispatch;
mod http;
mod log_entries;
mod master_procedures;
mod master_service;
mod master_snapshots;
mod meta;
mod meta_service;
mod metrics;
mod nonces;
mod regions;
mod scan;
mod scanners;
mod status;
mod status_large_rows;
mod zookeeper;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cellar_api::ServerName;
use tokio::net::TcpListener;
use tokio::sync::watch;

pub use context::{Context, Counters};
pub use meta::compare_meta_rows;

use crate::error::{DbError, Result};
use crate::Database;

/// HBase's default region-server RPC port.
pub const DEFAULT_PORT: u16 = 16020;
/// HBase's default region-server info (web) port.
pub const DEFAULT_INFO_PORT: u16 = 16030;

/// Where a server listens.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Address to bind (default 127.0.0.1).
    pub bind: String,
    /// RPC port (0: any free port).
    pub port: u16,
    /// The host name clients are told to connect to (default: the bind address, or
    /// `localhost` when binding every interface).
    pub hostname: Option<String>,
    /// Status page and metrics port (`None`: no status page).
    pub info_port: Option<u16>,
    /// Also serve HBase's Thrift gateway (`None`: no Thrift port).
    pub thrift: Option<ThriftServe>,
    /// Also serve the Bigtable v2 API on this port (0: any free port).
    pub bigtable_port: Option<u16>,
}

/// The Thrift gateway beside the RPC port.
#[derive(Debug, Clone)]
pub struct ThriftServe {
    /// Thrift port (0: any free port).
    pub port: u16,
    /// Thrift2's `THBaseService` instead of Thrift1's `Hbase`.
    pub thrift2: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            bind: "127.0.0.1".into(),
            port: DEFAULT_PORT,
            hostname: None,
            info_port: Some(DEFAULT_INFO_PORT),
            thrift: None,
            bigtable_port: None,
        }
    }
}

fn io_err(path: &Path, e: std::io::Error) -> DbError {
    DbError::Open {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
}

/// The cluster id, made once and kept in the data directory (HBase's `hbase.id`).
fn cluster_id(root: &Path) -> Result<String> {
    let path = root.join("cluster.id");
    if let Ok(text) = std::fs::read_to_string(&path) {
        let id = text.trim().to_string();
        if !id.is_empty() {
            return Ok(id);
        }
    }
    let (a, b) = (cellar_io::random_id(), cellar_io::random_id());
    let id = format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    );
    let tmp = root.join("cluster.id.tmp");
    std::fs::write(&tmp, format!("{id}\n")).map_err(|e| io_err(&tmp, e))?;
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .map_err(|e| io_err(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| io_err(&path, e))?;
    Ok(id)
}

/// A running server.
pub struct Server {
    runtime: tokio::runtime::Runtime,
    ctx: Arc<Context>,
    addr: SocketAddr,
    info_addr: Option<SocketAddr>,
    stop: watch::Sender<bool>,
    accept: tokio::task::JoinHandle<()>,
    zk: Option<zookeeper::Registration>,
    thrift: Option<cellar_thrift::Gateway>,
    bigtable_addr: Option<SocketAddr>,
}

impl Server {
    /// Starts serving `db`.
    pub fn start(db: Database, opts: &ServerOptions) -> Result<Server> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("cellar-rpc")
            .enable_all()
            .build()
            .map_err(|e| io_err(db.root(), e))?;
        let bind = format!("{}:{}", opts.bind, opts.port);
        let listener = runtime
            .block_on(TcpListener::bind(&bind))
            .map_err(|e| io_err(Path::new(&bind), e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| io_err(Path::new(&bind), e))?;
        let host = opts.hostname.clone().unwrap_or_else(|| {
            if addr.ip().is_unspecified() {
                "localhost".to_string()
            } else {
                addr.ip().to_string()
            }
        });
        let info = match opts.info_port {
            Some(p) => {
                let bind = format!("{}:{p}", opts.bind);
                let l = runtime
                    .block_on(TcpListener::bind(&bind))
                    .map_err(|e| io_err(Path::new(&bind), e))?;
                let a = l.local_addr().map_err(|e| io_err(Path::new(&bind), e))?;
                Some((l, a))
            }
            None => None,
        };
        let start_code = db.region_server().clock().now_millis();
        let server_name = ServerName::new(host, addr.port(), start_code);
        let id = cluster_id(db.root())?;
        let ctx = Arc::new(Context::new(
            Arc::new(db),
            server_name.clone(),
            info.as_ref().map_or(0, |(_, a)| a.port()),
            id,
        ));
        let zk = match &ctx.db.config().zookeeper_quorum {
            Some(q) => {
                let parent = ctx.db.config().znode_parent.clone();
                let reg = runtime.block_on(zookeeper::register(
                    q,
                    &parent,
                    &ctx.server_name,
                    ctx.info_port,
                    &ctx.cluster_id,
                ));
                Some(reg.map_err(|e| DbError::Open {
                    path: format!("zookeeper {q}").into(),
                    reason: e.message().to_string(),
                })?)
            }
            None => None,
        };
        let (stop, stop_rx) = watch::channel(false);
        let accept = runtime.spawn(accept_loop(listener, ctx.clone(), stop_rx.clone()));
        let info_addr = info.as_ref().map(|(_, a)| *a);
        if let Some((l, a)) = info {
            runtime.spawn(http::serve(l, ctx.clone(), stop_rx.clone()));
            tracing::info!(addr = %a, "status page and /metrics");
        }
        runtime.spawn(reaper(ctx.clone(), stop_rx.clone()));
        let thrift = match &opts.thrift {
            Some(t) => {
                let mut topts = crate::thrift::ThriftOptions::from_config(
                    ctx.db.config(),
                    &opts.bind,
                    t.port,
                    t.thrift2,
                );
                topts.cluster_id = ctx.cluster_id.clone();
                let conn: Arc<dyn crate::client::Connection> =
                    Arc::new(ctx.db.connection().clone());
                Some(
                    crate::thrift::start(conn, &topts).map_err(|e| DbError::Open {
                        path: "thrift".into(),
                        reason: e.message().to_string(),
                    })?,
                )
            }
            None => None,
        };
        let bigtable_addr = match opts.bigtable_port {
            Some(port) => {
                let bind = format!("{}:{port}", opts.bind);
                let l = runtime
                    .block_on(TcpListener::bind(&bind))
                    .map_err(|e| io_err(Path::new(&bind), e))?;
                let a = l.local_addr().map_err(|e| io_err(Path::new(&bind), e))?;
                let conn: Arc<dyn crate::client::Connection> =
                    Arc::new(ctx.db.connection().clone());
                let mut rx = stop_rx.clone();
                let stopped = async move {
                    let _ = rx.changed().await;
                };
                runtime.spawn(async move {
                    if let Err(e) = crate::bigtable::serve(conn, l, stopped).await {
                        tracing::warn!("{e}");
                    }
                });
                tracing::info!(addr = %a, "bigtable gateway listening");
                Some(a)
            }
            None => None,
        };
        tracing::info!(server = %server_name, %addr, "cellar server listening");
        Ok(Server {
            runtime,
            ctx,
            addr,
            info_addr,
            stop,
            accept,
            zk,
            thrift,
            bigtable_addr,
        })
    }

    /// The address of the Bigtable gateway, when there is one.
    pub fn bigtable_addr(&self) -> Option<SocketAddr> {
        self.bigtable_addr
    }

    /// The address of the Thrift gateway, when there is one.
    pub fn thrift_addr(&self) -> Option<SocketAddr> {
        self.thrift.as_ref().map(|g| g.addr())
    }

    /// The address the RPC port is bound to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The address of the status page and `/metrics`, when there is one.
    pub fn info_addr(&self) -> Option<SocketAddr> {
        self.info_addr
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// Waits for a stop request (SIGTERM or SIGINT), then shuts down.
    pub fn run_until_signal(self) -> Result<()> {
        self.runtime.block_on(async {
            #[cfg(unix)]
            {
                use tokio::signal::unix::{signal, SignalKind};
                match (
                    signal(SignalKind::terminate()),
                    signal(SignalKind::interrupt()),
                ) {
                    (Ok(mut term), Ok(mut int)) => {
                        tokio::select! {
                            _ = term.recv() => {}
                            _ = int.recv() => {}
                        }
                    }
                    _ => {
                        let _ = tokio::signal::ctrl_c().await;
                    }
                }
            }
            #[cfg(not(unix))]
            {
                let _ = tokio::signal::ctrl_c().await;
            }
        });
        tracing::info!("stopping: finishing calls in flight, then flushing");
        self.shutdown()
    }

    /// Stops accepting, lets calls in flight finish, then flushes and closes the
    /// database.
    pub fn shutdown(self) -> Result<()> {
        let Server {
            runtime,
            ctx,
            stop,
            accept,
            zk,
            thrift,
            ..
        } = self;
        if let Some(g) = thrift {
            g.shutdown();
        }
        if let Some(z) = zk {
            runtime.block_on(z.withdraw());
        }
        let _ = stop.send(true);
        runtime.block_on(async {
            let _ = tokio::time::timeout(Duration::from_secs(30), accept).await;
        });
        runtime.shutdown_timeout(Duration::from_secs(30));
        let ctx = Arc::try_unwrap(ctx).map_err(|_| DbError::Open {
            path: "server".into(),
            reason: "calls still running at shutdown".into(),
        })?;
        match Arc::try_unwrap(ctx.db) {
            Ok(db) => db.close(),
            // Dropping the last reference closes it too.
            Err(_) => Ok(()),
        }
    }
}

async fn accept_loop(listener: TcpListener, ctx: Arc<Context>, mut stop: watch::Receiver<bool>) {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let mut conns = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            r = listener.accept() => match r {
                Ok((stream, peer)) => {
                    let id = NEXT.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(connection = id, %peer, "accepted");
                    ctx.counters.connections_total.fetch_add(1, Ordering::Relaxed);
                    let ctx2 = ctx.clone();
                    let rx = stop.clone();
                    conns.spawn(async move {
                        ctx2.counters.connections_open.fetch_add(1, Ordering::Relaxed);
                        connection::serve(stream, ctx2.clone(), id, rx).await;
                        ctx2.counters.connections_open.fetch_sub(1, Ordering::Relaxed);
                    });
                }
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    drop(listener);
    while conns.join_next().await.is_some() {}
}

async fn reaper(ctx: Arc<Context>, mut stop: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            _ = tick.tick() => {
                let n = ctx.scanners.reap();
                if n > 0 {
                    tracing::debug!(scanners = n, "closed scanners whose lease expired");
                }
            }
        }
    }
}
