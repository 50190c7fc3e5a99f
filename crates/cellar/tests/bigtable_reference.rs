#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)] // drives real processes
//! The Bigtable API through Google's own clients (google-cloud-bigtable from PyPI, the
//! Java client from Maven Central in `compat/bigtable-java`, and the `cbt` CLI) against
//! Google's emulator (`cloud.google.com/go/bigtable/cmd/emulator` from the Go
//! module proxy) and against `cellar server --bigtable`: the same session
//! (`compat/python/bigtable_tests/session.py`: tables, families and GC rules, puts,
//! reads of keys, ranges and row sets with every filter kind, a 3 MB cell,
//! check-and-mutate, read-modify-write, MutateRows statuses, row samples) prints the
//! same. Then Cellar restarts and the reads print the same again (the emulator keeps
//! nothing), and cells cross between the Bigtable API and HBase's.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cellar::client::Connection;
use common::compat::{need, python_with, root};
use common::server::ServerProcess;

fn emulator() -> Option<PathBuf> {
    let p = std::env::var_os("CELLAR_BIGTABLE_EMULATOR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("compat/go/bin/emulator"));
    p.exists().then_some(p)
}

struct Emulator(Child);

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap()
}

fn start_emulator(bin: &Path) -> (Emulator, String) {
    let port = free_port();
    let child = Command::new(bin)
        .args(["-host", "127.0.0.1", "-port", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the Bigtable emulator");
    let addr = format!("127.0.0.1:{port}");
    let started = Instant::now();
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the emulator did not listen"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (Emulator(child), addr)
}

fn python(py: &Path, script: &str, args: &[&str]) -> String {
    let out = Command::new(py)
        .arg(root().join("compat/python/bigtable_tests").join(script))
        .args(args)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{script} {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn diff(what: &str, reference: &str, ours: &str) {
    if reference != ours {
        let mut report = String::new();
        for (r, o) in reference.lines().zip(ours.lines()) {
            if r != o {
                report.push_str(&format!("emulator: {:.300}\ncellar:   {:.300}\n", r, o));
            }
        }
        panic!(
            "{what}: the transcripts differ ({} and {} lines)\n{report}",
            reference.lines().count(),
            ours.lines().count()
        );
    }
}

/// The read part of a transcript (from its first read on).
fn reads(t: &str) -> String {
    t.lines()
        .skip_while(|l| !l.starts_with("one row"))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn cellar_answers_as_the_emulator_does_and_keeps_its_data() {
    let Some(py) = python_with("google.cloud.bigtable") else {
        need(false, "google-cloud-bigtable in compat/python/.venv");
        return;
    };
    let Some(emu) = emulator() else {
        need(false, "Google's Bigtable emulator (compat/go/bin/emulator)");
        return;
    };
    let (_emu, emu_addr) = start_emulator(&emu);
    let reference = python(&py, "session.py", &[&emu_addr, "write"]);

    let dir = tempfile::tempdir().unwrap();
    let args = ["--bigtable", "--bigtable-port", "0"];
    let server = ServerProcess::start_with(dir.path(), &args);
    let addr = server.bigtable.clone().unwrap();
    let ours = python(&py, "session.py", &[&addr, "write"]);
    diff("the session", &reference, &ours);
    assert!(ours.contains("filter interleave") && ours.lines().count() > 40);

    // Restarted, Cellar reads the same.
    assert_eq!(server.stop(), Some(0));
    let server = ServerProcess::start_with(dir.path(), &args);
    let addr = server.bigtable.clone().unwrap();
    let again = python(&py, "session.py", &[&addr, "read"]);
    diff("the reads after a restart", &reads(&ours), &again);

    // Cells cross between the APIs: Bigtable's microseconds are HBase's milliseconds x 1000.
    let conn = cellar::client::RemoteConnection::connect(&server.addr).unwrap();
    let t = conn.table("inst_a:people").unwrap();
    let r = t
        .get(&cellar_api::Get::new("alice").add_column("name", "first"))
        .unwrap();
    assert_eq!(r.cells[0].value(), b"Alice");
    assert_eq!(
        r.cells[0].timestamp(),
        1_600_000_000_000,
        "ms through HBase's API"
    );
    t.put(cellar_api::Put::new("from-hbase").add_column_at("free", "h", 1_650_000_000_123, "hb"))
        .unwrap();
    let got = python(
        &py,
        "read_row.py",
        &[&addr, "inst-a", "people", "from-hbase"],
    );
    assert_eq!(got.trim(), "free:h@1650000000123000=hb");
    drop(conn);
    assert_eq!(server.stop(), Some(0));
}

fn java_classpath() -> Option<String> {
    common::compat::java_classpath("bigtable-java", "cellar/compat/BigtableSession.class")
}

fn java_session(cp: &str, addr: &str) -> String {
    let port = addr.rsplit_once(':').unwrap().1;
    let out = Command::new("java")
        .args(["-cp", cp, "cellar.compat.BigtableSession", port])
        .output()
        .expect("run java");
    assert!(
        out.status.success(),
        "BigtableSession against {addr} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_java_client_sees_what_it_sees_on_the_emulator() {
    let Some(cp) = java_classpath() else {
        need(
            false,
            "Google's Java Bigtable client (compat/bigtable-java)",
        );
        return;
    };
    let Some(emu) = emulator() else {
        need(false, "Google's Bigtable emulator (compat/go/bin/emulator)");
        return;
    };
    let (_emu, emu_addr) = start_emulator(&emu);
    let reference = java_session(&cp, &emu_addr);
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start_with(dir.path(), &["--bigtable", "--bigtable-port", "0"]);
    let ours = java_session(&cp, server.bigtable.as_ref().unwrap());
    diff("the Java session", &reference, &ours);
    assert!(ours.contains("after cam") && ours.lines().count() > 25);
    assert_eq!(server.stop(), Some(0));
}

/// One `cbt` session: each command and what it printed, log prefixes and the credential
/// notice removed, server-assigned times (after 2025) as NOW.
fn cbt_session(cbt: &Path, addr: &str) -> String {
    let cmds: &[&[&str]] = &[
        &["createtable", "t1", "families=f1:maxversions=2,f2"],
        &["createtable", "t1"],
        &["ls"],
        &["createfamily", "t1", "f3"],
        &[
            "setgcpolicy",
            "t1",
            "f3",
            "maxage=10d",
            "or",
            "maxversions=3",
        ],
        &[
            "setgcpolicy",
            "t1",
            "f2",
            "maxage=1h",
            "and",
            "maxversions=2",
        ],
        &["ls", "t1"],
        &[
            "set",
            "t1",
            "r1",
            "f1:a=hello@1600000000000000",
            "f2:b=world@1600000000000000",
        ],
        &["set", "t1", "r1", "f1:a=hello2@1600000001000000"],
        &["set", "t1", "r2", "f1:a=x@1600000000000000", "f3:c=now"],
        &["set", "t1", "r3", "f1:a=third@1600000000000000"],
        &["read", "t1"],
        &["read", "t1", "start=r2"],
        &["read", "t1", "end=r2", "columns=f1:a"],
        &["read", "t1", "regex=r[13]", "cells-per-column=1"],
        &["read", "t1", "prefix=r", "count=2"],
        &["lookup", "t1", "r1"],
        &["lookup", "t1", "r1", "columns=f2"],
        &["lookup", "t1", "nothere"],
        &["count", "t1"],
        &["deletecolumn", "t1", "r1", "f1", "a"],
        &["deletefamily", "t1", "r2", "f3"],
        &["deleterow", "t1", "r3"],
        &["read", "t1"],
        &["deletefamily", "t1", "f3"],
        &["ls", "t1"],
        &["read", "nosuch"],
        &["ls", "nosuch"],
        &["deletetable", "t1"],
        &["ls"],
    ];
    let log_prefix = regex::Regex::new(r"^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} ").unwrap();
    let now = regex::Regex::new(r"@ 20(2[5-9]|[3-9]\d)/[0-9/:.-]+").unwrap();
    let mut out = String::new();
    for args in cmds {
        let o = Command::new(cbt)
            .args(["-project", "proj", "-instance", "cbt-inst"])
            .args(*args)
            .env("BIGTABLE_EMULATOR_HOST", addr)
            .output()
            .expect("run cbt");
        out.push_str(&format!("$ cbt {}\n", args.join(" ")));
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        for line in text.lines().filter(|l| !l.contains("-creds flag unset")) {
            let line = log_prefix.replace(line, "");
            out.push_str(&now.replace_all(&line, "@ NOW"));
            out.push('\n');
        }
    }
    out
}

#[test]
fn cbt_prints_what_it_prints_on_the_emulator() {
    let cbt = root().join("compat/go/bin/cbt");
    if !need(cbt.exists(), "the cbt CLI (compat/go/bin/cbt)") {
        return;
    }
    let Some(emu) = emulator() else {
        need(false, "Google's Bigtable emulator (compat/go/bin/emulator)");
        return;
    };
    let (_emu, emu_addr) = start_emulator(&emu);
    let reference = cbt_session(&cbt, &emu_addr);
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start_with(dir.path(), &["--bigtable", "--bigtable-port", "0"]);
    let ours = cbt_session(&cbt, server.bigtable.as_ref().unwrap());
    diff("the cbt session", &reference, &ours);
    assert!(ours.contains("\"hello2\"") && ours.contains("(age() > 10d || versions() > 3)"));
    // The instance-admin calls cbt makes (the emulator has none): one local instance
    // per namespace, one cluster each.
    let bt = server.bigtable.as_ref().unwrap();
    for (cmd, want) in [
        ("listinstances", "cbt-inst"),
        ("listclusters", "cbt-inst-local"),
    ] {
        let o = Command::new(&cbt)
            .args(["-project", "proj", "-instance", "cbt-inst", cmd])
            .env("BIGTABLE_EMULATOR_HOST", bt)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success() && text.contains(want),
            "cbt {cmd}: {text}"
        );
    }
    assert_eq!(server.stop(), Some(0));
}
