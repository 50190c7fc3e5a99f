//! Reads arbitrary bytes as a store manifest: raw, after a valid header, and as the
//! payload of a validly framed record after a valid snapshot (so the record decoder
//! runs on arbitrary bytes). Reading must give the live files or a typed error, never
//! panic, and never allocate on the word of a count it cannot hold.
#![no_main]

use std::path::Path;
use std::sync::Arc;

use cellar_io::{FileSystem, MemoryFs};
use cellar_region::manifest::{Manifest, MAGIC, VERSION};
use libfuzzer_sys::fuzz_target;

fn read(bytes: &[u8]) {
    let fs = MemoryFs::new();
    let dir = Path::new("/s");
    fs.create_dir_all(dir).unwrap();
    let mut w = fs.create(&dir.join("MANIFEST-00000000000000000001")).unwrap();
    w.append(bytes).unwrap();
    w.sync().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(fs);
    let _ = Manifest::read(fs.as_ref(), dir);
}

fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = (payload.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(&crc32c::crc32c(payload).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

fuzz_target!(|data: &[u8]| {
    read(data);
    let mut head = MAGIC.to_vec();
    head.extend_from_slice(&VERSION.to_be_bytes());
    let mut raw = head.clone();
    raw.extend_from_slice(data);
    read(&raw);
    // An empty snapshot, then the input as a framed record.
    let mut framed = head;
    framed.extend_from_slice(&frame(&[1, 0, 0, 0, 0]));
    framed.extend_from_slice(&frame(data));
    read(&framed);
});
