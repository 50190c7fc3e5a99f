#![allow(clippy::unwrap_used)]
//! HashTable / SyncTable: the hashes HBase's HashTable job wrote for `test-table`
//! (testdata/hbase-snapshots/endtoend-it/hashtable) match a Cellar table imported from
//! that table's snapshot, batch for batch; a changed cell shows up as exactly its range;
//! Cellar's own output is HBase's layout and reads back the same.

mod common;

use std::path::{Path, PathBuf};

use cellar::hashtable::{hash_table, read_hashes, sync_ranges, write_hashes, HashSpec};
use cellar::{Database, Options};
use cellar_api::Put;

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hbase-snapshots/endtoend-it")
}

fn open(dir: &Path) -> Database {
    let mut o = Options::for_dir(dir).unwrap();
    o.background = false;
    Database::open_with(dir, o).unwrap()
}

fn imported(dir: &Path) -> Database {
    let db = open(dir);
    db.import_snapshot(
        &testdata().join("data"),
        "test-snapshot",
        Some("test-table"),
    )
    .unwrap();
    db
}

#[test]
fn hbase_hashtable_output_reads() {
    let th = read_hashes(&testdata().join("hashtable")).unwrap();
    assert_eq!(th.spec.table, "test-table");
    assert_eq!(th.spec.batch_size, 10);
    assert_eq!(th.spec.num_hash_files, 10);
    assert_eq!(th.partitions.len(), 9);
    assert!(th.partitions.windows(2).all(|w| w[0] < w[1]));
    assert!(!th.hashes.is_empty());
    assert!(th.hashes.windows(2).all(|w| w[0].0 < w[1].0));
}

#[test]
fn a_table_imported_from_the_snapshot_matches_hbases_hashes() {
    let tmp = tempfile::tempdir().unwrap();
    let db = imported(tmp.path());
    let source = read_hashes(&testdata().join("hashtable")).unwrap();
    let conn = db.connection();
    let (compared, diffs) = sync_ranges(&source, conn, "test-table", false).unwrap();
    assert_eq!(compared, source.hashes.len());
    assert!(diffs.is_empty(), "{diffs:?}");
    // Hashed by Cellar with the same settings, batch for batch.
    let mut spec = source.spec.clone();
    let ours = hash_table(conn, &mut spec).unwrap();
    assert_eq!(ours.hashes, source.hashes);
    assert_eq!(ours.partitions, source.partitions);

    // One changed value: its batch, and only it, differs.
    db.table("test-table")
        .unwrap()
        .put(Put::new("42").add_column("cf", "a", "changed"))
        .unwrap();
    let (_, diffs) = sync_ranges(&source, conn, "test-table", false).unwrap();
    assert_eq!(diffs.len(), 1, "{diffs:?}");
    assert!(diffs[0].start.as_slice() <= b"42".as_slice());
    assert!(diffs[0].stop.is_empty() || diffs[0].stop.as_slice() > b"42".as_slice());
}

#[test]
fn cellar_output_is_hbase_layout_and_reads_back() {
    let tmp = tempfile::tempdir().unwrap();
    let db = imported(&tmp.path().join("db"));
    let conn = db.connection();
    let mut spec = HashSpec::new("test-table");
    spec.batch_size = 64;
    spec.num_hash_files = 3;
    let th = hash_table(conn, &mut spec).unwrap();
    let out = tmp.path().join("hashes");
    write_hashes(&th, &out).unwrap();
    for f in [
        "manifest",
        "partitions",
        "hashes/_SUCCESS",
        "hashes/part-r-00000/data",
        "hashes/part-r-00002/index",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    let back = read_hashes(&out).unwrap();
    assert_eq!(back.spec, th.spec);
    assert_eq!(back.partitions, th.partitions);
    assert_eq!(back.hashes, th.hashes);
    // Bigger batches: fewer hashes than rows, and the table matches its own output.
    assert!(th.hashes.len() < 100);
    let (_, diffs) = sync_ranges(&back, conn, "test-table", false).unwrap();
    assert!(diffs.is_empty());
    // A damaged data file is refused, not misread.
    let data = out.join("hashes/part-r-00001/data");
    let mut b = std::fs::read(&data).unwrap();
    let n = b.len();
    b.truncate(n - 5);
    std::fs::write(&data, b).unwrap();
    assert!(read_hashes(&out).is_err());
}

/// HBase's own HashTable reader (the one SyncTable uses) reads Cellar's output and finds
/// every batch hash Cellar wrote, across several hash files.
#[test]
fn hbase_reads_cellar_hashtable_output() {
    let Some(cp) = common::hbase::oracle_classpath() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let db = imported(&tmp.path().join("db"));
    let mut spec = HashSpec::new("test-table");
    spec.batch_size = 40;
    spec.num_hash_files = 4;
    let th = hash_table(db.connection(), &mut spec).unwrap();
    let out = tmp.path().join("hashes");
    write_hashes(&th, &out).unwrap();
    let (code, stdout, stderr) =
        common::hbase::run_oracle(&cp, "HashRead", &["read", out.to_str().unwrap()]);
    assert!(code == 0 && stdout.contains("ALL OK"), "{stdout}\n{stderr}");
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let got: Vec<String> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("hash "))
        .map(str::to_string)
        .collect();
    let want: Vec<String> = th
        .hashes
        .iter()
        .map(|(k, h)| format!("{} {}", hex(k), hex(h)))
        .collect();
    assert_eq!(got, want);
    assert!(
        stdout.contains("tableName=test-table, batchSize=40, numHashFiles=4"),
        "{stdout}"
    );
}

fn cellar(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cellar"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The commands: `cellar hashtable` writes an output, `cellar synctable` compares a
/// table with it or with HBase's (exit 0 when equal, 1 when a range differs).
#[test]
fn the_hashtable_and_synctable_commands() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    let dbs = db.to_str().unwrap();
    let data = testdata().join("data");
    let (code, out, err) = cellar(&[
        "import-snapshot",
        data.to_str().unwrap(),
        "--snapshot",
        "test-snapshot",
        "--table",
        "test-table",
        "--db",
        dbs,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let hashes = tmp.path().join("h");
    let hs = hashes.to_str().unwrap();
    let (code, out, err) = cellar(&[
        "hashtable",
        "test-table",
        hs,
        "--batchsize",
        "50",
        "--numhashfiles",
        "2",
        "--db",
        dbs,
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("into 2 files"), "{out}");
    // Writing over an existing output is refused.
    let (code, _, err) = cellar(&["hashtable", "test-table", hs, "--db", dbs]);
    assert_ne!(code, 0);
    assert!(err.contains("already holds"), "{err}");
    let (code, out, _) = cellar(&["synctable", hs, "test-table", "--db", dbs]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(": 0 differ"), "{out}");
    let hbase = testdata().join("hashtable");
    let (code, out, _) = cellar(&[
        "synctable",
        hbase.to_str().unwrap(),
        "test-table",
        "--db",
        dbs,
    ]);
    assert_eq!(code, 0, "{out}");
    // A changed cell: both comparisons name its range.
    {
        let d = open(&db);
        d.table("test-table")
            .unwrap()
            .put(Put::new("07").add_column("cf", "a", "x"))
            .unwrap();
        d.close().unwrap();
    }
    let (code, out, _) = cellar(&[
        "synctable",
        hbase.to_str().unwrap(),
        "test-table",
        "--db",
        dbs,
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("differs: [07, ") && out.contains(": 1 differ"),
        "{out}"
    );
    let (code, out, _) = cellar(&["synctable", hs, "test-table", "--db", dbs]);
    assert_eq!(code, 1, "{out}");
}
