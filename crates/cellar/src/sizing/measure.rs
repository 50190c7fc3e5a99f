//! Measured bytes per cell: sample cells of a layout, generated as an application would
//! write them (several entities, readings at the heaviest entity's rate, reversed
//! timestamps, random values), sorted and cut into 64 KiB blocks, then encoded with each
//! data block encoding as a v3 store file holds them (tags length, sequence id, a
//! 33-byte block header). Compression is left out: it depends on the values.

use cellar_hfile::{CellFormat, DataBlockEncoding};
use cellar_types::{compare_cells, Cell, CellType};
use chrono::{TimeZone, Utc};

use super::{Layout, Proposal};

const ENTITIES: u64 = 8;
const READINGS: u64 = 1500;
const BLOCK: usize = 64 << 10;
const HEADER: usize = 33;
/// 2026-01-01 00:00 UTC.
const T0: i64 = 1_767_225_600_000;

fn fixed(text: &[u8], len: u64, pad: u8) -> Vec<u8> {
    let len = len as usize;
    let mut v = text.to_vec();
    if v.len() > len {
        v.drain(..v.len() - len);
    }
    while v.len() < len {
        v.insert(0, pad);
    }
    v
}

fn reversed_ts(ts: i64, len: u64) -> Vec<u8> {
    if len == 8 {
        (i64::MAX - ts).to_be_bytes().to_vec()
    } else {
        fixed((u64::MAX - ts as u64).to_string().as_bytes(), len, b'0')
    }
}

fn bucket_text(ts: i64, layout: Layout) -> Vec<u8> {
    let fmt = match layout {
        Layout::Bucketed(super::Bucket::Year) => "%Y",
        Layout::Bucketed(super::Bucket::Month) => "%Y%m",
        Layout::Bucketed(super::Bucket::Day) => "%Y%m%d",
        _ => "%Y%m%d%H",
    };
    Utc.timestamp_millis_opt(ts)
        .single()
        .map(|t| t.format(fmt).to_string().into_bytes())
        .unwrap_or_default()
}

/// The sample cells of `layout`, sorted.
fn sample(p: &Proposal, layout: Layout) -> Vec<Cell> {
    let mut rng: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut random = |n: u64| -> Vec<u8> {
        (0..n)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng as u8
            })
            .collect()
    };
    let interval = (86_400_000.0 / p.heaviest_per_day.max(1e-6)).max(1.0) as i64;
    let family = vec![b'f'; p.family_bytes.max(1) as usize];
    let sep = vec![b'#'; p.separator_bytes as usize];
    let mut cells = Vec::new();
    for e in 0..ENTITIES {
        let entity = fixed(format!("e{e}").as_bytes(), p.entity_bytes, b'0');
        for i in 0..READINGS {
            let ts = T0 + i as i64 * interval + e as i64;
            let rts = reversed_ts(ts, p.ts_bytes);
            let (row, qualifier) = match layout {
                Layout::Tall => (
                    [entity.as_slice(), &sep, &rts].concat(),
                    vec![b'c'; p.column_bytes as usize],
                ),
                Layout::Wide => (entity.clone(), rts),
                Layout::Bucketed(_) => (
                    [entity.as_slice(), &sep, &bucket_text(ts, layout)].concat(),
                    rts,
                ),
            };
            let value = random(p.value_bytes);
            if let Ok(c) = Cell::new(row, family.clone(), qualifier, ts, CellType::Put, value) {
                cells.push(c);
            }
        }
    }
    cells.sort_by(compare_cells);
    cells
}

/// Bytes per cell of `layout` stored with each encoding, in HBase's order of names.
pub fn measured_bytes_per_cell(p: &Proposal, layout: Layout) -> Vec<(&'static str, f64)> {
    let cells = sample(p, layout);
    let fmt = CellFormat {
        includes_tags: true,
        includes_mvcc: true,
        compress_tags: false,
    };
    let encodings = [
        DataBlockEncoding::None,
        DataBlockEncoding::Prefix,
        DataBlockEncoding::Diff,
        DataBlockEncoding::FastDiff,
        DataBlockEncoding::RowIndexV1,
    ];
    encodings
        .into_iter()
        .map(|enc| {
            let mut total = 0usize;
            let mut start = 0;
            while start < cells.len() {
                let mut end = start;
                let mut raw = 0;
                while end < cells.len() && raw < BLOCK {
                    raw += cells[end].serialized_size(true) + 1;
                    end += 1;
                }
                total += enc.encode(&cells[start..end], fmt).len() + HEADER;
                start = end;
            }
            (enc.name(), total as f64 / cells.len().max(1) as f64)
        })
        .collect()
}
