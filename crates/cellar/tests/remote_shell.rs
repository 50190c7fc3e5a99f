#![allow(clippy::unwrap_used, clippy::disallowed_methods)] // drives server and shell processes
//! `cellar shell --connect host:port` runs every command against a server with output
//! identical to the embedded shell's: one script, run both ways, compared line by line
//! (only the `Took ... seconds` timings differ).

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::server::ServerProcess;

const SCRIPT: &str = r#"create 't', {NAME => 'f', VERSIONS => 3}, {NAME => 'g'}, SPLITS => ['m']
list
exists 't'
is_enabled 't'
describe 't'
put 't', 'a', 'f:q', 'v1', 100
put 't', 'a', 'f:q', 'v2', 200
put 't', 'k', 'f:q', 'k1', 100
put 't', 'n', 'g:x', 'n1', 100
put 't', 'z', 'f:q', 'z1', 100
get 't', 'a'
get 't', 'a', {COLUMN => 'f:q', VERSIONS => 3}
scan 't'
scan 't', {REVERSED => true}
scan 't', {STARTROW => 'k', STOPROW => 'z'}
scan 't', {COLUMNS => ['g'], LIMIT => 1}
scan 't', {FILTER => "PrefixFilter('n')"}
scan 't', {FILTER => "ValueFilter(=, 'binary:z1')"}
count 't'
incr 't', 'c', 'f:n', 5
incr 't', 'c', 'f:n', 2
get_counter 't', 'c', 'f:n'
append 't', 'a', 'f:s', 'xy'
delete 't', 'a', 'f:q', 200
get 't', 'a', {COLUMN => 'f:q', VERSIONS => 3}
deleteall 't', 'k'
get 't', 'k'
scan 't', {RAW => true, VERSIONS => 3}
put 't', 'a', 'nosuch:q', 'v'
get 'nosuch', 'a'
create 't', 'f'
alter 't', {NAME => 'g', VERSIONS => 5}
describe 't'
disable 't'
is_enabled 't'
get 't', 'a'
enable 't'
get 't', 'z'
create_namespace 'ns1'
create 'ns1:u', 'f'
list_namespace
list_namespace_tables 'ns1'
put 'ns1:u', 'r', 'f:q', 'v', 7
scan 'ns1:u'
disable 'ns1:u'
drop 'ns1:u'
drop_namespace 'ns1'
truncate 't'
count 't'
disable 't'
drop 't'
list
"#;

fn shell(args: &[&str], dir: Option<&Path>) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cellar"));
    cmd.arg("shell");
    if let Some(d) = dir {
        cmd.arg(d);
    }
    let mut child = cmd
        .args(args)
        .env("TZ", "UTC")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(SCRIPT.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    // Timings differ, and so do the times cells written at server time carry; the
    // encoded names of regions (in some error messages) are random per database.
    let now = regex::Regex::new(r"timestamp=20\d\d-[0-9T:.-]+").unwrap();
    let region = regex::Regex::new(r"region [0-9a-f]{32}").unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            if l.starts_with("Took ") {
                "Took".to_string()
            } else {
                l.to_string()
            }
        })
        .map(|l| now.replace_all(&l, "timestamp=NOW").into_owned())
        .map(|l| region.replace_all(&l, "region R").into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn remote_shell_prints_what_the_embedded_shell_prints() {
    let tmp = tempfile::tempdir().unwrap();
    let embedded = shell(&[], Some(&tmp.path().join("embedded")));
    let server = ServerProcess::start(&tmp.path().join("served"));
    let remote = shell(&["--connect", &server.addr], None);
    assert_eq!(server.stop(), Some(0));
    let e: Vec<&str> = embedded.lines().collect();
    let r: Vec<&str> = remote.lines().collect();
    for (i, (a, b)) in e.iter().zip(&r).enumerate() {
        assert_eq!(
            a, b,
            "line {i} differs\n--- embedded\n{embedded}\n--- remote\n{remote}"
        );
    }
    assert_eq!(
        e.len(),
        r.len(),
        "--- embedded\n{embedded}\n--- remote\n{remote}"
    );
    assert!(
        embedded.contains("ERROR"),
        "the script exercises errors too"
    );
}
