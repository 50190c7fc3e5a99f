//! The local file system, through `std::fs`.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{IoError, Result};
use crate::fs::{FileSystem, ReadableFile, WritableFile};

/// The operating system's file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalFs;

impl LocalFs {
    pub fn new() -> LocalFs {
        LocalFs
    }
}

struct LocalWritable {
    path: PathBuf,
    writer: BufWriter<File>,
    len: u64,
    /// End of the bytes already handed to the device's writeback.
    written_back: u64,
}

/// Every this many bytes a file hands to the operating system, they are handed on to
/// the device without waiting (RocksDB's `bytes_per_sync`): the fsync that completes
/// a flush, a compaction or a log roll then waits for the last stretch, not the whole
/// file (a 128 MiB log segment's took 275 ms, its writers stalled behind the log's
/// lock), and the device's writes spread over the file's writing. No promise of
/// durability: that is still `sync`'s.
const WRITEBACK_BYTES: u64 = 1 << 20;

impl LocalWritable {
    /// Starts the device writes of what the operating system holds beyond the last
    /// write-behind, once that is a stride.
    fn write_behind(&mut self) -> Result<()> {
        let handed = self.len - self.writer.buffer().len() as u64;
        if handed >= self.written_back + WRITEBACK_BYTES {
            start_writeback(
                self.writer.get_ref(),
                self.written_back,
                handed - self.written_back,
            )
            .map_err(|e| IoError::os("sync_file_range", &self.path, e))?;
            self.written_back = handed;
        }
        Ok(())
    }
}

impl WritableFile for LocalWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.writer
            .write_all(data)
            .map_err(|e| IoError::os("write", &self.path, e))?;
        self.len += data.len() as u64;
        self.write_behind()
    }

    fn flush(&mut self) -> Result<()> {
        self.writer
            .flush()
            .map_err(|e| IoError::os("flush", &self.path, e))?;
        self.write_behind()
    }

    fn sync(&mut self) -> Result<()> {
        self.flush()?;
        self.writer
            .get_ref()
            .sync_data()
            .map_err(|e| IoError::os("fsync", &self.path, e))
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn preallocate(&mut self, len: u64) -> Result<()> {
        reserve(self.writer.get_ref(), len).map_err(|e| IoError::os("fallocate", &self.path, e))
    }
}

/// Reserves `len` bytes of blocks for `file` without changing its size (`fallocate`
/// with `FALLOC_FL_KEEP_SIZE`): a log segment's writes then find their blocks
/// allocated, where allocating them at write-behind time could wait on reading the file
/// system's block bitmaps (81 ms seen, a log writer holding the log's lock). File
/// systems without it (`EOPNOTSUPP`) are left as they are.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn reserve(file: &File, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let Ok(len) = i64::try_from(len) else {
        return Ok(());
    };
    // SAFETY: the descriptor belongs to `file`, which the borrow keeps open for the
    // call; fallocate reads no memory of this process.
    let rc = unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, 0, len) };
    if rc == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EOPNOTSUPP) => Ok(()),
        _ => Err(e),
    }
}

/// Elsewhere nothing is reserved.
#[cfg(not(target_os = "linux"))]
fn reserve(_file: &File, _len: u64) -> std::io::Result<()> {
    Ok(())
}

/// Starts the device writes of `len` bytes from `offset` (`sync_file_range` with
/// `SYNC_FILE_RANGE_WRITE`: queued, not waited for, and no promise of durability).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn start_writeback(file: &File, offset: u64, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return Ok(());
    };
    // SAFETY: the descriptor belongs to `file`, which the borrow keeps open for the
    // call; sync_file_range reads no memory of this process.
    let rc = unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Elsewhere the hint is a flush only.
#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &File, _offset: u64, _len: u64) -> std::io::Result<()> {
    Ok(())
}

struct LocalReadable {
    path: PathBuf,
    file: File,
    len: u64,
}

impl ReadableFile for LocalReadable {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let end = offset.checked_add(buf.len() as u64);
        if end.is_none_or(|end| end > self.len) {
            return Err(IoError::ShortRead {
                path: self.path.clone(),
                offset,
                len: buf.len(),
                file_len: self.len,
            });
        }
        self.file
            .read_exact_at(buf, offset)
            .map_err(|e| IoError::os("read", &self.path, e))
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl FileSystem for LocalFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| IoError::os("create", path, e))?;
        Ok(Box::new(LocalWritable {
            path: path.to_path_buf(),
            writer: BufWriter::with_capacity(64 * 1024, file),
            len: 0,
            written_back: 0,
        }))
    }

    fn open(&self, path: &Path) -> Result<Arc<dyn ReadableFile>> {
        let file = File::open(path).map_err(|e| IoError::os("open", path, e))?;
        let len = file
            .metadata()
            .map_err(|e| IoError::os("stat", path, e))?
            .len();
        Ok(Arc::new(LocalReadable {
            path: path.to_path_buf(),
            file,
            len,
        }))
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        std::fs::remove_file(path).map_err(|e| IoError::os("remove", path, e))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        std::fs::rename(from, to).map_err(|e| IoError::os("rename", from, e))
    }

    fn link(&self, from: &Path, to: &Path) -> Result<()> {
        match std::fs::hard_link(from, to) {
            Ok(()) => Ok(()),
            // Another device (or no hard links here): a copy reads the same.
            Err(e)
                if e.kind() == std::io::ErrorKind::CrossesDevices
                    || e.kind() == std::io::ErrorKind::Unsupported =>
            {
                std::fs::copy(from, to).map_err(|e| IoError::os("copy", from, e))?;
                std::fs::File::open(to)
                    .and_then(|f| f.sync_all())
                    .map_err(|e| IoError::os("fsync", to, e))
            }
            Err(e) => Err(IoError::os("link", from, e)),
        }
    }

    fn create_dir_all(&self, path: &Path) -> Result<()> {
        std::fs::create_dir_all(path).map_err(|e| IoError::os("mkdir", path, e))
    }

    fn list_dir(&self, path: &Path) -> Result<Vec<PathBuf>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(path).map_err(|e| IoError::os("list", path, e))? {
            out.push(entry.map_err(|e| IoError::os("list", path, e))?.path());
        }
        out.sort();
        Ok(out)
    }

    fn sync_dir(&self, path: &Path) -> Result<()> {
        File::open(path)
            .and_then(|d| d.sync_all())
            .map_err(|e| IoError::os("fsync dir", path, e))
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }

    fn remove_dir(&self, path: &Path) -> Result<()> {
        std::fs::remove_dir(path).map_err(|e| IoError::os("rmdir", path, e))
    }

    fn set_len(&self, path: &Path, len: u64) -> Result<()> {
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| IoError::os("open", path, e))?;
        file.set_len(len)
            .map_err(|e| IoError::os("truncate", path, e))?;
        file.sync_all().map_err(|e| IoError::os("fsync", path, e))
    }

    fn file_len(&self, path: &Path) -> Result<u64> {
        Ok(std::fs::metadata(path)
            .map_err(|e| IoError::os("stat", path, e))?
            .len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::read_all;

    #[test]
    fn writes_are_handed_on_every_stride_and_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log");
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&p)
            .unwrap();
        let mut w = LocalWritable {
            path: p.clone(),
            writer: BufWriter::with_capacity(64 * 1024, file),
            len: 0,
            written_back: 0,
        };
        let mut expected = Vec::new();
        // Appends of odd sizes (some inside the buffer, some past it), flushes between
        // some: every write-behind starts where the last ended and covers only what
        // the operating system holds.
        for round in 0..40u32 {
            let chunk = vec![round as u8; 37_000 * (round as usize % 5) + 1];
            w.append(&chunk).unwrap();
            expected.extend_from_slice(&chunk);
            if round % 7 == 0 {
                w.flush().unwrap();
            }
            let handed = w.len - w.writer.buffer().len() as u64;
            assert!(w.written_back <= handed, "{} > {handed}", w.written_back);
            assert!(handed - w.written_back < WRITEBACK_BYTES, "round {round}");
        }
        assert!(w.written_back >= 2 * WRITEBACK_BYTES, "{}", w.written_back);
        w.sync().unwrap();
        drop(w);
        assert_eq!(read_all(&LocalFs::new(), &p).unwrap(), expected);
    }

    /// A preallocated file keeps its length: it reads back exactly what was written,
    /// reopened and synced, and its reserved blocks show in its allocation.
    #[test]
    fn a_preallocated_file_keeps_its_length_and_contents() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("segment");
        let fs = LocalFs::new();
        let mut w = fs.create(&p).unwrap();
        w.append(b"head").unwrap();
        w.flush().unwrap();
        w.preallocate(4 << 20).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 4, "the length stays");
        let body = vec![9u8; 300_000];
        w.append(&body).unwrap();
        w.sync().unwrap();
        assert_eq!(w.len(), 300_004);
        drop(w);
        let meta = std::fs::metadata(&p).unwrap();
        assert_eq!(meta.len(), 300_004);
        let mut expected = b"head".to_vec();
        expected.extend_from_slice(&body);
        assert_eq!(read_all(&fs, &p).unwrap(), expected);
        // Where the file system reserves blocks, they are there beyond the length
        // (512-byte units); elsewhere the hint does nothing.
        if meta.blocks() * 512 < 4 << 20 {
            eprintln!(
                "no reservation on this file system: {} blocks",
                meta.blocks()
            );
        }
    }

    #[test]
    fn write_read_rename_list() {
        let dir = tempfile::tempdir().unwrap();
        let fs = LocalFs::new();
        let sub = dir.path().join("a/b");
        fs.create_dir_all(&sub).unwrap();
        let p = sub.join("x");
        let mut w = fs.create(&p).unwrap();
        w.append(b"hello ").unwrap();
        w.append(b"world").unwrap();
        assert_eq!(w.len(), 11);
        w.sync().unwrap();
        drop(w);
        assert_eq!(read_all(&fs, &p).unwrap(), b"hello world");
        let r = fs.open(&p).unwrap();
        let mut buf = [0u8; 5];
        r.read_at(6, &mut buf).unwrap();
        assert_eq!(&buf, b"world");
        assert!(matches!(
            r.read_at(8, &mut buf),
            Err(IoError::ShortRead { .. })
        ));
        let q = sub.join("y");
        fs.rename(&p, &q).unwrap();
        fs.sync_dir(&sub).unwrap();
        assert_eq!(fs.list_dir(&sub).unwrap(), vec![q.clone()]);
        assert_eq!(fs.file_len(&q).unwrap(), 11);
        fs.remove_file(&q).unwrap();
        assert!(matches!(fs.open(&q), Err(IoError::NotFound { .. })));
    }
}
