#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)] // drives real processes
//! The real HBase shell (hbase-shell with its JRuby, from `compat/hbase-shell`) runs one
//! script against a real HBase 2.6 and against `cellar server`: its output on Cellar
//! must equal its output on HBase, once what differs by nature is normalised (elapsed
//! times, server timestamps). Then `cellar shell --connect` runs the same script, and
//! its output must equal the HBase shell's too (without the shell's echo of each
//! command). The script is `testdata/shell/broad.rb`: DDL, puts and gets, scans with
//! every option and FILTER strings, deletes, counters, appends, flushes and
//! compactions, alter, disable/enable, truncate, split and list_regions, snapshots
//! (take, list, clone, restore, delete, and their errors), errors, and the sensor table
//! of the README.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::hbase::{required, HBase};
use common::server::ServerProcess;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The shell's class path: JRuby first (the HBase jars bring an older joni).
fn shell_classpath() -> Option<String> {
    let cp =
        std::fs::read_to_string(root().join("compat/hbase-shell/target/classpath.txt")).ok()?;
    let jruby = cp
        .split(':')
        .find(|p| p.contains("jruby-complete"))?
        .to_string();
    Some(format!("{jruby}:{}", cp.trim()))
}

/// Runs the HBase shell on `script` with these `-D` settings; its standard output.
fn hbase_shell(cp: &str, conf: &[(&str, String)], script: &Path) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("compat/hbase/log4j.properties"),
        dir.path().join("log4j.properties"),
    )
    .unwrap();
    // JRuby 9.2 takes any standard output for a terminal, and the shell then wraps its
    // output at the terminal's width, which depends on where the test runs (80 columns
    // without one). Telling the shell the truth keeps its lines whole wherever the test
    // runs.
    let prelude = dir.path().join("not_a_tty.rb");
    std::fs::write(&prelude, "def $stdout.tty?; false; end\n").unwrap();
    let mut cmd = Command::new("java");
    cmd.env("TZ", "UTC")
        .env("RUBYOPT", format!("-r{}", prelude.display()))
        .arg("-Xmx512m")
        .args([
            "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/java.io=ALL-UNNAMED",
            "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
        ])
        .arg("-cp")
        .arg(format!("{}:{cp}", dir.path().display()))
        .arg("org.jruby.JarBootstrapMain");
    for (k, v) in conf {
        cmd.arg(format!("-D{k}={v}"));
    }
    // Few retries: an error shows as the error, not minutes of backoff.
    cmd.arg("-Dhbase.client.retries.number=3")
        .arg("-Dhbase.client.pause=100")
        .arg(script)
        .stdin(Stdio::null());
    let started = Instant::now();
    let out = cmd.output().expect("run the HBase shell");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!("the HBase shell ran for {:?}", started.elapsed());
    if started.elapsed() > Duration::from_secs(240) {
        keep("shell-slow.txt", &text);
        panic!("the shell took {:?}", started.elapsed());
    }
    text
}

fn cellar_shell(addr: &str, script: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cellar"))
        .env("TZ", "UTC")
        .args(["shell", "--connect", addr])
        .stdin(std::fs::File::open(script).unwrap())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What differs by nature between two runs: elapsed times and clock timestamps.
fn normalise(out: &str) -> String {
    // A snapshot's creation time, as list_snapshots prints it.
    let created = regex::Regex::new(r"\(20\d\d-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}\)").unwrap();
    let mut lines = Vec::new();
    for line in out.lines() {
        // A server's stack frames under an error are its own.
        if line.starts_with("\tat ") {
            continue;
        }
        let mut l = created.replace_all(line, "(CREATED)").into_owned();
        if let Some(i) = l.find("Took ") {
            if l[i..].ends_with(" seconds") {
                l = format!("{}Took N seconds", &l[..i]);
            }
        }
        // Server-assigned timestamps (this century); the script's own are in 1970.
        while let Some(i) = l.find("timestamp=20") {
            let end = l[i..].find(',').map_or(l.len(), |j| i + j);
            l.replace_range(i..end, "timestamp=NOW");
        }
        lines.push(l);
    }
    lines.join("\n")
}

/// The HBase shell's echo of each command (`hbase:001:0> ...`) and what follows the
/// script (the interactive banner) are the shell's own, not the commands' output.
fn without_echo(out: &str) -> String {
    out.lines()
        .filter(|l| !is_echo(l))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_echo(l: &str) -> bool {
    let b = l.as_bytes();
    l.starts_with("hbase:") && b.len() >= 13 && b[9] == b':' && &l[11..13] == "> "
}

fn first_difference(a: &str, b: &str) -> Option<String> {
    let (al, bl): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    for i in 0..al.len().max(bl.len()) {
        if al.get(i) != bl.get(i) {
            let from = i.saturating_sub(3);
            return Some(format!(
                "line {}:\n--- HBase\n{}\n--- Cellar\n{}",
                i + 1,
                al[from..(i + 3).min(al.len())].join("\n"),
                bl[from..(i + 3).min(bl.len())].join("\n"),
            ));
        }
    }
    None
}

fn keep(name: &str, text: &str) {
    let out = root().join("target/test-artifacts");
    if std::fs::create_dir_all(&out).is_ok() {
        let _ = std::fs::write(out.join(name), text);
    }
}

#[test]
fn the_hbase_shell_prints_the_same_on_hbase_and_cellar() {
    let Some(cp) = shell_classpath() else {
        assert!(
            !required(),
            "compat/hbase-shell is not resolved (mvn -f compat/hbase-shell/pom.xml package) and CELLAR_REQUIRE_COMPAT=1"
        );
        eprintln!("skipped: compat/hbase-shell is not resolved");
        return;
    };
    if common::hbase::classpath().is_none() {
        assert!(
            !required(),
            "compat/hbase is not resolved and CELLAR_REQUIRE_COMPAT=1"
        );
        return;
    }
    let script = root().join("testdata/shell/broad.rb");
    let hbase = HBase::start();
    let dir = tempfile::tempdir().unwrap();
    let cellar = ServerProcess::start(dir.path());

    let on_hbase = hbase_shell(
        &cp,
        &[("hbase.zookeeper.quorum", hbase.quorum.clone())],
        &script,
    );
    let on_cellar = hbase_shell(
        &cp,
        &[
            (
                "hbase.client.registry.impl",
                "org.apache.hadoop.hbase.client.MasterRegistry".to_string(),
            ),
            ("hbase.masters", cellar.addr.clone()),
        ],
        &script,
    );
    let ours = cellar_shell(&cellar.addr, &script);
    keep("shell-hbase.txt", &on_hbase);
    keep("shell-cellar.txt", &on_cellar);
    keep("shell-cellar-shell.txt", &ours);

    let (h, c) = (normalise(&on_hbase), normalise(&on_cellar));
    // The script ran to its end on both.
    assert!(
        h.contains("TABLE\n0 row(s)"),
        "the script did not finish on HBase:\n{h}"
    );
    if let Some(d) = first_difference(&h, &c) {
        panic!("the HBase shell prints differently on Cellar at {d}");
    }
    let (h, o) = (without_echo(&h), normalise(&ours));
    if let Some(d) = first_difference(&h, &o) {
        panic!("cellar shell prints differently from the HBase shell at {d}");
    }
}

/// HBase's own shell reads Cellar's large-response log: `get_largelog_responses` asks
/// every region server with AdminService GetLogEntries and prints what Cellar logged —
/// the Get of a whole wide row, with its row, shape and fix.
#[test]
fn the_hbase_shell_reads_cellars_large_response_log() {
    let Some(cp) = shell_classpath() else {
        assert!(
            !required(),
            "compat/hbase-shell is not resolved and CELLAR_REQUIRE_COMPAT=1"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cellar.toml"),
        "\"hbase.ipc.warn.response.size\" = 5000\n",
    )
    .unwrap();
    let cellar = ServerProcess::start(dir.path());
    let script_dir = tempfile::tempdir().unwrap();
    let script = script_dir.path().join("largelog.rb");
    std::fs::write(
        &script,
        "create 'inbox', 'm'\n\
         (0...100).each { |i| put 'inbox', 'heavy', \"m:q#{format('%03d', i)}\", 'x' * 100 }\n\
         get 'inbox', 'heavy', {COLUMN => 'm:q001'}\n\
         get 'inbox', 'heavy'\n\
         get_largelog_responses '*'\n\
         exit\n",
    )
    .unwrap();
    let out = hbase_shell(
        &cp,
        &[
            (
                "hbase.client.registry.impl",
                "org.apache.hadoop.hbase.client.MasterRegistry".to_string(),
            ),
            ("hbase.masters", cellar.addr.clone()),
        ],
        &script,
    );
    keep("shell-largelog.txt", &out);
    let tail: String = out.lines().rev().take(40).collect::<Vec<_>>().join("\n");
    // The shell prints each record as JSON (Gson escapes '=').
    assert!(
        out.contains("Retrieved LargeLog Responses from RegionServers"),
        "{tail}"
    );
    assert!(out.contains("\"methodName\": \"Get\""), "{tail}");
    assert!(out.contains("\"responseSize\": 13000"), "{tail}");
    assert!(out.contains("row\\u003dheavy"), "{tail}");
    assert!(out.contains("unrestricted Get"), "{tail}");
    assert!(out.contains("ColumnPaginationFilter"), "{tail}");
    assert_eq!(
        out.matches("row\\u003dheavy").count(),
        1,
        "one large read: {tail}"
    );
}
