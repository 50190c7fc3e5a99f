//! One client connection: the six-byte preamble, the connection header (user, service,
//! cell-block codec), then call frames read in a loop and answered (Gets on the
//! connection's task, other calls on blocking threads), responses written in the order
//! they finish (HBase clients match them by
//! call id). Limits apply here: a frame over `hbase.ipc.max.request.size` is answered
//! with RequestTooBigException and the connection closed; calls beyond the server's or
//! the connection's in-flight limit get CallQueueTooBigException. A bad preamble or
//! header gets a FatalConnectionException and the connection closes; a frame that
//! does not parse closes the connection. Nothing a client sends affects any other
//! connection. When the connection goes, its open scanners are closed.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use cellar_api::{Error, ErrorKind};
use cellar_protocol::cell_block::Codec;
use cellar_protocol::frame::{self, FrameError, Request, Response, PREAMBLE_LEN};
use cellar_protocol::{pb, service};
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch, Semaphore};

use super::context::Context;
use super::dispatch::{answer, reject, ConnInfo};

const FATAL: &str = "org.apache.hadoop.hbase.ipc.FatalConnectionException";
const TOO_BIG: &str = "org.apache.hadoop.hbase.exceptions.RequestTooBigException";
const NOT_SECURE: &str = "org.apache.hadoop.hbase.ipc.SecurityNotEnabledException";
const DO_NOT_RETRY: &str = "org.apache.hadoop.hbase.DoNotRetryIOException";
const QUEUE_FULL: &str = "org.apache.hadoop.hbase.CallQueueTooBigException";
/// HBase answers connection-level failures on call id -1.
const NO_CALL: u32 = u32::MAX;
/// How long a client may take to send its preamble and header.
const HELLO_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest connection header accepted.
const MAX_HEADER: usize = 1 << 20;

const SERVICES: &[&str] = &[
    service::CLIENT,
    service::MASTER,
    service::ADMIN,
    service::CLIENT_META,
];

async fn fatal(stream: &mut TcpStream, message: String) {
    let frame = reject(
        NO_CALL,
        Error::new(ErrorKind::InvalidRequest, message),
        FATAL,
        true,
    );
    let _ = stream.write_all(&frame).await;
    let _ = stream.shutdown().await;
}

/// Reads the preamble and connection header; `None` when the connection was refused.
async fn hello(stream: &mut TcpStream, id: u64, cluster_id: &str) -> Option<ConnInfo> {
    let mut pre = [0u8; PREAMBLE_LEN];
    stream.read_exact(&mut pre).await.ok()?;
    if &pre == frame::SECURITY_PREAMBLE {
        // Security is off: say so, and wait for the real preamble (as HBase does).
        let e = Error::new(ErrorKind::InvalidRequest, "security is not enabled");
        let frame = reject(NO_CALL, e, NOT_SECURE, true);
        stream.write_all(&frame).await.ok()?;
        stream.read_exact(&mut pre).await.ok()?;
    }
    if &pre == frame::REGISTRY_PREAMBLE {
        let resp = pb::GetConnectionRegistryResponse {
            cluster_id: cluster_id.to_string(),
        };
        let frame = Response::encode_ok(NO_CALL, &resp, &[]);
        let _ = stream.write_all(&frame).await;
        let _ = stream.shutdown().await;
        return None;
    }
    if let Err(e) = frame::check_preamble(&pre) {
        tracing::debug!(connection = id, "refused: {e}");
        fatal(stream, e.to_string()).await;
        return None;
    }
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).await.ok()?;
    let len = match frame::frame_len(len, MAX_HEADER) {
        Ok(l) => l,
        Err(e) => {
            fatal(stream, e.to_string()).await;
            return None;
        }
    };
    let mut body = vec![0u8; len];
    stream.read_exact(&mut body).await.ok()?;
    let header = match frame::decode_connection_header(&body) {
        Ok(h) => h,
        Err(e) => {
            fatal(stream, e.to_string()).await;
            return None;
        }
    };
    let svc = header.service_name.clone().unwrap_or_default();
    let short = svc.rsplit('.').next().unwrap_or_default();
    if !SERVICES.contains(&short) {
        fatal(
            stream,
            format!("UnknownServiceException: Unknown service {svc}"),
        )
        .await;
        return None;
    }
    let codec = match Codec::from_class(header.cell_block_codec_class.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            fatal(stream, format!("UnsupportedCellCodecException: {e}")).await;
            return None;
        }
    };
    if header
        .cell_block_compressor_class
        .as_deref()
        .is_some_and(|c| !c.is_empty())
    {
        fatal(
            stream,
            format!(
                "UnsupportedCompressionCodecException: {}",
                header.cell_block_compressor_class.unwrap_or_default()
            ),
        )
        .await;
        return None;
    }
    let user = header
        .user_info
        .as_ref()
        .map(|u| u.effective_user.clone())
        .unwrap_or_default();
    tracing::debug!(connection = id, service = %svc, %user, codec = ?codec, "connection open");
    Some(ConnInfo {
        id,
        service: svc,
        codec,
    })
}

/// What reading the next frame gave.
enum Next {
    Frame(Bytes),
    Eof,
    TooBig { call_id: u32, len: usize },
    Broken,
}

async fn read_frame(
    rd: &mut tokio::io::BufReader<tokio::net::tcp::OwnedReadHalf>,
    max: usize,
) -> Next {
    let mut len = [0u8; 4];
    match rd.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Next::Eof,
        Err(_) => return Next::Broken,
    }
    let n = u32::from_be_bytes(len) as usize;
    if n > max {
        // Read enough to learn the call id, so the client can be told which call.
        let mut head = vec![0u8; n.min(4096)];
        let got = rd.read(&mut head).await.unwrap_or(0);
        let mut buf = Bytes::from(head[..got].to_vec());
        let call_id = prost::encoding::decode_varint(&mut buf)
            .ok()
            .and_then(|l| buf.get(..l as usize).map(|b| b.to_vec()))
            .and_then(|b| pb::RequestHeader::decode(&b[..]).ok())
            .and_then(|h| h.call_id)
            .unwrap_or(NO_CALL);
        return Next::TooBig { call_id, len: n };
    }
    let mut body = vec![0u8; n];
    if rd.read_exact(&mut body).await.is_err() {
        return Next::Broken;
    }
    Next::Frame(Bytes::from(body))
}

/// A Get never waits on a row lock or a log sync, and its work is bounded by one row:
/// it is answered on the connection's own task, which saves two thread hand-offs per
/// call (a Get is a few microseconds of work; the hand-offs cost more). Everything
/// else may block — row locks, log syncs, a filtered scan looking through a region
/// for up to the scanner time limit — and runs on the blocking pool, where concurrent
/// writes share their log syncs and no runtime worker is held up.
fn runs_inline(info: &ConnInfo, req: &Request) -> bool {
    info.service.ends_with(service::CLIENT) && req.header.method_name.as_deref() == Some("Get")
}

/// Serves one connection until the client leaves, breaks the protocol, or the server
/// shuts down.
pub async fn serve(
    mut stream: TcpStream,
    ctx: Arc<Context>,
    id: u64,
    mut stop: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let info =
        match tokio::time::timeout(HELLO_TIMEOUT, hello(&mut stream, id, &ctx.cluster_id)).await {
            Ok(Some(i)) => Arc::new(i),
            _ => return,
        };
    let (rd, mut wr) = stream.into_split();
    let mut rd = tokio::io::BufReader::with_capacity(64 * 1024, rd);
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(256);
    let writer = tokio::spawn(async move {
        while let Some(frame) = rx.recv().await {
            // Responses that are ready together go out in one write.
            let out = frame::coalesce(frame, || rx.try_recv().ok());
            if wr.write_all(&out).await.is_err() {
                break;
            }
        }
        let _ = wr.shutdown().await;
    });
    let permits = Arc::new(Semaphore::new(ctx.max_connection_calls));
    let mut calls = tokio::task::JoinSet::new();
    loop {
        let next = tokio::select! {
            _ = stop.changed() => break,
            n = read_frame(&mut rd, ctx.max_request_size) => n,
        };
        let body = match next {
            Next::Frame(b) => b,
            Next::Eof => break,
            Next::Broken => {
                ctx.counters.bad_frames.fetch_add(1, Ordering::Relaxed);
                break;
            }
            Next::TooBig { call_id, len } => {
                ctx.counters.bad_frames.fetch_add(1, Ordering::Relaxed);
                let msg = format!(
                    "RPC data length of {len} received from client is greater than max allowed {}. Set \"hbase.ipc.max.request.size\" on server to override this limit (not recommended)",
                    ctx.max_request_size
                );
                let _ = tx
                    .send(reject(
                        call_id,
                        Error::new(ErrorKind::InvalidRequest, msg),
                        TOO_BIG,
                        true,
                    ))
                    .await;
                break;
            }
        };
        let req = match Request::decode_call(body) {
            Ok(r) => r,
            Err(FrameError::Header(e)) => {
                tracing::debug!(connection = id, "bad call header, closing: {e}");
                ctx.counters.bad_frames.fetch_add(1, Ordering::Relaxed);
                break;
            }
            Err(FrameError::Call(bad)) => {
                // The frame held together: fail this call only, as HBase does.
                ctx.counters.bad_frames.fetch_add(1, Ordering::Relaxed);
                let call_id = bad.header.call_id.unwrap_or(0);
                let msg = format!("unable to read call parameter: {}", bad.error);
                tracing::debug!(connection = id, call_id, "{msg}");
                let e = Error::new(ErrorKind::InvalidRequest, msg);
                let _ = tx.send(reject(call_id, e, DO_NOT_RETRY, true)).await;
                continue;
            }
        };
        let call_id = req.header.call_id.unwrap_or(0);
        let in_flight = ctx.counters.calls_in_flight.fetch_add(1, Ordering::AcqRel);
        let permit = permits.clone().try_acquire_owned();
        let (Ok(permit), true) = (permit, in_flight < ctx.max_calls) else {
            ctx.counters.calls_in_flight.fetch_sub(1, Ordering::AcqRel);
            ctx.counters.calls_rejected.fetch_add(1, Ordering::Relaxed);
            let e = Error::new(
                ErrorKind::RegionTooBusy,
                "Call queue is full, is hbase.ipc.server.max.callqueue.length too small?",
            );
            let _ = tx.send(reject(call_id, e, QUEUE_FULL, false)).await;
            continue;
        };
        ctx.counters.calls_total.fetch_add(1, Ordering::Relaxed);
        if runs_inline(&info, &req) {
            let frame = answer(&ctx, &info, &req);
            ctx.counters.calls_in_flight.fetch_sub(1, Ordering::AcqRel);
            drop(permit);
            if tx.send(frame).await.is_err() {
                break;
            }
            continue;
        }
        let (ctx2, info2, tx2) = (ctx.clone(), info.clone(), tx.clone());
        // The engine's calls block (row locks, log syncs): they run on the blocking
        // pool, and hand their response straight to the writer.
        calls.spawn_blocking(move || {
            let frame = answer(&ctx2, &info2, &req);
            ctx2.counters.calls_in_flight.fetch_sub(1, Ordering::AcqRel);
            drop(permit);
            let _ = tx2.blocking_send(frame);
        });
        while calls.try_join_next().is_some() {}
    }
    // Calls already running finish and are answered; then the writer drains.
    while calls.join_next().await.is_some() {}
    drop(tx);
    let _ = writer.await;
    let closed = ctx.scanners.close_owned_by(id);
    if closed > 0 {
        tracing::debug!(
            connection = id,
            scanners = closed,
            "closed the scanners of a departed client"
        );
    }
}
