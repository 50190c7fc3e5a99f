//! Real HFiles written by HBase 2.4 (see testdata/hfile/hbase-2.4/PROVENANCE.md):
//! every file opens and returns exactly the cells its provenance describes.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use cellar_hfile::{BlockCache, Compression, DataBlockEncoding, HFileReader};
use cellar_io::LocalFs;
use cellar_types::{Cell, CellType, KeyRef};
use std::sync::Arc;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/hfile/hbase-2.4")
        .join(name)
}

fn open(name: &str) -> HFileReader {
    HFileReader::open(
        &LocalFs,
        &fixture(name),
        Some(Arc::new(BlockCache::new(8 << 20))),
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
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

/// (first row, last row) of every data block.
fn block_bounds(r: &HFileReader) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut b = r.first_data_block().unwrap();
    while let Some(block) = b {
        let first = block.cells.first().unwrap();
        let last = block.cells.last().unwrap();
        out.push((s(first.row()), s(last.row())));
        b = r.next_data_block(block.next_offset()).unwrap();
    }
    out
}

fn s(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn key(i: usize) -> String {
    format!("hudi-key-{i:09}")
}

fn check_plain(name: &str, n: usize) -> HFileReader {
    let r = open(name);
    assert_eq!(r.entry_count(), n as u64, "{name}");
    assert_eq!(r.verify().unwrap(), n as u64, "{name}");
    let cells = all_cells(&r);
    assert_eq!(cells.len(), n);
    for (i, c) in cells.iter().enumerate() {
        assert_eq!(s(c.row()), key(i), "{name} row {i}");
        assert_eq!(c.value(), format!("hudi-value-{i:09}").as_bytes());
        assert!(c.family().is_empty() && c.qualifier().is_empty());
        assert_eq!(c.timestamp(), i64::MAX);
        assert_eq!(c.cell_type(), CellType::Put);
    }
    r
}

fn seek_row(r: &HFileReader, row: &str) -> Option<String> {
    let mut sc = r.scanner();
    if sc.seek(&KeyRef::first_on_row(row.as_bytes())).unwrap() {
        sc.current().map(|c| s(c.row()))
    } else {
        None
    }
}

fn before_row(r: &HFileReader, row: &str) -> Option<String> {
    let mut sc = r.scanner();
    if sc
        .seek_before(&KeyRef::first_on_row(row.as_bytes()))
        .unwrap()
    {
        sc.current().map(|c| s(c.row()))
    } else {
        None
    }
}

#[test]
fn none_16kb_5000() {
    let r = check_plain("hudi_1_0_hbase_2_4_9_16KB_NONE_5000.hfile", 5000);
    assert_eq!(r.compression(), Compression::None);
    assert_eq!(r.data_block_encoding().unwrap(), DataBlockEncoding::None);
    let bounds = block_bounds(&r);
    assert_eq!(bounds.len(), 18);
    assert_eq!(bounds[0], (key(0), key(277)));
    assert_eq!(bounds[1].0, key(278));
    assert_eq!(r.root_index().len(), 18);
    // Prefix "hudi-key-00000010" matches exactly 100..109.
    let mut sc = r.scanner();
    assert!(sc
        .seek(&KeyRef::first_on_row(b"hudi-key-00000010"))
        .unwrap());
    let mut n = 0;
    while let Some(c) = sc.current() {
        if !c.row().starts_with(b"hudi-key-00000010") {
            break;
        }
        assert_eq!(s(c.row()), key(100 + n));
        n += 1;
        sc.advance().unwrap();
    }
    assert_eq!(n, 10);
    // Past the last key: end of file. Before the first: the first cell.
    assert_eq!(seek_row(&r, "hudi-key-000004999a"), None);
    assert_eq!(seek_row(&r, "hudi-key-000005000"), None);
    for k in ["", "aa", "hudi-key-0000000"] {
        assert_eq!(seek_row(&r, k), Some(key(0)));
        assert_eq!(before_row(&r, k), None);
    }
    assert_eq!(
        before_row(&r, &key(278)),
        Some(key(277)),
        "seek before crosses a block"
    );
    assert_eq!(seek_row(&r, &key(2500)), Some(key(2500)));
    let mut sc = r.scanner();
    let exact = sc
        .seek_exact(&KeyRef {
            row: key(4999).as_bytes(),
            family: b"",
            qualifier: b"",
            timestamp: i64::MAX,
            type_code: 4,
        })
        .unwrap();
    assert_eq!(exact.unwrap().value(), b"hudi-value-000004999");
}

#[test]
fn none_64kb_5000() {
    let r = check_plain("hudi_1_0_hbase_2_4_9_64KB_NONE_5000.hfile", 5000);
    let bounds = block_bounds(&r);
    assert_eq!(bounds.len(), 5);
    assert_eq!(bounds[0].1, key(1110));
    assert_eq!(bounds[1].1, key(2221));
    assert_eq!(bounds[2].1, key(3332));
    assert!(bounds[1].0 <= key(1688) && key(1688) <= bounds[1].1);
}

#[test]
fn gz_16kb_20000() {
    let r = check_plain("hudi_1_0_hbase_2_4_9_16KB_GZ_20000.hfile", 20000);
    assert_eq!(r.compression(), Compression::Gz);
    let bounds = block_bounds(&r);
    assert_eq!(bounds.len(), 72);
    assert_eq!(bounds[0], (key(0), key(277)));
    assert_eq!(bounds[30].0, key(8340));
    assert_eq!(bounds[49].1, key(13899));
}

#[test]
fn gz_512kb_20000() {
    let r = check_plain("hudi_1_0_hbase_2_4_9_512KB_GZ_20000.hfile", 20000);
    assert_eq!(
        block_bounds(&r),
        vec![
            (key(0), key(8886)),
            (key(8887), key(17773)),
            (key(17774), key(19999))
        ]
    );
}

#[test]
fn gz_non_unique_keys() {
    let r = open("hudi_1_0_hbase_2_4_9_16KB_GZ_200_20_non_unique.hfile");
    assert_eq!(r.verify().unwrap(), 4200);
    let cells = all_cells(&r);
    for (i, c) in cells.iter().enumerate() {
        let (k, j) = (i / 21, i % 21);
        assert_eq!(s(c.row()), key(k));
        let v = if j == 0 {
            format!("hudi-value-{k:09}")
        } else {
            format!("hudi-value-{k:09}_{}", j - 1)
        };
        assert_eq!(s(c.value()), v);
    }
    for k in [0, 13, 100, 199] {
        let mut sc = r.scanner();
        assert!(sc.seek(&KeyRef::first_on_row(key(k).as_bytes())).unwrap());
        assert_eq!(
            s(sc.current().unwrap().value()),
            format!("hudi-value-{k:09}"),
            "lands on the first occurrence"
        );
    }
    let bounds = block_bounds(&r);
    assert_eq!(bounds.len(), 16);
    assert_eq!(bounds[0].1, key(12));
    assert_eq!(bounds[1].0, key(13));
}

#[test]
fn no_entry() {
    let r = open("hudi_1_0_hbase_2_4_9_no_entry.hfile");
    assert_eq!(r.entry_count(), 0);
    assert_eq!(r.verify().unwrap(), 0);
    assert_eq!(r.trailer().first_data_block_offset, u64::MAX);
    assert!(!r.scanner().seek_to_first().unwrap());
    assert_eq!(seek_row(&r, "anything"), None);
    assert!(r.root_index().is_empty());
    assert_eq!(r.mid_key().unwrap(), None);
    let bloom = r.meta_block(b"bloomFilter").unwrap().unwrap();
    assert!(bloom.len() > 400_000, "the real ~431 KB bloom, inflated");
    assert!(r.file_info().get(b"schema").is_some());
}

#[test]
fn fake_first_keys() {
    let name = "hudi_1_0_hbase_2_4_13_16KB_GZ_20000_fake_first_key.hfile";
    let r = open(name);
    assert_eq!(r.verify().unwrap(), 20000);
    let cells = all_cells(&r);
    for (i, c) in cells.iter().enumerate() {
        assert_eq!(s(c.row()), format!("hudi-key-{i:09}-abcdefghij"));
        assert_eq!(s(c.value()), format!("hudi-value-{i:09}"));
    }
    let idx = r.root_index();
    assert_eq!(idx.len(), 86);
    let k0 = KeyRef::parse(&idx[0].key).unwrap();
    assert_eq!(
        (k0.row, k0.type_code),
        (&b"hudi-key-000000000-abcdefghij"[..], 4)
    );
    let fake: Vec<(String, u8, i64)> = idx[1..4]
        .iter()
        .map(|e| {
            let k = KeyRef::parse(&e.key).unwrap();
            (s(k.row), k.type_code, k.timestamp)
        })
        .collect();
    assert_eq!(
        fake,
        vec![
            ("hudi-key-000000235".into(), 255, i64::MAX),
            ("hudi-key-00000047".into(), 255, i64::MAX),
            ("hudi-key-000000705".into(), 255, i64::MAX),
        ]
    );
    // Between a fake key and the block's first real key: fall through to that first key.
    assert_eq!(
        seek_row(&r, "hudi-key-000000470"),
        Some("hudi-key-000000470-abcdefghij".into())
    );
    assert_eq!(
        before_row(&r, "hudi-key-000000470"),
        Some("hudi-key-000000469-abcdefghij".into())
    );
    assert_eq!(
        seek_row(&r, "hudi-key-000000473"),
        Some("hudi-key-000000473-abcdefghij".into())
    );
    assert_eq!(
        before_row(&r, "hudi-key-000000473"),
        Some("hudi-key-000000472-abcdefghij".into())
    );
    assert_eq!(block_bounds(&r)[1].1, "hudi-key-000000469-abcdefghij");
}

fn large_key(i: usize) -> String {
    format!("hudi-key-{}-{i:09}", "a".repeat(100))
}

#[test]
fn large_keys_two_level_index() {
    let r = open("hudi_1_0_hbase_2_4_13_1KB_GZ_20000_large_keys.hfile");
    assert_eq!(r.trailer().num_data_index_levels, 2);
    assert_eq!(r.root_index().len(), 4);
    assert_eq!(r.verify().unwrap(), 20000);
    let cells = all_cells(&r);
    for (i, c) in cells.iter().enumerate() {
        assert_eq!(s(c.row()), large_key(i));
    }
    let bounds = block_bounds(&r);
    assert_eq!(bounds.len(), 2858);
    assert!(bounds
        .iter()
        .zip(bounds.iter().skip(1))
        .any(|(a, b)| a.1 == large_key(2785) && b.0 == large_key(2786)));
    for i in [0, 1, 2785, 2786, 9999, 19999] {
        assert_eq!(seek_row(&r, &large_key(i)), Some(large_key(i)));
    }
    assert_eq!(before_row(&r, &large_key(2786)), Some(large_key(2785)));
    let mid = r.mid_key().unwrap().unwrap();
    let mid_row = s(KeyRef::parse(&mid).unwrap().row);
    assert!(
        mid_row > large_key(9000) && mid_row < large_key(11000),
        "mid-key {mid_row}"
    );
}

#[test]
fn deep_index_three_levels() {
    let r = open("hudi_1_0_hbase_2_4_13_1KB_GZ_10000_large_keys_deep_index.hfile");
    assert_eq!(r.trailer().num_data_index_levels, 3);
    assert_eq!(r.root_index().len(), 7);
    assert_eq!(r.verify().unwrap(), 10000);
    let cells = all_cells(&r);
    assert_eq!(s(cells[9999].row()), large_key(9999));
    assert_eq!(s(cells[9999].value()), "hudi-value-000009999");
    assert_eq!(block_bounds(&r).len(), 1429);
    for i in (0..10000).step_by(397) {
        assert_eq!(seek_row(&r, &large_key(i)), Some(large_key(i)));
    }
    assert_eq!(seek_row(&r, &format!("{}a", large_key(9999))), None);
}

#[test]
fn hudi_metadata_table_files() {
    let r = open("hudi_mdt_v8/files-0000-0_23-1133-3302_20251220210130942.hfile");
    let rows: Vec<String> = all_cells(&r).iter().map(|c| s(c.row())).collect();
    assert_eq!(
        rows,
        vec![
            "__all_partitions__",
            "city=chennai",
            "city=san_francisco",
            "city=sao_paulo"
        ]
    );
    let r = open("hudi_mdt_v8/col-stats-0000-0_11-1133-3290_20251220210130942.hfile");
    let cells = all_cells(&r);
    assert_eq!(cells.len(), 48);
    assert_eq!(
        s(cells[0].row()),
        "AjpJ7N1gBZc=6Hj+sBy+gvM=0VV0SYFvRHPGdIGkp/dZ+A=="
    );
    let r = open("hudi_mdt_v8/partition-stats-0000-0_0-1133-3279_20251220210130942.hfile");
    let cells = all_cells(&r);
    assert_eq!(cells.len(), 27);
    assert_eq!(s(cells[0].row()), "AjpJ7N1gBZc=6Hj+sBy+gvM=");
    assert_eq!(s(cells[26].row()), "uSJGdDiVr/k=qWIoUqdwX74=");
    assert_eq!(r.verify().unwrap(), 27);
}
