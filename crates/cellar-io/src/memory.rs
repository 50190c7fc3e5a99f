//! An in-memory file system. It remembers which bytes and which directory entries were
//! made durable (`sync`, `sync_dir`), so [`crate::FaultFs`] can simulate a crash.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{IoError, Result};
use crate::fs::{FileSystem, ReadableFile, WritableFile};

#[derive(Debug, Default)]
pub(crate) struct FileData {
    pub(crate) data: Vec<u8>,
    /// Bytes made durable by the last sync.
    pub(crate) synced: usize,
}

type Shared = Arc<Mutex<FileData>>;

#[derive(Debug, Default)]
struct State {
    files: BTreeMap<PathBuf, Shared>,
    dirs: BTreeSet<PathBuf>,
    /// The namespace as it was at the last `sync_dir` of each directory.
    durable: BTreeMap<PathBuf, Shared>,
}

/// A file system held in memory; cheap to clone (clones share the same files).
#[derive(Debug, Default, Clone)]
pub struct MemoryFs {
    state: Arc<Mutex<State>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data behind; keep using it.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn parent_of(path: &Path) -> PathBuf {
    path.parent().map(Path::to_path_buf).unwrap_or_default()
}

impl MemoryFs {
    pub fn new() -> MemoryFs {
        MemoryFs::default()
    }

    fn dir_exists(state: &State, dir: &Path) -> bool {
        dir.as_os_str().is_empty() || dir == Path::new("/") || state.dirs.contains(dir)
    }

    /// Forgets everything that was not made durable: unsynced bytes and unsynced
    /// directory entries.
    pub(crate) fn crash(&self) {
        let mut state = lock(&self.state);
        let durable = state.durable.clone();
        for file in durable.values() {
            let mut f = lock(file);
            let synced = f.synced;
            f.data.truncate(synced);
        }
        // A file whose removal was not durable comes back, and so does every directory
        // above it (a directory holding a file cannot have been removed for good).
        for p in durable.keys() {
            for a in p.ancestors().skip(1) {
                if a.as_os_str().is_empty() {
                    break;
                }
                state.dirs.insert(a.to_path_buf());
            }
        }
        state.files = durable;
    }

    /// Applies `edit` to the bytes of a file (durable and not).
    pub(crate) fn edit(&self, path: &Path, edit: impl FnOnce(&mut Vec<u8>)) -> Result<()> {
        let state = lock(&self.state);
        let file = state.files.get(path).ok_or_else(|| IoError::NotFound {
            path: path.to_path_buf(),
        })?;
        edit(&mut lock(file).data);
        Ok(())
    }
}

struct MemWritable {
    file: Shared,
    len: u64,
}

impl WritableFile for MemWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        lock(&self.file).data.extend_from_slice(data);
        self.len += data.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        let mut f = lock(&self.file);
        f.synced = f.data.len();
        Ok(())
    }

    fn len(&self) -> u64 {
        self.len
    }
}

struct MemReadable {
    path: PathBuf,
    file: Shared,
    len: u64,
}

impl ReadableFile for MemReadable {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let f = lock(&self.file);
        let start = offset as usize;
        let end = start.checked_add(buf.len());
        match end {
            Some(end) if end as u64 <= self.len && end <= f.data.len() => {
                buf.copy_from_slice(&f.data[start..end]);
                Ok(())
            }
            _ => Err(IoError::ShortRead {
                path: self.path.clone(),
                offset,
                len: buf.len(),
                file_len: self.len,
            }),
        }
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl FileSystem for MemoryFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let mut state = lock(&self.state);
        if !Self::dir_exists(&state, &parent_of(path)) {
            return Err(IoError::NotFound {
                path: parent_of(path),
            });
        }
        let file: Shared = Arc::default();
        state.files.insert(path.to_path_buf(), file.clone());
        Ok(Box::new(MemWritable { file, len: 0 }))
    }

    fn open(&self, path: &Path) -> Result<Arc<dyn ReadableFile>> {
        let state = lock(&self.state);
        let file = state.files.get(path).ok_or_else(|| IoError::NotFound {
            path: path.to_path_buf(),
        })?;
        let len = lock(file).data.len() as u64;
        Ok(Arc::new(MemReadable {
            path: path.to_path_buf(),
            file: file.clone(),
            len,
        }))
    }

    fn exists(&self, path: &Path) -> bool {
        let state = lock(&self.state);
        state.files.contains_key(path) || state.dirs.contains(path)
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        let mut state = lock(&self.state);
        state
            .files
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| IoError::NotFound {
                path: path.to_path_buf(),
            })
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let mut state = lock(&self.state);
        if !Self::dir_exists(&state, &parent_of(to)) {
            return Err(IoError::NotFound {
                path: parent_of(to),
            });
        }
        let file = state.files.remove(from).ok_or_else(|| IoError::NotFound {
            path: from.to_path_buf(),
        })?;
        state.files.insert(to.to_path_buf(), file);
        Ok(())
    }

    fn create_dir_all(&self, path: &Path) -> Result<()> {
        let mut state = lock(&self.state);
        let mut p = Some(path);
        while let Some(dir) = p {
            if dir.as_os_str().is_empty() {
                break;
            }
            state.dirs.insert(dir.to_path_buf());
            p = dir.parent();
        }
        Ok(())
    }

    fn list_dir(&self, path: &Path) -> Result<Vec<PathBuf>> {
        let state = lock(&self.state);
        if !Self::dir_exists(&state, path) {
            return Err(IoError::NotFound {
                path: path.to_path_buf(),
            });
        }
        let files = state.files.keys().filter(|p| p.parent() == Some(path));
        let dirs = state.dirs.iter().filter(|p| p.parent() == Some(path));
        let mut out: Vec<PathBuf> = files.chain(dirs).cloned().collect();
        out.sort();
        Ok(out)
    }

    fn sync_dir(&self, path: &Path) -> Result<()> {
        let mut state = lock(&self.state);
        let State { files, durable, .. } = &mut *state;
        durable.retain(|p, _| p.parent() != Some(path));
        for (p, f) in files.iter().filter(|(p, _)| p.parent() == Some(path)) {
            durable.insert(p.clone(), f.clone());
        }
        Ok(())
    }

    fn is_dir(&self, path: &Path) -> bool {
        Self::dir_exists(&lock(&self.state), path)
    }

    fn remove_dir(&self, path: &Path) -> Result<()> {
        let mut state = lock(&self.state);
        if !state.dirs.contains(path) {
            return Err(IoError::NotFound {
                path: path.to_path_buf(),
            });
        }
        let busy = state.files.keys().any(|p| p.starts_with(path))
            || state.dirs.iter().any(|d| d != path && d.starts_with(path));
        if busy {
            return Err(IoError::os(
                "rmdir",
                path,
                std::io::Error::other("directory not empty"),
            ));
        }
        state.dirs.remove(path);
        Ok(())
    }

    fn set_len(&self, path: &Path, len: u64) -> Result<()> {
        let state = lock(&self.state);
        let file = state.files.get(path).ok_or_else(|| IoError::NotFound {
            path: path.to_path_buf(),
        })?;
        let mut f = lock(file);
        f.data.resize(len as usize, 0);
        f.synced = f.synced.min(len as usize);
        Ok(())
    }

    fn file_len(&self, path: &Path) -> Result<u64> {
        let state = lock(&self.state);
        let file = state.files.get(path).ok_or_else(|| IoError::NotFound {
            path: path.to_path_buf(),
        })?;
        let len = lock(file).data.len() as u64;
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::read_all;

    #[test]
    fn behaves_like_a_file_system() {
        let fs = MemoryFs::new();
        let d = Path::new("/db/x");
        assert!(fs.create(&d.join("f")).is_err(), "parent must exist");
        fs.create_dir_all(d).unwrap();
        let mut w = fs.create(&d.join("f")).unwrap();
        w.append(b"abc").unwrap();
        assert_eq!(read_all(&fs, &d.join("f")).unwrap(), b"abc");
        fs.rename(&d.join("f"), &d.join("g")).unwrap();
        assert!(!fs.exists(&d.join("f")));
        assert_eq!(fs.list_dir(d).unwrap(), vec![d.join("g")]);
        assert_eq!(
            fs.list_dir(Path::new("/db")).unwrap(),
            vec![d.to_path_buf()]
        );
        assert_eq!(fs.file_len(&d.join("g")).unwrap(), 3);
        fs.remove_file(&d.join("g")).unwrap();
        assert!(fs.open(&d.join("g")).is_err());
    }
}
