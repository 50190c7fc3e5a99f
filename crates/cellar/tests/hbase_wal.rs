#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HBase's WAL files, read by Cellar entry for entry and cell for cell. The fixtures in
//! testdata/wal/hbase-2.6 were written by HBase 2.6's own WAL writer (plain, compressed
//! with and without tag compression, and with value compression); beside each, the
//! listing HBase's own reader made of it. `cellar wal` must print that listing. When
//! HBase is at hand (compat/hbase built), its reader is run again now, on the fixtures
//! and on torn copies of them, and must agree with Cellar's.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use cellar_wal::hbase::read_hbase_wal;
use common::hbase::{oracle_classpath, run_oracle};

const FIXTURES: [&str; 4] = [
    "plain",
    "compressed",
    "compressed-plain-tags",
    "compressed-values",
];

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/wal/hbase-2.6")
}

fn cellar_wal(file: &Path) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cellar"))
        .arg("wal")
        .arg(file)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_fixture_lists_as_hbase_listed_it() {
    for name in FIXTURES {
        let wal = fixtures().join(format!("{name}.wal"));
        let expected = std::fs::read_to_string(fixtures().join(format!("{name}.txt"))).unwrap();
        let (ok, out, err) = cellar_wal(&wal);
        assert!(ok, "{name}: {err}");
        assert_eq!(out, expected, "{name}");
        let parsed = read_hbase_wal(&std::fs::read(&wal).unwrap(), &wal).unwrap();
        assert!(parsed.trailer && parsed.torn_tail.is_none(), "{name}");
        assert_eq!(parsed.entries.len(), 9, "{name}");
        let cells: usize = parsed.entries.iter().map(|e| e.cells.len()).sum();
        assert_eq!(cells, 3 + 2 + 4 + 3 + 1 + 3 * 120 + 2, "{name}");
    }
    // The header says how each was written.
    let read = |n: &str| {
        let p = fixtures().join(format!("{n}.wal"));
        read_hbase_wal(&std::fs::read(&p).unwrap(), &p)
            .unwrap()
            .header
    };
    let plain = read("plain");
    assert!(!plain.has_compression);
    assert_eq!(plain.writer_class.as_deref(), Some("ProtobufLogWriter"));
    let c = read("compressed");
    assert!(c.has_compression && c.has_tag_compression && !c.has_value_compression);
    assert!(!read("compressed-plain-tags").has_tag_compression);
    assert!(read("compressed-values").has_value_compression);
}

/// A copy of `name`'s fixture cut at `len` bytes (no trailer: a writer that died).
fn torn(dir: &Path, name: &str, len: usize) -> PathBuf {
    let bytes = std::fs::read(fixtures().join(format!("{name}.wal"))).unwrap();
    let p = dir.join(format!("{name}-{len}.wal"));
    std::fs::write(&p, &bytes[..len]).unwrap();
    p
}

#[test]
fn a_torn_tail_drops_only_the_incomplete_entry() {
    let dir = tempfile::tempdir().unwrap();
    for name in FIXTURES {
        let path = fixtures().join(format!("{name}.wal"));
        let full = read_hbase_wal(&std::fs::read(&path).unwrap(), &path).unwrap();
        let last = full.entries.last().unwrap();
        // Without the trailer: every entry, and no torn tail.
        let cut = torn(dir.path(), name, last.end as usize);
        let w = read_hbase_wal(&std::fs::read(&cut).unwrap(), &cut).unwrap();
        assert!(!w.trailer && w.torn_tail.is_none(), "{name}");
        assert_eq!(w.entries.len(), full.entries.len(), "{name}");
        // Inside the last entry: the others, and where the torn one starts.
        let cut = torn(dir.path(), name, (last.offset + last.end) as usize / 2);
        let w = read_hbase_wal(&std::fs::read(&cut).unwrap(), &cut).unwrap();
        assert_eq!(w.entries.len(), full.entries.len() - 1, "{name}");
        assert_eq!(w.torn_tail, Some(last.offset), "{name}");
        let (ok, out, _) = cellar_wal(&cut);
        assert!(ok && out.contains("torn tail at offset"), "{name}");
    }
}

#[test]
fn no_cut_or_damage_panics_or_returns_garbage() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["plain", "compressed"] {
        let path = fixtures().join(format!("{name}.wal"));
        let bytes = std::fs::read(&path).unwrap();
        let full = read_hbase_wal(&bytes, &path).unwrap();
        // Every cut reads a prefix of the entries, whole, or fails with a typed error.
        for len in (0..bytes.len()).step_by(389) {
            match read_hbase_wal(&bytes[..len], &path) {
                Ok(w) => {
                    for (a, b) in w.entries.iter().zip(&full.entries) {
                        assert_eq!(a.cells, b.cells, "{name} cut at {len}");
                    }
                }
                Err(e) => assert!(len < 8, "{name} cut at {len}: {e}"),
            }
        }
        // A flipped byte inside the entries: an error naming the file, or (a byte of a
        // value or timestamp) the same shape of entries; never a panic.
        for at in (20..full.entries.last().unwrap().end as usize).step_by(997) {
            let mut b = bytes.clone();
            b[at] ^= 0x5a;
            let p = dir.path().join(format!("{name}-flip-{at}.wal"));
            if let Err(e) = read_hbase_wal(&b, &p) {
                assert!(e.to_string().contains(&*p.to_string_lossy()), "{e}");
            }
        }
    }
    let not_a_wal = dir.path().join("x.wal");
    std::fs::write(&not_a_wal, b"HFILE, not a WAL").unwrap();
    let (ok, _, err) = cellar_wal(&not_a_wal);
    assert!(!ok && err.contains("not an HBase WAL file"), "{err}");
}

/// HBase's reader, run now: the fixtures list as recorded, and a torn copy lists the
/// same entries in HBase as in Cellar.
#[test]
fn hbase_reads_the_fixtures_and_torn_copies_as_cellar_does() {
    let Some(cp) = oracle_classpath() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for name in FIXTURES {
        let wal = fixtures().join(format!("{name}.wal"));
        let (code, out, err) = run_oracle(&cp, "WalFiles", &["list", wal.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        let expected = std::fs::read_to_string(fixtures().join(format!("{name}.txt"))).unwrap();
        assert_eq!(out, expected, "HBase's reader now, on {name}");

        let full = read_hbase_wal(&std::fs::read(&wal).unwrap(), &wal).unwrap();
        let last = full.entries.last().unwrap();
        let cut = torn(dir.path(), name, (last.offset + last.end) as usize / 2);
        let (code, out, err) = run_oracle(&cp, "WalFiles", &["list", cut.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        let (ok, ours, _) = cellar_wal(&cut);
        assert!(ok);
        assert!(out.contains("torn tail at offset"), "{out}");
        assert_eq!(ours, out, "a torn {name}");
    }
}
