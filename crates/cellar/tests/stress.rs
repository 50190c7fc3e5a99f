#![allow(clippy::unwrap_used)]
// Drives real threads and real waits against the engine.
#![allow(clippy::disallowed_methods)]
//! Many threads against one database while flushes, minor and major compactions, splits
//! and merges run without pause. Checked throughout: rows written atomically are never
//! seen torn (Gets, forward and reversed scans), rows that always exist are never missing
//! from a Get or a scan and come once each, in order, counters read by one reader never
//! go back; and at the end increments add up exactly and compare-and-set loses no update.
//!
//! A few seconds by default; `CELLAR_STRESS_SECS=300 cargo test --release -p cellar
//! --test stress` runs it for minutes.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cellar::{Database, Options};
use cellar_region::{
    CompareOp, Condition, FamilyDescriptor, Get, Increment, Mutation, Put, RowResult, Scan,
    TableDescriptor,
};

const ATOMS: usize = 6;
const COUNTERS: usize = 4;
const PRESENT: usize = 120;
const COLUMNS: usize = 4;

fn secs() -> u64 {
    std::env::var("CELLAR_STRESS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4)
}

fn table() -> TableDescriptor {
    let mut f = FamilyDescriptor::new("f");
    f.block_size = 512;
    let mut g = FamilyDescriptor::new("g");
    g.block_size = 512;
    g.versions = 3;
    TableDescriptor::new("t").with_family(f).with_family(g)
}

fn long(r: &RowResult, f: &str, q: &str) -> Option<i64> {
    r.value(f.as_bytes(), q.as_bytes())
        .map(|v| i64::from_be_bytes(v.try_into().unwrap()))
}

/// Every column of an atomic row holds the same value; returns it.
fn atom_value(r: &RowResult) -> Option<u64> {
    let mut seen = None;
    for c in &r.cells {
        let v: u64 = std::str::from_utf8(c.value()).unwrap().parse().unwrap();
        match seen {
            None => seen = Some(v),
            Some(s) => assert_eq!(
                s,
                v,
                "torn row {:?}: {:?}",
                String::from_utf8_lossy(&r.row),
                r.cells
            ),
        }
    }
    if seen.is_some() {
        assert_eq!(r.cells.len(), 2 * COLUMNS, "torn row {r:?}");
    }
    seen
}

fn present(i: usize) -> String {
    format!("p{i:04}")
}

#[test]
fn invariants_hold_under_concurrent_writes_and_maintenance() {
    let tmp = tempfile::tempdir().unwrap();
    let o = Options::for_dir(tmp.path()).unwrap();
    let db = Arc::new(Database::open_with(tmp.path(), o).unwrap());
    db.create_table_split(table(), vec![b"ctr".to_vec(), b"p0060".to_vec()])
        .unwrap();
    let t = db.table("t").unwrap();
    for i in 0..PRESENT {
        t.put(Put::new(present(i)).add_column("f", "x", "0"))
            .unwrap();
    }
    t.put(Put::new("cas").add_column("f", "v", 0i64.to_be_bytes()))
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + Duration::from_secs(secs());
    let mut handles = Vec::new();

    // Writers of atomic rows: one writer per row, values increasing.
    for a in 0..ATOMS {
        let (t, stop) = (db.table("t").unwrap(), stop.clone());
        handles.push(std::thread::spawn(move || {
            let mut v = 0u64;
            while !stop.load(Ordering::Relaxed) {
                v += 1;
                let mut p = Put::new(format!("atom{a}"));
                for c in 0..COLUMNS {
                    p = p
                        .add_column("f", format!("c{c}"), v.to_string())
                        .add_column("g", format!("c{c}"), v.to_string());
                }
                t.put(p).unwrap();
            }
            0u64
        }));
    }
    // Increments.
    let increments = Arc::new(AtomicU64::new(0));
    for w in 0..2 {
        let (t, stop, n) = (db.table("t").unwrap(), stop.clone(), increments.clone());
        handles.push(std::thread::spawn(move || {
            let mut i = w;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let row = format!("ctr{}", i % COUNTERS);
                t.increment(Increment::new(row).add_column("f", "n", 1))
                    .unwrap();
                n.fetch_add(1, Ordering::Relaxed);
            }
            0
        }));
    }
    // Compare-and-set.
    let cas_wins = Arc::new(AtomicU64::new(0));
    for _ in 0..2 {
        let (t, stop, wins) = (db.table("t").unwrap(), stop.clone(), cas_wins.clone());
        handles.push(std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let cur = long(&t.get(&Get::new("cas")).unwrap(), "f", "v").unwrap();
                let next = Put::new("cas").add_column("f", "v", (cur + 1).to_be_bytes());
                let cond = Condition::matches("f", "v", CompareOp::Equal, cur.to_be_bytes());
                let (ok, _) = t
                    .check_and_mutate(b"cas", &cond, &[Mutation::Put(next)])
                    .unwrap();
                if ok {
                    wins.fetch_add(1, Ordering::Relaxed);
                }
            }
            0
        }));
    }
    // Overwrites of the rows that always exist.
    {
        let (t, stop) = (db.table("t").unwrap(), stop.clone());
        handles.push(std::thread::spawn(move || {
            let mut i = 0usize;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let row = present(i * 7 % PRESENT);
                t.put(Put::new(row).add_column("f", "x", i.to_string()))
                    .unwrap();
            }
            0
        }));
    }
    // Readers: Gets of every kind of row, counters never going back.
    for r in 0..2 {
        let (t, stop) = (db.table("t").unwrap(), stop.clone());
        handles.push(std::thread::spawn(move || {
            let mut last_atom: HashMap<usize, u64> = HashMap::new();
            let mut last_ctr: HashMap<usize, i64> = HashMap::new();
            let mut reads = 0u64;
            let mut i = r;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                let a = i % ATOMS;
                if let Some(v) = atom_value(&t.get(&Get::new(format!("atom{a}"))).unwrap()) {
                    let prev = last_atom.insert(a, v).unwrap_or(0);
                    assert!(v >= prev, "atom{a} went back from {prev} to {v}");
                }
                let c = i % COUNTERS;
                if let Some(v) = long(&t.get(&Get::new(format!("ctr{c}"))).unwrap(), "f", "n") {
                    let prev = last_ctr.insert(c, v).unwrap_or(0);
                    assert!(v >= prev, "ctr{c} went back from {prev} to {v}");
                }
                let p = present(i * 13 % PRESENT);
                let got = t.get(&Get::new(p.clone())).unwrap();
                assert!(!got.cells.is_empty(), "{p} vanished for a Get");
                reads += 3;
            }
            reads
        }));
    }
    // Scanners, forward and reversed, plain and batched.
    for (reversed, batch) in [
        (false, None),
        (true, None),
        (false, Some(3)),
        (true, Some(2)),
    ] {
        let (t, stop) = (db.table("t").unwrap(), stop.clone());
        handles.push(std::thread::spawn(move || {
            let mut scans = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let mut s = Scan::new().reversed(reversed).caching(7);
                if let Some(b) = batch {
                    s = s.batch(b);
                }
                let mut rows: Vec<RowResult> = Vec::new();
                for r in t.scan(&s).unwrap() {
                    let r = r.unwrap();
                    match rows.last_mut() {
                        Some(prev) if prev.row == r.row && prev.partial => {
                            prev.cells.extend(r.cells);
                            prev.partial = r.partial;
                        }
                        _ => rows.push(r),
                    }
                }
                let mut names: Vec<Vec<u8>> = rows.iter().map(|r| r.row.clone()).collect();
                if reversed {
                    names.reverse();
                }
                assert!(
                    names.windows(2).all(|w| w[0] < w[1]),
                    "rows out of order or twice (reversed {reversed}, batch {batch:?})"
                );
                let present_seen = names.iter().filter(|n| n.starts_with(b"p")).count();
                assert_eq!(present_seen, PRESENT, "rows missing from a scan");
                for r in rows.iter().filter(|r| r.row.starts_with(b"atom")) {
                    if batch.is_none() {
                        atom_value(r);
                    }
                }
                scans += 1;
            }
            scans
        }));
    }
    // Maintenance: flushes, compactions, splits and merges, continuously.
    let splits = Arc::new(AtomicU64::new(0));
    let merges = Arc::new(AtomicU64::new(0));
    {
        let (db, stop) = (db.clone(), stop.clone());
        let (splits, merges) = (splits.clone(), merges.clone());
        handles.push(std::thread::spawn(move || {
            let points = ["atom2", "atom4", "ctr2", "p0020", "p0090", "p0110", "cas"];
            let mut i = 0usize;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                db.flush("t").unwrap();
                db.compact("t", i.is_multiple_of(3)).unwrap();
                if db
                    .split("t", Some(points[i % points.len()].as_bytes()))
                    .is_ok()
                {
                    splits.fetch_add(1, Ordering::Relaxed);
                }
                if i.is_multiple_of(2) {
                    db.compact("t", true).unwrap();
                    let regions = db.table("t").unwrap().regions().unwrap();
                    if regions.len() > 3 {
                        let k = i % (regions.len() - 1);
                        let (a, b) = (regions[k].start_key(), regions[k + 1].start_key());
                        if db.merge_regions("t", a, b).is_ok() {
                            merges.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            }
            0
        }));
    }
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.store(true, Ordering::Relaxed);
    let mut work = Vec::new();
    for h in handles {
        work.push(h.join().unwrap());
    }
    let t = db.table("t").unwrap();
    let total: i64 = (0..COUNTERS)
        .map(|c| long(&t.get(&Get::new(format!("ctr{c}"))).unwrap(), "f", "n").unwrap_or(0))
        .sum();
    assert_eq!(total as u64, increments.load(Ordering::Relaxed));
    let cas = long(&t.get(&Get::new("cas")).unwrap(), "f", "v").unwrap();
    assert_eq!(cas as u64, cas_wins.load(Ordering::Relaxed));
    assert!(splits.load(Ordering::Relaxed) > 0, "no split ran");
    assert!(merges.load(Ordering::Relaxed) > 0, "no merge ran");
    eprintln!(
        "stress: {} increments, {} compare-and-sets, {} splits, {} merges, work {work:?}",
        increments.load(Ordering::Relaxed),
        cas_wins.load(Ordering::Relaxed),
        splits.load(Ordering::Relaxed),
        merges.load(Ordering::Relaxed)
    );
}
