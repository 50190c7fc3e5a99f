//! Engine benchmark: write throughput for 1, 4 and 16 writers under SYNC_WAL and
//! FSYNC_WAL (group commit lets many writers share one sync), and random Get and Scan
//! throughput. Each figure is reported with its ratio to the single-writer or
//! single-reader run measured in the same process, on the same disk.
//!
//! `cargo bench -p cellar --bench engine` (set CELLAR_BENCH_SECS to change the time per
//! measurement, default 3; CELLAR_BENCH_ONLY=writes or reads to run one half;
//! CELLAR_BENCH_DURABILITY=SYNC_WAL or FSYNC_WAL and CELLAR_BENCH_WRITERS=1,16 to run
//! some of the write measurements).

// A benchmark measures real time with real threads.
#![allow(clippy::disallowed_methods)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cellar::Database;
use cellar_region::{FamilyDescriptor, Get, Put, Scan, TableDescriptor};
use cellar_wal::Durability;

fn secs() -> Duration {
    Duration::from_secs_f64(
        std::env::var("CELLAR_BENCH_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3.0),
    )
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn rng(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// Runs `threads` workers for the measurement time; returns operations per second.
fn run_threads(threads: usize, op: Arc<dyn Fn(usize, u64) + Send + Sync>) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (stop, count, op) = (stop.clone(), count.clone(), op.clone());
            std::thread::spawn(move || {
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    op(t, i);
                    i += 1;
                    count.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    std::thread::sleep(secs());
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        let _ = h.join();
    }
    count.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64()
}

fn writes() {
    println!("## Writes (one 100-byte cell per Put)\n");
    println!("| durability | writers | puts/s | vs 1 writer | syncs per 1000 puts | µs per sync |");
    println!("|---|---:|---:|---:|---:|---:|");
    let only_durability = std::env::var("CELLAR_BENCH_DURABILITY").unwrap_or_default();
    let writer_counts: Vec<usize> = std::env::var("CELLAR_BENCH_WRITERS")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 4, 16]);
    for durability in [Durability::SyncWal, Durability::FsyncWal] {
        if !only_durability.is_empty() && only_durability != durability.name() {
            continue;
        }
        let mut base = 0.0;
        for &writers in &writer_counts {
            let dir = scratch(&format!("writes-{}-{writers}", durability.name()));
            let db = Database::open(&dir).expect("open");
            let mut t = TableDescriptor::new("t").with_family(FamilyDescriptor::new("f"));
            t.durability = durability;
            db.create_table(t).expect("create");
            let table = db.table("t").expect("table");
            let op: Arc<dyn Fn(usize, u64) + Send + Sync> = Arc::new(move |t, i| {
                let row = format!("w{t:02}-{i:09}");
                table
                    .put(Put::new(row).add_column("f", "q", vec![b'v'; 100]))
                    .expect("put");
            });
            let before = db.wal().stats();
            let lat_before = db.wal().sync_latency();
            let rate = run_threads(writers, op);
            let after = db.wal().stats();
            let lat_after = db.wal().sync_latency();
            let sync_us = 1e6 * (lat_after.sum_secs - lat_before.sum_secs)
                / (lat_after.count - lat_before.count).max(1) as f64;
            let puts = (after.appends - before.appends).max(1) as f64;
            let syncs = if durability == Durability::FsyncWal {
                after.fsyncs - before.fsyncs
            } else {
                after.writes - before.writes
            } as f64;
            if writers == 1 {
                base = rate;
            }
            println!(
                "| {} | {writers} | {rate:.0} | {:.2}x | {:.0} | {sync_us:.1} |",
                durability.name(),
                rate / base,
                1000.0 * syncs / puts
            );
            db.close().expect("close");
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    println!();
}

fn reads() {
    let rows = 200_000u64;
    let dir = scratch("reads");
    let db = Database::open(&dir).expect("open");
    let mut t = TableDescriptor::new("t").with_family(FamilyDescriptor::new("f"));
    t.durability = Durability::SkipWal;
    db.create_table(t).expect("create");
    let table = db.table("t").expect("table");
    for i in 0..rows {
        table
            .put(Put::new(format!("row{i:09}")).add_column("f", "q", vec![b'v'; 100]))
            .expect("put");
        if i % 50_000 == 49_999 {
            db.flush("t").expect("flush");
        }
    }
    db.compact("t", true).expect("compact");
    println!("## Reads ({rows} rows of one 100-byte cell, one store file, block cache warm)\n");
    println!("| operation | threads | ops/s | rows/s | vs 1 thread |");
    println!("|---|---:|---:|---:|---:|");
    for (name, scan_len) in [("random Get", 0u64), ("Scan of 100 rows", 100)] {
        let mut base = 0.0;
        for threads in [1usize, 2, 4] {
            let table = table.clone();
            let op: Arc<dyn Fn(usize, u64) + Send + Sync> = Arc::new(move |t, i| {
                let mut seed = (t as u64 + 1) * 0x9E37_79B9 + i;
                let k = rng(&mut seed) % rows;
                let row = format!("row{k:09}");
                if scan_len == 0 {
                    let r = table.get(&Get::new(row)).expect("get");
                    assert!(!r.is_empty());
                } else {
                    let n = table
                        .scan(&Scan::new().start_row(row).limit(scan_len))
                        .expect("scan")
                        .count();
                    assert!(n > 0);
                }
            });
            let rate = run_threads(threads, op);
            if threads == 1 {
                base = rate;
            }
            println!(
                "| {name} | {threads} | {rate:.0} | {:.0} | {:.2}x |",
                rate * scan_len.max(1) as f64,
                rate / base
            );
        }
    }
    let start = Instant::now();
    let n = table.scan(&Scan::new()).expect("scan").count();
    println!(
        "| full Scan | 1 | - | {:.0} | - |\n",
        n as f64 / start.elapsed().as_secs_f64()
    );
    db.close().expect("close");
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    // `cargo test --benches` passes --bench-less flags; only run when benchmarking.
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return;
    }
    println!(
        "# Cellar engine benchmark ({} s per measurement)\n",
        secs().as_secs_f64()
    );
    let only = std::env::var("CELLAR_BENCH_ONLY").unwrap_or_default();
    if only.is_empty() || only == "writes" {
        writes();
    }
    if only.is_empty() || only == "reads" {
        reads();
    }
}
