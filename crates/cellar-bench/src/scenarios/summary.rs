//! Several runs of a scenario summed up: every peer's figures as ratios to Cellar's in
//! the same run (sensor: Cellar FAST_DIFF of the same layout; inbox: Cellar on the same
//! day), with the minimum, median and maximum over the runs. Above 1 the peer is faster
//! or, for bytes, larger.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{InboxRun, SensorRow};
use crate::summary::spread;

/// "min / median / max" of `v`, or a dash when no run had the figure.
fn ratios(v: Vec<f64>) -> String {
    if v.is_empty() {
        return "-".into();
    }
    let (lo, mid, hi) = spread(v);
    format!("{lo:.2} / {mid:.2} / {hi:.2}x")
}

/// The sensor runs' summary table.
pub fn sensor(runs: &[Vec<SensorRow>]) -> String {
    // (peer, layout) → per figure, its ratio in each run.
    let mut by: BTreeMap<(String, &str), [Vec<f64>; 4]> = BTreeMap::new();
    for rows in runs {
        for o in rows.iter().filter(|r| r.target != "cellar") {
            let base = rows.iter().find(|r| {
                r.target == "cellar" && r.layout == o.layout && r.encoding == "FAST_DIFF"
            });
            let Some(b) = base else { continue };
            let e = by.entry((o.target.clone(), o.layout)).or_default();
            e[0].push(o.rate / b.rate);
            e[1].push(o.bytes_per_cell / b.bytes_per_cell);
            e[2].push(b.latest_us / o.latest_us);
            e[3].push(b.hour_us / o.hour_us);
        }
    }
    let mut out = String::new();
    if by.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "Summary of {} runs: peer / Cellar FAST_DIFF of the same layout and run, min / median / max (above 1: the peer is faster or, for bytes, larger)\n",
        runs.len()
    );
    let _ = writeln!(
        out,
        "| target | layout | ingest | bytes/cell | latest 100 | one hour |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|");
    for ((target, layout), [ingest, bytes, latest, hour]) in by {
        let _ = writeln!(
            out,
            "| {target} | {layout} | {} | {} | {} | {} |",
            ratios(ingest),
            ratios(bytes),
            ratios(latest),
            ratios(hour)
        );
    }
    out.push('\n');
    out
}

/// The inbox runs' summary table: per peer and day, Cellar's time over the peer's for
/// the whole-row Get (runs where both returned the row), the cursor page and the
/// month-bucket Get.
pub fn inbox(runs: &[InboxRun]) -> String {
    let mut by: BTreeMap<(String, u64), [Vec<f64>; 4]> = BTreeMap::new();
    for run in runs {
        for o in run.rows.iter().filter(|r| r.target != "cellar") {
            let Some(b) = run
                .rows
                .iter()
                .find(|r| r.target == "cellar" && r.day == o.day)
            else {
                continue;
            };
            let e = by.entry((o.target.clone(), o.day)).or_default();
            if let (Some((_, bf, bw)), Some((_, of, ow))) = (b.whole, o.whole) {
                e[0].push(bw / ow);
                e[1].push(bf / of);
            }
            e[2].push(b.paged_us / o.paged_us);
            if let (Some(bb), Some(ob)) = (b.bucket_us, o.bucket_us) {
                e[3].push(bb / ob);
            }
        }
    }
    let mut out = String::new();
    if by.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "Summary of {} runs: Cellar's time / the peer's on the same day and run, min / median / max (above 1: the peer is faster)\n",
        runs.len()
    );
    let _ = writeln!(
        out,
        "| target | day | whole-row Get | its first call | paged Get | month-bucket Get |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|");
    for ((target, day), [whole, first, paged, bucket]) in by {
        let _ = writeln!(
            out,
            "| {target} | {day} | {} | {} | {} | {} |",
            ratios(whole),
            ratios(first),
            ratios(paged),
            ratios(bucket)
        );
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::InboxRow;

    fn sensor_row(target: &str, encoding: &'static str, rate: f64, latest: f64) -> SensorRow {
        SensorRow {
            target: target.into(),
            layout: "tall",
            encoding,
            rate,
            bytes_per_cell: 20.0,
            latest_us: latest,
            hour_us: 100.0,
            regions: None,
        }
    }

    #[test]
    fn sensor_ratios_are_against_fast_diff_of_the_same_run() {
        let run = |peer_latest: f64, cellar_latest: f64| {
            vec![
                sensor_row("cellar", "NONE", 1.0, 1.0),
                sensor_row("cellar", "FAST_DIFF", 200.0, cellar_latest),
                sensor_row("rocksdb", "key delta", 100.0, peer_latest),
            ]
        };
        // Latest-100 ratios 2.0, 1.0 and 3.0 (Cellar's time over the peer's).
        let out = sensor(&[run(10.0, 20.0), run(10.0, 10.0), run(10.0, 30.0)]);
        assert!(out.contains("Summary of 3 runs"), "{out}");
        let line = out
            .lines()
            .find(|l| l.starts_with("| rocksdb | tall |"))
            .unwrap_or_else(|| panic!("{out}"));
        assert_eq!(
            line,
            "| rocksdb | tall | 0.50 / 0.50 / 0.50x | 1.00 / 1.00 / 1.00x | 1.00 / 2.00 / 3.00x | 1.00 / 1.00 / 1.00x |"
        );
        // Cellar alone: nothing to sum up.
        assert!(sensor(&[vec![sensor_row("cellar", "FAST_DIFF", 1.0, 1.0)]]).is_empty());
    }

    #[test]
    fn inbox_ratios_skip_runs_where_a_row_was_too_big() {
        let row = |target: &str, whole: Option<(usize, f64, f64)>, paged: f64| InboxRow {
            target: target.into(),
            day: 7,
            heavy_mib: 0.2,
            whole,
            paged_us: paged,
            bucket_us: Some(10.0),
        };
        let runs = [
            InboxRun {
                rows: vec![
                    row("cellar", Some((350, 90.0, 40.0)), 12.0),
                    row("rocksdb", Some((350, 30.0, 20.0)), 6.0),
                ],
                notes: String::new(),
            },
            InboxRun {
                rows: vec![
                    row("cellar", None, 8.0),
                    row("rocksdb", Some((350, 30.0, 20.0)), 8.0),
                ],
                notes: String::new(),
            },
        ];
        let out = inbox(&runs);
        let line = out
            .lines()
            .find(|l| l.starts_with("| rocksdb | 7 |"))
            .unwrap_or_else(|| panic!("{out}"));
        assert_eq!(
            line,
            "| rocksdb | 7 | 2.00 / 2.00 / 2.00x | 3.00 / 3.00 / 3.00x | 1.00 / 1.50 / 2.00x | 1.00 / 1.00 / 1.00x |"
        );
    }
}
