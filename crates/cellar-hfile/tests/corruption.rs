//! A flipped byte anywhere in a store file gives a checksum or format error on open or
//! on a full read; a truncated file never opens. Never a panic, never wrong cells.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use cellar_hfile::{
    BloomType, Compression, DataBlockEncoding, HFileReader, HFileWriter, WriterOptions,
};
use cellar_io::{read_all, FaultFs, FileSystem};
use cellar_types::Cell;

fn build(fs: &FaultFs, path: &Path, enc: DataBlockEncoding, codec: Compression) -> u64 {
    let opts = WriterOptions {
        block_size: 256,
        encoding: enc,
        compression: codec,
        bloom: BloomType::Row,
        index_block_max_size: 128,
        index_min_entries: 2,
        bloom_block_size: 128,
        ..WriterOptions::default()
    };
    let mut w = HFileWriter::create(fs, path, opts).unwrap();
    for i in 0..60u32 {
        w.append(
            Cell::put(
                format!("row{i:03}"),
                &b"f"[..],
                &b"q"[..],
                i as i64,
                format!("v{i}"),
            )
            .unwrap()
            .with_seq_id(i as u64 + 1),
        )
        .unwrap();
    }
    w.close().unwrap().file_size
}

fn open_and_read(fs: &FaultFs, path: &Path) -> Result<u64, cellar_hfile::HFileError> {
    let r = HFileReader::open(fs, path, None)?;
    r.verify()
}

#[test]
fn every_flipped_byte_is_detected() {
    for (enc, codec) in [
        (DataBlockEncoding::None, Compression::None),
        (DataBlockEncoding::FastDiff, Compression::Gz),
        (DataBlockEncoding::RowIndexV1, Compression::Snappy),
    ] {
        let fs = FaultFs::new();
        let path = Path::new("c");
        let len = build(&fs, path, enc, codec);
        assert_eq!(open_and_read(&fs, path).unwrap(), 60);
        let pristine = read_all(&fs, path).unwrap();
        for offset in 0..len {
            fs.flip_byte(path, offset, 0x01).unwrap();
            assert!(
                open_and_read(&fs, path).is_err(),
                "{enc:?}/{codec:?}: flip at {offset} of {len} went unnoticed"
            );
            fs.flip_byte(path, offset, 0x01).unwrap();
        }
        assert_eq!(read_all(&fs, path).unwrap(), pristine);
    }
}

#[test]
fn truncated_files_are_errors() {
    let fs = FaultFs::new();
    let path = Path::new("t");
    let len = build(&fs, path, DataBlockEncoding::Diff, Compression::Lz4);
    let pristine = read_all(&fs, path).unwrap();
    for cut in (0..len).step_by(97).chain([len - 1, len - 4096, 3]) {
        let p = Path::new("t2");
        let mut w = fs.create(p).unwrap();
        w.append(&pristine[..cut as usize]).unwrap();
        drop(w);
        assert!(open_and_read(&fs, p).is_err(), "cut at {cut}");
    }
}
