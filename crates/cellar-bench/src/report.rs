//! The benchmark report: a Markdown table (with each target's throughput as a ratio to
//! the first target's) and JSON.

use std::fmt::Write as _;

use crate::runner::{PhaseResult, RunSpec};

/// One target's load and run of one workload.
pub struct Entry {
    pub workload: char,
    pub load: PhaseResult,
    pub run: PhaseResult,
    pub disk_bytes: u64,
}

fn durability(fsync: bool) -> &'static str {
    if fsync {
        "every write fsynced (Cellar FSYNC_WAL, RocksDB sync=true)"
    } else {
        "every write logged to the OS, no fsync (Cellar SYNC_WAL, RocksDB WAL with sync=false)"
    }
}

pub fn table(results: &[Entry], spec: &RunSpec, fsync: bool) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "YCSB: {} records x {} fields x {} bytes, {} operations, {} threads; durability: {}\n",
        spec.records,
        spec.fields,
        spec.field_len,
        spec.operations,
        spec.threads,
        durability(fsync)
    );
    let _ = writeln!(
        s,
        "| workload | target | load ops/s | run ops/s | vs first | op | p50 µs | p95 µs | p99 µs | p99.9 µs | disk MiB |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|");
    let mut first: Option<(char, f64)> = None;
    for e in results {
        let base = match first {
            Some((w, b)) if w == e.workload => b,
            _ => {
                first = Some((e.workload, e.run.ops_per_sec));
                e.run.ops_per_sec
            }
        };
        for (i, (op, st)) in e.run.per_op.iter().enumerate() {
            if i == 0 {
                let _ = write!(
                    s,
                    "| {} | {} | {:.0} | {:.0} | {:.2}x |",
                    e.workload,
                    e.run.target,
                    e.load.ops_per_sec,
                    e.run.ops_per_sec,
                    e.run.ops_per_sec / base.max(1e-9)
                );
            } else {
                let _ = write!(s, "| | | | | |");
            }
            let _ = writeln!(
                s,
                " {op} | {} | {} | {} | {} | {} |",
                st.p50_us,
                st.p95_us,
                st.p99_us,
                st.p999_us,
                if i == 0 {
                    format!("{:.1}", e.disk_bytes as f64 / (1u64 << 20) as f64)
                } else {
                    String::new()
                }
            );
        }
    }
    s
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

pub fn json(results: &[Entry], spec: &RunSpec, fsync: bool) -> String {
    let mut s = String::from("{");
    let _ = write!(
        s,
        "\"records\":{},\"operations\":{},\"threads\":{},\"durability\":\"{}\",\"results\":[",
        spec.records,
        spec.operations,
        spec.threads,
        esc(durability(fsync))
    );
    for (i, e) in results.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let _ = write!(
            s,
            "{{\"workload\":\"{}\",\"target\":\"{}\",\"phases\":[\"{}\",\"{}\"],\"load_ops\":{},\"load_seconds\":{:.3},\"load_ops_per_sec\":{:.1},\"run_ops\":{},\"run_seconds\":{:.3},\"run_ops_per_sec\":{:.1},\"disk_bytes\":{},\"errors\":{},\"ops\":{{",
            e.workload,
            esc(&e.run.target),
            esc(&e.load.phase),
            esc(&e.run.phase),
            e.load.ops,
            e.load.seconds,
            e.load.ops_per_sec,
            e.run.ops,
            e.run.seconds,
            e.run.ops_per_sec,
            e.disk_bytes,
            e.load.errors + e.run.errors
        );
        for (j, (op, st)) in e.run.per_op.iter().enumerate() {
            if j > 0 {
                s.push(',');
            }
            let _ = write!(
                s,
                "\"{op}\":{{\"count\":{},\"mean_us\":{:.1},\"p50_us\":{},\"p95_us\":{},\"p99_us\":{},\"p999_us\":{}}}",
                st.count, st.mean_us, st.p50_us, st.p95_us, st.p99_us, st.p999_us
            );
        }
        s.push_str("}}");
    }
    s.push_str("]}\n");
    s
}
