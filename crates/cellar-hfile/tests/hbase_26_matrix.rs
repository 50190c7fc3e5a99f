//! The HFiles HBase 2.6.4's own writer made of one set of cells in every data block
//! encoding × compression × bloom type, with tags compressed and not (see
//! testdata/hfile/hbase-2.6/PROVENANCE.md): every file opens, holds the same cells as
//! every other (the listing in `cells.txt` is checked cell for cell by the `cellar
//! hfile -p` test), finds each of its cells by seeking, and its blooms — compound,
//! several chunks — never deny a row, row-column or row prefix it holds.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use cellar_hfile::{BlockCache, BloomType, Compression, DataBlockEncoding, HFileReader};
use cellar_io::LocalFs;
use cellar_types::{Cell, CellType, KeyRef};

const CELLS: usize = 1162;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hfile/hbase-2.6")
}

fn files() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hfile"))
        .collect();
    out.sort();
    out
}

fn all_cells(r: &HFileReader) -> Vec<Cell> {
    let mut s = r.scanner();
    let mut out = Vec::new();
    if s.seek_to_first().unwrap() {
        while let Some(c) = s.next_cell().unwrap() {
            out.push(c);
        }
    }
    out
}

/// The cell with its tags and sequence id, for comparing files.
fn full(c: &Cell) -> (Cell, Vec<u8>, u64) {
    (c.clone(), c.tags().to_vec(), c.seq_id())
}

#[test]
fn every_file_of_the_matrix_holds_the_same_cells() {
    let files = files();
    assert_eq!(files.len(), 100, "5 encodings x 5 compressions x 4 blooms");
    let mut reference: Option<Vec<(Cell, Vec<u8>, u64)>> = None;
    let mut seen = BTreeSet::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let r = HFileReader::open(&LocalFs, f, Some(Arc::new(BlockCache::new(4 << 20))))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let cells = all_cells(&r);
        assert_eq!(cells.len(), CELLS, "{name}");
        assert_eq!(r.entry_count(), CELLS as u64, "{name}");
        let cells: Vec<_> = cells.iter().map(full).collect();
        match &reference {
            None => reference = Some(cells),
            Some(want) => assert!(&cells == want, "{name} holds other cells"),
        }
        seen.insert(format!(
            "{:?}",
            (
                r.data_block_encoding().unwrap(),
                r.compression(),
                r.bloom().map(|(t, _)| *t),
            )
        ));
        // Small index blocks: every file's data index has two levels.
        assert_eq!(r.trailer().num_data_index_levels, 2, "{name}");
    }
    // Each combination once, as the names say.
    assert_eq!(seen.len(), 100);
    for e in DataBlockEncoding::ALL {
        for c in [
            Compression::None,
            Compression::Gz,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            for b in [
                None,
                Some(BloomType::Row),
                Some(BloomType::RowCol),
                Some(BloomType::RowPrefixFixedLength(8)),
            ] {
                let key = format!("{:?}", (e, c, b));
                assert!(seen.contains(&key), "{key} missing");
            }
        }
    }
    // Every cell type and tags are there.
    let cells = reference.unwrap();
    for t in [
        CellType::Put,
        CellType::Delete,
        CellType::DeleteColumn,
        CellType::DeleteFamily,
        CellType::DeleteFamilyVersion,
    ] {
        assert!(cells.iter().any(|(c, _, _)| c.cell_type() == t), "{t:?}");
    }
    assert!(cells.iter().filter(|(_, t, _)| !t.is_empty()).count() > 300);
}

#[test]
fn compressed_tags_are_flagged_and_read() {
    for f in files() {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let r = HFileReader::open(&LocalFs, &f, None).unwrap();
        let flag = r
            .file_info()
            .get(b"hfile.TAGS_COMPRESSED")
            .is_some_and(|v| v[0] != 0);
        let compressed_by_name = (name.ends_with("-row.hfile")
            || name.ends_with("-rowprefix-fixed-length.hfile"))
            && !name.starts_with("none-");
        assert_eq!(flag, compressed_by_name, "{name}");
        assert_eq!(r.cell_format().compress_tags, flag, "{name}");
    }
}

#[test]
fn seeks_and_blooms_find_every_cell() {
    for f in files() {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let r = HFileReader::open(&LocalFs, &f, Some(Arc::new(BlockCache::new(4 << 20)))).unwrap();
        let cells = all_cells(&r);
        match r.bloom() {
            Some((BloomType::RowCol, meta)) | Some((BloomType::Row, meta)) => {
                assert!(
                    meta.chunks.len() > 1,
                    "{name}: a compound bloom of one chunk"
                );
            }
            _ => {}
        }
        let mut rows = BTreeSet::new();
        for c in &cells {
            assert!(r.might_contain_row(c.row()).unwrap(), "{name}: row bloom");
            assert!(
                r.might_contain_row_col(c.row(), c.qualifier()).unwrap(),
                "{name}: row-col bloom"
            );
            if matches!(
                c.cell_type(),
                CellType::DeleteFamily | CellType::DeleteFamilyVersion
            ) {
                assert!(r.might_contain_delete_family(c.row()).unwrap(), "{name}");
            }
            rows.insert(c.row().to_vec());
        }
        // A seek to each row's first cell lands on it.
        let mut s = r.scanner();
        for row in &rows {
            assert!(s.seek(&KeyRef::first_on_row(row)).unwrap(), "{name}");
            assert_eq!(s.current().unwrap().row(), row.as_slice(), "{name}");
        }
        // Blooms can deny rows that are not there (not all: false positives).
        if r.bloom().is_some() {
            let denied = (0..200)
                .filter(|i| {
                    let absent = format!("zz-absent-{i:04}");
                    !r.might_contain_row_col(absent.as_bytes(), b"q0").unwrap()
                })
                .count();
            assert!(
                denied > 150,
                "{name}: the bloom denied {denied} of 200 absent rows"
            );
        }
    }
}
