//! The info port (HBase's 16030): a small HTTP/1.1 server for the status page (`/`) and
//! the Prometheus metrics (`/metrics`). GET and HEAD only, one request per connection,
//! requests bounded in size and time; everything else is answered with a status code.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::context::Context;
use super::{metrics, status};

const MAX_REQUEST: usize = 16 * 1024;

fn response(code: &str, kind: &str, body: &[u8], head: bool) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {code}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if !head {
        out.extend_from_slice(body);
    }
    out
}

async fn read_head(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = s.read(&mut chunk).await.ok()?;
        if n == 0 || buf.len() + n > MAX_REQUEST {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Some(buf)
}

async fn handle(mut s: TcpStream, ctx: Arc<Context>) {
    let Ok(Some(head)) = tokio::time::timeout(Duration::from_secs(10), read_head(&mut s)).await
    else {
        return;
    };
    let text = String::from_utf8_lossy(&head);
    let mut parts = text.lines().next().unwrap_or_default().split_whitespace();
    let (method, target) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let head_only = method == "HEAD";
    let path = target.split('?').next().unwrap_or_default();
    let reply = if method != "GET" && !head_only {
        response(
            "405 Method Not Allowed",
            "text/plain",
            b"GET or HEAD only\n",
            false,
        )
    } else {
        match path {
            "/" | "/rs-status" | "/master-status" => {
                let ctx2 = ctx.clone();
                let page = tokio::task::spawn_blocking(move || status::render(&ctx2)).await;
                match page {
                    Ok(p) => response(
                        "200 OK",
                        "text/html; charset=utf-8",
                        p.as_bytes(),
                        head_only,
                    ),
                    Err(_) => response(
                        "500 Internal Server Error",
                        "text/plain",
                        b"status page failed\n",
                        head_only,
                    ),
                }
            }
            "/metrics" | "/prometheus" => {
                let ctx2 = ctx.clone();
                match tokio::task::spawn_blocking(move || metrics::render(&ctx2)).await {
                    Ok(m) => response(
                        "200 OK",
                        "text/plain; version=0.0.4; charset=utf-8",
                        m.as_bytes(),
                        head_only,
                    ),
                    Err(_) => response(
                        "500 Internal Server Error",
                        "text/plain",
                        b"metrics failed\n",
                        head_only,
                    ),
                }
            }
            _ => response("404 Not Found", "text/plain", b"not found\n", head_only),
        }
    };
    let _ = s.write_all(&reply).await;
    let _ = s.shutdown().await;
}

pub async fn serve(listener: TcpListener, ctx: Arc<Context>, mut stop: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            r = listener.accept() => match r {
                Ok((s, _)) => {
                    tokio::spawn(handle(s, ctx.clone()));
                }
                Err(e) => {
                    tracing::warn!("info port accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
        }
    }
}
