#![allow(clippy::unwrap_used)]
//! Hot regions: writes whose keys grow (a timestamp first) all land in a table's last
//! region; the shell's `hotspots`, `/metrics` and the status page's alarms name it, say
//! the keys are monotonic and advise leading with an entity id or salting. Evenly
//! spread keys raise nothing.

mod common;

use cellar::Connection as _;
use cellar_api::{FamilyDescriptor, Put, TableDescriptor};

use common::server::http_get;

#[test]
fn monotonic_keys_make_the_last_region_hot() {
    let tmp = tempfile::tempdir().unwrap();
    let server = common::server::ServerProcess::start(tmp.path());
    let conn = cellar::client::RemoteConnection::connect(&server.addr).unwrap();
    let admin = conn.admin();
    for (t, splits) in [("events", ["1700", "1790"]), ("spread", ["3", "6"])] {
        admin
            .create_table(
                TableDescriptor::new(t).with_family(FamilyDescriptor::new("d")),
                splits.iter().map(|s| s.as_bytes().to_vec()).collect(),
            )
            .unwrap();
    }
    let events = conn.table("events").unwrap();
    let spread = conn.table("spread").unwrap();
    for i in 0..1200u64 {
        // A timestamp first: every key is past the last split.
        let ts = 1_795_132_800_000u64 + i;
        events
            .put(Put::new(format!("{ts}")).add_column("d", "v", "x"))
            .unwrap();
        spread
            .put(Put::new(format!("{}-{i}", i % 9)).add_column("d", "v", "x"))
            .unwrap();
    }
    let out = common::server::run_shell(
        &["--connect", &server.addr],
        "hotspots\nhotspots 'spread'\n",
    );
    let line = out
        .lines()
        .find(|l| l.starts_with(" events region="))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        line.contains("[1790, ) requests=1200 share=100% writes=100% monotonic keys"),
        "{line}"
    );
    assert!(
        line.contains("lead the key with an entity id, or salt it"),
        "{line}"
    );
    assert!(!out.contains(" spread region="), "{out}");
    assert!(
        out.contains("1 row(s)") && out.contains("0 row(s)"),
        "{out}"
    );

    let info = server.info.clone().unwrap();
    let metrics = http_get(&info, "/metrics");
    assert!(
        metrics.contains("cellar_hot_region_share{namespace=\"default\",table=\"events\","),
        "{metrics}"
    );
    assert!(metrics.contains("monotonic=\"true\"} 1"), "{metrics}");
    assert!(
        !metrics.contains("cellar_hot_region_share{namespace=\"default\",table=\"spread\""),
        "{metrics}"
    );
    let page = http_get(&info, "/");
    assert!(
        page.contains("hot region: 100% of the table&#39;s requests"),
        "{page}"
    );
}

/// A queue kept as a wide row: items appended then deleted as they are taken leave
/// their delete markers for every read to skip; the row is reported with its marker
/// count and the advice to use a family TTL, in the shell, `/metrics` and the page.
#[test]
fn a_queue_row_full_of_delete_markers_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("cellar.toml"),
        "\"cellar.tombstone.warn.cells\" = 100\n",
    )
    .unwrap();
    let server = common::server::ServerProcess::start(tmp.path());
    let conn = cellar::client::RemoteConnection::connect(&server.addr).unwrap();
    conn.admin()
        .create_table(
            TableDescriptor::new("jobs").with_family(FamilyDescriptor::new("q")),
            vec![],
        )
        .unwrap();
    let t = conn.table("jobs").unwrap();
    for i in 0..300 {
        let item = format!("{i:06}");
        t.put(Put::new("queue").add_column("q", item.as_str(), "job"))
            .unwrap();
        if i < 250 {
            t.delete(cellar_api::Delete::new("queue").add_columns("q", item.as_str()))
                .unwrap();
        }
    }
    for i in 0..50 {
        t.put(Put::new(format!("other{i}")).add_column("q", "x", "y"))
            .unwrap();
    }
    // The flush keeps the 250 markers and the 50 items still queued (the items
    // deleted are dropped, as HBase's flush drops what a marker masks).
    conn.admin().flush("jobs").unwrap();
    let out = common::server::run_shell(&["--connect", &server.addr], "hotspots 'jobs'\n");
    assert!(
        out.contains(" jobs row=queue tombstones: 250 delete markers of 300 cells: "),
        "{out}"
    );
    assert!(out.contains("give the family a TTL"), "{out}");
    assert!(!out.contains("row=other"), "{out}");
    let info = server.info.clone().unwrap();
    let metrics = http_get(&info, "/metrics");
    assert!(
        metrics.contains("cellar_tombstone_rows{namespace=\"default\",table=\"jobs\"} 1"),
        "{metrics}"
    );
    let page = http_get(&info, "/");
    assert!(page.contains("<h2 id=\"tombstones\">"), "{page}");
    assert!(
        page.contains("<td>queue</td><td class=n>250</td>"),
        "{page}"
    );
}

/// A family keeping 100 versions while reads ask for the latest: reported (embedded)
/// with what is kept, what is read and the advice; a family whose reads ask for its
/// versions is not.
#[test]
fn versions_kept_but_never_read_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let mut o = cellar::Options::for_dir(tmp.path()).unwrap();
    o.background = false;
    let db = cellar::Database::open_with(tmp.path(), o).unwrap();
    let mut prices = FamilyDescriptor::new("p");
    prices.versions = 100;
    let mut audit = FamilyDescriptor::new("a");
    audit.versions = 100;
    db.create_table(
        TableDescriptor::new("quotes")
            .with_family(prices)
            .with_family(audit),
    )
    .unwrap();
    let t = db.table("quotes").unwrap();
    for v in 0..50i64 {
        for c in 0..5 {
            t.put(
                Put::new("ACME")
                    .add_column_at("p", format!("c{c}").as_str(), 1000 + v, "1.0")
                    .add_column_at("a", format!("c{c}").as_str(), 1000 + v, "x"),
            )
            .unwrap();
        }
    }
    db.flush("quotes").unwrap();
    t.get(&cellar_api::Get::new("ACME").add_family("p"))
        .unwrap();
    t.get(
        &cellar_api::Get::new("ACME")
            .add_family("a")
            .max_versions(50),
    )
    .unwrap();
    let waste = db.connection().version_waste().unwrap();
    assert_eq!(waste.len(), 1, "{waste:?}");
    assert_eq!(
        (
            waste[0].family.as_slice(),
            waste[0].stored,
            waste[0].asked,
            waste[0].configured
        ),
        (b"p".as_slice(), 50, 1, 100)
    );
    let mut out = Vec::new();
    let mut shell = cellar::shell::Shell::new(db, &mut out);
    shell.execute("hotspots 'quotes'").unwrap();
    drop(shell);
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains(
            " quotes family=p versions: up to 50 kept (VERSIONS => 100), reads ask for 1: "
        ),
        "{text}"
    );
    assert!(text.contains("VERSIONS => 1}"), "{text}");
}

/// A counter many threads increment at once: writers wait for its row lock, and the
/// row is reported hot (embedded) with its waits and the advice to shard it.
#[test]
fn a_contended_counter_is_a_hot_row() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("cellar.toml"),
        "\"cellar.hotrow.waits\" = 1\n",
    )
    .unwrap();
    let mut o = cellar::Options::for_dir(tmp.path()).unwrap();
    o.background = false;
    let db = cellar::Database::open_with(tmp.path(), o).unwrap();
    db.create_table(TableDescriptor::new("stats").with_family(FamilyDescriptor::new("c")))
        .unwrap();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                let t = db.table("stats").unwrap();
                for _ in 0..300 {
                    t.increment(cellar_api::Increment::new("page-views").add_column("c", "n", 1))
                        .unwrap();
                }
            });
        }
    });
    let t = db.table("stats").unwrap();
    let r = t.get(&cellar_api::Get::new("page-views")).unwrap();
    assert_eq!(r.value(b"c", b"n"), Some(2400i64.to_be_bytes().as_slice()));
    let hot = db.connection().hot_rows().unwrap();
    assert_eq!(hot.len(), 1, "{hot:?}");
    assert_eq!(hot[0].row, b"page-views");
    assert!(hot[0].contention.waits > 0);
    let mut out = Vec::new();
    let mut shell = cellar::shell::Shell::new(db, &mut out);
    shell.execute("hotspots").unwrap();
    drop(shell);
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains(" stats row=page-views hot row: "), "{text}");
    assert!(text.contains("sharded counter"), "{text}");
}

/// Through a server: `cellar shell --connect` asks every server for its hot rows and
/// unread versions (Cellar's log class over AdminService GetLogEntries).
#[test]
fn unread_versions_through_a_server() {
    let tmp = tempfile::tempdir().unwrap();
    let server = common::server::ServerProcess::start(tmp.path());
    let conn = cellar::client::RemoteConnection::connect(&server.addr).unwrap();
    let mut prices = FamilyDescriptor::new("p");
    prices.versions = 100;
    conn.admin()
        .create_table(TableDescriptor::new("quotes").with_family(prices), vec![])
        .unwrap();
    let t = conn.table("quotes").unwrap();
    for v in 0..30i64 {
        t.put(Put::new("ACME").add_column_at("p", "bid", 1000 + v, "1.0"))
            .unwrap();
    }
    conn.admin().flush("quotes").unwrap();
    t.get(&cellar_api::Get::new("ACME")).unwrap();
    let waste = conn.version_waste().unwrap();
    assert_eq!(waste.len(), 1, "{waste:?}");
    assert_eq!((waste[0].stored, waste[0].asked), (30, 1));
    let out = common::server::run_shell(&["--connect", &server.addr], "hotspots 'quotes'\n");
    assert!(
        out.contains(
            " quotes family=p versions: up to 30 kept (VERSIONS => 100), reads ask for 1: "
        ),
        "{out}"
    );
}
