#![allow(clippy::unwrap_used)]
//! Splits, merges and reopens never change results: the same random operations go to a
//! table that is split, merged and reopened at random and to one that never is; gets and
//! scans (forward, reversed, filtered, batched) must agree after every step. Seeded.
//! Timestamps grow with each step, so compactions (which splits trigger) cannot change
//! what deletes mask.

use cellar::{Database, Options};
use cellar_region::{
    parse_filter, Delete, FamilyDescriptor, Get, Increment, Mutation, Put, Scan, TableDescriptor,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn desc(name: &str) -> TableDescriptor {
    let mut f = FamilyDescriptor::new("f");
    f.versions = 3;
    f.block_size = 512;
    let mut g = FamilyDescriptor::new("g");
    g.block_size = 512;
    TableDescriptor::new(name).with_family(f).with_family(g)
}

type Flat = Vec<(Vec<u8>, Vec<u8>, Vec<u8>, i64, Vec<u8>)>;

fn flat(rs: impl Iterator<Item = cellar_region::RowResult>) -> Flat {
    rs.flat_map(|r| r.cells)
        .map(|c| {
            (
                c.row().to_vec(),
                c.family().to_vec(),
                c.qualifier().to_vec(),
                c.timestamp(),
                c.value().to_vec(),
            )
        })
        .collect()
}

fn run(seed: u64) {
    let tmp = tempfile::tempdir().unwrap();
    let open = || {
        let mut o = Options::for_dir(tmp.path()).unwrap();
        o.background = false;
        Database::open_with(tmp.path(), o).unwrap()
    };
    let mut db = open();
    db.create_table(desc("plain")).unwrap();
    db.create_table(desc("split")).unwrap();
    let mut rng = SmallRng::seed_from_u64(seed);
    let filters = [
        "ColumnPrefixFilter('a')",
        "PageFilter(3)",
        "ValueFilter(=, 'substring:1')",
        "FirstKeyOnlyFilter()",
        "ColumnPaginationFilter(2, 1)",
        "SingleColumnValueFilter('f', 'a', <, 'binary:v5')",
    ];
    for step in 0..400 {
        let ctx = format!("seed {seed} step {step}");
        let row = format!("r{:03}", rng.random_range(0..60));
        let q = ["a", "b", "c"][rng.random_range(0..3)];
        // Timestamps only grow: a put never hides behind an older delete marker, whose
        // effect would legitimately change when a compaction (after a split, say) drops
        // the marker (HBase's "deletes mask puts until a major compaction").
        let ts = 1000 + step;
        let m: Option<Mutation> = match rng.random_range(0..100) {
            0..=44 => Some(Mutation::Put(Put::new(row.clone()).add_column_at(
                if rng.random_bool(0.5) { "f" } else { "g" },
                q,
                ts,
                format!("v{step}"),
            ))),
            45..=54 => Some(Mutation::Delete(
                Delete::new(row.clone()).add_columns_before("f", q, ts),
            )),
            55..=59 => Some(Mutation::Delete(
                Delete::new(row.clone()).add_family_before("g", ts + 1),
            )),
            60..=64 => Some(Mutation::Increment(
                Increment::new(row.clone()).add_column("g", "n", 1),
            )),
            _ => None,
        };
        if let Some(m) = m {
            for t in ["plain", "split"] {
                let mut m = m.clone();
                // Increments read their own table; timestamps are server-side.
                if let Mutation::Increment(_) = m {
                    m = Mutation::Put(Put::new(row.clone()).add_column_at(
                        "g",
                        "n",
                        5000 + step,
                        format!("n{step}"),
                    ));
                }
                db.table(t)
                    .unwrap()
                    .mutate_row(m.row(), std::slice::from_ref(&m))
                    .unwrap();
            }
        }
        match rng.random_range(0..100) {
            0..=5 => {
                db.flush("split").unwrap();
                let at = format!("r{:03}", rng.random_range(1..60));
                let _ = db.split("split", Some(at.as_bytes()));
            }
            6..=8 => {
                db.flush("split").unwrap();
                let _ = db.split("split", None);
            }
            9..=11 => {
                let regions = db.list_regions("split").unwrap();
                if regions.len() > 1 {
                    let i = rng.random_range(0..regions.len() - 1);
                    let (a, b) = (
                        regions[i].info.start.clone(),
                        regions[i + 1].info.start.clone(),
                    );
                    let _ = db.merge_regions("split", &a, &b);
                }
            }
            12..=14 => {
                db.compact("split", rng.random_bool(0.5)).unwrap();
                db.compact("plain", false).unwrap();
            }
            15 => {
                db.close().unwrap();
                db = open();
            }
            _ => {}
        }
        // Compare a random read.
        let mut s = Scan::new()
            .max_versions(rng.random_range(1..4))
            .reversed(rng.random_bool(0.3));
        if rng.random_bool(0.4) {
            let a = format!("r{:03}", rng.random_range(0..60));
            // The start row: the scan's first row either way (reversed: its upper end).
            s = s.with_start_row(a, true);
        }
        if rng.random_bool(0.3) {
            s = s.filter(parse_filter(filters[rng.random_range(0..filters.len())]).unwrap());
        } else if rng.random_bool(0.3) {
            s = s.batch(rng.random_range(1..3));
        }
        // PageFilter counts per region: it legitimately differs across splits.
        let per_region = s
            .filter
            .as_ref()
            .is_some_and(|f| f.to_string().contains("PageFilter"));
        let plain = flat(
            db.table("plain")
                .unwrap()
                .scan(&s)
                .unwrap()
                .map(|r| r.unwrap()),
        );
        let split = flat(
            db.table("split")
                .unwrap()
                .scan(&s)
                .unwrap()
                .map(|r| r.unwrap()),
        );
        if per_region {
            assert!(split.len() >= plain.len(), "{ctx}");
        } else {
            assert_eq!(split, plain, "{ctx}: {s:?}");
        }
        let g = Get::new(row.clone()).max_versions(3);
        assert_eq!(
            flat(std::iter::once(db.table("split").unwrap().get(&g).unwrap())),
            flat(std::iter::once(db.table("plain").unwrap().get(&g).unwrap())),
            "{ctx}: get"
        );
    }
    assert!(db.list_regions("split").unwrap().len() > 1 || seed > 100);
}

#[test]
fn splits_and_merges_never_change_results() {
    for seed in 0..3 {
        run(seed);
    }
}
