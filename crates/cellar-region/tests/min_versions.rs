#![allow(clippy::unwrap_used)]
//! MIN_VERSIONS with TTL through flushes and compactions, ported from HBase's
//! `TestMinVersions` (HBASE-4071): the same puts at the same ages, the same Gets, the same
//! expected versions before and after each flush and major compaction.

mod common;

use cellar_filter::FilterSpec;
use cellar_region::{
    Config, Delete, FamilyDescriptor, Get, KeepDeletedCells, Put, TableDescriptor,
};
use common::{Harness, T0};

const C0: &str = "fam1";
const C1: &str = "fam2";

fn family(
    name: &str,
    min: u32,
    max: u32,
    ttl_secs: i32,
    kdc: KeepDeletedCells,
) -> FamilyDescriptor {
    let mut f = FamilyDescriptor::new(name);
    f.min_versions = min;
    f.versions = max;
    f.ttl = ttl_secs;
    f.keep_deleted_cells = kdc;
    f
}

fn harness(families: Vec<FamilyDescriptor>) -> Harness {
    let mut t = TableDescriptor::new("t");
    for f in families {
        t = t.with_family(f);
    }
    Harness::new(t, Config::default())
}

fn put(h: &Harness, fam: &str, ts: i64, v: &str) {
    h.region
        .put(Put::new("1").with_timestamp(ts).add_column(fam, fam, v))
        .unwrap();
}

fn values(h: &Harness, g: Get) -> Vec<String> {
    h.region
        .get(&g)
        .unwrap()
        .cells
        .iter()
        .map(|c| String::from_utf8_lossy(c.value()).into_owned())
        .collect()
}

/// A Get of every version: of the row (wildcard columns) and of the column (explicit).
fn both_trackers(h: &Harness, fam: &str) -> (Vec<String>, Vec<String>) {
    (
        values(h, Get::new("1").all_versions()),
        values(h, Get::new("1").all_versions().add_column(fam, fam)),
    )
}

fn flush_compact(h: &Harness) {
    h.region.flush().unwrap();
    h.region.compact(true).unwrap();
}

#[test]
fn store_and_memstore() {
    let h = harness(vec![family(C0, 3, 1000, 1, KeepDeletedCells::False)]);
    let ts = T0 - 2000;
    put(&h, C0, ts - 1, "2");
    put(&h, C0, ts - 3, "0");
    flush_compact(&h);
    put(&h, C0, ts, "3");
    put(&h, C0, ts - 2, "1");
    put(&h, C0, ts - 3, "0");
    // Newest version in the MemStore, the second oldest in the file, the third and fourth
    // in the MemStore again.
    let want = vec!["3".to_string(), "2".into(), "1".into()];
    assert_eq!(both_trackers(&h, C0), (want.clone(), want));
}

#[test]
fn deletes_with_min_versions() {
    let h = harness(vec![family(C0, 3, 1000, 1, KeepDeletedCells::False)]);
    let ts = T0 - 2000;
    put(&h, C0, ts - 2, "1");
    put(&h, C0, ts - 1, "2");
    put(&h, C0, ts, "3");
    h.region
        .delete(Delete::new("1").with_timestamp(ts - 1))
        .unwrap();
    let want = vec!["3".to_string()];
    assert_eq!(both_trackers(&h, C0), (want.clone(), want.clone()));
    flush_compact(&h);
    assert_eq!(both_trackers(&h, C0), (want.clone(), want));
}

#[test]
fn memstore_with_min_versions() {
    let h = harness(vec![family(C0, 2, 1000, 1, KeepDeletedCells::False)]);
    let ts = T0 - 2000;
    put(&h, C0, ts - 2, "2");
    put(&h, C0, ts - 1, "3");
    put(&h, C0, ts, "4");
    flush_compact(&h);
    // The first version, backdated: the latest change is in the MemStore but it is not
    // the latest version.
    put(&h, C0, ts - 3, "1");
    assert_eq!(values(&h, Get::new("1")), ["4"]);
    let want = vec!["4".to_string(), "3".into()];
    assert_eq!(both_trackers(&h, C0), (want.clone(), want));
    put(&h, C0, ts + 1, "5");
    let want = vec!["5".to_string(), "4".into()];
    assert_eq!(both_trackers(&h, C0), (want.clone(), want));
}

#[test]
fn base_case() {
    // Two versions minimum, 1000 maximum, TTL 1 s.
    let h = harness(vec![family(C0, 2, 1000, 1, KeepDeletedCells::False)]);
    let ts = T0 - 2000;
    put(&h, C0, ts - 3, "1");
    put(&h, C0, ts - 2, "2");
    put(&h, C0, ts - 1, "3");
    put(&h, C0, ts, "4");
    assert_eq!(values(&h, Get::new("1")), ["4"]);
    assert_eq!(values(&h, Get::new("1").time_range(0, ts + 1)), ["4"]);
    // The oldest version still exists.
    assert_eq!(values(&h, Get::new("1").time_range(0, ts - 2)), ["1"]);
    // Gets see only the available versions, even before a compaction.
    let want = vec!["4".to_string(), "3".into()];
    assert_eq!(both_trackers(&h, C0), (want.clone(), want));

    // A flush drops the expired versions beyond MIN_VERSIONS (HBASE-4241).
    h.region.flush().unwrap();
    assert!(values(&h, Get::new("1").time_range(0, ts - 2)).is_empty());

    h.region.compact(true).unwrap();
    // The 4th version is still available, and so is the 3rd...
    assert_eq!(values(&h, Get::new("1").time_range(0, ts + 1)), ["4"]);
    assert_eq!(values(&h, Get::new("1").time_range(0, ts)), ["3"]);
    // ...but the 2nd and earlier are gone.
    assert!(values(&h, Get::new("1").time_range(0, ts - 1)).is_empty());
}

#[test]
fn filters_with_min_versions() {
    let h = harness(vec![
        family(C0, 2, 1000, 1, KeepDeletedCells::False),
        family(C1, 2, 1000, 1, KeepDeletedCells::False),
    ]);
    let ts = T0 - 2000;
    for (t, v) in [(ts - 3, "0"), (ts - 2, "1"), (ts - 1, "2"), (ts, "3")] {
        h.region
            .put(
                Put::new("1")
                    .with_timestamp(t)
                    .add_column(C0, C0, v)
                    .add_column(C1, C1, v),
            )
            .unwrap();
    }
    let filter = FilterSpec::Timestamps(vec![ts - 1, ts - 2]);
    let get = |fam: &str| {
        Get::new("1")
            .add_column(fam, fam)
            .filter(filter.clone())
            .all_versions()
    };
    // Only "2": MIN_VERSIONS is 2, so "1" is gone from the user's view.
    assert_eq!(values(&h, get(C1)), ["2"]);
    assert_eq!(values(&h, get(C0)), ["2"]);
    flush_compact(&h);
    // The same after the flush and compaction.
    assert_eq!(values(&h, get(C1)), ["2"]);
    assert_eq!(values(&h, get(C0)), ["2"]);
}

#[test]
fn min_versions_with_keep_deleted_cells_ttl() {
    let ttl = 4;
    let h = harness(vec![family(C0, 2, u32::MAX, ttl, KeepDeletedCells::Ttl)]);
    let start = T0;
    let ts = start - 2000;
    for (t, v) in [(ts - 4, "1"), (ts - 3, "2"), (ts - 2, "3"), (ts - 1, "4")] {
        put(&h, C0, t, v);
    }
    let all = |until: i64| values(&h, Get::new("1").all_versions().time_range(0, until));
    let at = |t: i64| values(&h, Get::new("1").all_versions().timestamp(t));
    // Every version is visible before a compaction.
    assert_eq!(all(ts), ["4", "3", "2", "1"]);
    flush_compact(&h);
    // Nothing was purged yet.
    assert_eq!(all(ts), ["4", "3", "2", "1"]);
    assert_eq!(all(ts - 1), ["3", "2", "1"]);
    assert_eq!(all(ts - 2), ["2", "1"]);
    assert_eq!(all(ts - 3), ["1"]);

    h.clock.advance(ttl as i64 * 1000);
    flush_compact(&h);
    // After the TTL only "1" and "2" were purged.
    assert_eq!(all(ts), ["4", "3"]);
    assert_eq!(all(ts - 1), ["3"]);
    assert_eq!(at(ts - 2), ["3"]);
    assert!(at(ts - 3).is_empty());
    assert!(all(ts - 2).is_empty());
}
