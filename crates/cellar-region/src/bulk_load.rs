//! Bulk load (HBase's `HRegion.bulkLoadHFiles`): HFiles written elsewhere become store
//! files of a region in one step.
//!
//! Each file is checked first, outside any lock: a valid HFile (every block and
//! checksum, cells in order, the trailer's count), every cell of the family it is
//! loaded into, its rows inside the region. It is then copied into its store under a
//! staging name. Under the region's update lock (writes wait) the MemStore is flushed,
//! as HBase does, so no edit below the load's sequence id is left for WAL replay to
//! skip; the load takes the next sequence id N and every file is renamed
//! `<name>_SeqId_N_`, HBase's mark of a bulk-loaded file: its cells read as written at
//! N, newer than everything before the load and older than every write after it.
//!
//! A journal (`.bulkload` in the region directory) makes a load of several families
//! all-or-nothing: it is written (and synced) once every file is in place, before the
//! stores' manifests name them, and an opening region finishes a journaled load before
//! its stores open. A crash before the journal leaves only unnamed files, which the
//! stores delete when they open.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use cellar_io::FileSystem;
use cellar_types::to_string_binary;

use crate::error::{RegionError, Result};
use crate::manifest::{FileEntry, Manifest};
use crate::region::Region;
use crate::store::{family_dir_name, StoreFile, SEQ_ID_MARKER};

/// The journal of a load in progress, in the region directory.
const JOURNAL: &str = ".bulkload";
/// Staging copies in a store directory start with this.
pub(crate) const STAGING_PREFIX: &str = ".bulk-";
/// First line of a journal.
const JOURNAL_MAGIC: &str = "cellar-bulkload 1";

/// What a load did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkLoadOutcome {
    /// The sequence id the loaded cells read with.
    pub seq_id: u64,
    /// (family, store file name) of each loaded file.
    pub files: Vec<(Vec<u8>, String)>,
    /// Cells loaded.
    pub cells: u64,
}

/// Whether `name` is a bulk-loaded store file name (`<32 hex>_SeqId_N_`).
pub(crate) fn is_bulk_file_name(name: &str) -> bool {
    match name.split_once(SEQ_ID_MARKER) {
        Some((base, rest)) => {
            crate::store_upgrade::is_store_file_name(base)
                && rest
                    .strip_suffix('_')
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        }
        None => false,
    }
}

/// A file that passed [`check_hfile`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedFile {
    pub cells: u64,
    pub first_row: Vec<u8>,
    pub last_row: Vec<u8>,
}

/// Checks a file offered for bulk load: a valid HFile (every block and checksum, cells
/// in order, the trailer's count) whose every cell is of `family`. `None` for a file
/// without cells.
pub fn check_hfile(fs: &dyn FileSystem, family: &[u8], path: &Path) -> Result<Option<CheckedFile>> {
    let reader =
        cellar_hfile::HFileReader::open(fs, path, None).map_err(|e| bad(path, e.to_string()))?;
    let cells = reader.verify().map_err(|e| bad(path, e.to_string()))?;
    if cells == 0 {
        return Ok(None);
    }
    let mut scanner = reader.scanner();
    let mut ok = scanner
        .seek_to_first()
        .map_err(|e| bad(path, e.to_string()))?;
    let mut first_row: Option<Vec<u8>> = None;
    let mut last_row: Vec<u8> = Vec::new();
    while ok {
        let Some(c) = scanner.current() else { break };
        if c.family() != family {
            return Err(bad(
                path,
                format!(
                    "a cell of family '{}' in a file for family '{}'",
                    to_string_binary(c.family()),
                    to_string_binary(family)
                ),
            ));
        }
        if first_row.is_none() {
            first_row = Some(c.row().to_vec());
        }
        if c.row() != last_row.as_slice() {
            last_row = c.row().to_vec();
        }
        ok = scanner.advance().map_err(|e| bad(path, e.to_string()))?;
    }
    Ok(first_row.map(|first_row| CheckedFile {
        cells,
        first_row,
        last_row,
    }))
}

fn bad(path: &Path, reason: impl Into<String>) -> RegionError {
    RegionError::BadBulkLoadFile {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

impl Region {
    /// Loads `files` ((family, path) pairs) into this region atomically. Nothing is
    /// loaded if any file fails its checks.
    pub fn bulk_load(&self, files: &[(Vec<u8>, PathBuf)]) -> Result<BulkLoadOutcome> {
        self.bulk_load_with(files, false)
    }

    /// As [`Region::bulk_load`]; with `link`, each file becomes a second name of the
    /// source (a hard link where the file system has them) instead of a copy — for
    /// sources nobody changes, such as a snapshot's archived files.
    pub fn bulk_load_with(
        &self,
        files: &[(Vec<u8>, PathBuf)],
        link: bool,
    ) -> Result<BulkLoadOutcome> {
        self.check_open()?;
        let fs = self.ctx.fs.clone();
        // 1. Check every file before touching the region.
        let mut cells = 0;
        for (family, path) in files {
            if !self.stores.contains_key(family) {
                return Err(RegionError::NoSuchColumnFamily {
                    family: family.clone(),
                    region: self.name.clone(),
                });
            }
            cells += self.check_bulk_file(family, path)?;
        }
        // 2. Staging copies, outside the lock.
        let mut staged: Vec<(Vec<u8>, PathBuf)> = Vec::with_capacity(files.len());
        let result = (|| {
            for (family, path) in files {
                let store_dir = self.dir().join(family_dir_name(family));
                let staging = store_dir.join(format!(
                    "{STAGING_PREFIX}{}",
                    crate::store::new_file_name(self.ctx.clock.now_millis())
                ));
                staged.push((family.clone(), staging.clone()));
                if link {
                    fs.link(path, &staging)?;
                } else {
                    copy_file(fs.as_ref(), path, &staging)?;
                }
            }
            self.commit_bulk_load(&staged, cells)
        })();
        if result.is_err() {
            for (_, p) in &staged {
                if fs.exists(p) {
                    let _ = fs.remove_file(p);
                }
            }
        }
        result
    }

    /// Checks one file: a valid HFile of `family` inside the region. Returns its cells.
    fn check_bulk_file(&self, family: &[u8], path: &Path) -> Result<u64> {
        let f = check_hfile(self.ctx.fs.as_ref(), family, path)?
            .ok_or_else(|| bad(path, "the file holds no cells"))?;
        if !self.contains_row(&f.first_row) || !self.contains_row(&f.last_row) {
            return Err(RegionError::BulkLoadOutsideRegion {
                path: path.display().to_string(),
                region: self.name.clone(),
            });
        }
        Ok(f.cells)
    }

    /// Under the update lock: flush, take a sequence id, name the staged files with
    /// it, journal, commit each store.
    fn commit_bulk_load(
        &self,
        staged: &[(Vec<u8>, PathBuf)],
        cells: u64,
    ) -> Result<BulkLoadOutcome> {
        let fs = self.ctx.fs.clone();
        let _one = self.lock_flush();
        let _writes = self.updates.write().unwrap_or_else(|e| e.into_inner());
        self.check_open()?;
        self.flush_locked(false)?;
        let seq = self.mvcc.begin();
        let outcome = (|| -> Result<Vec<(Vec<u8>, String)>> {
            let mut named = Vec::with_capacity(staged.len());
            for (family, staging) in staged {
                let name = format!(
                    "{}{SEQ_ID_MARKER}{seq}_",
                    crate::store::new_file_name(self.ctx.clock.now_millis())
                );
                let store_dir = self.dir().join(family_dir_name(family));
                fs.rename(staging, &store_dir.join(&name))?;
                named.push((family.clone(), name));
            }
            for family in named.iter().map(|(f, _)| f) {
                fs.sync_dir(&self.dir().join(family_dir_name(family)))?;
            }
            write_journal(fs.as_ref(), self.dir(), &named)?;
            for (family, name) in &named {
                let Some(store) = self.stores.get(family) else {
                    continue;
                };
                let file = StoreFile::open(&fs, &store.dir().join(name), self.ctx.cache.clone())?;
                store.commit_bulk_load(Arc::new(file))?;
            }
            fs.remove_file(&self.dir().join(JOURNAL))?;
            fs.sync_dir(self.dir())?;
            Ok(named)
        })();
        // The id is used either way: readers may see the files committed so far.
        self.mvcc.complete(seq);
        let files = outcome?;
        self.metrics
            .bulk_loads
            .fetch_add(files.len() as u64, Ordering::Relaxed);
        tracing::info!(
            table = %self.table.name,
            region = %self.name,
            seq_id = seq,
            files = files.len(),
            cells,
            "bulk loaded"
        );
        Ok(BulkLoadOutcome {
            seq_id: seq,
            files,
            cells,
        })
    }
}

/// Copies `from` to `to` and syncs it.
fn copy_file(fs: &dyn FileSystem, from: &Path, to: &Path) -> Result<()> {
    let src = fs.open(from)?;
    let mut dst = fs.create(to)?;
    let len = src.len();
    let mut buf = vec![0u8; 1 << 20];
    let mut off = 0u64;
    while off < len {
        let n = (len - off).min(buf.len() as u64) as usize;
        src.read_at(off, &mut buf[..n])?;
        dst.append(&buf[..n])?;
        off += n as u64;
    }
    dst.sync()?;
    Ok(())
}

fn write_journal(fs: &dyn FileSystem, dir: &Path, files: &[(Vec<u8>, String)]) -> Result<()> {
    let mut body = format!("{JOURNAL_MAGIC}\n");
    for (family, name) in files {
        body.push_str(&format!("{}\t{name}\n", cellar_types::to_hex(family)));
    }
    let crc = crc32c::crc32c(body.as_bytes());
    body.push_str(&format!("crc {crc:08x}\n"));
    let tmp = dir.join(format!("{JOURNAL}.tmp"));
    let mut w = fs.create(&tmp)?;
    w.append(body.as_bytes())?;
    w.sync()?;
    drop(w);
    fs.rename(&tmp, &dir.join(JOURNAL))?;
    fs.sync_dir(dir)?;
    Ok(())
}

/// Reads a journal: the (family, file) pairs, or why it cannot be trusted.
fn read_journal(text: &str) -> std::result::Result<Vec<(Vec<u8>, String)>, String> {
    let (body, tail) = text
        .trim_end_matches('\n')
        .rsplit_once('\n')
        .ok_or("no checksum line")?;
    let body = format!("{body}\n");
    let crc = tail
        .strip_prefix("crc ")
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .ok_or("no checksum line")?;
    if crc32c::crc32c(body.as_bytes()) != crc {
        return Err("checksum mismatch".into());
    }
    let mut lines = body.lines();
    if lines.next() != Some(JOURNAL_MAGIC) {
        return Err("not a bulk load journal".into());
    }
    lines
        .map(|l| {
            let (f, name) = l.split_once('\t').ok_or("a line without a tab")?;
            let family = cellar_types::from_hex(f).ok_or("a family that is not hex")?;
            if !is_bulk_file_name(name) {
                return Err(format!("not a bulk-loaded file name: {name}"));
            }
            Ok((family, name.to_string()))
        })
        .collect()
}

/// Finishes a load a crash interrupted after its journal: every store it names gets
/// its file into its manifest (once), then the journal goes. Runs before the region's
/// stores open.
pub(crate) fn finish_journal(fs: &Arc<dyn FileSystem>, region_dir: &Path) -> Result<()> {
    let tmp = region_dir.join(format!("{JOURNAL}.tmp"));
    if fs.exists(&tmp) {
        // Never renamed into place: the load did not happen.
        fs.remove_file(&tmp)?;
    }
    let path = region_dir.join(JOURNAL);
    if !fs.exists(&path) {
        return Ok(());
    }
    let bytes = cellar_io::read_all(fs.as_ref(), &path)?;
    let text = String::from_utf8(bytes).map_err(|_| RegionError::CorruptStore {
        path: path.display().to_string(),
        reason: "a bulk load journal that is not text".into(),
    })?;
    let entries = read_journal(&text).map_err(|reason| RegionError::CorruptStore {
        path: path.display().to_string(),
        reason,
    })?;
    for (family, name) in entries {
        let store_dir = region_dir.join(family_dir_name(&family));
        if !fs.exists(&store_dir.join(&name)) {
            // Its store already committed it and compacted it away.
            continue;
        }
        let Some(mut live) = Manifest::read(fs.as_ref(), &store_dir)? else {
            continue;
        };
        if live.iter().any(|e| e.name == name) {
            continue;
        }
        live.push(FileEntry::hfile(name.clone()));
        Manifest::create(fs.clone(), &store_dir, live)?;
        tracing::info!(store = %store_dir.display(), file = %name, "finished an interrupted bulk load");
    }
    fs.remove_file(&path)?;
    fs.sync_dir(region_dir)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_file_names() {
        let base = "0123456789abcdef0123456789abcdef";
        assert!(is_bulk_file_name(&format!("{base}_SeqId_42_")));
        assert!(!is_bulk_file_name(base));
        assert!(!is_bulk_file_name(&format!("{base}_SeqId__")));
        assert!(!is_bulk_file_name(&format!("{base}_SeqId_4x_")));
        assert!(!is_bulk_file_name("x_SeqId_4_"));
    }

    #[test]
    fn journals_round_trip_and_refuse_damage() {
        let base = "0123456789abcdef0123456789abcdef";
        let files = vec![
            (b"a".to_vec(), format!("{base}_SeqId_7_")),
            (vec![0xff, 0], format!("{base}_SeqId_7_")),
        ];
        let mut body = format!("{JOURNAL_MAGIC}\n");
        for (f, n) in &files {
            body.push_str(&format!("{}\t{n}\n", cellar_types::to_hex(f)));
        }
        let text = format!("{body}crc {:08x}\n", crc32c::crc32c(body.as_bytes()));
        assert_eq!(read_journal(&text).unwrap(), files);
        let damaged = text.replace("_7_", "_8_");
        assert!(read_journal(&damaged).is_err());
        assert!(read_journal("").is_err());
        assert!(read_journal("cellar-bulkload 1\n").is_err());
    }
}
