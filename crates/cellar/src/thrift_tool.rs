//! `cellar thrift`: HBase's Thrift gateway as a process of its own, on a server reached
//! over HBase's RPC protocol (`--connect host:port` or `--zookeeper quorum`), as
//! HBase's `hbase thrift start` runs beside a cluster. Stops on SIGTERM or SIGINT.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

#[derive(Args)]
pub struct ThriftArgs {
    /// A server's host:port (HBase's RPC protocol).
    #[arg(
        long,
        conflicts_with = "zookeeper",
        required_unless_present = "zookeeper"
    )]
    connect: Option<String>,
    /// A ZooKeeper quorum to find the cluster through.
    #[arg(long)]
    zookeeper: Option<String>,
    /// The cluster's znode parent in ZooKeeper.
    #[arg(long, default_value = "/hbase")]
    znode_parent: String,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    bind: String,
    /// Thrift port.
    #[arg(long, default_value_t = cellar::thrift::DEFAULT_PORT)]
    port: u16,
    /// Serve Thrift2's THBaseService instead of Thrift1's Hbase.
    #[arg(long)]
    thrift2: bool,
    /// Configuration file (TOML with HBase key names: hbase.regionserver.thrift.*).
    #[arg(long)]
    config: Option<PathBuf>,
}

pub fn run(args: &ThriftArgs) -> Result<(), String> {
    let cfg = match &args.config {
        Some(p) => cellar::Options::read_config(p).map_err(|e| e.to_string())?,
        None => cellar_region::Config::default(),
    };
    let conn = match (&args.connect, &args.zookeeper) {
        (Some(addr), _) => cellar::client::RemoteConnection::connect(addr),
        (None, Some(q)) => {
            cellar::client::RemoteConnection::connect_zookeeper(q, &args.znode_parent)
        }
        (None, None) => return Err("--connect or --zookeeper is required".into()),
    }
    .map_err(|e| e.to_string())?;
    let opts =
        cellar::thrift::ThriftOptions::from_config(&cfg, &args.bind, args.port, args.thrift2);
    let conn: Arc<dyn cellar::client::Connection> = Arc::new(conn);
    let gateway = cellar::thrift::start(conn, &opts).map_err(|e| e.to_string())?;
    eprintln!("thrift gateway listening on {}", gateway.addr());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot wait for signals: {e}"))?;
    rt.block_on(async {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            if let (Ok(mut term), Ok(mut int)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            ) {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
                return;
            }
        }
        let _ = tokio::signal::ctrl_c().await;
    });
    gateway.shutdown();
    Ok(())
}
