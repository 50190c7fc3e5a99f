#![allow(clippy::unwrap_used)]
//! The embedded database: table lifecycle, persistence across reopen, the directory lock,
//! durability under simulated power loss, and faults (failed fsync, full disk, corrupt
//! WAL, corrupt store file) — each a clear error with nothing acknowledged lost.

use std::path::Path;

mod common;

use cellar::{Database, DbError, Options};
use cellar_io::{FaultFs, FileSystem};
use cellar_region::{Config, FamilyDescriptor, Get, Put, Scan, TableDescriptor};
use cellar_wal::Durability;
use common::{fault_opts, files_under};

fn table(name: &str, durability: Durability) -> TableDescriptor {
    let mut t = TableDescriptor::new(name).with_family(FamilyDescriptor::new("f"));
    t.durability = durability;
    t
}

fn value(db: &Database, t: &str, row: &str) -> Option<Vec<u8>> {
    db.table(t)
        .unwrap()
        .get(&Get::new(row).add_column("f", "q"))
        .unwrap()
        .value(b"f", b"q")
        .map(<[u8]>::to_vec)
}

#[test]
fn table_lifecycle_and_reopen() {
    let tmp = tempfile::tempdir().unwrap();
    {
        let db = Database::open(tmp.path()).unwrap();
        db.create_table(table("t", Durability::UseDefault)).unwrap();
        assert!(matches!(
            db.create_table(table("t", Durability::UseDefault)),
            Err(DbError::TableExists(_))
        ));
        let t = db.table("t").unwrap();
        for i in 0..100 {
            t.put(Put::new(format!("r{i:03}")).add_column("f", "q", format!("v{i}")))
                .unwrap();
        }
        db.flush("t").unwrap();
        t.put(Put::new("late").add_column("f", "q", "in-wal"))
            .unwrap();
        assert_eq!(db.list_tables(), vec!["t".to_string()]);
        assert!(matches!(db.table("nope"), Err(DbError::TableNotFound(_))));
        // A second open of the same directory is refused while this one holds it.
        match Database::open(tmp.path()) {
            Err(DbError::Locked { .. }) => {}
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("opened twice"),
        }
        db.close().unwrap();
    }
    let db = Database::open(tmp.path()).unwrap();
    assert_eq!(value(&db, "t", "r042"), Some(b"v42".to_vec()));
    assert_eq!(value(&db, "t", "late"), Some(b"in-wal".to_vec()));
    assert_eq!(
        db.table("t").unwrap().scan(&Scan::new()).unwrap().count(),
        101
    );
    // alter: add a family and change one; disable, enable, truncate, drop.
    db.alter_table("t", |d| {
        d.families.push(FamilyDescriptor::new("g"));
        d.families[0].versions = 4;
        Ok(())
    })
    .unwrap();
    let (desc, enabled) = db.describe("t").unwrap();
    assert!(enabled);
    assert_eq!(desc.families[0].versions, 4);
    assert_eq!(value(&db, "t", "r001"), Some(b"v1".to_vec()));
    db.disable_table("t").unwrap();
    assert!(matches!(db.table("t"), Err(DbError::TableNotEnabled(_))));
    db.enable_table("t").unwrap();
    db.truncate_table("t").unwrap();
    assert_eq!(
        db.table("t").unwrap().scan(&Scan::new()).unwrap().count(),
        0
    );
    assert_eq!(db.describe("t").unwrap().0.families.len(), 2);
    assert!(matches!(
        db.drop_table("t"),
        Err(DbError::TableNotDisabled(_))
    ));
    db.disable_table("t").unwrap();
    db.drop_table("t").unwrap();
    assert!(db.list_tables().is_empty());
    db.close().unwrap();
    let db = Database::open(tmp.path()).unwrap();
    assert!(db.list_tables().is_empty());
}

#[test]
fn config_file_keys_are_checked() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("cellar.toml"),
        "\"hbase.table.max.rowsize\" = 4096\n",
    )
    .unwrap();
    let db = Database::open(tmp.path()).unwrap();
    assert_eq!(db.config().max_row_size, 4096);
    db.close().unwrap();
    std::fs::write(
        tmp.path().join("cellar.toml"),
        "\"hbase.table.max.rowsize\" = \"lots\"\n",
    )
    .unwrap();
    let err = Database::open(tmp.path()).err().unwrap().to_string();
    assert!(err.contains("hbase.table.max.rowsize"), "{err}");
    std::fs::write(
        tmp.path().join("cellar.toml"),
        "\"hbase.no.such.key\" = 1\n",
    )
    .unwrap();
    let err = Database::open(tmp.path()).err().unwrap().to_string();
    assert!(err.contains("hbase.no.such.key"), "{err}");
}

#[test]
fn fsync_writes_survive_power_loss() {
    let fs = FaultFs::new();
    let root = Path::new("/db");
    {
        let db = Database::open_with(root, fault_opts(&fs)).unwrap();
        db.create_table(table("t", Durability::FsyncWal)).unwrap();
        let t = db.table("t").unwrap();
        for i in 0..50 {
            t.put(Put::new(format!("r{i:02}")).add_column("f", "q", format!("v{i}")))
                .unwrap();
            if i == 20 {
                db.flush("t").unwrap();
            }
        }
        fs.crash();
        std::mem::forget(db);
    }
    let db = Database::open_with(root, fault_opts(&fs)).unwrap();
    for i in 0..50 {
        assert_eq!(
            value(&db, "t", &format!("r{i:02}")),
            Some(format!("v{i}").into_bytes()),
            "r{i}"
        );
    }
}

#[test]
fn a_failed_fsync_is_an_error_and_loses_nothing_acknowledged() {
    let fs = FaultFs::new();
    let root = Path::new("/db");
    let db = Database::open_with(root, fault_opts(&fs)).unwrap();
    db.create_table(table("t", Durability::FsyncWal)).unwrap();
    let t = db.table("t").unwrap();
    let mut acked = Vec::new();
    fs.fail_after(30);
    let mut failed = 0;
    for i in 0..60 {
        match t.put(Put::new(format!("r{i:02}")).add_column("f", "q", "v")) {
            Ok(()) => acked.push(i),
            Err(e) => {
                failed += 1;
                assert!(
                    e.to_string().contains("injected") || e.to_string().contains("poisoned"),
                    "{e}"
                );
            }
        }
    }
    assert!(failed > 0 && !acked.is_empty());
    // Once failed, always refused: the log is poisoned.
    let first_fail = (0..60).find(|i| !acked.contains(i)).unwrap();
    assert!(
        acked.iter().all(|i| *i < first_fail),
        "no write succeeds after a failure"
    );
    fs.heal();
    fs.crash();
    std::mem::forget(db);
    let db = Database::open_with(root, fault_opts(&fs)).unwrap();
    for i in &acked {
        assert!(
            value(&db, "t", &format!("r{i:02}")).is_some(),
            "acknowledged r{i} lost"
        );
    }
}

#[test]
fn a_full_disk_during_flush_is_an_error_and_the_wal_keeps_the_data() {
    let fs = FaultFs::new();
    let root = Path::new("/db");
    let db = Database::open_with(root, fault_opts(&fs)).unwrap();
    db.create_table(table("t", Durability::FsyncWal)).unwrap();
    let t = db.table("t").unwrap();
    for i in 0..20 {
        t.put(Put::new(format!("r{i:02}")).add_column("f", "q", "v"))
            .unwrap();
    }
    fs.fail_after(2);
    assert!(db.flush("t").is_err());
    fs.heal();
    // Reads still work from memory; after a crash the WAL brings everything back.
    assert!(value(&db, "t", "r07").is_some());
    fs.crash();
    std::mem::forget(db);
    let db = Database::open_with(root, fault_opts(&fs)).unwrap();
    for i in 0..20 {
        assert!(value(&db, "t", &format!("r{i:02}")).is_some(), "r{i}");
    }
    db.flush("t").unwrap();
}

#[test]
fn a_torn_wal_tail_opens_and_mid_log_corruption_is_named() {
    let fs = FaultFs::new();
    let root = Path::new("/db");
    {
        let db = Database::open_with(root, fault_opts(&fs)).unwrap();
        db.create_table(table("t", Durability::FsyncWal)).unwrap();
        let t = db.table("t").unwrap();
        for i in 0..10 {
            t.put(Put::new(format!("r{i:02}")).add_column("f", "q", "v"))
                .unwrap();
        }
        fs.crash();
        std::mem::forget(db);
    }
    let mut segs = Vec::new();
    files_under(&fs, &root.join("wal"), &mut segs);
    let seg = segs
        .iter()
        .max_by_key(|p| fs.file_len(p).unwrap())
        .unwrap()
        .clone();
    let len = fs.file_len(&seg).unwrap();
    // Tear the last record.
    fs.truncate(&seg, len - 3).unwrap();
    {
        let db = Database::open_with(root, fault_opts(&fs)).unwrap();
        let n = db.table("t").unwrap().scan(&Scan::new()).unwrap().count();
        assert_eq!(n, 9);
        let torn = db
            .replay_report()
            .torn_tail
            .as_ref()
            .expect("the cut is reported");
        assert_eq!(torn.segment, seg);
        fs.crash();
        std::mem::forget(db);
    }
    // Corrupt a byte in the middle of the (now shorter) segment.
    fs.flip_byte(&seg, 60, 0x10).unwrap();
    let err = Database::open_with(root, fault_opts(&fs))
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("corrupt WAL segment") && err.contains("offset"),
        "{err}"
    );
}

#[test]
fn a_corrupt_store_file_is_a_clear_error_not_garbage() {
    let fs = FaultFs::new();
    let root = Path::new("/db");
    let db = Database::open_with(root, fault_opts(&fs)).unwrap();
    db.create_table(table("t", Durability::SyncWal)).unwrap();
    let t = db.table("t").unwrap();
    for i in 0..200 {
        t.put(Put::new(format!("r{i:03}")).add_column("f", "q", vec![b'x'; 100]))
            .unwrap();
    }
    db.flush("t").unwrap();
    let mut files = Vec::new();
    files_under(&fs, &root.join("data"), &mut files);
    let store_file = files
        .iter()
        .find(|p| p.parent().unwrap().ends_with("f"))
        .unwrap()
        .clone();
    fs.flip_byte(&store_file, 500, 0x01).unwrap();
    let err = match db.table("t").unwrap().scan(&Scan::new()) {
        Err(e) => e,
        Ok(mut rows) => rows
            .find_map(|r| r.err())
            .expect("a corrupt block must not read back"),
    };
    assert!(err.to_string().to_lowercase().contains("checksum"), "{err}");
}

#[test]
fn power_loss_again_and_again() {
    let fs = FaultFs::new();
    let root = Path::new("/db");
    let mut acked: Vec<(String, String)> = Vec::new();
    let mut x: u64 = 42;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for round in 0..15 {
        let opts = Options {
            config: Config {
                memstore_flush_size: 8192,
                compaction_min_size: Some(0),
                ..Config::default()
            },
            ..fault_opts(&fs)
        };
        let db = Database::open_with(root, opts).unwrap();
        if !db.table_exists("t") {
            db.create_table(table("t", Durability::FsyncWal)).unwrap();
        }
        for (row, v) in &acked {
            assert_eq!(
                value(&db, "t", row).as_deref(),
                Some(v.as_bytes()),
                "round {round}: {row}"
            );
        }
        let t = db.table("t").unwrap();
        for i in 0..next(300) {
            let row = format!("r{:04}", next(2000));
            let v = format!("{round}-{i}");
            t.put(Put::new(row.clone()).add_column("f", "q", v.clone()))
                .unwrap();
            acked.retain(|(r, _)| *r != row);
            acked.push((row, v));
            if next(100) == 0 {
                db.compact("t", next(2) == 0).unwrap();
            }
        }
        // Sometimes the crash lands in the middle of a flush.
        if next(2) == 0 {
            fs.fail_after(next(12));
            let _ = db.flush("t");
            fs.heal();
        }
        fs.crash();
        std::mem::forget(db);
    }
}

/// A flushed table takes no log on disk: a table created (an edit of `hbase:meta`)
/// before 40 MiB of writes would otherwise keep the whole segment of flushed edits; the
/// flush asks the meta region to flush too and the segment goes. The data reads back
/// after reopening.
#[test]
#[allow(clippy::disallowed_methods)] // waits in real time for the background flush
fn a_flush_frees_the_log_a_meta_edit_pinned() {
    let tmp = tempfile::tempdir().unwrap();
    let wal_bytes = |p: &Path| -> u64 {
        let mut files = Vec::new();
        files_under(&cellar_io::LocalFs::new(), p, &mut files);
        files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "wal"))
            .map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0))
            .sum()
    };
    {
        let db = Database::open(tmp.path()).unwrap();
        db.create_table(table("t", Durability::SyncWal)).unwrap();
        let t = db.table("t").unwrap();
        for i in 0..10_000 {
            t.put(Put::new(format!("row{i:05}")).add_column("f", "q", vec![b'x'; 4096]))
                .unwrap();
        }
        assert!(wal_bytes(tmp.path()) > 32 << 20);
        db.flush("t").unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while wal_bytes(tmp.path()) > 1 << 20 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(
            wal_bytes(tmp.path()) <= 1 << 20,
            "{}",
            wal_bytes(tmp.path())
        );
    }
    let db = Database::open(tmp.path()).unwrap();
    assert_eq!(value(&db, "t", "row09999"), Some(vec![b'x'; 4096]));
    assert_eq!(value(&db, "t", "row00000"), Some(vec![b'x'; 4096]));
}

/// The directory after a close: every file with its length.
fn listing(root: &Path) -> Vec<(std::path::PathBuf, u64)> {
    let mut files = Vec::new();
    files_under(&cellar_io::LocalFs, root, &mut files);
    let mut out: Vec<_> = files
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n != "LOCK"))
        .map(|p| {
            let len = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
            (p, len)
        })
        .collect();
    out.sort();
    out
}

/// Once `close` returns, nothing of the closed database touches its directory: the
/// maintenance task (flushes, compactions, splits asked for while writing or at open)
/// ends before the regions close and the lock goes. A compaction or split finishing
/// after it rolled and pruned store manifests under the next process to open the
/// directory ("MANIFEST-…: not found", the region left offline).
#[test]
fn nothing_touches_the_directory_after_close() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("cellar.toml"),
        "\"hbase.hregion.memstore.flush.size\" = 65536\n\"hbase.hstore.compaction.min.size\" = 0\n",
    )
    .unwrap();
    for round in 0..6u64 {
        let db = Database::open(tmp.path()).unwrap();
        if !db.table_exists("t") {
            db.create_table(table("t", Durability::SyncWal)).unwrap();
        }
        let t = db.table("t").unwrap();
        for i in 0..1500u64 {
            t.put(Put::new(format!("r{round}-{i:05}")).add_column("f", "q", vec![b'v'; 300]))
                .unwrap();
        }
        db.close().unwrap();
        // Written and closed at once, then opened and closed at once: the open asks
        // for compactions of the stores with many files.
        for step in ["write", "open"] {
            if step == "open" {
                Database::open(tmp.path()).unwrap().close().unwrap();
            }
            let before = listing(tmp.path());
            // A real pause: the task that must not run after close uses real threads.
            #[allow(clippy::disallowed_methods)]
            std::thread::sleep(std::time::Duration::from_millis(300));
            assert_eq!(
                listing(tmp.path()),
                before,
                "round {round}: files changed after the close that followed the {step}"
            );
        }
    }
    let db = Database::open(tmp.path()).unwrap();
    let rows = db.table("t").unwrap().scan(&Scan::new()).unwrap().count();
    assert_eq!(rows, 6 * 1500);
}
