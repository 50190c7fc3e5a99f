#![allow(clippy::unwrap_used, clippy::disallowed_methods)] // drives processes in real time
//! The info port: `/metrics` parsed with a Prometheus text-format parser, the status page
//! loaded in headless Chromium (Debian's `chromium`; a screenshot is written to
//! `target/test-artifacts/status-page.png`), and a client that vanishes mid-scan having
//! its scanner closed.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use cellar_api::{FamilyDescriptor, Put, Scan, TableDescriptor};
use cellar_client::{pb, service, Connection};
use cellar_protocol::convert::scan_to_pb;
use cellar_protocol::frame::{self, Request};
use common::server::ServerProcess;

fn http_get(addr: &str, path: &str) -> (String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    (head.to_string(), body.to_string())
}

fn scrape(addr: &str) -> prometheus_parse::Scrape {
    let (head, body) = http_get(addr, "/metrics");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("text/plain; version=0.0.4"), "{head}");
    prometheus_parse::Scrape::parse(body.lines().map(|l| Ok(l.to_string()))).unwrap()
}

fn value(s: &prometheus_parse::Scrape, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    s.samples
        .iter()
        .find(|x| x.metric == name && labels.iter().all(|(k, v)| x.labels.get(k) == Some(*v)))
        .and_then(|x| match x.value {
            prometheus_parse::Value::Counter(v)
            | prometheus_parse::Value::Gauge(v)
            | prometheus_parse::Value::Untyped(v) => Some(v),
            _ => None,
        })
}

async fn fill(server: &ServerProcess) {
    let conn = Connection::connect(&server.addr).await.unwrap();
    let admin = conn.admin();
    admin
        .create_table(
            TableDescriptor::new("sensor").with_family(FamilyDescriptor::new("d")),
            vec![b"m".to_vec()],
        )
        .await
        .unwrap();
    let t = conn.table("sensor");
    let puts: Vec<_> = (0..200)
        .map(|i| {
            // Rows on both sides of the split at "m".
            let side = if i % 2 == 0 { "a" } else { "s" };
            Put::new(format!("{side}{:03}", i % 50))
                .add_column("d", format!("t{i:04}"), vec![b'x'; 64])
                .into()
        })
        .collect();
    assert!(t.batch(&puts).await.iter().all(|r| r.is_ok()));
    admin.flush("sensor").await.unwrap();
    let rows = t.scan(&Scan::new()).collect().await.unwrap();
    assert_eq!(rows.len(), 50);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_parse_and_count() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(dir.path());
    let info = server.info.clone().unwrap();
    fill(&server).await;
    let s = scrape(&info);
    let table = [("namespace", "default"), ("table", "sensor")];
    assert_eq!(
        value(&s, "hbase_regionserver_table_writeRequestCount", &table),
        Some(200.0)
    );
    assert_eq!(
        value(&s, "hbase_regionserver_table_storeFileCount", &table),
        Some(2.0)
    );
    assert!(value(&s, "hbase_regionserver_table_storeFileSize", &table).unwrap() > 200.0 * 64.0);
    assert_eq!(
        value(&s, "hbase_regionserver_table_memStoreSize", &table),
        Some(0.0)
    );
    let regions: Vec<_> = s
        .samples
        .iter()
        .filter(|x| {
            x.metric == "hbase_regionserver_region_flushesCount"
                && x.labels.get("table") == Some("sensor")
        })
        .collect();
    assert_eq!(regions.len(), 2);
    assert!(value(&s, "hbase_wal_appendCount", &[]).unwrap() >= 1.0);
    assert!(value(&s, "hbase_ipc_numCallsTotal", &[]).unwrap() > 3.0);
    // The scan after the flush read the two regions' files through the block cache.
    assert!(value(&s, "hbase_regionserver_blockCacheMissCount", &[]).unwrap() >= 2.0);
    assert!(value(&s, "hbase_regionserver_blockCacheCount", &[]).unwrap() >= 2.0);
    assert!(value(&s, "hbase_regionserver_blockCacheSize", &[]).unwrap() > 200.0 * 64.0);
    assert!(value(&s, "hbase_regionserver_blockCacheHitCount", &[]).is_some());
    let multi = s
        .samples
        .iter()
        .find(|x| x.metric == "hbase_regionserver_Multi_seconds")
        .unwrap();
    match &multi.value {
        prometheus_parse::Value::Histogram(buckets) => {
            assert!(buckets.last().unwrap().count >= 1.0, "{buckets:?}");
        }
        other => panic!("a histogram, not {other:?}"),
    }
    let (head, _) = http_get(&info, "/nope");
    assert!(head.starts_with("HTTP/1.1 404"));
    assert_eq!(server.stop(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vanished_client_has_its_scanner_closed() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(dir.path());
    let info = server.info.clone().unwrap();
    fill(&server).await;
    let conn = Connection::connect(&server.addr).await.unwrap();
    let loc = conn.locate("sensor", b"", false).await.unwrap();
    let addr = loc.server.clone();
    tokio::task::spawn_blocking(move || {
        let mut s = TcpStream::connect(&addr).unwrap();
        let header = pb::ConnectionHeader {
            user_info: Some(pb::UserInformation {
                effective_user: "t".into(),
                real_user: None,
            }),
            service_name: Some(service::CLIENT.into()),
            ..Default::default()
        };
        let mut hello = frame::preamble().to_vec();
        hello.extend_from_slice(&frame::encode_connection_header(&header));
        s.write_all(&hello).unwrap();
        let req = pb::ScanRequest {
            region: Some(loc.specifier()),
            scan: Some(scan_to_pb(&Scan::new())),
            number_of_rows: Some(1),
            ..Default::default()
        };
        s.write_all(&Request::encode(1, "Scan", &req, &[])).unwrap();
        let mut len = [0u8; 4];
        s.read_exact(&mut len).unwrap();
        let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
        s.read_exact(&mut body).unwrap();
        let resp = cellar_protocol::frame::Response::decode(bytes::Bytes::from(body)).unwrap();
        assert!(
            resp.header.exception.is_none(),
            "{:?}",
            resp.header.exception
        );
        let open = value(&scrape(&info), "hbase_regionserver_openScanners", &[]);
        assert_eq!(open, Some(1.0), "the scan is open");
        drop(s);
        for _ in 0..100 {
            if value(&scrape(&info), "hbase_regionserver_openScanners", &[]) == Some(0.0) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the scanner of a departed client stayed open");
    })
    .await
    .unwrap();
    assert_eq!(server.stop(), Some(0));
}

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|c| {
            let p = Path::new("/usr/bin").join(c);
            p.exists().then_some(p)
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_page_in_headless_chromium() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var("CELLAR_REQUIRE_COMPAT").as_deref() != Ok("1"),
            "chromium is missing and CELLAR_REQUIRE_COMPAT=1"
        );
        eprintln!("skipped: no chromium");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(dir.path());
    let info = server.info.clone().unwrap();
    fill(&server).await;
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    let shot = artifacts.join("status-page.png");
    let _ = std::fs::remove_file(&shot);
    let profile = tempfile::tempdir().unwrap();
    let common = |c: &mut Command| {
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()));
    };
    let mut dom = Command::new(&browser);
    common(&mut dom);
    let out = dom
        .arg("--dump-dom")
        .arg(format!("http://{info}/"))
        .output()
        .unwrap();
    let html = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(html.contains("<h2 id=\"tables\">Tables</h2>"), "{html}");
    assert!(
        html.contains("<td>sensor</td>"),
        "the table just created: {html}"
    );
    assert!(html.contains("Largest rows"), "{html}");
    assert!(
        html.contains("<td>s0") || html.contains("<td>a0"),
        "a row of the flushed table among the largest: {html}"
    );
    let mut png = Command::new(&browser);
    common(&mut png);
    let out = png
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1280,1024")
        .arg(format!("http://{info}/"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&shot).unwrap();
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 5000,
        "a screenshot was written"
    );
    assert_eq!(server.stop(), Some(0));
}

/// A full call queue answers CallQueueTooBigException (retryable: the client backs off
/// and tries again), counted in `/metrics`; every call still completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_full_call_queue_refuses_and_clients_retry() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cellar.toml"),
        "\"hbase.ipc.server.max.callqueue.length\" = 1\n\"cellar.ipc.server.max.connection.calls\" = 1\n",
    )
    .unwrap();
    let server = ServerProcess::start(dir.path());
    let info = server.info.clone().unwrap();
    fill(&server).await;
    // Generous retries: with a queue of one, a call may be refused many times over.
    let cfg = cellar_client::ClientConfig {
        pause: Duration::from_millis(10),
        retries: 40,
        ..cellar_client::ClientConfig::default()
    };
    let conn = Connection::connect_with(&server.addr, cfg).await.unwrap();
    let mut tasks = Vec::new();
    for i in 0..32 {
        let t = conn.table("sensor");
        tasks.push(tokio::spawn(async move {
            t.put(Put::new(format!("q{i:02}")).add_column("d", "x", vec![b'y'; 2000]))
                .await
        }));
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    let refused = value(&scrape(&info), "hbase_ipc_exceptions_callQueueTooBig", &[]).unwrap();
    assert!(
        refused > 0.0,
        "64 concurrent calls on a queue of one: some were refused"
    );
    let rows = conn
        .table("sensor")
        .scan(&Scan::new().with_row_prefix(b"q".to_vec()))
        .collect()
        .await
        .unwrap();
    assert_eq!(rows.len(), 32);
    assert_eq!(server.stop(), Some(0));
}

/// The large rows on the status page, rendered by headless Chromium: the sortable table
/// with the tracked row, its size-over-time chart as inline SVG, and the alarm of the
/// region that cannot split linking to the row that keeps it whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_rows_on_the_status_page_in_headless_chromium() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var("CELLAR_REQUIRE_COMPAT").as_deref() != Ok("1"),
            "chromium is missing and CELLAR_REQUIRE_COMPAT=1"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cellar.toml"),
        "\"cellar.largerow.watch.bytes\" = 20000\n\"cellar.largerow.warn.bytes\" = 60000\n\"hbase.hregion.max.filesize\" = 50000\n",
    )
    .unwrap();
    let server = ServerProcess::start(dir.path());
    let info = server.info.clone().unwrap();
    let conn = Connection::connect(&server.addr).await.unwrap();
    let admin = conn.admin();
    admin
        .create_table(
            TableDescriptor::new("inbox").with_family(FamilyDescriptor::new("m")),
            vec![],
        )
        .await
        .unwrap();
    let t = conn.table("inbox");
    for round in 0..3 {
        for i in 0..300 {
            let q = format!("{round}-{i:05}");
            t.put(Put::new("heavy").add_column("m", q.as_str(), vec![b'x'; 100]))
                .await
                .unwrap();
        }
        admin.flush("inbox").await.unwrap();
    }
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("http://{info}/"))
        .output()
        .unwrap();
    let html = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        html.contains("<h2 id=\"large-rows\">Large rows</h2>"),
        "{html}"
    );
    assert!(html.contains("id=\"large-rows-table\""), "{html}");
    assert!(
        html.contains("onclick=\"lrSort(3)\""),
        "sortable headings: {html}"
    );
    let row = html
        .split("<tr id=\"large-row-0\">")
        .nth(1)
        .and_then(|r| r.split("</tr>").next())
        .unwrap_or_else(|| panic!("no tracked row: {html}"));
    assert!(row.contains("<td>inbox</td><td>heavy</td>"), "{row}");
    assert!(row.contains("<svg class=\"chart\""), "a chart: {row}");
    assert!(row.contains("<polyline"), "{row}");
    // The region over its split size with one row cannot split: its alarm links here.
    assert!(html.contains("href=\"#large-row-0\">heavy"), "{html}");
    assert_eq!(server.stop(), Some(0));
}
