//! Several runs of the same workloads and targets summed up: each target's load and run
//! throughput, bytes on disk and READ p99 as ratios to the first target of the same run
//! (the peer measured beside it), with the minimum, median and maximum over the runs.

use std::fmt::Write as _;

use crate::report::Entry;

/// (minimum, median, maximum) of `v` (empty: zeros).
pub(crate) fn spread(mut v: Vec<f64>) -> (f64, f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (v[0], median, v[n - 1])
}

fn ratio(v: Vec<f64>) -> String {
    let (lo, mid, hi) = spread(v);
    format!("{lo:.2}x / {mid:.2}x / {hi:.2}x")
}

fn read_p99(e: &Entry) -> Option<f64> {
    e.run.per_op.get("READ").map(|s| s.p99_us as f64)
}

/// The summary table of `runs` (each run: the entries of every workload and target, the
/// first target of each workload first).
pub fn table(runs: &[Vec<Entry>]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Summary of {} runs: ratios to the first target of the same run, min / median / max\n",
        runs.len()
    );
    let _ = writeln!(
        s,
        "| workload | target | run ops/s (median) | run vs first | load vs first | READ p99 µs | disk MiB (median) | disk vs first |"
    );
    let _ = writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|");
    let Some(first_run) = runs.first() else {
        return s;
    };
    for (i, e) in first_run.iter().enumerate() {
        // The same position in every run is the same workload and target.
        let same: Vec<(&Entry, &Entry)> = runs
            .iter()
            .filter_map(|r| {
                let x = r.get(i)?;
                let base = r.iter().find(|b| b.workload == x.workload)?;
                Some((x, base))
            })
            .collect();
        let per = |f: &dyn Fn(&Entry) -> f64| -> Vec<f64> {
            same.iter().map(|(x, b)| f(x) / f(b).max(1e-9)).collect()
        };
        let run = per(&|x| x.run.ops_per_sec);
        let load = per(&|x| x.load.ops_per_sec);
        let disk = per(&|x| x.disk_bytes as f64);
        let p99: Vec<f64> = same.iter().filter_map(|(x, _)| read_p99(x)).collect();
        let p99 = if p99.is_empty() {
            "-".to_string()
        } else {
            let (lo, mid, hi) = spread(p99);
            format!("{lo:.0} / {mid:.0} / {hi:.0}")
        };
        let (_, run_mid, _) = spread(same.iter().map(|(x, _)| x.run.ops_per_sec).collect());
        let (_, disk_mid, _) = spread(same.iter().map(|(x, _)| x.disk_bytes as f64).collect());
        let _ = writeln!(
            s,
            "| {} | {} | {run_mid:.0} | {} | {} | {p99} | {:.1} | {} |",
            e.workload,
            e.run.target,
            ratio(run),
            ratio(load),
            disk_mid / (1u64 << 20) as f64,
            ratio(disk),
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_min_median_max() {
        assert_eq!(spread(vec![3.0, 1.0, 2.0]), (1.0, 2.0, 3.0));
        assert_eq!(spread(vec![4.0, 1.0, 2.0, 3.0]), (1.0, 2.5, 4.0));
        assert_eq!(spread(Vec::new()), (0.0, 0.0, 0.0));
    }
}
