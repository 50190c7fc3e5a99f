//! Cross-table interference: the latency of Gets on table B while table A splits,
//! merges and alters over and over, against the same Gets with A idle, in one run.
//! Reports p50 / p99 / p99.9 / max of B's Gets in both phases and their ratio, and how
//! many region operations A went through.
//!
//! `cargo bench -p cellar --bench cross_table` (CELLAR_BENCH_SECS: seconds per phase,
//! default 5).

// A benchmark measures real time with real threads.
#![allow(clippy::disallowed_methods)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cellar::{Database, Options};
use cellar_region::{FamilyDescriptor, Get, Put, TableDescriptor};
use hdrhistogram::Histogram;

fn secs() -> Duration {
    Duration::from_secs_f64(
        std::env::var("CELLAR_BENCH_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(5.0),
    )
}

fn table(name: &str) -> TableDescriptor {
    TableDescriptor::new(name).with_family(FamilyDescriptor::new("f"))
}

fn load(db: &Database, name: &str, rows: u32) {
    let t = db.table(name).expect("table");
    for i in 0..rows {
        t.put(Put::new(format!("row{i:06}")).add_column("f", "q", vec![b'v'; 200]))
            .expect("put");
    }
    db.flush(name).expect("flush");
}

/// Gets on B for the phase time; the latency histogram in microseconds.
fn measure_gets(db: &Database) -> Histogram<u64> {
    let t = db.table("b").expect("table b");
    let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("histogram");
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let end = Instant::now() + secs();
    while Instant::now() < end {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let row = format!("row{:06}", seed % 2000);
        let start = Instant::now();
        let r = t.get(&Get::new(row)).expect("get");
        assert!(!r.is_empty());
        let _ = h.record(start.elapsed().as_micros().max(1) as u64);
        // Paced like a client with think time, so every phase sees the same load.
        std::thread::sleep(Duration::from_micros(200));
    }
    h
}

fn report(name: &str, h: &Histogram<u64>) {
    println!(
        "{name:<22} gets {:>7}  p50 {:>7} us  p99 {:>8} us  p99.9 {:>8} us  max {:>8} us",
        h.len(),
        h.value_at_quantile(0.5),
        h.value_at_quantile(0.99),
        h.value_at_quantile(0.999),
        h.max()
    );
}

fn main() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cross_table");
    let _ = std::fs::remove_dir_all(&dir);
    let mut opts = Options::for_dir(&dir).expect("options");
    opts.background = false;
    let db = Arc::new(Database::open_with(&dir, opts).expect("open"));
    db.create_table(table("a")).expect("create a");
    db.create_table(table("b")).expect("create b");
    load(&db, "a", 40_000);
    load(&db, "b", 2_000);

    let idle = measure_gets(&db);

    let stop = Arc::new(AtomicBool::new(false));
    let ops = Arc::new(AtomicU64::new(0));
    let churn = {
        let (db, stop, ops) = (db.clone(), stop.clone(), ops.clone());
        std::thread::spawn(move || {
            let a = db.table("a").expect("table a");
            let mut round = 0u64;
            while !stop.load(Ordering::Relaxed) {
                // Writes keep the split and merge flushes non-trivial.
                for i in 0..500u32 {
                    let row = format!("row{:06}", (round as u32 * 500 + i) % 40_000);
                    a.put(Put::new(row).add_column("f", "q", vec![b'w'; 200]))
                        .expect("put a");
                }
                db.split("a", Some(b"row020000")).expect("split");
                db.compact("a", true).expect("compact");
                db.merge_regions("a", b"row000000", b"row030000")
                    .expect("merge");
                db.compact("a", true).expect("compact");
                let versions = 1 + (round % 2) as u32;
                db.alter_table("a", |d| {
                    d.families[0].versions = versions;
                    Ok(())
                })
                .expect("alter");
                round += 1;
                ops.fetch_add(4, Ordering::Relaxed);
            }
        })
    };
    let busy = measure_gets(&db);
    stop.store(true, Ordering::Relaxed);
    churn.join().expect("churn thread");

    println!(
        "Gets on table b (2,000 rows), {} s per phase",
        secs().as_secs_f64()
    );
    report("table a idle", &idle);
    report("table a churning", &busy);
    println!(
        "region operations on a during the churn: {} (split, merge, alter, plus majors)",
        ops.load(Ordering::Relaxed)
    );
    println!(
        "p99 churn / idle: {:.2}x   max churn / idle: {:.2}x",
        busy.value_at_quantile(0.99) as f64 / idle.value_at_quantile(0.99).max(1) as f64,
        busy.max() as f64 / idle.max().max(1) as f64
    );
}
