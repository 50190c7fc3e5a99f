//! One connection to one server for one service: the preamble and connection header,
//! then calls multiplexed by call id — any number may be outstanding, and responses
//! are matched to their callers as they arrive. A broken connection fails every call
//! waiting on it (a retryable error) and is replaced on the next call.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use cellar_api::{Error, ErrorKind, Result};
use cellar_protocol::cell_block::Codec;
use cellar_protocol::convert::error_from_exception;
use cellar_protocol::frame::{self, Request, Response};
use cellar_protocol::pb;
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};

type Pending = Arc<Mutex<HashMap<u32, oneshot::Sender<Result<Response>>>>>;

/// The largest response frame accepted.
const MAX_RESPONSE: usize = 1 << 30;

fn broken(addr: &str, why: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Io, format!("connection to {addr} failed: {why}"))
}

pub struct RpcConnection {
    addr: String,
    codec: Option<Codec>,
    tx: mpsc::Sender<Vec<u8>>,
    pending: Pending,
    next_id: AtomicU32,
    closed: Arc<AtomicBool>,
}

fn lock(p: &Pending) -> std::sync::MutexGuard<'_, HashMap<u32, oneshot::Sender<Result<Response>>>> {
    p.lock().unwrap_or_else(|e| e.into_inner())
}

impl RpcConnection {
    /// Connects to `addr` for `service`, asking for cell blocks in `codec`.
    pub async fn connect(
        addr: &str,
        service: &str,
        codec: Option<Codec>,
        user: &str,
        timeout: Duration,
    ) -> Result<Arc<RpcConnection>> {
        let mut stream = tokio::time::timeout(timeout, TcpStream::connect(addr))
            .await
            .map_err(|_| broken(addr, "connect timed out"))?
            .map_err(|e| broken(addr, e))?;
        let _ = stream.set_nodelay(true);
        let header = pb::ConnectionHeader {
            user_info: Some(pb::UserInformation {
                effective_user: user.to_string(),
                real_user: None,
            }),
            service_name: Some(service.to_string()),
            cell_block_codec_class: codec.map(|c| c.class().to_string()),
            ..Default::default()
        };
        let mut hello = frame::preamble().to_vec();
        hello.extend_from_slice(&frame::encode_connection_header(&header));
        stream
            .write_all(&hello)
            .await
            .map_err(|e| broken(addr, e))?;
        let (rd, mut wr) = stream.into_split();
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(1024);
        let pending: Pending = Arc::default();
        let closed = Arc::new(AtomicBool::new(false));
        let conn = Arc::new(RpcConnection {
            addr: addr.to_string(),
            codec,
            tx,
            pending: pending.clone(),
            next_id: AtomicU32::new(0),
            closed: closed.clone(),
        });
        tokio::spawn(async move {
            while let Some(frame) = rx.recv().await {
                // Calls queued together go out in one write.
                let out = frame::coalesce(frame, || rx.try_recv().ok());
                if wr.write_all(&out).await.is_err() {
                    break;
                }
            }
            // The connection was dropped: tell the server, which then closes its end
            // (and the scanners this connection opened).
            let _ = wr.shutdown().await;
        });
        tokio::spawn(read_loop(
            tokio::io::BufReader::with_capacity(64 * 1024, rd),
            pending,
            closed,
            addr.to_string(),
        ));
        Ok(conn)
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub fn codec(&self) -> Option<Codec> {
        self.codec
    }

    /// Calls `method` and waits for its response message and cell block.
    pub async fn call<Q: Message, R: Message + Default>(
        &self,
        method: &str,
        req: &Q,
        cells: &[u8],
        timeout: Duration,
    ) -> Result<(R, Bytes)> {
        if self.is_closed() {
            return Err(broken(&self.addr, "connection closed"));
        }
        // Call ids stay below i32::MAX: HBase reports connection-level errors on -1.
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) & 0x7fff_ffff;
        let (done, wait) = oneshot::channel();
        lock(&self.pending).insert(id, done);
        let frame = Request::encode(id, method, req, cells);
        tracing::trace!(addr = %self.addr, method, id, "call");
        if self.tx.send(frame).await.is_err() {
            lock(&self.pending).remove(&id);
            return Err(broken(&self.addr, "connection closed"));
        }
        let resp = match tokio::time::timeout(timeout, wait).await {
            Ok(Ok(r)) => {
                if let Err(e) = &r {
                    tracing::trace!(addr = %self.addr, method, id, error = %e, "error response");
                }
                r?
            }
            Ok(Err(_)) => return Err(broken(&self.addr, "connection closed")),
            Err(_) => {
                lock(&self.pending).remove(&id);
                return Err(Error::new(
                    ErrorKind::Io,
                    format!("call {method} to {} timed out after {timeout:?}", self.addr),
                ));
            }
        };
        let msg = resp.param::<R>("response message").map_err(Error::from)?;
        Ok((msg, resp.cell_block))
    }
}

async fn read_loop(
    mut rd: tokio::io::BufReader<tokio::net::tcp::OwnedReadHalf>,
    pending: Pending,
    closed: Arc<AtomicBool>,
    addr: String,
) {
    let why = loop {
        let mut len = [0u8; 4];
        if let Err(e) = rd.read_exact(&mut len).await {
            break e.to_string();
        }
        let n = match frame::frame_len(len, MAX_RESPONSE) {
            Ok(n) => n,
            Err(e) => break e.to_string(),
        };
        let mut body = vec![0u8; n];
        if let Err(e) = rd.read_exact(&mut body).await {
            break e.to_string();
        }
        let resp = match Response::decode(Bytes::from(body)) {
            Ok(r) => r,
            Err(e) => break e.to_string(),
        };
        let id = resp.header.call_id.unwrap_or(u32::MAX);
        if let Some(x) = &resp.header.exception {
            let (err, _) = error_from_exception(x);
            if id == u32::MAX || id > 0x7fff_ffff {
                // A connection-level failure: every call on it fails.
                break err.message().to_string();
            }
            if let Some(w) = lock(&pending).remove(&id) {
                let _ = w.send(Err(err));
            }
            continue;
        }
        if let Some(w) = lock(&pending).remove(&id) {
            let _ = w.send(Ok(resp));
        }
    };
    closed.store(true, Ordering::Release);
    let waiting: Vec<_> = lock(&pending).drain().collect();
    for (_, w) in waiting {
        let _ = w.send(Err(broken(&addr, &why)));
    }
}
