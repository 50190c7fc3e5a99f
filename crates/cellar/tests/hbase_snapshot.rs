#![allow(clippy::unwrap_used, clippy::expect_used)]
//! An exported snapshot of a split table, made by HBase 2.6 (testdata/snapshot/hbase-2.6,
//! see its PROVENANCE.md): Cellar reads its manifest, its regions and every store file
//! (reference halves of a split included) cell for cell, and must list what HBase's
//! own snapshot reader listed. When HBase is at hand, its reader runs again now.

mod common;

use std::path::PathBuf;

use cellar::hbase_snapshot::{listing, read_snapshot};
use common::hbase::{oracle_classpath, run_oracle, HBase};

const NAME: &str = "split_t_snapshot";

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/snapshot/hbase-2.6")
}

#[test]
fn the_exported_snapshot_lists_as_hbase_listed_it() {
    let snap = read_snapshot(&fixture().join("export"), NAME).unwrap();
    let expected = std::fs::read_to_string(fixture().join("listing.txt")).unwrap();
    assert_eq!(listing(&snap).unwrap(), expected);
    // Four regions serve the table; the split parent stays in the manifest.
    assert_eq!(snap.regions.iter().filter(|r| !r.info.offline).count(), 4);
    assert!(snap.regions.iter().any(|r| r.info.offline));
}

#[test]
fn hbase_reads_the_export_as_recorded() {
    let Some(cp) = oracle_classpath() else {
        return;
    };
    let export = fixture().join("export");
    let (code, out, err) = run_oracle(
        &cp,
        "SnapshotFixture",
        &["list", export.to_str().unwrap(), NAME],
    );
    assert_eq!(code, 0, "{err}");
    let expected = std::fs::read_to_string(fixture().join("listing.txt")).unwrap();
    assert_eq!(out, expected);
}

/// Makes the fixture again: `cargo test -p cellar --test hbase_snapshot -- --ignored`.
#[test]
#[ignore = "regenerates testdata/snapshot/hbase-2.6 from a running HBase"]
fn make_the_fixture() {
    let Some(cp) = oracle_classpath() else {
        return;
    };
    let hbase = HBase::start();
    let out = tempfile::tempdir().unwrap();
    let export = out.path().join("export");
    let (code, _, err) = run_oracle(
        &cp,
        "SnapshotFixture",
        &[
            "make",
            &hbase.quorum,
            hbase.dir.path().join("root").to_str().unwrap(),
            export.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (code, listing, err) = run_oracle(
        &cp,
        "SnapshotFixture",
        &["list", export.to_str().unwrap(), NAME],
    );
    assert_eq!(code, 0, "{err}");
    let dest = fixture();
    let _ = std::fs::remove_dir_all(dest.join("export"));
    std::fs::create_dir_all(&dest).unwrap();
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(&export)
        .arg(dest.join("export"))
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::write(dest.join("listing.txt"), listing).unwrap();
}

#[test]
fn a_damaged_export_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("export");
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(fixture().join("export"))
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    // An unknown snapshot, and a name that is not one.
    assert!(read_snapshot(&copy, "nope").is_err());
    assert!(read_snapshot(&copy, "../x").is_err());
    // A manifest cut short.
    let manifest = copy
        .join(".hbase-snapshot")
        .join(NAME)
        .join("data.manifest");
    let bytes = std::fs::read(&manifest).unwrap();
    std::fs::write(&manifest, &bytes[..bytes.len() / 2]).unwrap();
    let e = read_snapshot(&copy, NAME).unwrap_err();
    assert!(e.to_string().contains("data.manifest"), "{e}");
    std::fs::write(&manifest, &bytes).unwrap();
    // A store file missing: the regions that need it fail, naming it.
    let snap = read_snapshot(&copy, NAME).unwrap();
    let region = snap
        .regions
        .iter()
        .find(|r| r.info.start.is_empty())
        .unwrap();
    let (family, files) = &region.families[0];
    let gone = copy
        .join("archive/data/default/split_t")
        .join(&region.info.encoded)
        .join(String::from_utf8_lossy(family).as_ref())
        .join(&files[0].name);
    std::fs::remove_file(&gone).unwrap();
    let e = snap.cells(region).unwrap_err();
    assert!(e.to_string().contains(&files[0].name), "{e}");
    assert!(listing(&snap).is_err());
    // The other regions still read.
    for r in snap.regions.iter().filter(|r| !r.info.start.is_empty()) {
        snap.cells(r).unwrap();
    }
}
