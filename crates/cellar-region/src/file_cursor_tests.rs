//! A file cursor's visibility: cells of a store file above a reader's read point are
//! stepped over wherever they fall.

use crate::cursor::{CellCursor, FileCursor};
use cellar_hfile::{HFileReader, HFileWriter, WriterOptions};
use cellar_io::{FileSystem, MemoryFs};
use cellar_types::{Cell, KeyRef};
use std::path::Path;
use std::sync::Arc;

/// A file of rows r0000.. with two columns each, in blocks of a few cells; the
/// cell of row `i`, column `q` carries sequence id `seq(i, q)`.
fn file(rows: u32, seq: impl Fn(u32, u32) -> u64) -> Arc<HFileReader> {
    let fs = MemoryFs::new();
    let path = Path::new("/f");
    let opts = WriterOptions {
        block_size: 100,
        ..WriterOptions::default()
    };
    let mut w = HFileWriter::create(&fs, path, opts).unwrap_or_else(|e| panic!("{e}"));
    for i in 0..rows {
        for q in 0..2 {
            let c = Cell::put(format!("r{i:04}"), "f", format!("q{q}"), 1, "value")
                .map(|c| c.with_seq_id(seq(i, q)))
                .unwrap_or_else(|e| panic!("{e}"));
            w.append(c).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    w.close().unwrap_or_else(|e| panic!("{e}"));
    let reader = HFileReader::open(&fs as &dyn FileSystem, path, None);
    Arc::new(reader.unwrap_or_else(|e| panic!("{e}")))
}

fn walk(c: &mut FileCursor) -> Vec<(Vec<u8>, u64)> {
    let mut seen = Vec::new();
    while let Some(cell) = c.peek() {
        seen.push((cell.key().to_vec(), cell.seq_id()));
        c.advance().unwrap_or_else(|e| panic!("{e}"));
    }
    seen
}

/// Cells written after a reader's read point (a flush of edits still in flight)
/// are stepped over wherever they fall: first in the file, inside a block, in runs
/// across block boundaries, last.
#[test]
fn file_cursor_hides_cells_above_its_read_point() {
    let rows = 60;
    // Every third row's first column, rows 20-29 whole, and the last row are
    // later than the read point 100.
    let late = |i: u32, q: u32| (i.is_multiple_of(3) && q == 0) || (20..30).contains(&i) || i == 59;
    let reader = file(
        rows,
        |i, q| if late(i, q) { 200 + u64::from(i) } else { 50 },
    );
    assert!(
        reader.root_index().len() > 5,
        "the file spans several blocks"
    );
    let start = KeyRef::first_on_row(b"");
    let mut c =
        FileCursor::new(reader.clone(), 100, &start, true, None).unwrap_or_else(|e| panic!("{e}"));
    let seen = walk(&mut c);
    let want: Vec<u64> = (0..rows)
        .flat_map(|i| (0..2).map(move |q| (i, q)))
        .filter(|&(i, q)| !late(i, q))
        .map(|_| 50)
        .collect();
    assert_eq!(seen.iter().map(|s| s.1).collect::<Vec<_>>(), want);
    assert!(seen
        .iter()
        .all(|(k, _)| k.as_slice() < b"\x00\x05r0020".as_slice()
            || k.as_slice() >= b"\x00\x05r0030".as_slice()));
    // With a read point above every write the file reads whole.
    let mut all =
        FileCursor::new(reader, u64::MAX, &start, true, None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(walk(&mut all).len(), 2 * rows as usize);
}
