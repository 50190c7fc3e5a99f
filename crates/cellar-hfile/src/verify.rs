//! A full check of a store file: every block's checksum, every cell decoded, cells in
//! order, and the counts and last key agreeing with the trailer and file info.

use std::cmp::Ordering;

use cellar_types::compare_cells;

use crate::error::{HFileError, Result};
use crate::reader::HFileReader;

impl HFileReader {
    /// Reads the whole file and checks it; returns the number of cells.
    pub fn verify(&self) -> Result<u64> {
        // Every block, in file order, has a valid header and checksums, and the blocks
        // tile the file up to the trailer.
        let end = self.file_size() - crate::trailer::TRAILER_SIZE as u64;
        let mut offset = 0u64;
        while offset < end {
            let b = crate::block::read_block(self.file_handle(), offset, end, self.compression())?;
            offset += b.header.on_disk_size_with_header();
        }
        let mut scanner = self.scanner();
        let mut count = 0u64;
        let mut prev = None;
        let mut ok = scanner.seek_to_first()?;
        while ok {
            let Some(cell) = scanner.current().cloned() else {
                break;
            };
            if let Some(p) = &prev {
                if compare_cells(p, &cell) == Ordering::Greater {
                    let offset = scanner.current_block().map_or(0, |b| b.offset);
                    return Err(HFileError::corrupt(offset, "cells out of order"));
                }
            }
            count += 1;
            prev = Some(cell);
            ok = scanner.advance()?;
        }
        if count != self.entry_count() {
            return Err(HFileError::corrupt(
                0,
                format!(
                    "trailer says {} cells, data blocks hold {count}",
                    self.entry_count()
                ),
            ));
        }
        if let (Some(last), Some(expected)) = (&prev, self.last_key()) {
            if last.key_bytes() != expected {
                return Err(HFileError::corrupt(
                    0,
                    "LASTKEY does not match the last cell",
                ));
            }
        }
        if let Some(mid) = self.mid_key()? {
            cellar_types::KeyRef::parse(&mid)
                .map_err(|e| HFileError::corrupt(0, format!("bad mid-key: {e}")))?;
        }
        Ok(count)
    }
}
