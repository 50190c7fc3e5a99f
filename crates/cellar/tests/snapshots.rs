#![allow(clippy::unwrap_used)]
// A writer thread runs beside a snapshot.
#![allow(clippy::disallowed_methods)]
//! Snapshots (HBase's semantics): a snapshot is the table as of one moment, even with
//! writes going on; clone and restore give exactly its contents; its files outlive
//! compactions and the table's drop, and go once no snapshot needs them; names and
//! states are checked as HBase checks them; a crash at any step of taking one leaves
//! either a whole snapshot or none.

mod common;

use std::path::Path;
use std::sync::Arc;

use cellar::{Database, Options};
use cellar_api::{Delete, ErrorKind, FamilyDescriptor, Get, Put, Scan, TableDescriptor};
use cellar_io::FaultFs;
use cellar_wal::Durability;

fn open(dir: &Path) -> Database {
    let mut o = Options::for_dir(dir).unwrap();
    o.background = false;
    Database::open_with(dir, o).unwrap()
}

fn table(name: &str) -> TableDescriptor {
    let mut f = FamilyDescriptor::new("f");
    f.versions = 3;
    let mut d = TableDescriptor::new(name).with_family(f);
    d.durability = Durability::FsyncWal;
    d
}

/// Every cell of a table (all versions, markers too), as text.
fn dump(db: &Database, t: &str) -> Vec<String> {
    db.table(t)
        .unwrap()
        .scan(&Scan::new().raw(true).max_versions(10))
        .unwrap()
        .flat_map(|r| r.unwrap().cells)
        .map(|c| {
            format!(
                "{}/{}/{}/{:?}={}",
                String::from_utf8_lossy(c.row()),
                String::from_utf8_lossy(c.qualifier()),
                c.timestamp(),
                c.cell_type(),
                String::from_utf8_lossy(c.value())
            )
        })
        .collect()
}

fn fill(db: &Database, t: &str, tag: &str) {
    let tb = db.table(t).unwrap();
    for i in 0..60 {
        tb.put(Put::new(format!("r{i:03}")).add_column_at("f", "q", 10, format!("{tag}{i}")))
            .unwrap();
    }
}

#[test]
fn clone_and_restore_give_the_snapshot_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let db = open(tmp.path());
    db.create_table_split(table("t"), vec![b"r020".to_vec(), b"r040".to_vec()])
        .unwrap();
    fill(&db, "t", "a");
    db.flush("t").unwrap();
    let tb = db.table("t").unwrap();
    tb.put(Put::new("r005").add_column_at("f", "q", 11, "newer"))
        .unwrap(); // MemStore only
    tb.delete(Delete::new("r050").add_family("f")).unwrap();
    // A split before the snapshot: daughters hold references.
    db.split("t", Some(b"r030")).unwrap();
    let at_snapshot = dump(&db, "t");
    db.master().snapshot("t", "s1").unwrap();
    let listed = db.master().list_snapshots().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].name.as_str(), listed[0].table.as_str()),
        ("s1", "t")
    );

    // The table moves on: new writes, a major compaction that drops the old files.
    fill(&db, "t", "b");
    db.compact("t", true).unwrap();
    assert_ne!(dump(&db, "t"), at_snapshot);

    db.master().clone_snapshot("s1", "c1").unwrap();
    assert_eq!(dump(&db, "c1"), at_snapshot);
    assert_eq!(db.list_regions("c1").unwrap().len(), 4);
    // The clone is a table of its own.
    db.table("c1")
        .unwrap()
        .put(Put::new("r001").add_column("f", "q", "clone-only"))
        .unwrap();
    assert_ne!(dump(&db, "c1"), at_snapshot);

    // Restore wants the table disabled, and leaves it so.
    let e = db.master().restore_snapshot("s1").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TableNotDisabled, "{e}");
    db.disable_table("t").unwrap();
    db.master().restore_snapshot("s1").unwrap();
    assert!(!db.master().describe("t").unwrap().1);
    db.enable_table("t").unwrap();
    assert_eq!(dump(&db, "t"), at_snapshot);

    // Across a reopen: snapshot, clone and restored table all as they were.
    db.close().unwrap();
    let db = open(tmp.path());
    assert_eq!(dump(&db, "t"), at_snapshot);
    assert_eq!(db.master().list_snapshots().unwrap().len(), 1);
    db.master().clone_snapshot("s1", "c2").unwrap();
    assert_eq!(dump(&db, "c2"), at_snapshot);
}

#[test]
fn files_outlive_the_table_until_no_snapshot_needs_them() {
    let tmp = tempfile::tempdir().unwrap();
    let db = open(tmp.path());
    db.create_table(table("t")).unwrap();
    fill(&db, "t", "a");
    db.master().snapshot("t", "s1").unwrap();
    let at_snapshot = dump(&db, "t");
    let archive = tmp.path().join("archive");
    assert!(archive.exists());
    // Drop the table: the snapshot still clones.
    db.disable_table("t").unwrap();
    db.drop_table("t").unwrap();
    db.master().clone_snapshot("s1", "back").unwrap();
    assert_eq!(dump(&db, "back"), at_snapshot);
    // A second snapshot of the clone shares nothing with s1's archive names.
    db.master().snapshot("back", "s2").unwrap();
    db.master().delete_snapshot("s1").unwrap();
    assert_eq!(db.master().list_snapshots().unwrap().len(), 1);
    // The clone keeps its data (its own names of the files).
    assert_eq!(dump(&db, "back"), at_snapshot);
    db.master().delete_snapshot("s2").unwrap();
    assert!(db.master().list_snapshots().unwrap().is_empty());
    // Nothing left in the archive once no snapshot needs it.
    let left: Vec<_> = walk(&archive);
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(dump(&db, "back"), at_snapshot);
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn names_and_states_are_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let db = open(tmp.path());
    db.create_table(table("t")).unwrap();
    let m = db.master();
    for bad in ["", ".hidden", "a/b", "sp ace"] {
        assert_eq!(
            m.snapshot("t", bad).unwrap_err().kind(),
            ErrorKind::InvalidRequest,
            "{bad:?}"
        );
    }
    assert_eq!(
        m.snapshot("nope", "s").unwrap_err().kind(),
        ErrorKind::TableNotFound
    );
    m.snapshot("t", "s").unwrap();
    let e = m.snapshot("t", "s").unwrap_err();
    assert!(e.to_string().contains("already"), "{e}");
    assert!(m.delete_snapshot("missing").is_err());
    assert!(m.clone_snapshot("missing", "x").is_err());
    assert_eq!(
        m.clone_snapshot("s", "t").unwrap_err().kind(),
        ErrorKind::TableExists
    );
    // A disabled table can be snapshotted too (its files as they are).
    fill(&db, "t", "a");
    db.disable_table("t").unwrap();
    m.snapshot("t", "off").unwrap();
    m.clone_snapshot("off", "off_clone").unwrap();
    assert_eq!(dump(&db, "off_clone").len(), 60);
}

/// Writes go on while the snapshot is taken: the writer puts row a<i> and then z<i>
/// (in another region); a snapshot of one moment holds a prefix of each, z never ahead.
#[test]
fn a_snapshot_is_one_moment_under_concurrent_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Arc::new(open(tmp.path()));
    db.create_table_split(table("t"), vec![b"m".to_vec()])
        .unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let t = db.table("t").unwrap();
            let mut i = 0u32;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                t.put(Put::new(format!("a{i:06}")).add_column("f", "q", "x"))
                    .unwrap();
                t.put(Put::new(format!("z{i:06}")).add_column("f", "q", "x"))
                    .unwrap();
                i += 1;
            }
            i
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(50));
    for n in 0..3 {
        db.master().snapshot("t", &format!("s{n}")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let written = writer.join().unwrap();
    assert!(written > 0);
    for n in 0..3 {
        let c = format!("c{n}");
        db.master().clone_snapshot(&format!("s{n}"), &c).unwrap();
        let t = db.table(&c).unwrap();
        let rows: Vec<Vec<u8>> = t
            .scan(&Scan::new())
            .unwrap()
            .map(|r| r.unwrap().row)
            .collect();
        let a = rows.iter().filter(|r| r[0] == b'a').count();
        let z = rows.iter().filter(|r| r[0] == b'z').count();
        assert!(z == a || z + 1 == a, "snapshot {n}: {a} a-rows, {z} z-rows");
        // Prefixes: the last of each is there, so all before it are.
        for (k, row) in rows.iter().filter(|r| r[0] == b'a').enumerate() {
            assert_eq!(row, &format!("a{k:06}").into_bytes());
        }
        assert!(
            t.get(&Get::new(format!("a{:06}", a.saturating_sub(1))))
                .unwrap()
                .cells
                .len()
                == usize::from(a > 0)
        );
    }
}

/// A failure after every number of file-system steps while a snapshot is taken, then a
/// power loss: afterwards the snapshot is listed and clones the table's contents, or is
/// not listed and a new one of the same name can be taken.
#[test]
fn a_crash_at_any_step_of_a_snapshot_leaves_all_or_nothing() {
    let mut failed_steps = 0;
    for fail_at in 0..200u64 {
        let fs = FaultFs::new();
        let opts = || common::fault_opts(&fs);
        let root = Path::new("/db");
        let db = Database::open_with(root, opts()).unwrap();
        db.create_table_split(table("t"), vec![b"r030".to_vec()])
            .unwrap();
        fill(&db, "t", "a");
        db.flush("t").unwrap();
        fill(&db, "t", "b");
        let expected = dump(&db, "t");
        fs.fail_after(fail_at);
        let ok = db.master().snapshot("t", "s").is_ok();
        fs.heal();
        fs.crash();
        std::mem::forget(db);
        let db = Database::open_with(root, opts()).unwrap();
        let listed = db.master().list_snapshots().unwrap();
        if ok {
            assert_eq!(
                listed.len(),
                1,
                "fail_at {fail_at}: an acknowledged snapshot survives"
            );
        }
        if listed.len() == 1 {
            db.master().clone_snapshot("s", "c").unwrap();
            assert_eq!(dump(&db, "c"), expected, "fail_at {fail_at}");
        } else {
            db.master().snapshot("t", "s").unwrap();
            db.master().clone_snapshot("s", "c").unwrap();
            assert_eq!(dump(&db, "c"), expected, "fail_at {fail_at}");
        }
        if ok {
            break;
        }
        failed_steps += 1;
    }
    assert!(failed_steps > 5, "{failed_steps}");
}

/// A failure after every number of file-system steps while a snapshot is cloned, then a
/// power loss: afterwards the clone is there with the snapshot's contents, or is not
/// there at all (a half-made clone is dropped at open) and can be made again.
#[test]
fn a_crash_at_any_step_of_a_clone_leaves_the_table_whole_or_absent() {
    let mut failed_steps = 0;
    for fail_at in 0..400u64 {
        let fs = FaultFs::new();
        let opts = || common::fault_opts(&fs);
        let root = Path::new("/db");
        let db = Database::open_with(root, opts()).unwrap();
        db.create_table_split(table("t"), vec![b"r030".to_vec()])
            .unwrap();
        fill(&db, "t", "a");
        db.flush("t").unwrap();
        fill(&db, "t", "b");
        let expected = dump(&db, "t");
        db.master().snapshot("t", "s").unwrap();
        fs.fail_after(fail_at);
        let ok = db.master().clone_snapshot("s", "c").is_ok();
        fs.heal();
        fs.crash();
        std::mem::forget(db);
        let db = Database::open_with(root, opts()).unwrap();
        let exists = db.master().table_exists("c");
        assert!(
            exists || !ok,
            "fail_at {fail_at}: an acknowledged clone survives"
        );
        if !exists {
            db.master().clone_snapshot("s", "c").unwrap();
        }
        assert_eq!(dump(&db, "c"), expected, "fail_at {fail_at}");
        if ok {
            break;
        }
        failed_steps += 1;
    }
    assert!(failed_steps > 5, "{failed_steps}");
}

/// A failure after every number of file-system steps while a snapshot is restored,
/// then a power loss: after reopening, the table is there and disabled, holding either
/// what it held before (the restore had not begun) or the snapshot's contents (an
/// interrupted restore is finished at open) — never missing, never half restored.
#[test]
fn a_crash_at_any_step_of_a_restore_leaves_the_old_table_or_the_snapshot() {
    let mut failed_steps = 0;
    for fail_at in 0..400u64 {
        let fs = FaultFs::new();
        let opts = || common::fault_opts(&fs);
        let root = Path::new("/db");
        let db = Database::open_with(root, opts()).unwrap();
        db.create_table_split(table("t"), vec![b"r030".to_vec()])
            .unwrap();
        fill(&db, "t", "a");
        db.flush("t").unwrap();
        let snapshotted = dump(&db, "t");
        db.master().snapshot("t", "s").unwrap();
        fill(&db, "t", "b");
        db.flush("t").unwrap();
        let before = dump(&db, "t");
        assert_ne!(before, snapshotted);
        db.master().disable_table("t").unwrap();
        fs.fail_after(fail_at);
        let ok = db.master().restore_snapshot("s").is_ok();
        fs.heal();
        fs.crash();
        std::mem::forget(db);
        let db = Database::open_with(root, opts()).unwrap();
        assert!(
            db.master().table_exists("t"),
            "fail_at {fail_at}: the table is there"
        );
        assert!(
            !db.master().describe("t").unwrap().1,
            "fail_at {fail_at}: disabled"
        );
        db.master().enable_table("t").unwrap();
        let now = dump(&db, "t");
        if ok {
            assert_eq!(
                now, snapshotted,
                "fail_at {fail_at}: an acknowledged restore"
            );
            break;
        }
        assert!(
            now == before || now == snapshotted,
            "fail_at {fail_at}: neither the old table nor the snapshot"
        );
        failed_steps += 1;
    }
    assert!(failed_steps > 5, "{failed_steps}");
}

/// HBase's own snapshot reader (ClientSideRegionScanner over the manifest, as HBase's
/// snapshot input formats read one) reads a snapshot Cellar took — its database
/// directory is an export's layout — and lists exactly what Cellar's reader lists.
#[test]
fn hbase_reads_a_snapshot_cellar_took() {
    let Some(cp) = common::hbase::oracle_classpath() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let db = open(tmp.path());
    let mut g = FamilyDescriptor::new("g");
    g.versions = 2;
    db.create_table_split(
        table("split_t").with_family(g),
        vec![b"r020".to_vec(), b"r040".to_vec()],
    )
    .unwrap();
    fill(&db, "split_t", "a");
    db.flush("split_t").unwrap();
    let t = db.table("split_t").unwrap();
    t.put(Put::new("r001").add_column("g", "x", "gee")).unwrap();
    t.delete(Delete::new("r030").add_family("f")).unwrap();
    db.split("split_t", Some(b"r030")).unwrap();
    db.master().snapshot("split_t", "cellar_snap").unwrap();
    db.close().unwrap();
    let snap = cellar::hbase_snapshot::read_snapshot(tmp.path(), "cellar_snap").unwrap();
    let ours = cellar::hbase_snapshot::listing(&snap).unwrap();
    let (code, out, err) = common::hbase::run_oracle(
        &cp,
        "SnapshotFixture",
        &["list", tmp.path().to_str().unwrap(), "cellar_snap"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, ours);
    assert!(ours.contains("reference"), "{ours}");
}

/// The table a snapshot was taken of, as HBase's CloneSnapshot program prints a clone:
/// region by region, raw, every version.
fn region_listing(db: &Database, t: &str) -> String {
    use cellar_types::to_string_binary as b;
    let mut out = String::new();
    for r in db.list_regions(t).unwrap() {
        out.push_str(&format!(
            "cells of [{}, {})\n",
            b(&r.info.start),
            b(&r.info.end)
        ));
        let scan = Scan::new()
            .start_row(r.info.start.clone())
            .stop_row(r.info.end.clone())
            .raw(true)
            .max_versions(100);
        for row in db.table(t).unwrap().scan(&scan).unwrap() {
            for c in row.unwrap().cells {
                out.push_str(&format!(
                    "  {}/{}:{}/{}/{} value={}\n",
                    b(c.row()),
                    b(c.family()),
                    b(c.qualifier()),
                    c.timestamp(),
                    c.cell_type().name(),
                    b(c.value())
                ));
            }
        }
    }
    out
}

/// `cellar export-snapshot` writes ExportSnapshot's layout: `import-snapshot` brings it
/// back equal, and a real HBase, given the export in its root directory, clones it
/// cell for cell.
#[test]
fn exported_snapshots_import_back_and_clone_in_hbase() {
    let tmp = tempfile::tempdir().unwrap();
    let dbdir = tmp.path().join("db");
    let db = open(&dbdir);
    db.create_table_split(table("src"), vec![b"r030".to_vec()])
        .unwrap();
    fill(&db, "src", "a");
    db.flush("src").unwrap();
    let t = db.table("src").unwrap();
    t.put(Put::new("r002").add_column_at("f", "q", 12, "newer"))
        .unwrap();
    t.delete(Delete::new("r040").add_family("f")).unwrap();
    db.master().snapshot("src", "exp").unwrap();
    let expected = region_listing(&db, "src");
    db.close().unwrap();
    let export = tmp.path().join("export");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cellar"))
        .args([
            "export-snapshot",
            "exp",
            export.to_str().unwrap(),
            "--db",
            dbdir.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(export.join(".hbase-snapshot/exp/.snapshotinfo").exists());
    // Round trip: the export imports into another database as the same table.
    let other = open(&tmp.path().join("other"));
    other.import_snapshot(&export, "exp", Some("back")).unwrap();
    assert_eq!(region_listing(&other, "back"), expected);
    other.close().unwrap();

    let Some(cp) = common::hbase::oracle_classpath() else {
        return;
    };
    let hbase = common::hbase::HBase::start();
    let root = hbase.dir.path().join("root");
    let copy = std::process::Command::new("cp")
        .arg("-r")
        .arg(export.join(".hbase-snapshot"))
        .arg(export.join("archive"))
        .arg(&root)
        .status()
        .unwrap();
    assert!(copy.success());
    let (code, out, err) = common::hbase::run_oracle(
        &cp,
        "CloneSnapshot",
        &["clone", &hbase.quorum, "exp", "cloned"],
    );
    let tail: Vec<&str> = err.lines().rev().take(30).collect();
    assert!(
        code == 0 && out.contains("ALL OK"),
        "{out}\n{}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
    assert_eq!(out.trim_end_matches("ALL OK\n"), expected);
}

/// The same operations through `cellar server` (MasterService Snapshot,
/// GetCompletedSnapshots, RestoreSnapshot for clone and restore, DeleteSnapshot) with the
/// Rust client, and the shell's commands over it.
#[test]
fn snapshots_through_the_server() {
    use cellar::Connection as _;
    let tmp = tempfile::tempdir().unwrap();
    {
        let db = open(tmp.path());
        db.create_table_split(table("t"), vec![b"r030".to_vec()])
            .unwrap();
        fill(&db, "t", "a");
        db.close().unwrap();
    }
    let server = common::server::ServerProcess::start(tmp.path());
    let conn = cellar::client::RemoteConnection::connect(&server.addr).unwrap();
    let admin = conn.admin();
    admin.snapshot("t", "rs").unwrap();
    let listed = admin.list_snapshots().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!((listed[0].0.as_str(), listed[0].1.as_str()), ("rs", "t"));
    let t = conn.table("t").unwrap();
    t.put(Put::new("r001").add_column_at("f", "q", 10, "later"))
        .unwrap();
    admin.clone_snapshot("rs", "rc").unwrap();
    let rc = conn.table("rc").unwrap();
    let got = rc.get(&Get::new("r001")).unwrap();
    assert_eq!(got.value(b"f", b"q").unwrap(), b"a1");
    assert_eq!(rc.scan(&Scan::new()).unwrap().count(), 60);
    // Restore needs the table disabled.
    assert!(admin.restore_snapshot("rs").is_err());
    admin.disable_table("t").unwrap();
    admin.restore_snapshot("rs").unwrap();
    admin.enable_table("t").unwrap();
    assert_eq!(
        t.get(&Get::new("r001")).unwrap().value(b"f", b"q").unwrap(),
        b"a1"
    );
    admin.delete_snapshot("rs").unwrap();
    assert!(admin.list_snapshots().unwrap().is_empty());
    assert!(admin.delete_snapshot("rs").is_err());
    assert_eq!(server.stop(), Some(0));
}
