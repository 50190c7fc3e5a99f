//! A fault-injecting file system for crash and corruption tests: an in-memory file
//! system that can lose everything not yet synced (a simulated crash), fail every
//! operation after a countdown, and flip bytes of a file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use crate::error::{IoError, Result};
use crate::fs::{FileSystem, ReadableFile, WritableFile};
use crate::memory::MemoryFs;

#[derive(Debug)]
struct Faults {
    /// Operations still allowed; negative means "no countdown".
    remaining: AtomicI64,
}

impl Faults {
    fn check(&self, op: &'static str, path: &Path) -> Result<()> {
        let mut cur = self.remaining.load(Ordering::SeqCst);
        loop {
            if cur < 0 {
                return Ok(());
            }
            if cur == 0 {
                return Err(IoError::Injected {
                    op,
                    path: path.to_path_buf(),
                });
            }
            match self
                .remaining
                .compare_exchange(cur, cur - 1, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return Ok(()),
                Err(now) => cur = now,
            }
        }
    }
}

/// In-memory files with crash simulation and injected failures. Clones share state.
#[derive(Debug, Clone)]
pub struct FaultFs {
    inner: MemoryFs,
    faults: Arc<Faults>,
}

impl Default for FaultFs {
    fn default() -> Self {
        FaultFs::new()
    }
}

impl FaultFs {
    pub fn new() -> FaultFs {
        FaultFs {
            inner: MemoryFs::new(),
            faults: Arc::new(Faults {
                remaining: AtomicI64::new(-1),
            }),
        }
    }

    /// Simulates a machine crash: unsynced bytes and directory entries not made durable
    /// by `sync_dir` are lost. Open handles keep working on the surviving state.
    pub fn crash(&self) {
        self.inner.crash();
    }

    /// Lets `ops` more operations succeed, then fails every one with [`IoError::Injected`].
    pub fn fail_after(&self, ops: u64) {
        self.faults
            .remaining
            .store(ops.min(i64::MAX as u64) as i64, Ordering::SeqCst);
    }

    /// Stops injecting failures.
    pub fn heal(&self) {
        self.faults.remaining.store(-1, Ordering::SeqCst);
    }

    /// XORs the byte at `offset` with `mask` (a corruption on the medium).
    pub fn flip_byte(&self, path: &Path, offset: u64, mask: u8) -> Result<()> {
        let mut hit = false;
        self.inner.edit(path, |data| {
            if let Some(b) = data.get_mut(offset as usize) {
                *b ^= mask;
                hit = true;
            }
        })?;
        if hit {
            Ok(())
        } else {
            Err(IoError::ShortRead {
                path: path.to_path_buf(),
                offset,
                len: 1,
                file_len: self.inner.file_len(path)?,
            })
        }
    }

    /// Cuts a file to `len` bytes (a torn write).
    pub fn truncate(&self, path: &Path, len: u64) -> Result<()> {
        self.inner.edit(path, |data| data.truncate(len as usize))
    }
}

struct FaultWritable {
    path: PathBuf,
    inner: Box<dyn WritableFile>,
    faults: Arc<Faults>,
}

impl WritableFile for FaultWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.faults.check("write", &self.path)?;
        self.inner.append(data)
    }
    fn flush(&mut self) -> Result<()> {
        self.faults.check("flush", &self.path)?;
        self.inner.flush()
    }
    fn sync(&mut self) -> Result<()> {
        self.faults.check("fsync", &self.path)?;
        self.inner.sync()
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
}

struct FaultReadable {
    inner: Arc<dyn ReadableFile>,
    faults: Arc<Faults>,
}

impl ReadableFile for FaultReadable {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.faults.check("read", self.inner.path())?;
        self.inner.read_at(offset, buf)
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn path(&self) -> &Path {
        self.inner.path()
    }
}

impl FileSystem for FaultFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.faults.check("create", path)?;
        Ok(Box::new(FaultWritable {
            path: path.to_path_buf(),
            inner: self.inner.create(path)?,
            faults: self.faults.clone(),
        }))
    }
    fn open(&self, path: &Path) -> Result<Arc<dyn ReadableFile>> {
        self.faults.check("open", path)?;
        Ok(Arc::new(FaultReadable {
            inner: self.inner.open(path)?,
            faults: self.faults.clone(),
        }))
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn remove_file(&self, path: &Path) -> Result<()> {
        self.faults.check("remove", path)?;
        self.inner.remove_file(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.faults.check("rename", from)?;
        self.inner.rename(from, to)
    }
    fn create_dir_all(&self, path: &Path) -> Result<()> {
        self.faults.check("mkdir", path)?;
        self.inner.create_dir_all(path)
    }
    fn list_dir(&self, path: &Path) -> Result<Vec<PathBuf>> {
        self.faults.check("list", path)?;
        self.inner.list_dir(path)
    }
    fn sync_dir(&self, path: &Path) -> Result<()> {
        self.faults.check("fsync dir", path)?;
        self.inner.sync_dir(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        self.inner.is_dir(path)
    }
    fn remove_dir(&self, path: &Path) -> Result<()> {
        self.faults.check("rmdir", path)?;
        self.inner.remove_dir(path)
    }
    fn set_len(&self, path: &Path, len: u64) -> Result<()> {
        self.faults.check("truncate", path)?;
        self.inner.set_len(path, len)
    }
    fn file_len(&self, path: &Path) -> Result<u64> {
        self.inner.file_len(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::read_all;

    #[test]
    fn crash_drops_unsynced_bytes_and_entries() {
        let fs = FaultFs::new();
        let d = Path::new("/d");
        fs.create_dir_all(d).unwrap();
        let mut w = fs.create(&d.join("a")).unwrap();
        w.append(b"durable").unwrap();
        w.sync().unwrap();
        fs.sync_dir(d).unwrap();
        w.append(b" lost").unwrap();
        w.flush().unwrap();
        let mut w2 = fs.create(&d.join("b")).unwrap();
        w2.append(b"never in dir").unwrap();
        w2.sync().unwrap();
        assert_eq!(read_all(&fs, &d.join("a")).unwrap(), b"durable lost");
        fs.crash();
        assert_eq!(read_all(&fs, &d.join("a")).unwrap(), b"durable");
        assert!(!fs.exists(&d.join("b")), "entry was never made durable");
    }

    #[test]
    fn crash_keeps_durable_rename() {
        let fs = FaultFs::new();
        let d = Path::new("/d");
        fs.create_dir_all(d).unwrap();
        let mut w = fs.create(&d.join("tmp")).unwrap();
        w.append(b"x").unwrap();
        w.sync().unwrap();
        fs.sync_dir(d).unwrap();
        fs.rename(&d.join("tmp"), &d.join("final")).unwrap();
        fs.crash();
        assert!(fs.exists(&d.join("tmp")), "rename was not durable yet");
        fs.rename(&d.join("tmp"), &d.join("final")).unwrap();
        fs.sync_dir(d).unwrap();
        fs.crash();
        assert_eq!(read_all(&fs, &d.join("final")).unwrap(), b"x");
    }

    #[test]
    fn countdown_fails_later_operations() {
        let fs = FaultFs::new();
        fs.create_dir_all(Path::new("/d")).unwrap();
        fs.fail_after(2);
        let mut w = fs.create(Path::new("/d/f")).unwrap();
        w.append(b"1").unwrap();
        assert!(matches!(w.append(b"2"), Err(IoError::Injected { .. })));
        assert!(matches!(w.sync(), Err(IoError::Injected { .. })));
        fs.heal();
        w.sync().unwrap();
    }

    #[test]
    fn flip_byte_corrupts_in_place() {
        let fs = FaultFs::new();
        fs.create_dir_all(Path::new("/d")).unwrap();
        let p = Path::new("/d/f");
        let mut w = fs.create(p).unwrap();
        w.append(&[0, 0, 0]).unwrap();
        fs.flip_byte(p, 1, 0x10).unwrap();
        assert_eq!(read_all(&fs, p).unwrap(), vec![0, 0x10, 0]);
        assert!(fs.flip_byte(p, 3, 1).is_err());
    }
}
