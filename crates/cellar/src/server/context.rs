//! What every call on a server shares: the database, this server's name and cluster
//! id, the wire-name directory of regions, the open scanners, the nonces of recent
//! increments and appends, the call limits and the counters behind `/metrics`.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use cellar_api::ServerName;

use super::nonces::Nonces;
use super::regions::RegionDirectory;
use super::scanners::Scanners;
use crate::Database;

/// Counters a server keeps (read by the status page and `/metrics`).
#[derive(Default)]
pub struct Counters {
    pub connections_open: AtomicUsize,
    pub connections_total: AtomicU64,
    pub calls_in_flight: AtomicUsize,
    pub calls_total: AtomicU64,
    pub calls_rejected: AtomicU64,
    pub bad_frames: AtomicU64,
}

impl Counters {
    pub fn get(c: &AtomicU64) -> u64 {
        c.load(Ordering::Relaxed)
    }
}

/// Shared state of one running server.
pub struct Context {
    pub db: Arc<Database>,
    pub server_name: ServerName,
    pub info_port: u16,
    pub cluster_id: String,
    pub regions: RegionDirectory,
    pub scanners: Scanners,
    pub nonces: Nonces,
    pub counters: Counters,
    pub max_request_size: usize,
    pub max_calls: usize,
    pub max_connection_calls: usize,
    /// Procedure ids handed out for DDL calls (each finished when answered).
    pub next_proc_id: AtomicU64,
    /// Procedures that finished with an exception (class, message), as HBase reports a
    /// procedure that failed after its call was answered; the most recent kept.
    pub failed_procs: std::sync::Mutex<std::collections::BTreeMap<u64, (String, String)>>,
    /// The balancer switch clients may flip (one server: nothing to balance).
    pub balancer_on: AtomicBool,
    pub latency: super::metrics::Latencies,
}

impl Context {
    pub fn new(
        db: Arc<Database>,
        server_name: ServerName,
        info_port: u16,
        cluster_id: String,
    ) -> Context {
        let config = db.config().clone();
        let clock = db.region_server().clock().clone();
        Context {
            regions: RegionDirectory::default(),
            scanners: Scanners::new(clock.clone(), config.scanner_timeout_ms),
            nonces: Nonces::new(clock),
            counters: Counters::default(),
            max_request_size: config.ipc_max_request_size as usize,
            max_calls: config.ipc_max_call_queue_length,
            max_connection_calls: config.ipc_max_connection_calls,
            next_proc_id: AtomicU64::new(1),
            failed_procs: Default::default(),
            balancer_on: AtomicBool::new(true),
            latency: Default::default(),
            db,
            server_name,
            info_port,
            cluster_id,
        }
    }

    pub fn proc_id(&self) -> u64 {
        self.next_proc_id.fetch_add(1, Ordering::Relaxed)
    }

    /// A procedure id whose result is the exception `class` with `message`.
    pub fn failed_proc(&self, class: &str, message: String) -> u64 {
        let id = self.proc_id();
        let mut failed = self.failed_procs.lock().unwrap_or_else(|e| e.into_inner());
        failed.insert(id, (class.to_string(), message));
        while failed.len() > 1024 {
            failed.pop_first();
        }
        id
    }
}
