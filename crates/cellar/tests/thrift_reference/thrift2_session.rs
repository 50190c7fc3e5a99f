//! The Thrift2 session of the reference test: every THBaseService data method and the
//! table admin around them, each answer normalised (server timestamps as NOW, an
//! exception message cut to the HBase exception class it names, refusals HBase lets
//! escape as internal errors and Cellar answers as IOErrors as REFUSED).

use cellar_thrift::{Struct, TType, Value};

use crate::common::thrift::{args, b, col_value as cv, tname, tput, Answer, Client};

/// A value printed with server timestamps (after 2001) as NOW and exception messages
/// cut to the HBase exception class they name.
fn norm(v: &Value) -> String {
    match v {
        Value::I64(t) if *t > 1_000_000_000_000 && *t != i64::MAX => "NOW".into(),
        Value::Binary(bytes) => {
            let s = String::from_utf8_lossy(bytes);
            // Refusals HBase's gateway lets escape as internal errors, Cellar's answers
            // as IOErrors naming the problem (docs/compatibility.md).
            if s.starts_with("java.lang.IllegalArgumentException") {
                return "REFUSED".into();
            }
            match s.find("org.apache.hadoop.hbase.") {
                Some(i) => s[i..]
                    .split(|c: char| c == ':' || c.is_whitespace())
                    .next()
                    .unwrap_or_default()
                    .to_string(),
                None => format!("{s:?}"),
            }
        }
        Value::Struct(s) => {
            let fields: Vec<String> = s
                .fields
                .iter()
                .map(|(id, v)| format!("{id}:{}", norm(v)))
                .collect();
            format!("{{{}}}", fields.join(" "))
        }
        Value::List(_, items) | Value::Set(_, items) => {
            let items: Vec<String> = items.iter().map(norm).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Map(_, _, entries) => {
            let mut items: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}={}", norm(k), norm(v)))
                .collect();
            items.sort();
            format!("<{}>", items.join(", "))
        }
        other => format!("{other:?}"),
    }
}

fn answer(a: Answer) -> String {
    match a {
        Answer::Result(s) => {
            let text = norm(&Value::Struct(s));
            if text.contains("REFUSED") {
                "REFUSED".into()
            } else {
                text
            }
        }
        // INTERNAL_ERROR: an unchecked exception in HBase's handler.
        Answer::Application(6, _) => "REFUSED".into(),
        Answer::Application(kind, _) => format!("TApplicationException {kind}"),
    }
}

/// One Thrift2 session; each call's normalised answer, one a line.
pub fn thrift2_session(addr: &str) -> String {
    let mut c = Client::connect(addr, false, false);
    let mut out = String::new();
    let mut call = |c: &mut Client, label: &str, m: &str, a: Struct| {
        let line = format!("{label}: {}\n", answer(c.call(m, a)));
        out.push_str(&line);
    };
    let fam = |n: &str, v: i32| Struct::new().with(1, b(n)).with(10, Value::I32(v));
    let desc = Struct::new()
        .with(1, tname("ref2"))
        .with(2, Value::structs([fam("cf", 3), fam("m", 1)]));
    if matches!(
        c.call("tableExists", args().with(1, tname("ref2"))).ok(),
        Some(Value::Bool(true))
    ) {
        c.call("disableTable", args().with(1, tname("ref2")));
        c.call("deleteTable", args().with(1, tname("ref2")));
    }
    call(
        &mut c,
        "create",
        "createTable",
        args()
            .with(1, Value::Struct(desc.clone()))
            .with(2, Value::binaries([b"k".to_vec()])),
    );
    call(
        &mut c,
        "create again",
        "createTable",
        args().with(1, Value::Struct(desc)),
    );
    call(
        &mut c,
        "exists",
        "tableExists",
        args().with(1, tname("ref2")),
    );
    call(
        &mut c,
        "enabled",
        "isTableEnabled",
        args().with(1, tname("ref2")),
    );
    call(
        &mut c,
        "names",
        "getTableNamesByPattern",
        args().with(1, b("ref2")).with(2, Value::Bool(false)),
    );
    let t = || b("ref2");
    call(
        &mut c,
        "put",
        "put",
        args().with(1, t()).with(
            2,
            tput(
                "a",
                vec![
                    cv("cf", "x", "1", Some(5)),
                    cv("cf", "x", "2", Some(7)),
                    cv("m", "y", "m", None),
                ],
            ),
        ),
    );
    call(
        &mut c,
        "put multiple",
        "putMultiple",
        args().with(1, t()).with(
            2,
            Value::List(
                TType::Struct,
                (0..6)
                    .map(|i| {
                        tput(
                            &format!("r{i}"),
                            vec![cv("cf", "n", &i.to_string(), Some(100 + i))],
                        )
                    })
                    .collect(),
            ),
        ),
    );
    let get = |row: &str| Struct::new().with(1, b(row));
    call(
        &mut c,
        "get",
        "get",
        args().with(1, t()).with(2, Value::Struct(get("a"))),
    );
    call(
        &mut c,
        "get versions",
        "get",
        args()
            .with(1, t())
            .with(2, Value::Struct(get("a").with(5, Value::I32(3)))),
    );
    call(
        &mut c,
        "get ts",
        "get",
        args()
            .with(1, t())
            .with(2, Value::Struct(get("a").with(3, Value::I64(5)))),
    );
    call(
        &mut c,
        "get columns",
        "get",
        args().with(1, t()).with(
            2,
            Value::Struct(get("a").with(2, Value::structs([Struct::new().with(1, b("m"))]))),
        ),
    );
    call(
        &mut c,
        "get missing",
        "get",
        args().with(1, t()).with(2, Value::Struct(get("zz"))),
    );
    call(
        &mut c,
        "get filter",
        "get",
        args().with(1, t()).with(
            2,
            Value::Struct(get("a").with(6, b("QualifierFilter(=, 'binary:y')"))),
        ),
    );
    call(
        &mut c,
        "exists row",
        "exists",
        args().with(1, t()).with(2, Value::Struct(get("a"))),
    );
    call(
        &mut c,
        "exists all",
        "existsAll",
        args()
            .with(1, t())
            .with(2, Value::structs([get("a"), get("zz")])),
    );
    call(
        &mut c,
        "get multiple",
        "getMultiple",
        args()
            .with(1, t())
            .with(2, Value::structs([get("r1"), get("zz"), get("r2")])),
    );
    let del = |row: &str, cols: Vec<Struct>, kind: Option<i32>, ts: Option<i64>| {
        Value::Struct(
            Struct::new()
                .with(1, b(row))
                .with_opt(2, (!cols.is_empty()).then(|| Value::structs(cols)))
                .with_opt(3, ts.map(Value::I64))
                .with_opt(4, kind.map(Value::I32)),
        )
    };
    let col = |f: &str, q: Option<&str>, ts: Option<i64>| {
        Struct::new()
            .with(1, b(f))
            .with_opt(2, q.map(b))
            .with_opt(3, ts.map(Value::I64))
    };
    call(
        &mut c,
        "delete version",
        "deleteSingle",
        args().with(1, t()).with(
            2,
            del("a", vec![col("cf", Some("x"), Some(7))], Some(0), None),
        ),
    );
    call(
        &mut c,
        "after",
        "get",
        args()
            .with(1, t())
            .with(2, Value::Struct(get("a").with(5, Value::I32(3)))),
    );
    call(
        &mut c,
        "delete family",
        "deleteSingle",
        args()
            .with(1, t())
            .with(2, del("a", vec![col("m", None, None)], Some(2), None)),
    );
    call(
        &mut c,
        "after",
        "get",
        args().with(1, t()).with(2, Value::Struct(get("a"))),
    );
    call(
        &mut c,
        "delete rows",
        "deleteMultiple",
        args().with(1, t()).with(
            2,
            Value::List(
                TType::Struct,
                vec![
                    del("r0", vec![], None, None),
                    del("r1", vec![], None, Some(50)),
                ],
            ),
        ),
    );
    call(
        &mut c,
        "after",
        "getMultiple",
        args()
            .with(1, t())
            .with(2, Value::structs([get("r0"), get("r1")])),
    );
    call(
        &mut c,
        "delete family version no ts",
        "deleteSingle",
        args()
            .with(1, t())
            .with(2, del("r2", vec![col("cf", None, None)], Some(3), None)),
    );
    let cap = |v: Option<&str>, m: Value| {
        args()
            .with(1, b("ref2"))
            .with(2, b("r2"))
            .with(3, b("cf"))
            .with(4, b("n"))
            .with_opt(5, v.map(b))
            .with(6, m)
    };
    call(
        &mut c,
        "check and put no",
        "checkAndPut",
        cap(
            Some("nope"),
            tput("r2", vec![cv("cf", "n", "x", Some(200))]),
        ),
    );
    call(
        &mut c,
        "check and put yes",
        "checkAndPut",
        cap(Some("2"), tput("r2", vec![cv("cf", "n", "x", Some(200))])),
    );
    call(
        &mut c,
        "check and delete",
        "checkAndDelete",
        cap(
            Some("x"),
            del("r2", vec![col("cf", Some("n"), Some(200))], Some(0), None),
        ),
    );
    call(
        &mut c,
        "after",
        "get",
        args().with(1, t()).with(2, Value::Struct(get("r2"))),
    );
    let rm = Value::Struct(Struct::new().with(1, b("r3")).with(
        2,
        Value::structs([
            Struct::new().with(1, tput("r3", vec![cv("cf", "o", "new", Some(300))])),
            Struct::new().with(2, del("r3", vec![col("cf", Some("n"), None)], None, None)),
        ]),
    ));
    call(
        &mut c,
        "check and mutate",
        "checkAndMutate",
        args()
            .with(1, t())
            .with(2, b("r3"))
            .with(3, b("cf"))
            .with(4, b("n"))
            .with(5, Value::I32(1))
            .with(6, b("3"))
            .with(7, rm.clone()),
    );
    call(
        &mut c,
        "check and mutate greater",
        "checkAndMutate",
        args()
            .with(1, t())
            .with(2, b("r3"))
            .with(3, b("cf"))
            .with(4, b("o"))
            .with(5, Value::I32(5))
            .with(6, b("a"))
            .with(7, rm),
    );
    call(
        &mut c,
        "after",
        "get",
        args().with(1, t()).with(2, Value::Struct(get("r3"))),
    );
    call(
        &mut c,
        "mutate row",
        "mutateRow",
        args().with(1, t()).with(
            2,
            Value::Struct(Struct::new().with(1, b("r4")).with(
                2,
                Value::structs([
                    Struct::new().with(1, tput("r4", vec![cv("cf", "z", "z", Some(400))])),
                ]),
            )),
        ),
    );
    call(
        &mut c,
        "after",
        "get",
        args().with(1, t()).with(2, Value::Struct(get("r4"))),
    );
    let inc = Value::Struct(
        Struct::new().with(1, b("n")).with(
            2,
            Value::structs([Struct::new()
                .with(1, b("cf"))
                .with(2, b("c"))
                .with(3, Value::I64(4))]),
        ),
    );
    call(
        &mut c,
        "increment",
        "increment",
        args().with(1, t()).with(2, inc.clone()),
    );
    call(
        &mut c,
        "increment again",
        "increment",
        args().with(1, t()).with(2, inc),
    );
    let app = Value::Struct(
        Struct::new()
            .with(1, b("n"))
            .with(2, Value::structs([cv("cf", "s", "ab", None)])),
    );
    call(
        &mut c,
        "append",
        "append",
        args().with(1, t()).with(2, app.clone()),
    );
    call(
        &mut c,
        "append again",
        "append",
        args().with(1, t()).with(2, app),
    );
    let scan = Struct::new().with(1, b("r")).with(2, b("s"));
    call(
        &mut c,
        "scan results",
        "getScannerResults",
        args()
            .with(1, t())
            .with(2, Value::Struct(scan.clone()))
            .with(3, Value::I32(10)),
    );
    call(
        &mut c,
        "scan reversed",
        "getScannerResults",
        args()
            .with(1, t())
            .with(
                2,
                Value::Struct(
                    Struct::new()
                        .with(1, b("r9"))
                        .with(2, b("r"))
                        .with(11, Value::Bool(true)),
                ),
            )
            .with(3, Value::I32(2)),
    );
    call(
        &mut c,
        "scan filter",
        "getScannerResults",
        args()
            .with(1, t())
            .with(
                2,
                Value::Struct(scan.clone().with(7, b("ValueFilter(>, 'binary:3')"))),
            )
            .with(3, Value::I32(10)),
    );
    call(
        &mut c,
        "scan batch",
        "getScannerResults",
        args()
            .with(1, t())
            .with(
                2,
                Value::Struct(
                    Struct::new()
                        .with(1, b("a"))
                        .with(2, b("b"))
                        .with(5, Value::I32(3))
                        .with(8, Value::I32(1)),
                ),
            )
            .with(3, Value::I32(10)),
    );
    let id = c
        .call(
            "openScanner",
            args().with(1, t()).with(2, Value::Struct(scan)),
        )
        .ok()
        .unwrap();
    call(
        &mut c,
        "scanner rows",
        "getScannerRows",
        args().with(1, id.clone()).with(2, Value::I32(2)),
    );
    call(
        &mut c,
        "scanner rows more",
        "getScannerRows",
        args().with(1, id.clone()).with(2, Value::I32(100)),
    );
    call(
        &mut c,
        "scanner close",
        "closeScanner",
        args().with(1, id.clone()),
    );
    call(
        &mut c,
        "scanner closed",
        "getScannerRows",
        args().with(1, id).with(2, Value::I32(1)),
    );
    call(
        &mut c,
        "bad filter",
        "getScannerResults",
        args()
            .with(1, t())
            .with(2, Value::Struct(Struct::new().with(7, b("PrefixFilter("))))
            .with(3, Value::I32(1)),
    );
    call(
        &mut c,
        "missing table",
        "get",
        args().with(1, b("nope")).with(2, Value::Struct(get("a"))),
    );
    call(
        &mut c,
        "missing family",
        "put",
        args()
            .with(1, t())
            .with(2, tput("a", vec![cv("nofam", "q", "v", None)])),
    );
    call(&mut c, "unknown method", "noSuchMethod", args());
    call(
        &mut c,
        "disable",
        "disableTable",
        args().with(1, tname("ref2")),
    );
    call(
        &mut c,
        "disabled",
        "isTableDisabled",
        args().with(1, tname("ref2")),
    );
    call(
        &mut c,
        "read disabled",
        "get",
        args().with(1, t()).with(2, Value::Struct(get("a"))),
    );
    call(
        &mut c,
        "delete",
        "deleteTable",
        args().with(1, tname("ref2")),
    );
    call(
        &mut c,
        "exists after",
        "tableExists",
        args().with(1, tname("ref2")),
    );
    out
}
