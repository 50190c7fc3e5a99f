#![allow(clippy::unwrap_used)]
// Drives real threads and real waits against the engine.
#![allow(clippy::disallowed_methods)]
//! Many threads on one row: increments add up exactly, checkAndMutate behaves as a lock,
//! readers never see half of a mutateRow (also while flushes and compactions run).

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use cellar_region::{
    CompareOp, Condition, Config, FamilyDescriptor, Get, Increment, Mutation, Put, TableDescriptor,
};
use common::Harness;

fn harness() -> Harness {
    Harness::new(
        TableDescriptor::new("t")
            .with_family(FamilyDescriptor::new("f"))
            .with_family(FamilyDescriptor::new("g")),
        Config::default(),
    )
}

#[test]
fn concurrent_increments_add_up() {
    let h = Arc::new(harness());
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let h = h.clone();
            std::thread::spawn(move || {
                for _ in 0..200 {
                    h.region
                        .increment(
                            Increment::new("ctr")
                                .add_column("f", "n", 1)
                                .add_column("g", "n", 2),
                        )
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let r = h.region.get(&Get::new("ctr")).unwrap();
    assert_eq!(r.value(b"f", b"n").unwrap(), 1600i64.to_be_bytes());
    assert_eq!(r.value(b"g", b"n").unwrap(), 3200i64.to_be_bytes());
}

#[test]
fn check_and_mutate_is_a_compare_and_set() {
    let h = Arc::new(harness());
    h.region
        .put(Put::new("cas").add_column("f", "v", "0"))
        .unwrap();
    let wins = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..6)
        .map(|_| {
            let (h, wins) = (h.clone(), wins.clone());
            std::thread::spawn(move || {
                for _ in 0..150 {
                    let cur = h.region.get(&Get::new("cas").add_column("f", "v")).unwrap();
                    let v: u64 = std::str::from_utf8(cur.value(b"f", b"v").unwrap())
                        .unwrap()
                        .parse()
                        .unwrap();
                    let next =
                        Mutation::Put(Put::new("cas").add_column("f", "v", (v + 1).to_string()));
                    let cond = Condition::matches("f", "v", CompareOp::Equal, v.to_string());
                    let (ok, _) = h.region.check_and_mutate(b"cas", &cond, &[next]).unwrap();
                    if ok {
                        wins.fetch_add(1, Ordering::SeqCst);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let cur = h.region.get(&Get::new("cas")).unwrap();
    let v: u64 = std::str::from_utf8(cur.value(b"f", b"v").unwrap())
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(v, wins.load(Ordering::SeqCst));
    assert!(v > 0);
}

#[test]
fn readers_never_see_half_a_mutate_row() {
    let h = Arc::new(harness());
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (h, stop) = (h.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::SeqCst) {
                i += 1;
                let v = i.to_string();
                let muts = [
                    Mutation::Put(Put::new("atom").add_column("f", "a", v.clone()).add_column(
                        "f",
                        "b",
                        v.clone(),
                    )),
                    Mutation::Put(Put::new("atom").add_column("g", "c", v.clone())),
                ];
                h.region.mutate_row(b"atom", &muts).unwrap();
                if i.is_multiple_of(97) {
                    h.region.flush().unwrap();
                }
                if i.is_multiple_of(401) {
                    h.region.compact(false).unwrap();
                }
            }
            i
        })
    };
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (h, stop) = (h.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut seen = 0;
                while !stop.load(Ordering::SeqCst) {
                    let r = h.region.get(&Get::new("atom")).unwrap();
                    if r.is_empty() {
                        continue;
                    }
                    assert_eq!(r.cells.len(), 3, "{r:?}");
                    let first = r.cells[0].value();
                    assert!(
                        r.cells.iter().all(|c| c.value() == first),
                        "torn read {r:?}"
                    );
                    seen += 1;
                }
                seen
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    stop.store(true, Ordering::SeqCst);
    let writes = writer.join().unwrap();
    let reads: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(writes > 10 && reads > 10, "{writes} writes, {reads} reads");
}
