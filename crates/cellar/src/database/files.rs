//! Files of the database directory: the lock that keeps a second process out, atomic
//! metadata writes, and removing a directory tree.

use std::path::Path;

use cellar_io::FileSystem;

use crate::error::{DbError, Result};

/// Writes `data` to `path` atomically and durably (temporary file, fsync, rename, fsync dir).
pub(crate) fn write_atomic(fs: &dyn FileSystem, path: &Path, data: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("/"));
    fs.create_dir_all(dir)?;
    let tmp = path.with_extension("tmp");
    let mut w = fs.create(&tmp)?;
    w.append(data)?;
    w.sync()?;
    drop(w);
    fs.rename(&tmp, path)?;
    fs.sync_dir(dir)?;
    Ok(())
}

pub(crate) fn take_lock(root: &Path) -> Result<std::fs::File> {
    let path = root.join("LOCK");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| DbError::Open {
            path: path.clone(),
            reason: e.to_string(),
        })?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(DbError::Locked {
            path: root.to_path_buf(),
            reason: format!("{} is held", path.display()),
        }),
        Err(std::fs::TryLockError::Error(e)) => Err(DbError::Locked {
            path: root.to_path_buf(),
            reason: e.to_string(),
        }),
    }
}

pub(crate) fn remove_tree(fs: &dyn FileSystem, dir: &Path) -> Result<()> {
    if !fs.exists(dir) {
        return Ok(());
    }
    for p in fs.list_dir(dir)? {
        if fs.is_dir(&p) {
            remove_tree(fs, &p)?;
        } else {
            fs.remove_file(&p)?;
        }
    }
    fs.remove_dir(dir)?;
    Ok(())
}
