//! Store files of two real exported HBase snapshots (see
//! testdata/hbase-snapshots/PROVENANCE.md): HBase 1.x files (HFile v3.0, the legacy
//! comparator name `KeyValue$KeyComparator`, ROW blooms) and HBase 2.x files (v3.3,
//! uncompressed and SNAPPY). Every file opens, holds the cells the provenance lists, and
//! answers seeks and bloom checks.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use cellar_hfile::{BloomType, Compression, HFileReader};
use cellar_io::LocalFs;
use cellar_types::{Cell, CellType, KeyRef};

fn testdata() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hbase-snapshots")
}

/// The store files under `dir` (`…/<region>/<family>/<file>`), sorted.
fn store_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn cells(r: &HFileReader) -> Vec<Cell> {
    let mut s = r.scanner();
    let mut out = Vec::new();
    if s.seek_to_first().unwrap() {
        while let Some(c) = s.next_cell().unwrap() {
            out.push(c);
        }
    }
    out
}

/// Opens every file of a table and checks the provenance's facts; returns the rows.
fn check_table(dir: &Path, files: usize, compression: Compression, minor: u32) -> Vec<u64> {
    let paths = store_files(dir);
    assert_eq!(paths.len(), files, "{}", dir.display());
    let mut rows = Vec::new();
    for p in &paths {
        let r = HFileReader::open(&LocalFs, p, None).unwrap_or_else(|e| panic!("{e}"));
        let t = r.trailer();
        assert_eq!(
            (t.major_version, t.minor_version),
            (3, minor),
            "{}",
            p.display()
        );
        assert_eq!(r.compression(), compression);
        assert!(
            matches!(r.bloom(), Some((BloomType::Row, _))),
            "{}",
            p.display()
        );
        let cs = cells(&r);
        assert_eq!(cs.len() as u64, r.entry_count());
        for c in &cs {
            let row = std::str::from_utf8(c.row()).unwrap();
            assert_eq!(c.family(), b"cf");
            assert_eq!(c.qualifier(), b"a");
            assert_eq!(c.cell_type(), CellType::Put);
            let n: u64 = row.parse().unwrap();
            assert_eq!(c.value(), format!("value{n}").as_bytes());
            assert!(c.seq_id() > 0, "sequence ids are kept: {c:?}");
            // The bloom knows every row it holds.
            assert!(r.might_contain_row(c.row()).unwrap());
            // A seek to the row lands on it.
            let mut s = r.scanner();
            assert!(s.seek(&KeyRef::first_on_row(c.row())).unwrap());
            assert_eq!(s.current().map(|x| x.row()), Some(c.row()));
            rows.push(n);
        }
    }
    rows.sort();
    rows
}

#[test]
fn hbase_1_files_with_the_legacy_comparator_open() {
    let dir = testdata().join("beam-import-test/archive/data/default/test");
    let one = store_files(&dir).remove(0);
    let r = HFileReader::open(&LocalFs, &one, None).unwrap();
    assert_eq!(
        r.trailer().comparator_class_name,
        "org.apache.hadoop.hbase.KeyValue$KeyComparator"
    );
    let rows = check_table(&dir, 9, Compression::None, 0);
    assert_eq!(rows, (1..=100).collect::<Vec<_>>());
    // Eleven or twelve cells per file.
    for p in store_files(&dir) {
        let n = HFileReader::open(&LocalFs, &p, None).unwrap().entry_count();
        assert!((11..=12).contains(&n), "{} has {n}", p.display());
    }
}

#[test]
fn hbase_2_files_plain_and_snappy_open() {
    for (table, compression) in [
        ("test-table", Compression::None),
        ("test-snappy-table", Compression::Snappy),
    ] {
        let dir = testdata()
            .join("endtoend-it/data/archive/data/default")
            .join(table);
        // Rows "00".."99", each in the files of two regions.
        let rows = check_table(&dir, 20, compression, 3);
        let want: Vec<u64> = (0..100).flat_map(|n| [n, n]).collect();
        assert_eq!(rows, want, "{table}");
        for p in store_files(&dir) {
            let r = HFileReader::open(&LocalFs, &p, None).unwrap();
            assert_eq!(r.entry_count(), 10);
            assert_eq!(
                r.trailer().comparator_class_name,
                "org.apache.hadoop.hbase.KeyValue$KVComparator"
            );
            // HBase 2 writes TIMERANGE as two longs (HBASE-21012).
            let tr = r
                .file_info()
                .get(cellar_hfile::file_info::TIMERANGE)
                .unwrap();
            assert_eq!(tr.len(), 16);
            let (min, max) = r.file_info().time_range().unwrap();
            assert!(cells(&r)
                .iter()
                .all(|c| (min..=max).contains(&c.timestamp())));
        }
    }
}

/// The root index of a one-block HBase file counts its payload only (30 bytes here, as
/// HBase's trailer says); Cellar writing the same cells the same way says the same.
#[test]
fn uncompressed_index_size_matches_hbase() {
    let dir = testdata().join("endtoend-it/data/archive/data/default/test-snappy-table");
    let p = store_files(&dir).remove(0);
    let hbase = HFileReader::open(&LocalFs, &p, None).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("copy");
    let opts = cellar_hfile::WriterOptions {
        compression: Compression::Snappy,
        bloom: BloomType::Row,
        ..cellar_hfile::WriterOptions::default()
    };
    let mut w = cellar_hfile::HFileWriter::create(&LocalFs, &out, opts).unwrap();
    for c in cells(&hbase) {
        w.append(c).unwrap();
    }
    w.close().unwrap();
    let ours = HFileReader::open(&LocalFs, &out, None).unwrap();
    assert_eq!(
        ours.trailer().uncompressed_data_index_size,
        hbase.trailer().uncompressed_data_index_size
    );
    assert_eq!(hbase.trailer().uncompressed_data_index_size, 30);
}
