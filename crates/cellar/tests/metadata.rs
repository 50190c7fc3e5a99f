#![allow(clippy::unwrap_used)]
//! Metadata never loses data silently: a crash at every step of create and drop leaves
//! the table whole or absent (and re-creating it makes no overlapping regions); a
//! missing descriptor keeps the table listed and offline with its WAL edits; a missing
//! catalog or store file fails loudly, deleting nothing; stray files in a store
//! directory are ignored; a flush or compaction that crashes before its manifest commit
//! leaves no trace in the store.

mod common;

use std::path::{Path, PathBuf};

use cellar::{Database, DbError};
use cellar_io::{FaultFs, FileSystem};
use cellar_region::{FamilyDescriptor, Get, Put, TableDescriptor};
use cellar_wal::Durability;
use common::{fault_opts, files_under};

fn desc() -> TableDescriptor {
    let mut d = TableDescriptor::new("t").with_family(FamilyDescriptor::new("f"));
    d.durability = Durability::FsyncWal;
    d
}

fn put_rows(db: &Database, n: u32) {
    let t = db.table("t").unwrap();
    for i in 0..n {
        t.put(Put::new(format!("r{i:03}")).add_column("f", "q", format!("v{i}")))
            .unwrap();
    }
}

fn count(db: &Database) -> usize {
    db.table("t")
        .unwrap()
        .scan(&cellar_region::Scan::new())
        .unwrap()
        .count()
}

const ROOT: &str = "/db";

/// Table `t` with ten flushed rows and one more only in the WAL.
fn ten_flushed_rows_and_one_in_the_wal(fs: &FaultFs) -> Database {
    let db = Database::open_with(Path::new(ROOT), fault_opts(fs)).unwrap();
    db.create_table(desc()).unwrap();
    put_rows(&db, 10);
    db.flush("t").unwrap();
    db.table("t")
        .unwrap()
        .put(Put::new("wal-only").add_column("f", "q", "w"))
        .unwrap();
    db
}

#[test]
fn a_crash_at_any_step_of_create_leaves_the_table_whole_or_absent() {
    let mut crashed = 0;
    for fail_at in 0..200u64 {
        let fs = FaultFs::new();
        let root = Path::new(ROOT);
        let db = Database::open_with(root, fault_opts(&fs)).unwrap();
        fs.fail_after(fail_at);
        let ok = db.create_table_split(desc(), vec![b"m".to_vec()]).is_ok();
        fs.heal();
        fs.crash();
        std::mem::forget(db);
        let db = Database::open_with(root, fault_opts(&fs)).unwrap();
        if db.table_exists("t") {
            assert_eq!(db.list_regions("t").unwrap().len(), 2, "fail_at {fail_at}");
        } else {
            assert!(!ok, "a create that returned Ok survives: fail_at {fail_at}");
            db.create_table_split(desc(), vec![b"m".to_vec()]).unwrap();
        }
        // Whatever happened, the table now has exactly its two regions and works.
        let regions = db.list_regions("t").unwrap();
        assert_eq!(regions.len(), 2, "fail_at {fail_at}");
        assert!(regions[0].info.end == regions[1].info.start);
        put_rows(&db, 20);
        assert_eq!(count(&db), 20);
        if ok {
            break;
        }
        crashed += 1;
    }
    assert!(
        crashed > 3,
        "the loop covered the create's steps ({crashed})"
    );
}

#[test]
fn a_crash_at_any_step_of_drop_leaves_the_table_whole_or_gone() {
    let mut crashed = 0;
    for fail_at in 0..200u64 {
        let fs = FaultFs::new();
        let root = Path::new(ROOT);
        let db = Database::open_with(root, fault_opts(&fs)).unwrap();
        db.create_table(desc()).unwrap();
        put_rows(&db, 30);
        db.disable_table("t").unwrap();
        fs.fail_after(fail_at);
        let ok = db.drop_table("t").is_ok();
        fs.heal();
        fs.crash();
        std::mem::forget(db);
        let db = Database::open_with(root, fault_opts(&fs)).unwrap();
        if db.table_exists("t") {
            assert!(!ok, "a drop that returned Ok survives: fail_at {fail_at}");
            db.enable_table("t").unwrap();
            assert_eq!(count(&db), 30, "fail_at {fail_at}");
        } else {
            let mut left = Vec::new();
            files_under(&fs, &root.join("data/default"), &mut left);
            assert!(left.is_empty(), "fail_at {fail_at}: {left:?}");
            db.create_table(desc()).unwrap();
            assert_eq!(count(&db), 0, "a dropped table's rows do not come back");
        }
        if ok {
            break;
        }
        crashed += 1;
    }
    assert!(crashed > 3, "the loop covered the drop's steps ({crashed})");
}

#[test]
fn a_missing_descriptor_keeps_the_table_offline_with_its_edits() {
    let fs = FaultFs::new();
    let root = Path::new(ROOT);
    let db = ten_flushed_rows_and_one_in_the_wal(&fs);
    fs.crash();
    std::mem::forget(db);
    let desc_path = root.join("data/default/t/.tabledesc");
    let saved = cellar_io::read_all(&fs, &desc_path).unwrap();
    fs.remove_file(&desc_path).unwrap();

    let db = Database::open_with(root, fault_opts(&fs)).unwrap();
    assert!(db.table_exists("t"), "the table stays listed");
    let failed = db.failed_regions();
    assert_eq!(failed.len(), 1);
    assert!(failed[0].reason.contains("descriptor"), "{failed:?}");
    assert!(matches!(
        db.create_table(desc()),
        Err(DbError::TableExists(_))
    ));
    assert!(db.enable_table("t").is_err());
    // Flushes of other tables and WAL rolls must not lose the offline table's edits.
    let mut other = desc();
    other.name = "other".into();
    db.create_table(other).unwrap();
    db.flush("other").unwrap();
    drop(db);

    let mut w = fs.create(&desc_path).unwrap();
    w.append(&saved).unwrap();
    w.sync().unwrap();
    let db = Database::open_with(root, fault_opts(&fs)).unwrap();
    assert!(db.failed_regions().is_empty());
    let t = db.table("t").unwrap();
    assert_eq!(
        t.get(&Get::new("wal-only")).unwrap().value(b"f", b"q"),
        Some(&b"w"[..])
    );
    assert_eq!(count(&db), 11);
}

fn store_dir(fs: &FaultFs) -> PathBuf {
    let mut files = Vec::new();
    files_under(fs, &Path::new(ROOT).join("data/default/t"), &mut files);
    files
        .iter()
        .find(|p| p.to_string_lossy().contains("MANIFEST-"))
        .and_then(|p| p.parent())
        .map(Path::to_path_buf)
        .unwrap()
}

#[test]
fn missing_catalog_or_store_files_fail_loudly_and_delete_nothing() {
    let fs = FaultFs::new();
    let root = Path::new(ROOT);
    ten_flushed_rows_and_one_in_the_wal(&fs).close().unwrap();
    // The catalog loses its store file.
    let mut meta = Vec::new();
    files_under(&fs, &root.join("data/cellar"), &mut meta);
    let meta_file = meta
        .iter()
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.len() == 32 && !n.contains('.')
        })
        .unwrap()
        .clone();
    let saved = cellar_io::read_all(&fs, &meta_file).unwrap();
    fs.remove_file(&meta_file).unwrap();
    let mut before = Vec::new();
    files_under(&fs, root, &mut before);
    let e = Database::open_with(root, fault_opts(&fs)).err().unwrap();
    assert!(
        e.to_string().contains(&meta_file.display().to_string()),
        "{e}"
    );
    let mut after = Vec::new();
    files_under(&fs, root, &mut after);
    // (Opening the WAL may start a new segment; nothing that was there goes.)
    let gone: Vec<_> = before.iter().filter(|p| !after.contains(p)).collect();
    assert!(gone.is_empty(), "a failed open deletes nothing: {gone:?}");
    let mut w = fs.create(&meta_file).unwrap();
    w.append(&saved).unwrap();
    w.sync().unwrap();

    // A store file goes: the region stays offline naming it; the rest is kept.
    let dir = store_dir(&fs);
    let hfile = fs
        .list_dir(&dir)
        .unwrap()
        .into_iter()
        .find(|p| p.file_name().unwrap().len() == 32)
        .unwrap();
    let saved = cellar_io::read_all(&fs, &hfile).unwrap();
    fs.remove_file(&hfile).unwrap();
    let db = Database::open_with(root, fault_opts(&fs)).unwrap();
    let failed = db.failed_regions();
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0].reason.contains(&hfile.display().to_string()),
        "{failed:?}"
    );
    drop(db);
    let mut w = fs.create(&hfile).unwrap();
    w.append(&saved).unwrap();
    w.sync().unwrap();
    let db = Database::open_with(root, fault_opts(&fs)).unwrap();
    assert_eq!(count(&db), 11);
}

#[test]
fn strays_in_a_store_are_ignored_and_uncommitted_outputs_leave_no_trace() {
    let fs = FaultFs::new();
    let root = Path::new(ROOT);
    let db = Database::open_with(root, fault_opts(&fs)).unwrap();
    db.create_table(desc()).unwrap();
    put_rows(&db, 10);
    db.flush("t").unwrap();
    db.close().unwrap();
    let dir = store_dir(&fs);
    for name in ["README", "old.bak"] {
        let mut w = fs.create(&dir.join(name)).unwrap();
        w.append(b"a note").unwrap();
        w.sync().unwrap();
    }
    // A flush output that never reached the manifest.
    let stray = dir.join("0000018bcfe568000000000000000001");
    let mut w = fs.create(&stray).unwrap();
    w.append(b"not even an hfile").unwrap();
    w.sync().unwrap();
    let db = Database::open_with(root, fault_opts(&fs)).unwrap();
    assert!(db.failed_regions().is_empty());
    assert_eq!(count(&db), 10);
    assert!(fs.exists(&dir.join("README")) && fs.exists(&dir.join("old.bak")));
    assert!(!fs.exists(&stray), "an uncommitted store file is removed");
    // A crash at every step of a flush and of a major compaction loses nothing.
    drop(db);
    for fail_at in 0..60u64 {
        let db = Database::open_with(root, fault_opts(&fs)).unwrap();
        let t = db.table("t").unwrap();
        t.put(Put::new(format!("x{fail_at:03}")).add_column("f", "q", "x"))
            .unwrap();
        fs.fail_after(fail_at);
        let _ = db
            .flush("t")
            .and_then(|_| db.compact("t", true).map(|_| ()));
        fs.heal();
        fs.crash();
        std::mem::forget(db);
        let db = Database::open_with(root, fault_opts(&fs)).unwrap();
        assert!(db.failed_regions().is_empty(), "fail_at {fail_at}");
        assert_eq!(count(&db), 10 + fail_at as usize + 1, "fail_at {fail_at}");
        drop(db);
    }
}

#[test]
fn a_crash_at_any_step_of_an_alter_dropping_a_family_is_all_or_nothing() {
    let mut crashed = 0;
    for fail_at in 0..200u64 {
        let fs = FaultFs::new();
        let root = Path::new(ROOT);
        let db = Database::open_with(root, fault_opts(&fs)).unwrap();
        db.create_table(desc().with_family(FamilyDescriptor::new("g")))
            .unwrap();
        let t = db.table("t").unwrap();
        for i in 0..10 {
            t.put(
                Put::new(format!("r{i}"))
                    .add_column("f", "q", "f")
                    .add_column("g", "q", "g"),
            )
            .unwrap();
        }
        db.flush("t").unwrap();
        fs.fail_after(fail_at);
        let ok = db
            .alter_table("t", |d| {
                d.families.retain(|f| f.name != b"g");
                Ok(())
            })
            .is_ok();
        fs.heal();
        fs.crash();
        std::mem::forget(db);
        let db = Database::open_with(root, fault_opts(&fs)).unwrap();
        assert!(db.failed_regions().is_empty(), "fail_at {fail_at}");
        let (d, _) = db.describe("t").unwrap();
        let has_g = d.family(b"g").is_some();
        let t = db.table("t").unwrap();
        let r = t.get(&Get::new("r3")).unwrap();
        assert_eq!(r.value(b"f", b"q"), Some(&b"f"[..]), "fail_at {fail_at}");
        if has_g {
            assert!(!ok, "an alter that returned Ok survives: fail_at {fail_at}");
            assert_eq!(r.value(b"g", b"q"), Some(&b"g"[..]), "fail_at {fail_at}");
        } else {
            // Re-adding the family brings back none of the dropped data.
            db.alter_table("t", |d| {
                d.families.push(FamilyDescriptor::new("g"));
                Ok(())
            })
            .unwrap();
            let r = db.table("t").unwrap().get(&Get::new("r3")).unwrap();
            assert_eq!(r.value(b"g", b"q"), None, "fail_at {fail_at}");
        }
        if ok {
            break;
        }
        crashed += 1;
    }
    assert!(
        crashed > 3,
        "the loop covered the alter's steps ({crashed})"
    );
}

#[test]
fn a_crash_at_any_step_of_disable_or_enable_leaves_one_state_and_every_row() {
    for enable in [false, true] {
        let mut crashed = 0;
        for fail_at in 0..200u64 {
            let fs = FaultFs::new();
            let root = Path::new(ROOT);
            let db = Database::open_with(root, fault_opts(&fs)).unwrap();
            db.create_table_split(desc(), vec![b"r050".to_vec()])
                .unwrap();
            put_rows(&db, 100);
            if enable {
                db.disable_table("t").unwrap();
            }
            fs.fail_after(fail_at);
            let ok = if enable {
                db.enable_table("t").is_ok()
            } else {
                db.disable_table("t").is_ok()
            };
            fs.heal();
            fs.crash();
            std::mem::forget(db);
            let db = Database::open_with(root, fault_opts(&fs)).unwrap();
            let enabled = db.is_enabled("t").unwrap();
            if ok {
                assert_eq!(
                    enabled, enable,
                    "fail_at {fail_at}: a finished change survives"
                );
            }
            if !enabled {
                db.enable_table("t").unwrap();
            }
            assert!(db.failed_regions().is_empty(), "fail_at {fail_at}");
            assert_eq!(count(&db), 100, "fail_at {fail_at}");
            if ok {
                break;
            }
            crashed += 1;
        }
        assert!(crashed > 3, "the loop covered the steps ({crashed})");
    }
}

/// A table dropped and made again within one millisecond (truncate on a fast machine;
/// here the clock stands still): its catalog rows are written after the deletes of the
/// old ones, not masked by them, so the new table is there after a restart.
#[test]
fn a_table_made_again_in_the_same_millisecond_survives_a_restart() {
    let fs = FaultFs::new();
    let db = Database::open_with(Path::new(ROOT), fault_opts(&fs)).unwrap();
    db.create_table_split(desc(), vec![b"r005".to_vec()])
        .unwrap();
    put_rows(&db, 10);
    db.master().disable_table("t").unwrap();
    db.master().drop_table("t").unwrap();
    db.create_table_split(desc(), vec![b"r005".to_vec()])
        .unwrap();
    put_rows(&db, 3);
    db.close().unwrap();
    let db = Database::open_with(Path::new(ROOT), fault_opts(&fs)).unwrap();
    assert!(db.master().table_exists("t"));
    assert_eq!(db.list_regions("t").unwrap().len(), 2);
    assert_eq!(count(&db), 3);
}
