//! Wide-row reads: (a) a Get of one column and of a one-hour ColumnRangeFilter slice from
//! rows of 1 thousand, 100 thousand and 1 million cells; (b) ColumnPaginationFilter pages
//! at increasing depth, offset form against cursor form; (c) peak memory of a process
//! streaming a row larger than 1 GiB with batch = 1000, against the row's size.
//!
//! `cargo bench -p cellar --bench wide_rows` (CELLAR_BENCH_QUICK=1 for a small run).

// A benchmark measures real time with real threads.
#![allow(clippy::disallowed_methods)]

use std::time::Instant;

use cellar::{Database, Options};
use cellar_region::{Config, FamilyDescriptor, FilterSpec, Get, Put, Scan, TableDescriptor};
use cellar_wal::Durability;

const CHILD: &str = "CELLAR_WIDE_CHILD";

fn quick() -> bool {
    std::env::var_os("CELLAR_BENCH_QUICK").is_some()
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn qual(i: u64) -> String {
    format!("{:08}", i * 10) // one reading every 10 s
}

fn open(dir: &std::path::Path, max_row_size: u64) -> Database {
    let mut opts = Options::for_dir(dir).expect("options");
    opts.config = Config {
        max_row_size,
        ..Config::default()
    };
    Database::open_with(dir, opts).expect("open")
}

fn load(db: &Database, row: &str, cells: u64, value: usize) {
    let t = db.table("t").expect("table");
    for i in 0..cells {
        t.put(
            Put::new(row)
                .add_column("d", qual(i), vec![b'v'; value])
                .durability(Durability::SkipWal),
        )
        .expect("put");
    }
}

fn micros<F: FnMut()>(reps: u32, mut f: F) -> f64 {
    f();
    let start = Instant::now();
    for _ in 0..reps {
        f();
    }
    start.elapsed().as_secs_f64() * 1e6 / reps as f64
}

fn widths() {
    let dir = scratch("wide-widths");
    let db = open(&dir, 1 << 30);
    db.create_table(TableDescriptor::new("t").with_family(FamilyDescriptor::new("d")))
        .expect("create");
    let sizes: &[u64] = if quick() {
        &[1_000, 10_000]
    } else {
        &[1_000, 100_000, 1_000_000]
    };
    for n in sizes {
        load(&db, &format!("row{n}"), *n, 8);
    }
    db.flush("t").expect("flush");
    db.compact("t", true).expect("compact");
    let t = db.table("t").expect("table");
    println!("## (a) Reads inside rows of growing width (8-byte cells, every 10 s)\n");
    println!("| row cells | Get one column | vs 1K row | Get 1-hour ColumnRangeFilter (360 cells) | vs 1K row |");
    println!("|---:|---:|---:|---:|---:|");
    let mut base = (0.0, 0.0);
    for n in sizes {
        let row = format!("row{n}");
        let mid = n / 2;
        let one = micros(200, || {
            let r = t
                .get(&Get::new(row.as_str()).add_column("d", qual(mid)))
                .expect("get");
            assert_eq!(r.cells.len(), 1);
        });
        let lo = qual(mid.saturating_sub(400).min(n.saturating_sub(360)));
        let hi_i = lo.parse::<u64>().unwrap_or(0) / 10 + 360;
        let slice = FilterSpec::ColumnRange {
            min: Some(lo.into_bytes()),
            min_inclusive: true,
            max: Some(qual(hi_i).into_bytes()),
            max_inclusive: false,
        };
        let range = micros(50, || {
            let r = t
                .get(&Get::new(row.as_str()).filter(slice.clone()))
                .expect("get");
            assert_eq!(r.cells.len(), 360.min(*n as usize));
        });
        if *n == sizes[0] {
            base = (one, range);
        }
        println!(
            "| {n} | {one:.1} µs | {:.2}x | {range:.1} µs | {:.2}x |",
            one / base.0,
            range / base.1
        );
    }
    println!();
    // (b) pagination depth on the widest row.
    let n = *sizes.last().unwrap_or(&1000);
    let row = format!("row{n}");
    println!("## (b) ColumnPaginationFilter, pages of 100 at increasing depth ({n}-cell row)\n");
    println!("| depth | offset form | cursor form | offset / cursor |");
    println!("|---:|---:|---:|---:|");
    for depth in [0, n / 100, n / 10, n * 9 / 10] {
        let by_offset = FilterSpec::ColumnPagination {
            limit: 100,
            offset: depth as u32,
            column_offset: None,
        };
        let by_cursor = FilterSpec::ColumnPagination {
            limit: 100,
            offset: 0,
            column_offset: Some(qual(depth).into_bytes()),
        };
        let reps = 20;
        let a = micros(reps, || {
            let r = t
                .get(&Get::new(row.as_str()).filter(by_offset.clone()))
                .expect("get");
            assert_eq!(r.cells.len(), 100);
        });
        let b = micros(reps, || {
            let r = t
                .get(&Get::new(row.as_str()).filter(by_cursor.clone()))
                .expect("get");
            assert_eq!(r.cells.len(), 100);
        });
        println!("| {depth} | {a:.1} µs | {b:.1} µs | {:.1}x |", a / b);
    }
    println!();
    db.close().expect("close");
    let _ = std::fs::remove_dir_all(&dir);
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

/// The child: opens the database and streams the huge row, printing its peak memory.
fn child(dir: &str, mode: &str) {
    let db = open(std::path::Path::new(dir), 1 << 30);
    let t = db.table("t").expect("table");
    let before = peak_rss_kib();
    let start = Instant::now();
    let mut cells = 0u64;
    let mut results = 0u64;
    let scan = match mode {
        "batch" => Scan::new().batch(1000).cache_blocks(false),
        "batch-cached" => Scan::new().batch(1000),
        _ => Scan::new(),
    };
    let mut outcome = String::from("ok");
    for r in t.scan(&scan).expect("scan") {
        match r {
            Ok(r) => {
                cells += r.cells.len() as u64;
                results += 1;
            }
            Err(e) => {
                outcome = e.to_string().chars().take(40).collect();
                break;
            }
        }
    }
    println!(
        "{mode} {cells} {results} {:.1} {before} {} {outcome}",
        start.elapsed().as_secs_f64(),
        peak_rss_kib()
    );
}

fn huge_row() {
    let (cells, value) = if quick() {
        (20_000u64, 1024usize)
    } else {
        (1_100_000u64, 1000usize)
    };
    let dir = scratch("wide-huge");
    {
        let db = open(&dir, 1 << 30);
        db.create_table(TableDescriptor::new("t").with_family(FamilyDescriptor::new("d")))
            .expect("create");
        load(&db, "huge", cells, value);
        // One store file, as in (a): a compaction left pending would run in the child
        // beside the scan, and its memory would be counted as the scan's.
        db.flush("t").expect("flush");
        db.compact("t", true).expect("compact");
        db.close().expect("close");
    }
    let row_bytes = cells * (value as u64 + 40);
    println!(
        "## (c) Streaming one row of {cells} cells ({:.2} GiB) in a fresh process\n",
        row_bytes as f64 / (1u64 << 30) as f64
    );
    println!(
        "| read | cells returned | Results | seconds | peak RSS before the scan | peak RSS | peak RSS / row size | outcome |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---|");
    let exe = std::env::current_exe().expect("exe");
    for mode in ["batch", "batch-cached", "whole"] {
        let out = std::process::Command::new(&exe)
            .env(CHILD, format!("{}|{mode}", dir.display()))
            .output()
            .expect("child");
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().last().unwrap_or("");
        let f: Vec<&str> = line.splitn(7, ' ').collect();
        if f.len() < 7 {
            println!(
                "| {mode} | child failed: {} |",
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            );
            continue;
        }
        let opened: u64 = f[4].parse().unwrap_or(0);
        let peak: u64 = f[5].parse().unwrap_or(0);
        println!(
            "| {} | {} | {} | {} | {:.1} MiB | {:.1} MiB | {:.3} | {} |",
            match mode {
                "batch" => "Scan, batch = 1000, CACHE_BLOCKS false",
                "batch-cached" => "Scan, batch = 1000, blocks cached (410 MiB cache)",
                _ => "Scan, whole rows",
            },
            f[1],
            f[2],
            f[3],
            opened as f64 / 1024.0,
            peak as f64 / 1024.0,
            peak as f64 * 1024.0 / row_bytes as f64,
            f[6]
        );
    }
    println!();
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    if let Ok(spec) = std::env::var(CHILD) {
        let (dir, mode) = spec.split_once('|').unwrap_or((spec.as_str(), "batch"));
        child(dir, mode);
        return;
    }
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return;
    }
    println!("# Wide-row reads\n");
    // CELLAR_BENCH_ONLY=widths or =huge runs one part.
    let only = std::env::var("CELLAR_BENCH_ONLY").unwrap_or_default();
    if only != "huge" {
        widths();
    }
    if only != "widths" {
        huge_row();
    }
}
