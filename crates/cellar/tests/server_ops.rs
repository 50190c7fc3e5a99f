#![allow(clippy::unwrap_used, clippy::disallowed_methods)] // drives a server process in real time
//! Every client operation against a real `cellar server` process through cellar-client,
//! with HBase's semantics: reads and writes of every kind, conditions, batches, scans
//! with their options, and errors of every kind a client can tell apart.

mod common;

use cellar_api::{
    Append, CheckAndMutate, CompareOp, Condition, Delete, ErrorKind, FamilyDescriptor, FilterSpec,
    Get, Increment, Mutation, Put, RowMutations, Scan, TableDescriptor,
};
use cellar_client::{BufferedMutator, ClientConfig, Connection};
use common::server::ServerProcess;

fn desc(name: &str) -> TableDescriptor {
    let mut f = FamilyDescriptor::new("f");
    f.versions = 5;
    TableDescriptor::new(name)
        .with_family(f)
        .with_family(FamilyDescriptor::new("g"))
}

fn rows(rs: &[cellar_api::RowResult]) -> Vec<String> {
    rs.iter()
        .map(|r| String::from_utf8_lossy(&r.row).into_owned())
        .collect()
}

async fn setup(server: &ServerProcess, cell_blocks: bool) -> Connection {
    let cfg = ClientConfig {
        cell_blocks,
        retries: 3,
        ..ClientConfig::default()
    };
    Connection::connect_with(&server.addr, cfg).await.unwrap()
}

async fn every_operation(cell_blocks: bool) {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(dir.path());
    let conn = setup(&server, cell_blocks).await;
    let admin = conn.admin();
    admin
        .create_table(desc("t"), vec![b"h".to_vec(), b"p".to_vec()])
        .await
        .unwrap();
    let t = conn.table("t");

    // Puts with explicit timestamps, versions, and Gets with their options.
    t.put(
        Put::new("a")
            .add_column_at("f", "q", 10, "v10")
            .add_column_at("f", "q", 20, "v20"),
    )
    .await
    .unwrap();
    let g = t.get(&Get::new("a").all_versions()).await.unwrap();
    assert_eq!(g.cells.len(), 2);
    assert_eq!(g.cells[0].timestamp(), 20);
    let g = t.get(&Get::new("a").time_range(0, 15)).await.unwrap();
    assert_eq!(g.value(b"f", b"q"), Some(&b"v10"[..]));
    assert!(t.exists(&Get::new("a")).await.unwrap());
    assert!(!t.exists(&Get::new("nope")).await.unwrap());
    assert!(t.get(&Get::new("nope")).await.unwrap().is_empty());

    // The four delete kinds.
    t.put(
        Put::new("d")
            .add_column_at("f", "a", 1, "1")
            .add_column_at("f", "a", 2, "2")
            .add_column_at("f", "b", 1, "b")
            .add_column_at("g", "c", 1, "c"),
    )
    .await
    .unwrap();
    t.delete(Delete::new("d").add_column_version("f", "a", 2))
        .await
        .unwrap();
    let g = t
        .get(&Get::new("d").add_column("f", "a").all_versions())
        .await
        .unwrap();
    assert_eq!(g.cells.len(), 1, "one version deleted");
    t.delete(Delete::new("d").add_columns("f", "a"))
        .await
        .unwrap();
    assert!(t
        .get(&Get::new("d").add_column("f", "a"))
        .await
        .unwrap()
        .is_empty());
    t.put(Put::new("d").add_column_at("f", "v", 7, "x"))
        .await
        .unwrap();
    t.delete(Delete::new("d").add_family_version("f", 7))
        .await
        .unwrap();
    assert!(t
        .get(&Get::new("d").add_column("f", "v"))
        .await
        .unwrap()
        .is_empty());
    t.delete(Delete::new("d").add_family("g")).await.unwrap();
    assert!(t
        .get(&Get::new("d").add_family("g"))
        .await
        .unwrap()
        .is_empty());
    assert!(
        !t.get(&Get::new("d")).await.unwrap().is_empty(),
        "f:b survives"
    );
    t.delete(Delete::new("d")).await.unwrap();
    assert!(t.get(&Get::new("d")).await.unwrap().is_empty(), "whole row");

    // Increment and Append.
    let r = t
        .increment(Increment::new("c").add_column("f", "n", 5))
        .await
        .unwrap();
    assert_eq!(r.value(b"f", b"n"), Some(&5i64.to_be_bytes()[..]));
    let r = t
        .increment(Increment::new("c").add_column("f", "n", -2))
        .await
        .unwrap();
    assert_eq!(r.value(b"f", b"n"), Some(&3i64.to_be_bytes()[..]));
    let r = t
        .append(Append::new("c").add_column("f", "s", "ab"))
        .await
        .unwrap();
    assert_eq!(r.value(b"f", b"s"), Some(&b"ab"[..]));
    let r = t
        .append(Append::new("c").add_column("f", "s", "cd"))
        .await
        .unwrap();
    assert_eq!(r.value(b"f", b"s"), Some(&b"abcd"[..]));

    // checkAndMutate: values, absence, filters, time ranges, several mutations.
    let ok = t
        .check_and_mutate(
            &CheckAndMutate::new("a", Condition::equals("f", "q", "v20"))
                .then(Put::new("a").add_column("f", "r", "1")),
        )
        .await
        .unwrap();
    assert!(ok.success);
    let stale = t
        .check_and_mutate(
            &CheckAndMutate::new("a", Condition::equals("f", "q", "nope"))
                .then(Put::new("a").add_column("f", "r", "2")),
        )
        .await
        .unwrap();
    assert!(!stale.success);
    let absent = t
        .check_and_mutate(
            &CheckAndMutate::new("e", Condition::not_exists("f", "q"))
                .then(Put::new("e").add_column("f", "q", "first")),
        )
        .await
        .unwrap();
    assert!(absent.success);
    let filtered = t
        .check_and_mutate(
            &CheckAndMutate::new(
                "e",
                Condition::filter(FilterSpec::Value(
                    CompareOp::Equal,
                    cellar_api::Comparator::Binary(b"first".to_vec()),
                )),
            )
            .then(Put::new("e").add_column("f", "w", "1"))
            .then(Delete::new("e").add_columns("f", "q")),
        )
        .await
        .unwrap();
    assert!(filtered.success);
    let g = t.get(&Get::new("e")).await.unwrap();
    assert_eq!((g.cells.len(), g.value(b"f", b"w")), (1, Some(&b"1"[..])));
    let ranged = t
        .check_and_mutate(
            &CheckAndMutate::new("a", Condition::equals("f", "q", "v20").time_range(0, 15))
                .then(Put::new("a").add_column("f", "r", "3")),
        )
        .await
        .unwrap();
    assert!(!ranged.success, "the newest value within [0, 15) is v10");

    // Row mutations, multi-row mutations, batches, the buffered mutator.
    let rm = RowMutations::new("m")
        .with(Put::new("m").add_column("f", "x", "1"))
        .with(Put::new("m").add_column("f", "y", "2"));
    t.mutate_row(&rm).await.unwrap();
    assert_eq!(t.get(&Get::new("m")).await.unwrap().cells.len(), 2);
    let multi: Vec<Mutation> = vec![
        Put::new("i1").add_column("f", "q", "1").into(),
        Put::new("i2").add_column("f", "q", "2").into(),
        Delete::new("m").into(),
    ];
    t.mutate_rows(&multi).await.unwrap();
    assert!(t.get(&Get::new("m")).await.unwrap().is_empty());
    assert!(!t.get(&Get::new("i2")).await.unwrap().is_empty());
    let across = t
        .mutate_rows(&[
            Put::new("b").add_column("f", "q", "1").into(),
            Put::new("z").add_column("f", "q", "1").into(),
        ])
        .await;
    assert!(
        across.is_err(),
        "rows in two regions are not one atomic unit"
    );
    let batch: Vec<Mutation> = (0..30)
        .map(|i| {
            Put::new(format!("r{i:02}"))
                .add_column("f", "q", format!("{i}"))
                .into()
        })
        .chain(std::iter::once(
            Put::new("bad").add_column("nosuch", "q", "v").into(),
        ))
        .chain(std::iter::once(
            Increment::new("c").add_column("f", "n", 10).into(),
        ))
        .collect();
    let results = t.batch(&batch).await;
    assert_eq!(results.len(), 32);
    assert!(results[..30].iter().all(|r| r.is_ok()));
    assert_eq!(
        results[30].as_ref().unwrap_err().kind(),
        ErrorKind::NoSuchColumnFamily
    );
    assert_eq!(
        results[31].as_ref().unwrap().value(b"f", b"n"),
        Some(&13i64.to_be_bytes()[..])
    );
    let mut bm = BufferedMutator::new(t.clone());
    for i in 0..100 {
        bm.mutate(Put::new(format!("w{i:03}")).add_column("g", "q", vec![b'x'; 100]))
            .await
            .unwrap();
    }
    bm.close().await.unwrap();
    assert!(!t.get(&Get::new("w099")).await.unwrap().is_empty());

    // Scans with their options, across three regions.
    let all = t.scan(&Scan::new()).collect().await.unwrap();
    let keys = rows(&all);
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    let n = keys.len();
    let rev = t.scan(&Scan::new().reversed(true)).collect().await.unwrap();
    let mut back = rows(&rev);
    back.reverse();
    assert_eq!(back, keys, "reversed");
    let lim = t
        .scan(&Scan::new().limit(7).caching(2))
        .collect()
        .await
        .unwrap();
    assert_eq!(rows(&lim), keys[..7]);
    let range = t
        .scan(&Scan::new().start_row("i").stop_row("r10"))
        .collect()
        .await
        .unwrap();
    assert!(rows(&range)
        .iter()
        .all(|k| k.as_str() >= "i" && k.as_str() < "r10"));
    let tiny = t
        .scan(&Scan::new().max_result_size(1).caching(1))
        .collect()
        .await
        .unwrap();
    assert_eq!(rows(&tiny), keys, "one row per round trip");
    let pf = t
        .scan(&Scan::new().filter(FilterSpec::Prefix(b"w0".to_vec())))
        .collect()
        .await
        .unwrap();
    assert_eq!(pf.len(), 100);
    let fam = t
        .scan(&Scan::new().add_family("g"))
        .collect()
        .await
        .unwrap();
    assert!(fam
        .iter()
        .all(|r| r.cells.iter().all(|c| c.family() == b"g")));
    assert!(n > 130, "{n}");

    // A wide row in batches and as partial results.
    let mut wide = Put::new("wide");
    for i in 0..40 {
        wide = wide.add_column("f", format!("c{i:02}"), vec![b'v'; 50]);
    }
    t.put(wide).await.unwrap();
    let only = Scan::new()
        .with_start_row("wide", true)
        .with_stop_row("wide", true);
    let b = t.scan(&only.clone().batch(15)).collect().await.unwrap();
    assert_eq!(
        b.iter().map(|r| r.cells.len()).collect::<Vec<_>>(),
        [15, 15, 10]
    );
    assert!(b[0].partial && !b[2].partial);
    let p = t
        .scan(
            &only
                .clone()
                .allow_partial_results(true)
                .max_result_size(200),
        )
        .collect()
        .await
        .unwrap();
    assert!(p.len() > 1 && p.iter().map(|r| r.cells.len()).sum::<usize>() == 40);
    let whole = t.scan(&only.max_result_size(200)).collect().await.unwrap();
    assert_eq!(whole.len(), 1);
    assert_eq!(whole[0].cells.len(), 40, "stitched back");
    let page = t
        .get(&Get::new("wide").filter(FilterSpec::ColumnPagination {
            limit: 5,
            offset: 0,
            column_offset: Some(b"c10".to_vec()),
        }))
        .await
        .unwrap();
    assert_eq!(page.cells.len(), 5);
    assert_eq!(page.cells[0].qualifier(), b"c10");

    // Admin: describe, alter, list, regions, flush, compact, split, namespaces.
    let (d, enabled) = admin.describe("t").await.unwrap();
    assert!(enabled);
    assert_eq!(d.family(b"f").map(|f| f.versions), Some(5));
    assert!(admin
        .list_tables()
        .await
        .unwrap()
        .contains(&"t".to_string()));
    assert_eq!(admin.list_regions("t").await.unwrap().len(), 3);
    admin.flush("t").await.unwrap();
    admin.compact("t", true).await.unwrap();
    assert_eq!(
        t.get(&Get::new("a").add_column("f", "q").all_versions())
            .await
            .unwrap()
            .cells
            .len(),
        2
    );
    admin.create_namespace("ns").await.unwrap();
    admin.create_table(desc("ns:u"), vec![]).await.unwrap();
    assert_eq!(
        admin.list_namespace_tables("ns").await.unwrap(),
        vec!["ns:u".to_string()]
    );
    assert!(admin
        .list_namespaces()
        .await
        .unwrap()
        .contains(&"ns".to_string()));

    // Errors, each of its kind.
    let e = conn.table("nosuch").get(&Get::new("a")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TableNotFound);
    let e = t
        .put(Put::new("a").add_column("nosuch", "q", "v"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoSuchColumnFamily);
    let e = admin.create_table(desc("t"), vec![]).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TableExists);
    let e = admin.delete_namespace("ns").await.unwrap_err();
    assert_eq!(
        e.kind(),
        ErrorKind::InvalidRequest,
        "a namespace with tables: {e}"
    );
    let e = admin.enable_table("t").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TableNotDisabled);
    admin.disable_table("t").await.unwrap();
    let e = t.get(&Get::new("a")).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TableNotEnabled, "{e}");
    let e = admin.delete_table("nosuch").await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TableNotFound);
    admin.enable_table("t").await.unwrap();
    let big = t
        .put(Put::new("big").add_column("f", "q", vec![0u8; 11 << 20]))
        .await
        .unwrap_err();
    assert_eq!(
        big.kind(),
        ErrorKind::InvalidRequest,
        "checked before sending: {big}"
    );
    // PageFilter has filterRow, which cannot be combined with batch (HBase's
    // IncompatibleFilterException).
    let e = t
        .scan(&Scan::new().filter(FilterSpec::Page(1)).batch(2))
        .collect()
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRequest, "{e}");
    assert!(e.message().contains("IncompatibleFilterException"), "{e}");
    // A reversed scan whose filter leaves a family to be loaded on demand is refused,
    // as HBase refuses it; forward, or with every family essential, it runs.
    let scv = |if_missing| FilterSpec::SingleColumnValue {
        family: b"f".to_vec(),
        qualifier: b"q".to_vec(),
        op: cellar_api::CompareOp::Equal,
        comparator: cellar_api::Comparator::Binary(b"v".to_vec()),
        filter_if_missing: if_missing,
        latest_version_only: true,
        exclude: false,
    };
    let e = t
        .scan(&Scan::new().filter(scv(true)).reversed(true))
        .collect()
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRequest, "{e}");
    assert!(
        e.message()
            .contains("Reverse scan with loading CFs on demand"),
        "{e}"
    );
    t.scan(&Scan::new().filter(scv(true)))
        .collect()
        .await
        .unwrap();
    t.scan(&Scan::new().filter(scv(false)).reversed(true))
        .collect()
        .await
        .unwrap();
    let u = conn.table("ns:u");
    u.put(Put::new("x").add_column("f", "q", "v"))
        .await
        .unwrap();
    let e = admin.truncate_table("ns:u", true).await.unwrap_err();
    assert_eq!(
        e.kind(),
        ErrorKind::TableNotDisabled,
        "HBase truncates only disabled tables"
    );
    admin.disable_table("ns:u").await.unwrap();
    admin.truncate_table("ns:u", true).await.unwrap();
    assert!(
        admin.is_table_enabled("ns:u").await.unwrap(),
        "enabled again, as HBase leaves it"
    );
    assert!(
        u.scan(&Scan::new()).collect().await.unwrap().is_empty(),
        "emptied"
    );
    assert_eq!(server.stop(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_with_cell_blocks() {
    every_operation(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_with_cells_inline() {
    every_operation(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_side_cell_size_check() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cellar.toml"),
        "\"hbase.server.keyvalue.maxsize\" = 1000\n",
    )
    .unwrap();
    let server = ServerProcess::start(dir.path());
    let conn = setup(&server, true).await;
    conn.admin().create_table(desc("t"), vec![]).await.unwrap();
    let t = conn.table("t");
    // HBase's RSRpcServices.checkCellSizeLimit: DoNotRetryIOException, before anything
    // is applied.
    let e = t
        .put(Put::new("r").add_column("f", "q", vec![1u8; 2000]))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRequest, "{e}");
    assert!(e.message().contains("exceeds limit of 1000 bytes"), "{e}");
    let r = t
        .batch(&[
            Put::new("ok").add_column("f", "q", "v").into(),
            Put::new("big").add_column("f", "q", vec![1u8; 2000]).into(),
        ])
        .await;
    assert!(r[0].is_ok());
    assert_eq!(r[1].as_ref().unwrap_err().kind(), ErrorKind::InvalidRequest);
    assert!(
        t.get(&Get::new("big")).await.unwrap().is_empty(),
        "nothing of it applied"
    );
    assert_eq!(server.stop(), Some(0));
}

/// Merging the regions of a disabled table: as HBase, the call is answered with a
/// procedure, and the procedure fails (MergeRegionException: the region is not OPEN),
/// which the client reports as an IOException.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn merging_a_disabled_tables_regions_fails_its_procedure() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(dir.path());
    let conn = setup(&server, true).await;
    let admin = conn.admin();
    admin
        .create_table(desc("m"), vec![b"h".to_vec()])
        .await
        .unwrap();
    let regions = admin.list_regions("m").await.unwrap();
    assert_eq!(regions.len(), 2);
    admin.disable_table("m").await.unwrap();
    let e = admin
        .merge_regions(&regions[0].info.encoded, &regions[1].info.encoded)
        .await
        .unwrap_err();
    assert_eq!(e.exception_class(), "java.io.IOException", "{e}");
    assert!(e.message().contains("is not OPEN"), "{e}");
    admin.enable_table("m").await.unwrap();
    admin
        .merge_regions(&regions[0].info.encoded, &regions[1].info.encoded)
        .await
        .unwrap();
}
