#![allow(clippy::unwrap_used)]
//! Damage that must stay local: a store file that cannot open takes only its region
//! offline (named, with the file and the reason, in `failed_regions` and the shell's
//! `status`) while everything else serves and nothing of that region is lost; a damaged
//! bloom is bypassed; families whose names are not UTF-8 never share a directory.

use std::path::{Path, PathBuf};

mod common;

use cellar::{Database, DbError};
use cellar_api::BloomType;
use cellar_hfile::{BlockType, HFileReader};
use cellar_io::{FaultFs, FileSystem};
use cellar_region::{FamilyDescriptor, Get, Put, Scan, TableDescriptor};
use cellar_wal::Durability;
use common::{fault_opts, files_under};

/// The store files (not references, not temporaries) of `table`'s region `encoded`.
fn store_files(fs: &FaultFs, table: &str, encoded: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    files_under(
        fs,
        &Path::new("/db/data/default").join(table).join(encoded),
        &mut out,
    );
    out.retain(|p| {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        !name.starts_with('.') && !p.to_string_lossy().contains("/.tmp/")
    });
    out
}

fn value(db: &Database, t: &str, row: &str) -> Result<Option<Vec<u8>>, DbError> {
    Ok(db
        .table(t)?
        .get(&Get::new(row).add_column("f", "q"))?
        .value(b"f", b"q")
        .map(<[u8]>::to_vec))
}

fn table(name: &str) -> TableDescriptor {
    let mut t = TableDescriptor::new(name).with_family(FamilyDescriptor::new("f"));
    t.durability = Durability::FsyncWal;
    t
}

fn put(db: &Database, t: &str, row: &str, v: &str) {
    db.table(t)
        .unwrap()
        .put(Put::new(row).add_column("f", "q", v))
        .unwrap();
}

#[test]
fn a_damaged_store_file_takes_only_its_region_offline_and_loses_nothing() {
    let fs = FaultFs::new();
    let root = Path::new("/db");
    let (encoded, damaged, original) = {
        let db = Database::open_with(root, fault_opts(&fs)).unwrap();
        db.create_table(table("a")).unwrap();
        db.create_table_split(table("b"), vec![b"m".to_vec()])
            .unwrap();
        for i in 0..20 {
            put(&db, "a", &format!("a{i:02}"), "old");
            put(&db, "b", &format!("c{i:02}"), "old");
            put(&db, "b", &format!("p{i:02}"), "old");
        }
        db.flush("a").unwrap();
        db.flush("b").unwrap();
        // Written after the flush: only in the WAL when the power goes.
        put(&db, "a", "a99", "new");
        put(&db, "b", "c99", "new");
        put(&db, "b", "p99", "new");
        let first = db.list_regions("b").unwrap()[0].info.encoded.clone();
        let file = store_files(&fs, "b", &first).remove(0);
        let original = cellar_io::read_all(&fs, &file).unwrap();
        fs.crash();
        std::mem::forget(db);
        (first, file, original)
    };
    // Damage the trailer of the first region's store file: that region cannot open.
    let len = fs.file_len(&damaged).unwrap();
    for i in 0..64 {
        fs.flip_byte(&damaged, len - 4096 + i, 0xff).unwrap();
    }
    {
        let db = Database::open_with(root, fault_opts(&fs)).unwrap();
        let failed = db.failed_regions();
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert_eq!(failed[0].table, "b");
        assert!(failed[0].region.contains(&encoded), "{failed:?}");
        assert!(
            failed[0].reason.contains(&damaged.display().to_string()),
            "the reason names the file: {failed:?}"
        );
        // Everything else serves: the other table, and the other region of this one.
        assert_eq!(value(&db, "a", "a05").unwrap(), Some(b"old".to_vec()));
        assert_eq!(value(&db, "a", "a99").unwrap(), Some(b"new".to_vec()));
        assert_eq!(value(&db, "b", "p05").unwrap(), Some(b"old".to_vec()));
        assert_eq!(value(&db, "b", "p99").unwrap(), Some(b"new".to_vec()));
        put(&db, "b", "p50", "more");
        let tail: Vec<_> = db
            .table("b")
            .unwrap()
            .scan(&Scan::new().with_start_row("m", true))
            .unwrap()
            .map(|r| r.unwrap().row)
            .collect();
        assert_eq!(tail.len(), 22);
        // The offline region answers with an error naming it and the file.
        let err = value(&db, "b", "c05").unwrap_err();
        assert!(matches!(err, DbError::RegionNotServing { .. }), "{err}");
        assert!(
            err.to_string().contains(&damaged.display().to_string()),
            "{err}"
        );
        let err = db
            .table("b")
            .unwrap()
            .put(Put::new("c50").add_column("f", "q", "x"))
            .unwrap_err();
        assert!(err.to_string().contains("not online"), "{err}");
        assert!(db.table("b").unwrap().scan(&Scan::new()).is_err());
        // A merge with the offline region is refused, and the online one keeps serving.
        let err = db.merge_regions("b", b"", b"m").unwrap_err();
        assert!(err.to_string().contains("not online"), "{err}");
        assert_eq!(value(&db, "b", "p05").unwrap(), Some(b"old".to_vec()));
        // Flushes of the rest, and a WAL roll, keep the offline region's edits.
        db.flush("a").unwrap();
        db.flush("b").unwrap();
        db.wal().roll().unwrap();
        let mut shell = cellar::shell::Shell::new(db, Vec::new());
        shell.execute("status").unwrap();
        shell.execute("status 'detailed'").unwrap();
        let out = String::from_utf8(std::mem::take(shell.output_mut())).unwrap();
        assert_eq!(out.matches("FAILED_OPEN").count(), 2, "{out}");
        assert!(out.contains(&damaged.display().to_string()), "{out}");
        shell.close().unwrap();
    }
    // Repaired, the region opens with everything it had, the WAL's edits included.
    let mut w = fs.create(&damaged).unwrap();
    w.append(&original).unwrap();
    w.sync().unwrap();
    drop(w);
    let db = Database::open_with(root, fault_opts(&fs)).unwrap();
    assert!(db.failed_regions().is_empty());
    for i in 0..20 {
        assert_eq!(
            value(&db, "b", &format!("c{i:02}")).unwrap(),
            Some(b"old".to_vec())
        );
    }
    assert_eq!(value(&db, "b", "c99").unwrap(), Some(b"new".to_vec()));
    assert_eq!(value(&db, "b", "p50").unwrap(), Some(b"more".to_vec()));
}

/// Block offsets of `types` in a store file, walking its headers.
fn block_offsets(fs: &FaultFs, path: &Path, types: &[BlockType]) -> Vec<u64> {
    let r = HFileReader::open(fs, path, None).unwrap();
    let end = r.file_size() - cellar_hfile::TRAILER_SIZE as u64;
    let mut out = Vec::new();
    let mut offset = 0;
    while offset < end {
        let b = r.block_at(offset).unwrap();
        if types.contains(&b.header.block_type) {
            out.push(offset);
        }
        offset += b.header.on_disk_size_with_header();
    }
    out
}

#[test]
fn a_damaged_bloom_is_bypassed() {
    for target in [BlockType::Bloom, BlockType::GeneralBloomMeta] {
        let fs = FaultFs::new();
        let root = Path::new("/db");
        let db = Database::open_with(root, fault_opts(&fs)).unwrap();
        let mut t = table("t");
        t.families[0].bloom = BloomType::Row;
        db.create_table(t).unwrap();
        for i in 0..100 {
            put(&db, "t", &format!("r{i:03}"), &format!("v{i}"));
        }
        db.flush("t").unwrap();
        let encoded = db.list_regions("t").unwrap()[0].info.encoded.clone();
        db.close().unwrap();
        let file = store_files(&fs, "t", &encoded).remove(0);
        let at = block_offsets(&fs, &file, &[target]);
        assert!(!at.is_empty(), "{target:?}");
        fs.flip_byte(&file, at[0] + 40, 0x55).unwrap();
        // The file opens; Gets answer from the data blocks.
        let db = Database::open_with(root, fault_opts(&fs)).unwrap();
        assert!(db.failed_regions().is_empty(), "{target:?}");
        for i in (0..100).step_by(7) {
            assert_eq!(
                value(&db, "t", &format!("r{i:03}")).unwrap(),
                Some(format!("v{i}").into_bytes()),
                "{target:?}"
            );
        }
        assert_eq!(value(&db, "t", "nope").unwrap(), None);
        let r = HFileReader::open(&fs, &file, None).unwrap();
        r.might_contain_row(b"r001").unwrap();
        assert!(
            r.bloom_damage().is_some(),
            "{target:?}: the damage is known"
        );
        assert!(r.might_contain_row(b"absent").unwrap(), "bypassed: maybe");
    }
}

#[test]
fn families_that_are_not_utf8_keep_their_own_directories() {
    let fs = FaultFs::new();
    let root = Path::new("/db");
    {
        let db = Database::open_with(root, fault_opts(&fs)).unwrap();
        let t = TableDescriptor::new("t")
            .with_family(FamilyDescriptor::new(vec![0xfe]))
            .with_family(FamilyDescriptor::new(vec![0xff]))
            .with_family(FamilyDescriptor::new("\u{fffd}"));
        db.create_table(t).unwrap();
        let tbl = db.table("t").unwrap();
        for (f, v) in [
            (vec![0xfe], "fe"),
            (vec![0xff], "ff"),
            ("\u{fffd}".into(), "rc"),
        ] {
            tbl.put(Put::new("r").add_column(f, "q", v)).unwrap();
        }
        db.flush("t").unwrap();
        db.close().unwrap();
    }
    let db = Database::open_with(root, fault_opts(&fs)).unwrap();
    let tbl = db.table("t").unwrap();
    for (f, v) in [
        (vec![0xfe], "fe"),
        (vec![0xff], "ff"),
        ("\u{fffd}".into(), "rc"),
    ] {
        let r = tbl.get(&Get::new("r").add_family(&f)).unwrap();
        assert_eq!(r.cells.len(), 1, "{f:?}: {r:?}");
        assert_eq!(r.cells[0].value(), v.as_bytes());
    }
    // HBase's rule for family names still applies.
    let bad = TableDescriptor::new("u").with_family(FamilyDescriptor::new("a:b"));
    assert!(db.create_table(bad).is_err());
}
