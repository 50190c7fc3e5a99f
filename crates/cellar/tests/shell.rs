#![allow(clippy::unwrap_used)]
//! `cellar shell` end to end: a script on standard input, HBase-shaped output, errors
//! that do not stop the script, and data that persists between runs.

use std::io::Write;
use std::process::{Command, Stdio};

fn run(dir: &std::path::Path, script: &str) -> (String, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cellar"))
        .arg("shell")
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn a_script_runs_with_hbase_output() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let (out, code) = run(
        &dir,
        "create 't', {NAME => 'd', VERSIONS => 3, DATA_BLOCK_ENCODING => 'FAST_DIFF'}\n\
         put 't', 'r1', 'd:q', 'v1', 100\n\
         put 't', 'r1', 'd:q', 'v2', 200\n\
         put 't', 'r2', 'd:q', 'x'\n\
         get 't', 'r1', {COLUMN => 'd:q', VERSIONS => 2}\n\
         scan 't', {STARTROW => 'r2'}\n\
         incr 't', 'c', 'd:n', 5\n\
         get_counter 't', 'c', 'd:n'\n\
         count 't'\n\
         describe 't'\n\
         list\n",
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Created table t"), "{out}");
    assert!(out.contains("=> Hbase::Table - t"), "{out}");
    let get_at = out.find("COLUMN").unwrap();
    let get_part = &out[get_at..];
    let v2 = get_part.find("timestamp=200, value=v2").unwrap();
    let v1 = get_part.find("timestamp=100, value=v1").unwrap();
    assert!(v2 < v1, "newest version first: {out}");
    assert!(out.contains(" r2 ") && out.contains("column=d:q,"), "{out}");
    assert!(out.contains("COUNTER VALUE = 5"), "{out}");
    assert!(out.contains("3 row(s)"), "{out}");
    assert!(out.contains("DATA_BLOCK_ENCODING => 'FAST_DIFF'"), "{out}");
    assert!(out.contains("VERSIONS => '3'"), "{out}");
    assert!(out.contains("=> [\"t\"]"), "{out}");
    assert!(
        out.lines()
            .filter(|l| l.starts_with("Took ") && l.ends_with(" seconds"))
            .count()
            >= 11
    );

    // A second run sees the data; errors print one line and the script goes on.
    let (out, code) = run(
        &dir,
        "get 'nope', 'r'\nput 't', 'r'\ncreate 't', 'd'\nfoo bar\nget 't', 'r2'\n",
    );
    assert_eq!(code, 1, "a failed command makes the exit status 1");
    assert!(out.contains("ERROR: Unknown table nope!"), "{out}");
    assert!(out.contains("ERROR: Table already exists: t!"), "{out}");
    assert!(out.contains("ERROR: Unknown command 'foo'"), "{out}");
    assert!(out.contains("value=x"), "{out}");
    assert_eq!(
        out.lines().filter(|l| l.starts_with("ERROR:")).count(),
        4,
        "{out}"
    );
}
