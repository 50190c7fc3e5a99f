//! Cutting an HFile that spans region boundaries into one file per region (HBase's
//! `LoadIncrementalHFiles.splitStoreFile`/`copyHFileHalf`): each piece holds the
//! source's cells of one row range, written with the target family's settings
//! (block size, compression, data block encoding, bloom filter).

use std::path::Path;
use std::sync::Arc;

use cellar_api::FamilyDescriptor;
use cellar_hfile::{HFileReader, HFileWriter};
use cellar_io::FileSystem;
use cellar_region::RegionError;
use cellar_types::KeyRef;

use crate::error::Result;

fn bad(path: &Path, e: impl std::fmt::Display) -> RegionError {
    RegionError::BadBulkLoadFile {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// Writes the cells of `src` with rows in `[lo, hi)` (empty `hi`: no end) to `dest`.
/// Returns how many it wrote.
pub(crate) fn write_piece(
    fs: &Arc<dyn FileSystem>,
    src: &Path,
    family: &FamilyDescriptor,
    lo: &[u8],
    hi: &[u8],
    dest: &Path,
    now: i64,
) -> Result<u64> {
    let reader = HFileReader::open(fs.as_ref(), src, None).map_err(|e| bad(src, e))?;
    let opts = cellar_region::store::family_writer_options(family, now);
    let mut w = HFileWriter::create(fs.as_ref(), dest, opts).map_err(RegionError::from)?;
    let mut scanner = reader.scanner();
    let mut ok = scanner
        .seek(&KeyRef::first_on_row(lo))
        .map_err(|e| bad(src, e))?;
    let mut n = 0u64;
    while ok {
        let Some(c) = scanner.current() else { break };
        if !hi.is_empty() && c.row() >= hi {
            break;
        }
        w.append(c.clone()).map_err(RegionError::from)?;
        n += 1;
        ok = scanner.advance().map_err(|e| bad(src, e))?;
    }
    w.close().map_err(RegionError::from)?;
    Ok(n)
}
