#![allow(clippy::unwrap_used)]
//! kill -9: a child process writes with SYNC_WAL and prints each acknowledged write; it is
//! killed with SIGKILL at varying moments, round after round (flushes and compactions
//! happen along the way); after every reopen each acknowledged write is there and the
//! whole table reads back without error.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use cellar::Database;
use cellar_region::{FamilyDescriptor, Put, Scan, TableDescriptor};

const DIR_VAR: &str = "CELLAR_CRASH_DIR";
const ROUND_VAR: &str = "CELLAR_CRASH_ROUND";

/// The child: not a test on its own (it returns at once unless the parent set the variables).
#[test]
fn crash_child_writer() {
    let Some(dir) = std::env::var_os(DIR_VAR) else {
        return;
    };
    let round: u64 = std::env::var(ROUND_VAR).unwrap().parse().unwrap();
    let db = Database::open(&dir).unwrap();
    if !db.table_exists("t") {
        db.create_table(TableDescriptor::new("t").with_family(FamilyDescriptor::new("f")))
            .unwrap();
    }
    let t = db.table("t").unwrap();
    let out = std::io::stdout();
    for i in 0u64.. {
        let row = format!("r{round:02}-{i:06}");
        let len = 50 + (i * 37 % 400) as usize;
        let value = vec![b'a' + (i % 26) as u8; len];
        t.put(Put::new(row.clone()).add_column("f", "q", value))
            .unwrap();
        let mut lock = out.lock();
        writeln!(lock, "ACK {row} {len}").unwrap();
        lock.flush().unwrap();
    }
}

#[test]
fn acknowledged_writes_survive_kill_9() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("cellar.toml"),
        "\"hbase.hregion.memstore.flush.size\" = 65536\n\"hbase.hstore.compaction.min.size\" = 0\n",
    )
    .unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut acked: BTreeMap<String, usize> = BTreeMap::new();
    let rounds = 8u64;
    for round in 0..rounds {
        let mut child = Command::new(&exe)
            .args([
                "crash_child_writer",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(DIR_VAR, tmp.path())
            .env(ROUND_VAR, round.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let stop_after = 40 + (round * 7919 % 900) as usize;
        let mut seen = 0;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let mut parts = line.split_whitespace();
            if parts.next() != Some("ACK") {
                continue;
            }
            let row = parts.next().unwrap().to_string();
            let len: usize = parts.next().unwrap().parse().unwrap();
            acked.insert(row, len);
            seen += 1;
            if seen >= stop_after {
                break;
            }
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        assert!(seen > 0, "round {round}: the child acknowledged nothing");

        let db = Database::open(tmp.path()).unwrap();
        let t = db.table("t").unwrap();
        let mut found: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
        for r in t.scan(&Scan::new()).unwrap() {
            let r = r.unwrap();
            let v = r.value(b"f", b"q").unwrap();
            let i: u64 = std::str::from_utf8(&r.row[4..]).unwrap().parse().unwrap();
            assert!(
                v.iter().all(|b| *b == b'a' + (i % 26) as u8),
                "garbled value in {:?}",
                r.row
            );
            found.insert(r.row.clone(), v.len());
        }
        for (row, len) in &acked {
            assert_eq!(
                found.get(row.as_bytes()),
                Some(len),
                "round {round}: acknowledged {row} lost"
            );
        }
        db.close().unwrap();
    }
    assert!(acked.len() as u64 > rounds * 40);
    // Flushes ran between kills: there are store files.
    let mut stack = vec![tmp.path().join("data")];
    let mut store_files = 0;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.parent().is_some_and(|x| x.ends_with("f")) {
                store_files += 1;
            }
        }
    }
    println!(
        "{} acknowledged writes, {store_files} store files",
        acked.len()
    );
    assert!(store_files > 0);
}
