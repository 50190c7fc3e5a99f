#![allow(clippy::unwrap_used)]
// Drives real threads against the database.
#![allow(clippy::disallowed_methods)]
//! The reference model, concurrently: several writer threads, each the only writer of
//! its own rows and holding a model of them, check every read of those rows against it
//! while all of them also contend on one shared row (compare-and-set and increments)
//! and a maintenance thread flushes, compacts, splits and merges. Per row the history is
//! linearizable: each owned row reads exactly its model after every operation, and the
//! shared counter ends at the number of compare-and-sets that succeeded. Then the power
//! fails (everything not fsynced is dropped) and the reopened database must still match
//! every model. `CELLAR_CONCURRENT_MODEL_SEEDS` runs more seeds.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use cellar::Database;
use cellar_io::FaultFs;
use cellar_region::{
    Condition, Delete, FamilyDescriptor, Get, Increment, Mutation, Put, TableDescriptor,
};
use cellar_wal::Durability;
use common::fault_opts;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const WRITERS: u64 = 3;
const ROWS_PER_WRITER: u64 = 12;
const QUALIFIERS: [&str; 3] = ["a", "b", "c"];

/// One writer's rows: (row, qualifier) → value; counters apart.
#[derive(Default, Clone)]
struct RowsModel {
    values: BTreeMap<(String, String), Vec<u8>>,
    counters: BTreeMap<String, i64>,
}

impl RowsModel {
    fn expected_row(&self, row: &str) -> Vec<(String, Vec<u8>)> {
        let mut out: Vec<(String, Vec<u8>)> = self
            .values
            .iter()
            .filter(|((r, _), _)| r == row)
            .map(|((_, q), v)| (q.clone(), v.clone()))
            .collect();
        if let Some(n) = self.counters.get(row) {
            out.push(("n".into(), n.to_be_bytes().to_vec()));
        }
        out.sort();
        out
    }
}

fn read_row(db: &Database, row: &str) -> Vec<(String, Vec<u8>)> {
    let r = db.table("t").unwrap().get(&Get::new(row)).unwrap();
    let mut out: Vec<(String, Vec<u8>)> = r
        .cells
        .iter()
        .map(|c| {
            (
                String::from_utf8_lossy(c.qualifier()).into_owned(),
                c.value().to_vec(),
            )
        })
        .collect();
    out.sort();
    out
}

fn writer(
    db: &Database,
    w: u64,
    seed: u64,
    ops: usize,
    cas_wins: &AtomicU64,
    incs: &AtomicU64,
    splits: &AtomicU64,
) -> RowsModel {
    let mut rng = SmallRng::seed_from_u64(seed * 1000 + w);
    let mut m = RowsModel::default();
    let t = db.table("t").unwrap();
    // Explicit, increasing timestamps per writer: a put after a delete of the same
    // column is never masked by it.
    let mut ts = 1_000_000i64;
    // At least `ops` steps, and on until a split has run under the writers (a fast
    // machine finishes `ops` before the maintenance thread's first split).
    for step in 0.. {
        if step >= ops && (splits.load(Ordering::SeqCst) > 0 || step >= ops * 100) {
            break;
        }
        ts += 1;
        let row = format!("w{w}-{:03}", rng.random_range(0..ROWS_PER_WRITER));
        let q = QUALIFIERS[rng.random_range(0..QUALIFIERS.len())];
        let ctx = format!("seed {seed} writer {w} step {step}");
        match rng.random_range(0..100) {
            0..=39 => {
                let v = format!("{w}-{step}").into_bytes();
                t.put(Put::new(row.clone()).add_column_at("f", q, ts, v.clone()))
                    .unwrap();
                m.values.insert((row.clone(), q.into()), v);
            }
            40..=54 => {
                t.delete(Delete::new(row.clone()).add_columns_before("f", q, ts))
                    .unwrap();
                m.values.remove(&(row.clone(), q.into()));
            }
            55..=69 => {
                let delta = rng.random_range(-5..6i64);
                let r = t
                    .increment(Increment::new(row.clone()).add_column("f", "n", delta))
                    .unwrap();
                let n = m.counters.entry(row.clone()).or_insert(0);
                *n += delta;
                assert_eq!(r.cells[0].value(), n.to_be_bytes(), "{ctx}: increment");
            }
            70..=79 => {
                // Compare-and-set on an owned row: right and wrong expectations.
                let current = m.values.get(&(row.clone(), "a".into())).cloned();
                let wrong = rng.random_bool(0.3);
                let cond = match (&current, wrong) {
                    (None, false) => Condition::not_exists("f", "a"),
                    (Some(v), false) => Condition::equals("f", "a", v.clone()),
                    (_, true) => Condition::equals("f", "a", b"never-written".to_vec()),
                };
                let v = format!("cas-{w}-{step}").into_bytes();
                let put =
                    Mutation::Put(Put::new(row.clone()).add_column_at("f", "a", ts, v.clone()));
                let (ok, _) = t.check_and_mutate(row.as_bytes(), &cond, &[put]).unwrap();
                assert_eq!(ok, !wrong, "{ctx}: compare-and-set");
                if ok {
                    m.values.insert((row.clone(), "a".into()), v);
                }
            }
            80..=89 => {
                // The shared row: compare-and-set a counter, and increment another.
                let cur = t
                    .get(&Get::new("shared").add_column("f", "cas"))
                    .unwrap()
                    .value(b"f", b"cas")
                    .map(|v| i64::from_be_bytes(v.try_into().unwrap()));
                let cond = match cur {
                    None => Condition::not_exists("f", "cas"),
                    Some(v) => Condition::equals("f", "cas", v.to_be_bytes().to_vec()),
                };
                let next = cur.unwrap_or(0) + 1;
                let put = Mutation::Put(Put::new("shared").add_column(
                    "f",
                    "cas",
                    next.to_be_bytes().to_vec(),
                ));
                let (ok, _) = t.check_and_mutate(b"shared", &cond, &[put]).unwrap();
                if ok {
                    cas_wins.fetch_add(1, Ordering::SeqCst);
                }
                t.increment(Increment::new("shared").add_column("f", "inc", 1))
                    .unwrap();
                incs.fetch_add(1, Ordering::SeqCst);
            }
            _ => {}
        }
        assert_eq!(read_row(db, &row), m.expected_row(&row), "{ctx}: row {row}");
    }
    m
}

fn run(seed: u64, ops: usize) {
    let fs = FaultFs::new();
    let root = Path::new("/db");
    let db = Arc::new(Database::open_with(root, fault_opts(&fs)).unwrap());
    let mut d = TableDescriptor::new("t").with_family(FamilyDescriptor::new("f"));
    d.durability = Durability::FsyncWal;
    db.create_table_split(d, vec![b"w1".to_vec()]).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let cas_wins = Arc::new(AtomicU64::new(0));
    let incs = Arc::new(AtomicU64::new(0));
    let split_count = Arc::new(AtomicU64::new(0));
    let maintenance = {
        let (db, stop, split_count) = (db.clone(), stop.clone(), split_count.clone());
        std::thread::spawn(move || {
            let mut rng = SmallRng::seed_from_u64(seed);
            let (mut splits, mut merges) = (0u32, 0u32);
            while !stop.load(Ordering::Relaxed) {
                match rng.random_range(0..4) {
                    0 => db.flush("t").unwrap(),
                    1 => {
                        db.compact("t", rng.random_bool(0.5)).unwrap();
                    }
                    2 => {
                        let row = format!(
                            "w{}-{:03}",
                            rng.random_range(0..WRITERS),
                            rng.random_range(1..ROWS_PER_WRITER)
                        );
                        // Refused while references remain: compacted next round.
                        if db.split("t", Some(row.as_bytes())).is_ok_and(|n| n > 0) {
                            splits += 1;
                            split_count.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                    _ => {
                        let regions = db.list_regions("t").unwrap();
                        if regions.len() > 2 {
                            let i = rng.random_range(0..regions.len() - 1);
                            let a = regions[i].info.encoded.clone();
                            let b = regions[i + 1].info.encoded.clone();
                            if db.merge_regions_named(&a, &b).is_ok() {
                                merges += 1;
                            }
                        }
                    }
                }
                std::thread::yield_now();
            }
            (splits, merges)
        })
    };
    let models: Vec<RowsModel> = {
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (db, cas_wins, incs, splits) = (
                    db.clone(),
                    cas_wins.clone(),
                    incs.clone(),
                    split_count.clone(),
                );
                std::thread::spawn(move || writer(&db, w, seed, ops, &cas_wins, &incs, &splits))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    };
    stop.store(true, Ordering::Relaxed);
    let (splits, merges) = maintenance.join().unwrap();
    assert!(splits > 0, "seed {seed}: no split ran under the writers");
    eprintln!("seed {seed}: {splits} splits, {merges} merges under the writers");
    let check = |db: &Database, when: &str| {
        for m in &models {
            let rows: std::collections::BTreeSet<&String> = m
                .values
                .keys()
                .map(|(r, _)| r)
                .chain(m.counters.keys())
                .collect();
            for row in rows {
                assert_eq!(
                    read_row(db, row),
                    m.expected_row(row),
                    "seed {seed} {when}: row {row}"
                );
            }
        }
        let shared = db.table("t").unwrap().get(&Get::new("shared")).unwrap();
        let cas = shared
            .value(b"f", b"cas")
            .map_or(0, |v| i64::from_be_bytes(v.try_into().unwrap()));
        assert_eq!(
            cas as u64,
            cas_wins.load(Ordering::SeqCst),
            "seed {seed} {when}: CAS"
        );
        let inc = shared
            .value(b"f", b"inc")
            .map_or(0, |v| i64::from_be_bytes(v.try_into().unwrap()));
        assert_eq!(
            inc as u64,
            incs.load(Ordering::SeqCst),
            "seed {seed} {when}: increments"
        );
    };
    check(&db, "before the crash");
    // Power loss: only what was fsynced remains.
    fs.crash();
    let db = Arc::try_unwrap(db).ok().unwrap();
    std::mem::forget(db);
    let db = Database::open_with(root, fault_opts(&fs)).unwrap();
    assert!(db.failed_regions().is_empty());
    check(&db, "after the crash");
}

#[test]
fn concurrent_writers_stay_linearizable_per_row_through_maintenance_and_a_crash() {
    let seeds: u64 = std::env::var("CELLAR_CONCURRENT_MODEL_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    for seed in 0..seeds {
        run(seed, 800);
    }
}
