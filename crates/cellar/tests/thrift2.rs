#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Thrift2's `THBaseService` (`cellar server --thrift2`) through a Thrift client on the
//! `thrift` crate: every method, in the shapes HBase's thrift2 IDL gives them.

mod common;

use cellar_thrift::{Struct, TType, Value};
use common::server::ServerProcess;
use common::thrift::{args, b, col_value, tname, tput, Client};

fn family(name: &str, versions: i32) -> Struct {
    Struct::new()
        .with(1, b(name))
        .with(10, Value::I32(versions))
}

fn tget(row: &str) -> Struct {
    Struct::new().with(1, b(row))
}

/// (family:qualifier, value, timestamp) of a TResult.
fn cells(r: &Value) -> Vec<(String, String, i64)> {
    r.as_struct()
        .unwrap()
        .struct_list(2)
        .unwrap()
        .iter()
        .map(|c| {
            (
                format!("{}:{}", c.text(1).unwrap(), c.text(2).unwrap()),
                c.text(3).unwrap(),
                c.i64(4).unwrap(),
            )
        })
        .collect()
}

fn get(c: &mut Client, row: &str) -> Vec<(String, String, i64)> {
    cells(
        &c.call(
            "get",
            args().with(1, b("t")).with(2, Value::Struct(tget(row))),
        )
        .ok()
        .unwrap(),
    )
}

#[test]
fn every_thrift2_method() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start_with(dir.path(), &["--thrift2", "--thrift-port", "0"]);
    let mut c = Client::connect(server.thrift.as_ref().unwrap(), true, false);
    assert_eq!(
        c.call("getThriftServerType", args()).ok(),
        Some(Value::I32(2))
    );

    // Namespaces.
    let ns = Value::Struct(Struct::new().with(1, b("app")));
    c.call("createNamespace", args().with(1, ns.clone())).ok();
    c.call("modifyNamespace", args().with(1, ns)).ok();
    let names = c.call("listNamespaces", args()).ok().unwrap();
    assert!(names.as_list().unwrap().contains(&b("app")), "{names:?}");
    let descs = c.call("listNamespaceDescriptors", args()).ok().unwrap();
    assert!(descs.as_list().unwrap().len() >= 2);
    let d = c
        .call("getNamespaceDescriptor", args().with(1, b("app")))
        .ok()
        .unwrap();
    assert_eq!(d.as_struct().unwrap().text(1).as_deref(), Some("app"));
    c.call("deleteNamespace", args().with(1, b("app"))).ok();
    let msg = c
        .call("getNamespaceDescriptor", args().with(1, b("app")))
        .exception(1);
    assert!(msg.contains("NamespaceNotFound"), "{msg}");

    // Tables: create with split keys, descriptors, listing.
    let desc = Struct::new()
        .with(1, tname("t"))
        .with(2, Value::structs([family("cf", 3), family("other", 1)]));
    c.call(
        "createTable",
        args()
            .with(1, Value::Struct(desc.clone()))
            .with(2, Value::binaries([b"m".to_vec()])),
    )
    .ok();
    let msg = c
        .call("createTable", args().with(1, Value::Struct(desc)))
        .exception(1);
    assert!(msg.contains("TableExistsException"), "{msg}");
    assert_eq!(
        c.call("tableExists", args().with(1, tname("t"))).ok(),
        Some(Value::Bool(true))
    );
    assert_eq!(
        c.call("tableExists", args().with(1, tname("nope"))).ok(),
        Some(Value::Bool(false))
    );
    let d = c
        .call("getTableDescriptor", args().with(1, tname("t")))
        .ok()
        .unwrap();
    let fams = d.as_struct().unwrap().struct_list(2).unwrap();
    assert_eq!(fams.len(), 2);
    assert_eq!(fams[0].text(1).as_deref(), Some("cf"));
    assert_eq!(fams[0].i32(10), Some(3));
    let ds = c
        .call(
            "getTableDescriptors",
            args().with(1, Value::List(TType::Struct, vec![tname("t")])),
        )
        .ok()
        .unwrap();
    assert_eq!(ds.as_list().unwrap().len(), 1);
    for (m, a) in [
        (
            "getTableDescriptorsByPattern",
            args().with(1, b("t.*")).with(2, Value::Bool(false)),
        ),
        (
            "getTableNamesByPattern",
            args().with(1, b("t.*")).with(2, Value::Bool(false)),
        ),
        (
            "getTableDescriptorsByNamespace",
            args().with(1, b("default")),
        ),
        ("getTableNamesByNamespace", args().with(1, b("default"))),
    ] {
        let l = c.call(m, a).ok().unwrap();
        assert_eq!(l.as_list().unwrap().len(), 1, "{m}: {l:?}");
    }
    assert_eq!(
        c.call("isTableEnabled", args().with(1, tname("t"))).ok(),
        Some(Value::Bool(true))
    );
    assert_eq!(
        c.call("isTableDisabled", args().with(1, tname("t"))).ok(),
        Some(Value::Bool(false))
    );
    assert_eq!(
        c.call("isTableAvailable", args().with(1, tname("t"))).ok(),
        Some(Value::Bool(true))
    );
    let locs = c
        .call("getAllRegionLocations", args().with(1, b("t")))
        .ok()
        .unwrap();
    assert_eq!(locs.as_list().unwrap().len(), 2, "split at m");
    let loc = c
        .call("getRegionLocation", args().with(1, b("t")).with(2, b("x")))
        .ok()
        .unwrap();
    let info = loc.as_struct().unwrap().strukt(2).unwrap().clone();
    assert_eq!(info.bytes(3), Some(&b"m"[..]));

    // Families: add, modify, delete.
    c.call(
        "addColumnFamily",
        args()
            .with(1, tname("t"))
            .with(2, Value::Struct(family("extra", 2))),
    )
    .ok();
    c.call(
        "modifyColumnFamily",
        args()
            .with(1, tname("t"))
            .with(2, Value::Struct(family("extra", 5))),
    )
    .ok();
    let d = c
        .call("getTableDescriptor", args().with(1, tname("t")))
        .ok()
        .unwrap();
    let fams = d.as_struct().unwrap().struct_list(2).unwrap();
    let extra = fams
        .iter()
        .find(|f| f.text(1).as_deref() == Some("extra"))
        .unwrap();
    assert_eq!(extra.i32(10), Some(5));
    c.call(
        "deleteColumnFamily",
        args().with(1, tname("t")).with(2, b("extra")),
    )
    .ok();
    let desc2 = Struct::new()
        .with(1, tname("t"))
        .with(2, Value::structs([family("cf", 3), family("other", 2)]));
    c.call("modifyTable", args().with(1, Value::Struct(desc2)))
        .ok();
    let d = c
        .call("getTableDescriptor", args().with(1, tname("t")))
        .ok()
        .unwrap();
    assert_eq!(d.as_struct().unwrap().struct_list(2).unwrap().len(), 2);

    // Data: put, get, exists, getMultiple, putMultiple.
    c.call(
        "put",
        args().with(1, b("t")).with(
            2,
            tput(
                "a",
                vec![
                    col_value("cf", "q", "1", Some(10)),
                    col_value("cf", "q", "2", Some(20)),
                ],
            ),
        ),
    )
    .ok();
    assert_eq!(get(&mut c, "a"), vec![("cf:q".into(), "2".into(), 20)]);
    let g = tget("a").with(5, Value::I32(3));
    let r = c
        .call("get", args().with(1, b("t")).with(2, Value::Struct(g)))
        .ok()
        .unwrap();
    assert_eq!(cells(&r).len(), 2, "two versions");
    let g = tget("a")
        .with(
            4,
            Value::Struct(Struct::new().with(1, Value::I64(0)).with(2, Value::I64(15))),
        )
        .with(5, Value::I32(3));
    let r = c
        .call("get", args().with(1, b("t")).with(2, Value::Struct(g)))
        .ok()
        .unwrap();
    assert_eq!(
        cells(&r),
        vec![("cf:q".into(), "1".into(), 10)],
        "time range"
    );
    assert_eq!(
        c.call(
            "exists",
            args().with(1, b("t")).with(2, Value::Struct(tget("a")))
        )
        .ok(),
        Some(Value::Bool(true))
    );
    let all = c
        .call(
            "existsAll",
            args()
                .with(1, b("t"))
                .with(2, Value::structs([tget("a"), tget("zz")])),
        )
        .ok()
        .unwrap();
    assert_eq!(
        all,
        Value::List(TType::Bool, vec![Value::Bool(true), Value::Bool(false)])
    );
    c.call(
        "putMultiple",
        args().with(1, b("t")).with(
            2,
            Value::List(
                TType::Struct,
                (0..5)
                    .map(|i| {
                        tput(
                            &format!("p{i}"),
                            vec![col_value("cf", "q", &i.to_string(), None)],
                        )
                    })
                    .collect(),
            ),
        ),
    )
    .ok();
    let many = c
        .call(
            "getMultiple",
            args()
                .with(1, b("t"))
                .with(2, Value::structs([tget("p1"), tget("zz"), tget("p4")])),
        )
        .ok()
        .unwrap();
    let many = many.as_list().unwrap();
    assert_eq!(cells(&many[0])[0].1, "1");
    assert!(cells(&many[1]).is_empty());
    assert_eq!(cells(&many[2])[0].1, "4");

    // Deletes of every kind.
    let del = |row: &str, cols: Vec<Struct>, kind: Option<i32>| {
        Value::Struct(
            Struct::new()
                .with(1, b(row))
                .with_opt(2, (!cols.is_empty()).then(|| Value::structs(cols)))
                .with_opt(4, kind.map(Value::I32)),
        )
    };
    let col = |f: &str, q: Option<&str>, ts: Option<i64>| {
        Struct::new()
            .with(1, b(f))
            .with_opt(2, q.map(b))
            .with_opt(3, ts.map(Value::I64))
    };
    c.call(
        "deleteSingle",
        args()
            .with(1, b("t"))
            .with(2, del("a", vec![col("cf", Some("q"), None)], Some(0))),
    )
    .ok();
    assert_eq!(
        get(&mut c, "a"),
        vec![("cf:q".into(), "1".into(), 10)],
        "DELETE_COLUMN: newest only"
    );
    c.call(
        "deleteSingle",
        args()
            .with(1, b("t"))
            .with(2, del("a", vec![col("cf", Some("q"), None)], None)),
    )
    .ok();
    assert!(get(&mut c, "a").is_empty(), "DELETE_COLUMNS by default");
    let out = c
        .call(
            "deleteMultiple",
            args().with(1, b("t")).with(
                2,
                Value::List(
                    TType::Struct,
                    vec![
                        del("p0", vec![], None),
                        del("p1", vec![col("cf", None, None)], Some(2)),
                    ],
                ),
            ),
        )
        .ok()
        .unwrap();
    assert_eq!(out.as_list().unwrap().len(), 0);
    assert!(get(&mut c, "p0").is_empty() && get(&mut c, "p1").is_empty());
    let msg = c
        .call(
            "deleteSingle",
            args()
                .with(1, b("t"))
                .with(2, del("p2", vec![col("cf", None, None)], Some(3))),
        )
        .exception(1);
    assert!(msg.contains("Timestamp is required"), "{msg}");

    // Check-and-mutate family.
    let put_v = |v: &str| tput("p2", vec![col_value("cf", "q", v, None)]);
    let cap = |v: Option<&str>, p: Value| {
        args()
            .with(1, b("t"))
            .with(2, b("p2"))
            .with(3, b("cf"))
            .with(4, b("q"))
            .with_opt(5, v.map(b))
            .with(6, p)
    };
    assert_eq!(
        c.call("checkAndPut", cap(Some("nope"), put_v("x"))).ok(),
        Some(Value::Bool(false))
    );
    assert_eq!(
        c.call("checkAndPut", cap(Some("2"), put_v("x"))).ok(),
        Some(Value::Bool(true))
    );
    assert_eq!(get(&mut c, "p2")[0].1, "x");
    assert_eq!(
        c.call("checkAndDelete", cap(Some("x"), del("p2", vec![], None)))
            .ok(),
        Some(Value::Bool(true))
    );
    assert!(get(&mut c, "p2").is_empty());
    let rm = Value::Struct(Struct::new().with(1, b("p3")).with(
        2,
        Value::structs([
            Struct::new().with(1, tput("p3", vec![col_value("cf", "n", "new", None)])),
            Struct::new().with(2, del("p3", vec![col("cf", Some("q"), None)], None)),
        ]),
    ));
    let cam = args()
        .with(1, b("t"))
        .with(2, b("p3"))
        .with(3, b("cf"))
        .with(4, b("q"))
        .with(5, Value::I32(2))
        .with(6, b("3"))
        .with(7, rm.clone());
    assert_eq!(c.call("checkAndMutate", cam).ok(), Some(Value::Bool(true)));
    assert_eq!(
        get(&mut c, "p3")
            .iter()
            .map(|c| c.0.clone())
            .collect::<Vec<_>>(),
        vec!["cf:n".to_string()]
    );
    let rm2 = Value::Struct(Struct::new().with(1, b("p4")).with(
        2,
        Value::structs([Struct::new().with(1, tput("p4", vec![col_value("cf", "m", "1", None)]))]),
    ));
    c.call("mutateRow", args().with(1, b("t")).with(2, rm2))
        .ok();
    assert_eq!(get(&mut c, "p4").len(), 2);

    // Increment and append.
    let inc = Value::Struct(
        Struct::new().with(1, b("n")).with(
            2,
            Value::structs([Struct::new()
                .with(1, b("cf"))
                .with(2, b("c"))
                .with(3, Value::I64(5))]),
        ),
    );
    c.call("increment", args().with(1, b("t")).with(2, inc.clone()))
        .ok();
    let r = c
        .call("increment", args().with(1, b("t")).with(2, inc))
        .ok()
        .unwrap();
    let v = r.as_struct().unwrap().struct_list(2).unwrap()[0]
        .bytes(3)
        .unwrap()
        .to_vec();
    assert_eq!(i64::from_be_bytes(v.try_into().unwrap()), 10);
    let app = Value::Struct(
        Struct::new()
            .with(1, b("n"))
            .with(2, Value::structs([col_value("cf", "s", "ab", None)])),
    );
    c.call("append", args().with(1, b("t")).with(2, app.clone()))
        .ok();
    let r = c
        .call("append", args().with(1, b("t")).with(2, app))
        .ok()
        .unwrap();
    assert_eq!(cells(&r)[0].1, "abab");

    // Scanners: open, page, close; one-shot results; reversed; filters; bad ids.
    for i in 0..20 {
        c.call(
            "put",
            args().with(1, b("t")).with(
                2,
                tput(
                    &format!("s{i:02}"),
                    vec![col_value("other", "q", "v", None)],
                ),
            ),
        )
        .ok();
    }
    let scan = Struct::new()
        .with(1, b("s"))
        .with(2, b("t"))
        .with(3, Value::structs([Struct::new().with(1, b("other"))]));
    let id = c
        .call(
            "openScanner",
            args().with(1, b("t")).with(2, Value::Struct(scan.clone())),
        )
        .ok()
        .unwrap();
    let mut seen = 0;
    loop {
        let page = c
            .call(
                "getScannerRows",
                args().with(1, id.clone()).with(2, Value::I32(7)),
            )
            .ok()
            .unwrap();
        let n = page.as_list().unwrap().len();
        if n == 0 {
            break;
        }
        seen += n;
    }
    assert_eq!(seen, 20);
    c.call("closeScanner", args().with(1, id.clone())).ok();
    let msg = c
        .call(
            "getScannerRows",
            args().with(1, id.clone()).with(2, Value::I32(1)),
        )
        .exception(2);
    assert!(msg.contains("Invalid scanner Id"), "{msg}");
    let msg = c.call("closeScanner", args().with(1, id)).exception(2);
    assert!(msg.contains("Invalid scanner Id"), "{msg}");
    let rev = scan
        .clone()
        .with(1, b("s99"))
        .with(2, b("s"))
        .with(11, Value::Bool(true))
        .with(15, Value::I32(3));
    let r = c
        .call(
            "getScannerResults",
            args()
                .with(1, b("t"))
                .with(2, Value::Struct(rev))
                .with(3, Value::I32(10)),
        )
        .ok()
        .unwrap();
    let rows: Vec<String> = r
        .as_list()
        .unwrap()
        .iter()
        .map(|r| r.as_struct().unwrap().text(1).unwrap())
        .collect();
    assert_eq!(rows, vec!["s19", "s18", "s17"], "reversed with a limit");
    let filtered = scan.with(7, b("PrefixFilter('s1')"));
    let r = c
        .call(
            "getScannerResults",
            args()
                .with(1, b("t"))
                .with(2, Value::Struct(filtered))
                .with(3, Value::I32(100)),
        )
        .ok()
        .unwrap();
    assert_eq!(r.as_list().unwrap().len(), 10);
    let bad = Struct::new().with(7, b("PrefixFilter("));
    let msg = c
        .call(
            "openScanner",
            args().with(1, b("t")).with(2, Value::Struct(bad)),
        )
        .exception(1);
    assert!(msg.contains("filter string does not parse"), "{msg}");

    // Truncate, disable, enable, delete.
    c.call("disableTable", args().with(1, tname("t"))).ok();
    assert_eq!(
        c.call("isTableDisabled", args().with(1, tname("t"))).ok(),
        Some(Value::Bool(true))
    );
    c.call(
        "truncateTable",
        args().with(1, tname("t")).with(2, Value::Bool(true)),
    )
    .ok();
    // A truncated table comes back enabled, as HBase's TruncateTableProcedure leaves it.
    let msg = c
        .call("enableTable", args().with(1, tname("t")))
        .exception(1);
    assert!(msg.contains("TableNotDisabledException"), "{msg}");
    assert!(get(&mut c, "n").is_empty(), "truncated");
    c.call("disableTable", args().with(1, tname("t"))).ok();
    c.call("deleteTable", args().with(1, tname("t"))).ok();
    assert_eq!(
        c.call("tableExists", args().with(1, tname("t"))).ok(),
        Some(Value::Bool(false))
    );
    let msg = c
        .call(
            "get",
            args().with(1, b("t")).with(2, Value::Struct(tget("a"))),
        )
        .exception(1);
    // As HBase's thrift2 gateway words a table its client cannot find: the name alone.
    assert_eq!(msg, "t");
}
