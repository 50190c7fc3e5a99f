#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The Thrift1 gateway through raw Thrift clients: every transport and protocol on
//! one port, HBase's exceptions, scanner ids shared by connections and their leases,
//! and bad input (garbage, frames over the maximum, clients vanishing mid-scan) that
//! closes one connection while the others go on.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use cellar_thrift::{Struct, TType, Value};
use common::server::ServerProcess;
use common::thrift::{args, b, Answer, Client};

fn start(config: Option<&str>) -> (tempfile::TempDir, ServerProcess, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut extra = vec!["--thrift", "--thrift-port", "0"];
    let cfg = dir.path().join("thrift.toml");
    if let Some(c) = config {
        std::fs::write(&cfg, c).unwrap();
        extra.push("--config");
        extra.push(cfg.to_str().unwrap());
    }
    let server = ServerProcess::start_with(&dir.path().join("db"), &extra);
    let addr = server.thrift.clone().unwrap();
    (dir, server, addr)
}

fn create(c: &mut Client, table: &str) {
    let fam = Struct::new().with(1, b("cf:")).with(2, Value::I32(3));
    c.call(
        "createTable",
        args().with(1, b(table)).with(2, Value::structs([fam])),
    )
    .ok();
}

fn mutation(column: &str, value: &str) -> Struct {
    Struct::new()
        .with(1, Value::Bool(false))
        .with(2, b(column))
        .with(3, b(value))
        .with(4, Value::Bool(true))
}

fn put(c: &mut Client, table: &str, row: &str, column: &str, value: &str) {
    c.call(
        "mutateRow",
        args()
            .with(1, b(table))
            .with(2, b(row))
            .with(3, Value::structs([mutation(column, value)])),
    )
    .ok();
}

/// The rows of a list<TRowResult>: (row, [(column, value)]).
fn rows(v: Option<Value>) -> Vec<(String, Vec<(String, String)>)> {
    let list = v.unwrap();
    list.as_list()
        .unwrap()
        .iter()
        .map(|r| {
            let r = r.as_struct().unwrap();
            let cols = match r.map(2) {
                Some(m) => m
                    .iter()
                    .map(|(k, v)| {
                        (
                            String::from_utf8_lossy(k.as_bytes().unwrap()).into_owned(),
                            v.as_struct().unwrap().text(1).unwrap(),
                        )
                    })
                    .collect(),
                None => r
                    .struct_list(3)
                    .unwrap_or_default()
                    .iter()
                    .map(|c| (c.text(1).unwrap(), c.strukt(2).unwrap().text(1).unwrap()))
                    .collect(),
            };
            (r.text(1).unwrap(), cols)
        })
        .collect()
}

/// scannerGetList of up to `n` rows.
fn scanner_list(c: &mut Client, id: Value, n: i32) -> Vec<(String, Vec<(String, String)>)> {
    rows(
        c.call("scannerGetList", args().with(1, id).with(2, Value::I32(n)))
            .ok(),
    )
}

#[test]
fn every_transport_and_protocol_on_one_port() {
    let (_dir, _server, addr) = start(None);
    for (i, (framed, compact)) in [(false, false), (true, false), (false, true), (true, true)]
        .into_iter()
        .enumerate()
    {
        let mut c = Client::connect(&addr, framed, compact);
        let table = format!("t{i}");
        create(&mut c, &table);
        put(&mut c, &table, "r1", "cf:a", "v1");
        put(&mut c, &table, "r2", "cf:b", "v2");
        let got = rows(
            c.call(
                "getRowWithColumns",
                args()
                    .with(1, b(&table))
                    .with(2, b("r1"))
                    .with(3, Value::binaries([b"cf:a".to_vec()])),
            )
            .ok(),
        );
        assert_eq!(got, vec![("r1".into(), vec![("cf:a".into(), "v1".into())])]);
        let names = c.call("getTableNames", args()).ok().unwrap();
        assert!(names
            .as_list()
            .unwrap()
            .contains(&Value::binary(table.as_bytes().to_vec())));
        // A scan through scannerOpenWithScan with sorted columns.
        let scan = Struct::new().with(8, Value::Bool(true));
        let id = c
            .call(
                "scannerOpenWithScan",
                args().with(1, b(&table)).with(2, Value::Struct(scan)),
            )
            .ok()
            .unwrap()
            .as_i64()
            .unwrap();
        let got = scanner_list(&mut c, Value::I32(id as i32), 10);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[1], ("r2".into(), vec![("cf:b".into(), "v2".into())]));
        c.call("scannerClose", args().with(1, Value::I32(id as i32)))
            .ok();
    }
}

#[test]
fn unknown_methods_missing_arguments_and_exceptions() {
    let (_dir, _server, addr) = start(None);
    let mut c = Client::connect(&addr, false, false);
    match c.call("noSuchMethod", args()) {
        Answer::Application(kind, msg) => {
            assert_eq!(kind, 1, "UNKNOWN_METHOD");
            assert!(msg.contains("noSuchMethod"), "{msg}");
        }
        a => panic!("{a:?}"),
    }
    // The connection still serves after an unknown method.
    create(&mut c, "t");
    // A table that does not exist: IOError naming HBase's exception.
    let msg = c
        .call("getRow", args().with(1, b("nope")).with(2, b("r")))
        .exception(1);
    assert!(msg.contains("TableNotFoundException"), "{msg}");
    // Arguments left out: an IOError (get declares no IllegalArgument), not a crash.
    let msg = c.call("get", args()).exception(1);
    assert!(msg.contains("table name is required"), "{msg}");
    // createTable of a table that exists: AlreadyExists.
    let fam = Struct::new().with(1, b("cf:"));
    let msg = c
        .call(
            "createTable",
            args()
                .with(1, b("t"))
                .with(2, Value::structs([fam.clone()])),
        )
        .exception(3);
    assert!(msg.contains("already in use"), "{msg}");
    // A bad compression name: IllegalArgument.
    let bad = fam.with(3, b("NOPE"));
    let msg = c
        .call(
            "createTable",
            args().with(1, b("t2")).with(2, Value::structs([bad])),
        )
        .exception(2);
    assert!(msg.contains("compression"), "{msg}");
    // A filter string that does not parse names the problem.
    let scan = Struct::new().with(6, b("PrefixFilter('a'"));
    let msg = c
        .call(
            "scannerOpenWithScan",
            args().with(1, b("t")).with(2, Value::Struct(scan)),
        )
        .exception(1);
    assert!(msg.contains("filter string does not parse"), "{msg}");
    // An unknown scanner id: IllegalArgument.
    let msg = c
        .call("scannerGet", args().with(1, Value::I32(424242)))
        .exception(2);
    assert!(msg.contains("scanner ID is invalid"), "{msg}");
    // mutateRows with a put naming no qualifier: IllegalArgument.
    let batch = Struct::new()
        .with(1, b("r"))
        .with(2, Value::structs([mutation("cf", "v")]));
    let msg = c
        .call(
            "mutateRows",
            args().with(1, b("t")).with(2, Value::structs([batch])),
        )
        .exception(2);
    assert!(msg.contains("famAndQf"), "{msg}");
}

#[test]
fn scanner_ids_outlive_their_connection_and_leases_expire() {
    let (_dir, _server, addr) = start(Some("\"hbase.client.scanner.timeout.period\" = 1500\n"));
    let mut c = Client::connect(&addr, false, false);
    create(&mut c, "t");
    for i in 0..10 {
        put(&mut c, "t", &format!("r{i}"), "cf:q", "v");
    }
    let id = c
        .call(
            "scannerOpen",
            args()
                .with(1, b("t"))
                .with(2, b(""))
                .with(3, Value::List(TType::String, vec![])),
        )
        .ok()
        .unwrap();
    let got = scanner_list(&mut c, id.clone(), 3);
    assert_eq!(got.len(), 3);
    // The client vanishes mid-scan; another connection carries on with the same id.
    drop(c);
    let mut d = Client::connect(&addr, true, false);
    let got = scanner_list(&mut d, id.clone(), 100);
    assert_eq!(got.len(), 7);
    assert_eq!(got[0].0, "r3");
    assert!(rows(d.call("scannerGet", args().with(1, id.clone())).ok()).is_empty());
    // Idle past the scanner timeout: closed. (A real server process: real time.)
    #[allow(clippy::disallowed_methods)]
    std::thread::sleep(Duration::from_millis(2500));
    let msg = d.call("scannerGet", args().with(1, id)).exception(2);
    assert!(msg.contains("invalid"), "{msg}");
}

/// Whether the gateway closed the connection (a read ends or fails).
fn closed(mut s: TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 64];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            // It may answer a TApplicationException first.
            Ok(_) => continue,
            Err(e) => {
                return e.kind() != std::io::ErrorKind::WouldBlock
                    && e.kind() != std::io::ErrorKind::TimedOut
            }
        }
    }
}

#[test]
fn bad_input_closes_one_connection_and_the_others_go_on() {
    let (_dir, _server, addr) = start(Some(
        "\"hbase.regionserver.thrift.framed.max_frame_size_in_mb\" = 1\n",
    ));
    let mut good = Client::connect(&addr, true, true);
    create(&mut good, "t");
    put(&mut good, "t", "r", "cf:q", "v");

    // Garbage bytes.
    let mut g = TcpStream::connect(&addr).unwrap();
    g.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    assert!(closed(g), "garbage");
    // A strict binary header followed by garbage.
    let mut g = TcpStream::connect(&addr).unwrap();
    g.write_all(&[0x80, 0x01, 0x00, 0x01, 0xff, 0xff, 0xff, 0xf0, 1, 2, 3])
        .unwrap();
    assert!(closed(g), "bad header");
    // A frame over the configured maximum (1 MiB).
    let mut g = TcpStream::connect(&addr).unwrap();
    g.write_all(&(2u32 << 20).to_be_bytes()).unwrap();
    g.write_all(&[0x80, 0x01, 0, 1]).unwrap();
    assert!(closed(g), "oversize frame");
    // A message whose arguments nest without end.
    let mut c = Client::connect(&addr, false, false);
    let mut body = vec![0x80, 0x01, 0x00, 0x01, 0, 0, 0, 3];
    body.extend_from_slice(b"get");
    body.extend_from_slice(&[0, 0, 0, 1]);
    for _ in 0..5000 {
        body.extend_from_slice(&[12, 0, 1]);
    }
    c.send_raw(&body).unwrap();
    assert!(closed(c.stream.try_clone().unwrap()), "hostile nesting");
    // A client that connects and leaves, and one that sends half a message.
    drop(TcpStream::connect(&addr).unwrap());
    let mut half = TcpStream::connect(&addr).unwrap();
    half.write_all(&[0x80, 0x01, 0x00, 0x01, 0, 0]).unwrap();
    drop(half);

    // The first connection still serves, and new ones too.
    let got = rows(
        good.call("getRow", args().with(1, b("t")).with(2, b("r")))
            .ok(),
    );
    assert_eq!(got, vec![("r".into(), vec![("cf:q".into(), "v".into())])]);
    let mut fresh = Client::connect(&addr, false, true);
    assert!(fresh.call("isTableEnabled", args().with(1, b("t"))).ok() == Some(Value::Bool(true)));
    // A frame just under the maximum is served.
    let big = "x".repeat(900 * 1024);
    put(&mut good, "t", "big", "cf:q", &big);
    let got = rows(
        good.call("getRow", args().with(1, b("t")).with(2, b("big")))
            .ok(),
    );
    assert_eq!(got[0].1[0].1.len(), big.len());
}

fn cells_of(v: Option<Value>) -> Vec<(String, i64)> {
    v.unwrap()
        .as_list()
        .unwrap()
        .iter()
        .map(|c| {
            let c = c.as_struct().unwrap();
            (c.text(1).unwrap(), c.i64(2).unwrap())
        })
        .collect()
}

fn row_names(v: Option<Value>) -> Vec<String> {
    rows(v).into_iter().map(|(r, _)| r).collect()
}

/// The methods happybase does not call, each once.
#[test]
fn every_other_thrift1_method() {
    let (_dir, _server, addr) = start(None);
    let mut c = Client::connect(&addr, false, false);
    create(&mut c, "t");
    assert_eq!(
        c.call("getThriftServerType", args()).ok(),
        Some(Value::I32(1))
    );
    let id = c.call("getClusterId", args()).ok().unwrap();
    assert!(!id.as_bytes().unwrap().is_empty());
    let m = c
        .call("getTableNamesWithIsTableEnabled", args())
        .ok()
        .unwrap();
    assert_eq!(
        m,
        Value::Map(
            TType::String,
            TType::Bool,
            vec![(b("t"), Value::Bool(true))]
        )
    );
    let d = c
        .call("getColumnDescriptors", args().with(1, b("t")))
        .ok()
        .unwrap();
    let Value::Map(_, _, entries) = d else {
        panic!("{d:?}")
    };
    assert_eq!(entries[0].0, b("cf:"));
    assert_eq!(entries[0].1.as_struct().unwrap().i32(2), Some(3));
    let regions = c
        .call("getTableRegions", args().with(1, b("t")))
        .ok()
        .unwrap();
    assert_eq!(regions.as_list().unwrap().len(), 1);
    let none = c
        .call("getTableRegions", args().with(1, b("nope")))
        .ok()
        .unwrap();
    assert!(
        none.as_list().unwrap().is_empty(),
        "HBase: empty for a missing table"
    );
    let info = c
        .call("getRegionInfo", args().with(1, b("t,row,99999999999999")))
        .ok()
        .unwrap();
    let info = info.as_struct().unwrap();
    assert_eq!(info.bytes(1), Some(&b""[..]));
    assert!(info.text(4).unwrap().starts_with("t,,"), "{info:?}");
    let msg = c
        .call("getRegionInfo", args().with(1, b("nope,row,9")))
        .exception(1);
    assert!(msg.contains("Cannot find row"), "{msg}");

    // Writes with timestamps, reads of versions.
    let ts_put = |c: &mut Client, row: &str, v: &str, ts: i64| {
        c.call(
            "mutateRowTs",
            args()
                .with(1, b("t"))
                .with(2, b(row))
                .with(3, Value::structs([mutation("cf:q", v)]))
                .with(4, Value::I64(ts)),
        )
        .ok();
    };
    ts_put(&mut c, "a", "v10", 10);
    ts_put(&mut c, "a", "v20", 20);
    ts_put(&mut c, "a", "v30", 30);
    let get = |c: &mut Client, m: &str, a: Struct| cells_of(c.call(m, a).ok());
    assert_eq!(
        get(
            &mut c,
            "get",
            args().with(1, b("t")).with(2, b("a")).with(3, b("cf:q"))
        ),
        vec![("v30".into(), 30)]
    );
    assert_eq!(
        get(
            &mut c,
            "getVer",
            args()
                .with(1, b("t"))
                .with(2, b("a"))
                .with(3, b("cf:q"))
                .with(4, Value::I32(2))
        ),
        vec![("v30".into(), 30), ("v20".into(), 20)]
    );
    assert_eq!(
        get(
            &mut c,
            "getVerTs",
            args()
                .with(1, b("t"))
                .with(2, b("a"))
                .with(3, b("cf"))
                .with(4, Value::I64(30))
                .with(5, Value::I32(5))
        ),
        vec![("v20".into(), 20), ("v10".into(), 10)],
        "[0, ts): the version at ts is left out"
    );
    let msg = c
        .call(
            "getVer",
            args()
                .with(1, b("t"))
                .with(2, b("a"))
                .with(3, b("cf:q"))
                .with(4, Value::I32(0)),
        )
        .exception(1);
    assert!(msg.contains("positive"), "{msg}");
    let batch = |row: &str, v: &str| {
        Struct::new()
            .with(1, b(row))
            .with(2, Value::structs([mutation("cf:q", v)]))
    };
    c.call(
        "mutateRowsTs",
        args()
            .with(1, b("t"))
            .with(2, Value::structs([batch("b", "bv"), batch("c", "cv")]))
            .with(3, Value::I64(40)),
    )
    .ok();
    let got = rows(
        c.call(
            "getRowsTs",
            args()
                .with(1, b("t"))
                .with(
                    2,
                    Value::binaries([b"c".to_vec(), b"zz".to_vec(), b"b".to_vec()]),
                )
                .with(3, Value::I64(41)),
        )
        .ok(),
    );
    assert_eq!(
        got.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["c", "b"]
    );
    let got = row_names(
        c.call(
            "getRowsWithColumnsTs",
            args()
                .with(1, b("t"))
                .with(2, Value::binaries([b"a".to_vec(), b"b".to_vec()]))
                .with(3, Value::binaries([b"cf:q".to_vec()]))
                .with(4, Value::I64(35)),
        )
        .ok(),
    );
    assert_eq!(got, ["a"], "b's cell is at 40");
    let got = rows(
        c.call(
            "getRowTs",
            args()
                .with(1, b("t"))
                .with(2, b("a"))
                .with(3, Value::I64(15)),
        )
        .ok(),
    );
    assert_eq!(got[0].1, vec![("cf:q".to_string(), "v10".to_string())]);
    let got = row_names(
        c.call(
            "getRows",
            args()
                .with(1, b("t"))
                .with(2, Value::binaries([b"a".to_vec()])),
        )
        .ok(),
    );
    assert_eq!(got, ["a"]);

    // Counters, increments, appends, checkAndPut.
    let inc = |c: &mut Client, n: i64| {
        c.call(
            "atomicIncrement",
            args()
                .with(1, b("t"))
                .with(2, b("n"))
                .with(3, b("cf:n"))
                .with(4, Value::I64(n)),
        )
        .ok()
    };
    assert_eq!(inc(&mut c, 5), Some(Value::I64(5)));
    let tinc = |n: i64| {
        Struct::new()
            .with(1, b("t"))
            .with(2, b("n"))
            .with(3, b("cf:n"))
            .with(4, Value::I64(n))
    };
    c.call("increment", args().with(1, Value::Struct(tinc(10))))
        .ok();
    c.call(
        "incrementRows",
        args().with(1, Value::structs([tinc(1), tinc(2)])),
    )
    .ok();
    assert_eq!(inc(&mut c, 0), Some(Value::I64(18)));
    match c.call(
        "increment",
        args().with(1, Value::Struct(tinc(1).with(2, b("")))),
    ) {
        Answer::Application(6, m) => assert!(m.contains("row key"), "{m}"),
        a => panic!("{a:?}"),
    }
    let app = Struct::new()
        .with(1, b("t"))
        .with(2, b("s"))
        .with(3, Value::binaries([b"cf:s".to_vec()]))
        .with(4, Value::binaries([b"ab".to_vec()]));
    c.call("append", args().with(1, Value::Struct(app.clone())))
        .ok();
    let got = cells_of(c.call("append", args().with(1, Value::Struct(app))).ok());
    assert_eq!(got[0].0, "abab");
    let cap = |expected: Option<&str>, v: &str| {
        args()
            .with(1, b("t"))
            .with(2, b("s"))
            .with(3, b("cf:s"))
            .with_opt(5, expected.map(b))
            .with(6, Value::Struct(mutation("cf:s", v)))
    };
    assert_eq!(
        c.call("checkAndPut", cap(Some("zz"), "x")).ok(),
        Some(Value::Bool(false))
    );
    assert_eq!(
        c.call("checkAndPut", cap(None, "x")).ok(),
        Some(Value::Bool(false))
    );
    assert_eq!(
        c.call("checkAndPut", cap(Some("abab"), "x")).ok(),
        Some(Value::Bool(true))
    );

    // Scanner forms.
    for i in 0..6 {
        put(&mut c, "t", &format!("p{i}"), "cf:q", "v");
    }
    let open = |c: &mut Client, m: &str, a: Struct| {
        let id = c.call(m, a).ok().unwrap();
        let got: Vec<String> = scanner_list(c, id.clone(), 100)
            .into_iter()
            .map(|(r, _)| r)
            .collect();
        c.call("scannerClose", args().with(1, id)).ok();
        got
    };
    let cols = || Value::binaries([b"cf".to_vec()]);
    assert_eq!(
        open(
            &mut c,
            "scannerOpenWithStop",
            args()
                .with(1, b("t"))
                .with(2, b("p1"))
                .with(3, b("p3"))
                .with(4, cols())
        ),
        ["p1", "p2"]
    );
    assert_eq!(
        open(
            &mut c,
            "scannerOpenWithPrefix",
            args().with(1, b("t")).with(2, b("p")).with(3, cols())
        ),
        ["p0", "p1", "p2", "p3", "p4", "p5"]
    );
    assert_eq!(
        open(
            &mut c,
            "scannerOpenTs",
            args()
                .with(1, b("t"))
                .with(2, b(""))
                .with(3, cols())
                .with(4, Value::I64(25))
        ),
        ["a"],
        "only a has a version before 25"
    );
    assert_eq!(
        open(
            &mut c,
            "scannerOpenWithStopTs",
            args()
                .with(1, b("t"))
                .with(2, b("a"))
                .with(3, b("c"))
                .with(4, cols())
                .with(5, Value::I64(45))
        ),
        ["a", "b"]
    );
    let rev = Struct::new()
        .with(1, b("p4"))
        .with(2, b("p1"))
        .with(9, Value::Bool(true))
        .with(7, Value::I32(1))
        .with(5, Value::I32(2));
    assert_eq!(
        open(
            &mut c,
            "scannerOpenWithScan",
            args().with(1, b("t")).with(2, Value::Struct(rev))
        ),
        ["p4", "p3", "p2"]
    );
    let id = c
        .call(
            "scannerOpen",
            args().with(1, b("t")).with(2, b("p5")).with(3, cols()),
        )
        .ok()
        .unwrap();
    assert_eq!(
        row_names(c.call("scannerGet", args().with(1, id.clone())).ok()),
        ["p5"]
    );
    assert_eq!(
        row_names(c.call("scannerGet", args().with(1, id.clone())).ok()),
        ["s"]
    );
    c.call("scannerClose", args().with(1, id.clone())).ok();
    let msg = c.call("scannerClose", args().with(1, id)).exception(2);
    assert!(msg.contains("invalid"), "{msg}");
    let got = cells_of(
        c.call(
            "getRowOrBefore",
            args().with(1, b("t")).with(2, b("p35")).with(3, b("cf")),
        )
        .ok(),
    );
    assert_eq!(got.len(), 1, "p3's cell");

    // Deletes.
    c.call(
        "deleteAllTs",
        args()
            .with(1, b("t"))
            .with(2, b("a"))
            .with(3, b("cf:q"))
            .with(4, Value::I64(20)),
    )
    .ok();
    assert_eq!(
        get(
            &mut c,
            "getVer",
            args()
                .with(1, b("t"))
                .with(2, b("a"))
                .with(3, b("cf:q"))
                .with(4, Value::I32(5))
        ),
        vec![("v30".into(), 30)]
    );
    c.call(
        "deleteAll",
        args().with(1, b("t")).with(2, b("a")).with(3, b("cf")),
    )
    .ok();
    assert!(get(
        &mut c,
        "get",
        args().with(1, b("t")).with(2, b("a")).with(3, b("cf:q"))
    )
    .is_empty());
    c.call(
        "deleteAllRowTs",
        args()
            .with(1, b("t"))
            .with(2, b("b"))
            .with(3, Value::I64(39)),
    )
    .ok();
    assert_eq!(
        row_names(
            c.call("getRow", args().with(1, b("t")).with(2, b("b")))
                .ok()
        ),
        ["b"],
        "the cell at 40 stays"
    );
    c.call("deleteAllRow", args().with(1, b("t")).with(2, b("b")))
        .ok();
    assert!(row_names(
        c.call("getRow", args().with(1, b("t")).with(2, b("b")))
            .ok()
    )
    .is_empty());

    // Admin: compactions (by table and by region name), disable, enable, delete.
    c.call("compact", args().with(1, b("t"))).ok();
    let region = info.text(4).unwrap();
    c.call("majorCompact", args().with(1, b(&region))).ok();
    let msg = c.call("compact", args().with(1, b("nope"))).exception(1);
    assert!(msg.contains("TableNotFound"), "{msg}");
    c.call("disableTable", args().with(1, b("t"))).ok();
    assert_eq!(
        c.call("isTableEnabled", args().with(1, b("t"))).ok(),
        Some(Value::Bool(false))
    );
    c.call("enableTable", args().with(1, b("t"))).ok();
    c.call("disableTable", args().with(1, b("t"))).ok();
    c.call("deleteTable", args().with(1, b("t"))).ok();
    let msg = c.call("deleteTable", args().with(1, b("t"))).exception(1);
    assert!(msg.contains("table does not exist"), "{msg}");
    match c.call("grant", args()) {
        a @ Answer::Result(_) => assert!(a.exception(1).contains("access control")),
        a => panic!("{a:?}"),
    }
}
