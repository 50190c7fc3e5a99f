#![allow(clippy::unwrap_used)]
//! Stores under pressure and over time: RegionTooBusy at flush size × block multiplier,
//! periodic major compactions, a user's major request during a compaction, crash-safe
//! compaction swaps at every step, and the row bloom sparing reads on Gets of absent
//! rows.

mod common;

use std::sync::mpsc::channel;
use std::sync::Arc;

use cellar_hfile::BlockCache;
use cellar_io::{FaultFs, ManualClock};
use cellar_region::{
    Config, Delete, FamilyDescriptor, Get, Maintenance, Put, RegionError, Scan, TableDescriptor,
};
use common::{open_region_with, Harness, T0};

fn table() -> TableDescriptor {
    TableDescriptor::new("t").with_family(FamilyDescriptor::new("f"))
}

#[test]
fn writes_block_with_region_too_busy_until_a_flush() {
    let fs = FaultFs::new();
    let clock = Arc::new(ManualClock::new(T0));
    let config = Arc::new(Config {
        memstore_flush_size: 20_000,
        ..Config::default()
    });
    let (tx, rx) = channel();
    let cache = Arc::new(BlockCache::new(1 << 20));
    let (region, _wal) = open_region_with(&fs, &clock, &config, &table(), Some(tx), cache).unwrap();
    let mut busy = None;
    for i in 0..2000 {
        match region.put(Put::new(format!("r{i:05}")).add_column("f", "q", vec![1u8; 100])) {
            Ok(()) => {}
            Err(e @ RegionError::RegionTooBusy { .. }) => {
                busy = Some((i, e));
                break;
            }
            Err(e) => panic!("{e}"),
        }
    }
    let (at, err) = busy.expect("writes must block once over 4 x flush size");
    assert!(
        err.to_string().contains("Over memstore limit=80000"),
        "{err}"
    );
    assert!(region.memstore_size() > 80_000);
    assert!(at > 100);
    // The region asked for flushes; the worker (here: the test) runs one, writes go on.
    assert!(rx.try_iter().any(|m| m == Maintenance::Flush("r1".into())));
    region.flush().unwrap();
    region
        .put(Put::new("after").add_column("f", "q", "v"))
        .unwrap();
    assert_eq!(region.scanner(&Scan::new()).unwrap().count(), at + 1);
}

/// A region with a put and the marker deleting it, each flushed to a file of its own.
fn put_and_marker_in_two_files(config: Config) -> Harness {
    let h = Harness::new(table(), config);
    h.region
        .put(Put::new("a").add_column_at("f", "q", 1, "v"))
        .unwrap();
    h.region.flush().unwrap();
    h.region
        .delete(Delete::new("a").add_columns("f", "q"))
        .unwrap();
    h.region.flush().unwrap();
    h
}

#[test]
fn periodic_major_compaction_comes_due() {
    let config = Config {
        major_compaction_period_ms: 10_000,
        major_compaction_jitter: 0.0,
        ..Config::default()
    };
    let h = put_and_marker_in_two_files(config);
    assert!(!h.region.needs_compaction());
    h.clock.advance(10_001);
    assert!(h.region.needs_compaction());
    let out = h.region.compact(false).unwrap();
    assert_eq!(out.stores, vec![(b"f".to_vec(), true)]);
    assert_eq!(out.cells_dropped, 2, "the marker and the cell it masks");
    assert!(
        !h.region.needs_compaction(),
        "one major-compacted file is not due again"
    );
    let raw = h.region.scanner(&Scan::new().raw(true)).unwrap().count();
    assert_eq!(raw, 0);
}

/// HBase's `CompactRegion` while the region compacts: the running compaction has taken
/// the files, the request selects nothing, and a major request stays as the store's
/// forced-major flag, so the store's next compaction is a major one (HBase's
/// `HStore.forceMajor`). Without a compaction running, the request runs at once.
#[test]
fn a_major_request_during_a_compaction_waits_for_the_next_one() {
    let two_files = || put_and_marker_in_two_files(Config::default());
    let raw = |h: &Harness| -> usize {
        h.region
            .scanner(&Scan::new().raw(true).max_versions(u32::MAX))
            .unwrap()
            .flat_map(|r| r.unwrap().cells)
            .count()
    };
    // Two files are not enough for a minor compaction.
    assert!(two_files().region.compact(false).unwrap().stores.is_empty());
    // A compaction running (a frozen region holds the compaction lock): the request
    // waits for it and compacts nothing. Should the requesting thread reach the lock
    // only after it was let go, it compacts at once: try again on a new region then.
    let mut waited = None;
    for _ in 0..20 {
        let h = two_files();
        let running = h.region.freeze();
        let ready = std::sync::Barrier::new(2);
        let got = std::thread::scope(|s| {
            let asked = s.spawn(|| {
                ready.wait();
                h.region.compact_requested_by_user(true, None).unwrap()
            });
            ready.wait();
            #[allow(clippy::disallowed_methods)] // a real thread, waited for in real time
            std::thread::sleep(std::time::Duration::from_millis(50));
            drop(running);
            asked.join().unwrap()
        });
        match got {
            None => {
                waited = Some(h);
                break;
            }
            Some(out) => assert_eq!(out.stores, vec![(b"f".to_vec(), true)]),
        }
    }
    let h = waited.expect("the request never met the running compaction");
    assert_eq!(raw(&h), 2, "nothing compacted by the request");
    let out = h.region.compact(false).unwrap();
    assert_eq!(out.stores, vec![(b"f".to_vec(), true)], "the pending major");
    assert_eq!(raw(&h), 0);
    // The flag went with that compaction: a new file beside its output is left alone.
    h.region
        .put(Put::new("b").add_column_at("f", "q", 2, "v"))
        .unwrap();
    h.region.flush().unwrap();
    assert!(h.region.compact(false).unwrap().stores.is_empty());
    // No compaction running: the request runs now, for the family named.
    let out = h
        .region
        .compact_requested_by_user(true, Some(b"f"))
        .unwrap()
        .unwrap();
    assert_eq!(out.stores, vec![(b"f".to_vec(), true)]);
    assert!(matches!(
        h.region.compact_requested_by_user(false, Some(b"nope")),
        Err(RegionError::NoSuchColumnFamily { .. })
    ));
}

#[test]
fn a_crash_at_any_step_of_a_compaction_loses_and_resurrects_nothing() {
    let mut steps_seen_failing = 0;
    for fail_at in 0..40u64 {
        let mut h = Harness::new(table(), Config::default());
        for round in 0..3 {
            for i in 0..30 {
                h.region
                    .put(Put::new(format!("r{i:02}")).add_column_at(
                        "f",
                        "q",
                        round,
                        format!("v{round}"),
                    ))
                    .unwrap();
            }
            h.region.flush().unwrap();
        }
        h.region.delete(Delete::new("r05").add_family("f")).unwrap();
        h.region.flush().unwrap();
        h.fs.fail_after(fail_at);
        let failed = h.region.compact(true).is_err();
        steps_seen_failing += u32::from(failed);
        h.fs.heal();
        h.crash_and_reopen();
        let rows: Vec<_> = h
            .region
            .scanner(&Scan::new())
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(rows.len(), 29, "fail_at {fail_at}");
        for r in &rows {
            assert_eq!(r.cells.len(), 1);
            assert_eq!(r.cells[0].value(), b"v2", "fail_at {fail_at}");
        }
        assert!(
            h.region.get(&Get::new("r05")).unwrap().is_empty(),
            "fail_at {fail_at}: resurrected"
        );
        if !failed {
            break;
        }
    }
    assert!(
        steps_seen_failing > 5,
        "the loop must cover the compaction's steps"
    );
}

#[test]
fn gets_of_absent_rows_skip_files_by_bloom() {
    let fs = FaultFs::new();
    let clock = Arc::new(ManualClock::new(T0));
    let config = Arc::new(Config::default());
    let cache = Arc::new(BlockCache::new(8 << 20));
    let (region, _wal) =
        open_region_with(&fs, &clock, &config, &table(), None, cache.clone()).unwrap();
    for f in 0..3 {
        for i in 0..500 {
            region
                .put(Put::new(format!("row{:05}", i * 3 + f)).add_column("f", "q", vec![7u8; 50]))
                .unwrap();
        }
        region.flush().unwrap();
    }
    let before = cache.stats();
    let mut found = 0;
    for i in 0..200 {
        if !region
            .get(&Get::new(format!("nope{i}")))
            .unwrap()
            .is_empty()
        {
            found += 1;
        }
    }
    let after = cache.stats();
    assert_eq!(found, 0);
    // Almost every file is skipped on the bloom (1% false positives allowed).
    assert!(
        after.misses + after.hits - before.misses - before.hits < 30,
        "{before:?} {after:?}"
    );
    assert_eq!(region.get(&Get::new("row00004")).unwrap().cells.len(), 1);
}

/// A compaction reads its inputs without caching their blocks (HBase's compaction
/// scanners do not cache): a block readers keep using survives a compaction that reads
/// many times the cache's size.
#[test]
fn a_compaction_leaves_the_readers_blocks_in_the_cache() {
    let fs = FaultFs::new();
    let clock = Arc::new(ManualClock::new(T0));
    let config = Arc::new(Config::default());
    // Room for a few 64 KiB blocks; family a's files hold about thirty.
    let cache = Arc::new(BlockCache::new(256 << 10));
    let t = TableDescriptor::new("t")
        .with_family(FamilyDescriptor::new("a"))
        .with_family(FamilyDescriptor::new("b"));
    let (region, _wal) = open_region_with(&fs, &clock, &config, &t, None, cache.clone()).unwrap();
    region
        .put(Put::new("hot").add_column("b", "q", "v"))
        .unwrap();
    for f in 0..3 {
        for i in 0..600 {
            region
                .put(Put::new(format!("row{:05}", i * 3 + f)).add_column("a", "q", vec![7u8; 1000]))
                .unwrap();
        }
        region.flush().unwrap();
    }
    let hot = Get::new("hot").add_family("b");
    assert_eq!(region.get(&hot).unwrap().cells.len(), 1);
    let warm = cache.stats();
    assert_eq!(region.get(&hot).unwrap().cells.len(), 1);
    let hit = cache.stats();
    assert_eq!(hit.misses, warm.misses, "the hot row's blocks are cached");
    // A minor compaction: family a's three files (b's one file is left as it is).
    region.compact(false).unwrap();
    assert_eq!(region.store(b"a").unwrap().files().len(), 1);
    let before = cache.stats();
    assert_eq!(region.get(&hot).unwrap().cells.len(), 1);
    let after = cache.stats();
    assert_eq!(after.misses, before.misses, "{before:?} {after:?}");
    assert!(after.hits > before.hits);
    // The compacted data reads back whole.
    let n: usize = region
        .scanner(&Scan::new().add_family("a"))
        .unwrap()
        .map(|r| r.unwrap().cells.len())
        .sum();
    assert_eq!(n, 1800);
}

/// A scanner keeps reading the files it opened on while flushes and a compaction
/// change the store's list under it (the list is copied on change, not in place), and
/// the store's list after them names the compaction's output alone.
#[test]
fn a_scanner_reads_its_files_while_the_list_changes() {
    let h = Harness::new(table(), Config::default());
    for f in 0..3 {
        for i in 0..100 {
            h.region
                .put(Put::new(format!("row{:03}", i * 3 + f)).add_column("f", "q", "v"))
                .unwrap();
        }
        h.region.flush().unwrap();
    }
    let mut scanner = h.region.scanner(&Scan::new()).unwrap();
    let first: Vec<_> = (&mut scanner).take(10).map(|r| r.unwrap().row).collect();
    h.region
        .put(Put::new("row999").add_column("f", "q", "late"))
        .unwrap();
    h.region.flush().unwrap();
    let files = h.region.store(b"f").unwrap().files();
    assert_eq!(files.len(), 4);
    h.region.compact(true).unwrap();
    assert_eq!(h.region.store(b"f").unwrap().files().len(), 1);
    // The scanner's own list is the three files of its opening: the rest of its rows,
    // in order, without the row written after it opened.
    let rest: Vec<_> = scanner.map(|r| r.unwrap().row).collect();
    let all: Vec<Vec<u8>> = first.into_iter().chain(rest).collect();
    let want: Vec<Vec<u8>> = (0..300)
        .map(|i| format!("row{i:03}").into_bytes())
        .collect();
    assert_eq!(all, want);
    let n = h.region.scanner(&Scan::new()).unwrap().count();
    assert_eq!(n, 301);
}

/// One big file and two small ones: out of ratio (the big one is more than 1.2x the
/// others), so whether they compact depends on `hbase.hstore.compaction.min.size`,
/// which HBase takes, when unset, from the region's flush size (`MEMSTORE_FLUSHSIZE`
/// of the table, else `hbase.hregion.memstore.flush.size`).
fn big_and_two_small_files(table: TableDescriptor, config: Config) -> Harness {
    let h = Harness::new(table, config);
    for i in 0..400 {
        h.region
            .put(Put::new(format!("big{i:04}")).add_column("f", "q", vec![7u8; 200]))
            .unwrap();
    }
    h.region.flush().unwrap();
    // However many flushes the puts took, one big file.
    h.region.compact(true).unwrap();
    assert_eq!(h.region.store_file_count(), 1);
    for name in ["s1", "s2"] {
        h.region
            .put(Put::new(name).add_column("f", "q", "v"))
            .unwrap();
        h.region.flush().unwrap();
    }
    assert_eq!(h.region.store_file_count(), 3);
    h
}

#[test]
fn compaction_min_size_defaults_to_the_regions_flush_size() {
    // No MEMSTORE_FLUSHSIZE, default flush size (128 MiB): the window is under it.
    let h = big_and_two_small_files(table(), Config::default());
    assert_eq!(h.region.compaction_min_size(), 134_217_728);
    assert!(h.region.needs_compaction());
    // The table's flush size (40,000 bytes, under the files' total): the ratio decides.
    let mut small = table();
    small.memstore_flush_size = Some(40_000);
    let h = big_and_two_small_files(small.clone(), Config::default());
    assert_eq!(h.region.compaction_min_size(), 40_000);
    assert!(!h.region.needs_compaction());
    h.region.compact(false).unwrap();
    assert_eq!(h.region.store_file_count(), 3, "nothing selected");
    // The configuration key, when set, wins over the table's flush size.
    let config = Config {
        compaction_min_size: Some(1 << 30),
        ..Config::default()
    };
    let h = big_and_two_small_files(small, config);
    assert_eq!(h.region.compaction_min_size(), 1 << 30);
    assert!(h.region.needs_compaction());
    h.region.compact(false).unwrap();
    assert_eq!(h.region.store_file_count(), 1);
}
