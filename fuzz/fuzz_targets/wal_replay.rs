//! Replays arbitrary bytes as WAL segments: raw (exercising framing, torn tails and
//! corruption handling) and wrapped in valid frames (so payload decoding runs on
//! arbitrary bytes). Replay must return edits or a typed error, never panic.
#![no_main]

use std::path::Path;
use std::sync::Arc;

use cellar_io::{FileSystem, MemoryFs};
use cellar_wal::{Wal, WalOptions};
use libfuzzer_sys::fuzz_target;

fn replay(segments: &[Vec<u8>]) {
    let fs = MemoryFs::new();
    let dir = Path::new("/wal");
    fs.create_dir_all(dir).unwrap();
    for (i, data) in segments.iter().enumerate() {
        let mut w = fs.create(&dir.join(format!("{:020}.wal", i + 1))).unwrap();
        w.append(data).unwrap();
        w.sync().unwrap();
    }
    let fs: Arc<dyn FileSystem> = Arc::new(fs);
    let _ = Wal::open(fs, dir, WalOptions::default(), &mut |_| Ok(()));
}

fuzz_target!(|data: &[u8]| {
    let magic = b"CLWAL01\n";
    // Raw: magic + the input, and the input alone.
    let mut raw = magic.to_vec();
    raw.extend_from_slice(data);
    replay(&[raw.clone()]);
    replay(&[data.to_vec(), raw]);
    // Framed: the input as one record's payload with valid checksums.
    let mut framed = magic.to_vec();
    let len = (data.len() as u32).to_be_bytes();
    framed.extend_from_slice(&len);
    framed.extend_from_slice(&crc32c::crc32c(&len).to_be_bytes());
    framed.extend_from_slice(&crc32c::crc32c(data).to_be_bytes());
    framed.extend_from_slice(data);
    replay(&[framed]);
});
