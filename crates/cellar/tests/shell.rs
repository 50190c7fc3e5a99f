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

#[test]
fn scan_and_get_options_as_hbase_writes_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut script = String::from("create 't', 'f'\n");
    for r in ["a1", "a2", "b1", "b2", "c1"] {
        for q in ["x", "y", "z"] {
            script.push_str(&format!("put 't', '{r}', 'f:{q}', '{r}{q}'\n"));
        }
    }
    script.push_str(concat!(
        "scan 't', {ROWPREFIXFILTER => 'b', COLUMNS => ['f:x', 'f:z']}\n",
        "scan 't', {STARTROW => 'a2', STOPROW => 'b2', LIMIT => 5, REVERSED => false}\n",
        "scan 't', {REVERSED => true, LIMIT => 2, FILTER => \"QualifierFilter(=, 'binary:y')\"}\n",
        "scan 't', {BATCH => 2, CACHE => 1, MAXRESULTSIZE => 1000, STARTROW => 'c'}\n",
        "scan 't', {ALLOW_PARTIAL_RESULTS => true, MAXRESULTSIZE => 1, STARTROW => 'c'}\n",
        "count 't', {BATCH => 2}\n",
        "get 't', 'a1', {COLUMN => 'f', FILTER => \"ValueFilter(=, 'substring:Z')\"}\n",
        "scan 't', {FILTER => \"PrefixFilter('a') AND ColumnPaginationFilter(1, 1)\"}\n",
        "scan 't', {FILTER => \"PrefixFilter('a'\"}\n",
    ));
    let (out, code) = run(&dir, &script);
    assert_eq!(code, 1, "{out}");
    let sections: Vec<&str> = out.split("Took ").collect();
    let n = sections.len();
    // The last nine commands: eight sections ending in a Took line, then the error.
    let section = |i: usize| sections[n - 9 + i];
    let s0 = section(0);
    assert!(
        s0.contains("column=f:x, timestamp=") && s0.contains("value=b1z") && !s0.contains("f:y"),
        "{s0}"
    );
    assert!(s0.contains("2 row(s)"), "{s0}");
    let s1 = section(1);
    assert!(
        s1.contains(" a2 ")
            && s1.contains(" b1 ")
            && !s1.contains(" b2 ")
            && s1.contains("2 row(s)"),
        "{s1}"
    );
    let s2 = section(2);
    let c1 = s2.find(" c1 ").unwrap();
    let b2 = s2.find(" b2 ").unwrap();
    assert!(
        c1 < b2 && s2.contains("value=c1y") && !s2.contains("f:x") && s2.contains("2 row(s)"),
        "{s2}"
    );
    assert!(
        section(3).contains("2 row(s)"),
        "BATCH => 2: two Results for c1: {}",
        section(3)
    );
    assert!(
        section(4).contains("3 row(s)"),
        "partial results, one cell each: {}",
        section(4)
    );
    assert!(
        section(5).contains("5 row(s)"),
        "count counts rows, not batches: {}",
        section(5)
    );
    assert!(
        section(6).contains("value=a1z") && section(6).contains("1 row(s)"),
        "{}",
        section(6)
    );
    let s7 = section(7);
    assert!(
        s7.contains("column=f:y") && !s7.contains("column=f:x") && s7.contains("2 row(s)"),
        "{s7}"
    );
    assert!(out.contains("ERROR: Incorrect filter string"), "{out}");
}

#[test]
fn pre_split_tables_and_list_regions() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, code) = run(
        &tmp.path().join("db"),
        concat!(
            "create 't', 'f', SPLITS => ['b', 'm']\n",
            "create 'h', 'f', {NUMREGIONS => 4, SPLITALGO => 'HexStringSplit'}\n",
            "put 't', 'a', 'f:q', '1'\n",
            "put 't', 'n', 'f:q', '2'\n",
            "list_regions 't'\n",
            "list_regions 'h'\n",
            "scan 't', {REVERSED => true}\n",
            "status\n",
            "split 't', 'c'\n",
            "list_regions 't'\n",
            "split 't', 'b'\n",
            "status 'detailed'\n",
        ),
    );
    assert!(
        out.contains("numberOfOnlineRegions=8") && out.contains("\"t,c,"),
        "{out}"
    );
    assert!(
        out.contains(" 4 rows"),
        "split 't', 'c' made four regions: {out}"
    );
    assert!(
        out.contains("ERROR: ") && out.contains("not inside region"),
        "{out}"
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(" 3 rows") && out.contains(" 4 rows"), "{out}");
    assert!(
        out.contains("| t,b,") && out.contains("| h,c0000000,"),
        "{out}"
    );
    let n = out.find(" n  ").unwrap();
    let a = out.rfind(" a  ").unwrap();
    assert!(n < a, "reversed across regions: {out}");
    assert!(out.contains("7.0000 average load"), "{out}");
}
