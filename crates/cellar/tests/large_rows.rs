#![allow(clippy::unwrap_used)]
//! Large-row tracking end to end: a row grown day after day through flushes is
//! recorded in `cellar:large_rows` once it reaches the watch level, moves to the warn
//! level, keeps a history its forecast reads, is corrected by a major compaction that
//! sees it whole, and leaves the table when deletes shrink it; rows of every family add
//! up; a table without large rows makes no entry (and no system table).

use std::path::Path;

mod common;
use std::sync::Arc;

use cellar::large_rows::{forecast, Entry, TABLE};
use cellar::{Database, Options};
use cellar_api::{Delete, FamilyDescriptor, Put, Scan, TableDescriptor};
use cellar_io::{ManualClock, MemoryFs};
use cellar_region::row_sizes::Levels;
use cellar_region::Config;

const T0: i64 = 1_795_132_800_000;
const DAY: i64 = 86_400_000;

fn open(clock: Arc<ManualClock>) -> Database {
    let config = Config {
        large_row_levels: Levels {
            enabled: true,
            watch_bytes: 20_000,
            watch_cells: 1_000_000,
            warn_bytes: 60_000,
            warn_cells: 1_000_000,
            tombstone_cells: 1_000_000,
        },
        ..Config::default()
    };
    let opts = Options {
        fs: Arc::new(MemoryFs::new()),
        clock,
        executor: Arc::new(cellar_io::Threads),
        config,
        background: false,
        lock: false,
    };
    Database::open_with(Path::new("/db"), opts).unwrap()
}

fn entries(db: &Database) -> Vec<Entry> {
    if !db.master().table_exists(TABLE) {
        return Vec::new();
    }
    db.table(TABLE)
        .unwrap()
        .scan(&Scan::new())
        .unwrap()
        .filter_map(|r| Entry::from_result(&r.unwrap()))
        .collect()
}

/// `n` messages of 100 bytes to `user`'s row in families m and a.
fn messages(db: &Database, user: &str, n: usize, at: i64) {
    let t = db.table("inbox").unwrap();
    for i in 0..n {
        let q = format!("{:020}", at + i as i64);
        t.put(
            Put::new(user)
                .add_column_at("m", q.as_str(), at, vec![b'x'; 100])
                .add_column_at("a", q.as_str(), at, vec![b'y'; 10]),
        )
        .unwrap();
    }
}

#[test]
fn a_growing_row_is_tracked_forecast_and_dropped() {
    let clock = Arc::new(ManualClock::new(T0));
    let db = open(clock.clone());
    db.create_table(
        TableDescriptor::new("inbox")
            .with_family(FamilyDescriptor::new("m"))
            .with_family(FamilyDescriptor::new("a")),
    )
    .unwrap();
    // Light users only: nothing tracked, no system table.
    for u in 0..20 {
        messages(&db, &format!("user{u:02}"), 5, T0);
    }
    db.flush("inbox").unwrap();
    assert!(!db.master().table_exists(TABLE), "no large rows, no noise");

    // The heavy user: 50 messages (about 7 KB in m) a day.
    let mut sizes = Vec::new();
    for day in 0..12 {
        clock.set(T0 + day * DAY);
        messages(&db, "heavy", 50, T0 + day * DAY);
        db.flush("inbox").unwrap();
        sizes.push(entries(&db).iter().map(|e| e.bytes).sum::<u64>());
    }
    // Not tracked until one write saw it at 20,000 bytes (a compaction sees it whole).
    assert_eq!(sizes[0], 0);
    db.compact("inbox", false).unwrap();
    let e = entries(&db);
    let m = e.iter().find(|e| e.family == b"m").unwrap();
    assert_eq!(m.row, b"heavy");
    assert_eq!(m.level, "warn");
    let exact: u64 = db
        .table("inbox")
        .unwrap()
        .get(&cellar_api::Get::new("heavy").add_family("m"))
        .unwrap()
        .cells
        .iter()
        .map(|c| c.serialized_size(false) as u64)
        .sum();
    assert!(
        m.bytes >= exact * 9 / 10 && m.bytes <= exact,
        "{} vs {exact}",
        m.bytes
    );
    // More days through flushes: deltas add, history grows, the forecast follows.
    for day in 12..20 {
        clock.set(T0 + day * DAY);
        messages(&db, "heavy", 50, T0 + day * DAY);
        db.flush("inbox").unwrap();
    }
    db.compact("inbox", true).unwrap();
    let e = entries(&db);
    let m = e.iter().find(|e| e.family == b"m").unwrap();
    assert_eq!(m.bytes, {
        let t = db.table("inbox").unwrap();
        let r = t
            .get(&cellar_api::Get::new("heavy").add_family("m"))
            .unwrap();
        r.cells
            .iter()
            .map(|c| c.serialized_size(false) as u64)
            .sum::<u64>()
    });
    assert!(m.history.len() >= 8, "{:?}", m.history);
    let f = forecast(&e, 1 << 30, 10 << 30);
    assert_eq!(f.len(), 1, "families add up to one row");
    assert_eq!(f[0].families.len(), 2);
    // 50 messages a day in each family.
    let per_day: f64 = e
        .iter()
        .map(|e| 50.0 * e.bytes as f64 / e.cells as f64)
        .sum();
    let g = f[0].growth_per_day.unwrap();
    assert!((g - per_day).abs() < per_day * 0.05, "{g} vs {per_day}");
    assert!(f[0].days_to_large.unwrap() > 100.0);

    // Deletes shrink it below the watch level: a major compaction drops its entries.
    db.table("inbox")
        .unwrap()
        .delete(Delete::new("heavy"))
        .unwrap();
    db.flush("inbox").unwrap();
    db.compact("inbox", true).unwrap();
    assert!(entries(&db).is_empty(), "{:?}", entries(&db));
}

/// The levels come from `cellar.toml` under their key names, and `large_rows` in the
/// shell lists the tracked rows (families summed) with their forecasts.
#[test]
fn the_shell_lists_large_rows_with_levels_from_the_configuration() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("cellar.toml"),
        "\"cellar.largerow.watch.bytes\" = 20000\n\"cellar.largerow.warn.bytes\" = 60000\n",
    )
    .unwrap();
    {
        let mut o = Options::for_dir(tmp.path()).unwrap();
        o.background = false;
        assert_eq!(o.config.large_row_levels.watch_bytes, 20_000);
        let db = Database::open_with(tmp.path(), o).unwrap();
        db.create_table(
            TableDescriptor::new("inbox")
                .with_family(FamilyDescriptor::new("m"))
                .with_family(FamilyDescriptor::new("a")),
        )
        .unwrap();
        messages(&db, "heavy", 400, T0);
        messages(&db, "light", 3, T0);
        db.flush("inbox").unwrap();
        db.close().unwrap();
    }
    let out = common::server::run_shell(
        &[tmp.path().to_str().unwrap()],
        "large_rows\nlarge_rows 'other'\n",
    );
    let line = out
        .lines()
        .find(|l| l.starts_with(" inbox heavy "))
        .unwrap_or_else(|| panic!("{out}"));
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(fields[2], "a,m", "{line}");
    let bytes: u64 = fields[3].parse().unwrap();
    assert_eq!(fields[4], "800", "{line}");
    // 400 messages of 100 and 10 bytes with a 20-byte qualifier and 1-byte families.
    assert_eq!(
        bytes,
        400 * (20 + 5 + 1 + 20 + 100) + 400 * (20 + 5 + 1 + 20 + 10)
    );
    assert!(!out.contains(" inbox light "), "{out}");
    assert!(
        out.contains("1 row(s)") && out.contains("0 row(s)"),
        "{out}"
    );
}

fn metrics(addr: &str) -> String {
    common::server::http_get(addr, "/metrics")
}

/// Through a server: writes and a flush asked over the wire (AdminService) record the
/// large row; `/metrics` has the largest row's bytes and the rows at each level per
/// table, and `cellar shell --connect` lists it.
#[test]
fn a_server_reports_large_rows_in_metrics_and_its_shell() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("cellar.toml"),
        "\"cellar.largerow.watch.bytes\" = 20000\n\"cellar.largerow.warn.bytes\" = 60000\n",
    )
    .unwrap();
    let server = common::server::ServerProcess::start(tmp.path());
    use cellar::Connection as _;
    let conn = cellar::client::RemoteConnection::connect(&server.addr).unwrap();
    conn.admin()
        .create_table(
            TableDescriptor::new("inbox")
                .with_family(FamilyDescriptor::new("m"))
                .with_family(FamilyDescriptor::new("a")),
            vec![b"m".to_vec()],
        )
        .unwrap();
    let t = conn.table("inbox").unwrap();
    for (user, n) in [("heavy", 500), ("other", 200), ("zlight", 3)] {
        for i in 0..n {
            let q = format!("{:020}", T0 + i);
            t.put(Put::new(user).add_column_at("m", q.as_str(), T0, vec![b'x'; 100]))
                .unwrap();
        }
    }
    conn.admin().flush("inbox").unwrap();
    let text = metrics(server.info.as_deref().unwrap());
    let heavy = 500 * (20 + 5 + 1 + 20 + 100);
    assert!(
        text.contains(&format!(
            "cellar_largerow_largest_bytes{{namespace=\"default\",table=\"inbox\"}} {heavy}"
        )),
        "{text}"
    );
    for (level, n) in [("watch", 1), ("warn", 1)] {
        let line = format!(
            "cellar_largerow_rows{{namespace=\"default\",table=\"inbox\",level=\"{level}\"}} {n}"
        );
        assert!(text.contains(&line), "{line} in {text}");
    }
    let out = common::server::run_shell(&["--connect", &server.addr], "large_rows 'inbox'\n");
    assert!(
        out.contains(&format!(" inbox heavy m {heavy} 500 ")),
        "{out}"
    );
    assert!(out.contains(" inbox other m "), "{out}");
    assert!(out.contains("2 row(s)"), "{out}");
}

/// The large-response log: a Get of a whole wide row and a scan without a batch go
/// over `hbase.ipc.warn.response.size` and are logged with their shape and the fix; a
/// Get of one column and a batched scan are not; the shell lists them newest first.
#[test]
fn large_reads_are_logged_with_their_shape_and_the_fix() {
    let config = Config {
        large_log: cellar_region::large_log::LargeLogConfig {
            size_bytes: 5_000,
            time_ms: 60_000,
            capacity: 3,
        },
        ..Config::default()
    };
    let opts = Options {
        fs: Arc::new(MemoryFs::new()),
        clock: Arc::new(ManualClock::new(T0)),
        executor: Arc::new(cellar_io::Threads),
        config,
        background: false,
        lock: false,
    };
    let db = Database::open_with(Path::new("/db"), opts).unwrap();
    db.create_table(TableDescriptor::new("inbox").with_family(FamilyDescriptor::new("m")))
        .unwrap();
    let t = db.table("inbox").unwrap();
    for i in 0..100 {
        t.put(Put::new("heavy").add_column("m", format!("q{i:03}").as_str(), vec![b'x'; 100]))
            .unwrap();
    }
    use cellar::Connection as _;
    let conn = db.connection();
    t.get(&cellar_api::Get::new("heavy").add_column("m", "q001"))
        .unwrap();
    assert!(conn.large_responses().unwrap().is_empty());
    t.get(&cellar_api::Get::new("heavy")).unwrap();
    let log = conn.large_responses().unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(
        (log[0].op, log[0].kind.as_str()),
        ("Get", "responseTooLarge")
    );
    assert_eq!(log[0].row, b"heavy");
    assert_eq!(log[0].cells, 100);
    assert!(log[0].shape.contains("unrestricted Get"), "{:?}", log[0]);
    assert!(
        log[0].advice.contains("ColumnPaginationFilter"),
        "{:?}",
        log[0]
    );
    let batched: Vec<_> = t
        .scan(&Scan::new().batch(10))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(batched.len(), 10);
    assert_eq!(conn.large_responses().unwrap().len(), 1);
    let _ = t.scan(&Scan::new()).unwrap().count();
    let log = conn.large_responses().unwrap();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].op, "Scan");
    assert!(log[0].shape.contains("no batch"), "{:?}", log[0]);
    // A bounded ring: three entries at most.
    for _ in 0..3 {
        t.get(&cellar_api::Get::new("heavy")).unwrap();
    }
    assert_eq!(conn.large_responses().unwrap().len(), 3);
    let mut out = Vec::new();
    let mut shell = cellar::shell::Shell::new(db, &mut out);
    shell
        .execute("get_largelog_responses {TABLE_NAME => 'inbox', LIMIT => 2}")
        .unwrap();
    drop(shell);
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains(" responseTooLarge Get table=inbox "),
        "{text}"
    );
    assert!(text.contains("2 row(s)"), "{text}");
}

/// A read that hits RowTooBigException is kept in the same log, with its row and shape.
#[test]
fn row_too_big_occurrences_are_logged() {
    let opts = Options {
        fs: Arc::new(MemoryFs::new()),
        clock: Arc::new(ManualClock::new(T0)),
        executor: Arc::new(cellar_io::Threads),
        config: Config {
            max_row_size: 3_000,
            ..Config::default()
        },
        background: false,
        lock: false,
    };
    let db = Database::open_with(Path::new("/db"), opts).unwrap();
    db.create_table(TableDescriptor::new("inbox").with_family(FamilyDescriptor::new("m")))
        .unwrap();
    let t = db.table("inbox").unwrap();
    for i in 0..100 {
        t.put(Put::new("heavy").add_column("m", format!("q{i:03}").as_str(), vec![b'x'; 100]))
            .unwrap();
    }
    let e = t.get(&cellar_api::Get::new("heavy")).unwrap_err();
    assert_eq!(e.kind(), cellar_api::ErrorKind::RowTooBig);
    assert!(t.scan(&Scan::new()).unwrap().any(|r| r.is_err()));
    use cellar::Connection as _;
    let log = db.connection().large_responses().unwrap();
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log
        .iter()
        .all(|e| e.kind == "RowTooBigException" && e.row == b"heavy"));
    assert_eq!(log[0].op, "Scan");
    assert_eq!(log[1].op, "Get");
    assert!(
        log[1]
            .advice
            .contains("hbase.table.max.rowsize (3000 bytes)"),
        "{log:?}"
    );
}

/// Through a server: AdminService GetLogEntries carries the large-response log, and
/// `cellar shell --connect` lists it with the row, the request's shape and the fix.
#[test]
fn the_large_response_log_through_a_server() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("cellar.toml"),
        "\"hbase.ipc.warn.response.size\" = 5000\n",
    )
    .unwrap();
    let server = common::server::ServerProcess::start(tmp.path());
    use cellar::Connection as _;
    let conn = cellar::client::RemoteConnection::connect(&server.addr).unwrap();
    conn.admin()
        .create_table(
            TableDescriptor::new("inbox").with_family(FamilyDescriptor::new("m")),
            vec![],
        )
        .unwrap();
    let t = conn.table("inbox").unwrap();
    for i in 0..100 {
        t.put(Put::new("heavy").add_column("m", format!("q{i:03}").as_str(), vec![b'x'; 100]))
            .unwrap();
    }
    t.get(&cellar_api::Get::new("heavy").add_column("m", "q001"))
        .unwrap();
    t.get(&cellar_api::Get::new("heavy")).unwrap();
    let log = conn.large_responses().unwrap();
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!(
        (log[0].op, log[0].row.as_slice()),
        ("Get", b"heavy".as_slice())
    );
    assert_eq!(log[0].table, "inbox");
    assert_eq!(log[0].cells, 100);
    assert!(log[0].shape.contains("unrestricted Get"), "{log:?}");
    let out = common::server::run_shell(&["--connect", &server.addr], "get_largelog_responses\n");
    assert!(out.contains(" responseTooLarge Get table=inbox "), "{out}");
    assert!(
        out.contains("row=heavy") && out.contains("ColumnPaginationFilter"),
        "{out}"
    );
    assert!(out.contains("1 row(s)"), "{out}");
}

/// A scanned row is logged when its cells' bytes pass `hbase.ipc.warn.response.size`
/// by one byte, and not when they are exactly at it (the scanner's quick test on the
/// bytes its stores counted must not drop a row the exact size logs).
#[test]
fn a_scanned_row_is_logged_one_byte_past_the_size_threshold() {
    fn open(size_bytes: u64) -> Database {
        let opts = Options {
            fs: Arc::new(MemoryFs::new()),
            clock: Arc::new(ManualClock::new(T0)),
            executor: Arc::new(cellar_io::Threads),
            config: Config {
                large_log: cellar_region::large_log::LargeLogConfig {
                    size_bytes,
                    time_ms: 60_000,
                    capacity: 8,
                },
                ..Config::default()
            },
            background: false,
            lock: false,
        };
        let db = Database::open_with(Path::new("/db"), opts).unwrap();
        db.create_table(
            TableDescriptor::new("t")
                .with_family(FamilyDescriptor::new("a"))
                .with_family(FamilyDescriptor::new("b")),
        )
        .unwrap();
        let t = db.table("t").unwrap();
        for i in 0..20 {
            let q = format!("q{i:02}");
            t.put(
                Put::new("wide")
                    .add_column("a", q.as_str(), vec![b'x'; 90])
                    .add_column("b", q.as_str(), vec![b'y'; 10]),
            )
            .unwrap();
        }
        t.put(Put::new("narrow").add_column("a", "q", vec![b'z'; 5]))
            .unwrap();
        db
    }
    let probe = open(u64::MAX);
    let wide = probe
        .table("t")
        .unwrap()
        .get(&cellar_api::Get::new("wide"))
        .unwrap();
    assert_eq!(wide.cells.len(), 40);
    let exact: u64 = wide
        .cells
        .iter()
        .map(cellar_region::row_sizes::cell_bytes)
        .sum();
    use cellar::Connection as _;
    for (threshold, logged) in [(exact - 1, true), (exact, false)] {
        let db = open(threshold);
        let n = db.table("t").unwrap().scan(&Scan::new()).unwrap().count();
        assert_eq!(n, 2);
        let log = db.connection().large_responses().unwrap();
        assert_eq!(
            log.len(),
            usize::from(logged),
            "threshold {threshold}: {log:?}"
        );
        if logged {
            assert_eq!((log[0].row.as_slice(), log[0].bytes), (&b"wide"[..], exact));
            assert_eq!(log[0].cells, 40);
        }
    }
}
