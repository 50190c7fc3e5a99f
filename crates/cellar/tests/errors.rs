#![allow(clippy::unwrap_used)]
//! Errors as a client sees them: each failure carries the HBase exception class a client
//! expects and whether a retry can help, and rows are escaped once in the message.

use cellar::{Database, DbError, Options};
use cellar_api::{Error, ErrorKind, Retry};
use cellar_region::{Config, FamilyDescriptor, Get, Mutation, Put, Scan, TableDescriptor};

fn client_error(e: DbError) -> Error {
    Error::from(e)
}

#[test]
fn failures_map_to_hbase_exceptions_and_retry_advice() {
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = Options::for_dir(tmp.path()).unwrap();
    opts.config = Config {
        max_row_size: 1024,
        keyvalue_max_size: 4096,
        ..Config::default()
    };
    let db = Database::open_with(tmp.path(), opts).unwrap();
    let desc = TableDescriptor::new("t").with_family(FamilyDescriptor::new("f"));
    db.create_table(desc.clone()).unwrap();

    let e = client_error(db.table("nope").err().unwrap());
    assert_eq!(
        e.exception_class(),
        "org.apache.hadoop.hbase.TableNotFoundException"
    );
    assert_eq!(e.retry(), Retry::Never);

    let e = client_error(db.create_table(desc).unwrap_err());
    assert_eq!(e.kind(), ErrorKind::TableExists);

    let t = db.table("t").unwrap();
    let e = client_error(
        t.put(Put::new("r").add_column("nofam", "q", "v"))
            .unwrap_err(),
    );
    assert_eq!(
        e.exception_class(),
        "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException"
    );
    assert!(e.message().contains("nofam"), "{e}");

    // A wide row: RowTooBig, with the row's bytes escaped exactly once.
    let row = b"w\x00\xff".to_vec();
    for i in 0..20 {
        t.put(Put::new(row.clone()).add_column("f", format!("q{i}"), vec![b'x'; 100]))
            .unwrap();
    }
    let e = client_error(t.get(&Get::new(row.clone())).unwrap_err());
    assert_eq!(e.kind(), ErrorKind::RowTooBig);
    assert_eq!(
        e.exception_class(),
        "org.apache.hadoop.hbase.regionserver.RowTooBigException"
    );
    assert!(e.message().contains("w\\x00\\xFF"), "{e}");
    assert!(!e.message().contains("\\\\x"), "escaped twice: {e}");
    assert!(e.kind().do_not_retry());

    // A cell over hbase.server.keyvalue.maxsize.
    let e = client_error(
        t.put(Put::new("big").add_column("f", "q", vec![0u8; 8192]))
            .unwrap_err(),
    );
    assert_eq!(e.kind(), ErrorKind::InvalidRequest);
    assert_eq!(e.retry(), Retry::Never);
    assert!(e.message().contains("big/f:q"), "{e}");

    // A one-row request carrying another row's mutation.
    let e = client_error(
        t.mutate_row(
            b"a",
            &[Mutation::Put(Put::new("b").add_column("f", "q", "v"))],
        )
        .unwrap_err(),
    );
    assert_eq!(e.kind(), ErrorKind::InvalidRequest);

    // A disabled table.
    db.disable_table("t").unwrap();
    let e = client_error(
        db.table("t")
            .and_then(|t| t.get(&Get::new("r")))
            .unwrap_err(),
    );
    assert_eq!(
        e.exception_class(),
        "org.apache.hadoop.hbase.TableNotEnabledException"
    );
    db.enable_table("t").unwrap();

    // A malformed filter string.
    let e = Error::from(cellar_filter::parse_filter("PrefixFilter(").unwrap_err());
    assert_eq!(e.kind(), ErrorKind::InvalidRequest);
    assert_eq!(
        e.exception_class(),
        "org.apache.hadoop.hbase.DoNotRetryIOException"
    );
    let t = db.table("t").unwrap();
    assert!(t.scan(&Scan::new()).is_ok());
}

#[test]
fn a_region_addressed_with_the_wrong_row_says_relocate() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Database::open(tmp.path()).unwrap();
    db.create_table_split(
        TableDescriptor::new("t").with_family(FamilyDescriptor::new("f")),
        vec![b"m".to_vec()],
    )
    .unwrap();
    let t = db.table("t").unwrap();
    let first = t.region_for(b"a").unwrap();
    let e: Error = first
        .put(Put::new("z").add_column("f", "q", "v"))
        .unwrap_err()
        .into();
    assert_eq!(e.kind(), ErrorKind::WrongRegion);
    assert_eq!(e.retry(), Retry::Relocate);
}
