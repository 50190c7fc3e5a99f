//! The skip list against a BTreeMap, under concurrent writers and readers, and its
//! keys' drops counted.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::{SkipList, Splice};

/// A key ordered by `k` alone, carrying a payload (which insert it came from, or a
/// drop counter).
#[derive(Debug, Clone)]
struct Keyed<P> {
    k: u32,
    payload: P,
}

impl<P> PartialEq for Keyed<P> {
    fn eq(&self, other: &Self) -> bool {
        self.k == other.k
    }
}
impl<P> Eq for Keyed<P> {}
impl<P> PartialOrd for Keyed<P> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<P> Ord for Keyed<P> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.k.cmp(&other.k)
    }
}

/// A key carrying the insert it came from.
type Key = Keyed<u32>;

fn key(k: u32) -> Key {
    Keyed { k, payload: 0 }
}

/// Every bound the list answers, against the same question put to a BTreeMap.
fn check_against(list: &SkipList<Key>, model: &BTreeMap<u32, u32>, probes: &[u32]) {
    let got: Vec<(u32, u32)> = list.iter().map(|x| (x.k, x.payload)).collect();
    let want: Vec<(u32, u32)> = model.iter().map(|(k, v)| (*k, *v)).collect();
    assert_eq!(got, want);
    let pair = |e: Option<super::Entry<'_, Key>>| e.map(|e| (e.key().k, e.key().payload));
    let entry = |kv: Option<(&u32, &u32)>| kv.map(|(k, v)| (*k, *v));
    for &p in probes {
        let kp = key(p);
        assert_eq!(
            pair(list.seek(Bound::Included(&kp))),
            entry(model.range(p..).next()),
            "at or after {p}"
        );
        assert_eq!(
            pair(list.seek(Bound::Excluded(&kp))),
            entry(model.range((Bound::Excluded(p), Bound::Unbounded)).next()),
            "after {p}"
        );
        assert_eq!(
            pair(list.last_before(Bound::Excluded(&kp))),
            entry(model.range(..p).next_back()),
            "before {p}"
        );
        assert_eq!(
            pair(list.last_before(Bound::Included(&kp))),
            entry(model.range(..=p).next_back()),
            "at or before {p}"
        );
    }
    assert_eq!(
        pair(list.last_before(Bound::Unbounded)),
        entry(model.iter().next_back())
    );
    assert_eq!(pair(list.first()), entry(model.iter().next()));
    assert_eq!(list.is_empty(), model.is_empty());
}

/// Runs of nearby keys (as an edit's cells) and scattered ones, many of them equal to
/// keys already there: the list answers as a map where the last insert wins.
#[test]
fn matches_a_map_with_replacing_inserts() {
    for seed in 0..20u64 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let list = SkipList::new();
        let mut model = BTreeMap::new();
        let range = rng.random_range(10..3000u32);
        for version in 1..400u32 {
            let mut splice = Splice::default();
            let start = rng.random_range(0..range);
            let run = rng.random_range(1..12u32);
            let descending = rng.random_bool(0.2);
            for i in 0..run {
                let k = match (rng.random_bool(0.1), descending) {
                    (true, _) => rng.random_range(0..range),
                    (false, false) => start + i * rng.random_range(1..3),
                    (false, true) => start.saturating_sub(i),
                };
                list.insert(
                    Keyed {
                        k,
                        payload: version,
                    },
                    &mut splice,
                );
                model.insert(k, version);
            }
        }
        let probes: Vec<u32> = (0..range + 2).step_by(7).chain([0, 1, range]).collect();
        check_against(&list, &model, &probes);
    }
    check_against(&SkipList::new(), &BTreeMap::new(), &[0, 5]);
}

/// A key inserted again within one run (the splice then sits on the replaced node).
#[test]
fn the_same_key_twice_in_a_run_keeps_the_last() {
    let list = SkipList::new();
    let mut splice = Splice::default();
    for (k, version) in [(5, 1), (5, 2), (6, 3), (5, 4), (4, 5), (6, 6)] {
        list.insert(
            Keyed {
                k,
                payload: version,
            },
            &mut splice,
        );
    }
    let got: Vec<(u32, u32)> = list.iter().map(|x| (x.k, x.payload)).collect();
    assert_eq!(got, vec![(4, 5), (5, 4), (6, 6)]);
    let last = list.last_before(Bound::Unbounded).map(|e| e.key().payload);
    assert_eq!(last, Some(6));
    let at5 = list
        .last_before(Bound::Included(&key(5)))
        .map(|e| e.key().payload);
    assert_eq!(at5, Some(4));
}

/// Four writers insert interleaved runs while two readers walk: every walk is in
/// strictly increasing order, every seek lands on a key at or after its probe, and in
/// the end every key is there once.
#[test]
fn concurrent_writers_and_readers() {
    const WRITERS: u32 = 4;
    const PER_WRITER: u32 = 20_000;
    let list = SkipList::new();
    let done = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let list = &list;
            let done = &done;
            s.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(u64::from(w));
                let mut keys: Vec<u32> = (0..PER_WRITER).map(|i| i * WRITERS + w).collect();
                // Runs of ten neighbours (of this writer) in random places.
                let mut chunks: Vec<&mut [u32]> = keys.chunks_mut(10).collect();
                for i in (1..chunks.len()).rev() {
                    chunks.swap(i, rng.random_range(0..=i));
                }
                for chunk in chunks {
                    let mut splice = Splice::default();
                    for &mut k in chunk.iter_mut() {
                        list.insert(Keyed { k, payload: w }, &mut splice);
                    }
                }
                done.fetch_add(1, AtomicOrdering::Release);
            });
        }
        for r in 0..2u64 {
            let list = &list;
            let done = &done;
            s.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(100 + r);
                while done.load(AtomicOrdering::Acquire) < WRITERS as usize {
                    let mut prev: Option<u32> = None;
                    for x in list.iter().take(5000) {
                        assert!(prev.is_none_or(|p| p < x.k), "{prev:?} then {}", x.k);
                        prev = Some(x.k);
                    }
                    let p = rng.random_range(0..WRITERS * PER_WRITER);
                    if let Some(e) = list.seek(Bound::Included(&key(p))) {
                        assert!(e.key().k >= p);
                    }
                    if let Some(e) = list.last_before(Bound::Excluded(&key(p))) {
                        assert!(e.key().k < p);
                    }
                }
            });
        }
    });
    let all: Vec<u32> = list.iter().map(|x| x.k).collect();
    assert_eq!(all, (0..WRITERS * PER_WRITER).collect::<Vec<_>>());
}

/// Writers racing on the same neighbourhood: each run's splice goes stale under the
/// others' inserts and is mended by a fresh look at the level.
#[test]
fn concurrent_writers_on_the_same_keys_region() {
    let list = SkipList::new();
    std::thread::scope(|s| {
        for w in 0..4u32 {
            let list = &list;
            s.spawn(move || {
                for round in 0..2000u32 {
                    let mut splice = Splice::default();
                    for i in 0..8u32 {
                        list.insert(
                            Keyed {
                                k: (round * 8 + i) * 4 + w,
                                payload: w,
                            },
                            &mut splice,
                        );
                    }
                }
            });
        }
    });
    let all: Vec<u32> = list.iter().map(|x| x.k).collect();
    assert_eq!(all, (0..2000 * 8 * 4).collect::<Vec<_>>());
}

/// A seek answers from the walk that decided it. Writers insert ascending keys, each
/// landing right before the key a reader seeks: a seek that read the link after its
/// last node a second time found a key inserted there meanwhile, one before its bound
/// (a Get then missed its row's newest cell in the MemStore).
#[test]
fn seeks_never_answer_a_key_inserted_before_their_bound() {
    const TARGET: u32 = 1 << 20;
    for round in 0..200u64 {
        let list = SkipList::new();
        let mut splice = Splice::default();
        list.insert(key(TARGET), &mut splice);
        list.insert(key(TARGET + 1), &mut splice);
        let done = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for w in 0..2u32 {
                let (list, done) = (&list, &done);
                s.spawn(move || {
                    for i in 0..2000u32 {
                        list.insert(key(i * 2 + w), &mut Splice::default());
                    }
                    done.fetch_add(1, AtomicOrdering::Release);
                });
            }
            let pair = |e: Option<super::Entry<'_, Key>>| e.map(|e| e.key().k);
            while done.load(AtomicOrdering::Acquire) < 2 {
                let included = list.seek(Bound::Included(&key(TARGET)));
                assert_eq!(pair(included), Some(TARGET), "round {round}");
                let excluded = list.seek(Bound::Excluded(&key(TARGET - 1)));
                assert_eq!(pair(excluded), Some(TARGET), "round {round}");
                let before = list.last_before(Bound::Excluded(&key(TARGET + 1)));
                assert_eq!(pair(before), Some(TARGET), "round {round}");
            }
        });
    }
}

/// A payload whose drop is counted.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, AtomicOrdering::Relaxed);
    }
}

/// Dropping the list drops every key it was given once, replaced ones included.
#[test]
fn every_key_is_dropped_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let list = SkipList::new();
    let mut rng = SmallRng::seed_from_u64(7);
    let mut splice = Splice::default();
    for _ in 0..5000 {
        let k = rng.random_range(0..1000);
        list.insert(
            Keyed {
                k,
                payload: Counted(drops.clone()),
            },
            &mut splice,
        );
    }
    assert_eq!(drops.load(AtomicOrdering::Relaxed), 0);
    drop(list);
    assert_eq!(drops.load(AtomicOrdering::Relaxed), 5000);
}

/// A position leads back to its entry in its own list only: another list (even one
/// holding equal keys) refuses it, and a position kept across inserts still walks on
/// in order.
#[test]
fn positions_belong_to_their_list() {
    let a: SkipList<Key> = SkipList::new();
    let b: SkipList<Key> = SkipList::new();
    let mut sa = Splice::default();
    let mut sb = Splice::default();
    for k in [10u32, 20, 30] {
        a.insert(key(k), &mut sa);
        b.insert(key(k), &mut sb);
    }
    let pos = a.seek(Bound::Included(&key(20))).map(|e| e.position());
    let pos = pos.unwrap_or_else(|| panic!("20 is in the list"));
    assert!(b.entry(pos).is_none());
    a.insert(key(25), &mut sa);
    let e = a.entry(pos).unwrap_or_else(|| panic!("its own list"));
    assert_eq!(e.key().k, 20);
    assert_eq!(e.next().map(|n| n.key().k), Some(25));
    let found = a.seek_where(|x| x.k < 21).map(|e| e.key().k);
    assert_eq!(found, Some(25));
}
