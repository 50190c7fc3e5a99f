//! Opens arbitrary bytes as a store file, iterates it and seeks in it: any outcome but
//! a panic is fine. Half of the inputs are patched into a valid file's shape (a real
//! v3 trailer at the end) so the fuzzer reaches the block and index decoders.
#![no_main]

use std::path::Path;

use cellar_hfile::{HFileReader, Trailer};
use cellar_io::{FileSystem, MemoryFs};
use cellar_types::KeyRef;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let fs = MemoryFs::new();
    let path = Path::new("f");
    let mut bytes = data.to_vec();
    if data.first().is_some_and(|b| b & 1 == 1) && data.len() > 64 {
        // Give the blocks a plausible trailer built from the input's first bytes.
        let n = |i: usize| data.get(i).copied().unwrap_or(0) as u64;
        let body = bytes.len() as u64;
        let t = Trailer {
            file_info_offset: n(1) * body / 256,
            load_on_open_offset: n(2) * body / 256,
            data_index_count: n(3) as u32 % 8,
            meta_index_count: n(4) as u32 % 3,
            entry_count: n(5),
            num_data_index_levels: 1 + n(6) as u32 % 3,
            first_data_block_offset: 0,
            last_data_block_offset: n(7) * body / 256,
            comparator_class_name: "org.apache.hadoop.hbase.KeyValue$KVComparator".into(),
            compression_codec: [0u32, 1, 2, 3, 4, 6][n(8) as usize % 6],
            major_version: 3,
            minor_version: 3,
            ..Trailer::default()
        };
        bytes.extend_from_slice(&t.encode());
    }
    if let Ok(mut w) = fs.create(path) {
        let _ = w.append(&bytes);
    }
    let Ok(reader) = HFileReader::open(&fs, path, None) else { return };
    let _ = reader.verify();
    let _ = reader.mid_key();
    let mut s = reader.scanner();
    if let Ok(true) = s.seek_to_first() {
        for _ in 0..10_000 {
            match s.advance() {
                Ok(true) => {}
                _ => break,
            }
        }
    }
    for probe in [&b""[..], b"a", b"row", &data[..data.len().min(8)]] {
        let mut s = reader.scanner();
        let _ = s.seek(&KeyRef::first_on_row(probe));
        let _ = s.seek_before(&KeyRef::last_on_row(probe));
        let _ = reader.might_contain_row(probe);
        let _ = reader.might_contain_row_col(probe, b"q");
        let _ = reader.might_contain_delete_family(probe);
    }
});
