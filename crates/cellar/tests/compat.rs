#![allow(clippy::unwrap_used)]
//! Backward compatibility: `testdata/compat/db-v0.1-listing/` is a database directory
//! written by Cellar 0.1 before store-file manifests (store files found by listing,
//! split and merge reference files on disk), with every data block encoding and codec,
//! split and merged regions still holding references, a disabled table and edits only in
//! the WAL. Every later version must open it (upgrading it in place) and read exactly
//! what `expected.txt` lists. `CELLAR_WRITE_COMPAT_FIXTURE=<dir> cargo test -p cellar
//! --test compat -- --ignored write_fixture` writes such a directory with the build at
//! hand.

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cellar::{Database, Options};
use cellar_io::{FaultFs, FileSystem, LocalFs, ManualClock};
use cellar_region::{Config, Delete, FamilyDescriptor, Put, Scan, TableDescriptor};

const FIXTURE: &str = "../../testdata/compat/db-v0.1-listing";

/// The tables: (name, encoding, compression, bloom).
const TABLES: [(&str, &str, &str, &str); 5] = [
    ("enc_none", "NONE", "NONE", "ROW"),
    ("enc_prefix", "PREFIX", "GZ", "ROWCOL"),
    ("enc_diff", "DIFF", "SNAPPY", "NONE"),
    ("enc_fast_diff", "FAST_DIFF", "LZ4", "ROW"),
    ("enc_row_index", "ROW_INDEX_V1", "ZSTD", "ROW"),
];

fn family(encoding: &str, compression: &str, bloom: &str) -> FamilyDescriptor {
    let mut f = FamilyDescriptor::new("f");
    f.set_attribute("VERSIONS", "2").unwrap();
    f.set_attribute("DATA_BLOCK_ENCODING", encoding).unwrap();
    f.set_attribute("COMPRESSION", compression).unwrap();
    f.set_attribute("BLOOMFILTER", bloom).unwrap();
    f.set_attribute("BLOCKSIZE", "4096").unwrap();
    f
}

fn fill(db: &Database, table: &str, rows: u32) {
    let t = db.table(table).unwrap();
    for i in 0..rows {
        for v in 0..2i64 {
            let mut p = Put::new(format!("row{i:04}"));
            for q in ["a", "b", "c"] {
                p = p.add_column_at("f", q, 1_000 + v, format!("{table}-{i}-{q}-{v}"));
            }
            t.put(p).unwrap();
        }
        if i % 7 == 0 {
            t.delete(Delete::new(format!("row{i:04}")).add_columns("f", "b"))
                .unwrap();
        }
    }
}

/// Writes the fixture directory with this build.
#[test]
#[ignore]
fn write_fixture() {
    let Some(dir) = std::env::var_os("CELLAR_WRITE_COMPAT_FIXTURE") else {
        return;
    };
    let dir = PathBuf::from(dir);
    let _ = std::fs::remove_dir_all(&dir);
    let opts = Options {
        fs: Arc::new(LocalFs::new()),
        clock: Arc::new(ManualClock::new(1_700_000_000_000)),
        executor: Arc::new(cellar_io::Threads),
        config: Config::default(),
        background: false,
        lock: false,
    };
    let db = Database::open_with(&dir, opts).unwrap();
    for (name, enc, comp, bloom) in TABLES {
        db.create_table(TableDescriptor::new(name).with_family(family(enc, comp, bloom)))
            .unwrap();
        fill(&db, name, 120);
        db.flush(name).unwrap();
    }
    // A split whose daughters still read the parent's files through references.
    db.create_table(TableDescriptor::new("split").with_family(family("FAST_DIFF", "NONE", "ROW")))
        .unwrap();
    fill(&db, "split", 200);
    db.flush("split").unwrap();
    assert_eq!(db.split("split", Some(b"row0100")).unwrap(), 1);
    // A merge of two compacted daughters, still referencing both parents.
    db.create_table(TableDescriptor::new("merged").with_family(family("DIFF", "GZ", "ROW")))
        .unwrap();
    fill(&db, "merged", 200);
    db.flush("merged").unwrap();
    db.split("merged", Some(b"row0100")).unwrap();
    db.compact("merged", true).unwrap();
    db.merge_regions("merged", b"row0000", b"row0150").unwrap();
    // A disabled table.
    db.create_table(TableDescriptor::new("disabled").with_family(family("NONE", "NONE", "ROW")))
        .unwrap();
    fill(&db, "disabled", 30);
    db.disable_table("disabled").unwrap();
    // Edits that only the WAL holds: the process ends without closing.
    db.create_table(TableDescriptor::new("wal_only").with_family(family("PREFIX", "NONE", "ROW")))
        .unwrap();
    fill(&db, "wal_only", 40);
    std::fs::write(dir.join("expected.txt"), dump(&db)).unwrap();
    std::mem::forget(db);
}

/// Every visible cell of every table (all versions), one line each.
fn dump(db: &Database) -> String {
    let mut out = String::new();
    for name in db.list_tables() {
        let enabled = db.is_enabled(&name).unwrap();
        if !enabled {
            db.enable_table(&name).unwrap();
        }
        let _ = writeln!(out, "table {name} enabled={enabled}");
        let t = db.table(&name).unwrap();
        for r in t.scan(&Scan::new().max_versions(u32::MAX)).unwrap() {
            for c in r.unwrap().cells {
                let _ = writeln!(
                    out,
                    "{} {}:{} {} {:?} {}",
                    cellar_types::to_string_binary(c.row()),
                    cellar_types::to_string_binary(c.family()),
                    cellar_types::to_string_binary(c.qualifier()),
                    c.timestamp(),
                    c.cell_type(),
                    cellar_types::to_string_binary(c.value())
                );
            }
        }
        if !enabled {
            db.disable_table(&name).unwrap();
        }
    }
    out
}

/// Copies a directory tree from the local disk into `fs` under `to`.
fn copy_into(fs: &dyn FileSystem, from: &Path, to: &Path) {
    fs.create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_into(fs, &entry.path(), &target);
        } else {
            let mut w = fs.create(&target).unwrap();
            w.append(&std::fs::read(entry.path()).unwrap()).unwrap();
            w.sync().unwrap();
        }
    }
    fs.sync_dir(to).unwrap();
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)
}

/// Asserts `got` equals the expected dump, naming the first line that differs.
fn assert_same(got: &str, want: &str) {
    let (g, w): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
    for (i, (a, b)) in g.iter().zip(w.iter()).enumerate() {
        assert_eq!(a, b, "line {} differs", i + 1);
    }
    assert_eq!(g.len(), w.len(), "line counts differ");
}

fn expected() -> String {
    std::fs::read_to_string(fixture().join("expected.txt")).unwrap()
}

#[test]
fn the_v0_1_directory_opens_and_reads_identically() {
    let fs = FaultFs::new();
    let root = Path::new("/db");
    copy_into(&fs, &fixture(), root);
    let db = Database::open_with(root, common::fault_opts(&fs)).unwrap();
    assert!(db.failed_regions().is_empty(), "{:?}", db.failed_regions());
    assert_same(&dump(&db), &expected());
    db.close().unwrap();
    // And again after the first open upgraded it.
    let db = Database::open_with(root, common::fault_opts(&fs)).unwrap();
    assert_same(&dump(&db), &expected());
}

#[test]
fn a_crash_at_any_step_of_the_upgrade_loses_nothing() {
    let want = expected();
    let mut crashed = 0;
    for fail_at in (0..4000u64).step_by(37) {
        let fs = FaultFs::new();
        let root = Path::new("/db");
        copy_into(&fs, &fixture(), root);
        fs.fail_after(fail_at);
        let first = Database::open_with(root, common::fault_opts(&fs));
        fs.heal();
        let opened = first.is_ok();
        fs.crash();
        if let Ok(db) = first {
            std::mem::forget(db);
        }
        let db = Database::open_with(root, common::fault_opts(&fs)).unwrap();
        assert!(
            db.failed_regions().is_empty(),
            "fail_at {fail_at}: {:?}",
            db.failed_regions()
        );
        assert_same(&dump(&db), &want);
        if opened {
            break;
        }
        crashed += 1;
    }
    assert!(
        crashed > 10,
        "the loop covered the upgrade's steps ({crashed})"
    );
}
