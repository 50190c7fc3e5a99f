#![allow(clippy::unwrap_used)]
//! A crash injected in each step of a re-key migration: the file system fails after
//! every number of steps while `plan`, `create`, `backfill` or `verify` runs, then
//! loses everything not synced (a power loss); the database reopens, the interrupted
//! step runs again and the rest follow — and the new table ends cell for cell as an
//! uninterrupted migration leaves it, with verification finding no difference.

use std::path::Path;
use std::sync::Arc;

use cellar::migrate::backfill::{backfill, BackfillOptions};
use cellar::migrate::create::create;
use cellar::migrate::keymap::KeyMap;
use cellar::migrate::plan::{record, Plan};
use cellar::migrate::verify::verify;
use cellar::migrate::Site;
use cellar::{Database, Options};
use cellar_api::{Delete, FamilyDescriptor, Put, Scan, TableDescriptor};
use cellar_io::{FaultFs, ManualClock};
use cellar_region::Config;

/// 2026-11-20 00:00 UTC.
const T0: i64 = 1_795_132_800_000;
const DAY: i64 = 86_400_000;
const STEPS: [&str; 4] = ["plan", "create", "backfill", "verify"];

fn open(fs: &FaultFs) -> Database {
    let opts = Options {
        fs: Arc::new(fs.clone()),
        clock: Arc::new(ManualClock::new(T0 + 40 * DAY)),
        executor: Arc::new(cellar_io::Threads),
        config: Config::default(),
        background: false,
        lock: false,
    };
    Database::open_with(Path::new("/db"), opts).unwrap()
}

fn qual(ts: i64) -> String {
    format!("{:020}", u64::MAX - ts as u64)
}

/// The old inbox: a heavy user and light ones over two months, one message deleted,
/// split in two regions, flushed.
fn old_inbox(db: &Database) {
    let mut m = FamilyDescriptor::new("m");
    m.versions = 1;
    db.create_table_split(
        TableDescriptor::new("inbox").with_family(m),
        vec![b"user2".to_vec()],
    )
    .unwrap();
    let t = db.table("inbox").unwrap();
    for day in (0..40).step_by(3) {
        for u in 0..4 {
            let ts = T0 + day * DAY + u;
            let user = format!("user{u}");
            t.put(Put::new(user.as_str()).add_column_at("m", qual(ts).as_str(), ts, "hi"))
                .unwrap();
        }
        for k in 0..6 {
            let ts = T0 + day * DAY + k * 60_000;
            t.put(Put::new("heavy").add_column_at("m", qual(ts).as_str(), ts, "msg"))
                .unwrap();
        }
    }
    let gone = T0 + 3 * DAY;
    t.delete(Delete::new("heavy").add_column_version("m", qual(gone).as_str(), gone))
        .unwrap();
    db.flush("inbox").unwrap();
}

fn dump(db: &Database, t: &str) -> Vec<String> {
    let scan = Scan::new().max_versions(10);
    db.table(t)
        .unwrap()
        .scan(&scan)
        .unwrap()
        .flat_map(|r| r.unwrap().cells)
        .map(|c| {
            format!(
                "{}/{}:{}/{}={}",
                String::from_utf8_lossy(c.row()),
                String::from_utf8_lossy(c.family()),
                String::from_utf8_lossy(c.qualifier()),
                c.timestamp(),
                String::from_utf8_lossy(c.value())
            )
        })
        .collect()
}

/// Runs one step; Err when the file system failed under it.
fn run_step(db: &Database, step: &str) -> Result<(), String> {
    let site = Site {
        conn: db.connection(),
        target: db.master().as_ref(),
        state: "/state/inbox_month".into(),
    };
    let fs = db.master().fs().clone();
    let e = |e: cellar::DbError| e.to_string();
    match step {
        "plan" => {
            Plan::new("inbox", "inbox_month", "bucket:month:rdec")
                .save(fs.as_ref(), &site.state)
                .map_err(e)?;
        }
        "create" => {
            let plan = Plan::load(fs.as_ref(), &site.state).map_err(e)?;
            create(&site, &plan, 3).map_err(e)?;
        }
        "backfill" => {
            let plan = Plan::load(fs.as_ref(), &site.state).map_err(e)?;
            let opts = BackfillOptions {
                threads: 2,
                run_bytes: 2 << 10,
            };
            backfill(&site, &plan, opts, &|_| {}).map_err(e)?;
        }
        _ => {
            let map = KeyMap::parse("bucket:month:rdec").unwrap();
            let (n, diffs) = verify(db.connection(), "inbox", "inbox_month", &map, None)
                .map_err(|x| x.to_string())?;
            if n != 5 || !diffs.is_empty() {
                return Err(format!("verified {n} entities, differing: {diffs:?}"));
            }
        }
    }
    record(fs.as_ref(), &site.state, step).map_err(e)
}

#[test]
fn a_crash_in_each_step_of_a_migration_resumes_to_the_same_result() {
    let fs = FaultFs::new();
    let db = open(&fs);
    old_inbox(&db);
    for step in STEPS {
        run_step(&db, step).unwrap();
    }
    let expected = dump(&db, "inbox_month");
    assert_eq!(expected.len(), 14 * 10 - 1);
    drop(db);

    for (i, step) in STEPS.iter().enumerate() {
        let mut interrupted = 0;
        let mut fail_at = 0u64;
        loop {
            let fs = FaultFs::new();
            let db = open(&fs);
            old_inbox(&db);
            for earlier in &STEPS[..i] {
                run_step(&db, earlier).unwrap();
            }
            fs.fail_after(fail_at);
            let finished = run_step(&db, step).is_ok();
            fs.heal();
            fs.crash();
            std::mem::forget(db);
            let db = open(&fs);
            for rest in &STEPS[i..] {
                run_step(&db, rest)
                    .unwrap_or_else(|e| panic!("{step} failing at {fail_at}, then {rest}: {e}"));
            }
            assert_eq!(
                dump(&db, "inbox_month"),
                expected,
                "{step} failing at {fail_at}"
            );
            drop(db);
            if finished {
                break;
            }
            interrupted += 1;
            // Every step early on; then a spread of them through long steps.
            fail_at += if fail_at < 40 { 1 } else { 1 + fail_at / 20 };
        }
        assert!(interrupted > 0, "{step}: no failure was injected");
        eprintln!("{step}: {interrupted} crash points");
    }
}
