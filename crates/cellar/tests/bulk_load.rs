#![allow(clippy::unwrap_used)]
// Drives a real writer thread beside a load.
#![allow(clippy::disallowed_methods)]
//! Bulk load into a table (`completebulkload`): files cut at region boundaries, every
//! cell where it belongs with its timestamp; a bad file or an unknown family loads
//! nothing; empty files skipped; loads beside concurrent writes; HFiles written by
//! HBase's own writer (every encoding and codec of the fixtures).

mod common;

use std::path::{Path, PathBuf};

use cellar::{Database, Options};
use cellar_api::{ErrorKind, FamilyDescriptor, Get, Put, Scan, TableDescriptor};
use cellar_hfile::{HFileWriter, WriterOptions};
use cellar_io::LocalFs;
use cellar_types::Cell;

/// Opens without background work. Other tests of this binary start processes: a child
/// holds a copy of every descriptor between its fork and its exec, the directory lock
/// included, so a reopen right after a close may find the lock briefly held.
fn open(dir: &Path) -> Database {
    for _ in 0..50 {
        let mut o = Options::for_dir(dir).unwrap();
        o.background = false;
        match Database::open_with(dir, o) {
            Ok(db) => return db,
            Err(cellar::DbError::Locked { .. }) => {
                std::thread::sleep(std::time::Duration::from_millis(20))
            }
            Err(e) => panic!("open {}: {e}", dir.display()),
        }
    }
    panic!("{} stayed locked", dir.display())
}

fn table(name: &str) -> TableDescriptor {
    let mut a = FamilyDescriptor::new("a");
    a.versions = 10;
    let mut b = FamilyDescriptor::new("b");
    b.versions = 10;
    TableDescriptor::new(name).with_family(a).with_family(b)
}

/// Writes `cells` (sorted here) as `dir/<family>/<name>`.
fn hfile(dir: &Path, family: &str, name: &str, mut cells: Vec<Cell>) -> PathBuf {
    cells.sort_by(cellar_types::compare_cells);
    let d = dir.join(family);
    std::fs::create_dir_all(&d).unwrap();
    let path = d.join(name);
    let mut w = HFileWriter::create(&LocalFs::new(), &path, WriterOptions::default()).unwrap();
    for c in cells {
        w.append(c).unwrap();
    }
    w.close().unwrap();
    path
}

fn raw_cells(db: &Database, t: &str) -> Vec<String> {
    db.table(t)
        .unwrap()
        .scan(&Scan::new().raw(true).max_versions(100))
        .unwrap()
        .flat_map(|r| r.unwrap().cells)
        .map(|c| {
            format!(
                "{}/{}:{}/{}/{:?}",
                String::from_utf8_lossy(c.row()),
                String::from_utf8_lossy(c.family()),
                String::from_utf8_lossy(c.qualifier()),
                c.timestamp(),
                c.cell_type()
            )
        })
        .collect()
}

#[test]
fn files_spanning_regions_are_cut_and_every_cell_lands_in_its_region() {
    let tmp = tempfile::tempdir().unwrap();
    let db = open(&tmp.path().join("db"));
    db.create_table_split(table("t"), vec![b"h".to_vec(), b"p".to_vec()])
        .unwrap();
    let input = tmp.path().join("in");
    let rows = ["b", "e", "h", "k", "p", "x"];
    hfile(
        &input,
        "a",
        "wide",
        rows.iter()
            .flat_map(|r| {
                [
                    Cell::put(*r, "a", "q", 7, format!("a-{r}")).unwrap(),
                    Cell::put(*r, "a", "q", 5, "old").unwrap(),
                ]
            })
            .collect(),
    );
    hfile(
        &input,
        "b",
        "narrow",
        vec![
            Cell::put("k", "b", "q", 3, "b-k").unwrap(),
            Cell::new("k", "b", "z", 9, cellar_types::CellType::DeleteColumn, "").unwrap(),
        ],
    );
    hfile(&input, "b", "empty", vec![]);
    let report = db.bulk_load("t", &input).unwrap();
    assert_eq!(report.files, 3);
    assert_eq!(report.empty.len(), 1);
    assert_eq!(report.split_files, 1);
    assert_eq!(report.pieces, 3);
    assert_eq!(report.regions, 3);
    assert_eq!(report.cells, 14);
    // The pieces are gone, the inputs stay.
    assert!(!input.join("_tmp").exists());
    assert!(input.join("a/wide").exists());
    let cells = raw_cells(&db, "t");
    assert_eq!(cells.len(), 14, "{cells:#?}");
    assert!(cells.contains(&"k/b:z/9/DeleteColumn".to_string()));
    let t = db.table("t").unwrap();
    for r in rows {
        let got = t.get(&Get::new(r)).unwrap();
        assert_eq!(got.value(b"a", b"q").unwrap(), format!("a-{r}").as_bytes());
    }
    // Each region holds its own rows' file.
    let regions = db.list_regions("t").unwrap();
    assert!(regions.iter().all(|r| r.store_files >= 1), "{regions:?}");
    // A second load of the same cells at the same coordinates wins over the first.
    let again = tmp.path().join("again");
    hfile(
        &again,
        "a",
        "f",
        vec![Cell::put("k", "a", "q", 7, "newer").unwrap()],
    );
    db.bulk_load("t", &again).unwrap();
    let got = t.get(&Get::new("k")).unwrap();
    assert_eq!(got.value(b"a", b"q").unwrap(), b"newer");
    // And a write after it wins over the load.
    t.put(Put::new("k").add_column_at("a", "q", 7, "written"))
        .unwrap();
    let got = t.get(&Get::new("k")).unwrap();
    assert_eq!(got.value(b"a", b"q").unwrap(), b"written");
    // Across a reopen too.
    db.close().unwrap();
    let db = open(&tmp.path().join("db"));
    let got = db.table("t").unwrap().get(&Get::new("k")).unwrap();
    assert_eq!(got.value(b"a", b"q").unwrap(), b"written");
    // Three puts at k/a:q/7 read as one (the newest), raw too, as HBase's tracker does.
    assert_eq!(raw_cells(&db, "t").len(), 14);
}

#[test]
fn a_bad_file_or_an_unknown_family_loads_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = open(&tmp.path().join("db"));
    db.create_table_split(table("t"), vec![b"m".to_vec()])
        .unwrap();
    // One good file, one whose cells belong to another family.
    let input = tmp.path().join("in");
    hfile(
        &input,
        "a",
        "good",
        vec![Cell::put("c", "a", "q", 1, "v").unwrap()],
    );
    hfile(
        &input,
        "b",
        "wrong",
        vec![Cell::put("c", "a", "q", 1, "v").unwrap()],
    );
    let e = db.bulk_load("t", &input).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRequest, "{e}");
    assert!(raw_cells(&db, "t").is_empty());
    // A damaged file.
    std::fs::remove_file(input.join("b/wrong")).unwrap();
    let p = hfile(
        &input,
        "b",
        "damaged",
        vec![Cell::put("x", "b", "q", 1, "v").unwrap()],
    );
    let mut bytes = std::fs::read(&p).unwrap();
    bytes[40] ^= 0x20;
    std::fs::write(&p, bytes).unwrap();
    let e = db.bulk_load("t", &input).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRequest, "{e}");
    assert!(raw_cells(&db, "t").is_empty());
    // Not an HFile at all.
    std::fs::write(&p, b"not an hfile").unwrap();
    assert!(db.bulk_load("t", &input).is_err());
    assert!(raw_cells(&db, "t").is_empty());
    // A family the table does not have.
    std::fs::remove_file(&p).unwrap();
    hfile(
        &input,
        "zz",
        "f",
        vec![Cell::put("c", "zz", "q", 1, "v").unwrap()],
    );
    let e = db.bulk_load("t", &input).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoSuchColumnFamily, "{e}");
    assert!(e.to_string().contains("zz"), "{e}");
    assert!(raw_cells(&db, "t").is_empty());
    // Unknown table, missing directory.
    assert_eq!(
        db.bulk_load("nope", &input).unwrap_err().kind(),
        ErrorKind::TableNotFound
    );
    assert!(db.bulk_load("t", &tmp.path().join("missing")).is_err());
    // With the stray family gone, the good file loads.
    std::fs::remove_dir_all(input.join("zz")).unwrap();
    db.bulk_load("t", &input).unwrap();
    assert_eq!(raw_cells(&db, "t"), vec!["c/a:q/1/Put"]);
}

#[test]
fn loads_beside_concurrent_writes_lose_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let db = std::sync::Arc::new(open(&tmp.path().join("db")));
    db.create_table_split(table("t"), vec![b"r05".to_vec()])
        .unwrap();
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            let t = db.table("t").unwrap();
            for i in 0..400 {
                t.put(Put::new(format!("w{i:03}")).add_column("b", "q", "w"))
                    .unwrap();
            }
        })
    };
    for round in 0..8 {
        let input = tmp.path().join(format!("in{round}"));
        hfile(
            &input,
            "a",
            "f",
            (0..10)
                .map(|i| Cell::put(format!("r{i:02}"), "a", format!("q{round}"), 1, "v").unwrap())
                .collect(),
        );
        db.bulk_load("t", &input).unwrap();
    }
    writer.join().unwrap();
    let t = db.table("t").unwrap();
    let rows: Vec<_> = t.scan(&Scan::new()).unwrap().map(|r| r.unwrap()).collect();
    let loaded: usize = rows
        .iter()
        .filter(|r| r.row.starts_with(b"r"))
        .map(|r| r.cells.len())
        .sum();
    assert_eq!(loaded, 80);
    assert_eq!(rows.iter().filter(|r| r.row.starts_with(b"w")).count(), 400);
}

/// HBase 2.6.4's own store files (every encoding × codec × bloom of the fixtures, with
/// tags, every cell type and a wide row) load into a split table cell for cell.
#[test]
fn hfiles_written_by_hbase_load_cell_for_cell() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hfile/hbase-2.6");
    let tmp = tempfile::tempdir().unwrap();
    let db = open(&tmp.path().join("db"));
    for (i, name) in [
        "none-none-none.hfile",
        "fast-diff-zstd-rowcol.hfile",
        "prefix-snappy-row.hfile",
        "diff-gz-rowprefix-fixed-length.hfile",
        "row-index-v1-lz4-none.hfile",
    ]
    .iter()
    .enumerate()
    {
        let t = format!("t{i}");
        let mut f = FamilyDescriptor::new("f");
        f.versions = 10;
        db.create_table_split(
            TableDescriptor::new(t.as_str()).with_family(f),
            vec![b"row-00050".to_vec(), b"row-00120".to_vec()],
        )
        .unwrap();
        let input = tmp.path().join(format!("in{i}/f"));
        std::fs::create_dir_all(&input).unwrap();
        std::fs::copy(fixtures.join(name), input.join("hbase")).unwrap();
        let report = db.bulk_load(&t, input.parent().unwrap()).unwrap();
        assert_eq!(report.cells, 1162, "{name}");
        assert_eq!(report.split_files, 1, "{name}");
        assert_eq!(report.regions, 3, "{name}");
        assert_eq!(raw_cells(&db, &t).len(), 1162, "{name}");
    }
}

fn cellar(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_cellar"))
        .args(args)
        .output()
        .unwrap()
}

/// `cellar bulkload` on an embedded database, and through a server with `--connect`
/// (ClientService PrepareBulkLoad / BulkLoadHFile / CleanupBulkLoad); a load that must
/// cut a file, then survives the server's `kill -9`.
#[test]
fn the_bulkload_command_loads_embedded_and_through_a_server() {
    let tmp = tempfile::tempdir().unwrap();
    let dbdir = tmp.path().join("db");
    {
        let db = open(&dbdir);
        db.create_table_split(table("t"), vec![b"m".to_vec()])
            .unwrap();
        db.close().unwrap();
    }
    let input = tmp.path().join("in");
    hfile(
        &input,
        "a",
        "f",
        ["c", "q"]
            .iter()
            .map(|r| Cell::put(*r, "a", "q", 1, "embedded").unwrap())
            .collect(),
    );
    let out = cellar(&[
        "bulkload",
        input.to_str().unwrap(),
        "t",
        "--db",
        dbdir.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("loaded 2 cells from 1 files into 2 regions"),
        "{stdout}"
    );
    // A bad table is an error, and says so.
    let out = cellar(&[
        "bulkload",
        input.to_str().unwrap(),
        "nope",
        "--db",
        dbdir.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope"));

    let server = common::server::ServerProcess::start(&dbdir);
    let input2 = tmp.path().join("in2");
    hfile(
        &input2,
        "b",
        "f",
        ["d", "n", "z"]
            .iter()
            .map(|r| Cell::put(*r, "b", "q", 2, "remote").unwrap())
            .collect(),
    );
    let out = cellar(&[
        "bulkload",
        input2.to_str().unwrap(),
        "t",
        "--connect",
        &server.addr,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("loaded 3 cells from 1 files into 2 regions"),
        "{stdout}"
    );
    assert!(!input2.join("_tmp").exists());
    let conn = cellar::client::RemoteConnection::connect(&server.addr).unwrap();
    use cellar::Connection as _;
    let t = conn.table("t").unwrap();
    for (row, fam, v) in [
        ("c", "a", "embedded"),
        ("q", "a", "embedded"),
        ("d", "b", "remote"),
        ("z", "b", "remote"),
    ] {
        let r = t.get(&Get::new(row)).unwrap();
        assert_eq!(
            r.value(fam.as_bytes(), b"q").unwrap(),
            v.as_bytes(),
            "{row}"
        );
    }
    // Acknowledged loads survive kill -9.
    server.kill();
    let db = open(&dbdir);
    let t = db.table("t").unwrap();
    assert_eq!(
        t.get(&Get::new("n")).unwrap().value(b"b", b"q").unwrap(),
        b"remote"
    );
    assert_eq!(
        t.get(&Get::new("q")).unwrap().value(b"a", b"q").unwrap(),
        b"embedded"
    );
}

/// HBase's own bulk load tool (BulkLoadHFilesTool, run from HBase 2.6's artifacts)
/// against a Cellar server through the RPC registry: it groups and splits the files
/// itself and calls PrepareBulkLoad / BulkLoadHFile / CleanupBulkLoad.
#[test]
fn hbase_bulk_load_tool_loads_into_a_cellar_server() {
    let Some(cp) = common::hbase::oracle_classpath() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dbdir = tmp.path().join("db");
    {
        let db = open(&dbdir);
        let mut f = FamilyDescriptor::new("f");
        f.versions = 10;
        db.create_table_split(
            TableDescriptor::new("hb").with_family(f),
            vec![b"row-00050".to_vec(), b"row-00120".to_vec()],
        )
        .unwrap();
        db.close().unwrap();
    }
    let server = common::server::ServerProcess::start(&dbdir);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hfile/hbase-2.6");
    let input = tmp.path().join("in/f");
    std::fs::create_dir_all(&input).unwrap();
    std::fs::copy(fixtures.join("fast-diff-gz-row.hfile"), input.join("hbase")).unwrap();
    let (code, stdout, stderr) = common::hbase::run_oracle(
        &cp,
        "BulkLoad",
        &[
            "load",
            &server.addr,
            input.parent().unwrap().to_str().unwrap(),
            "hb",
        ],
    );
    let tail: Vec<&str> = stderr.lines().rev().take(40).collect();
    assert!(
        code == 0 && stdout.contains("ALL OK"),
        "{stdout}\n{}",
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    );
    let conn = cellar::client::RemoteConnection::connect(&server.addr).unwrap();
    use cellar::Connection as _;
    let cells: usize = conn
        .table("hb")
        .unwrap()
        .scan(&Scan::new().raw(true).max_versions(100))
        .unwrap()
        .map(|r| r.unwrap().cells.len())
        .sum();
    assert_eq!(cells, 1162);
}

/// `cellar hfile-write`: a sorted CSV (quoted fields, `\xNN` escapes, an empty
/// timestamp) and a TSV become one HFile per family and region, which `cellar
/// bulkload` loads; unsorted input and unknown families are refused by line.
#[test]
fn hfile_write_turns_csv_and_tsv_into_loadable_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dbdir = tmp.path().join("db");
    {
        let db = open(&dbdir);
        db.create_table_split(table("t"), vec![b"m".to_vec()])
            .unwrap();
        db.close().unwrap();
    }
    let db_arg = dbdir.to_str().unwrap();
    let csv = tmp.path().join("in.csv");
    std::fs::write(
        &csv,
        "row,family,qualifier,timestamp,value\n\
         c,a,q,5,\"hello, world\"\n\
         c,a,q,3,older\n\
         c,b,q,,now\n\
         k\\x00z,a,q,1,\\xFF\\x01\n\
         n,a,q,1,north\n\
         z,b,q,2,zed\n",
    )
    .unwrap();
    let out_dir = tmp.path().join("out");
    let out = cellar(&[
        "hfile-write",
        csv.to_str().unwrap(),
        out_dir.to_str().unwrap(),
        "--table",
        "t",
        "--escaped",
        "--db",
        db_arg,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("wrote 6 cells into 4 files"), "{stdout}");
    assert_eq!(std::fs::read_dir(out_dir.join("a")).unwrap().count(), 2);
    assert_eq!(std::fs::read_dir(out_dir.join("b")).unwrap().count(), 2);
    let out = cellar(&["bulkload", out_dir.to_str().unwrap(), "t", "--db", db_arg]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Each file already fits its region: nothing to cut.
    assert!(
        stdout.contains("loaded 6 cells from 4 files into 2 regions (0 files cut"),
        "{stdout}"
    );

    let tsv = tmp.path().join("in.tsv");
    std::fs::write(&tsv, "d\ta\tq\t9\ttabbed\n").unwrap();
    let out_tsv = tmp.path().join("out-tsv");
    let out = cellar(&[
        "hfile-write",
        tsv.to_str().unwrap(),
        out_tsv.to_str().unwrap(),
        "--table",
        "t",
        "--tsv",
        "--db",
        db_arg,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cellar(&["bulkload", out_tsv.to_str().unwrap(), "t", "--db", db_arg]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let db = open(&dbdir);
    let t = db.table("t").unwrap();
    let c = t.get(&Get::new("c").max_versions(5)).unwrap();
    let a: Vec<_> = c
        .cells
        .iter()
        .filter(|x| x.family() == b"a")
        .map(|x| (x.timestamp(), x.value().to_vec()))
        .collect();
    assert_eq!(
        a,
        vec![(5, b"hello, world".to_vec()), (3, b"older".to_vec())]
    );
    let now_cell = c.cells.iter().find(|x| x.family() == b"b").unwrap();
    assert!(now_cell.timestamp() > 1_600_000_000_000);
    let k = t.get(&Get::new(b"k\x00z".to_vec())).unwrap();
    assert_eq!(k.value(b"a", b"q").unwrap(), [0xff, 0x01]);
    let d = t.get(&Get::new("d")).unwrap();
    assert_eq!(d.value(b"a", b"q").unwrap(), b"tabbed");
    db.close().unwrap();

    // Out of order, and a family the table lacks: refused with the line.
    std::fs::write(&csv, "b,a,q,1,x\na,a,q,1,y\n").unwrap();
    let out = cellar(&[
        "hfile-write",
        csv.to_str().unwrap(),
        tmp.path().join("o2").to_str().unwrap(),
        "--table",
        "t",
        "--db",
        db_arg,
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 2") && err.contains("out of order"),
        "{err}"
    );
    std::fs::write(&csv, "a,zz,q,1,x\n").unwrap();
    let out = cellar(&[
        "hfile-write",
        csv.to_str().unwrap(),
        tmp.path().join("o3").to_str().unwrap(),
        "--table",
        "t",
        "--db",
        db_arg,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("line 1") && err.contains("zz"),
        "{err}"
    );
}

/// `cellar hfile-write --parquet`: a Parquet file of row, family, qualifier, timestamp
/// (one null: the write time) and value becomes loadable HFiles, cell for cell.
#[test]
fn hfile_write_reads_parquet() {
    use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
    use parquet::file::properties::WriterProperties;
    use parquet::file::writer::SerializedFileWriter;
    let tmp = tempfile::tempdir().unwrap();
    let dbdir = tmp.path().join("db");
    {
        let db = open(&dbdir);
        db.create_table_split(table("t"), vec![b"m".to_vec()])
            .unwrap();
        db.close().unwrap();
    }
    let path = tmp.path().join("in.parquet");
    let schema = std::sync::Arc::new(
        parquet::schema::parser::parse_message_type(
            "message cells { REQUIRED BYTE_ARRAY row; REQUIRED BYTE_ARRAY family (UTF8); \
             REQUIRED BYTE_ARRAY qualifier; OPTIONAL INT64 timestamp; REQUIRED BYTE_ARRAY value; }",
        )
        .unwrap(),
    );
    let rows = ["c", "c", "p", "z"];
    let fams = ["a", "b", "a", "a"];
    let quals = ["q", "q", "q", "r"];
    let values = ["one", "two", "three", "four"];
    let mut w = SerializedFileWriter::new(
        std::fs::File::create(&path).unwrap(),
        schema,
        std::sync::Arc::new(WriterProperties::builder().build()),
    )
    .unwrap();
    let mut rg = w.next_row_group().unwrap();
    let bytes = |v: &[&str]| v.iter().map(|s| ByteArray::from(*s)).collect::<Vec<_>>();
    for col in [bytes(&rows), bytes(&fams), bytes(&quals)] {
        let mut c = rg.next_column().unwrap().unwrap();
        c.typed::<ByteArrayType>()
            .write_batch(&col, None, None)
            .unwrap();
        c.close().unwrap();
    }
    let mut c = rg.next_column().unwrap().unwrap();
    c.typed::<Int64Type>()
        .write_batch(&[5, 6, 7], Some(&[1, 1, 0, 1]), None)
        .unwrap();
    c.close().unwrap();
    let mut c = rg.next_column().unwrap().unwrap();
    c.typed::<ByteArrayType>()
        .write_batch(&bytes(&values), None, None)
        .unwrap();
    c.close().unwrap();
    rg.close().unwrap();
    w.close().unwrap();

    let out_dir = tmp.path().join("out");
    let d = dbdir.to_str().unwrap();
    let out = cellar(&[
        "hfile-write",
        path.to_str().unwrap(),
        out_dir.to_str().unwrap(),
        "--table",
        "t",
        "--parquet",
        "--db",
        d,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("wrote 4 cells into 3 files"), "{stdout}");
    let out = cellar(&["bulkload", out_dir.to_str().unwrap(), "t", "--db", d]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let db = open(&dbdir);
    let t = db.table("t").unwrap();
    let c = t.get(&Get::new("c")).unwrap();
    assert_eq!(c.value(b"a", b"q").unwrap(), b"one");
    assert_eq!(c.value(b"b", b"q").unwrap(), b"two");
    let p = t.get(&Get::new("p")).unwrap();
    assert_eq!(p.value(b"a", b"q").unwrap(), b"three");
    assert!(
        p.cells[0].timestamp() > 1_600_000_000_000,
        "a null timestamp is the write time"
    );
    assert_eq!(t.get(&Get::new("z")).unwrap().cells[0].timestamp(), 7);
    drop(t);
    db.close().unwrap();
    // Not a Parquet file: refused by name.
    std::fs::write(&path, b"nope").unwrap();
    let out = cellar(&[
        "hfile-write",
        path.to_str().unwrap(),
        tmp.path().join("o2").to_str().unwrap(),
        "--table",
        "t",
        "--parquet",
        "--db",
        d,
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("in.parquet"));
}
