#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Store files both ways, with HBase 2.6's own code as the judge (the programs in
//! `compat/hbase/src/main/java`, run on HBase's class path):
//!
//! - HBase's `HFilePrettyPrinter`, run now on the fixtures HBase's writer made
//!   (testdata/hfile/hbase-2.6), prints what `cellar hfile -p` prints;
//! - the same cells written by Cellar's writer in every data block encoding ×
//!   compression × bloom type, tags compressed and not, are read by HBase's reader
//!   cell for cell, and HBase's reading of Cellar's blooms finds every row, row-column
//!   and row prefix in them.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use cellar_hfile::{
    BloomType, Compression, DataBlockEncoding, HFileReader, HFileWriter, WriterOptions,
};
use cellar_io::LocalFs;
use cellar_types::Cell;

use common::hbase::{oracle_classpath, run_oracle};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hfile/hbase-2.6")
}

fn cellar_print(file: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cellar"))
        .args(["hfile", "-p", "-f"])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `print` output of the oracle: each file's text after its `== FILE` line.
fn split_by_file(out: &str) -> Vec<(String, String)> {
    let mut parts = Vec::new();
    for chunk in out.split("== ").skip(1) {
        let (name, body) = chunk.split_once('\n').unwrap_or((chunk, ""));
        parts.push((name.to_string(), body.to_string()));
    }
    parts
}

#[test]
fn hbase_pretty_printer_and_cellar_print_the_same() {
    let Some(cp) = oracle_classpath() else {
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hfile"))
        .collect();
    files.sort();
    let args: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let mut argv = vec!["print"];
    argv.extend(args.iter().map(String::as_str));
    let (code, out, err) = run_oracle(&cp, "StoreFiles", &argv);
    assert_eq!(code, 0, "{err}");
    let printed = split_by_file(&out);
    assert_eq!(printed.len(), files.len());
    for (name, hbase) in printed {
        let ours = cellar_print(Path::new(&name));
        assert!(
            ours == hbase,
            "{name}: cellar hfile -p differs from HFilePrettyPrinter"
        );
    }
}

/// The fixtures' cells, as Cellar reads them.
fn fixture_cells() -> Vec<Cell> {
    let r = HFileReader::open(&LocalFs, &fixtures().join("none-none-none.hfile"), None).unwrap();
    let mut s = r.scanner();
    let mut out = Vec::new();
    if s.seek_to_first().unwrap() {
        while let Some(c) = s.next_cell().unwrap() {
            out.push(c);
        }
    }
    out
}

#[test]
fn hbase_reads_every_kind_of_file_cellar_writes() {
    let Some(cp) = oracle_classpath() else {
        return;
    };
    let cells = fixture_cells();
    let dir = tempfile::tempdir().unwrap();
    let mut written = Vec::new();
    for encoding in DataBlockEncoding::ALL {
        for compression in [
            Compression::None,
            Compression::Gz,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            for (i, bloom) in [
                BloomType::None,
                BloomType::Row,
                BloomType::RowCol,
                BloomType::RowPrefixFixedLength(8),
            ]
            .into_iter()
            .enumerate()
            {
                let compress_tags = i % 2 == 1;
                let path = dir.path().join(format!(
                    "{}-{}-{i}.hfile",
                    encoding.name(),
                    compression.name()
                ));
                let opts = WriterOptions {
                    block_size: 1024,
                    index_block_max_size: 256,
                    bloom_block_size: 128,
                    compression,
                    encoding,
                    bloom,
                    include_tags: true,
                    compress_tags,
                    create_time: 1_700_000_000_000,
                    ..WriterOptions::default()
                };
                let mut w = HFileWriter::create(&LocalFs, &path, opts).unwrap();
                for c in &cells {
                    w.append(c.clone()).unwrap();
                }
                w.close().unwrap();
                written.push(path);
            }
        }
    }
    let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    // HBase's pretty printer on Cellar's files prints what it printed of its own.
    let want = std::fs::read_to_string(fixtures().join("cells.txt")).unwrap();
    let mut argv = vec!["print"];
    argv.extend(names.iter().map(String::as_str));
    let (code, out, err) = run_oracle(&cp, "StoreFiles", &argv);
    assert_eq!(code, 0, "HBase could not print Cellar's files: {err}");
    let printed = split_by_file(&out);
    assert_eq!(printed.len(), written.len());
    for (name, hbase) in &printed {
        if hbase != &want {
            let first = hbase
                .lines()
                .zip(want.lines())
                .find(|(a, b)| a != b)
                .map(|(a, b)| format!("HBase read: {a}\nwritten:    {b}"));
            panic!("{name}: HBase reads other cells:\n{first:?}");
        }
    }
    // HBase's reader, and its reading of the blooms, on every file.
    let mut argv = vec!["read"];
    argv.extend(names.iter().map(String::as_str));
    let (code, out, err) = run_oracle(&cp, "StoreFiles", &argv);
    let problems: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("MISSING") || l.contains("MISMATCH"))
        .collect();
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!(code, 0, "{err}");
    let blooms = out.lines().filter(|l| l.starts_with("bloom ")).count();
    assert_eq!(blooms, written.len());
    for kind in ["ROW:", "ROWCOL:", "ROWPREFIX_FIXED_LENGTH:", "NONE"] {
        assert!(
            out.lines().any(|l| l.starts_with(&format!("bloom {kind}"))),
            "no {kind} bloom checked"
        );
    }
}
