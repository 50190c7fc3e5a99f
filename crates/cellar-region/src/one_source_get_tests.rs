//! The one-source Get held to the general read path: random puts (several versions,
//! equal timestamps, four families: many versions, one version, KEEP_DELETED_CELLS, and
//! a TTL with MIN_VERSIONS), deletes of every kind, flushes in between, and Gets of
//! every shape (families, named columns, versions, time ranges), some through a filter
//! that decides on cells alone (pages of columns, column ranges and prefixes, keys
//! only, timestamps, qualifiers) or one with row-level verdicts. Every Get answers as
//! the general path does, the one-source path answers a good share of them itself,
//! and leaves the others.
#![allow(clippy::unwrap_used)]

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::descriptor::{FamilyDescriptor, TableDescriptor};
use crate::region::Region;
use crate::{Config, KeepDeletedCells};
use cellar_api::{Comparator, CompareOp, Delete, FilterSpec, Get, Put, RowResult, TimeRange};

const T0: i64 = 1_700_000_000_000;
const FAMILIES: [&str; 4] = ["a", "b", "k", "t"];

fn region(config: Config) -> Region {
    region_with(config, 3)
}

/// The test region, its family "a" keeping `versions` versions.
fn region_with(config: Config, versions: u32) -> Region {
    let mut a = FamilyDescriptor::new("a");
    a.versions = versions;
    let b = FamilyDescriptor::new("b");
    let mut k = FamilyDescriptor::new("k");
    k.versions = 2;
    k.keep_deleted_cells = KeepDeletedCells::True;
    let mut t = FamilyDescriptor::new("t");
    // One second: cells more than 1,000 ms older than the clock's T0 have expired,
    // but for the newest, which MIN_VERSIONS keeps.
    t.ttl = 1;
    t.min_versions = 1;
    let table = TableDescriptor::new("t")
        .with_family(a)
        .with_family(b)
        .with_family(k)
        .with_family(t);
    crate::test_region::open(table, config, T0)
}

fn cells(r: crate::Result<Option<RowResult>>) -> Result<Vec<cellar_types::Cell>, String> {
    r.map(|o| o.map(|r| r.cells).unwrap_or_default())
        .map_err(|e| e.to_string())
}

fn one_source(region: &Region, get: &Get) -> crate::Result<Option<RowResult>> {
    region.get_from_one_source(get)
}

/// A timestamp among ten, 300 ms apart (equal ones are frequent), the oldest past the
/// TTL of family "t".
fn stamp(rng: &mut SmallRng) -> i64 {
    T0 + 300 * rng.random_range(-8..2)
}

fn random_get(rng: &mut SmallRng, row: Vec<u8>) -> Get {
    let mut get = Get::new(row);
    if rng.random_bool(0.7) {
        for f in FAMILIES {
            match rng.random_range(0..6) {
                0..2 => {}
                2 => {
                    // Named columns (one may be the empty qualifier).
                    for q in ["", "q1", "q2", "q3"] {
                        if rng.random_bool(0.4) {
                            get = get.add_column(f, q);
                        }
                    }
                }
                _ => get = get.add_family(f),
            }
        }
    }
    get.max_versions = rng.random_range(1..=4);
    if rng.random_bool(0.3) {
        let min = stamp(rng) - 300;
        get.time_range = TimeRange::new(min, min + 300 * rng.random_range(1..6));
    }
    if rng.random_bool(0.4) {
        get = get.filter(random_filter(rng));
    }
    get
}

/// A filter of a Get: mostly one that decides on cells alone, sometimes one with
/// row-level verdicts (which the one-source path leaves to the scanner).
fn random_filter(rng: &mut SmallRng) -> FilterSpec {
    let q = |rng: &mut SmallRng| {
        ["", "q1", "q2", "q3"][rng.random_range(0..4)]
            .as_bytes()
            .to_vec()
    };
    match rng.random_range(0..10) {
        0 => FilterSpec::ColumnPagination {
            limit: rng.random_range(1..4),
            offset: rng.random_range(0..3),
            column_offset: None,
        },
        1 => FilterSpec::ColumnPagination {
            limit: rng.random_range(1..4),
            offset: 0,
            column_offset: Some(q(rng)),
        },
        2 => FilterSpec::ColumnRange {
            min: Some(q(rng)).filter(|_| rng.random_bool(0.8)),
            min_inclusive: rng.random_bool(0.5),
            max: Some(q(rng)).filter(|_| rng.random_bool(0.8)),
            max_inclusive: rng.random_bool(0.5),
        },
        3 => FilterSpec::ColumnPrefix(b"q".to_vec()),
        4 => FilterSpec::MultipleColumnPrefix(vec![b"q1".to_vec(), b"q3".to_vec()]),
        5 => FilterSpec::KeyOnly {
            len_as_value: rng.random_bool(0.5),
        },
        6 => FilterSpec::Timestamps(vec![stamp(rng), stamp(rng)]),
        7 => FilterSpec::Qualifier(CompareOp::GreaterOrEqual, Comparator::Binary(q(rng))),
        8 => FilterSpec::ColumnCountGet(rng.random_range(1..4)),
        _ => FilterSpec::Prefix(b"row1".to_vec()),
    }
}

#[test]
fn one_source_gets_answer_as_the_general_path() {
    let region = region(Config::default());
    let mut rng = SmallRng::seed_from_u64(19);
    let (mut answered, mut left, mut filtered) = (0, 0, 0);
    // Rows written lately, which Gets mostly ask for.
    let mut recent: Vec<Vec<u8>> = Vec::new();
    for step in 0..8_000 {
        let mut row = format!("row{:04}", rng.random_range(0..3000)).into_bytes();
        let family = FAMILIES[rng.random_range(0..FAMILIES.len())];
        let qualifier = ["", "q1", "q2", "q3"][rng.random_range(0..4)];
        let ts = stamp(&mut rng);
        match rng.random_range(0..100) {
            0..55 => {
                recent.push(row.clone());
                if recent.len() > 30 {
                    recent.remove(0);
                }
                let mut put = Put::new(row);
                for _ in 0..rng.random_range(1..4) {
                    let f = FAMILIES[rng.random_range(0..FAMILIES.len())];
                    let q = ["", "q1", "q2", "q3"][rng.random_range(0..4)];
                    let value = vec![b'v'; rng.random_range(0..20)];
                    put = put.add_column_at(f, q, stamp(&mut rng), value);
                }
                region.put(put).unwrap();
            }
            55..59 => {
                let d = Delete::new(row);
                let d = match rng.random_range(0..5) {
                    0 => d.add_column_version(family, qualifier, ts),
                    1 => d.add_columns_before(family, qualifier, ts),
                    2 => d.add_family_before(family, ts),
                    3 => d.add_family_version(family, ts),
                    _ => d,
                };
                region.delete(d).unwrap();
            }
            59 if rng.random_bool(0.3) => {
                region.flush().unwrap();
            }
            _ => {
                if !recent.is_empty() && rng.random_bool(0.85) {
                    row = recent[rng.random_range(0..recent.len())].clone();
                }
                let get = random_get(&mut rng, row);
                let general = cells(region.get_general(&get));
                match one_source(&region, &get) {
                    Ok(Some(r)) => {
                        answered += 1;
                        assert_eq!(Ok(r.cells), general, "step {step}: {get:?}");
                        match &get.filter {
                            None => {}
                            Some(FilterSpec::ColumnCountGet(_) | FilterSpec::Prefix(_)) => {
                                panic!("step {step}: a row-level filter read from one source")
                            }
                            Some(_) => filtered += 1,
                        }
                    }
                    Ok(None) => left += 1,
                    Err(e) => panic!("step {step}: {get:?}: {e}"),
                }
                let whole = region.get(&get).map(|r| r.cells).map_err(|e| e.to_string());
                assert_eq!(whole, general, "step {step}: {get:?}");
            }
        }
    }
    // Both paths are exercised: rows in one source (written since the last flush, or
    // in one file), and rows in several or asked of the TTL family.
    assert!(answered > 300, "answered {answered}, left {left}");
    assert!(left > 300, "answered {answered}, left {left}");
    assert!(
        filtered > 100,
        "{filtered} filtered Gets answered from one source"
    );
}

#[test]
fn a_one_source_get_of_a_row_too_big_fails_as_the_general_path() {
    let region = region(Config {
        max_row_size: 300,
        ..Config::default()
    });
    let mut put = Put::new("wide");
    for q in 0..6 {
        put = put.add_column_at("b", format!("q{q}"), T0, vec![b'x'; 100]);
    }
    region.put(put).unwrap();
    let get = Get::new("wide");
    let fast = one_source(&region, &get)
        .map(|_| ())
        .map_err(|e| e.to_string());
    let general = region
        .get_general(&get)
        .map(|_| ())
        .map_err(|e| e.to_string());
    assert!(fast.is_err(), "{fast:?}");
    assert_eq!(fast, general);
    assert!(matches!(
        region.get(&get),
        Err(crate::RegionError::RowTooBig { .. })
    ));
    // A narrower row of the same family is read.
    region
        .put(Put::new("narrow").add_column_at("b", "q", T0, vec![b'y'; 10]))
        .unwrap();
    let narrow = one_source(&region, &Get::new("narrow")).unwrap().unwrap();
    assert_eq!(narrow.cells.len(), 1);
}

/// A family's delete marker sorts in the empty qualifier after that column's newer
/// puts: the one-source path steps through that column, as the general path does,
/// instead of seeking past it, so the marker still masks the older cells of the row.
#[test]
fn a_family_marker_behind_the_empty_column_s_puts_masks_the_row() {
    let region = region(Config::default());
    region
        .put(
            Put::new("r")
                .add_column_at("a", "", T0 + 4, "e4")
                .add_column_at("a", "", T0 + 3, "e3")
                .add_column_at("a", "q1", T0, "old")
                .add_column_at("a", "q2", T0 + 5, "new"),
        )
        .unwrap();
    region
        .delete(Delete::new("r").add_family_before("a", T0 + 1))
        .unwrap();
    let get = Get::new("r").add_family("a");
    let fast = one_source(&region, &get).unwrap().unwrap();
    let general = cells(region.get_general(&get));
    assert_eq!(Ok(fast.cells.clone()), general);
    let values: Vec<&[u8]> = fast.cells.iter().map(|c| c.value()).collect();
    assert_eq!(values, [b"e4".as_slice(), b"new".as_slice()]);
    // Named columns: the matcher's seek to "q1" from the empty qualifier is stepped
    // through it, so the marker still masks "q1".
    let get = Get::new("r").add_column("a", "q1").add_column("a", "q2");
    let fast = one_source(&region, &get).unwrap().unwrap();
    assert_eq!(Ok(fast.cells.clone()), cells(region.get_general(&get)));
    let values: Vec<&[u8]> = fast.cells.iter().map(|c| c.value()).collect();
    assert_eq!(values, [b"new".as_slice()]);
}

/// While a flush holds a row's older cells in its snapshot, a Get of the row reads
/// both segments on the general path: the active one alone would miss the older
/// versions.
#[test]
fn a_row_in_the_segment_being_flushed_is_read_from_both_segments() {
    let region = region(Config::default());
    region
        .put(Put::new("r").add_column_at("a", "q", T0, "old"))
        .unwrap();
    let store = &region.stores[b"a".as_slice()];
    store.snapshot();
    region
        .put(Put::new("r").add_column_at("a", "q", T0 + 1, "new"))
        .unwrap();
    for versions in [1, 3] {
        let mut get = Get::new("r").add_family("a");
        get.max_versions = versions;
        assert!(one_source(&region, &get).unwrap().is_none());
        let values: Vec<Vec<u8>> = region
            .get(&get)
            .unwrap()
            .cells
            .iter()
            .map(|c| c.value().to_vec())
            .collect();
        let expected: &[&[u8]] = if versions == 1 {
            &[b"new"]
        } else {
            &[b"new", b"old"]
        };
        assert_eq!(values, expected);
    }
}

/// A column's versions in one store file: the one-source path steps over a few and
/// seeks past the rest, as the store scanner does, and answers as it does for any
/// version count and time range.
#[test]
fn a_row_in_one_store_file_is_read_from_it() {
    let region = region_with(Config::default(), 100);
    for ts in 0..40 {
        region
            .put(
                Put::new("r")
                    .add_column_at("a", "hot", T0 - ts, format!("h{ts}"))
                    .add_column_at("a", "q", T0 - 2 * ts, format!("q{ts}")),
            )
            .unwrap();
    }
    region.flush().unwrap();
    for (versions, range) in [
        (1, TimeRange::ALL),
        (3, TimeRange::ALL),
        (2, TimeRange::new(T0 - 30, T0 - 10)),
    ] {
        let mut get = Get::new("r").add_family("a");
        get.max_versions = versions;
        get.time_range = range;
        let fast = one_source(&region, &get).unwrap().unwrap();
        assert_eq!(Ok(fast.cells.clone()), cells(region.get_general(&get)));
        assert!(!fast.cells.is_empty());
    }
}
