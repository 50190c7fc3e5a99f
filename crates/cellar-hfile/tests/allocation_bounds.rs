//! Decoders never allocate from a length field they have not checked against the bytes
//! they really hold: damaged blocks whose headers or encoded cells claim gigabytes fail
//! with an error after allocating no more than the block's own size allows. A counting
//! allocator records the largest single allocation while each decoder runs.

#![allow(clippy::unwrap_used)]
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use cellar_hfile::{CellFormat, Compression, DataBlockEncoding};
use cellar_types::Cell;

struct Counting;

static LARGEST: AtomicUsize = AtomicUsize::new(0);
/// Tests run on several threads; each measurement holds this.
static MEASURING: Mutex<()> = Mutex::new(());

// SAFETY: every call is forwarded unchanged to the system allocator with the same layout
// and pointer; the only addition is an atomic maximum of the requested sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's layout contract is passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator (the system one) with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The largest single allocation `f` makes.
fn largest_allocation(f: impl FnOnce()) -> usize {
    let _one = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    LARGEST.store(0, Ordering::Relaxed);
    f();
    LARGEST.load(Ordering::Relaxed)
}

const LIMIT: usize = 16 << 20;

#[test]
fn the_allocator_sees_allocations() {
    let n = largest_allocation(|| {
        let v = std::hint::black_box(vec![1u8; 40 << 20]);
        assert_eq!(v.len(), 40 << 20);
    });
    assert!(n >= 40 << 20, "{n}");
}

/// Hadoop-framed blocks (SNAPPY, LZ4, ZSTD) whose run and piece lengths claim a gigabyte.
#[test]
fn compressed_blocks_with_huge_length_fields() {
    for codec in [Compression::Snappy, Compression::Lz4, Compression::Zstd] {
        let real = codec.compress(&vec![7u8; 4096]).unwrap();
        let huge = 1usize << 30;
        // The run claims a gigabyte; the piece inside is real.
        let mut claims_run = (huge as u32).to_be_bytes().to_vec();
        claims_run.extend_from_slice(&real[4..]);
        // Garbage instead of the piece.
        let mut garbage = (huge as u32).to_be_bytes().to_vec();
        garbage.extend_from_slice(&64u32.to_be_bytes());
        garbage.extend_from_slice(&[0xffu8; 64]);
        for input in [&claims_run, &garbage] {
            let n = largest_allocation(|| {
                let r = codec.decompress(input, huge, 0);
                assert!(r.is_err(), "{codec:?}");
            });
            assert!(n < LIMIT, "{codec:?} allocated {n} bytes");
        }
    }
}

fn cells() -> Vec<Cell> {
    (0..40)
        .map(|i| {
            Cell::put(
                format!("row{:03}", i / 4),
                "f",
                // Lengths vary, so that every cell stores its key length.
                format!("q{}{i:03}", "x".repeat(i % 5)),
                1000 + i as i64,
                format!("v{i}"),
            )
            .unwrap()
            // Tags repeat, so compressed blocks hold dictionary indexes.
            .with_tags([&[0u8, 2, 8, i as u8 % 3][..], &[0, 4, 1, b'a', b'c', b'l']].concat())
            .unwrap()
        })
        .collect()
}

/// Encoded blocks with every byte in turn set to 0xff (lengths become huge): each
/// decodes or fails, allocating no more than a small multiple of the block.
#[test]
fn encoded_blocks_with_damaged_lengths() {
    let fmt = CellFormat {
        includes_tags: true,
        includes_mvcc: true,
        compress_tags: true,
    };
    for enc in [
        DataBlockEncoding::Prefix,
        DataBlockEncoding::Diff,
        DataBlockEncoding::FastDiff,
        DataBlockEncoding::RowIndexV1,
    ] {
        let payload = enc.encode(&cells(), fmt);
        // Single bytes, and a varint of about 2^28 written over the field at each place.
        let patches: [&[u8]; 3] = [&[0xff], &[0x7f], &[0xff, 0xff, 0xff, 0x7f]];
        for i in 0..payload.len() {
            for patch in patches {
                let mut bad = payload.clone();
                for (j, b) in patch.iter().enumerate() {
                    if let Some(x) = bad.get_mut(i + j) {
                        *x = *b;
                    }
                }
                let n = largest_allocation(|| {
                    let _ = DataBlockEncoding::decode(&bad, true, fmt, 0);
                });
                assert!(n < LIMIT, "{enc:?}: {patch:x?} at {i} allocated {n} bytes");
            }
            // The byte replaced by a 4-byte varint, the rest kept in place (a one-byte
            // length field becomes a huge one, the fields after it still parse).
            let mut bad = payload[..i].to_vec();
            bad.extend_from_slice(&[0xff, 0xff, 0xff, 0x7f]);
            bad.extend_from_slice(&payload[i + 1..]);
            let n = largest_allocation(|| {
                let _ = DataBlockEncoding::decode(&bad, true, fmt, 0);
            });
            assert!(n < LIMIT, "{enc:?}: length at {i} allocated {n} bytes");
        }
    }
}
