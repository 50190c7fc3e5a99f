#![allow(clippy::unwrap_used, clippy::disallowed_methods)] // drives a server process and raw sockets in real time
//! The protocol's rules at a real server: scanner leases, `next_call_seq`, scans that
//! outlive a split or a merge, nonces, many clients at once, and bad input of every
//! kind — each answered with an exception or a closed connection, while everyone else
//! keeps being served.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use bytes::Bytes;
use cellar_api::{ErrorKind, FamilyDescriptor, Get, Increment, Put, Scan, TableDescriptor};
use cellar_client::{pb, service, ClientConfig, Connection};
use cellar_protocol::cell_block::{BlockReader, Codec};
use cellar_protocol::convert::{mutation_to_pb, result_from_pb, scan_to_pb};
use cellar_protocol::frame::{self, Request, Response};
use common::server::ServerProcess;

fn config(dir: &std::path::Path, toml: &str) {
    std::fs::write(dir.join("cellar.toml"), toml).unwrap();
}

async fn connect(server: &ServerProcess) -> Connection {
    let cfg = ClientConfig {
        retries: 3,
        pause: Duration::from_millis(20),
        ..ClientConfig::default()
    };
    Connection::connect_with(&server.addr, cfg).await.unwrap()
}

async fn filled(conn: &Connection, rows: usize, splits: Vec<Vec<u8>>) {
    conn.admin()
        .create_table(
            TableDescriptor::new("t").with_family(FamilyDescriptor::new("f")),
            splits,
        )
        .await
        .unwrap();
    let t = conn.table("t");
    let puts: Vec<_> = (0..rows)
        .map(|i| {
            Put::new(format!("row{i:04}"))
                .add_column("f", "q", format!("{i}"))
                .into()
        })
        .collect();
    assert!(t.batch(&puts).await.iter().all(|r| r.is_ok()));
}

fn open_scan(loc: &cellar_client::RegionLocation, rows: u32) -> pb::ScanRequest {
    pb::ScanRequest {
        region: Some(loc.specifier()),
        scan: Some(scan_to_pb(&Scan::new())),
        number_of_rows: Some(rows),
        ..Default::default()
    }
}

fn next_scan(id: u64, seq: u64) -> pb::ScanRequest {
    pb::ScanRequest {
        scanner_id: Some(id),
        number_of_rows: Some(1),
        next_call_seq: Some(seq),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scanner_leases_and_call_sequence() {
    let dir = tempfile::tempdir().unwrap();
    config(
        dir.path(),
        "\"hbase.client.scanner.timeout.period\" = 1000\n",
    );
    let server = ServerProcess::start(dir.path());
    let conn = connect(&server).await;
    filled(&conn, 20, vec![]).await;
    let loc = conn.locate("t", b"", false).await.unwrap();

    // In order: 0, 1, ... (the opening call does not count).
    let (r, _): (pb::ScanResponse, _) = conn
        .call_raw(&loc.server, service::CLIENT, "Scan", &open_scan(&loc, 1))
        .await
        .unwrap();
    let id = r.scanner_id.unwrap();
    assert_eq!(r.results.len() + r.cells_per_result.len(), 1);
    assert_eq!(r.ttl, Some(1000));
    let _: (pb::ScanResponse, _) = conn
        .call_raw(&loc.server, service::CLIENT, "Scan", &next_scan(id, 0))
        .await
        .unwrap();
    let _: (pb::ScanResponse, _) = conn
        .call_raw(&loc.server, service::CLIENT, "Scan", &next_scan(id, 1))
        .await
        .unwrap();
    // A repeated call (a retry of one whose answer was lost) is refused.
    let e = conn
        .call_raw::<_, pb::ScanResponse>(&loc.server, service::CLIENT, "Scan", &next_scan(id, 1))
        .await
        .unwrap_err();
    assert_eq!(
        e.kind(),
        ErrorKind::UnknownScanner,
        "OutOfOrderScannerNextException: {e}"
    );
    assert!(e.message().contains("nextCallSeq"), "{e}");

    // A lease not renewed within the timeout expires.
    let (r, _): (pb::ScanResponse, _) = conn
        .call_raw(&loc.server, service::CLIENT, "Scan", &open_scan(&loc, 1))
        .await
        .unwrap();
    let id = r.scanner_id.unwrap();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let e = conn
        .call_raw::<_, pb::ScanResponse>(&loc.server, service::CLIENT, "Scan", &next_scan(id, 0))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::UnknownScanner, "{e}");

    // renew keeps a lease alive.
    let (r, _): (pb::ScanResponse, _) = conn
        .call_raw(&loc.server, service::CLIENT, "Scan", &open_scan(&loc, 1))
        .await
        .unwrap();
    let id = r.scanner_id.unwrap();
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(600)).await;
        let renew = pb::ScanRequest {
            scanner_id: Some(id),
            renew: Some(true),
            ..Default::default()
        };
        let _: (pb::ScanResponse, _) = conn
            .call_raw(&loc.server, service::CLIENT, "Scan", &renew)
            .await
            .unwrap();
    }
    let _: (pb::ScanResponse, _) = conn
        .call_raw(&loc.server, service::CLIENT, "Scan", &next_scan(id, 0))
        .await
        .unwrap();

    // The client's scanner survives an expired lease: it reopens after the last row.
    let t = conn.table("t");
    let mut s = t.scan(&Scan::new().caching(3));
    let mut got = Vec::new();
    for _ in 0..5 {
        got.push(s.next().await.unwrap().unwrap().row);
    }
    tokio::time::sleep(Duration::from_millis(2500)).await;
    while let Some(r) = s.next().await {
        got.push(r.unwrap().row);
    }
    let want: Vec<Vec<u8>> = (0..20).map(|i| format!("row{i:04}").into_bytes()).collect();
    assert_eq!(got, want, "nothing lost or repeated");
    assert_eq!(server.stop(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scans_continue_across_splits_and_merges() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(dir.path());
    let conn = connect(&server).await;
    filled(&conn, 300, vec![]).await;
    let admin = conn.admin();
    admin.flush("t").await.unwrap();
    let want: Vec<Vec<u8>> = (0..300)
        .map(|i| format!("row{i:04}").into_bytes())
        .collect();
    let t = conn.table("t");

    // Split ahead of and behind a running scan.
    let mut s = t.scan(&Scan::new().caching(7));
    let mut got = Vec::new();
    for _ in 0..50 {
        got.push(s.next().await.unwrap().unwrap().row);
    }
    assert_eq!(admin.split("t", Some(b"row0150")).await.unwrap(), 1);
    // A daughter splits again once compacted: it refuses while it holds references to
    // its parent's files, as in HBase (unless the compaction a split asks for its
    // daughters has run already).
    if let Err(e) = admin.split("t", Some(b"row0020")).await {
        assert_eq!(e.kind(), ErrorKind::InvalidRequest, "{e}");
        admin.compact("t", true).await.unwrap();
        assert_eq!(admin.split("t", Some(b"row0020")).await.unwrap(), 1);
    }
    while let Some(r) = s.next().await {
        got.push(r.unwrap().row);
    }
    assert_eq!(got, want, "forward scan across splits");
    assert_eq!(conn.regions("t").await.unwrap().len(), 3);

    // A reversed scan across the new boundaries, and a merge under it.
    let mut s = t.scan(&Scan::new().reversed(true).caching(5));
    let mut got = Vec::new();
    for _ in 0..40 {
        got.push(s.next().await.unwrap().unwrap().row);
    }
    // Daughters hold references to their parent's files until compacted; HBase merges
    // only regions without references, and so does Cellar.
    admin.compact("t", true).await.unwrap();
    let regions = conn.regions("t").await.unwrap();
    admin
        .merge_regions(&regions[0].info.encoded, &regions[1].info.encoded)
        .await
        .unwrap();
    while let Some(r) = s.next().await {
        got.push(r.unwrap().row);
    }
    got.reverse();
    assert_eq!(got, want, "reversed scan across a merge");
    assert_eq!(conn.regions("t").await.unwrap().len(), 2);

    // Cached locations of split parents are dropped on NotServingRegion.
    for i in (0..300).step_by(13) {
        let r = t.get(&Get::new(format!("row{i:04}"))).await.unwrap();
        assert_eq!(r.value(b"f", b"q"), Some(format!("{i}").as_bytes()));
    }
    assert_eq!(server.stop(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_increment_counts_once() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(dir.path());
    let conn = connect(&server).await;
    filled(&conn, 1, vec![]).await;
    let loc = conn.locate("t", b"n", false).await.unwrap();
    let inc = Increment::new("n").add_column("f", "c", 1).into();
    let req = |nonce: u64| pb::MutateRequest {
        region: loc.specifier(),
        mutation: mutation_to_pb(&inc, Some(nonce)),
        condition: None,
        nonce_group: Some(77),
    };
    for _ in 0..3 {
        let (r, block): (pb::MutateResponse, _) = conn
            .call_raw(&loc.server, service::CLIENT, "Mutate", &req(1234))
            .await
            .unwrap();
        let mut reader = BlockReader::new(Codec::KeyValue, block);
        let r = result_from_pb(&r.result.unwrap(), Some(&mut reader)).unwrap();
        assert_eq!(
            r.value(b"f", b"c"),
            Some(&1i64.to_be_bytes()[..]),
            "the first answer, again"
        );
    }
    let (_, _): (pb::MutateResponse, _) = conn
        .call_raw(&loc.server, service::CLIENT, "Mutate", &req(1235))
        .await
        .unwrap();
    let v = conn.table("t").get(&Get::new("n")).await.unwrap();
    assert_eq!(
        v.value(b"f", b"c"),
        Some(&2i64.to_be_bytes()[..]),
        "two distinct increments"
    );
    assert_eq!(server.stop(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixty_four_clients_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(dir.path());
    let conn = connect(&server).await;
    filled(&conn, 0, vec![b"c20".to_vec(), b"c40".to_vec()]).await;
    let mut tasks = Vec::new();
    for c in 0..64 {
        let addr = server.addr.clone();
        tasks.push(tokio::spawn(async move {
            let conn = Connection::connect(&addr).await.unwrap();
            let t = conn.table("t");
            for i in 0..20 {
                t.put(Put::new(format!("c{c:02}-{i:02}")).add_column("f", "q", format!("{c}/{i}")))
                    .await
                    .unwrap();
                t.increment(Increment::new("counter").add_column("f", "n", 1))
                    .await
                    .unwrap();
            }
            for i in 0..20 {
                let r = t.get(&Get::new(format!("c{c:02}-{i:02}"))).await.unwrap();
                assert_eq!(r.value(b"f", b"q"), Some(format!("{c}/{i}").as_bytes()));
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let t = conn.table("t");
    let all = t.scan(&Scan::new()).collect().await.unwrap();
    assert_eq!(all.len(), 64 * 20 + 1);
    let n = t.get(&Get::new("counter")).await.unwrap();
    assert_eq!(n.value(b"f", b"n"), Some(&(64i64 * 20).to_be_bytes()[..]));
    assert_eq!(server.stop(), Some(0));
}

/// A raw connection: preamble, header, then whatever the test writes.
fn raw(addr: &str, service: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let header = pb::ConnectionHeader {
        user_info: Some(pb::UserInformation {
            effective_user: "test".into(),
            real_user: None,
        }),
        service_name: Some(service.into()),
        ..Default::default()
    };
    let mut hello = frame::preamble().to_vec();
    hello.extend_from_slice(&frame::encode_connection_header(&header));
    s.write_all(&hello).unwrap();
    s
}

/// Reads one response frame; `None` when the server closed the connection.
fn read_response(s: &mut TcpStream) -> Option<Response> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).ok()?;
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    s.read_exact(&mut body).ok()?;
    Response::decode(Bytes::from(body)).ok()
}

fn closed(s: &mut TcpStream) -> bool {
    let mut b = [0u8; 1];
    matches!(s.read(&mut b), Ok(0) | Err(_))
}

fn class(r: &Response) -> String {
    r.header
        .exception
        .as_ref()
        .and_then(|e| e.exception_class_name.clone())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_fails_one_call_or_one_connection() {
    let dir = tempfile::tempdir().unwrap();
    config(dir.path(), "\"hbase.ipc.max.request.size\" = 65536\n");
    let server = ServerProcess::start(dir.path());
    let conn = connect(&server).await;
    filled(&conn, 10, vec![]).await;
    let addr = server.addr.clone();
    let ok = |conn: Connection| async move {
        let r = conn.table("t").get(&Get::new("row0003")).await.unwrap();
        assert_eq!(
            r.value(b"f", b"q"),
            Some(&b"3"[..]),
            "others keep being served"
        );
    };

    tokio::task::spawn_blocking(move || {
        // A garbage preamble: a fatal exception (call id -1), then the connection closes.
        let mut s = TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        let r = read_response(&mut s).expect("an exception frame");
        assert_eq!(r.header.call_id, Some(u32::MAX));
        assert_eq!(
            class(&r),
            "org.apache.hadoop.hbase.ipc.FatalConnectionException"
        );
        assert!(closed(&mut s));

        // A wrong version or auth byte.
        let mut s = TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(b"HBas\x00\x51").unwrap();
        let r = read_response(&mut s).expect("an exception frame");
        assert!(class(&r).ends_with("FatalConnectionException"));

        // A service that does not exist.
        let mut s = raw(&addr, "NoSuchService");
        let r = read_response(&mut s).expect("an exception frame");
        assert!(format!("{:?}", r.header.exception).contains("Unknown service"));
        assert!(closed(&mut s));

        // An unknown method: an exception for the call; the connection stays usable.
        let mut s = raw(&addr, service::CLIENT);
        s.write_all(&Request::encode(1, "NoSuchMethod", &pb::Empty {}, &[]))
            .unwrap();
        let r = read_response(&mut s).unwrap();
        assert_eq!(r.header.call_id, Some(1));
        assert_eq!(class(&r), "org.apache.hadoop.hbase.DoNotRetryIOException");
        assert_eq!(
            r.header.exception.as_ref().and_then(|e| e.do_not_retry),
            Some(true)
        );
        // A parameter that is not the message it should be.
        let mut bad = Request::encode(2, "Get", &pb::Empty {}, &[]);
        bad.truncate(bad.len());
        s.write_all(&bad).unwrap();
        let r = read_response(&mut s).unwrap();
        assert_eq!(r.header.call_id, Some(2));
        assert!(
            r.header.exception.is_some(),
            "a Get without its fields is refused"
        );
        // A frame whose parameter length runs past its end: that call fails.
        let header = pb::RequestHeader {
            call_id: Some(3),
            method_name: Some("Get".into()),
            request_param: Some(true),
            ..Default::default()
        };
        let mut body = Vec::new();
        prost::Message::encode_length_delimited(&header, &mut body).unwrap();
        body.extend_from_slice(&[0xC2, 0x92, 0x01, 0x0a]);
        let mut f = (body.len() as u32).to_be_bytes().to_vec();
        f.extend_from_slice(&body);
        s.write_all(&f).unwrap();
        let r = read_response(&mut s).unwrap();
        assert_eq!(r.header.call_id, Some(3));
        assert!(format!("{:?}", r.header.exception).contains("unable to read call parameter"));
        // ... and the connection still answers.
        s.write_all(&Request::encode(4, "NoSuchMethod", &pb::Empty {}, &[]))
            .unwrap();
        assert_eq!(read_response(&mut s).unwrap().header.call_id, Some(4));

        // A request over hbase.ipc.max.request.size: RequestTooBigException, then closed.
        let mut s = raw(&addr, service::CLIENT);
        let big = pb::GetRequest {
            region: pb::RegionSpecifier {
                r#type: 1,
                value: Bytes::from(vec![b'x'; 100_000]),
            },
            get: pb::Get::default(),
        };
        s.write_all(&Request::encode(9, "Get", &big, &[])).unwrap();
        let r = read_response(&mut s).expect("an exception frame");
        assert_eq!(r.header.call_id, Some(9));
        assert_eq!(
            class(&r),
            "org.apache.hadoop.hbase.exceptions.RequestTooBigException"
        );
        assert!(closed(&mut s));

        // A truncated frame, then the client goes away.
        let mut s = raw(&addr, service::CLIENT);
        s.write_all(&[0, 0, 1, 0, 1, 2, 3]).unwrap();
        drop(s);
        // Garbage where a header belongs: the connection closes.
        let mut s = raw(&addr, service::CLIENT);
        s.write_all(&[0, 0, 0, 3, 0xff, 0xff, 0xff]).unwrap();
        assert!(closed(&mut s));
    })
    .await
    .unwrap();
    ok(conn.clone()).await;
    // A client-side oversized request is refused before it is sent; the server-side
    // limit answers what a client does not check.
    let e = conn
        .table("t")
        .put(Put::new("r").add_column("f", "q", vec![0u8; 100_000]))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRequest, "{e}");
    ok(connect(&server).await).await;
    assert_eq!(server.stop(), Some(0));
}

/// HBase's time-limited scans: a call that finds nothing for longer than its time limit
/// answers with a heartbeat, and, for a scan that asked for cursors, the row it reached;
/// the scan then goes on and finds what matches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_and_cursors_on_long_empty_scans() {
    let dir = tempfile::tempdir().unwrap();
    config(dir.path(), "\"cellar.server.scanner.time.limit\" = 1\n");
    let server = ServerProcess::start(dir.path());
    let conn = connect(&server).await;
    filled(&conn, 3000, vec![]).await;
    let t = conn.table("t");
    // Only the last row matches: most calls find nothing within 1 ms.
    let only_last = cellar_api::FilterSpec::Value(
        cellar_api::CompareOp::Equal,
        cellar_api::Comparator::Binary(b"2999".to_vec()),
    );
    let out = t
        .scan(
            &Scan::new()
                .filter(only_last.clone())
                .need_cursor_result(true),
        )
        .collect()
        .await
        .unwrap();
    let (cursors, rows): (Vec<_>, Vec<_>) = out.into_iter().partition(|r| r.cursor);
    assert_eq!(rows.len(), 1, "the one match, once");
    assert_eq!(rows[0].row, b"row2999");
    assert!(
        !cursors.is_empty(),
        "heartbeats with cursors while nothing matched"
    );
    assert!(cursors
        .iter()
        .all(|c| c.cells.is_empty() && c.row.as_slice() < b"row2999".as_slice()));
    assert!(
        cursors.windows(2).all(|w| w[0].row < w[1].row),
        "cursors move forward"
    );
    // Without cursors the heartbeats are invisible: just the match.
    let plain = t
        .scan(&Scan::new().filter(only_last))
        .collect()
        .await
        .unwrap();
    assert_eq!(plain.len(), 1);
    assert_eq!(server.stop(), Some(0));
}
