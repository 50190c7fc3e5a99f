//! What large-row tracking costs: flush and major-compaction time of the same data with
//! `cellar.largerow.tracking` on and off (goal: under 5% slower with it on). The data:
//! 20 wide rows of 10,000 cells and 100,000 narrow rows of 2 cells, 64-byte values,
//! flushed in two halves (each followed by one Get inside the timing), then
//! major-compacted, on an in-memory file system (after an untimed first flush: the
//! system table is made once per database). Each configuration runs `ROUNDS` times,
//! alternating which goes first; the medians and their ratio are printed.
//!
//! `cargo bench -p cellar --bench large_row_tracking` (CELLAR_BENCH_QUICK=1: smaller).

// A benchmark measures real time with real threads.
#![allow(clippy::disallowed_methods)]

use std::time::Instant;

use cellar::{Database, Options};
use cellar_region::{Config, FamilyDescriptor, Put, TableDescriptor};
use cellar_wal::Durability;

const ROUNDS: usize = 7;

fn quick() -> bool {
    std::env::var_os("CELLAR_BENCH_QUICK").is_some()
}

fn load(db: &Database, half: u32, scale: u32) {
    let t = db.table("t").expect("table");
    let value = vec![b'v'; 64];
    for w in 0..20 {
        for i in 0..(5_000 / scale) {
            let q = format!("{half}-{i:06}");
            t.put(
                Put::new(format!("wide{w:02}"))
                    .add_column("d", q.as_str(), value.clone())
                    .durability(Durability::SkipWal),
            )
            .expect("put");
        }
    }
    for r in 0..(100_000 / scale) {
        t.put(
            Put::new(format!("narrow{r:07}"))
                .add_column("d", format!("q{half}").as_str(), value.clone())
                .durability(Durability::SkipWal),
        )
        .expect("put");
    }
}

/// (flush seconds, major compaction seconds) of one run.
fn run(tracking: bool, watch: u64, scale: u32) -> (f64, f64) {
    // In memory: the figure is the work tracking adds, not the disk's moods.
    let dir = std::path::PathBuf::from("/bench");
    let mut opts = Options {
        fs: std::sync::Arc::new(cellar_io::MemoryFs::new()),
        clock: std::sync::Arc::new(cellar_io::SystemClock),
        executor: std::sync::Arc::new(cellar_io::Threads),
        config: Config::default(),
        background: false,
        lock: false,
    };
    let mut config = Config {
        memstore_flush_size: 1 << 30,
        ..Config::default()
    };
    config.large_row_levels.enabled = tracking;
    config.large_row_levels.watch_bytes = watch;
    opts.config = config;
    let db = Database::open_with(&dir, opts).expect("open");
    db.create_table(TableDescriptor::new("t").with_family(FamilyDescriptor::new("d")))
        .expect("create");
    // A first round untimed: the system table `cellar:large_rows` is made once per
    // database, not per flush.
    load(&db, 9, scale * 10);
    db.flush("t").expect("flush");
    let mut flush = 0.0;
    for half in 0..2 {
        load(&db, half, scale);
        let start = Instant::now();
        db.flush("t").expect("flush");
        // A read right after: the flushed MemStore's memory is released when a reader
        // next passes (deferred reclamation), so without it whichever configuration
        // reads first after the flush pays for the release inside its own timing.
        let _ = db
            .table("t")
            .expect("t")
            .get(&cellar_region::Get::new("narrow0000001"));
        flush += start.elapsed().as_secs_f64();
    }
    let start = Instant::now();
    db.compact("t", true).expect("compact");
    let compact = start.elapsed().as_secs_f64();
    db.close().expect("close");
    (flush, compact)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let scale = if quick() { 10 } else { 1 };
    for (what, watch) in [
        ("no row at the watch level (the summing alone)", u64::MAX),
        ("the 20 wide rows tracked", 256 << 10),
    ] {
        println!("{what}:");
        let (mut on, mut off) = (Vec::new(), Vec::new());
        run(true, watch, scale);
        for round in 0..ROUNDS {
            // Alternate which goes first, so neither always runs on a warmer machine.
            if round % 2 == 0 {
                off.push(run(false, watch, scale));
                on.push(run(true, watch, scale));
            } else {
                on.push(run(true, watch, scale));
                off.push(run(false, watch, scale));
            }
        }
        for (phase, pick) in [
            ("flush", (|r: &(f64, f64)| r.0) as fn(&(f64, f64)) -> f64),
            ("major compaction", |r: &(f64, f64)| r.1),
            ("both", |r: &(f64, f64)| r.0 + r.1),
        ] {
            let a = median(off.iter().map(pick).collect());
            let b = median(on.iter().map(pick).collect());
            println!(
                "  {phase}: tracking off {:.1} ms, on {:.1} ms (median of {ROUNDS}): on/off = {:.3}",
                a * 1e3,
                b * 1e3,
                b / a
            );
        }
    }
}
