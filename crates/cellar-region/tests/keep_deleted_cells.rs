#![allow(clippy::unwrap_used)]
//! KEEP_DELETED_CELLS through flushes and compactions, ported from HBase's
//! `TestKeepDeletedCells` (formerly `TestKeepDeletes`): three families with the same
//! settings, `fam1` used as family and qualifier, the same puts, deletes, flushes and
//! compactions, and the same expected results and marker counts.

mod common;

use cellar_region::{
    Config, Delete, FamilyDescriptor, Get, KeepDeletedCells, Put, Scan, TableDescriptor,
};
use cellar_types::CellType;
use common::{Harness, T0};

const C0: &str = "fam1";
const C1: &str = "fam2";
const FAMILIES: [&str; 3] = ["fam1", "fam2", "fam3"];

/// HBase's `createTableDescriptor(name, minVersions, versions, ttl, keepDeleted)`.
fn harness(min_versions: u32, versions: u32, ttl_secs: i32, kdc: KeepDeletedCells) -> Harness {
    let mut t = TableDescriptor::new("t");
    for name in FAMILIES {
        let mut f = FamilyDescriptor::new(name);
        f.min_versions = min_versions;
        f.versions = versions;
        f.ttl = ttl_secs;
        f.keep_deleted_cells = kdc;
        t = t.with_family(f);
    }
    Harness::new(t, Config::default())
}

const FOREVER: i32 = cellar_region::FOREVER;

fn put(h: &Harness, row: &str, fam: &str, q: &str, ts: i64, v: &str) {
    h.region
        .put(Put::new(row).with_timestamp(ts).add_column(fam, q, v))
        .unwrap();
}

fn delete(h: &Harness, d: Delete) {
    h.region.delete(d).unwrap();
}

/// Values of `fam:col` a Get of all versions in [0, until) returns; the row holds no
/// other cell.
fn get_values(h: &Harness, row: &str, fam: &str, col: &str, until: i64) -> Vec<String> {
    let r = h
        .region
        .get(&Get::new(row).all_versions().time_range(0, until))
        .unwrap();
    let cells: Vec<_> = r
        .cells
        .iter()
        .filter(|c| c.family() == fam.as_bytes() && c.qualifier() == col.as_bytes())
        .collect();
    assert_eq!(
        cells.len(),
        r.cells.len(),
        "only {fam}:{col} expected: {r:?}"
    );
    cells
        .iter()
        .map(|c| String::from_utf8_lossy(c.value()).into_owned())
        .collect()
}

/// HBase's `checkGet`: a Get of one column, all versions, [0, until).
fn check_get(h: &Harness, row: &str, fam: &str, col: &str, until: i64) -> Vec<String> {
    h.region
        .get(
            &Get::new(row)
                .add_column(fam, col)
                .all_versions()
                .time_range(0, until),
        )
        .unwrap()
        .cells
        .iter()
        .map(|c| String::from_utf8_lossy(c.value()).into_owned())
        .collect()
}

/// HBase's `countDeleteMarkers`: a raw scan with the store's VERSIONS.
fn count_delete_markers(h: &Harness) -> usize {
    let versions = h.table.families[0].versions;
    h.region
        .scanner(&Scan::new().raw(true).max_versions(versions))
        .unwrap()
        .flat_map(|r| r.unwrap().cells)
        .filter(|c| c.cell_type().is_delete())
        .count()
}

fn flush(h: &Harness) {
    h.region.flush().unwrap();
}

fn compact(h: &Harness, major: bool) {
    h.region.compact(major).unwrap();
}

#[test]
fn basic_scenario() {
    let h = harness(0, 3, FOREVER, KeepDeletedCells::True);
    let ts = T0;
    put(&h, "1", C0, C0, ts, "1");
    put(&h, "1", C0, C0, ts + 1, "2");
    put(&h, "1", C0, C0, ts + 2, "3");
    put(&h, "1", C0, C0, ts + 4, "4");
    // A delete marker at ts+2 (one per family).
    delete(&h, Delete::new("1").with_timestamp(ts + 2));
    assert_eq!(count_delete_markers(&h), 3);

    // Something before the marker.
    assert_eq!(get_values(&h, "1", C0, C0, ts + 2), ["2", "1"]);
    flush(&h);
    // The flush keeps three versions: "2" is still there, "1" is gone.
    assert_eq!(get_values(&h, "1", C0, C0, ts + 2), ["2"]);

    compact(&h, true);
    compact(&h, true);
    // One marker left: the others had no older puts.
    assert_eq!(count_delete_markers(&h), 1);
    assert_eq!(get_values(&h, "1", C0, C0, ts + 2), ["2"]);
    // A time range including the marker does not see past rows.
    assert!(get_values(&h, "1", C0, C0, ts + 4).is_empty());

    // Two more puts expire the older ones; an old put again (past the max versions).
    put(&h, "1", C0, C0, ts + 5, "5");
    put(&h, "1", C0, C0, ts + 6, "6");
    put(&h, "1", C0, C0, ts, "1");
    assert!(get_values(&h, "1", C0, C0, ts + 4).is_empty());

    flush(&h);
    compact(&h, true);
    compact(&h, true);
    // The marker itself was collected: a re-put behind it is visible.
    put(&h, "1", C0, C0, ts, "1");
    assert_eq!(get_values(&h, "1", C0, C0, ts + 4), ["1"]);
    assert_eq!(count_delete_markers(&h), 0);
}

#[test]
fn raw_scan_without_keeping_deletes() {
    let h = harness(0, 3, FOREVER, KeepDeletedCells::False);
    let ts = T0;
    put(&h, "1", C0, C0, ts, "1");
    delete(
        &h,
        Delete::new("1")
            .with_timestamp(ts)
            .add_column_version(C0, C0, ts),
    );
    let raw = |h: &Harness| -> usize {
        h.region
            .scanner(&Scan::new().raw(true).all_versions_for_test())
            .unwrap()
            .flat_map(|r| r.unwrap().cells)
            .count()
    };
    // A raw scan returns the marker and the put it deletes.
    assert_eq!(raw(&h), 2);
    flush(&h);
    compact(&h, true);
    // After a major compaction both are gone.
    assert_eq!(raw(&h), 0);
}

trait AllVersions {
    fn all_versions_for_test(self) -> Self;
}
impl AllVersions for Scan {
    fn all_versions_for_test(self) -> Scan {
        self.max_versions(u32::MAX)
    }
}

#[test]
fn without_keeping_deletes() {
    let h = harness(0, 3, FOREVER, KeepDeletedCells::False);
    let ts = T0;
    put(&h, "1", C0, C0, ts, "1");
    delete(
        &h,
        Delete::new("1")
            .with_timestamp(ts + 2)
            .add_column_version(C0, C0, ts),
    );
    // A "past" get or scan does not see rows behind the marker.
    assert!(get_values(&h, "1", C0, C0, ts + 1).is_empty());
    let scanned: usize = h
        .region
        .scanner(&Scan::new().all_versions_for_test().time_range(0, ts + 1))
        .unwrap()
        .map(|r| r.unwrap().cells.len())
        .sum();
    assert_eq!(scanned, 0);
    // Flushing and minor compaction keep markers; a major compaction deletes them.
    flush(&h);
    compact(&h, false);
    assert_eq!(count_delete_markers(&h), 1);
    compact(&h, true);
    assert_eq!(count_delete_markers(&h), 0);
}

#[test]
fn raw_scan_returns_markers_in_order_and_honours_time_ranges() {
    let h = harness(0, 3, FOREVER, KeepDeletedCells::True);
    let ts = T0;
    put(&h, "1", C0, C0, ts, "1");
    put(&h, "1", C0, C0, ts + 2, "2");
    put(&h, "1", C0, C0, ts + 4, "3");
    delete(&h, Delete::new("1").with_timestamp(ts + 1));
    delete(
        &h,
        Delete::new("1")
            .with_timestamp(ts + 2)
            .add_column_version(C0, C0, ts + 2),
    );
    delete(
        &h,
        Delete::new("1")
            .with_timestamp(ts + 3)
            .add_columns_before(C0, C0, ts + 3),
    );
    let raw = |tr: Option<(i64, i64)>| -> Vec<(CellType, String)> {
        let mut s = Scan::new().raw(true).all_versions_for_test();
        if let Some((a, b)) = tr {
            s = s.time_range(a, b);
        }
        h.region
            .scanner(&s)
            .unwrap()
            .flat_map(|r| r.unwrap().cells)
            .map(|c| {
                (
                    c.cell_type(),
                    String::from_utf8_lossy(c.value()).into_owned(),
                )
            })
            .collect()
    };
    let all = raw(None);
    assert_eq!(all.len(), 8, "{all:?}");
    assert_eq!(all[0].0, CellType::DeleteFamily);
    assert_eq!(all[1].1, "3");
    assert!(all[2].0.is_delete());
    assert!(all[3].0.is_delete());
    assert_eq!(all[4].1, "2");
    assert_eq!(all[5].1, "1");
    assert_eq!(all[6].0, CellType::DeleteFamily);
    assert_eq!(all[7].0, CellType::DeleteFamily);
    // Nothing in [0, 1), not even markers.
    assert!(raw(Some((0, 1))).is_empty());
    // New markers filtered out.
    let early = raw(Some((0, ts + 2)));
    assert_eq!(early.len(), 4);
    assert_eq!(early[0].0, CellType::DeleteFamily);
    assert_eq!(early[1].1, "1");
    assert_eq!(early[2].0, CellType::DeleteFamily);
    assert_eq!(early[3].0, CellType::DeleteFamily);
    // Old markers filtered out.
    let late = raw(Some((ts + 3, ts + 5)));
    assert_eq!(late.len(), 2);
    assert_eq!(late[0].1, "3");
    assert!(late[1].0.is_delete());
}

#[test]
fn delete_marker_expiration_empty_store() {
    let h = harness(0, 1, FOREVER, KeepDeletedCells::True);
    let ts = T0;
    let d = || Delete::new("1").with_timestamp(ts);
    delete(&h, d().add_columns_before(C0, C0, ts));
    delete(&h, d().add_family(C0));
    delete(&h, d().add_column_version(C0, C0, ts + 1));
    delete(&h, d().add_column_version(C0, C0, ts + 2));
    // One family marker, one column marker, two version markers.
    assert_eq!(count_delete_markers(&h), 4);
    // Neither a flush nor a minor compaction removes any marker.
    flush(&h);
    assert_eq!(count_delete_markers(&h), 4);
    compact(&h, false);
    assert_eq!(count_delete_markers(&h), 4);
    // A major compaction removes all: there are no puts they affect.
    compact(&h, true);
    assert_eq!(count_delete_markers(&h), 0);
}

/// The setup `testDeleteMarkerExpiration` and `testWithOldRow` share: a put, an older put
/// elsewhere (`other_family`:c0 of row `other_row`), four markers over the first put that
/// neither a flush nor a minor compaction removes, then a newer put, flushed.
fn four_markers_then_a_newer_put(other_family: &str, other_row: &str) -> Harness {
    let h = harness(0, 1, FOREVER, KeepDeletedCells::True);
    let ts = T0;
    put(&h, "1", C0, C0, ts, "1");
    put(&h, other_row, other_family, C0, ts - 10, "1");
    let d = || Delete::new("1").with_timestamp(ts);
    delete(&h, d().add_columns_before(C0, C0, ts));
    delete(&h, d().add_family_before(C0, ts));
    delete(&h, d().add_column_version(C0, C0, ts + 1));
    delete(&h, d().add_column_version(C0, C0, ts + 2));
    // One family marker, one column marker, two version markers.
    assert_eq!(count_delete_markers(&h), 4);
    flush(&h);
    assert_eq!(count_delete_markers(&h), 4);
    compact(&h, false);
    assert_eq!(count_delete_markers(&h), 4);
    // Another put pushes out the earlier one...
    put(&h, "1", C0, C0, ts + 3, "1");
    flush(&h);
    h
}

#[test]
fn delete_marker_expiration() {
    // A put into another family has no effect.
    let h = four_markers_then_a_newer_put(C1, "1");
    // ...but no markers are collected while an affected put is in the files.
    compact(&h, true);
    assert_eq!(count_delete_markers(&h), 4);
    // That compaction collected the earlier put, so this one takes every marker.
    compact(&h, true);
    assert_eq!(count_delete_markers(&h), 0);
}

#[test]
fn with_old_row() {
    // A put of another (older) row in the same store.
    let h = four_markers_then_a_newer_put(C0, "2");
    let ts = T0;
    compact(&h, true);
    assert_eq!(count_delete_markers(&h), 4);
    // All markers remain: the older row keeps them, and the version markers are not yet
    // past VERSIONS.
    compact(&h, true);
    assert_eq!(count_delete_markers(&h), 4);
    // Another put (in the MemStore) pushes the column and version markers past
    // VERSIONS for readers; the family marker stays, however often the files compact
    // (KEEP_DELETED_CELLS => TTL is the way out of that, as HBase notes).
    put(&h, "1", C0, C0, ts + 4, "1");
    compact(&h, true);
    assert_eq!(count_delete_markers(&h), 1);
    compact(&h, true);
    assert_eq!(count_delete_markers(&h), 1);
    flush(&h);
    compact(&h, true);
    compact(&h, true);
    assert_eq!(count_delete_markers(&h), 1);
}

#[test]
fn ranges() {
    let h = harness(0, 3, FOREVER, KeepDeletedCells::True);
    let ts = T0;
    for (t, v) in [(ts, "1"), (ts + 1, "2")] {
        for row in ["1", "2"] {
            h.region
                .put(
                    Put::new(row)
                        .with_timestamp(t)
                        .add_column(C0, C0, v)
                        .add_column(C0, C1, v)
                        .add_column(C1, C0, v)
                        .add_column(C1, C1, v),
                )
                .unwrap();
        }
    }
    delete(
        &h,
        Delete::new("1")
            .with_timestamp(ts + 2)
            .add_columns_before(C0, C0, ts + 2),
    );
    delete(
        &h,
        Delete::new("1")
            .with_timestamp(ts + 2)
            .add_family_before(C1, ts + 2),
    );
    delete(
        &h,
        Delete::new("2")
            .with_timestamp(ts + 2)
            .add_family_before(C0, ts + 2),
    );
    // An older delete, filtered out.
    delete(
        &h,
        Delete::new("1")
            .with_timestamp(ts - 10)
            .add_family_before(C1, ts - 10),
    );
    let both = ["2", "1"];
    let none: [&str; 0] = [];
    // [0, ts+2) does not include the deletes at ts+2.
    for row in ["1", "2"] {
        for (f, q) in [(C0, C0), (C0, C1), (C1, C0), (C1, C1)] {
            assert_eq!(check_get(&h, row, f, q, ts + 2), both, "{row} {f}:{q}");
        }
    }
    // [0, ts+3) does.
    assert_eq!(check_get(&h, "1", C0, C0, ts + 3), none);
    assert_eq!(check_get(&h, "1", C0, C1, ts + 3), both);
    assert_eq!(check_get(&h, "1", C1, C0, ts + 3), none);
    assert_eq!(check_get(&h, "1", C1, C1, ts + 3), none);
    assert_eq!(check_get(&h, "2", C0, C0, ts + 3), none);
    assert_eq!(check_get(&h, "2", C0, C1, ts + 3), none);
    assert_eq!(check_get(&h, "2", C1, C0, ts + 3), both);
    assert_eq!(check_get(&h, "2", C1, C1, ts + 3), both);
}

#[test]
fn delete_marker_versioning() {
    let h = harness(0, 1, FOREVER, KeepDeletedCells::True);
    let ts = T0;
    put(&h, "1", C0, C0, ts, "1");
    // This keeps markers from being collected on the earliest put alone.
    put(&h, "1", C0, C1, ts - 10, "1");
    // Corner case: the put and the column delete have the same timestamp.
    delete(
        &h,
        Delete::new("1")
            .with_timestamp(ts)
            .add_columns_before(C0, C0, ts),
    );
    delete(
        &h,
        Delete::new("1")
            .with_timestamp(ts + 1)
            .add_column_version(C0, C0, ts + 1),
    );
    delete(
        &h,
        Delete::new("1")
            .with_timestamp(ts + 3)
            .add_column_version(C0, C0, ts + 3),
    );
    flush(&h);
    compact(&h, true);
    compact(&h, true);
    assert_eq!(count_delete_markers(&h), 3);

    // Max versions is one: the second put (and every marker after it) will go.
    put(&h, "1", C0, C0, ts + 2, "2");
    // delete, put, delete, delete, put
    assert_eq!(count_delete_markers(&h), 3);
    put(&h, "1", C0, C0, ts + 3, "3");
    // delete, put, put | delete, delete
    assert_eq!(count_delete_markers(&h), 1);
    // The flush only sees the MemStore: it drops the second put before writing, so
    // with one put the markers in the files cannot go.
    flush(&h);
    // delete, put, delete, delete
    assert_eq!(count_delete_markers(&h), 3);
    compact(&h, true);
    assert_eq!(count_delete_markers(&h), 3);
    put(&h, "1", C0, C0, ts + 4, "4");
    flush(&h);
    // One trailing marker remains (only one): markers do not add to the version count.
    assert_eq!(count_delete_markers(&h), 1);
    compact(&h, true);
    compact(&h, true);
    assert_eq!(count_delete_markers(&h), 1);
}

#[test]
fn with_min_versions() {
    let h = harness(3, 1000, 1, KeepDeletedCells::True);
    let ts = T0 - 2000; // 2 s in the past
    put(&h, "1", C0, C0, ts, "3");
    put(&h, "1", C0, C0, ts - 1, "2");
    put(&h, "1", C0, C0, ts - 3, "1");
    put(&h, "1", C0, C0, ts - 4, "0");
    // Every put is kept by MIN_VERSIONS = 3... and the fourth by not being compacted.
    delete(&h, Delete::new("1").with_timestamp(ts - 1));
    delete(
        &h,
        Delete::new("1")
            .with_timestamp(ts - 2)
            .add_columns_before(C0, C0, ts - 1),
    );
    assert_eq!(get_values(&h, "1", C0, C0, ts - 2), ["1", "0"]);
    // Three family markers and one column marker.
    assert_eq!(count_delete_markers(&h), 4);
    flush(&h);
    // The flush removes no marker, and drops the fourth version.
    assert_eq!(count_delete_markers(&h), 4);
    assert_eq!(get_values(&h, "1", C0, C0, ts - 2), ["1"]);
    put(&h, "1", C0, C0, ts + 1, "4");
    flush(&h);
    assert_eq!(count_delete_markers(&h), 4);
    assert_eq!(get_values(&h, "1", C0, C0, ts - 2), ["1"]);
    // This pushes out the last put before the family marker.
    put(&h, "1", C0, C0, ts + 2, "5");
    flush(&h);
    compact(&h, true);
    // The two family markers without puts are gone.
    assert_eq!(count_delete_markers(&h), 2);
    // That compaction raised the earliest put: the next takes the last markers.
    compact(&h, true);
    assert_eq!(count_delete_markers(&h), 0);
}

#[test]
fn with_ttl() {
    let h = harness(1, 1000, 1, KeepDeletedCells::Ttl);
    let ts = T0 - 2000;
    put(&h, "1", C0, C0, ts, "3");
    // An old row, so the family marker expires anyway.
    put(&h, "2", C0, C0, ts - 10, "1");
    assert_eq!(check_get(&h, "1", C0, C0, ts + 1), ["3"]);
    delete(&h, Delete::new("1").with_timestamp(ts + 2));
    assert_eq!(check_get(&h, "1", C0, C0, ts + 1), ["3"]);
    assert_eq!(count_delete_markers(&h), 3);
    flush(&h);
    // The flush removes no marker, but the put the expired marker covers is gone.
    assert_eq!(count_delete_markers(&h), 3);
    assert!(check_get(&h, "1", C0, C0, ts + 1).is_empty());
    compact(&h, true);
    assert_eq!(count_delete_markers(&h), 0);
}

/// KEEP_DELETED_CELLS => 'TTL' with MIN_VERSIONS: a marker that expires in the files
/// still removes the put it covers in a major compaction; the deleted data never comes
/// back.
#[test]
fn ttl_expired_marker_removes_what_it_covers() {
    let h = harness(1, 5, 10, KeepDeletedCells::Ttl);
    let ts = T0;
    put(&h, "1", C0, C0, ts, "old");
    put(&h, "1", C0, C0, ts + 1, "newer");
    delete(
        &h,
        Delete::new("1")
            .with_timestamp(ts + 5)
            .add_columns_before(C0, C0, ts + 5),
    );
    flush(&h);
    // The marker is not yet expired: it is kept, and so are the cells behind it.
    compact(&h, true);
    assert!(check_get(&h, "1", C0, C0, i64::MAX).is_empty());
    assert_eq!(check_get(&h, "1", C0, C0, ts + 2), ["newer", "old"]);
    assert_eq!(count_delete_markers(&h), 1);
    // Past the TTL the marker expires; MIN_VERSIONS would keep the newest put, but the
    // expired marker still covers it in this compaction.
    h.clock.advance(20_000);
    compact(&h, true);
    assert_eq!(count_delete_markers(&h), 0);
    assert!(check_get(&h, "1", C0, C0, i64::MAX).is_empty());
    assert!(check_get(&h, "1", C0, C0, ts + 2).is_empty());
    let raw: usize = h
        .region
        .scanner(&Scan::new().raw(true).all_versions_for_test())
        .unwrap()
        .map(|r| r.unwrap().cells.len())
        .sum();
    assert_eq!(raw, 0, "deleted data never comes back");
}
