#![allow(clippy::unwrap_used)]
// Drives real threads and real waits against the engine.
#![allow(clippy::disallowed_methods)]
//! WAL behaviour: replay, torn tails, corruption, poisoning, group commit, roll and
//! removal, and durability across simulated power loss.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cellar_io::{FaultFs, FileSystem, LocalFs};
use cellar_types::Cell;
use cellar_wal::{Durability, Wal, WalEdit, WalError, WalOptions};

fn edit(region: &str, seq: u64) -> WalEdit {
    WalEdit {
        region: region.into(),
        seq_id: seq,
        write_time: 1000 + seq as i64,
        cells: vec![
            Cell::put(format!("row{seq:05}"), "f", "q", seq as i64, vec![7u8; 40])
                .unwrap()
                .with_seq_id(seq),
        ],
    }
}

fn open(fs: Arc<dyn FileSystem>, dir: &Path, opts: WalOptions) -> (Wal, Vec<WalEdit>) {
    let mut seen = Vec::new();
    let (wal, _) = Wal::open(fs, dir, opts, &mut |e| {
        seen.push(e);
        Ok(())
    })
    .unwrap();
    (wal, seen)
}

/// A new log with default options in `/db/wal` of an in-memory file system.
fn fresh_wal() -> (FaultFs, PathBuf, Wal) {
    let fs = FaultFs::new();
    let dir = PathBuf::from("/db/wal");
    let (wal, _) = open(Arc::new(fs.clone()), &dir, WalOptions::default());
    (fs, dir, wal)
}

fn segments(fs: &dyn FileSystem, dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<_> = fs
        .list_dir(dir)
        .unwrap()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "wal"))
        .collect();
    v.sort();
    v
}

#[test]
fn edits_replay_in_order_after_reopen() {
    let tmp = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(LocalFs::new());
    let dir = tmp.path().join("wal");
    {
        let (wal, seen) = open(fs.clone(), &dir, WalOptions::default());
        assert!(seen.is_empty());
        for seq in 1..=50 {
            let d = [
                Durability::SyncWal,
                Durability::FsyncWal,
                Durability::AsyncWal,
            ][seq as usize % 3];
            wal.append(&edit("r1", seq), d).unwrap();
        }
        wal.append(&edit("r1", 99), Durability::SkipWal).unwrap();
        wal.close().unwrap();
    }
    let (_wal, seen) = open(fs, &dir, WalOptions::default());
    let seqs: Vec<u64> = seen.iter().map(|e| e.seq_id).collect();
    assert_eq!(seqs, (1..=50).collect::<Vec<_>>());
    assert_eq!(seen[7], edit("r1", 8));
}

#[test]
fn a_torn_tail_is_cut_and_reported() {
    let fs = FaultFs::new();
    let dyn_fs: Arc<dyn FileSystem> = Arc::new(fs.clone());
    let dir = PathBuf::from("/db/wal");
    {
        let (wal, _) = open(dyn_fs.clone(), &dir, WalOptions::default());
        for seq in 1..=10 {
            wal.append(&edit("r", seq), Durability::FsyncWal).unwrap();
        }
    }
    let seg = segments(&fs, &dir).pop().unwrap();
    let len = fs.file_len(&seg).unwrap();
    // Cut at every length inside the last record: always 9 edits and a report.
    let record = (len - 8) / 10;
    for cut in [
        len - 1,
        len - record + 5,
        len - record + 12,
        len - record + 1,
    ] {
        let copy = FaultFs::new();
        let data = cellar_io::read_all(&fs, &seg).unwrap();
        copy.create_dir_all(&dir).unwrap();
        let mut w = copy.create(&seg).unwrap();
        w.append(&data[..cut as usize]).unwrap();
        w.sync().unwrap();
        let mut seen = Vec::new();
        let (_wal, report) = Wal::open(
            Arc::new(copy.clone()),
            &dir,
            WalOptions::default(),
            &mut |e| {
                seen.push(e);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(seen.len(), 9, "cut at {cut}");
        let torn = report.torn_tail.unwrap();
        assert_eq!(torn.offset, len - record);
        assert_eq!(copy.file_len(&seg).unwrap(), len - record);
    }
}

#[test]
fn corruption_in_the_middle_is_an_error_naming_the_offset() {
    let fs = FaultFs::new();
    let dyn_fs: Arc<dyn FileSystem> = Arc::new(fs.clone());
    let dir = PathBuf::from("/db/wal");
    {
        let (wal, _) = open(dyn_fs.clone(), &dir, WalOptions::default());
        for seq in 1..=10 {
            wal.append(&edit("r", seq), Durability::SyncWal).unwrap();
        }
    }
    let seg = segments(&fs, &dir).pop().unwrap();
    let len = fs.file_len(&seg).unwrap();
    let record = (len - 8) / 10;
    let third = 8 + 2 * record;
    for (off, mask) in [(third + 30, 0x01u8), (third + 1, 0x40), (third + 5, 0x02)] {
        fs.flip_byte(&seg, off, mask).unwrap();
        let err = Wal::open(dyn_fs.clone(), &dir, WalOptions::default(), &mut |_| Ok(()))
            .err()
            .unwrap();
        match err {
            WalError::Corrupt { offset, path, .. } => {
                assert_eq!(offset, third);
                assert_eq!(path, seg);
            }
            other => panic!("{other}"),
        }
        fs.flip_byte(&seg, off, mask).unwrap();
    }
    // Healed, it opens again with every edit.
    let (_wal, seen) = open(dyn_fs, &dir, WalOptions::default());
    assert_eq!(seen.len(), 10);
}

#[test]
fn a_failed_sync_poisons_the_log() {
    let (fs, _, wal) = fresh_wal();
    wal.append(&edit("r", 1), Durability::FsyncWal).unwrap();
    fs.fail_after(1);
    let mut failures = 0;
    for seq in 2..6 {
        if wal.append(&edit("r", seq), Durability::FsyncWal).is_err() {
            failures += 1;
        }
    }
    assert_eq!(failures, 4);
    fs.heal();
    // Healed disk or not, the log keeps refusing: the failed edits must not be half-kept.
    match wal.append(&edit("r", 9), Durability::SyncWal) {
        Err(WalError::Poisoned { cause }) => assert!(cause.contains("injected"), "{cause}"),
        other => panic!("{other:?}"),
    }
    assert!(wal.poisoned().is_some());
}

#[test]
fn fsync_edits_survive_power_loss() {
    let (fs, dir, wal) = fresh_wal();
    for seq in 1..=20 {
        wal.append(&edit("r", seq), Durability::FsyncWal).unwrap();
    }
    // Not fsynced: may be lost, must not corrupt.
    wal.append(&edit("r", 21), Durability::SyncWal).unwrap();
    wal.append(&edit("r", 22), Durability::AsyncWal).unwrap();
    fs.crash();
    std::mem::forget(wal); // the process is gone: no orderly close.
    let (_wal, seen) = open(Arc::new(fs.clone()), &dir, WalOptions::default());
    let seqs: Vec<u64> = seen.iter().map(|e| e.seq_id).collect();
    assert_eq!(seqs, (1..=20).collect::<Vec<_>>());
}

/// Segments written past the write-behind stride (a megabyte) and rolled: every edit
/// replays, in order, from the real file system.
#[test]
fn write_behind_across_rolls_keeps_every_edit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("wal");
    let opts = WalOptions {
        roll_size: 3 << 19,
        ..WalOptions::default()
    };
    let big = |seq: u64| WalEdit {
        region: "r".into(),
        seq_id: seq,
        write_time: 1000,
        cells: vec![
            Cell::put(format!("row{seq:05}"), "f", "q", 1, vec![seq as u8; 20_000])
                .unwrap()
                .with_seq_id(seq),
        ],
    };
    {
        let (wal, _) = open(Arc::new(LocalFs::new()), &dir, opts.clone());
        for seq in 1..=250 {
            let d = if seq % 50 == 0 {
                Durability::FsyncWal
            } else {
                Durability::SyncWal
            };
            wal.append(&big(seq), d).unwrap();
        }
        assert!(wal.stats().segments > 2, "{:?}", wal.stats());
        wal.close().unwrap();
    }
    let (_wal, seen) = open(Arc::new(LocalFs::new()), &dir, opts);
    assert_eq!(seen.len(), 250);
    for (i, e) in seen.iter().enumerate() {
        assert_eq!(*e, big(i as u64 + 1));
    }
}

#[test]
fn concurrent_writers_share_fsyncs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("wal");
    let (wal, _) = open(Arc::new(LocalFs::new()), &dir, WalOptions::default());
    let wal = Arc::new(wal);
    let threads: Vec<_> = (0..16u64)
        .map(|t| {
            let wal = wal.clone();
            std::thread::spawn(move || {
                for i in 0..25u64 {
                    wal.append(&edit("r", t * 1000 + i + 1), Durability::FsyncWal)
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let stats = wal.stats();
    assert_eq!(stats.appends, 400);
    assert!(stats.fsyncs < 400, "{stats:?}");
    drop(wal);
    let (_wal, seen) = open(Arc::new(LocalFs::new()), &dir, WalOptions::default());
    assert_eq!(seen.len(), 400);
}

/// Writers contending for the log file's lock (one spins for it, the others sleep on
/// it): every SYNC_WAL edit acknowledged is in the log, each writer's in its order,
/// across rolls.
#[test]
fn contending_sync_writers_keep_every_edit_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("wal");
    let opts = WalOptions {
        roll_size: 64 << 10,
        ..WalOptions::default()
    };
    let (wal, _) = open(Arc::new(LocalFs::new()), &dir, opts.clone());
    let wal = Arc::new(wal);
    let threads: Vec<_> = (0..6u64)
        .map(|t| {
            let wal = wal.clone();
            std::thread::spawn(move || {
                for i in 0..400u64 {
                    wal.append(&edit("r", t * 10_000 + i + 1), Durability::SyncWal)
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert!(wal.stats().segments > 1, "{:?}", wal.stats());
    drop(wal);
    let (_wal, seen) = open(Arc::new(LocalFs::new()), &dir, opts);
    assert_eq!(seen.len(), 2400);
    for t in 0..6u64 {
        let mine: Vec<u64> = seen
            .iter()
            .map(|e| e.seq_id)
            .filter(|s| s / 10_000 == t)
            .collect();
        let want: Vec<u64> = (1..=400).map(|i| t * 10_000 + i).collect();
        assert_eq!(mine, want, "writer {t}");
    }
}

#[test]
fn segments_roll_and_go_once_flushed() {
    let fs = FaultFs::new();
    let dir = PathBuf::from("/db/wal");
    let opts = WalOptions {
        roll_size: 1000,
        ..WalOptions::default()
    };
    let (wal, _) = open(Arc::new(fs.clone()), &dir, opts.clone());
    for seq in 1..=40 {
        let region = if seq % 2 == 0 { "a" } else { "b" };
        wal.append(&edit(region, seq), Durability::SyncWal).unwrap();
    }
    let rolled = segments(&fs, &dir).len();
    assert!(rolled > 3, "{rolled}");
    wal.mark_flushed("a", 40).unwrap();
    assert_eq!(segments(&fs, &dir).len(), rolled, "b still needs them");
    wal.mark_flushed("b", 19).unwrap();
    let after = segments(&fs, &dir).len();
    assert!(after < rolled && after > 1, "{after}");
    wal.forget_region("b").unwrap();
    assert_eq!(segments(&fs, &dir).len(), 1);
    drop(wal);
    // Only the newest segment stays: it replays the newest edits, in order.
    let (_wal, seen) = open(Arc::new(fs), &dir, opts);
    let seqs: Vec<u64> = seen.iter().map(|e| e.seq_id).collect();
    assert!(seqs.len() < 40);
    let first = 41 - seqs.len() as u64;
    assert_eq!(seqs, (first..=40).collect::<Vec<_>>());
}

/// A current segment whose edits are all flushed is closed and removed at once, not
/// kept until it fills: the log of flushed data takes no disk. Edits written after that
/// land in the new segment and replay.
#[test]
fn a_flushed_current_segment_goes_at_once() {
    let (fs, dir, wal) = fresh_wal();
    for seq in 1..=20 {
        let region = if seq % 2 == 0 { "a" } else { "b" };
        wal.append(&edit(region, seq), Durability::SyncWal).unwrap();
    }
    let first = segments(&fs, &dir);
    assert_eq!(first.len(), 1);
    wal.mark_flushed("a", 20).unwrap();
    assert_eq!(segments(&fs, &dir), first, "b's edits are not flushed yet");
    wal.mark_flushed("b", 18).unwrap();
    assert_eq!(segments(&fs, &dir), first, "b's edit 19 is not flushed yet");
    wal.mark_flushed("b", 19).unwrap();
    let now = segments(&fs, &dir);
    assert_eq!(now.len(), 1);
    assert_ne!(
        now, first,
        "the flushed segment was replaced by an empty one"
    );
    wal.append(&edit("a", 21), Durability::SyncWal).unwrap();
    drop(wal);
    let (_wal, seen) = open(Arc::new(fs), &dir, WalOptions::default());
    let seqs: Vec<u64> = seen.iter().map(|e| e.seq_id).collect();
    assert_eq!(seqs, vec![21]);
}

/// The regions keeping segments on disk are named once the current segment is large
/// enough, once per segment, and no longer once they flush.
#[test]
fn regions_pinning_the_log_are_named_once_a_segment() {
    let (fs, dir, wal) = fresh_wal();
    wal.append(&edit("meta", 1), Durability::SyncWal).unwrap();
    for seq in 2..=20 {
        wal.append(&edit("big", seq), Durability::SyncWal).unwrap();
    }
    assert!(
        wal.regions_pinning(1 << 20).is_empty(),
        "the segment is small"
    );
    wal.mark_flushed("big", 20).unwrap();
    assert_eq!(wal.regions_pinning(100), vec!["meta".to_string()]);
    assert!(wal.regions_pinning(100).is_empty(), "named once a segment");
    let pinned = segments(&fs, &dir);
    wal.mark_flushed("meta", 1).unwrap();
    let now = segments(&fs, &dir);
    assert_eq!(now.len(), 1);
    assert_ne!(now, pinned, "the flushed segment went");
    wal.append(&edit("big", 21), Durability::SyncWal).unwrap();
    assert_eq!(
        wal.regions_pinning(100),
        vec!["big".to_string()],
        "a new segment"
    );
}

/// A closed segment kept for a region written once (a table created in `hbase:meta`)
/// names it even while the current segment is still small: the log already holds a
/// whole segment for it.
#[test]
fn a_kept_closed_segment_names_its_pinning_region() {
    let (fs, dir, wal) = fresh_wal();
    wal.append(&edit("meta", 1), Durability::SyncWal).unwrap();
    wal.append(&edit("big", 2), Durability::SyncWal).unwrap();
    wal.roll().unwrap();
    wal.append(&edit("big", 3), Durability::SyncWal).unwrap();
    wal.mark_flushed("big", 3).unwrap();
    assert_eq!(
        segments(&fs, &dir).len(),
        2,
        "meta keeps the closed segment"
    );
    assert_eq!(wal.regions_pinning(1 << 30), vec!["meta".to_string()]);
    wal.mark_flushed("meta", 1).unwrap();
    assert_eq!(segments(&fs, &dir).len(), 1);
}

/// A region named once and flushed that writes again in the same segment (the
/// large-row census after each compaction) is named again for its new edits, so a
/// segment whose other regions all flushed can go; without new edits it is not.
#[test]
fn a_region_pinning_again_with_new_edits_is_named_again() {
    let (fs, dir, wal) = fresh_wal();
    wal.append(&edit("census", 1), Durability::SyncWal).unwrap();
    for seq in 2..=20 {
        wal.append(&edit("big", seq), Durability::SyncWal).unwrap();
    }
    assert_eq!(wal.regions_pinning(100), vec!["big", "census"]);
    wal.mark_flushed("census", 1).unwrap();
    assert!(wal.regions_pinning(100).is_empty(), "nothing new");
    wal.append(&edit("census", 21), Durability::SyncWal)
        .unwrap();
    wal.mark_flushed("big", 20).unwrap();
    assert_eq!(wal.regions_pinning(100), vec!["census"], "new edits");
    assert!(wal.regions_pinning(100).is_empty(), "named for them once");
    let pinned = segments(&fs, &dir);
    wal.mark_flushed("census", 21).unwrap();
    let now = segments(&fs, &dir);
    assert_eq!(now.len(), 1);
    assert_ne!(now, pinned, "the covered segment went");
}

/// Whatever follows the last valid record of the newest segment — garbage of any kind,
/// not only zeros — is a torn tail: cut and reported, the log opens with every valid
/// edit; the report says how many bytes and records went, and does not claim to know
/// more than the bytes show.
#[test]
fn garbage_after_the_last_record_is_a_torn_tail() {
    let fs = FaultFs::new();
    let dir = PathBuf::from("/db/wal");
    {
        let (wal, _) = open(Arc::new(fs.clone()), &dir, WalOptions::default());
        for seq in 1..=10 {
            wal.append(&edit("r", seq), Durability::FsyncWal).unwrap();
        }
    }
    let seg = segments(&fs, &dir).pop().unwrap();
    let data = cellar_io::read_all(&fs, &seg).unwrap();
    let record = (data.len() - 8) / 10;
    let mut partial = data[8..8 + record].to_vec();
    partial.truncate(record - 7);
    let mut rng_state = 0x2545_f491_4f6c_dd1du64;
    let mut noise = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                rng_state ^= rng_state << 13;
                rng_state ^= rng_state >> 7;
                rng_state ^= rng_state << 17;
                (rng_state >> 24) as u8 | 1
            })
            .collect()
    };
    let tails: Vec<(Vec<u8>, Option<u64>)> = vec![
        (noise(1), None),
        (noise(11), None),
        (noise(5000), None),
        (vec![0xff; 64], None),
        (partial, Some(1)),
    ];
    for (tail, records) in tails {
        let copy = FaultFs::new();
        copy.create_dir_all(&dir).unwrap();
        let mut w = copy.create(&seg).unwrap();
        w.append(&data).unwrap();
        w.append(&tail).unwrap();
        w.sync().unwrap();
        drop(w);
        let mut seen = Vec::new();
        let (_wal, report) = Wal::open(
            Arc::new(copy.clone()),
            &dir,
            WalOptions::default(),
            &mut |e| {
                seen.push(e.seq_id);
                Ok(())
            },
        )
        .unwrap_or_else(|e| panic!("{} garbage bytes: {e}", tail.len()));
        assert_eq!(seen, (1..=10).collect::<Vec<_>>());
        let torn = report.torn_tail.expect("the cut is reported");
        assert_eq!(torn.offset, data.len() as u64);
        assert_eq!(torn.dropped_bytes, tail.len() as u64);
        assert_eq!(torn.dropped_records, records);
        assert_eq!(copy.file_len(&seg).unwrap(), data.len() as u64);
        let text = torn.describe();
        assert!(text.contains(&format!("{} bytes", tail.len())), "{text}");
        assert!(!text.contains("unacknowledged"), "{text}");
    }
    // A bad record with a valid one after it is damage, not a tail: an error naming it.
    let copy = FaultFs::new();
    copy.create_dir_all(&dir).unwrap();
    let mut damaged = data.clone();
    damaged[8 + record + 20] ^= 0x40;
    let mut w = copy.create(&seg).unwrap();
    w.append(&damaged).unwrap();
    w.append(&noise(100)).unwrap();
    w.sync().unwrap();
    drop(w);
    let err = Wal::open(Arc::new(copy), &dir, WalOptions::default(), &mut |_| Ok(()))
        .err()
        .unwrap();
    assert!(
        matches!(err, WalError::Corrupt { offset, .. } if offset == (8 + record) as u64),
        "{err}"
    );
}

#[test]
fn a_segment_of_a_newer_format_is_refused_with_its_version() {
    let fs = FaultFs::new();
    let dir = PathBuf::from("/db/wal");
    {
        let (wal, _) = open(Arc::new(fs.clone()), &dir, WalOptions::default());
        wal.append(&edit("a", 1), Durability::FsyncWal).unwrap();
    }
    let seg = fs.list_dir(&dir).unwrap().into_iter().next().unwrap();
    let mut data = cellar_io::read_all(&fs, &seg).unwrap();
    data[5..7].copy_from_slice(b"02");
    let mut w = fs.create(&seg).unwrap();
    w.append(&data).unwrap();
    w.sync().unwrap();
    let e = Wal::open(
        Arc::new(fs.clone()),
        &dir,
        WalOptions::default(),
        &mut |_| Ok(()),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("version 02 is newer"), "{e}");
}

#[test]
fn a_failed_shared_sync_fails_its_waiters_and_nobody_hangs() {
    let (fs, _, wal) = fresh_wal();
    let wal = Arc::new(wal);
    wal.append(&edit("r", 1), Durability::FsyncWal).unwrap();
    fs.fail_after(3);
    let threads: Vec<_> = (0..16u64)
        .map(|t| {
            let wal = wal.clone();
            std::thread::spawn(move || {
                let mut ok = 0u64;
                for i in 0..50u64 {
                    match wal.append(&edit("r", t * 1000 + i + 2), Durability::FsyncWal) {
                        Ok(()) => ok += 1,
                        Err(_) => return (ok, true),
                    }
                }
                (ok, false)
            })
        })
        .collect();
    // Every writer comes back (a leader's failure wakes its followers), with an error.
    let results: Vec<(u64, bool)> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert!(results.iter().all(|(_, failed)| *failed), "{results:?}");
    assert!(wal.poisoned().is_some());
}
