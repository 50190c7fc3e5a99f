//! Tests of block reads: checksum chunks that start in the header, both checksum kinds,
//! and the payload handed over without a copy.

use std::path::Path;

use cellar_io::{FileSystem, MemoryFs};

use super::*;

/// A data block laid out by hand: header, `payload`, then one checksum of `kind` per
/// `per` bytes of header and payload together.
fn block_bytes(payload: &[u8], kind: u8, per: u32) -> Vec<u8> {
    let data = HEADER_SIZE + payload.len();
    let sums = if kind == 0 {
        0
    } else {
        data.div_ceil(per as usize) * 4
    };
    let header = BlockHeader {
        block_type: BlockType::Data,
        on_disk_size_without_header: (payload.len() + sums) as u32,
        uncompressed_size_without_header: payload.len() as u32,
        prev_block_offset: -1,
        checksum_type: kind,
        bytes_per_checksum: per,
        on_disk_data_size_with_header: data as u32,
    };
    let mut out = Vec::new();
    header.write(&mut out);
    out.extend_from_slice(payload);
    if kind != 0 {
        let crcs: Vec<u8> = out
            .chunks(per as usize)
            .flat_map(|c| crc32(kind, c).to_be_bytes())
            .collect();
        out.extend_from_slice(&crcs);
    }
    out
}

fn read(bytes: &[u8]) -> Result<Block> {
    let fs = MemoryFs::new();
    let path = Path::new("/block");
    let mut f = fs.create(path).unwrap();
    f.append(bytes).unwrap();
    f.sync().unwrap();
    drop(f);
    let file = fs.open(path).unwrap();
    read_block(file.as_ref(), 0, bytes.len() as u64, Compression::None)
}

#[test]
fn a_pair_checksums_as_the_bytes_end_to_end() {
    let bytes: Vec<u8> = (0..200u32).map(|i| (i * 31 % 251) as u8).collect();
    for kind in [1, 2] {
        for split in [0, 1, 32, 33, 34, 199, 200] {
            let (a, b) = bytes.split_at(split);
            assert_eq!(
                crc32_pair(kind, a, b),
                crc32(kind, &bytes),
                "{kind} {split}"
            );
        }
    }
    // The plain CRC32 of "123456789" is the catalogue's check value.
    assert_eq!(crc32(1, b"123456789"), 0xCBF4_3926);
}

#[test]
fn chunks_across_the_header_verify_with_either_checksum() {
    let payload: Vec<u8> = (0..1000u32).map(|i| (i % 97) as u8).collect();
    // Chunks inside the header, ending at it, crossing it, and one for everything.
    for kind in [0, 1, 2] {
        for per in [1, 16, 33, 50, 512, 16 * 1024] {
            let b = read(&block_bytes(&payload, kind, per)).unwrap();
            assert_eq!(b.payload, payload, "kind {kind}, {per} bytes a checksum");
        }
    }
}

#[test]
fn a_flipped_byte_names_its_chunk() {
    let payload = vec![7u8; 300];
    for kind in [1, 2] {
        for (per, at, chunk) in [
            (50, 40, 0),
            (50, 49, 0),
            (50, 50, 1),
            (16, 20, 1),
            (100, 320, 3),
        ] {
            let mut bytes = block_bytes(&payload, kind, per);
            // Past the header's sizes, so the damage reaches the checksums.
            bytes[at] ^= 0x40;
            match read(&bytes) {
                Err(HFileError::Checksum { chunk: c, .. }) => {
                    assert_eq!(c, chunk, "kind {kind}, {per} a chunk, byte {at}")
                }
                other => panic!("kind {kind}, {per} a chunk, byte {at}: {other:?}"),
            }
        }
    }
}
