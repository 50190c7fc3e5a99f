//! The gateway's network side: a listener, one thread per connection (at most
//! `hbase.regionserver.thrift.maxWorkerThreads` at once; further connections wait to be
//! taken), each reading calls and handing them to a [`Service`]. A connection that
//! sends garbage, a frame over the maximum or nothing for longer than the read
//! timeout is closed; the others go on.

use std::collections::HashMap;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use thrift::protocol::TMessageType;
use thrift::ApplicationErrorKind;

use crate::value::Struct;
use crate::wire::{Wire, WireError};

/// What a service answers to one call.
#[derive(Debug)]
pub enum Reply {
    /// The method's result struct: field 0 the return value (absent for void), or one
    /// exception field.
    Result(Struct),
    /// The service has no method of that name.
    UnknownMethod,
    /// A TApplicationException of another kind (bad arguments the IDL cannot express).
    Application(ApplicationErrorKind, String),
}

/// A Thrift service: methods by name over dynamic arguments.
pub trait Service: Send + Sync + 'static {
    fn call(&self, method: &str, args: &Struct) -> Reply;
}

/// Limits of the gateway (HBase's `hbase.regionserver.thrift.*` keys).
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Largest frame a framed client may send, in bytes.
    pub max_frame: usize,
    /// Connections served at once.
    pub max_workers: usize,
    /// A connection silent this long is closed (`None`: never).
    pub read_timeout: Option<Duration>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            max_frame: 2 * 1024 * 1024,
            max_workers: 1000,
            read_timeout: Some(Duration::from_secs(60)),
        }
    }
}

struct Shared {
    stop: AtomicBool,
    open: Mutex<HashMap<u64, TcpStream>>,
    workers: Mutex<usize>,
    freed: Condvar,
}

/// A running gateway.
pub struct Gateway {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl Gateway {
    /// Binds `bind` (`host:port`) and serves `service` there.
    pub fn start(bind: &str, service: Arc<dyn Service>, cfg: ServerConfig) -> io::Result<Gateway> {
        let listener = TcpListener::bind(bind)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            open: Mutex::new(HashMap::new()),
            workers: Mutex::new(0),
            freed: Condvar::new(),
        });
        let s2 = shared.clone();
        // The gateway serves blocking clients on their own threads; it is not engine code.
        #[allow(clippy::disallowed_methods)]
        let accept = std::thread::Builder::new()
            .name("cellar-thrift-accept".into())
            .spawn(move || accept_loop(listener, service, cfg, s2))?;
        Ok(Gateway {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting and closes every connection.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        self.shared.freed.notify_all();
        if let Ok(open) = self.shared.open.lock() {
            for s in open.values() {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
        }
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        if self.accept.is_some() {
            self.stop();
        }
    }
}

/// Releases a worker slot and forgets the connection when its thread ends, however.
struct Slot {
    id: u64,
    shared: Arc<Shared>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut open) = self.shared.open.lock() {
            open.remove(&self.id);
        }
        if let Ok(mut n) = self.shared.workers.lock() {
            *n = n.saturating_sub(1);
        }
        self.shared.freed.notify_one();
    }
}

fn accept_loop(
    listener: TcpListener,
    service: Arc<dyn Service>,
    cfg: ServerConfig,
    shared: Arc<Shared>,
) {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let stream = match stream {
            Ok(s) => s,
            Err(e) => {
                // Out of file descriptors, say: back off rather than spin.
                tracing::warn!("thrift accept failed: {e}");
                #[allow(clippy::disallowed_methods)]
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        // Wait for a worker slot.
        {
            let Ok(mut n) = shared.workers.lock() else {
                break;
            };
            while *n >= cfg.max_workers.max(1) && !shared.stop.load(Ordering::SeqCst) {
                n = match shared.freed.wait(n) {
                    Ok(n) => n,
                    Err(_) => return,
                };
            }
            *n += 1;
        }
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let slot = Slot {
            id,
            shared: shared.clone(),
        };
        if let Ok(clone) = stream.try_clone() {
            if let Ok(mut open) = shared.open.lock() {
                open.insert(id, clone);
            }
        }
        let service = service.clone();
        let cfg2 = cfg.clone();
        #[allow(clippy::disallowed_methods)]
        let spawned = std::thread::Builder::new()
            .name("cellar-thrift".into())
            .spawn(move || {
                let _slot = slot;
                serve(stream, service.as_ref(), &cfg2, id);
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot start a thrift worker: {e}");
        }
    }
}

fn serve(stream: TcpStream, service: &dyn Service, cfg: &ServerConfig, id: u64) {
    let peer = stream.peer_addr().ok();
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(cfg.read_timeout);
    let writer = match stream.try_clone() {
        Ok(w) => w,
        Err(e) => {
            tracing::warn!("thrift connection {id}: {e}");
            return;
        }
    };
    let mut wire = match Wire::detect(stream, writer, cfg.max_frame) {
        Ok(w) => w,
        Err(WireError::Closed) => return,
        Err(e) => {
            tracing::info!(connection = id, ?peer, "thrift connection closed: {e}");
            return;
        }
    };
    tracing::debug!(
        connection = id,
        ?peer,
        transport = ?wire.transport(),
        protocol = ?wire.protocol(),
        "thrift connection"
    );
    loop {
        let call = match wire.read_call() {
            Ok(c) => c,
            Err(WireError::Closed) => return,
            Err(e) => {
                tracing::info!(connection = id, ?peer, "thrift connection closed: {e}");
                return;
            }
        };
        let oneway = call.kind == TMessageType::OneWay;
        if call.kind != TMessageType::Call && !oneway {
            let _ = wire.reply_exception(
                &call.name,
                call.seq,
                ApplicationErrorKind::InvalidMessageType,
                "expected a call",
            );
            return;
        }
        let args = match call.args {
            Ok(a) => a,
            Err(msg) => {
                // The stream position is lost: answer, then close.
                let _ = wire.reply_exception(
                    &call.name,
                    call.seq,
                    ApplicationErrorKind::ProtocolError,
                    &msg,
                );
                tracing::info!(connection = id, ?peer, "thrift connection closed: {msg}");
                return;
            }
        };
        let reply = service.call(&call.name, &args);
        if oneway {
            continue;
        }
        let sent = match reply {
            Reply::Result(s) => wire.reply(&call.name, call.seq, &s),
            Reply::UnknownMethod => wire.reply_exception(
                &call.name,
                call.seq,
                ApplicationErrorKind::UnknownMethod,
                &format!("Invalid method name: '{}'", call.name),
            ),
            Reply::Application(kind, msg) => wire.reply_exception(&call.name, call.seq, kind, &msg),
        };
        if let Err(e) = sent {
            tracing::debug!(connection = id, "thrift reply not sent: {e}");
            return;
        }
    }
}
