//! Per data block encoding: on-disk bytes per cell, and encode / decode / seek speed, for
//! the sensor example's two layouts: tall rows (`dev00042#` + reversed timestamp, 1-byte
//! qualifier, 8-byte value: 47 bytes a cell unencoded) and bucketed wide rows
//! (`dev00042#2026-10-01`, 4-byte seconds-of-day qualifier).

#![allow(clippy::unwrap_used)]

use std::path::Path;

use cellar_hfile::{
    BloomType, CellFormat, DataBlockEncoding, HFileReader, HFileWriter, WriterOptions,
};
use cellar_io::{FileSystem, MemoryFs};
use cellar_types::{Cell, KeyRef};
use criterion::{black_box, criterion_group, criterion_main, Criterion};

const DEVICES: u64 = 100;
const READINGS: u64 = 1000;
const T0: u64 = 1_790_000_000_000;

fn tall() -> Vec<Cell> {
    let mut cells = Vec::new();
    for d in 0..DEVICES {
        for i in 0..READINGS {
            let ts = T0 + i * 10_000;
            let mut row = format!("dev{d:05}#").into_bytes();
            row.extend_from_slice(&(u64::MAX - ts).to_be_bytes());
            cells.push(
                Cell::put(
                    row,
                    &b"d"[..],
                    &b"v"[..],
                    ts as i64,
                    (20_000 + (i * 37 + d) % 500).to_be_bytes(),
                )
                .unwrap(),
            );
        }
    }
    cells.sort();
    cells
}

fn wide() -> Vec<Cell> {
    let mut cells = Vec::new();
    for d in 0..DEVICES {
        let row = format!("dev{d:05}#2026-10-01").into_bytes();
        for i in 0..READINGS {
            let ts = T0 + i * 10_000;
            let sec = ((i * 10) as u32).to_be_bytes();
            cells.push(
                Cell::put(
                    row.clone(),
                    &b"d"[..],
                    &sec[..],
                    ts as i64,
                    (20_000 + (i * 37 + d) % 500).to_be_bytes(),
                )
                .unwrap(),
            );
        }
    }
    cells.sort();
    cells
}

fn write(fs: &MemoryFs, cells: &[Cell], enc: DataBlockEncoding) -> u64 {
    let opts = WriterOptions {
        encoding: enc,
        bloom: BloomType::None,
        include_tags: false,
        compress_tags: false,
        ..WriterOptions::default()
    };
    let mut w = HFileWriter::create(fs, Path::new(enc.name()), opts).unwrap();
    for c in cells {
        w.append(c.clone()).unwrap();
    }
    w.close().unwrap().file_size
}

fn bench(c: &mut Criterion) {
    let fmt = CellFormat {
        includes_tags: false,
        includes_mvcc: true,
        compress_tags: false,
    };
    for (layout, cells) in [("tall", tall()), ("wide", wide())] {
        let fs = MemoryFs::new();
        // One 64 KiB block's worth of cells for the block-level benchmarks.
        let block: Vec<Cell> = cells.iter().take(65536 / 47).cloned().collect();
        let mut group = c.benchmark_group(layout);
        group.sample_size(10);
        group.measurement_time(std::time::Duration::from_secs(1));
        group.warm_up_time(std::time::Duration::from_millis(300));
        for enc in DataBlockEncoding::ALL {
            let size = write(&fs, &cells, enc);
            let data_bytes: u64 = {
                let r = HFileReader::open(&fs, Path::new(enc.name()), None).unwrap();
                let mut total = 0;
                let mut b = r.first_data_block().unwrap();
                while let Some(blk) = b {
                    total += blk.header.on_disk_size_with_header();
                    b = r.next_data_block(blk.next_offset()).unwrap();
                }
                total
            };
            println!(
                "{layout} {:>12}: file {size} bytes, {:.2} bytes/cell in data blocks, {:.2} bytes/cell whole file",
                enc.name(),
                data_bytes as f64 / cells.len() as f64,
                size as f64 / cells.len() as f64
            );
            let payload = enc.encode(&block, fmt);
            group.bench_function(format!("encode/{}", enc.name()), |b| {
                b.iter(|| black_box(enc.encode(black_box(&block), fmt)))
            });
            group.bench_function(format!("decode/{}", enc.name()), |b| {
                b.iter(|| {
                    black_box(
                        DataBlockEncoding::decode(
                            black_box(&payload),
                            enc != DataBlockEncoding::None,
                            fmt,
                            0,
                        )
                        .unwrap(),
                    )
                })
            });
            let r = HFileReader::open(&fs, Path::new(enc.name()), None).unwrap();
            let probes: Vec<Vec<u8>> = cells
                .iter()
                .step_by(997)
                .map(|c| c.row().to_vec())
                .collect();
            group.bench_function(format!("seek/{}", enc.name()), |b| {
                b.iter(|| {
                    for p in &probes {
                        let mut s = r.scanner();
                        black_box(s.seek(&KeyRef::first_on_row(p)).unwrap());
                    }
                })
            });
        }
        group.finish();
        let _ = fs.list_dir(Path::new(""));
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
