//! Round-trip and layout tests for every data block encoding.

use super::*;
use cellar_types::CellType;
use proptest::prelude::*;

const FORMATS: [CellFormat; 6] = [
    CellFormat {
        includes_tags: false,
        includes_mvcc: false,
        compress_tags: false,
    },
    CellFormat {
        includes_tags: true,
        includes_mvcc: false,
        compress_tags: false,
    },
    CellFormat {
        includes_tags: false,
        includes_mvcc: true,
        compress_tags: false,
    },
    CellFormat {
        includes_tags: true,
        includes_mvcc: true,
        compress_tags: false,
    },
    CellFormat {
        includes_tags: true,
        includes_mvcc: true,
        compress_tags: true,
    },
    CellFormat {
        includes_tags: true,
        includes_mvcc: false,
        compress_tags: true,
    },
];

/// Serialized tags: each a 2-byte length, a type and a value, drawn from few
/// choices so that a block's tag dictionary finds repeats.
fn arb_tags() -> impl Strategy<Value = Vec<u8>> {
    let tag = (
        prop_oneof![Just(1u8), Just(8u8), any::<u8>()],
        prop_oneof![
            Just(Vec::new()),
            Just(b"acl".to_vec()),
            prop::collection::vec(any::<u8>(), 0..5)
        ],
    );
    prop::collection::vec(tag, 0..4).prop_map(|tags| {
        let mut out = Vec::new();
        for (t, v) in tags {
            out.extend_from_slice(&(1 + v.len() as u16).to_be_bytes());
            out.push(t);
            out.extend_from_slice(&v);
        }
        out
    })
}

fn cell(row: &[u8], q: &[u8], ts: i64, t: CellType, v: &[u8], seq: u64) -> Cell {
    Cell::new(row, &b"f"[..], q, ts, t, v)
        .unwrap()
        .with_seq_id(seq)
}

fn arb_cells() -> impl Strategy<Value = Vec<Cell>> {
    let types = prop_oneof![
        Just(CellType::Put),
        Just(CellType::Delete),
        Just(CellType::DeleteColumn),
        Just(CellType::DeleteFamily),
        Just(CellType::DeleteFamilyVersion),
    ];
    let one = (
        prop::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), any::<u8>()], 0..6),
        prop::collection::vec(prop_oneof![Just(b'q'), any::<u8>()], 0..5),
        prop_oneof![
            Just(0i64),
            Just(i64::MAX),
            Just(i64::MIN),
            Just(-1i64),
            0i64..5000,
            any::<i64>()
        ],
        types,
        prop_oneof![
            Just(Vec::new()),
            Just(b"same".to_vec()),
            prop::collection::vec(any::<u8>(), 0..20)
        ],
        0u64..1_000_000,
        arb_tags(),
    );
    prop::collection::vec(one, 1..60).prop_map(|v| {
        let mut cells: Vec<Cell> = v
            .into_iter()
            .map(|(r, q, ts, t, val, seq, tags)| {
                cell(&r, &q, ts, t, &val, seq).with_tags(tags).unwrap()
            })
            .collect();
        cells.sort();
        cells.dedup_by(|a, b| a.key_ref() == b.key_ref() && a.seq_id() == b.seq_id());
        cells
    })
}

fn strip(cells: &[Cell], fmt: CellFormat) -> Vec<Cell> {
    cells
        .iter()
        .map(|c| {
            let c = if fmt.includes_mvcc {
                c.clone()
            } else {
                c.clone().with_seq_id(0)
            };
            if fmt.includes_tags {
                c
            } else {
                c.with_tags(Vec::new()).unwrap()
            }
        })
        .collect()
}

proptest! {
    #[test]
    fn every_encoding_round_trips(cells in arb_cells()) {
        for fmt in FORMATS {
            for enc in DataBlockEncoding::ALL {
                let payload = enc.encode(&cells, fmt);
                let back = DataBlockEncoding::decode(&payload, enc != DataBlockEncoding::None, fmt, 0).unwrap();
                prop_assert_eq!(&back, &strip(&cells, fmt), "{:?} {:?}", enc, fmt);
            }
        }
    }

    /// Cells rebuilt from a prefix- or diff-encoded block view one buffer, back to
    /// back, instead of owning a buffer each.
    #[test]
    fn rebuilt_cells_share_one_buffer(cells in arb_cells()) {
        for fmt in FORMATS {
            for enc in [DataBlockEncoding::Prefix, DataBlockEncoding::Diff, DataBlockEncoding::FastDiff] {
                let payload = enc.encode(&cells, fmt);
                let back = DataBlockEncoding::decode(&payload, true, fmt, 0).unwrap();
                for pair in back.windows(2) {
                    let end = pair[0].key().as_ptr() as usize + pair[0].buffer_len();
                    prop_assert_eq!(pair[1].key().as_ptr() as usize, end, "{:?} {:?}", enc, fmt);
                }
            }
        }
    }

    #[test]
    fn garbage_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..200), id in prop_oneof![Just(0i16), Just(2), Just(3), Just(4), Just(7)]) {
        let mut payload = id.to_be_bytes().to_vec();
        payload.extend_from_slice(&bytes);
        for fmt in FORMATS {
            let _ = DataBlockEncoding::decode(&payload, true, fmt, 0);
            let _ = DataBlockEncoding::decode(&bytes, false, fmt, 0);
        }
    }
}

#[test]
fn prefix_layout_matches_hbase() {
    let fmt = CellFormat {
        includes_tags: false,
        includes_mvcc: false,
        compress_tags: false,
    };
    let a = cell(b"row1", b"q", 5, CellType::Put, b"v", 0);
    let b = cell(b"row2", b"q", 5, CellType::Put, b"w", 0);
    let payload = DataBlockEncoding::Prefix.encode(&[a.clone(), b.clone()], fmt);
    let mut expected = vec![0, 2];
    expected.extend_from_slice(
        &((a.serialized_size(false) + b.serialized_size(false)) as i32).to_be_bytes(),
    );
    // First cell: key length, value length, common 0, full key, value.
    expected.extend_from_slice(&[a.key_len() as u8, 1, 0]);
    expected.extend_from_slice(&a.key_bytes());
    expected.push(b'v');
    // Second: shares rowLen(2) + "row" = 5 bytes.
    expected.extend_from_slice(&[(b.key_len() - 5) as u8, 1, 5]);
    expected.extend_from_slice(&b.key_bytes()[5..]);
    expected.push(b'w');
    assert_eq!(payload, expected);
}

#[test]
fn fast_diff_layout_matches_hbase() {
    let fmt = CellFormat {
        includes_tags: false,
        includes_mvcc: false,
        compress_tags: false,
    };
    let a = cell(b"r", b"a", 0x0102, CellType::Put, b"v", 0);
    let b = cell(b"r", b"b", 0x0103, CellType::Put, b"v", 0);
    let payload = DataBlockEncoding::FastDiff.encode(&[a.clone(), b], fmt);
    let mut expected = vec![0, 4];
    expected.extend_from_slice(&((a.serialized_size(false) * 2) as i32).to_be_bytes());
    expected.extend_from_slice(&[0, a.key_len() as u8, 1, 0]);
    expected.extend_from_slice(&a.key_bytes());
    expected.push(b'v');
    // Same key length, value length, type and value; 7 timestamp bytes shared;
    // common = rowLen 2 + "r" + famLen 1 + "f" = 5; qualifier "b"; last ts byte.
    expected.extend_from_slice(&[0x08 | 0x10 | 0x20 | 0x40 | 7, 5, b'b', 0x03]);
    assert_eq!(payload, expected);
}

#[test]
fn diff_layout_matches_hbase() {
    let fmt = CellFormat {
        includes_tags: false,
        includes_mvcc: false,
        compress_tags: false,
    };
    let a = cell(b"r", b"a", 1000, CellType::Put, b"v", 0);
    let b = cell(b"r", b"a", 998, CellType::Put, b"w", 0);
    let payload = DataBlockEncoding::Diff.encode(&[a.clone(), b], fmt);
    let mut expected = vec![0, 3];
    expected.extend_from_slice(&((a.serialized_size(false) * 2) as i32).to_be_bytes());
    expected.extend_from_slice(&[1, b'f']);
    // First cell: ts 1000 needs 2 bytes => flag 0x10; key len, value len, common 0,
    // row length + row, qualifier, ts LE, type, value.
    expected.extend_from_slice(&[
        0x10,
        a.key_len() as u8,
        1,
        0,
        0,
        1,
        b'r',
        b'a',
        0xe8,
        0x03,
        4,
        b'v',
    ]);
    // Second: same key length, value length, type; diff 2 in 1 byte; common covers the
    // whole row, family and qualifier (2+1+1+1+1 = 6).
    expected.extend_from_slice(&[0x01 | 0x02 | 0x04 | 0x08, 6, 2, b'w']);
    assert_eq!(payload, expected);
}

#[test]
fn row_index_layout_matches_hbase() {
    let fmt = CellFormat {
        includes_tags: false,
        includes_mvcc: false,
        compress_tags: false,
    };
    let cells = [
        cell(b"a", b"1", 1, CellType::Put, b"", 0),
        cell(b"a", b"2", 1, CellType::Put, b"", 0),
        cell(b"b", b"1", 1, CellType::Put, b"", 0),
    ];
    let payload = DataBlockEncoding::RowIndexV1.encode(&cells, fmt);
    let kv = cells[0].serialized_size(false);
    let n = payload.len();
    assert_eq!(&payload[..2], &[0, 7]);
    assert_eq!(&payload[n - 4..], &((3 * kv) as u32).to_be_bytes());
    assert_eq!(
        &payload[2 + 3 * kv..n - 4],
        &[0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, (2 * kv) as u8]
    );
}

#[test]
fn common_prefix_by_words_equals_the_byte_count() {
    let naive = |a: &[u8], b: &[u8]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let base: Vec<u8> = (0..40u8).collect();
    for len_a in 0..=40 {
        for len_b in [0, 7, 8, 9, 16, 23, 40] {
            for at in 0..40 {
                let a = &base[..len_a];
                let mut b = base[..len_b].to_vec();
                if at < b.len() {
                    b[at] ^= 0x10;
                }
                assert_eq!(
                    super::common_prefix(a, &b),
                    naive(a, &b),
                    "{len_a} {len_b} {at}"
                );
            }
        }
    }
}
