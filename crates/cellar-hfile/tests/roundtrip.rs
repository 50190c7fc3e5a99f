//! Cells written by the writer read back identically for every encoding, codec and
//! block size; seeks agree with a sorted-vector model; blooms never deny a present key.

#![allow(clippy::unwrap_used)]

use std::cmp::Ordering;
use std::path::Path;

use cellar_hfile::{
    BloomType, Compression, DataBlockEncoding, HFileReader, HFileWriter, WriterOptions,
};
use cellar_io::MemoryFs;
use cellar_types::{compare_keys, Cell, CellType, KeyRef};
use proptest::prelude::*;

const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gz,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

fn arb_cells() -> impl Strategy<Value = Vec<Cell>> {
    let types = prop_oneof![
        6 => Just(CellType::Put),
        1 => Just(CellType::Delete),
        1 => Just(CellType::DeleteColumn),
        1 => Just(CellType::DeleteFamily),
        1 => Just(CellType::DeleteFamilyVersion),
    ];
    let row = prop_oneof![
        prop::collection::vec(prop_oneof![Just(b'r'), Just(b's'), any::<u8>()], 0..4),
        prop::collection::vec(Just(b'L'), 200..400),
    ];
    let one = (
        row,
        prop::collection::vec(any::<u8>(), 0..4),
        prop_oneof![Just(i64::MAX), 0i64..10, any::<i64>()],
        types,
        prop_oneof![
            Just(b"same".to_vec()),
            prop::collection::vec(any::<u8>(), 0..300)
        ],
        1u64..1000,
    );
    prop::collection::vec(one, 0..300).prop_map(|v| {
        let mut cells: Vec<Cell> = v
            .into_iter()
            .map(|(r, q, ts, t, val, seq)| {
                Cell::new(r, &b"cf"[..], q, ts, t, val)
                    .unwrap()
                    .with_seq_id(seq)
            })
            .collect();
        cells.sort();
        cells
    })
}

fn write(fs: &MemoryFs, path: &Path, cells: &[Cell], opts: WriterOptions) -> HFileReader {
    let mut w = HFileWriter::create(fs, path, opts).unwrap();
    for c in cells {
        w.append(c.clone()).unwrap();
    }
    w.close().unwrap();
    HFileReader::open(fs, path, None).unwrap()
}

fn read_all(r: &HFileReader) -> Vec<Cell> {
    let mut s = r.scanner();
    let mut out = Vec::new();
    if s.seek_to_first().unwrap() {
        while let Some(c) = s.next_cell().unwrap() {
            out.push(c);
        }
    }
    out
}

fn check_seeks(r: &HFileReader, cells: &[Cell], probes: &[Cell]) {
    for p in probes.iter().chain(cells.iter().step_by(7)) {
        let k = p.key_ref();
        let after = cells
            .iter()
            .find(|c| compare_keys(&c.key_ref(), &k) != Ordering::Less);
        let mut s = r.scanner();
        let found = s.seek(&k).unwrap();
        assert_eq!(found, after.is_some());
        assert_eq!(s.current(), after);
        let before = cells
            .iter()
            .rev()
            .find(|c| compare_keys(&c.key_ref(), &k) == Ordering::Less);
        let mut s = r.scanner();
        assert_eq!(s.seek_before(&k).unwrap(), before.is_some());
        assert_eq!(s.current(), before);
        // Row seeks and row blooms.
        let mut s = r.scanner();
        s.seek(&KeyRef::first_on_row(p.row())).unwrap();
        let first_of_row = cells.iter().find(|c| c.row() >= p.row());
        assert_eq!(s.current(), first_of_row);
    }
    check_reseeks(r, cells, probes);
    for c in cells {
        assert!(r.might_contain_row(c.row()).unwrap());
        assert!(r.might_contain_row_col(c.row(), c.qualifier()).unwrap());
        if matches!(
            c.cell_type(),
            CellType::DeleteFamily | CellType::DeleteFamilyVersion
        ) {
            assert!(r.might_contain_delete_family(c.row()).unwrap());
        }
    }
}

/// One cursor reseeked forward through ascending keys (every cell's, a few cells
/// apart, and the probes') lands where a fresh search would, near and far, across
/// blocks; a reseek to a key behind it leaves it where it is.
fn check_reseeks(r: &HFileReader, cells: &[Cell], probes: &[Cell]) {
    for stride in [1, 2, 5] {
        let mut keys: Vec<&Cell> = probes.iter().chain(cells.iter().step_by(stride)).collect();
        keys.sort_by(|a, b| compare_keys(&a.key_ref(), &b.key_ref()));
        let mut s = r.scanner();
        if !s.seek_to_first().unwrap() {
            continue;
        }
        let mut last: Option<&Cell> = None;
        // The keys ascend, so the first cell at or after each only moves forward.
        let mut at = 0;
        for k in keys {
            let key = k.key_ref();
            while cells
                .get(at)
                .is_some_and(|c| compare_keys(&c.key_ref(), &key) == Ordering::Less)
            {
                at += 1;
            }
            let want = cells.get(at);
            assert_eq!(s.reseek(&key).unwrap(), want.is_some());
            assert_eq!(s.current(), want, "reseek by {stride}");
            if let (Some(prev), Some(_)) = (last, want) {
                assert!(s.reseek(&prev.key_ref()).unwrap());
                assert_eq!(s.current(), want, "a reseek backward moved the cursor");
            }
            if want.is_none() {
                break;
            }
            last = Some(k);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn write_then_read_back(cells in arb_cells(), probes in arb_cells(), block_size in prop_oneof![Just(64usize), Just(1024), Just(65536)]) {
        let fs = MemoryFs::new();
        for (i, enc) in DataBlockEncoding::ALL.into_iter().enumerate() {
            for (j, codec) in CODECS.into_iter().enumerate() {
                let bloom = [BloomType::Row, BloomType::RowCol, BloomType::RowPrefixFixedLength(2), BloomType::None][(i + j) % 4];
                let opts = WriterOptions {
                    block_size,
                    compression: codec,
                    encoding: enc,
                    bloom,
                    index_block_max_size: if j % 2 == 0 { 256 } else { 131072 },
                    index_min_entries: 2,
                    bloom_block_size: 256,
                    ..WriterOptions::default()
                };
                let path = Path::new("f");
                let r = write(&fs, path, &cells, opts);
                prop_assert_eq!(r.verify().unwrap(), cells.len() as u64);
                prop_assert_eq!(&read_all(&r), &cells, "{:?} {:?} {}", enc, codec, block_size);
                prop_assert_eq!(r.data_block_encoding().unwrap(), enc);
                check_seeks(&r, &cells, &probes);
            }
        }
    }
}

fn sensor_cells(n: usize) -> Vec<Cell> {
    let mut cells = Vec::new();
    for d in 0..(n / 100).max(1) {
        for t in 0..100u64 {
            let row = format!("dev{d:05}#").into_bytes();
            let mut row = row;
            row.extend_from_slice(&(u64::MAX - t * 10_000).to_be_bytes());
            cells.push(
                Cell::put(
                    row,
                    &b"d"[..],
                    &b"v"[..],
                    1_700_000_000_000 + t as i64,
                    (t * 7).to_be_bytes(),
                )
                .unwrap()
                .with_seq_id(t + 1),
            );
        }
    }
    cells.sort();
    cells
}

#[test]
fn multi_level_index_and_mid_key() {
    let fs = MemoryFs::new();
    let cells = sensor_cells(20_000);
    for levels_wanted in [1u32, 2, 3] {
        let opts = WriterOptions {
            block_size: 512,
            index_block_max_size: match levels_wanted {
                1 => 1 << 20,
                2 => 4096,
                _ => 600,
            },
            index_min_entries: 4,
            ..WriterOptions::default()
        };
        let r = write(&fs, Path::new("m"), &cells, opts);
        assert_eq!(r.trailer().num_data_index_levels, levels_wanted);
        assert_eq!(read_all(&r), cells);
        check_seeks(&r, &cells, &[]);
        let mid = r.mid_key().unwrap().unwrap();
        let mid = KeyRef::parse(&mid).unwrap();
        // The mid-key row lies inside the file, near the middle.
        let pos = cells.partition_point(|c| c.row() < mid.row);
        assert!(
            pos > cells.len() / 4 && pos < cells.len() * 3 / 4,
            "mid-key at {pos} of {}",
            cells.len()
        );
    }
}

#[test]
fn fast_diff_halves_the_tall_sensor_layout() {
    let fs = MemoryFs::new();
    let cells = sensor_cells(20_000);
    let size = |enc| {
        let opts = WriterOptions {
            encoding: enc,
            bloom: BloomType::None,
            ..WriterOptions::default()
        };
        let r = write(&fs, Path::new("s"), &cells, opts);
        r.file_size()
    };
    let none = size(DataBlockEncoding::None);
    let fast = size(DataBlockEncoding::FastDiff);
    assert!(fast * 2 < none, "FAST_DIFF {fast} vs NONE {none}");
}

#[test]
fn bloom_rejects_most_absent_rows() {
    let fs = MemoryFs::new();
    let cells: Vec<Cell> = (0..5000)
        .map(|i| Cell::put(format!("row{i:06}"), &b"f"[..], &b"q"[..], 1, &b"v"[..]).unwrap())
        .collect();
    let r = write(&fs, Path::new("b"), &cells, WriterOptions::default());
    let absent = (0..5000)
        .filter(|i| r.might_contain_row(format!("nope{i}").as_bytes()).unwrap())
        .count();
    assert!(absent < 150, "{absent} false positives of 5000");
    let r = write(
        &fs,
        Path::new("b"),
        &cells,
        WriterOptions {
            bloom: BloomType::RowCol,
            ..WriterOptions::default()
        },
    );
    let absent = (0..5000)
        .filter(|i| {
            r.might_contain_row_col(format!("row{i:06}").as_bytes(), b"other")
                .unwrap()
        })
        .count();
    assert!(absent < 150, "{absent} false positives of 5000");
}

#[test]
fn writer_rejects_bad_input() {
    let fs = MemoryFs::new();
    let mut w = HFileWriter::create(&fs, Path::new("x"), WriterOptions::default()).unwrap();
    w.append(Cell::put("b", "f", "q", 1, "v").unwrap()).unwrap();
    assert!(w.append(Cell::put("a", "f", "q", 1, "v").unwrap()).is_err());
    assert!(w.append(Cell::put("c", "g", "q", 1, "v").unwrap()).is_err());
    let bad = WriterOptions {
        compression: Compression::Lzo,
        ..WriterOptions::default()
    };
    assert!(HFileWriter::create(&fs, Path::new("y"), bad).is_err());
}

proptest! {
    /// The writer's order check is HBase's comparator: a cell after one it sorts
    /// before (row, qualifier, timestamp, type, then sequence id) is refused, any other
    /// taken — also when the previous cell closed a block.
    #[test]
    fn writer_refuses_exactly_what_sorts_before_the_last_cell(
        a in (0u8..3, 0u8..3, 0i64..3, 0usize..3, 0u64..3),
        b in (0u8..3, 0u8..3, 0i64..3, 0usize..3, 0u64..3),
        block_size in prop_oneof![Just(1usize), Just(65536)],
    ) {
        let types = [CellType::Put, CellType::Delete, CellType::DeleteColumn];
        let cell = |(r, q, ts, t, seq): (u8, u8, i64, usize, u64)| {
            Cell::new([b'r', r], &b"f"[..], [b'q', q], ts, types[t], "v")
                .unwrap()
                .with_seq_id(seq)
        };
        let (a, b) = (cell(a), cell(b));
        let fs = MemoryFs::new();
        for bloom in [BloomType::Row, BloomType::RowCol] {
            let opts = WriterOptions { block_size, bloom, ..WriterOptions::default() };
            let mut w = HFileWriter::create(&fs, Path::new("o"), opts).unwrap();
            w.append(a.clone()).unwrap();
            let got = w.append(b.clone());
            let refused = a.cmp(&b) == Ordering::Greater;
            prop_assert_eq!(got.is_err(), refused, "{:?} then {:?}: {:?}", a, b, got);
            if !refused {
                w.close().unwrap();
                let r = HFileReader::open(&fs, Path::new("o"), None).unwrap();
                prop_assert_eq!(read_all(&r), vec![a.clone(), b.clone()]);
                for c in [&a, &b] {
                    prop_assert!(r.might_contain_row(c.row()).unwrap());
                    prop_assert!(r.might_contain_row_col(c.row(), c.qualifier()).unwrap());
                }
            }
        }
    }
}

#[test]
fn empty_file_round_trips() {
    let fs = MemoryFs::new();
    let r = write(&fs, Path::new("e"), &[], WriterOptions::default());
    assert_eq!(r.entry_count(), 0);
    assert!(!r.scanner().seek_to_first().unwrap());
    assert!(!r.scanner().seek(&KeyRef::first_on_row(b"x")).unwrap());
    assert!(!r.might_contain_row(b"x").unwrap());
    assert_eq!(r.verify().unwrap(), 0);
}

#[test]
fn bloom_chunks_stay_with_the_open_file_and_answer_alike() {
    let fs = MemoryFs::new();
    let mut cells: Vec<Cell> = (0..3000)
        .map(|i| Cell::put(format!("row{i:06}"), &b"f"[..], &b"q"[..], 2, &b"v"[..]).unwrap())
        .collect();
    cells.extend((0..3000).step_by(3).map(|i| {
        Cell::new(
            format!("row{i:06}"),
            &b"f"[..],
            &b""[..],
            1,
            CellType::DeleteFamily,
            &b""[..],
        )
        .unwrap()
    }));
    cells.sort();
    let opts = WriterOptions {
        bloom_block_size: 256,
        ..WriterOptions::default()
    };
    write(&fs, Path::new("p"), &cells, opts);
    let cache = std::sync::Arc::new(cellar_hfile::BlockCache::new(1 << 20));
    let r = HFileReader::open(&fs, Path::new("p"), Some(cache.clone())).unwrap();
    let ask = |i: usize| {
        let row = format!("row{:06}", i % 3000 + if i >= 3000 { 7000 } else { 0 });
        (
            r.might_contain_row(row.as_bytes()).unwrap(),
            r.might_contain_delete_family(row.as_bytes()).unwrap(),
        )
    };
    let first: Vec<_> = (0..6000).map(ask).collect();
    let lookups = |s: cellar_hfile::CacheStats| s.hits + s.misses;
    let after_first = lookups(cache.stats());
    assert!(after_first > 0, "the first pass reads the chunks");
    let second: Vec<_> = (0..6000).map(ask).collect();
    assert_eq!(first, second);
    assert_eq!(
        lookups(cache.stats()),
        after_first,
        "a chunk read once is not looked up in the cache again"
    );
    // Present rows are never denied; delete markers are found where they are.
    for (i, (row, delete)) in first.iter().enumerate().take(3000) {
        assert!(row, "row {i} denied");
        if i % 3 == 0 {
            assert!(delete, "delete family of row {i} denied");
        }
    }
    let absent = first[3000..].iter().filter(|(row, _)| *row).count();
    assert!(absent < 150, "{absent} false positives of 3000");
}
