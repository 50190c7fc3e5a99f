//! `cellar hfile` end to end: on a Cellar file with a wide row, and on HBase's files.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use cellar_hfile::{Compression, DataBlockEncoding, HFileWriter, WriterOptions};
use cellar_io::LocalFs;
use cellar_types::Cell;

fn cellar(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cellar"))
        .arg("hfile")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/hfile/hbase-2.4")
        .join(name)
}

/// 300 narrow rows and one wide row of 5000 cells, with binary bytes in it.
fn write_wide(path: &Path) {
    write_wide_with(path, Compression::Zstd);
}

fn write_wide_with(path: &Path, compression: Compression) {
    let opts = WriterOptions {
        encoding: DataBlockEncoding::FastDiff,
        compression,
        block_size: 4096,
        ..WriterOptions::default()
    };
    let mut w = HFileWriter::create(&LocalFs, path, opts).unwrap();
    let mut rows: Vec<Vec<u8>> = (0..300)
        .map(|i| format!("user{i:04}").into_bytes())
        .collect();
    rows.push(b"user0150\x00wide".to_vec());
    rows.sort();
    for row in rows {
        let n = if row.ends_with(b"wide") { 5000 } else { 3 };
        for q in 0..n {
            let cell = Cell::put(
                row.clone(),
                &b"m"[..],
                format!("q{q:05}"),
                1000 + q as i64,
                vec![7u8; 10],
            )
            .unwrap();
            w.append(cell.with_seq_id(1)).unwrap();
        }
    }
    w.close().unwrap();
}

#[test]
fn stats_find_the_wide_row() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.hfile");
    write_wide(&path);
    let (code, out, err) = cellar(&["-s", "-v", "-f", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Key of biggest row: user0150\\x00wide\n"),
        "{out}"
    );
    assert!(out.contains("Size of biggest row (columns): 5000"), "{out}");
    assert!(out.contains("Scanned kv count -> 5900"), "{out}");
    assert!(
        out.contains("Row size (columns): \n               min = 3\n               max = 5000"),
        "{out}"
    );
    // HBase's serialized size: no tag bytes for cells without tags.
    let row_bytes = 5000 * (8 + (2 + 13 + 1 + 1 + 6 + 9) + 10);
    assert!(
        out.contains(&format!("Size of biggest row (bytes): {row_bytes}")),
        "{out}"
    );
}

#[test]
fn print_keys_values_and_one_row() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.hfile");
    write_wide(&path);
    let p = path.to_str().unwrap();
    let (code, out, _) = cellar(&["-p", "-w", "user0007", "-f", p]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "K: user0007/m:q00000/1000/Put/vlen=10/seqid=1 V: \\x07\\x07\\x07\\x07\\x07\\x07\\x07\\x07\\x07\\x07\n\
         K: user0007/m:q00001/1001/Put/vlen=10/seqid=1 V: \\x07\\x07\\x07\\x07\\x07\\x07\\x07\\x07\\x07\\x07\n\
         K: user0007/m:q00002/1002/Put/vlen=10/seqid=1 V: \\x07\\x07\\x07\\x07\\x07\\x07\\x07\\x07\\x07\\x07\n\
         Scanned kv count -> 3\n"
    );
    let (_, out, _) = cellar(&["-e", "-w", "user0150\\x00wide", "-f", p]);
    assert_eq!(out.lines().count(), 5001);
    assert!(out.starts_with("K: user0150\\x00wide/m:q00000/1000/Put/vlen=10/seqid=1\n"));
    let (code, out, _) = cellar(&["-k", "-f", p]);
    assert_eq!((code, out.as_str()), (0, ""));
}

#[test]
fn meta_and_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.hfile");
    write_wide(&path);
    let (code, out, _) = cellar(&["-m", "-b", "-f", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    for needle in [
        "compressionCodec=ZSTD",
        "entryCount=5900",
        "majorVersion=3, minorVersion=3",
        "DATA_BLOCK_ENCODING = FAST_DIFF",
        "MAX_SEQ_ID_KEY = 1",
        "TIMERANGE = 1000....5999",
        "Comparator: ByteArrayComparator",
        "No of Keys in bloom: 301",
        "Mid-key: ",
        "Block Index: 1 level(s)",
        "[blockType=DATABLKE, fileOffset=0,",
        "[blockType=FILEINF2,",
        "[blockType=BLMFMET2,",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
}

#[test]
fn works_on_hbase_files() {
    let f = fixture("hudi_1_0_hbase_2_4_13_1KB_GZ_10000_large_keys_deep_index.hfile");
    let (code, out, _) = cellar(&["-s", "-m", "-k", "-f", f.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(
        out.contains(&format!(
            "Key of biggest row: hudi-key-{}-000000000\n",
            "a".repeat(100)
        )),
        "{out}"
    );
    assert!(out.contains("numDataIndexLevels=3"));
    let f = fixture("hudi_1_0_hbase_2_4_9_no_entry.hfile");
    let (code, out, _) = cellar(&["-s", "-f", f.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.contains("no data available for statistics"));
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk");
    std::fs::write(&junk, vec![0xAB; 5000]).unwrap();
    let (code, _, err) = cellar(&["-s", "-f", junk.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("not a store file"), "{err}");
    let (code, _, err) = cellar(&["-f", dir.path().join("missing").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("not found"), "{err}");
    let (code, _, _) = cellar(&[]);
    assert_eq!(code, 2);
}

/// HBase 2.6's writer made one set of cells in every encoding × compression × bloom
/// (testdata/hfile/hbase-2.6/PROVENANCE.md); `cells.txt` is its HFilePrettyPrinter's
/// `-p` output for each of them, tags included. `cellar hfile -p` prints exactly that.
#[test]
fn prints_hbase_26_files_as_hbase_does() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hfile/hbase-2.6");
    let want = std::fs::read_to_string(dir.join("cells.txt")).unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hfile"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 100);
    for f in files {
        let (code, out, err) = cellar(&["-p", "-f", f.to_str().unwrap()]);
        assert_eq!(code, 0, "{}: {err}", f.display());
        if out != want {
            let first = out
                .lines()
                .zip(want.lines())
                .find(|(a, b)| a != b)
                .map(|(a, b)| format!("cellar: {a}\nHBase:  {b}"));
            panic!("{} prints differently:\n{first:?}", f.display());
        }
    }
}

/// The numbers of one statistic block of `-s` output ("Row size (bytes)": min, max,
/// count), whatever the indentation.
fn stat(out: &str, name: &str) -> Vec<(String, String)> {
    let mut lines = out
        .lines()
        .skip_while(|l| l.trim().trim_end_matches(':') != name);
    lines.next();
    lines
        .take_while(|l| l.starts_with("    "))
        .filter_map(|l| l.trim().split_once(" = "))
        .filter(|(k, _)| ["min", "max", "count"].contains(k))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// HBase's own HFilePrettyPrinter and `cellar hfile -s` on the same files — one Cellar
/// wrote (no tags) and one HBase wrote: the same biggest row, and the same exact
/// figures of every statistic (sizes counted as HBase counts them).
#[test]
fn stats_match_hbases_pretty_printer() {
    let Some(cp) = common::hbase::oracle_classpath() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ours = dir.path().join("wide.hfile");
    // GZ: HBase's own Java codec (its ZSTD needs a native library).
    write_wide_with(&ours, Compression::Gz);
    let theirs = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/hfile/hbase-2.6/diff-gz-row.hfile")
        .canonicalize()
        .unwrap();
    for f in [ours, theirs] {
        let path = f.to_str().unwrap();
        let (code, hbase, err) = common::hbase::run_class(
            &cp,
            "org.apache.hadoop.hbase.io.hfile.HFilePrettyPrinter",
            &["-s", "-f", &format!("file://{path}")],
        );
        assert_eq!(code, 0, "{err}");
        let (code, cellar_out, err) = cellar(&["-s", "-f", path]);
        assert_eq!(code, 0, "{err}");
        let biggest = |o: &str| {
            o.lines()
                .find(|l| l.starts_with("Key of biggest row:"))
                .map(str::to_string)
        };
        assert!(biggest(&hbase).is_some(), "{hbase}");
        assert_eq!(biggest(&cellar_out), biggest(&hbase), "{path}");
        for name in [
            "Key length",
            "Val length",
            "Row size (bytes)",
            "Row size (columns)",
        ] {
            let h = stat(&hbase, name);
            assert_eq!(h.len(), 3, "{name} in {hbase}");
            assert_eq!(stat(&cellar_out, name), h, "{name} of {path}");
        }
    }
}
