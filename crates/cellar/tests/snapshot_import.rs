#![allow(clippy::unwrap_used)]
//! Importing snapshots HBase exported: the two real exports of
//! `testdata/hbase-snapshots` (HBase 1.x files with the legacy comparator name, HBase 2.x
//! files, one table SNAPPY-compressed) and the export of a split table with reference
//! files (`testdata/snapshot/hbase-2.6`). Afterwards the table has the snapshot's region
//! boundaries, and each region holds exactly the cells HBase's snapshot holds for it,
//! with their timestamps. `cellar import-snapshot` does the same from the command line.

use std::path::{Path, PathBuf};

use cellar::hbase_snapshot::read_snapshot;
use cellar::{Database, Options};
use cellar_api::{ErrorKind, Scan};
use cellar_types::{to_string_binary, Cell};

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn open(dir: &Path) -> Database {
    let mut o = Options::for_dir(dir).unwrap();
    o.background = false;
    Database::open_with(dir, o).unwrap()
}

fn show(c: &Cell) -> String {
    format!(
        "{}/{}:{}/{}/{} {}",
        to_string_binary(c.row()),
        to_string_binary(c.family()),
        to_string_binary(c.qualifier()),
        c.timestamp(),
        c.cell_type().name(),
        to_string_binary(c.value())
    )
}

/// Imports and checks region by region against HBase's snapshot; returns the cells.
fn import_and_compare(db: &Database, root: &Path, name: &str, table: &str) -> usize {
    let report = db.import_snapshot(root, name, Some(table)).unwrap();
    assert_eq!(report.table, table);
    let snap = read_snapshot(root, name).unwrap();
    let serving: Vec<_> = snap
        .regions
        .iter()
        .filter(|r| !(r.split && r.info.offline))
        .collect();
    let regions = db.list_regions(table).unwrap();
    assert_eq!(regions.len(), serving.len(), "{name}: regions");
    assert_eq!(report.regions, serving.len());
    let t = db.table(table).unwrap();
    let mut total = 0;
    for (r, ours) in serving.iter().zip(&regions) {
        assert_eq!(ours.info.start, r.info.start, "{name}");
        assert_eq!(ours.info.end, r.info.end, "{name}");
        let want: Vec<String> = snap.cells(r).unwrap().iter().map(show).collect();
        let got: Vec<String> = t
            .scan(
                &Scan::new()
                    .start_row(r.info.start.clone())
                    .stop_row(r.info.end.clone())
                    .raw(true)
                    .max_versions(1000),
            )
            .unwrap()
            .flat_map(|x| x.unwrap().cells)
            .map(|c| show(&c))
            .collect();
        assert_eq!(
            got,
            want,
            "{name}: region [{}, {})",
            to_string_binary(&r.info.start),
            to_string_binary(&r.info.end)
        );
        total += got.len();
    }
    assert_eq!(report.cells as usize, total);
    total
}

#[test]
fn hbase_1x_export_imports_cell_for_cell() {
    let tmp = tempfile::tempdir().unwrap();
    let db = open(tmp.path());
    let root = testdata().join("hbase-snapshots/beam-import-test");
    assert_eq!(import_and_compare(&db, &root, "test-snapshot", "beam"), 100);
    // The manifest names ten regions; one of them has no store file.
    assert_eq!(db.list_regions("beam").unwrap().len(), 10);
    // Every row holds value<row>, and Gets (through the files' blooms) find each.
    let t = db.table("beam").unwrap();
    let rows: Vec<_> = t.scan(&Scan::new()).unwrap().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 100);
    for r in rows {
        let want = [b"value".as_slice(), &r.row].concat();
        assert_eq!(r.value(b"cf", b"a"), Some(want.as_slice()));
        let g = t.get(&cellar_api::Get::new(r.row.clone())).unwrap();
        assert_eq!(g.value(b"cf", b"a"), Some(want.as_slice()));
    }
}

#[test]
fn hbase_2x_exports_import_including_snappy() {
    let tmp = tempfile::tempdir().unwrap();
    let db = open(tmp.path());
    let root = testdata().join("hbase-snapshots/endtoend-it/data");
    // Each manifest names 10 regions of one file of 10 cells; the archive holds 10 more
    // region directories per table (the same rows again) that no manifest names, and
    // that an import, like HBase's restore, leaves alone.
    assert_eq!(
        import_and_compare(&db, &root, "test-snapshot", "plain"),
        100
    );
    assert_eq!(
        import_and_compare(&db, &root, "test-snappy-snapshot", "snappy"),
        100
    );
    assert_eq!(db.list_regions("snappy").unwrap().len(), 10);
    // The schema came along: the family's compression too.
    let (desc, enabled) = db.master().describe("snappy").unwrap();
    assert!(enabled);
    assert_eq!(desc.families.len(), 1);
}

#[test]
fn a_split_table_with_references_imports_cell_for_cell() {
    let tmp = tempfile::tempdir().unwrap();
    let db = open(tmp.path());
    let root = testdata().join("snapshot/hbase-2.6/export");
    let n = import_and_compare(&db, &root, "split_t_snapshot", "split_copy");
    assert!(n > 0);
    let report_regions = db.list_regions("split_copy").unwrap();
    assert_eq!(report_regions.len(), 4);
    // Importing again under the same name fails and leaves the first import alone.
    let e = db
        .import_snapshot(&root, "split_t_snapshot", Some("split_copy"))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TableExists, "{e}");
    assert_eq!(db.list_regions("split_copy").unwrap().len(), 4);
    // Without --table: the snapshot's own table name.
    let r = db.import_snapshot(&root, "split_t_snapshot", None).unwrap();
    assert_eq!(r.table, "split_t");
    // The daughters' references were rewritten as the halves they stand for.
    assert!(r.halves >= 3, "{r:?}");
    // A snapshot that is not there.
    assert!(db.import_snapshot(&root, "nope", Some("x")).is_err());
    assert!(!db.master().table_exists("x"));
}

#[test]
fn the_import_snapshot_command() {
    let tmp = tempfile::tempdir().unwrap();
    let root = testdata().join("hbase-snapshots/beam-import-test");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cellar"))
        .args([
            "import-snapshot",
            root.to_str().unwrap(),
            "--snapshot",
            "test-snapshot",
            "--table",
            "imported",
            "--db",
            tmp.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(
            "as table imported: 10 regions, 9 store files (0 reference halves rewritten), 100 cells"
        ),
        "{stdout}"
    );
    let db = open(tmp.path());
    assert_eq!(db.list_regions("imported").unwrap().len(), 10);
}
