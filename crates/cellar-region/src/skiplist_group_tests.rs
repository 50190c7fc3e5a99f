//! The skip list's group index: each group's head against a BTreeMap, and under
//! concurrent writers whose new keys keep going before the old ones (as a row's newer
//! versions do).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::{Grouped, SkipList, Splice};

/// Keys per group: the group of `k` is `k / GROUP`, so groups are runs of keys.
const GROUP: u32 = 16;

/// A key ordered by `k`, grouped by `k / GROUP`, carrying the insert it came from.
#[derive(Debug, Clone)]
struct Key {
    k: u32,
    group: [u8; 4],
    from: u32,
}

fn key(k: u32, from: u32) -> Key {
    Key {
        k,
        group: (k / GROUP).to_be_bytes(),
        from,
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.k == other.k
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.k.cmp(&other.k)
    }
}
impl Grouped for Key {
    fn group(&self) -> &[u8] {
        &self.group
    }

    fn same_run(&self, other: &Self) -> bool {
        self.k / RUN == other.k / RUN
    }
}

/// Keys per run inside a group: the run of `k` is `k / RUN`.
const RUN: u32 = 4;

#[test]
fn each_group_head_is_its_first_key() {
    let mut rng = SmallRng::seed_from_u64(7);
    let list = SkipList::new();
    let mut model: BTreeMap<u32, u32> = BTreeMap::new();
    for batch in 0..3_000u32 {
        // One group's keys in any order, with repeats (replacing inserts), or keys
        // across a few neighbouring groups.
        let base = rng.random_range(0..200u32) * GROUP;
        let span = if rng.random_bool(0.2) {
            3 * GROUP
        } else {
            GROUP
        };
        let keys: Vec<u32> = (0..rng.random_range(1..8))
            .map(|_| base + rng.random_range(0..span))
            .collect();
        let mut splice = Splice::default();
        list.insert_grouped(keys.iter().map(|&k| key(k, batch)), &mut splice);
        for &k in &keys {
            model.insert(k, batch);
        }
        for g in (base / GROUP)..(base + span) / GROUP {
            let first = model.range(g * GROUP..(g + 1) * GROUP).next();
            let head = list.group_head(&g.to_be_bytes()).map(|e| e.key());
            assert_eq!(
                head.map(|h| (h.k, h.from)),
                first.map(|(k, from)| (*k, *from)),
                "group {g} after batch {batch}"
            );
        }
    }
    assert!(list.group_head(&1_000_000u32.to_be_bytes()).is_none());
    // Skips point forward, into the same run, at a key of the list.
    let mut skips = 0;
    let mut at = list.first();
    while let Some(e) = at {
        if let Some(s) = e.skip() {
            skips += 1;
            let (k, to) = (e.key().k, s.key().k);
            assert!(to >= k && k / RUN == to / RUN, "skip {k} -> {to}");
            assert!(model.contains_key(&to), "skip {k} -> {to} names a key");
        }
        at = e.next();
    }
    assert!(
        skips > 100,
        "{skips} keys went in before another of their run"
    );
}

#[test]
fn a_reader_never_starts_after_a_completed_insert() {
    // Each writer owns groups and inserts their keys from the last down, so every
    // insert becomes its group's new head. Once `insert_grouped` returns, the writer
    // publishes the key; a reader that sees it published must find the group's head at
    // or before it, and reach it walking from there.
    const WRITERS: u32 = 3;
    const GROUPS_EACH: u32 = 8;
    let list = Arc::new(SkipList::<Key>::new());
    let done: Arc<Vec<AtomicU32>> = Arc::new(
        (0..WRITERS * GROUPS_EACH)
            .map(|_| AtomicU32::new(u32::MAX))
            .collect(),
    );
    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let (list, done) = (list.clone(), done.clone());
            s.spawn(move || {
                for step in (0..GROUP).rev() {
                    for i in 0..GROUPS_EACH {
                        let g = w * GROUPS_EACH + i;
                        let k = g * GROUP + step;
                        let mut splice = Splice::default();
                        list.insert_grouped(std::iter::once(key(k, w)), &mut splice);
                        done[g as usize].store(k, AtomicOrdering::Release);
                    }
                }
            });
        }
        for _ in 0..2 {
            let (list, done) = (list.clone(), done.clone());
            s.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(11);
                for _ in 0..200_000 {
                    let g = rng.random_range(0..WRITERS * GROUPS_EACH);
                    let published = done[g as usize].load(AtomicOrdering::Acquire);
                    if published == u32::MAX {
                        continue;
                    }
                    let head = list
                        .group_head(&g.to_be_bytes())
                        .expect("a published group has a head");
                    assert!(head.key().k <= published, "group {g}");
                    let mut at = Some(head);
                    let mut found = false;
                    while let Some(e) = at {
                        if e.key().k >= published {
                            found = e.key().k == published;
                            break;
                        }
                        // Jumps along a run as the MemStore's reseeks do.
                        at = match e.skip() {
                            Some(s) if s.key().k < published => Some(s),
                            _ => e.next(),
                        };
                    }
                    assert!(found, "group {g}: {published} reachable from the head");
                }
            });
        }
    });
    for g in 0..WRITERS * GROUPS_EACH {
        let head = list.group_head(&g.to_be_bytes()).map(|e| e.key().k);
        assert_eq!(head, Some(g * GROUP));
    }
}

#[test]
fn new_groups_are_counted_once() {
    let list = SkipList::new();
    let mut splice = Splice::default();
    // Two groups, one of them twice in the run: two names of four bytes.
    let keys = [3, 1, GROUP + 2, 2].map(|k| key(k, 0));
    assert_eq!(list.insert_grouped(keys.into_iter(), &mut splice), (2, 8));
    // Known groups, a new head for one of them: nothing new.
    let again = [0, GROUP + 5].map(|k| key(k, 1));
    assert_eq!(list.insert_grouped(again.into_iter(), &mut splice), (0, 0));
    assert_eq!(
        list.group_head(&0u32.to_be_bytes()).map(|e| e.key().k),
        Some(0)
    );
}
