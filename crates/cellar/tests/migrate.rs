#![allow(clippy::unwrap_used)]
//! The re-key migration on the seeds' inbox: one heavy user and many light ones in a
//! wide table (`user` rows, reversed-timestamp qualifiers), moved to month buckets
//! (`user#yyyymm`) while writes go on to both tables: the backfill loads history from a
//! snapshot, a second run resumes and loads nothing twice, and verification finds zero
//! differences — and finds a damaged entity.

use std::path::Path;

mod common;

use cellar::migrate::backfill::{backfill, BackfillOptions};
use cellar::migrate::keymap::KeyMap;
use cellar::migrate::plan::Plan;
use cellar::migrate::verify::verify;
use cellar::migrate::Site;
use cellar::{Database, Options};
use cellar_api::{Delete, FamilyDescriptor, Put, TableDescriptor};

/// 2026-11-20 00:00 UTC.
const T0: i64 = 1_795_132_800_000;
const DAY: i64 = 86_400_000;

fn open(dir: &Path) -> Database {
    let mut o = Options::for_dir(dir).unwrap();
    o.background = false;
    Database::open_with(dir, o).unwrap()
}

fn table(name: &str) -> TableDescriptor {
    let mut m = FamilyDescriptor::new("m");
    m.versions = 1;
    TableDescriptor::new(name).with_family(m)
}

fn qual(ts: i64) -> String {
    format!("{:020}", u64::MAX - ts as u64)
}

/// A message to the old table, and (dual write) the same to the new one re-keyed,
/// through the migration's DualWriter.
fn message(db: &Database, map: Option<&KeyMap>, user: &str, ts: i64) {
    use cellar::Connection as _;
    let q = qual(ts);
    let v = format!("message to {user} at {ts}");
    let put = Put::new(user).add_column_at("m", q.as_str(), ts, v.as_str());
    match map {
        None => db.table("inbox").unwrap().put(put).unwrap(),
        Some(map) => {
            let conn = db.connection();
            let dual = cellar::migrate::dual::DualWriter::new(
                conn.table("inbox").unwrap(),
                conn.table("inbox_month").unwrap(),
                map.clone(),
                Box::new(|| 0),
            );
            dual.put(put).unwrap();
        }
    }
}

#[test]
fn the_inbox_moves_to_month_buckets_while_writes_go_on() {
    let tmp = tempfile::tempdir().unwrap();
    let db = open(&tmp.path().join("db"));
    db.create_table_split(table("inbox"), vec![b"user00010".to_vec()])
        .unwrap();
    // History: 20 light users, 2 messages a day for 20 days; one heavy user, 40 a day.
    for day in 0..20 {
        for u in 0..20 {
            for k in 0..2 {
                message(
                    &db,
                    None,
                    &format!("user{u:05}"),
                    T0 + day * DAY + k * 1000 + u,
                );
            }
        }
        for k in 0..40 {
            message(&db, None, "heavy", T0 + day * DAY + k * 60_000);
        }
    }
    db.flush("inbox").unwrap();
    // A deleted message stays deleted in the new table.
    let gone = T0 + 3 * DAY;
    db.table("inbox")
        .unwrap()
        .delete(Delete::new("heavy").add_column_version("m", qual(gone).as_str(), gone))
        .unwrap();

    let map = KeyMap::parse("bucket:month:rdec").unwrap();
    db.create_table_split(
        table("inbox_month"),
        vec![b"user00005".to_vec(), b"user00015".to_vec()],
    )
    .unwrap();
    // Dual writes start before the backfill's snapshot and go on after it.
    for k in 0..5 {
        message(&db, Some(&map), "heavy", T0 + 20 * DAY + k);
        message(&db, Some(&map), "user00003", T0 + 20 * DAY + k);
    }
    let site = Site {
        conn: db.connection(),
        target: db.master().as_ref(),
        state: tmp.path().join("state"),
    };
    let plan = Plan::new("inbox", "inbox_month", "bucket:month:rdec");
    let opts = BackfillOptions {
        threads: 2,
        // Small runs: a region's cells go out as several overlapping files.
        run_bytes: 16 << 10,
    };
    let seen = std::sync::Mutex::new(Vec::new());
    let progress = |p: &cellar::migrate::backfill::Progress| seen.lock().unwrap().push(*p);
    let report = backfill(&site, &plan, opts, &progress).unwrap();
    assert_eq!(report.regions, 2);
    assert!(report.cells > 1600, "{report:?}");
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.first().map(|p| (p.regions, p.done)), Some((2, 0)));
    assert_eq!(
        seen.last().map(|p| (p.done, p.cells)),
        Some((2, report.cells))
    );
    // The scratch table and the snapshot are gone once the step is done.
    assert!(!db.master().table_exists("inbox_month__backfill_source"));
    assert!(db.master().list_snapshots().unwrap().is_empty());
    for k in 5..10 {
        message(&db, Some(&map), "heavy", T0 + 21 * DAY + k);
    }
    // Run again: the step is recorded, nothing loads twice.
    let again = backfill(&site, &plan, opts, &|_| {}).unwrap();
    assert_eq!((again.regions, again.skipped), (0, 2));

    // A run that stopped after loading but before recording anything loads it all
    // again: the same cells at the same coordinates, so nothing changes.
    std::fs::remove_file(site.state.join("backfill.done")).unwrap();
    std::fs::remove_file(site.state.join("steps")).unwrap();
    let redo = backfill(&site, &plan, opts, &|_| {}).unwrap();
    assert_eq!(redo.regions, 2);
    let conn = db.connection();
    let (checked, diffs) = verify(conn, "inbox", "inbox_month", &map, None).unwrap();
    assert_eq!(checked, 21);
    assert!(diffs.is_empty(), "{diffs:?}");
    // The heavy user's month rows hold its messages, the deleted one excepted.
    let nov = db
        .table("inbox_month")
        .unwrap()
        .get(&cellar_api::Get::new("heavy#202611"))
        .unwrap();
    assert_eq!(nov.cells.len(), 11 * 40 - 1);

    // A message lost from the new table: verification names its entity, heavy first.
    let q = qual(T0 + 5 * DAY);
    db.table("inbox_month")
        .unwrap()
        .delete(Delete::new("heavy#202611").add_column_version("m", q.as_str(), T0 + 5 * DAY))
        .unwrap();
    let (_, diffs) = verify(conn, "inbox", "inbox_month", &map, Some(3)).unwrap();
    assert_eq!(diffs.len(), 1, "{diffs:?}");
    assert_eq!(diffs[0].entity, b"heavy");
    assert_eq!(diffs[0].old_cells, diffs[0].new_cells + 1);
}

fn cellar(args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cellar"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// `cellar migrate`: plan, create (pre-split from the old keys), backfill, verify,
/// status — each step repeatable, the plan fixed once made.
#[test]
fn the_migrate_command_runs_each_step() {
    let tmp = tempfile::tempdir().unwrap();
    let dbdir = tmp.path().join("db");
    {
        let db = open(&dbdir);
        db.create_table(table("inbox")).unwrap();
        for day in 0..15 {
            for u in 0..10 {
                message(&db, None, &format!("user{u:05}"), T0 + day * DAY + u);
            }
            for k in 0..20 {
                message(&db, None, "heavy", T0 + day * DAY + k * 60_000);
            }
        }
        db.close().unwrap();
    }
    let d = dbdir.to_str().unwrap();
    let plan = [
        "migrate",
        "plan",
        "--from",
        "inbox",
        "--to",
        "inbox_month",
        "--key-map",
        "bucket:month:rdec",
        "--db",
        d,
    ];
    let (code, out) = cellar(&plan);
    assert_eq!(code, 0, "{out}");
    assert_eq!(cellar(&plan).0, 0, "the same plan again");
    let (code, out) = cellar(&[
        "migrate",
        "plan",
        "--from",
        "inbox",
        "--to",
        "inbox_month",
        "--key-map",
        "salt:4",
        "--db",
        d,
    ]);
    assert_ne!(code, 0);
    assert!(out.contains("different migration"), "{out}");
    let (code, out) = cellar(&["migrate", "status", "--to", "inbox_month", "--db", d]);
    assert!(
        code == 0 && out.contains("plan: done") && out.contains("backfill: to do"),
        "{out}"
    );
    let (code, out) = cellar(&[
        "migrate",
        "create",
        "--to",
        "inbox_month",
        "--regions",
        "4",
        "--db",
        d,
    ]);
    assert!(code == 0 && out.contains("inbox_month: 4 regions"), "{out}");
    for _ in 0..2 {
        let (code, out) = cellar(&["migrate", "backfill", "--to", "inbox_month", "--db", d]);
        assert_eq!(code, 0, "{out}");
    }
    let (code, out) = cellar(&["migrate", "verify", "--to", "inbox_month", "--db", d]);
    assert!(
        code == 0 && out.contains("verified 11 entities: 0 differ"),
        "{out}"
    );
    let (_, out) = cellar(&["migrate", "status", "--to", "inbox_month", "--db", d]);
    assert!(
        out.contains("backfill: done") && out.contains("verify: done"),
        "{out}"
    );
    // Damage one entity in the new table: verify names it and exits 1.
    {
        let db = open(&dbdir);
        let ts = T0 + 2 * DAY + 3;
        db.table("inbox_month")
            .unwrap()
            .delete(Delete::new("user00003#202611").add_column_version("m", qual(ts).as_str(), ts))
            .unwrap();
        db.close().unwrap();
    }
    let (code, out) = cellar(&["migrate", "verify", "--to", "inbox_month", "--db", d]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("differs: user00003 (15 cells in inbox, 14 in inbox_month)"),
        "{out}"
    );
}

/// Through a server: `cellar migrate --connect` plans, creates, backfills and verifies
/// while the application writes through `cellar-client`'s DualWriter — puts re-keyed
/// with the writer's timestamp, a message deleted by version in both tables, and a
/// delete the map cannot re-key refused before anything is written.
#[test]
fn the_migration_runs_through_a_server_beside_the_clients_dual_writer() {
    let tmp = tempfile::tempdir().unwrap();
    let dbdir = tmp.path().join("db");
    {
        let db = open(&dbdir);
        db.create_table_split(table("inbox"), vec![b"user00004".to_vec()])
            .unwrap();
        for day in 0..12 {
            for u in 0..8 {
                message(&db, None, &format!("user{u:05}"), T0 + day * DAY + u);
            }
            for k in 0..10 {
                message(&db, None, "heavy", T0 + day * DAY + k * 60_000);
            }
        }
        db.close().unwrap();
    }
    let server = common::server::ServerProcess::start(&dbdir);
    let state = tmp.path().join("state");
    let run = |args: &[&str]| {
        let mut all = vec!["migrate"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--to", "inbox_month", "--connect", &server.addr]);
        all.extend_from_slice(&["--state", state.to_str().unwrap()]);
        cellar(&all)
    };
    let (code, out) = run(&["plan", "--from", "inbox", "--key-map", "bucket:month:rdec"]);
    assert_eq!(code, 0, "{out}");
    let (code, out) = run(&["create", "--regions", "3"]);
    assert!(code == 0 && out.contains("inbox_month: 3 regions"), "{out}");

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let map = KeyMap::parse("bucket:month:rdec").unwrap();
    let dual = rt.block_on(async {
        let conn = cellar_client::Connection::connect(&server.addr)
            .await
            .unwrap();
        cellar_client::migrate::DualWriter::new(
            conn.table("inbox"),
            conn.table("inbox_month"),
            map.clone(),
        )
    });
    let write = |user: &str, ts: i64| {
        let put = Put::new(user).add_column("m", qual(ts).as_str(), "live");
        rt.block_on(dual.put(put)).unwrap();
    };
    // Writes before the backfill's snapshot and after it.
    write("heavy", T0 + 13 * DAY);
    write("user00002", T0 + 13 * DAY + 1);
    let gone = T0 + 2 * DAY + 3 * 60_000;
    rt.block_on(dual.delete(Delete::new("heavy").add_column_version(
        "m",
        qual(gone).as_str(),
        gone,
    )))
    .unwrap();
    let refused = rt
        .block_on(dual.delete(Delete::new("user00001").add_family("m")))
        .unwrap_err();
    assert_eq!(
        refused.kind(),
        cellar_api::ErrorKind::Unsupported,
        "{refused}"
    );
    let (code, out) = run(&["backfill", "--threads", "2", "--quiet"]);
    assert!(code == 0 && out.contains("from 2 regions"), "{out}");
    write("heavy", T0 + 14 * DAY);
    write("user00007", T0 + 14 * DAY + 7);

    let (code, out) = run(&["verify"]);
    assert!(
        code == 0 && out.contains("verified 9 entities: 0 differ"),
        "{out}"
    );
    let (code, out) = run(&["status"]);
    assert!(
        code == 0 && out.contains("backfill: done") && out.contains("verify: done"),
        "{out}"
    );
    // Through the server, the new table's heavy November row: history, the live
    // writes, the deleted message missing.
    use cellar::Connection as _;
    let conn = cellar::client::RemoteConnection::connect(&server.addr).unwrap();
    let t = conn.table("inbox_month").unwrap();
    let month = |m: &str| t.get(&cellar_api::Get::new(format!("heavy#{m}"))).unwrap();
    assert_eq!(month("202611").cells.len(), 11 * 10 - 1);
    assert_eq!(month("202612").cells.len(), 10 + 2);
}
