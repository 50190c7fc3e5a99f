#![allow(clippy::unwrap_used)]
//! HBase read/write semantics on one region, case by case (§2, §13 of the reference).

mod common;

use cellar_region::{
    Append, CompareOp, Condition, Config, Delete, FamilyDescriptor, Get, Increment,
    KeepDeletedCells, Mutation, Put, RegionError, Scan, TableDescriptor,
};
use cellar_types::CellType;
use common::{Harness, T0};

fn table(versions: u32) -> TableDescriptor {
    let mut f = FamilyDescriptor::new("f");
    f.versions = versions;
    TableDescriptor::new("t")
        .with_family(f)
        .with_family(FamilyDescriptor::new("g"))
}

fn versions(h: &Harness, row: &str, q: &str, n: u32) -> Vec<(i64, Vec<u8>)> {
    h.region
        .get(&Get::new(row).add_column("f", q).max_versions(n))
        .unwrap()
        .cells
        .iter()
        .map(|c| (c.timestamp(), c.value().to_vec()))
        .collect()
}

fn put(h: &Harness, row: &str, q: &str, ts: i64, v: &str) {
    h.region
        .put(Put::new(row).add_column_at("f", q, ts, v))
        .unwrap();
}

#[test]
fn versions_and_same_timestamp_overwrite() {
    let h = Harness::new(table(3), Config::default());
    for ts in 1..=5 {
        put(&h, "r", "q", ts, &format!("v{ts}"));
    }
    put(&h, "r", "q", 4, "v4b");
    assert_eq!(
        versions(&h, "r", "q", 10),
        vec![
            (5, b"v5".to_vec()),
            (4, b"v4b".to_vec()),
            (3, b"v3".to_vec())
        ]
    );
    assert_eq!(versions(&h, "r", "q", 1), vec![(5, b"v5".to_vec())]);
    h.region.flush().unwrap();
    put(&h, "r", "q", 5, "v5b");
    assert_eq!(
        versions(&h, "r", "q", 2),
        vec![(5, b"v5b".to_vec()), (4, b"v4b".to_vec())]
    );
    // Time range [3, 5).
    let g = Get::new("r")
        .add_column("f", "q")
        .max_versions(10)
        .time_range(3, 5);
    let ts: Vec<i64> = h
        .region
        .get(&g)
        .unwrap()
        .cells
        .iter()
        .map(|c| c.timestamp())
        .collect();
    assert_eq!(ts, vec![4, 3]);
}

#[test]
fn the_four_delete_kinds() {
    let h = Harness::new(table(5), Config::default());
    for ts in 1..=4 {
        put(&h, "r", "a", ts, "x");
        put(&h, "r", "b", ts, "y");
    }
    // Delete one version.
    h.region
        .delete(Delete::new("r").add_column_version("f", "a", 3))
        .unwrap();
    assert_eq!(
        versions(&h, "r", "a", 5)
            .iter()
            .map(|v| v.0)
            .collect::<Vec<_>>(),
        vec![4, 2, 1]
    );
    // Delete at LATEST removes the newest visible version.
    h.region
        .delete(Delete::new("r").add_column("f", "a"))
        .unwrap();
    assert_eq!(
        versions(&h, "r", "a", 5)
            .iter()
            .map(|v| v.0)
            .collect::<Vec<_>>(),
        vec![2, 1]
    );
    // DeleteFamilyVersion at 2: every column loses ts 2.
    h.region
        .delete(Delete::new("r").add_family_version("f", 2))
        .unwrap();
    assert_eq!(
        versions(&h, "r", "a", 5)
            .iter()
            .map(|v| v.0)
            .collect::<Vec<_>>(),
        vec![1]
    );
    assert_eq!(
        versions(&h, "r", "b", 5)
            .iter()
            .map(|v| v.0)
            .collect::<Vec<_>>(),
        vec![4, 3, 1]
    );
    // DeleteColumn at 3 masks b@3 and older.
    h.region
        .delete(Delete::new("r").add_columns_before("f", "b", 3))
        .unwrap();
    assert_eq!(
        versions(&h, "r", "b", 5)
            .iter()
            .map(|v| v.0)
            .collect::<Vec<_>>(),
        vec![4]
    );
    // Deletes mask puts written later with an older timestamp.
    put(&h, "r", "b", 2, "late");
    assert_eq!(
        versions(&h, "r", "b", 5)
            .iter()
            .map(|v| v.0)
            .collect::<Vec<_>>(),
        vec![4]
    );
    // DeleteFamily at now masks everything older.
    h.region
        .put(Put::new("r").add_column_at("g", "z", 9, "keep"))
        .unwrap();
    h.region.delete(Delete::new("r").add_family("f")).unwrap();
    let row = h.region.get(&Get::new("r")).unwrap();
    assert_eq!(row.cells.len(), 1);
    assert_eq!(row.cells[0].family(), b"g");
    // A whole-row delete marks every family.
    h.region.delete(Delete::new("r")).unwrap();
    assert!(h.region.get(&Get::new("r")).unwrap().is_empty());
    // Raw scans see the markers.
    let raw: Vec<CellType> = h
        .region
        .scanner(&Scan::new().raw(true).max_versions(100))
        .unwrap()
        .flat_map(|r| r.unwrap().cells)
        .map(|c| c.cell_type())
        .collect();
    assert!(raw.contains(&CellType::DeleteFamily));
    assert!(raw.contains(&CellType::DeleteFamilyVersion));
    assert!(raw.contains(&CellType::DeleteColumn));
    assert!(raw.contains(&CellType::Delete));
}

#[test]
fn version_delete_anomaly_until_major_compaction() {
    let h = Harness::new(table(2), Config::default());
    for ts in 1..=3 {
        put(&h, "r", "q", ts, "v");
    }
    h.region
        .delete(Delete::new("r").add_column_version("f", "q", 3))
        .unwrap();
    // t1 reappears: VERSIONS=2 only hid it.
    assert_eq!(
        versions(&h, "r", "q", 5)
            .iter()
            .map(|v| v.0)
            .collect::<Vec<_>>(),
        vec![2, 1]
    );
    h.region.flush().unwrap();
    h.region.compact(true).unwrap();
    assert_eq!(
        versions(&h, "r", "q", 5)
            .iter()
            .map(|v| v.0)
            .collect::<Vec<_>>(),
        vec![2, 1]
    );
    // After the major compaction the marker is gone: a new put at 3 is visible.
    put(&h, "r", "q", 3, "again");
    assert_eq!(
        versions(&h, "r", "q", 5)
            .iter()
            .map(|v| v.0)
            .collect::<Vec<_>>(),
        vec![3, 2]
    );
}

#[test]
fn ttl_min_versions_and_keep_deleted_cells() {
    let mut f = FamilyDescriptor::new("f");
    f.versions = 5;
    f.ttl = 10; // seconds
    f.min_versions = 1;
    f.keep_deleted_cells = KeepDeletedCells::True;
    let h = Harness::new(TableDescriptor::new("t").with_family(f), Config::default());
    put(&h, "r", "q", T0 - 5000, "old");
    put(&h, "r", "q", T0 - 1000, "new");
    assert_eq!(versions(&h, "r", "q", 5).len(), 2);
    h.clock.advance(7000);
    // T0-5000 is now expired; MIN_VERSIONS keeps only the newest when the family is
    // read whole (HBase's wildcard column tracker)...
    let whole = h
        .region
        .get(&Get::new("r").add_family("f").max_versions(5))
        .unwrap();
    assert_eq!(whole.cells.len(), 1);
    // ...while a named column also gets the first expired version after MIN_VERSIONS
    // newer ones (HBase's ExplicitColumnTracker; found by the HBase oracle, seed 1008).
    assert_eq!(
        versions(&h, "r", "q", 5),
        vec![(T0 - 1000, b"new".to_vec()), (T0 - 5000, b"old".to_vec())]
    );
    h.clock.advance(60_000);
    assert_eq!(
        versions(&h, "r", "q", 5),
        vec![(T0 - 1000, b"new".to_vec())]
    );
    // KEEP_DELETED_CELLS: a time-range read ending before the marker still sees the cell.
    put(&h, "r", "k", T0 + 60_000, "kept");
    h.region
        .delete(Delete::new("r").add_columns_before("f", "k", T0 + 61_000))
        .unwrap();
    assert!(versions(&h, "r", "k", 1).is_empty());
    h.region.flush().unwrap();
    h.region.compact(true).unwrap();
    let g = Get::new("r")
        .add_column("f", "k")
        .time_range(0, T0 + 60_500);
    assert_eq!(h.region.get(&g).unwrap().cells.len(), 1);
}

#[test]
fn increment_append_and_check_and_mutate() {
    let h = Harness::new(table(1), Config::default());
    let r = h
        .region
        .increment(Increment::new("c").add_column("f", "n", 5))
        .unwrap();
    assert_eq!(r.cells[0].value(), 5i64.to_be_bytes());
    let r = h
        .region
        .increment(Increment::new("c").add_column("f", "n", -2))
        .unwrap();
    assert_eq!(r.cells[0].value(), 3i64.to_be_bytes());
    let before = h.wal.stats().appends;
    let r = h
        .region
        .increment(Increment::new("c").add_column("f", "n", 0))
        .unwrap();
    assert_eq!(r.cells[0].value(), 3i64.to_be_bytes());
    assert_eq!(
        h.wal.stats().appends,
        before + 1,
        "a zero increment writes a version, as HBase 2.6's does"
    );
    put(&h, "c", "s", 1, "abc");
    assert!(matches!(
        h.region
            .increment(Increment::new("c").add_column("f", "s", 1)),
        Err(RegionError::NotALong { len: 3 })
    ));
    let r = h
        .region
        .append(Append::new("c").add_column("f", "s", "def"))
        .unwrap();
    assert_eq!(r.cells[0].value(), b"abcdef");
    // Timestamps move forward even when the clock does not.
    put(&h, "c", "future", T0 + 100_000, "x");
    let r = h
        .region
        .append(Append::new("c").add_column("f", "future", "y"))
        .unwrap();
    assert_eq!(r.cells[0].timestamp(), T0 + 100_001);

    // checkAndMutate: expected OP stored.
    let p = Mutation::Put(Put::new("c").add_column("f", "flag", "set"));
    let (ok, _) = h
        .region
        .check_and_mutate(
            b"c",
            &Condition::not_exists("f", "flag"),
            std::slice::from_ref(&p),
        )
        .unwrap();
    assert!(ok);
    let (ok, _) = h
        .region
        .check_and_mutate(
            b"c",
            &Condition::not_exists("f", "flag"),
            std::slice::from_ref(&p),
        )
        .unwrap();
    assert!(!ok);
    let cases = [
        (CompareOp::Equal, "abcdef", true),
        (CompareOp::Greater, "abcdeg", true),
        (CompareOp::Greater, "abc", false),
        (CompareOp::Less, "abc", true),
        (CompareOp::LessOrEqual, "abcdef", true),
        (CompareOp::GreaterOrEqual, "a", false),
        (CompareOp::NotEqual, "zz", true),
        (CompareOp::NotEqual, "abcdef", false),
    ];
    for (op, v, want) in cases {
        let d = Mutation::Put(Put::new("c").add_column("f", "hit", format!("{op:?}")));
        let (ok, _) = h
            .region
            .check_and_mutate(b"c", &Condition::matches("f", "s", op, v), &[d])
            .unwrap();
        assert_eq!(ok, want, "{op:?} {v}");
    }
    // mutateRow: all or nothing.
    let bad = [
        Mutation::Put(Put::new("c").add_column("f", "m1", "1")),
        Mutation::Put(Put::new("c").add_column("nope", "m2", "2")),
    ];
    assert!(h.region.mutate_row(b"c", &bad).is_err());
    assert!(versions(&h, "c", "m1", 1).is_empty());
}

/// A Put naming a family the table lacks is refused whole, wherever that family stands
/// among its cells (after a run of known ones, between two, first), and writes nothing.
#[test]
fn a_put_with_an_unknown_family_writes_nothing() {
    let h = Harness::new(table(1), Config::default());
    let puts = [
        Put::new("r")
            .add_column("f", "a", "1")
            .add_column("f", "b", "1")
            .add_column("x", "c", "1"),
        Put::new("r")
            .add_column("f", "a", "1")
            .add_column("x", "c", "1")
            .add_column("g", "d", "1"),
        Put::new("r")
            .add_column("x", "c", "1")
            .add_column("f", "a", "1"),
    ];
    for p in puts {
        let err = h.region.put(p).unwrap_err();
        assert!(
            matches!(&err, RegionError::NoSuchColumnFamily { family, .. } if family == b"x"),
            "{err}"
        );
    }
    assert!(h.region.get(&Get::new("r")).unwrap().cells.is_empty());
}

#[test]
fn limits_cell_size_and_row_size() {
    let config = Config {
        keyvalue_max_size: 1000,
        max_row_size: 5000,
        ..Config::default()
    };
    let h = Harness::new(table(1), config);
    let err = h
        .region
        .put(Put::new("r").add_column("f", "q", vec![0u8; 2000]))
        .unwrap_err();
    assert!(
        err.to_string().contains("exceeds limit of 1000 bytes"),
        "{err}"
    );
    assert!(versions(&h, "r", "q", 1).is_empty());
    for i in 0..20 {
        h.region
            .put(Put::new("wide").add_column("f", format!("q{i:03}"), vec![1u8; 400]))
            .unwrap();
    }
    let err = h.region.get(&Get::new("wide")).unwrap_err();
    assert!(
        matches!(err, RegionError::RowTooBig { limit: 5000, .. }),
        "{err}"
    );
    // A narrower read of the same row is fine.
    assert_eq!(
        h.region
            .get(&Get::new("wide").add_column("f", "q001"))
            .unwrap()
            .cells
            .len(),
        1
    );
}

#[test]
fn memstore_pressure_blocks_with_region_too_busy() {
    let mut t = table(1);
    t.memstore_flush_size = Some(10_000);
    let h = Harness::new(t, Config::default());
    // No background flusher here: writes flush inline and never block for good.
    for i in 0..300 {
        h.region
            .put(Put::new(format!("r{i:04}")).add_column("f", "q", vec![2u8; 200]))
            .unwrap();
    }
    assert!(h.region.store_file_count() > 3);
    assert!(h.region.memstore_size() < 50_000);
    let rows = h.region.scanner(&Scan::new()).unwrap().count();
    assert_eq!(rows, 300);
}

#[test]
fn data_survives_reopen_and_power_loss() {
    let mut h = Harness::new(table(3), Config::default());
    put(&h, "a", "q", 1, "one");
    h.region.flush().unwrap();
    put(&h, "a", "q", 2, "two");
    h.reopen();
    assert_eq!(versions(&h, "a", "q", 3).len(), 2);
    let mut t = table(3);
    t.durability = cellar_wal::Durability::FsyncWal;
    h.table = t;
    h.reopen();
    put(&h, "a", "q", 3, "three");
    h.crash_and_reopen();
    assert_eq!(versions(&h, "a", "q", 3).len(), 3);
    // New writes continue above the replayed sequence ids.
    put(&h, "a", "q", 3, "three-b");
    assert_eq!(versions(&h, "a", "q", 1), vec![(3, b"three-b".to_vec())]);
}

/// Ported from HBase's `TestIncrementsFromClientSide#testIncrementIncrZeroAtFirst`: an
/// increment by 0 of a missing column creates the counter at 0.
#[test]
fn increment_by_zero_writes_a_version() {
    let h = Harness::new(table(3), Config::default());
    let counters = |h: &Harness| -> Vec<(Vec<u8>, i64)> {
        h.region
            .get(&Get::new("row"))
            .unwrap()
            .cells
            .iter()
            .map(|c| {
                let v: [u8; 8] = c.value().try_into().unwrap();
                (c.qualifier().to_vec(), i64::from_be_bytes(v))
            })
            .collect()
    };
    let r = h
        .region
        .increment(Increment::new("row").add_column("f", "col1", 0))
        .unwrap();
    assert_eq!(r.cells.len(), 1);
    assert_eq!(r.cells[0].value(), 0i64.to_be_bytes());
    assert_eq!(counters(&h), vec![(b"col1".to_vec(), 0)]);
    h.region
        .increment(
            Increment::new("row")
                .add_column("f", "col1", 1)
                .add_column("f", "col2", 0)
                .add_column("f", "col3", 2),
        )
        .unwrap();
    assert_eq!(
        counters(&h),
        vec![
            (b"col1".to_vec(), 1),
            (b"col2".to_vec(), 0),
            (b"col3".to_vec(), 2)
        ]
    );
    // On an existing counter a delta of 0 writes a new version with the same value,
    // as HBase 2.6 does.
    let before = versions(&h, "row", "col1", 10).len();
    let r = h
        .region
        .increment(Increment::new("row").add_column("f", "col1", 0))
        .unwrap();
    assert_eq!(r.cells[0].value(), 1i64.to_be_bytes());
    assert_eq!(versions(&h, "row", "col1", 10).len(), before + 1);
}

/// HBase keeps a major compaction asked of a store with no files (`forceMajor`) for
/// its next compaction, so a later minor request runs major and purges delete
/// markers: a put older than the delete is then visible (found by the HBase oracle).
#[test]
fn a_major_request_on_an_empty_store_makes_the_next_compaction_major() {
    let h = Harness::new(table(3), Config::default());
    h.region.compact(true).unwrap();
    h.region.delete(Delete::new("r")).unwrap();
    h.region.flush().unwrap();
    h.region.compact(false).unwrap();
    put(&h, "r", "q", 22, "old but visible");
    assert_eq!(versions(&h, "r", "q", 5).len(), 1);
    // Without the pending request, a minor compaction keeps the marker.
    let h = Harness::new(table(3), Config::default());
    h.region.delete(Delete::new("r")).unwrap();
    h.region.flush().unwrap();
    h.region.compact(false).unwrap();
    put(&h, "r", "q", 22, "masked");
    assert!(versions(&h, "r", "q", 5).is_empty());
}

#[test]
fn expired_store_files_are_removed_but_empty_ones_kept() {
    // HBase's removeUnneededFiles: a file whose newest cell is past the TTL goes
    // before compaction is chosen; an empty file (no time range) never counts as
    // expired, and the newest file always stays.
    let mut f = FamilyDescriptor::new("f");
    f.ttl = 10; // seconds
    let h = Harness::new(TableDescriptor::new("t").with_family(f), Config::default());
    put(&h, "r", "q", T0 - 5000, "old");
    h.region.flush().unwrap();
    put(&h, "r", "x", T0 - 20_000, "already expired");
    h.region.flush().unwrap();
    put(&h, "r", "q", T0 - 1000, "new");
    h.region.flush().unwrap();
    assert_eq!(h.region.store_file_count(), 3);
    h.clock.advance(6000);
    h.region.compact(false).unwrap();
    assert_eq!(h.region.store_file_count(), 2);
    assert_eq!(
        versions(&h, "r", "q", 5),
        vec![(T0 - 1000, b"new".to_vec())]
    );
    h.clock.advance(60_000);
    h.region.compact(false).unwrap();
    assert_eq!(h.region.store_file_count(), 2);
}

#[test]
fn an_open_compacts_only_the_stores_that_need_it() {
    // Family f has two files, one expired; family g has three. HBase, opening the
    // region, asks g alone for a compaction, so f keeps its expired file.
    let mut f = FamilyDescriptor::new("f");
    f.ttl = 10; // seconds
    let table = TableDescriptor::new("t")
        .with_family(f)
        .with_family(FamilyDescriptor::new("g"));
    let h = Harness::new(table, Config::default());
    put(&h, "r", "old", T0 - 9000, "old");
    h.region.flush().unwrap();
    for n in 0..3 {
        h.region
            .put(Put::new("r").add_column_at("g", "q", T0 + n, "v"))
            .unwrap();
        if n == 0 {
            put(&h, "r", "q", T0, "newest");
        }
        h.region.flush().unwrap();
    }
    assert_eq!(h.region.store_file_count(), 2 + 3);
    h.clock.advance(5000);
    assert!(h.region.needs_compaction());
    h.region.compact_stores_needing().unwrap();
    assert_eq!(h.region.store_file_count(), 2 + 1);
    let old = Get::new("r").add_column("f", "old").time_range(0, T0);
    assert!(
        h.region.get(&old).unwrap().cells.is_empty(),
        "expired, not visible"
    );
    // A region-wide request (after a flush) drops the expired file too.
    h.region.compact(false).unwrap();
    assert_eq!(h.region.store_file_count(), 1 + 1);
}

/// A counter updated twice within one millisecond runs ahead of the clock (HBase 2.x's
/// `old + 1`); a put or delete of that row the server stamps afterwards still lands
/// after it, so a counter reset in the same millisecond is not lost.
#[test]
fn server_stamped_writes_follow_a_counter_that_ran_ahead() {
    let h = Harness::new(table(3), Config::default());
    let count = |h: &Harness| -> i64 {
        let r = h.region.get(&Get::new("row")).unwrap();
        let v: [u8; 8] = r.cells[0].value().try_into().unwrap();
        i64::from_be_bytes(v)
    };
    let inc = |h: &Harness, n: i64| {
        h.region
            .increment(Increment::new("row").add_column("f", "c", n))
            .unwrap()
    };
    // The clock stands still: every write is in the same millisecond.
    inc(&h, 0);
    inc(&h, 10);
    let r = inc(&h, 0);
    let ahead = r.cells[0].timestamp();
    assert_eq!(
        versions(&h, "row", "c", 10).len(),
        3,
        "HBase 2.x: three versions"
    );
    h.region
        .put(Put::new("row").add_column("f", "c", 0i64.to_be_bytes()))
        .unwrap();
    assert_eq!(count(&h), 0, "the reset is not masked by the counter");
    assert_eq!(inc(&h, 1).cells[0].value(), 1i64.to_be_bytes());
    let r = h.region.get(&Get::new("row")).unwrap();
    assert!(r.cells[0].timestamp() > ahead);
    h.region
        .delete(Delete::new("row").add_columns("f", "c"))
        .unwrap();
    assert!(
        h.region.get(&Get::new("row")).unwrap().cells.is_empty(),
        "delete lands after it too"
    );
}
