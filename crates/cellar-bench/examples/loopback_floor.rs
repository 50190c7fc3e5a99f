//! The floor under any RPC on this machine: client threads sending a request of the
//! size of a YCSB read (64 bytes) over loopback TCP and waiting for a reply of the size
//! of its answer (ten 100-byte cells in a cell block, about 1,100 bytes) from a server
//! that does no work at all. The `server` benchmark target cannot beat these figures;
//! `docs/benchmarks.md` compares them with embedded throughput.
//!
//! `cargo run --release -p cellar-bench --example loopback_floor [THREADS] [CALLS]`
//!
//! Two shapes are measured: a connection per client thread (a server thread per
//! connection), and one connection shared by all client threads (calls tagged with
//! the caller, a reader thread handing each reply to its caller), as cellar-client
//! and HBase's Java client share one.
#![allow(clippy::disallowed_methods)] // a benchmark: real threads and a real clock

use std::io::{BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

const REQUEST: usize = 64;
const REPLY: usize = 1100;

type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// A server answering every request with a reply; requests read in batches, replies
/// of one batch written together.
fn serve(listener: TcpListener) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else { return };
        std::thread::spawn(move || -> Res<()> {
            stream.set_nodelay(true)?;
            let mut wr = stream.try_clone()?;
            let mut rd = BufReader::with_capacity(64 * 1024, stream);
            let mut req = [0u8; REQUEST];
            let mut out = Vec::new();
            loop {
                rd.read_exact(&mut req)?;
                let mut reply = [7u8; REPLY];
                reply[0] = req[0];
                out.extend_from_slice(&reply);
                if rd.buffer().len() < REQUEST {
                    wr.write_all(&out)?;
                    out.clear();
                }
            }
        });
    }
}

fn connection_per_thread(addr: std::net::SocketAddr, threads: usize, calls: usize) -> Res<f64> {
    let start = Instant::now();
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            std::thread::spawn(move || -> Res<()> {
                let mut s = TcpStream::connect(addr)?;
                s.set_nodelay(true)?;
                let mut reply = [0u8; REPLY];
                for _ in 0..calls / threads {
                    s.write_all(&[1u8; REQUEST])?;
                    s.read_exact(&mut reply)?;
                }
                Ok(())
            })
        })
        .collect();
    for w in workers {
        w.join().map_err(|_| "client thread panicked")??;
    }
    Ok(calls as f64 / start.elapsed().as_secs_f64())
}

fn shared_connection(addr: std::net::SocketAddr, threads: usize, calls: usize) -> Res<f64> {
    let s = TcpStream::connect(addr)?;
    s.set_nodelay(true)?;
    let writer = Arc::new(Mutex::new(s.try_clone()?));
    let mut waiters = Vec::new();
    let mut receivers = Vec::new();
    for _ in 0..threads {
        let (tx, rx) = mpsc::channel::<()>();
        waiters.push(tx);
        receivers.push(rx);
    }
    std::thread::spawn(move || -> Res<()> {
        let mut rd = BufReader::with_capacity(64 * 1024, s);
        let mut reply = [0u8; REPLY];
        loop {
            rd.read_exact(&mut reply)?;
            if let Some(w) = waiters.get(reply[0] as usize) {
                let _ = w.send(());
            }
        }
    });
    let start = Instant::now();
    let workers: Vec<_> = receivers
        .into_iter()
        .enumerate()
        .map(|(i, rx)| {
            let writer = writer.clone();
            std::thread::spawn(move || -> Res<()> {
                let mut req = [1u8; REQUEST];
                req[0] = i as u8;
                for _ in 0..calls / threads {
                    writer
                        .lock()
                        .map_err(|_| "writer lock poisoned")?
                        .write_all(&req)?;
                    rx.recv()?;
                }
                Ok(())
            })
        })
        .collect();
    for w in workers {
        w.join().map_err(|_| "client thread panicked")??;
    }
    Ok(calls as f64 / start.elapsed().as_secs_f64())
}

fn main() -> Res<()> {
    let mut args = std::env::args().skip(1);
    let threads: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(16);
    let calls: usize = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(200_000);
    if !(1..=255).contains(&threads) {
        return Err("THREADS must be 1 to 255".into());
    }
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    std::thread::spawn(move || serve(listener));
    let per_thread = connection_per_thread(addr, threads, calls)?;
    let shared = shared_connection(addr, threads, calls)?;
    println!("{threads} client threads, {REQUEST}-byte requests, {REPLY}-byte replies, a server doing no work:");
    println!("  a connection per thread:   {per_thread:>9.0} calls/s");
    println!("  one shared connection:     {shared:>9.0} calls/s");
    Ok(())
}
