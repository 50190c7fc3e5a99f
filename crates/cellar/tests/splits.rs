#![allow(clippy::unwrap_used)]
// Drives real threads and real waits against the engine.
#![allow(clippy::disallowed_methods)]
//! Splits: manual at a row and at the mid-key, daughters serving through references
//! until they compact, the parent cleaned up, a wide row that cannot split, a disabled
//! policy, automatic splits under load, and a crash at every step of a split.

use std::path::Path;
use std::sync::Arc;

use cellar::{Database, Options};
use cellar_io::{FaultFs, ManualClock};
use cellar_region::{Config, FamilyDescriptor, Get, Put, Scan, TableDescriptor};
use cellar_wal::Durability;

/// Small blocks, so that modest files have a mid-key to split at.
fn table() -> TableDescriptor {
    let mut f = FamilyDescriptor::new("f");
    f.block_size = 1024;
    let mut g = FamilyDescriptor::new("g");
    g.block_size = 1024;
    TableDescriptor::new("t").with_family(f).with_family(g)
}

fn load(db: &Database, rows: usize) {
    let t = db.table("t").unwrap();
    for i in 0..rows {
        t.put(
            Put::new(format!("row{i:05}"))
                .add_column("f", "q", format!("v{i}"))
                .add_column("g", "q", format!("w{i}")),
        )
        .unwrap();
    }
}

fn check_all(db: &Database, rows: usize) {
    let got: Vec<_> = db
        .table("t")
        .unwrap()
        .scan(&Scan::new())
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(got.len(), rows);
    for (i, r) in got.iter().enumerate() {
        assert_eq!(r.row, format!("row{i:05}").into_bytes());
        assert_eq!(r.value(b"f", b"q").unwrap(), format!("v{i}").as_bytes());
        assert_eq!(r.value(b"g", b"q").unwrap(), format!("w{i}").as_bytes());
    }
    let back: Vec<_> = db
        .table("t")
        .unwrap()
        .scan(&Scan::new().reversed(true))
        .unwrap()
        .map(|r| r.unwrap().row)
        .collect();
    assert_eq!(back.len(), rows);
    assert_eq!(back[0], format!("row{:05}", rows - 1).into_bytes());
}

#[test]
fn manual_splits_serve_through_references_then_compact_them_away() {
    let tmp = tempfile::tempdir().unwrap();
    let quiet = || {
        let mut o = Options::for_dir(tmp.path()).unwrap();
        o.background = false;
        o
    };
    let db = Database::open_with(tmp.path(), quiet()).unwrap();
    db.create_table(table()).unwrap();
    load(&db, 2000);
    db.flush("t").unwrap();
    load(&db, 2000); // newer versions in the MemStore, flushed by the split
    assert_eq!(db.split("t", Some(b"row01000")).unwrap(), 1);
    let regions = db.list_regions("t").unwrap();
    assert_eq!(regions.len(), 2);
    assert_eq!(regions[0].info.end, b"row01000");
    assert_eq!(regions[1].info.start, b"row01000");
    check_all(&db, 2000);
    // A split of a region still holding references is refused.
    assert!(db
        .split("t", Some(b"row00500"))
        .unwrap_err()
        .to_string()
        .contains("references"));
    // Writes go to the daughters.
    let t = db.table("t").unwrap();
    t.put(
        Put::new("row00001")
            .add_column("f", "q", "v1")
            .add_column("g", "q", "w1"),
    )
    .unwrap();
    assert_eq!(t.get(&Get::new("row01999")).unwrap().cells.len(), 2);
    // Reopen: the catalog and the references bring the same regions back.
    db.close().unwrap();
    let db = Database::open_with(tmp.path(), quiet()).unwrap();
    assert_eq!(db.list_regions("t").unwrap().len(), 2);
    check_all(&db, 2000);
    // Compactions rewrite the references; the janitor then drops the parent.
    db.compact("t", false).unwrap();
    let table_dir = tmp.path().join("data/default/t");
    let dirs = std::fs::read_dir(&table_dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().is_dir())
        .count();
    assert_eq!(dirs, 2, "only the daughters remain");
    check_all(&db, 2000);
    // Split without a row: each region at its own mid-key.
    assert_eq!(db.split("t", None).unwrap(), 2);
    assert_eq!(db.list_regions("t").unwrap().len(), 4);
    check_all(&db, 2000);
}

/// As HBase 2.6's `splitStoreFile`: a daughter gets no reference to a parent file with
/// no cells on its side of the split row, and a link (not a reference) to a file wholly
/// on its side, so it can split again at once; a file across the split row is
/// referenced by both daughters, which must compact before splitting again.
#[test]
fn a_daughter_gets_no_reference_to_a_file_wholly_on_the_other_side() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::for_dir(tmp.path()).unwrap();
    o.background = false;
    let db = Database::open_with(tmp.path(), o).unwrap();
    db.create_table(table()).unwrap();
    let t = db.table("t").unwrap();
    for i in 1000..1200 {
        t.put(Put::new(format!("row{i:05}")).add_column("f", "q", "v"))
            .unwrap();
    }
    db.flush("t").unwrap();
    // Family g only below the split row.
    t.put(Put::new("row00001").add_column("g", "q", "w"))
        .unwrap();
    // At the first row of f's file: the rows below it hold none of f's cells
    // (HBase 2.6 compares the split row's first key with the file's first key).
    assert_eq!(db.split("t", Some(b"row01000")).unwrap(), 1);
    let regions = db.list_regions("t").unwrap();
    assert_eq!(regions.len(), 2);
    // Bottom: g's file only; top: f's file only.
    assert_eq!(regions[0].store_files, 1, "{:?}", regions[0]);
    assert_eq!(regions[1].store_files, 1, "{:?}", regions[1]);
    // Each daughter's file was wholly on its side: linked, not referenced (HBase 2.6's
    // HFileLink), so the daughter splits again at once, without a compaction first.
    // A split row inside the file's range: both new daughters reference it.
    assert_eq!(db.split("t", Some(b"row01100")).unwrap(), 1);
    let regions = db.list_regions("t").unwrap();
    assert_eq!(regions.len(), 3);
    assert_eq!(regions[1].store_files, 1, "{:?}", regions[1]);
    assert_eq!(regions[2].store_files, 1, "{:?}", regions[2]);
    assert!(db
        .split("t", Some(b"row01150"))
        .unwrap_err()
        .to_string()
        .contains("references"));
    let rows: Vec<_> = t
        .scan(&Scan::new())
        .unwrap()
        .map(|r| r.unwrap().row)
        .collect();
    assert_eq!(rows.len(), 201);
    assert_eq!(rows[0], b"row00001");
    assert_eq!(rows[200], b"row01199");
}

#[test]
fn a_wide_row_does_not_split_and_a_disabled_policy_refuses() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Database::open(tmp.path()).unwrap();
    db.create_table(table()).unwrap();
    let t = db.table("t").unwrap();
    for i in 0..3000 {
        t.put(Put::new("one-wide-row").add_column("f", format!("c{i:05}"), "x"))
            .unwrap();
    }
    db.flush("t").unwrap();
    let err = db.split("t", None).unwrap_err().to_string();
    assert!(
        err.contains("cannot split") && err.contains("one-wide-row"),
        "{err}"
    );
    // An explicit row at the region's start is not a split point either.
    assert!(db.split("t", Some(b"")).is_err());
    db.alter_table("t", |d| {
        d.set_attribute("SPLIT_POLICY", "DisabledRegionSplitPolicy")
    })
    .unwrap();
    let err = db.split("t", Some(b"m")).unwrap_err().to_string();
    assert!(err.contains("DisabledRegionSplitPolicy"), "{err}");
}

#[test]
fn tables_split_automatically_under_load() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("cellar.toml"),
        "\"hbase.hregion.memstore.flush.size\" = 65536\n\"hbase.regionserver.region.split.policy\" = \"ConstantSizeRegionSplitPolicy\"\n\"hbase.hregion.max.filesize\" = 131072\n",
    )
    .unwrap();
    let db = Database::open(tmp.path()).unwrap();
    db.create_table(table()).unwrap();
    load(&db, 6000);
    let mut regions = 1;
    for _ in 0..200 {
        regions = db.list_regions("t").unwrap().len();
        if regions >= 3 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(regions >= 3, "a tall table spreads: {regions} regions");
    check_all(&db, 6000);
}

/// Injects a failure after `fail_at` file-system operations of `op` (for every
/// `fail_at` until `op` succeeds), then loses power and reopens: every row must be served
/// exactly once, by `before` regions if `op` failed or `after` if it succeeded.
fn crash_each_step(
    what: &str,
    splits: Vec<Vec<u8>>,
    op: impl Fn(&Database) -> bool,
    before: usize,
    after: usize,
) {
    let mut steps_failed = 0;
    for fail_at in 0..100u64 {
        let fs = FaultFs::new();
        let opts = || Options {
            fs: Arc::new(fs.clone()),
            clock: Arc::new(ManualClock::new(1_700_000_000_000)),
            executor: Arc::new(cellar_io::Threads),
            config: Config::default(),
            background: false,
            lock: false,
        };
        let root = Path::new("/db");
        let db = Database::open_with(root, opts()).unwrap();
        let mut d = table();
        d.durability = Durability::FsyncWal;
        db.create_table_split(d, splits.clone()).unwrap();
        load(&db, 300);
        db.flush("t").unwrap();
        load(&db, 300);
        fs.fail_after(fail_at);
        let ok = op(&db);
        fs.heal();
        fs.crash();
        std::mem::forget(db);
        let db = Database::open_with(root, opts()).unwrap();
        let n = db.list_regions("t").unwrap().len();
        assert!(
            n == before || n == after,
            "{what}, fail_at {fail_at}: {n} regions"
        );
        check_all(&db, 300);
        if ok {
            assert_eq!(n, after, "a {what} that returned Ok survives the crash");
            break;
        }
        steps_failed += 1;
    }
    assert!(
        steps_failed > 5,
        "the loop covered the {what}'s steps ({steps_failed})"
    );
}

#[test]
fn a_crash_at_any_step_of_a_split_serves_every_row_once() {
    crash_each_step(
        "split",
        Vec::new(),
        |db| db.split("t", Some(b"row00150")).is_ok(),
        1,
        2,
    );
}

#[test]
fn adjacent_regions_merge_and_a_crash_at_any_step_loses_nothing() {
    // A plain merge first.
    let tmp = tempfile::tempdir().unwrap();
    let db = Database::open(tmp.path()).unwrap();
    db.create_table_split(table(), vec![b"row00100".to_vec(), b"row00200".to_vec()])
        .unwrap();
    load(&db, 300);
    assert!(db
        .merge_regions("t", b"row00000", b"row00250")
        .unwrap_err()
        .to_string()
        .contains("not adjacent"));
    let names: Vec<String> = db
        .list_regions("t")
        .unwrap()
        .iter()
        .map(|r| r.info.encoded.clone())
        .collect();
    db.merge_regions_named(&names[1], &names[2]).unwrap();
    let regions = db.list_regions("t").unwrap();
    assert_eq!(regions.len(), 2);
    assert_eq!(
        (
            regions[1].info.start.as_slice(),
            regions[1].info.end.as_slice()
        ),
        (&b"row00100"[..], &b""[..])
    );
    check_all(&db, 300);
    db.compact("t", true).unwrap();
    check_all(&db, 300);
    db.close().unwrap();

    // Then with a crash injected at each step.
    crash_each_step(
        "merge",
        vec![b"row00150".to_vec()],
        |db| db.merge_regions("t", b"row00001", b"row00299").is_ok(),
        2,
        1,
    );
}

#[test]
fn key_prefix_policies_never_separate_a_prefix() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Database::open(tmp.path()).unwrap();
    let mut d = table();
    d.set_attribute(
        "SPLIT_POLICY",
        "org.apache.hadoop.hbase.regionserver.DelimitedKeyPrefixRegionSplitPolicy",
    )
    .unwrap();
    d.set_attribute("MEMSTORE_FLUSHSIZE", "65536").unwrap();
    d.set_attribute("MAX_FILESIZE", "196608").unwrap();
    d.configuration.insert(
        "DelimitedKeyPrefixRegionSplitPolicy.delimiter".into(),
        "|".into(),
    );
    db.create_table(d).unwrap();
    let t = db.table("t").unwrap();
    for tenant in 0..40 {
        for order in 0..120 {
            t.put(
                Put::new(format!("tenant{tenant:04}|order|{order:04}"))
                    .add_column("f", "q", vec![b'o'; 40])
                    .add_column("g", "q", "x"),
            )
            .unwrap();
        }
    }
    let mut regions = Vec::new();
    for _ in 0..200 {
        regions = db.list_regions("t").unwrap();
        if regions.len() >= 3 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(regions.len() >= 3, "{} regions", regions.len());
    for r in &regions[1..] {
        assert!(
            !r.info.start.contains(&b'|'),
            "split inside a prefix: {:?}",
            String::from_utf8_lossy(&r.info.start)
        );
    }
    // So the seed's example holds: one tenant's rows always share a region.
    let tenant = |i: u32| -> Vec<cellar_region::Mutation> {
        (0..3)
            .map(|o| {
                cellar_region::Mutation::Put(
                    Put::new(format!("tenant{i:04}|order|{o:04}")).add_column("f", "s", "paid"),
                )
            })
            .collect()
    };
    for i in [0, 17, 39] {
        t.mutate_rows(&tenant(i)).unwrap();
    }
    assert_eq!(
        t.scan(&Scan::new().with_row_prefix("tenant0017|"))
            .unwrap()
            .count(),
        120
    );
}

#[test]
fn a_scan_goes_on_across_a_split_made_under_it() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::for_dir(tmp.path()).unwrap();
    o.background = false;
    let db = Database::open_with(tmp.path(), o).unwrap();
    db.create_table_split(table(), vec![b"row00100".to_vec()])
        .unwrap();
    load(&db, 300);
    db.flush("t").unwrap();
    let mut scan = db
        .table("t")
        .unwrap()
        .scan(&Scan::new().caching(10))
        .unwrap();
    let mut seen = Vec::new();
    for _ in 0..50 {
        seen.push(scan.next().unwrap().unwrap().row);
    }
    // Split the region the scan has not reached yet, and the one it is in.
    db.split("t", Some(b"row00200")).unwrap();
    db.split("t", Some(b"row00060")).unwrap();
    for r in scan {
        seen.push(r.unwrap().row);
    }
    let want: Vec<Vec<u8>> = (0..300)
        .map(|i| format!("row{i:05}").into_bytes())
        .collect();
    assert_eq!(seen, want);
}

#[test]
fn stepping_splits_the_first_region_early_and_disabled_never() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Database::open(tmp.path()).unwrap();
    for (name, policy) in [
        ("step", "SteppingSplitPolicy"),
        ("off", "DisabledRegionSplitPolicy"),
    ] {
        let mut d = table();
        d.name = name.into();
        d.set_attribute("SPLIT_POLICY", policy).unwrap();
        d.set_attribute("MEMSTORE_FLUSHSIZE", "65536").unwrap();
        d.set_attribute("MAX_FILESIZE", "4194304").unwrap();
        db.create_table(d).unwrap();
        let t = db.table(name).unwrap();
        for i in 0..8000 {
            t.put(Put::new(format!("row{i:05}")).add_column("f", "q", vec![b'v'; 60]))
                .unwrap();
        }
    }
    // Stepping: the first region splits past 2 x 64 KiB; the daughters then need 4 MiB,
    // which ~0.6 MiB of data never reaches.
    let mut n = 0;
    for _ in 0..200 {
        n = db.list_regions("step").unwrap().len();
        if n >= 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(db.list_regions("step").unwrap().len(), 2, "first {n}");
    assert_eq!(db.list_regions("off").unwrap().len(), 1);
    assert_eq!(
        db.table("step")
            .unwrap()
            .scan(&Scan::new())
            .unwrap()
            .count(),
        8000
    );
}

#[test]
fn splits_wait_for_running_compactions() {
    for round in 0..4 {
        let tmp = tempfile::tempdir().unwrap();
        let mut o = Options::for_dir(tmp.path()).unwrap();
        o.background = false;
        let db = Arc::new(Database::open_with(tmp.path(), o).unwrap());
        db.create_table(table()).unwrap();
        for _ in 0..4 {
            load(&db, 2000);
            db.flush("t").unwrap();
        }
        let compactor = {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..6 {
                    db.compact("t", i % 2 == 0).unwrap();
                }
            })
        };
        let at = format!("row{:05}", 500 + round * 300);
        db.split("t", Some(at.as_bytes())).unwrap();
        // The second may find its region still holding references: refused, not broken.
        if let Err(e) = db.split("t", Some(b"row01700")) {
            assert!(e.to_string().contains("references"), "{e}");
        }
        compactor.join().unwrap();
        db.compact("t", true).unwrap();
        check_all(&db, 2000);
    }
}

/// Batched and partial-result scans, forward and reversed, while regions split and
/// merge under them: every cell once, in order, and every row's fragments flagged as
/// HBase flags them (more cells may follow on all but the last).
#[test]
fn batched_and_partial_scans_go_on_across_splits_and_merges() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = Options::for_dir(tmp.path()).unwrap();
    o.background = false;
    let db = Database::open_with(tmp.path(), o).unwrap();
    let mut t = table();
    t.families[0].versions = 3;
    t.families[1].versions = 3;
    db.create_table_split(t, vec![b"row00100".to_vec()])
        .unwrap();
    let tbl = db.table("t").unwrap();
    for i in 0..300 {
        let row = format!("row{i:05}");
        for ts in [1, 2] {
            tbl.put(
                Put::new(row.clone())
                    .with_timestamp(ts)
                    .add_column("f", "q1", format!("a{i}.{ts}"))
                    .add_column("f", "q2", format!("b{i}.{ts}"))
                    .add_column("f", "q3", format!("c{i}.{ts}")),
            )
            .unwrap();
        }
        // The row's last cell has an older version behind it.
        for ts in [1, 2] {
            tbl.put(Put::new(row.clone()).with_timestamp(ts).add_column(
                "g",
                "q",
                format!("d{i}.{ts}"),
            ))
            .unwrap();
        }
    }
    db.flush("t").unwrap();
    let want_row = |i: usize| -> Vec<String> {
        vec![
            format!("a{i}.2"),
            format!("b{i}.2"),
            format!("c{i}.2"),
            format!("d{i}.2"),
        ]
    };
    let scans = [
        ("batch 2", Scan::new().batch(2).caching(3)),
        ("batch 3", Scan::new().batch(3).caching(2)),
        ("batch 1", Scan::new().batch(1).caching(5)),
        (
            "partial",
            Scan::new()
                .allow_partial_results(true)
                .max_result_size(30)
                .caching(4),
        ),
        (
            "reversed batch 3",
            Scan::new().batch(3).caching(2).reversed(true),
        ),
    ];
    for (round, (label, scan)) in scans.iter().enumerate() {
        db.compact("t", true).unwrap();
        let s = tbl.scan(scan).unwrap();
        let mut got: Vec<(Vec<u8>, Vec<String>, bool)> = Vec::new();
        let mut n = 0;
        for r in s {
            let r = r.unwrap();
            let cells = r
                .cells
                .iter()
                .map(|c| String::from_utf8_lossy(c.value()).into_owned())
                .collect();
            got.push((r.row.clone(), cells, r.partial));
            n += 1;
            // Split the region being read (and one ahead), later merge two of them.
            let base = 40 + round * 7;
            if n == 25 {
                let at = if scan.reversed { base + 180 } else { base + 10 };
                db.split("t", Some(format!("row{at:05}").as_bytes()))
                    .unwrap();
                let ahead = format!("row{:05}", 250 + round * 3);
                db.split("t", Some(ahead.as_bytes())).unwrap();
            }
            if n == 120 {
                db.compact("t", true).unwrap();
                let regions = db.table("t").unwrap().regions().unwrap();
                if regions.len() >= 2 {
                    let a = regions[0].start_key().to_vec();
                    let b = regions[1].start_key().to_vec();
                    db.merge_regions("t", &a, &b).unwrap();
                }
            }
        }
        // Stitch fragments back; check the flags.
        let mut rows: Vec<(Vec<u8>, Vec<String>)> = Vec::new();
        for (i, (row, cells, partial)) in got.iter().enumerate() {
            let next_same = got.get(i + 1).is_some_and(|n| &n.0 == row);
            assert_eq!(*partial, next_same, "{label}: fragment {i}: {:?}", got[i]);
            if let Some(b) = scan.batch {
                assert!(cells.len() <= b as usize, "{label}: {:?}", got[i]);
                if *partial {
                    assert_eq!(cells.len(), b as usize, "{label}: {:?}", got[i]);
                }
            }
            match rows.last_mut() {
                Some((r, cs)) if r == row => cs.extend(cells.iter().cloned()),
                _ => rows.push((row.clone(), cells.clone())),
            }
        }
        let mut want: Vec<(Vec<u8>, Vec<String>)> = (0..300)
            .map(|i| (format!("row{i:05}").into_bytes(), want_row(i)))
            .collect();
        if scan.reversed {
            want.reverse();
        }
        assert_eq!(rows.len(), want.len(), "{label}");
        for (g, w) in rows.iter().zip(&want) {
            assert_eq!(g, w, "{label}");
        }
    }
}
