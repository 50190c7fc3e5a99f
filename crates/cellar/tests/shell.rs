#![allow(clippy::unwrap_used)]
//! `cellar shell` end to end: a script on standard input, HBase-shaped output, errors
//! that do not stop the script, and data that persists between runs.

use std::io::Write;
use std::process::{Command, Stdio};

fn run(dir: &std::path::Path, script: &str) -> (String, i32) {
    run_bytes(dir, script.as_bytes())
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
    let v2 = get_part
        .find("timestamp=1970-01-01T00:00:00.200, value=v2")
        .unwrap();
    let v1 = get_part
        .find("timestamp=1970-01-01T00:00:00.100, value=v1")
        .unwrap();
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
    // The last nine commands: nine sections ending in a Took line (the error's too,
    // as HBase's shell prints it), then what follows the last.
    let section = |i: usize| sections[n - 10 + i];
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
    let n = out.find(" n column=").unwrap();
    let a = out.rfind(" a column=").unwrap();
    assert!(n < a, "reversed across regions: {out}");
    assert!(out.contains("7.0000 average load"), "{out}");
}

fn run_bytes(dir: &std::path::Path, script: &[u8]) -> (String, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cellar"))
        .arg("shell")
        .arg(dir)
        .env("TZ", "UTC")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(script).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

/// The output of the command at `index` (0-based) of a script whose every command
/// succeeds: the text between the previous and its own `Took` line.
fn section(out: &str, index: usize) -> String {
    out.split("Took ")
        .nth(index)
        .map(|s| s.split_once('\n').map_or(s, |(_, rest)| rest).to_string())
        .unwrap_or_default()
}

/// `delete` and `deleteall` make the markers HBase 2's shell makes (`table_test.rb`:
/// "delete should set proper cell type", "deleteall should work with timestamps but w/o
/// columns", "deletall should work with row prefix"), and raw scans print markers with
/// their type and no value.
#[test]
fn delete_and_deleteall_as_hbase_2() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let (out, code) = run(
        &dir,
        concat!(
            "create 't', {NAME => 'x', VERSIONS => 5}\n",
            "put 't', 'r', 'x:a', 'v1', 100\n",
            "put 't', 'r', 'x:a', 'v2', 200\n",
            "put 't', 'r', 'x:a', 'v3', 300\n",
            "put 't', 'r', 'x:b', 'w', 200\n",
            // 5: one version, exactly at 200
            "delete 't', 'r', 'x:a', 200\n",
            "get 't', 'r', {COLUMN => 'x:a', VERSIONS => 5}\n",
            // 7: without a timestamp, the newest version only
            "delete 't', 'r', 'x:a'\n",
            "get 't', 'r', {COLUMN => 'x:a', VERSIONS => 5}\n",
            // 9: a bare family with a timestamp: that version in every column
            "delete 't', 'r', 'x', 200\n",
            "get 't', 'r', {VERSIONS => 5}\n",
            // 11: the markers, raw
            "scan 't', {RAW => true, VERSIONS => 10}\n",
            // 12: deleteall of a column up to a timestamp
            "deleteall 't', 'r', 'x:a', 150\n",
            "scan 't', {RAW => true, VERSIONS => 10, COLUMNS => ['x']}\n",
            // 14: the whole row up to a timestamp, with an empty column (HBASE-24335)
            "put 't', 's', 'x:a', 'old', 10\n",
            "put 't', 's', 'x:b', 'new', 50\n",
            "deleteall 't', 's', '', 20\n",
            "get 't', 's'\n",
            // 18: rows by prefix
            "put 't', 'p1', 'x:a', '1'\n",
            "put 't', 'p2', 'x:a', '2'\n",
            "put 't', 'q1', 'x:a', '3'\n",
            "deleteall 't', {ROWPREFIXFILTER => 'p'}\n",
            "scan 't', {STARTROW => 'p', STOPROW => 'r'}\n",
        ),
    );
    assert_eq!(code, 0, "{out}");
    let s6 = section(&out, 6);
    assert!(
        s6.contains("value=v3") && s6.contains("value=v1") && !s6.contains("value=v2"),
        "{s6}"
    );
    let s8 = section(&out, 8);
    assert!(
        !s8.contains("value=v3") && s8.contains("value=v1") && s8.contains("1 row(s)"),
        "{s8}"
    );
    let s10 = section(&out, 10);
    assert!(
        !s10.contains("value=w") && s10.contains("value=v1"),
        "{s10}"
    );
    let s11 = section(&out, 11);
    for marker in [
        "column=x:a, timestamp=1970-01-01T00:00:00.300, type=Delete\n",
        "column=x:a, timestamp=1970-01-01T00:00:00.200, type=Delete\n",
        "column=x:, timestamp=1970-01-01T00:00:00.200, type=DeleteFamilyVersion\n",
    ] {
        assert!(s11.contains(marker), "{marker} in {s11}");
    }
    assert!(!s11.contains("type=Delete, value="), "{s11}");
    let s13 = section(&out, 13);
    assert!(
        s13.contains("column=x:a, timestamp=1970-01-01T00:00:00.150, type=DeleteColumn\n"),
        "{s13}"
    );
    let s17 = section(&out, 17);
    assert!(
        s17.contains("value=new") && !s17.contains("value=old"),
        "{s17}"
    );
    let s22 = section(&out, 22);
    assert!(
        s22.contains(" q1 column=x:a") && !s22.contains(" p1 ") && !s22.contains(" p2 "),
        "{s22}"
    );
}

/// Columns are always separated, timestamps print as HBase 2.5+ prints them (local ISO
/// date-time, or epoch milliseconds with `hbase.shell.timestamp.format.epoch`).
#[test]
fn output_columns_and_timestamps() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let long = "r".repeat(40);
    let script = format!(
        "create 't', 'f'\nput 't', '{long}', 'f:{long}', 'v', 1714566605123\n\
         scan 't'\nget 't', '{long}'\n"
    );
    let (out, code) = run(&dir, &script);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("ROW  COLUMN+CELL\n"), "{out}");
    assert!(
        out.contains(&format!(
            " {long} column=f:{long}, timestamp=2024-05-01T12:30:05.123, value=v\n"
        )),
        "{out}"
    );
    assert!(out.contains("COLUMN  CELL\n"), "{out}");
    assert!(
        out.contains(&format!(
            " f:{long} timestamp=2024-05-01T12:30:05.123, value=v\n"
        )),
        "{out}"
    );
    std::fs::write(
        dir.join("cellar.toml"),
        "\"hbase.shell.timestamp.format.epoch\" = true\n",
    )
    .unwrap();
    let (out, _) = run(&dir, "scan 't'\n");
    assert!(out.contains("timestamp=1714566605123, value=v\n"), "{out}");
}

/// FILTER strings reach the filter language as bytes; ColumnValueFilter and Java regex
/// (look-ahead) work from the shell.
#[test]
fn filter_strings_are_bytes_and_java_regex() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let (out, code) = run(
        &dir,
        concat!(
            "create 't', 'f'\n",
            "put 't', 'a', 'f:q', \"\\xff\\xfe\"\n",
            "put 't', 'b', 'f:q', \"\\xef\\xbf\\xbd\"\n",
            "put 't', 'c', 'f:q', 'foobar'\n",
            "put 't', 'c', 'f:r', 'foobaz'\n",
            "scan 't', {FILTER => \"ValueFilter(=, 'binary:\\xff\\xfe')\"}\n",
            "scan 't', {FILTER => \"ColumnValueFilter('f', 'r', =, 'binaryprefix:foo')\"}\n",
            "scan 't', {FILTER => \"ValueFilter(=, 'regexstring:foo(?=bar)')\"}\n",
        ),
    );
    assert_eq!(code, 0, "{out}");
    let s5 = section(&out, 5);
    assert!(
        s5.contains(" a column=f:q") && !s5.contains(" b ") && s5.contains("1 row(s)"),
        "{s5}"
    );
    let s6 = section(&out, 6);
    assert!(
        s6.contains("column=f:r") && !s6.contains("column=f:q") && s6.contains("1 row(s)"),
        "{s6}"
    );
    let s7 = section(&out, 7);
    assert!(
        s7.contains("value=foobar") && !s7.contains("value=foobaz"),
        "{s7}"
    );
}

/// Hostile lines are errors for that line; the script goes on.
#[test]
fn hostile_lines_are_errors_and_the_script_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut script: Vec<u8> = b"create 't', 'f'\n".to_vec();
    script.extend_from_slice(format!("get 't', {}\n", "[".repeat(100_000)).as_bytes());
    script.extend_from_slice(format!("put 't', {}\n", "{'a' => ".repeat(50_000)).as_bytes());
    script.extend_from_slice(
        format!(
            "scan 't', {{FILTER => \"{}PageFilter(1){}\"}}\n",
            "(".repeat(20_000),
            ")".repeat(20_000)
        )
        .as_bytes(),
    );
    script.extend_from_slice(
        format!(
            "scan 't', {{FILTER => \"{}PageFilter(1)\"}}\n",
            "SKIP ".repeat(20_000)
        )
        .as_bytes(),
    );
    script.extend_from_slice(
        b"create 'h', 'f', {NUMREGIONS => 1000000000000, SPLITALGO => 'HexStringSplit'}\n",
    );
    script.extend_from_slice(b"put 't', 'r\xff\xfe', 'f:q', 'v'\n");
    script.extend_from_slice(b"put 't', 'ok', 'f:q', 'v'\nscan 't'\n");
    let (out, code) = run_bytes(&dir, &script);
    assert_eq!(code, 1, "{out}");
    let errors: Vec<&str> = out.lines().filter(|l| l.starts_with("ERROR: ")).collect();
    assert_eq!(errors.len(), 6, "{out}");
    assert!(errors[0].contains("nest"), "{}", errors[0]);
    assert!(errors[1].contains("nest"), "{}", errors[1]);
    assert!(errors[2].contains("nested"), "{}", errors[2]);
    assert!(errors[3].contains("nested"), "{}", errors[3]);
    assert!(
        errors[4].contains("NUMREGIONS must be at most"),
        "{}",
        errors[4]
    );
    assert!(
        errors[5].contains("line 7 is not valid UTF-8"),
        "{}",
        errors[5]
    );
    assert!(out.contains(" ok column=f:q"), "{out}");
}
