#![allow(clippy::unwrap_used)]
//! The benchmark tool runs end to end in --quick mode (so it never rots): every YCSB
//! workload against Cellar, a table on stdout, JSON on request, no failed operations.

use std::process::Command;

#[test]
fn quick_mode_runs_every_workload() {
    let tmp = tempfile::tempdir().unwrap();
    let json = tmp.path().join("out.json");
    let out = Command::new(env!("CARGO_BIN_EXE_cellar-bench"))
        .args(["--quick", "--threads", "2", "--dir"])
        .arg(tmp.path().join("data"))
        .arg("--json")
        .arg(&json)
        .arg("--chart")
        .arg(tmp.path().join("chart.svg"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for w in ["| A |", "| B |", "| C |", "| D |", "| E |", "| F |"] {
        assert!(stdout.contains(w), "{w} missing:\n{stdout}");
    }
    for op in ["READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"] {
        assert!(stdout.contains(op), "{op} missing");
    }
    let j = std::fs::read_to_string(&json).unwrap();
    assert!(
        j.starts_with("{\"records\":2000") && j.contains("\"errors\":0"),
        "{j}"
    );
    assert_eq!(j.matches("\"workload\":").count(), 6);
    let svg = std::fs::read_to_string(tmp.path().join("chart.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.matches("<rect x=").count() >= 6,
        "{svg}"
    );
    // An unknown workload or target is a clear error.
    let bad = Command::new(env!("CARGO_BIN_EXE_cellar-bench"))
        .args(["--quick", "--workloads", "Z"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let bad = Command::new(env!("CARGO_BIN_EXE_cellar-bench"))
        .args([
            "--quick",
            "--workloads",
            "C",
            "--targets",
            "nosuch",
            "--dir",
        ])
        .arg(tmp.path().join("d2"))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown target"));
}

#[test]
fn quick_scenarios_run() {
    let tmp = tempfile::tempdir().unwrap();
    for (sc, want) in [
        ("sensor", "| bucketed | FAST_DIFF |"),
        ("inbox", "RowTooBigException on day"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_cellar-bench"))
            .args(["--quick", "--scenario", sc, "--dir"])
            .arg(tmp.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{sc}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains(want), "{sc}: {stdout}");
        // Both tables of the sensor layouts' readings are real: bytes per cell are
        // positive and FAST_DIFF stores fewer than NONE.
        if sc == "sensor" {
            let bytes = |enc: &str| -> f64 {
                let line = stdout
                    .lines()
                    .find(|l| l.starts_with(&format!("| cellar | tall | {enc} |")))
                    .unwrap();
                line.split('|').nth(5).unwrap().trim().parse().unwrap()
            };
            assert!(bytes("FAST_DIFF") > 0.0 && bytes("FAST_DIFF") < bytes("NONE"));
        }
    }
    // Runs repeat the whole scenario: one table per run.
    let out = Command::new(env!("CARGO_BIN_EXE_cellar-bench"))
        .args(["--quick", "--scenario", "inbox", "--runs", "2", "--dir"])
        .arg(tmp.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert_eq!(stdout.matches("## Messaging inbox").count(), 2, "{stdout}");
    let bad = Command::new(env!("CARGO_BIN_EXE_cellar-bench"))
        .args([
            "--quick",
            "--scenario",
            "sensor",
            "--targets",
            "nosuch",
            "--dir",
        ])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown target"));
}
