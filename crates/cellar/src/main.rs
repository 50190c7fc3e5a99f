//! The `cellar` command: `cellar server` serves a database over HBase's RPC protocol;
//! `cellar shell` runs the HBase-style shell on an embedded database (or, with
//! `--connect`, against a server); `cellar hfile` inspects store files written by
//! Cellar or HBase; `cellar wal` lists the edits in HBase's WAL files; `cellar
//! bulkload` loads HFiles into a table and `cellar hfile-write` writes them from CSV/TSV
//! (embedded, or through a server); `cellar hashtable` and `cellar synctable` compare
//! tables as HBase's HashTable and SyncTable do.

mod bulk_tool;
mod census_tool;
mod hfile_tool;
mod migrate_tool;
mod sizing_tool;
mod sync_tool;
mod thrift_tool;
mod wal_tool;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "cellar",
    version,
    about = "Cellar: an HBase-model wide-column store"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Inspect a store file, like `hbase hfile`.
    Hfile(hfile_tool::HFileArgs),
    /// List the entries of HBase WAL files, like `hbase wal`.
    Wal(wal_tool::WalArgs),
    /// Serve the database in DIR (default ./cellar-data) over HBase's RPC protocol.
    Server {
        /// Database directory.
        #[arg(default_value = "cellar-data")]
        dir: PathBuf,
        /// Configuration file (TOML with HBase key names); default DIR/cellar.toml.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1")]
        bind: String,
        /// RPC port (HBase's region-server port; master services answer here too).
        #[arg(long, default_value_t = cellar::server::DEFAULT_PORT)]
        port: u16,
        /// Host name given to clients (default: the bind address).
        #[arg(long)]
        hostname: Option<String>,
        /// Status page and /metrics port.
        #[arg(long, default_value_t = cellar::server::DEFAULT_INFO_PORT)]
        info_port: u16,
        /// Register in this ZooKeeper quorum (sets hbase.zookeeper.quorum).
        #[arg(long)]
        zookeeper: Option<String>,
        /// Also serve HBase's Thrift gateway (happybase and other Thrift clients).
        #[arg(long)]
        thrift: bool,
        /// Thrift port.
        #[arg(long, default_value_t = cellar::thrift::DEFAULT_PORT)]
        thrift_port: u16,
        /// Serve Thrift2's THBaseService instead of Thrift1's Hbase (implies --thrift).
        #[arg(long)]
        thrift2: bool,
        /// Also serve the Bigtable v2 API (clients find it through BIGTABLE_EMULATOR_HOST).
        #[arg(long)]
        bigtable: bool,
        /// Bigtable API port.
        #[arg(long, default_value_t = cellar::bigtable::DEFAULT_PORT)]
        bigtable_port: u16,
    },
    /// HBase's Thrift gateway as a process of its own, on a server reached with
    /// --connect or --zookeeper (like HBase's ThriftServer).
    Thrift(thrift_tool::ThriftArgs),
    /// The HBase shell on an embedded database in DIR (default ./cellar-data), or on a
    /// server with --connect / --zookeeper.
    Shell {
        /// Database directory.
        #[arg(default_value = "cellar-data")]
        dir: PathBuf,
        /// Configuration file (TOML with HBase key names); default DIR/cellar.toml.
        #[arg(long)]
        config: Option<PathBuf>,
        /// A server's host:port (HBase's RPC protocol): run the commands there.
        #[arg(long, conflicts_with = "zookeeper")]
        connect: Option<String>,
        /// A ZooKeeper quorum to find the cluster through.
        #[arg(long)]
        zookeeper: Option<String>,
        /// The cluster's znode parent in ZooKeeper.
        #[arg(long, default_value = "/hbase")]
        znode_parent: String,
        /// Print timestamps as epoch milliseconds (hbase.shell.timestamp.format.epoch).
        #[arg(long)]
        epoch_timestamps: bool,
    },
    /// Load the HFiles of DIR (DIR/<family>/<file>) into TABLE, like HBase's
    /// `completebulkload`: files are checked first, cut at region boundaries, and each
    /// region takes its files in one step.
    Bulkload(bulk_tool::BulkloadArgs),
    /// Write a sorted CSV/TSV of row, family, qualifier, timestamp, value as HFiles for
    /// TABLE (one per family and region), ready for `cellar bulkload`.
    HfileWrite(bulk_tool::HFileWriteArgs),
    /// Import a snapshot exported by HBase (ExportSnapshot's layout) as a new table.
    ImportSnapshot(bulk_tool::ImportSnapshotArgs),
    /// Export a snapshot in ExportSnapshot's layout, for HBase (or import-snapshot).
    ExportSnapshot(bulk_tool::ExportSnapshotArgs),
    /// The re-key migration: plan, create, backfill, verify, status.
    Migrate(migrate_tool::MigrateArgs),
    /// Per-row cells and bytes over a snapshot, the heaviest rows first.
    Census(census_tool::CensusArgs),
    /// Size a proposed layout: bytes a cell (raw and encoded), rows, row widths, and
    /// when the heaviest row crosses 100 MiB, 1 GiB and the region size.
    Sizing(sizing_tool::SizingArgs),
    /// Hash a table in batches, in the layout of HBase's HashTable.
    Hashtable(sync_tool::HashTableArgs),
    /// Compare a table with a HashTable output (HBase's or Cellar's), like SyncTable
    /// --dryrun; exits 1 when a range differs.
    Synctable(sync_tool::SyncTableArgs),
}

fn finish(r: Result<(), String>) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ERROR: {e}");
            ExitCode::from(1)
        }
    }
}

fn open_db(
    dir: &std::path::Path,
    config: Option<&std::path::Path>,
    zookeeper: Option<String>,
) -> Result<cellar::Database, String> {
    let mut opts = cellar::Options::for_dir(dir).map_err(|e| e.to_string())?;
    if let Some(path) = config {
        opts.config = cellar::Options::read_config(path).map_err(|e| e.to_string())?;
    }
    if zookeeper.is_some() {
        opts.config.zookeeper_quorum = zookeeper;
    }
    let db = cellar::Database::open_with(dir, opts).map_err(|e| e.to_string())?;
    if let Some(t) = &db.replay_report().torn_tail {
        eprintln!("WARN: {}", t.describe());
    }
    Ok(db)
}

/// mimalloc: the write and compaction paths allocate and free block-sized buffers and
/// millions of small cells; the system allocator gave the pages back and faulted them
/// in again (page clearing was a tenth of a YCSB load's profile).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let serving = matches!(cli.command, Command::Server { .. } | Command::Thrift(_));
    let logs = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false);
    // CELLAR_LOG=debug (or error, warn, info, trace) overrides the level.
    let level = std::env::var("CELLAR_LOG")
        .ok()
        .and_then(|l| l.parse().ok());
    if serving {
        // A server logs one line per event that matters, with its time.
        logs.with_max_level(level.unwrap_or(tracing::Level::INFO))
            .init();
    } else {
        logs.with_max_level(level.unwrap_or(tracing::Level::WARN))
            .without_time()
            .init();
    }
    match cli.command {
        Command::Hfile(args) => hfile_tool::run(&args),
        Command::Thrift(args) => finish(thrift_tool::run(&args)),
        Command::Wal(args) => wal_tool::run(&args),
        Command::Server {
            dir,
            config,
            bind,
            port,
            hostname,
            info_port,
            zookeeper,
            thrift,
            thrift_port,
            thrift2,
            bigtable,
            bigtable_port,
        } => {
            let db = match open_db(&dir, config.as_deref(), zookeeper) {
                Ok(db) => db,
                Err(e) => {
                    eprintln!("ERROR: {e}");
                    return ExitCode::from(2);
                }
            };
            let opts = cellar::server::ServerOptions {
                bind,
                port,
                hostname,
                info_port: Some(info_port),
                thrift: (thrift || thrift2).then_some(cellar::server::ThriftServe {
                    port: thrift_port,
                    thrift2,
                }),
                bigtable_port: bigtable.then_some(bigtable_port),
            };
            let server = match cellar::server::Server::start(db, &opts) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("ERROR: {e}");
                    return ExitCode::from(2);
                }
            };
            match server.info_addr() {
                Some(info) => eprintln!(
                    "cellar server listening on {} (status page http://{info}/)",
                    server.addr()
                ),
                None => eprintln!("cellar server listening on {}", server.addr()),
            }
            if let Some(t) = server.thrift_addr() {
                eprintln!("thrift gateway listening on {t}");
            }
            if let Some(b) = server.bigtable_addr() {
                eprintln!("bigtable gateway listening on {b}");
            }
            match server.run_until_signal() {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("ERROR: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Command::Shell {
            connect,
            zookeeper,
            znode_parent,
            epoch_timestamps,
            ..
        } if connect.is_some() || zookeeper.is_some() => {
            let conn = match (connect, zookeeper) {
                (Some(addr), _) => cellar::client::RemoteConnection::connect(&addr),
                (None, Some(q)) => {
                    cellar::client::RemoteConnection::connect_zookeeper(&q, &znode_parent)
                }
                (None, None) => return ExitCode::from(2),
            };
            let conn = match conn {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("ERROR: {e}");
                    return ExitCode::from(2);
                }
            };
            let client = cellar::shell::Client::new(Box::new(conn));
            match cellar::shell::run_stdio_client(client, epoch_timestamps) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(1),
                Err(e) => {
                    eprintln!("ERROR: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Bulkload(args) => finish(bulk_tool::bulkload(&args)),
        Command::HfileWrite(args) => finish(bulk_tool::hfile_write(&args)),
        Command::ImportSnapshot(args) => finish(bulk_tool::import_snapshot(&args)),
        Command::ExportSnapshot(args) => finish(bulk_tool::export_snapshot(&args)),
        Command::Hashtable(args) => finish(sync_tool::hashtable(&args)),
        Command::Sizing(args) => finish(sizing_tool::run(&args)),
        Command::Census(args) => finish(census_tool::run(&args)),
        Command::Migrate(args) => match migrate_tool::run(&args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(1),
            Err(e) => {
                eprintln!("ERROR: {e}");
                ExitCode::from(2)
            }
        },
        Command::Synctable(args) => match sync_tool::synctable(&args) {
            Ok(true) => ExitCode::SUCCESS,
            Ok(false) => ExitCode::from(1),
            Err(e) => {
                eprintln!("ERROR: {e}");
                ExitCode::from(2)
            }
        },
        Command::Shell { dir, config, .. } => {
            let db = match open_db(&dir, config.as_deref(), None) {
                Ok(db) => db,
                Err(e) => {
                    eprintln!("ERROR: {e}");
                    return ExitCode::from(2);
                }
            };
            match cellar::shell::run_stdio(db) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(1),
                Err(e) => {
                    eprintln!("ERROR: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}
