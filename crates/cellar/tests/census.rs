#![allow(clippy::unwrap_used)]
//! `cellar census`: per-row cells and bytes over a snapshot, checked against an exact
//! count from a full raw scan of the same table (versions and delete markers included,
//! families summed, a split table whose daughters read through references), and on
//! HBase's own exports against what the snapshot reader lists.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cellar::hbase_snapshot::read_snapshot;
use cellar::{Database, Options};
use cellar_api::{Delete, FamilyDescriptor, Put, Scan, TableDescriptor};
use cellar_types::to_string_binary;

fn cellar(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cellar"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// row -> (cells, formula bytes) from a CSV of every row.
fn rows_csv(path: &Path) -> BTreeMap<String, (u64, u64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("row,cells,bytes,serialized_bytes"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.rsplitn(4, ',').collect();
            (
                f[3].to_string(),
                (f[2].parse().unwrap(), f[1].parse().unwrap()),
            )
        })
        .collect()
}

#[test]
fn census_matches_a_full_raw_scan() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let expected = {
        let mut o = Options::for_dir(&dir).unwrap();
        o.background = false;
        let db = Database::open_with(&dir, o).unwrap();
        let mut f = FamilyDescriptor::new("f");
        f.versions = 3;
        db.create_table_split(
            TableDescriptor::new("t")
                .with_family(f)
                .with_family(FamilyDescriptor::new("g")),
            vec![b"m".to_vec()],
        )
        .unwrap();
        let t = db.table("t").unwrap();
        for i in 0..60u32 {
            let row = format!("{}{i:03}", if i % 2 == 0 { "a" } else { "p" });
            for v in 0..(1 + i % 3) {
                t.put(Put::new(row.as_str()).add_column_at(
                    "f",
                    "q",
                    100 + v as i64,
                    format!("v{v}-{i}").as_str(),
                ))
                .unwrap();
            }
            t.put(Put::new(row.as_str()).add_column("g", "x", "y"))
                .unwrap();
        }
        for q in 0..500 {
            t.put(Put::new("a-wide").add_column("f", format!("c{q:04}").as_str(), "w"))
                .unwrap();
        }
        t.put(Put::new("z\x00bin").add_column("g", "x", "\x01"))
            .unwrap();
        t.delete(Delete::new("a010").add_family("g")).unwrap();
        db.flush("t").unwrap();
        // A split through the data: the daughters read the parent's files by reference.
        db.split("t", Some(b"c")).unwrap();
        let mut exact: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        let scan = Scan::new().raw(true).max_versions(u32::MAX);
        for r in db.table("t").unwrap().scan(&scan).unwrap() {
            let r = r.unwrap();
            for c in &r.cells {
                let e = exact.entry(to_string_binary(&r.row)).or_default();
                e.0 += 1;
                e.1 +=
                    (c.row().len() + c.family().len() + c.qualifier().len() + c.value().len() + 20)
                        as u64;
            }
        }
        db.close().unwrap();
        exact
    };
    let rows = tmp.path().join("rows.csv");
    let d = dir.to_str().unwrap();
    let (code, out, err) = cellar(&[
        "census",
        "t",
        "--db",
        d,
        "--rows",
        rows.to_str().unwrap(),
        "--top",
        "3",
        "--threads",
        "2",
        "--quiet",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(rows_csv(&rows), expected);
    let total: u64 = expected.values().map(|v| v.0).sum();
    assert!(
        err.contains(&format!(
            "3 regions, {} rows, {total} cells",
            expected.len()
        )),
        "{err}"
    );
    // The heaviest rows, by bytes and by cells: the wide one first.
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("by,rank,row,cells,bytes,serialized_bytes")
    );
    assert!(
        lines.next().unwrap().starts_with("bytes,1,a-wide,500,"),
        "{out}"
    );
    assert!(out.contains("\ncells,1,a-wide,500,"), "{out}");
    // The snapshot it took is gone again; the table is as it was.
    let (code, out, _) = cellar(&["census", "t", "--db", d, "--format", "json", "--quiet"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("{\"table\":\"t\","), "{out}");
    assert!(
        out.contains("\"top_by_bytes\":[{\"row\":\"a-wide\",\"cells\":500,"),
        "{out}"
    );
    let db = Database::open(&dir).unwrap();
    assert!(db.master().list_snapshots().unwrap().is_empty());
    db.close().unwrap();
}

/// HBase's exports: the census counts what the snapshot reader reads, region for region.
#[test]
fn census_reads_hbase_exports() {
    for (root, name) in [
        ("hbase-snapshots/beam-import-test", "test-snapshot"),
        ("hbase-snapshots/endtoend-it/data", "test-snappy-snapshot"),
        ("snapshot/hbase-2.6/export", "split_t_snapshot"),
    ] {
        let root = testdata().join(root);
        let snap = read_snapshot(&root, name).unwrap();
        let mut exact: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for r in cellar::census::serving_regions(&snap) {
            for c in snap.cells(r).unwrap() {
                let e = exact.entry(to_string_binary(c.row())).or_default();
                e.0 += 1;
                e.1 +=
                    (c.row().len() + c.family().len() + c.qualifier().len() + c.value().len() + 20)
                        as u64;
            }
        }
        let tmp = tempfile::tempdir().unwrap();
        let rows = tmp.path().join("rows.csv");
        let (code, _, err) = cellar(&[
            "census",
            "x",
            "--dir",
            root.to_str().unwrap(),
            "--snapshot",
            name,
            "--rows",
            rows.to_str().unwrap(),
            "--quiet",
        ]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(rows_csv(&rows), exact, "{name}");
    }
}

/// Census, large-row tracking and `hfile -s` count a row's bytes the same way (HBase's
/// serialized size): on one flushed file, the three agree on the wide row.
#[test]
fn census_tracking_and_hfile_stats_agree() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("cellar.toml"),
        "\"cellar.largerow.watch.bytes\" = 10000\n",
    )
    .unwrap();
    {
        let mut o = Options::for_dir(&dir).unwrap();
        o.background = false;
        let db = Database::open_with(&dir, o).unwrap();
        db.create_table(TableDescriptor::new("t").with_family(FamilyDescriptor::new("f")))
            .unwrap();
        let t = db.table("t").unwrap();
        for q in 0..400 {
            t.put(Put::new("wide").add_column("f", format!("q{q:04}").as_str(), vec![7u8; 40]))
                .unwrap();
        }
        for r in 0..50 {
            t.put(Put::new(format!("n{r:03}")).add_column("f", "q", "v"))
                .unwrap();
        }
        db.flush("t").unwrap();
        db.close().unwrap();
    }
    let d = dir.to_str().unwrap();
    // Tracking: the entry of cellar:large_rows.
    let tracked = {
        let db = Database::open(&dir).unwrap();
        let e = cellar::large_rows::read(db.connection(), Some("t")).unwrap();
        db.close().unwrap();
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].row, b"wide");
        e[0].bytes
    };
    // Census: the row's serialized bytes.
    let (code, out, err) = cellar(&["census", "t", "--db", d, "--top", "1", "--quiet"]);
    assert_eq!(code, 0, "{err}");
    let line = out.lines().nth(1).unwrap();
    assert!(line.starts_with("bytes,1,wide,400,"), "{out}");
    let census: u64 = line.rsplit(',').next().unwrap().parse().unwrap();
    // hfile -s on the store file.
    let mut files = Vec::new();
    let mut stack = vec![dir.join("data/default/t")];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().unwrap().to_str().unwrap().len() == 32 {
                files.push(p);
            }
        }
    }
    assert_eq!(files.len(), 1, "{files:?}");
    let (code, out, err) = cellar(&["hfile", "-s", "-f", files[0].to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Key of biggest row: wide\n"), "{out}");
    let stats: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix("Size of biggest row (bytes): "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!((tracked, census), (stats, stats));
    assert_eq!(stats, 400 * (20 + 4 + 1 + 5 + 40));
}
