//! The store-file manifest (`docs/format/manifest.md`): which files a store holds is
//! what its manifest says, never what a directory listing shows. A manifest is a
//! CRC-framed log of edits (files added, files removed) that starts with a snapshot of
//! the live files; a change is committed by one append and fsync. Once the log is long
//! it rolls: a new manifest with the next number is written whole (snapshot first) and
//! the older ones are deleted, so there is never a rename. Opening takes the highest
//! numbered manifest whose snapshot is intact; a torn last record (never acknowledged)
//! is ignored, damage before the end is an error.
//!
//! Split and merge references are manifest entries naming their parent's file relative
//! to the table directory (`<parent region>/<family>/<file>`); no reference file exists
//! on disk.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cellar_io::{FileSystem, WritableFile};

use crate::error::{RegionError, Result};

/// The first bytes of every manifest.
pub const MAGIC: &[u8; 8] = b"CELLARMF";
/// The format version this release writes and reads.
pub const VERSION: u32 = 1;
/// Edits after which the manifest rolls into a fresh snapshot.
const ROLL_AFTER: usize = 1000;
/// The longest record accepted (a snapshot of many thousands of files fits easily).
const MAX_RECORD: usize = 64 << 20;

const SNAPSHOT: u8 = 1;
const EDIT: u8 = 2;

/// What a manifest entry stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileKind {
    /// A store file in the store's own directory.
    HFile,
    /// Half (or all) of a parent region's store file, left by a split or merge.
    Reference {
        /// The parent region's encoded name (its directory under the table).
        parent_region: String,
        /// The parent's file, in the parent's directory of the same family.
        parent_file: String,
        /// The split row; empty with `top` for a whole file (a merge).
        split_row: Vec<u8>,
        /// The rows from the split row on (else the rows below it).
        top: bool,
    },
}

/// One live file of a store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    /// Unique within the store; for an HFile, its file name.
    pub name: String,
    pub kind: FileKind,
}

impl FileEntry {
    pub fn hfile(name: impl Into<String>) -> FileEntry {
        FileEntry {
            name: name.into(),
            kind: FileKind::HFile,
        }
    }
}

/// One committed change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Edit {
    pub add: Vec<FileEntry>,
    pub remove: Vec<String>,
}

/// Whether `name` is a manifest's file name (`MANIFEST-` and 20 digits); its number.
pub fn manifest_number(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("MANIFEST-")?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn manifest_name(n: u64) -> String {
    format!("MANIFEST-{n:020}")
}

/// An open manifest: appends edits to the newest log.
pub struct Manifest {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    state: Mutex<State>,
}

struct State {
    number: u64,
    writer: Box<dyn WritableFile>,
    records: usize,
    live: Vec<FileEntry>,
}

impl std::fmt::Debug for Manifest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manifest").field("dir", &self.dir).finish()
    }
}

fn corrupt(path: &Path, reason: impl Into<String>) -> RegionError {
    RegionError::CorruptStore {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

fn put_str(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u32).to_be_bytes());
    out.extend_from_slice(s);
}

fn encode_entry(out: &mut Vec<u8>, e: &FileEntry) {
    put_str(out, e.name.as_bytes());
    match &e.kind {
        FileKind::HFile => out.push(0),
        FileKind::Reference {
            parent_region,
            parent_file,
            split_row,
            top,
        } => {
            out.push(1);
            put_str(out, parent_region.as_bytes());
            put_str(out, parent_file.as_bytes());
            put_str(out, split_row);
            out.push(u8::from(*top));
        }
    }
}

fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 8);
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(&crc32c::crc32c(payload).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

fn snapshot_record(live: &[FileEntry]) -> Vec<u8> {
    let mut p = vec![SNAPSHOT];
    p.extend_from_slice(&(live.len() as u32).to_be_bytes());
    for e in live {
        encode_entry(&mut p, e);
    }
    frame(&p)
}

fn edit_record(edit: &Edit) -> Vec<u8> {
    let mut p = vec![EDIT];
    p.extend_from_slice(&(edit.add.len() as u32).to_be_bytes());
    for e in &edit.add {
        encode_entry(&mut p, e);
    }
    p.extend_from_slice(&(edit.remove.len() as u32).to_be_bytes());
    for r in &edit.remove {
        put_str(&mut p, r.as_bytes());
    }
    frame(&p)
}

/// A bounds-checked reader over one record's payload.
struct Payload<'a> {
    buf: &'a [u8],
    at: usize,
}

impl<'a> Payload<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let s = self.buf.get(self.at..end)?;
        self.at = end;
        Some(s)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn u32(&mut self) -> Option<u32> {
        self.take(4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_be_bytes)
    }

    fn bytes(&mut self) -> Option<Vec<u8>> {
        let n = self.u32()? as usize;
        self.take(n).map(<[u8]>::to_vec)
    }

    fn string(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?).ok()
    }

    fn entry(&mut self) -> Option<FileEntry> {
        let name = self.string()?;
        let kind = match self.u8()? {
            0 => FileKind::HFile,
            1 => FileKind::Reference {
                parent_region: self.string()?,
                parent_file: self.string()?,
                split_row: self.bytes()?,
                top: self.u8()? != 0,
            },
            _ => return None,
        };
        Some(FileEntry { name, kind })
    }

    /// A count that cannot claim more entries than bytes remain.
    fn count(&mut self) -> Option<usize> {
        let n = self.u32()? as usize;
        (n <= self.buf.len().saturating_sub(self.at)).then_some(n)
    }
}

/// What reading one manifest found.
enum Read {
    /// No intact snapshot (a roll that did not finish).
    NoSnapshot,
    Live(Vec<FileEntry>),
}

fn apply(live: &mut Vec<FileEntry>, edit: Edit) {
    live.retain(|e| !edit.remove.contains(&e.name));
    for a in edit.add {
        live.retain(|e| e.name != a.name);
        live.push(a);
    }
}

fn read_manifest(fs: &dyn FileSystem, path: &Path) -> Result<Read> {
    let data = cellar_io::read_all(fs, path)?;
    if data.len() < 12 || &data[..8] != MAGIC {
        return Ok(Read::NoSnapshot);
    }
    let version = u32::from_be_bytes([data[8], data[9], data[10], data[11]]);
    if version > VERSION {
        return Err(corrupt(
            path,
            format!(
                "store manifest format version {version} is newer than this release reads (version {VERSION}); open it with a newer Cellar"
            ),
        ));
    }
    let mut at = 12;
    let mut live: Option<Vec<FileEntry>> = None;
    while at < data.len() {
        let header = data.get(at..at + 8);
        let Some(h) = header else {
            break; // a torn header at the end
        };
        let len = u32::from_be_bytes([h[0], h[1], h[2], h[3]]) as usize;
        let crc = u32::from_be_bytes([h[4], h[5], h[6], h[7]]);
        let end = at + 8 + len;
        if len > MAX_RECORD {
            if live.is_none() {
                return Ok(Read::NoSnapshot);
            }
            return Err(corrupt(path, format!("record at offset {at} is damaged")));
        }
        if end > data.len() {
            if live.is_none() {
                return Ok(Read::NoSnapshot); // a roll that did not finish
            }
            break; // torn at the end: never acknowledged
        }
        let payload = &data[at + 8..end];
        if crc32c::crc32c(payload) != crc {
            if end == data.len() && live.is_some() {
                break; // the last record, torn
            }
            if live.is_none() {
                return Ok(Read::NoSnapshot);
            }
            return Err(corrupt(
                path,
                format!("checksum mismatch in the record at offset {at}"),
            ));
        }
        let mut p = Payload {
            buf: payload,
            at: 0,
        };
        let bad = || corrupt(path, format!("malformed record at offset {at}"));
        match (p.u8(), &mut live) {
            (Some(SNAPSHOT), None) => {
                let n = p.count().ok_or_else(bad)?;
                let mut files = Vec::with_capacity(n.min(1024));
                for _ in 0..n {
                    files.push(p.entry().ok_or_else(bad)?);
                }
                live = Some(files);
            }
            (Some(EDIT), Some(files)) => {
                let mut edit = Edit::default();
                let n = p.count().ok_or_else(bad)?;
                for _ in 0..n {
                    edit.add.push(p.entry().ok_or_else(bad)?);
                }
                let n = p.count().ok_or_else(bad)?;
                for _ in 0..n {
                    edit.remove.push(p.string().ok_or_else(bad)?);
                }
                apply(files, edit);
            }
            _ => return Err(bad()),
        }
        at = end;
    }
    Ok(match live {
        Some(l) => Read::Live(l),
        None => Read::NoSnapshot,
    })
}

/// The manifests in `dir`, newest first.
fn manifests_in(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let mut found: Vec<(u64, PathBuf)> = fs
        .list_dir(dir)?
        .into_iter()
        .filter_map(|p| {
            let n = manifest_number(p.file_name()?.to_str()?)?;
            Some((n, p))
        })
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    Ok(found)
}

/// Whether `dir` holds a manifest (else it is a store of the old layout, or new).
pub fn exists(fs: &dyn FileSystem, dir: &Path) -> Result<bool> {
    Ok(!manifests_in(fs, dir)?.is_empty())
}

impl Manifest {
    /// Reads the newest intact manifest of `dir`: the live files, or `None` when the
    /// directory has no manifest at all.
    pub fn read(fs: &dyn FileSystem, dir: &Path) -> Result<Option<Vec<FileEntry>>> {
        let found = manifests_in(fs, dir)?;
        if found.is_empty() {
            return Ok(None);
        }
        for (_, path) in &found {
            if let Read::Live(live) = read_manifest(fs, path)? {
                return Ok(Some(live));
            }
        }
        Err(corrupt(
            dir,
            "no store manifest with an intact snapshot (every MANIFEST file is damaged)",
        ))
    }

    /// Writes a new manifest holding `live` (numbered after any in `dir`), fsynced, and
    /// deletes the older ones. Used to create a store, to roll, and to upgrade.
    pub fn create(fs: Arc<dyn FileSystem>, dir: &Path, live: Vec<FileEntry>) -> Result<Manifest> {
        fs.create_dir_all(dir)?;
        let older = manifests_in(fs.as_ref(), dir)?;
        let number = older.first().map_or(1, |(n, _)| n + 1);
        let path = dir.join(manifest_name(number));
        let mut w = fs.create(&path)?;
        let mut head = MAGIC.to_vec();
        head.extend_from_slice(&VERSION.to_be_bytes());
        head.extend_from_slice(&snapshot_record(&live));
        w.append(&head)?;
        w.sync()?;
        fs.sync_dir(dir)?;
        for (_, p) in older {
            fs.remove_file(&p)?;
        }
        Ok(Manifest {
            fs,
            dir: dir.to_path_buf(),
            state: Mutex::new(State {
                number,
                writer: w,
                records: 1,
                live,
            }),
        })
    }

    /// Opens the store manifest of `dir` and starts a fresh log holding its live files
    /// (which also drops a torn tail). `None` when `dir` has no manifest. (A store
    /// reads first and rolls only once its files have opened.)
    pub fn open(fs: Arc<dyn FileSystem>, dir: &Path) -> Result<Option<Manifest>> {
        match Manifest::read(fs.as_ref(), dir)? {
            None => Ok(None),
            Some(live) => Ok(Some(Manifest::create(fs, dir, live)?)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The live files.
    pub fn live(&self) -> Vec<FileEntry> {
        self.lock().live.clone()
    }

    /// Commits `edit`: durable once this returns.
    pub fn commit(&self, edit: Edit) -> Result<()> {
        let mut s = self.lock();
        let record = edit_record(&edit);
        s.writer.append(&record)?;
        s.writer.sync()?;
        apply(&mut s.live, edit);
        s.records += 1;
        if s.records > ROLL_AFTER {
            let live = s.live.clone();
            drop(s);
            let fresh = Manifest::create(self.fs.clone(), &self.dir, live)?;
            let new_state = fresh.state.into_inner().unwrap_or_else(|e| e.into_inner());
            *self.lock() = new_state;
        }
        Ok(())
    }

    /// The number of the current log (tests).
    pub fn number(&self) -> u64 {
        self.lock().number
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cellar_io::MemoryFs;

    fn fs() -> Arc<dyn FileSystem> {
        Arc::new(MemoryFs::new())
    }

    fn reference(name: &str) -> FileEntry {
        FileEntry {
            name: name.into(),
            kind: FileKind::Reference {
                parent_region: "p1".into(),
                parent_file: "f0".into(),
                split_row: b"m\x00".to_vec(),
                top: true,
            },
        }
    }

    #[test]
    fn edits_replay_and_roll() {
        let fs = fs();
        let dir = Path::new("/s");
        fs.create_dir_all(dir).unwrap();
        assert!(Manifest::read(fs.as_ref(), dir).unwrap().is_none());
        assert!(!exists(fs.as_ref(), dir).unwrap());
        let m = Manifest::create(fs.clone(), dir, vec![reference("r1")]).unwrap();
        m.commit(Edit {
            add: vec![FileEntry::hfile("a")],
            remove: vec![],
        })
        .unwrap();
        m.commit(Edit {
            add: vec![FileEntry::hfile("b")],
            remove: vec!["a".into(), "r1".into()],
        })
        .unwrap();
        let live = Manifest::read(fs.as_ref(), dir).unwrap().unwrap();
        assert_eq!(live, vec![FileEntry::hfile("b")]);
        for i in 0..(ROLL_AFTER + 5) {
            m.commit(Edit {
                add: vec![FileEntry::hfile(format!("x{i}"))],
                remove: vec![format!("x{}", i.wrapping_sub(1))],
            })
            .unwrap();
        }
        assert_eq!(m.number(), 2);
        assert_eq!(manifests_in(fs.as_ref(), dir).unwrap().len(), 1);
        let live = Manifest::read(fs.as_ref(), dir).unwrap().unwrap();
        assert_eq!(live.len(), 2);
        assert!(live.contains(&FileEntry::hfile(format!("x{}", ROLL_AFTER + 4))));
    }

    #[test]
    fn a_torn_tail_is_dropped_and_damage_before_it_is_an_error() {
        let fs = fs();
        let dir = Path::new("/s");
        let m = Manifest::create(fs.clone(), dir, vec![]).unwrap();
        m.commit(Edit {
            add: vec![FileEntry::hfile("a")],
            remove: vec![],
        })
        .unwrap();
        m.commit(Edit {
            add: vec![FileEntry::hfile("b")],
            remove: vec![],
        })
        .unwrap();
        let path = dir.join(manifest_name(1));
        let full = cellar_io::read_all(fs.as_ref(), &path).unwrap();
        // Every cut inside the last record loses just that record.
        let last_len = edit_record(&Edit {
            add: vec![FileEntry::hfile("b")],
            remove: vec![],
        })
        .len();
        for cut in 1..last_len {
            let mut w = fs.create(&path).unwrap();
            w.append(&full[..full.len() - cut]).unwrap();
            w.sync().unwrap();
            let live = Manifest::read(fs.as_ref(), dir).unwrap().unwrap();
            assert_eq!(live, vec![FileEntry::hfile("a")], "cut {cut}");
        }
        // A flipped byte in an earlier record is damage, not a torn tail.
        let mut bad = full.clone();
        let snapshot_len = snapshot_record(&[]).len();
        bad[12 + snapshot_len + 9] ^= 0x01;
        let mut w = fs.create(&path).unwrap();
        w.append(&bad).unwrap();
        w.sync().unwrap();
        assert!(Manifest::read(fs.as_ref(), dir).is_err());
    }

    #[test]
    fn an_unfinished_roll_falls_back_and_a_newer_version_is_refused() {
        let fs = fs();
        let dir = Path::new("/s");
        let m = Manifest::create(fs.clone(), dir, vec![FileEntry::hfile("a")]).unwrap();
        drop(m);
        // A roll that crashed after creating its file, before the snapshot was whole.
        let mut w = fs.create(&dir.join(manifest_name(2))).unwrap();
        w.append(b"CELLARMF\x00\x00\x00\x01\x00\x00").unwrap();
        w.sync().unwrap();
        let live = Manifest::read(fs.as_ref(), dir).unwrap().unwrap();
        assert_eq!(live, vec![FileEntry::hfile("a")]);
        let m = Manifest::open(fs.clone(), dir).unwrap().unwrap();
        assert_eq!(m.number(), 3);
        assert_eq!(manifests_in(fs.as_ref(), dir).unwrap().len(), 1);
        // A manifest from a newer format.
        let mut w = fs.create(&dir.join(manifest_name(9))).unwrap();
        let mut head = MAGIC.to_vec();
        head.extend_from_slice(&(VERSION + 1).to_be_bytes());
        head.extend_from_slice(&snapshot_record(&[]));
        w.append(&head).unwrap();
        w.sync().unwrap();
        let e = Manifest::read(fs.as_ref(), dir).unwrap_err().to_string();
        assert!(e.contains("newer than this release"), "{e}");
    }

    #[test]
    fn names_are_parsed_strictly() {
        assert_eq!(manifest_number("MANIFEST-00000000000000000042"), Some(42));
        for bad in [
            "MANIFEST-42",
            "MANIFEST-0000000000000000004x",
            "manifest-00000000000000000042",
            "MANIFEST-00000000000000000042.bak",
        ] {
            assert_eq!(manifest_number(bad), None, "{bad}");
        }
    }
}
