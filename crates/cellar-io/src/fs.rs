//! The file-system traits every engine crate uses.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::Result;

/// A file open for appending. Data is durable only after [`WritableFile::sync`].
pub trait WritableFile: Send {
    /// Appends bytes (possibly buffered in the process).
    fn append(&mut self, data: &[u8]) -> Result<()>;
    /// Hands buffered bytes to the operating system (survives a process kill, not a power loss).
    fn flush(&mut self) -> Result<()>;
    /// Flushes and makes the data durable (fsync).
    fn sync(&mut self) -> Result<()>;
    /// Bytes appended so far.
    fn len(&self) -> u64;
    /// True when nothing was appended.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Reserves the file's blocks up to `len` bytes without changing its length, so
    /// that writing it later allocates nothing. A hint: where the file system cannot,
    /// nothing is done.
    fn preallocate(&mut self, _len: u64) -> Result<()> {
        Ok(())
    }
}

/// A file open for positioned reads. Shared between threads.
pub trait ReadableFile: Send + Sync {
    /// Fills `buf` from `offset`; a read past the end is an error.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// File length in bytes at open time.
    fn len(&self) -> u64;
    /// True for an empty file.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The path, for error messages.
    fn path(&self) -> &Path;
}

/// A directory tree. Paths are absolute or relative to the implementation's root.
pub trait FileSystem: Send + Sync + std::fmt::Debug {
    /// Creates (or truncates) a file for writing. The parent directory must exist.
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>>;
    /// Opens a file for reading.
    fn open(&self, path: &Path) -> Result<Arc<dyn ReadableFile>>;
    /// True when a file or directory exists at `path`.
    fn exists(&self, path: &Path) -> bool;
    /// Removes a file.
    fn remove_file(&self, path: &Path) -> Result<()>;
    /// Renames a file, replacing any file at `to`.
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    /// Creates a directory and its parents.
    fn create_dir_all(&self, path: &Path) -> Result<()>;
    /// Lists the entries of a directory (full paths, sorted).
    fn list_dir(&self, path: &Path) -> Result<Vec<PathBuf>>;
    /// Makes the directory's entries (creations, renames, removals) durable.
    fn sync_dir(&self, path: &Path) -> Result<()>;
    /// Length of a file.
    fn file_len(&self, path: &Path) -> Result<u64>;
    /// Whether `path` is a directory.
    fn is_dir(&self, path: &Path) -> bool;
    /// Removes an empty directory.
    fn remove_dir(&self, path: &Path) -> Result<()>;
    /// Cuts a file to `len` bytes and makes the new length durable.
    fn set_len(&self, path: &Path, len: u64) -> Result<()>;
    /// Makes `to` a second name of the file at `from` (a hard link where the file system
    /// has them; by default a durable copy, which reads the same). The parent of `to`
    /// must exist; sync it to make the new name durable.
    fn link(&self, from: &Path, to: &Path) -> Result<()> {
        let file = self.open(from)?;
        let mut bytes = vec![0u8; file.len() as usize];
        file.read_at(0, &mut bytes)?;
        let mut w = self.create(to)?;
        w.append(&bytes)?;
        w.sync()?;
        Ok(())
    }
}

/// Reads a whole file into memory.
pub fn read_all(fs: &dyn FileSystem, path: &Path) -> Result<Vec<u8>> {
    let file = fs.open(path)?;
    let mut buf = vec![0u8; file.len() as usize];
    file.read_at(0, &mut buf)?;
    Ok(buf)
}
