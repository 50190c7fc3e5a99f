//! Deterministic checks that flushes and compactions never take from a reader what it
//! can see: a write is paused between its MemStore insert and its MVCC completion (the
//! window in which its cells are in the MemStore but above the read point) while a
//! flush and a major compaction run, and readers below it must keep seeing the older
//! cells.
#![allow(clippy::unwrap_used)]

use cellar_types::{Cell, CellType};

use crate::descriptor::{FamilyDescriptor, TableDescriptor};
use crate::region::Region;
use crate::Config;
use cellar_api::Put;
use cellar_api::{Get, Scan};

const T0: i64 = 1_700_000_000_000;

fn region(versions: u32) -> Region {
    let mut f = FamilyDescriptor::new("f");
    f.versions = versions;
    crate::test_region::open(
        TableDescriptor::new("t").with_family(f),
        Config::default(),
        T0,
    )
}

/// A write that has taken its sequence id and is in the MemStore, not yet complete.
struct Paused<'a> {
    region: &'a Region,
    seq: u64,
}

impl Paused<'_> {
    fn complete(self) {
        self.region.mvcc.complete(self.seq);
    }
}

fn pause_write<'a>(region: &'a Region, cells: Vec<Cell>) -> Paused<'a> {
    let _updates = region.updates.read().unwrap();
    let seq = region.mvcc.begin();
    for c in cells {
        let store = region.stores.get(c.family()).unwrap();
        store.add(c.with_seq_id(seq), T0);
    }
    Paused { region, seq }
}

fn value(region: &Region) -> Option<Vec<u8>> {
    region
        .get(&Get::new("r").add_column("f", "q"))
        .unwrap()
        .cells
        .first()
        .map(|c| c.value().to_vec())
}

fn raw_count(region: &Region) -> usize {
    region
        .scanner(&Scan::new().raw(true).max_versions(100))
        .unwrap()
        .map(|r| r.unwrap().cells.len())
        .sum()
}

fn flush_and_major(region: &Region) {
    region.flush().unwrap();
    region.compact(true).unwrap();
}

#[test]
fn a_newer_version_in_flight_does_not_push_out_the_visible_one() {
    let r = region(1);
    r.put(Put::new("r").add_column_at("f", "q", 10, "old"))
        .unwrap();
    let w = pause_write(&r, vec![Cell::put("r", "f", "q", 20, "new").unwrap()]);
    flush_and_major(&r);
    assert_eq!(value(&r).as_deref(), Some(b"old".as_slice()));
    w.complete();
    assert_eq!(value(&r).as_deref(), Some(b"new".as_slice()));
    // Once every reader can see the new version, the old one goes.
    assert_eq!(raw_count(&r), 2);
    r.compact(true).unwrap();
    assert_eq!(raw_count(&r), 1);
}

#[test]
fn an_overwrite_in_flight_does_not_collapse_the_visible_one() {
    let r = region(1);
    r.put(Put::new("r").add_column_at("f", "q", 10, "first"))
        .unwrap();
    let w = pause_write(&r, vec![Cell::put("r", "f", "q", 10, "second").unwrap()]);
    flush_and_major(&r);
    assert_eq!(value(&r).as_deref(), Some(b"first".as_slice()));
    w.complete();
    assert_eq!(value(&r).as_deref(), Some(b"second".as_slice()));
}

#[test]
fn a_delete_in_flight_is_neither_applied_nor_dropped() {
    let r = region(3);
    r.put(Put::new("r").add_column_at("f", "q", 10, "v"))
        .unwrap();
    let marker = Cell::new("r", "f", "q", 10, CellType::DeleteColumn, "").unwrap();
    let w = pause_write(&r, vec![marker]);
    flush_and_major(&r);
    assert_eq!(value(&r).as_deref(), Some(b"v".as_slice()));
    w.complete();
    assert_eq!(value(&r), None);
    r.compact(true).unwrap();
    assert_eq!(raw_count(&r), 0, "marker and put both collected");
}

#[test]
fn an_open_scanner_keeps_what_it_can_see() {
    let r = region(1);
    r.put(Put::new("r").add_column_at("f", "q", 10, "old"))
        .unwrap();
    r.put(Put::new("s").add_column_at("f", "q", 10, "x"))
        .unwrap();
    let mut scanner = r.scanner(&Scan::new()).unwrap();
    let first = scanner.next().unwrap().unwrap();
    assert_eq!(first.row, b"r");
    r.put(Put::new("s").add_column_at("f", "q", 20, "y"))
        .unwrap();
    assert_eq!(r.smallest_read_point(), 2, "the scanner's read point");
    flush_and_major(&r);
    // Both versions of "s" are kept while the scanner is open; it sees the old one.
    assert_eq!(raw_count(&r), 3);
    let second = scanner.next().unwrap().unwrap();
    assert_eq!(second.cells[0].value(), b"x");
    drop(scanner);
    r.compact(true).unwrap();
    assert_eq!(raw_count(&r), 2);
}
