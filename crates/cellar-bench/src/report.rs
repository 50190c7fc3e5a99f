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

/// A grouped bar chart (SVG) of run throughput per workload, one bar per target.
pub fn svg_chart(results: &[Entry]) -> String {
    let mut workloads: Vec<char> = results.iter().map(|e| e.workload).collect();
    workloads.dedup();
    let mut targets: Vec<String> = results.iter().map(|e| e.run.target.clone()).collect();
    targets.sort();
    targets.dedup();
    let max = results
        .iter()
        .map(|e| e.run.ops_per_sec)
        .fold(1.0f64, f64::max);
    let (w, h, left, top, bottom) = (720.0, 360.0, 70.0, 30.0, 50.0);
    let plot_h = h - top - bottom;
    let group_w = (w - left - 20.0) / workloads.len().max(1) as f64;
    let bar_w = (group_w * 0.8) / targets.len().max(1) as f64;
    let colors = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759"];
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{left}\" y=\"18\" font-size=\"14\">YCSB run throughput (ops/s)</text>\n"
    );
    for i in 0..=4 {
        let v = max * i as f64 / 4.0;
        let y = top + plot_h - plot_h * i as f64 / 4.0;
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#ddd\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{v:.0}</text>",
            w - 20.0,
            left - 6.0,
            y + 4.0
        );
    }
    for (gi, wl) in workloads.iter().enumerate() {
        let gx = left + gi as f64 * group_w + group_w * 0.1;
        for (ti, t) in targets.iter().enumerate() {
            if let Some(e) = results
                .iter()
                .find(|e| e.workload == *wl && &e.run.target == t)
            {
                let bh = plot_h * e.run.ops_per_sec / max;
                let x = gx + ti as f64 * bar_w;
                let _ = writeln!(
                    s,
                    "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" fill=\"{}\"><title>{} {}: {:.0} ops/s</title></rect>",
                    top + plot_h - bh,
                    bar_w - 2.0,
                    colors[ti % colors.len()],
                    wl,
                    esc(t),
                    e.run.ops_per_sec
                );
            }
        }
        let _ = writeln!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{wl}</text>",
            gx + group_w * 0.4,
            top + plot_h + 18.0
        );
    }
    for (ti, t) in targets.iter().enumerate() {
        let y = h - 12.0;
        let x = left + ti as f64 * 200.0;
        let _ = writeln!(
            s,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{y:.1}\">{}</text>",
            y - 9.0,
            colors[ti % colors.len()],
            x + 14.0,
            esc(t)
        );
    }
    s.push_str("</svg>\n");
    s
}
