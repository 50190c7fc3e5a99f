//! `cellar-bench`: YCSB core workloads A–F (load, then run) against Cellar embedded and,
//! built with `--features rocksdb`, RocksDB configured alike, in one run on one machine;
//! throughput, latency percentiles and bytes on disk as a table and as JSON, with each
//! target's ratio to the first. `--quick` is small enough for CI.

// A benchmark measures real time with real threads.
#![allow(clippy::disallowed_methods)]

mod report;
#[cfg(feature = "rocksdb")]
mod rocks;
mod runner;
mod scenarios;
mod server_target;
mod summary;
mod target;
mod ycsb;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use runner::RunSpec;
use ycsb::Workload;

#[derive(Parser, Debug)]
#[command(
    name = "cellar-bench",
    about = "YCSB core workloads against Cellar and its peers"
)]
struct Args {
    /// Workloads to run (letters A–F).
    #[arg(long, default_value = "ABCDEF")]
    workloads: String,
    /// Targets, comma-separated: cellar (embedded, NONE), cellar:FAST_DIFF (or any other
    /// data block encoding), server (a Cellar server in this
    /// process, through the network client), rocksdb (needs --features rocksdb).
    #[arg(long, default_value = "cellar")]
    targets: String,
    /// Records loaded before each workload.
    #[arg(long, default_value_t = 100_000)]
    records: u64,
    /// Operations per workload.
    #[arg(long, default_value_t = 100_000)]
    operations: u64,
    /// Client threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Fsync every write (FSYNC_WAL / sync=true) instead of writing it to the OS.
    #[arg(long)]
    fsync: bool,
    /// Block cache bytes for every target.
    #[arg(long, default_value_t = 256 << 20)]
    cache_bytes: usize,
    /// Working directory (a fresh subdirectory per target and workload).
    #[arg(long, default_value = "bench-data")]
    dir: PathBuf,
    /// Write the results as JSON to this file too.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Draw the run throughput of every workload and target as an SVG chart.
    #[arg(long)]
    chart: Option<PathBuf>,
    /// A small run (2,000 records, 2,000 operations) for CI.
    #[arg(long)]
    quick: bool,
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Keep each target's data directory after its run (to look at its files).
    #[arg(long)]
    keep: bool,
    /// Repeat every workload and target this many times; with more than one, a summary
    /// gives each ratio to the first target as min / median / max over the runs (the
    /// JSON file then holds an array of runs). A scenario is repeated as a whole, each
    /// run's table printed and the peers' ratios summed up the same way.
    #[arg(long, default_value_t = 1)]
    runs: usize,
    /// Run a seed scenario instead of YCSB: sensor or inbox.
    #[arg(long)]
    scenario: Option<String>,
}

/// mimalloc: the write and compaction paths allocate and free block-sized buffers and
/// millions of small cells; the system allocator gave the pages back and faulted them
/// in again (page clearing was a tenth of a YCSB load's profile).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let mut args = Args::parse();
    if args.quick {
        args.records = 2_000;
        args.operations = 2_000;
    }
    if let Some(sc) = &args.scenario {
        let dir = args.dir.join(sc);
        let _ = std::fs::remove_dir_all(&dir);
        let targets: Vec<String> = args
            .targets
            .split(',')
            .map(|s| s.trim().to_string())
            .collect();
        let (t, c, n) = (&targets, args.cache_bytes, args.runs);
        let res = match sc.as_str() {
            "sensor" if args.quick => scenarios::sensor(&dir, t, c, 20, 2, n),
            "sensor" => {
                // CELLAR_BENCH_SENSOR_HOURS shortens the day (to profile under valgrind).
                let hours = std::env::var("CELLAR_BENCH_SENSOR_HOURS")
                    .ok()
                    .and_then(|h| h.parse().ok())
                    .unwrap_or(24);
                scenarios::sensor(&dir, t, c, 500, hours, n)
            }
            "inbox" if args.quick => scenarios::inbox(&dir, t, c, 40, 50, 50, 1 << 20, n),
            "inbox" => scenarios::inbox(&dir, t, c, 70, 1000, 1000, 32 << 20, n),
            other => Err(format!("unknown scenario '{other}' (sensor, inbox)")),
        };
        let _ = std::fs::remove_dir_all(&dir);
        return match res {
            Ok(report) => {
                print!("{report}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("ERROR: {e}");
                ExitCode::from(2)
            }
        };
    }
    let mut workloads = Vec::new();
    for c in args.workloads.chars() {
        match Workload::core(c) {
            Some(w) => workloads.push(w),
            None => {
                eprintln!("ERROR: unknown workload '{c}' (A–F)");
                return ExitCode::from(2);
            }
        }
    }
    let spec = RunSpec {
        records: args.records,
        operations: args.operations,
        threads: args.threads.max(1),
        fields: 10,
        field_len: 100,
        seed: args.seed,
    };
    let targets: Vec<String> = args
        .targets
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    let mut runs = Vec::new();
    for _ in 0..args.runs.max(1) {
        let mut results = Vec::new();
        for w in &workloads {
            for t in &targets {
                match run_one(&args, w, t, &spec) {
                    Ok(e) => results.push(e),
                    Err(e) => {
                        eprintln!("ERROR: {e}");
                        return ExitCode::from(2);
                    }
                }
            }
        }
        print!("{}", report::table(&results, &spec, args.fsync));
        runs.push(results);
    }
    if runs.len() > 1 {
        print!("\n{}", summary::table(&runs));
    }
    let last: &[report::Entry] = runs.last().map(Vec::as_slice).unwrap_or_default();
    if let Some(path) = &args.json {
        let text = if runs.len() > 1 {
            let all: Vec<String> = runs
                .iter()
                .map(|r| report::json(r, &spec, args.fsync))
                .collect();
            format!("[{}]", all.join(","))
        } else {
            report::json(last, &spec, args.fsync)
        };
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("ERROR: {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    if let Some(path) = &args.chart {
        if let Err(e) = std::fs::write(path, report::svg_chart(last)) {
            eprintln!("ERROR: {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    let errors: u64 = runs
        .iter()
        .flatten()
        .map(|r| r.load.errors + r.run.errors)
        .sum();
    if errors > 0 {
        eprintln!("ERROR: {errors} operations failed");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// Loads and runs workload `w` on a fresh target `t`.
fn run_one(args: &Args, w: &Workload, t: &str, spec: &RunSpec) -> Result<report::Entry, String> {
    let dir = args.dir.join(format!("{t}-{}", w.name));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let target = target::open(t, &dir, args.fsync, args.cache_bytes)?;
    let load = runner::load(&target, spec);
    target.settle()?;
    let run = runner::run(&target, w, spec);
    if std::env::var_os("CELLAR_BENCH_CACHE_STATS").is_some() {
        if let Some(note) = target.cache_note() {
            eprintln!("{} {t}: {note}", w.name);
        }
    }
    let disk = target.disk_bytes();
    drop(target);
    if !args.keep {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(report::Entry {
        workload: w.name,
        load,
        run,
        disk_bytes: disk,
    })
}
