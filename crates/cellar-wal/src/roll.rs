//! Rolling the log: closing the current segment, starting the next and deleting the
//! segments whose edits are all flushed. Writers hold the log file's lock to append,
//! so the lock covers only what must not interleave with appends — syncing the current
//! segment and swapping it for the next. A roll the current segment's size asks for
//! creates and syncs the next segment before taking the lock (as HBase's log roller
//! creates the next writer before it blocks appends), and covered segments are deleted
//! after the lock is released: a file's creation, three directory and file syncs and
//! the unlinking of 128 MiB segments no longer stall every writer of the server.

use super::{create_segment, lock, FileState, Result, SegmentMeta, Shared};
use cellar_io::WritableFile;

impl FileState {
    /// The closed segments whose edits are all flushed, taken out of the list; the
    /// caller deletes them ([`Shared::delete_segments`]) once it has let go of the lock.
    pub(super) fn take_obsolete(&mut self) -> Vec<SegmentMeta> {
        let (gone, keep) = std::mem::take(&mut self.closed)
            .into_iter()
            .partition(|seg| self.covers(seg));
        self.closed = keep;
        gone
    }
}

impl Shared {
    /// Syncs the current segment and makes `next` the current one (under the lock).
    fn swap_segment(
        &self,
        f: &mut FileState,
        writer: Box<dyn WritableFile>,
        next: SegmentMeta,
    ) -> Result<()> {
        f.writer.sync()?;
        f.synced_txid = f.written_txid;
        f.writer = writer;
        let old = std::mem::replace(&mut f.current, next);
        f.closed.push(old);
        Ok(())
    }

    /// Closes the current segment and starts the next, all under the lock (an asked-for
    /// roll, or a current segment whose edits are all flushed); the segments now
    /// obsolete, for the caller to delete after the lock. A failure poisons the log.
    pub(super) fn roll_locked(&self, f: &mut FileState) -> Result<Vec<SegmentMeta>> {
        let res = (|| -> Result<()> {
            let (writer, next) = create_segment(
                self.fs.as_ref(),
                &self.dir,
                f.next_number,
                self.opts.roll_size,
            )?;
            f.next_number += 1;
            self.swap_segment(f, writer, next)
        })();
        if let Err(e) = &res {
            self.poison(e);
        }
        res.map(|()| f.take_obsolete())
    }

    /// The roll a write asked for when the current segment reached the roll size: the
    /// next segment is created without the lock (writers go on appending to the current
    /// one meanwhile), swapped in under it, and covered segments are deleted after it.
    /// A roll that moved past this one's number meanwhile (an asked-for roll) wins, and
    /// the file made here is removed unused, as it is when the log closed or was
    /// poisoned meanwhile. Failing to create or swap poisons the log;
    /// a segment that cannot be deleted stays listed for the next attempt.
    pub(super) fn roll_ahead(&self) {
        let number = {
            let mut f = lock(&self.file);
            f.next_number += 1;
            f.next_number - 1
        };
        let created = create_segment(self.fs.as_ref(), &self.dir, number, self.opts.roll_size);
        let obsolete = {
            let mut f = lock(&self.file);
            f.rolling = false;
            let (writer, next) = match created {
                Ok(c) => c,
                Err(e) => {
                    self.poison(&e);
                    return;
                }
            };
            let poisoned = self.poisoned.load(std::sync::atomic::Ordering::SeqCst);
            if f.shut || poisoned || f.current.number > number {
                drop(f);
                drop(writer);
                let _ = self.fs.remove_file(&next.path);
                return;
            }
            if let Err(e) = self.swap_segment(&mut f, writer, next) {
                self.poison(&e);
                return;
            }
            f.take_obsolete()
        };
        let _ = self.delete_segments(obsolete);
    }

    /// Deletes segments taken out of the list (without the lock). One that cannot be
    /// deleted goes back on the list, so a later roll or flush tries again; the first
    /// error is returned.
    pub(super) fn delete_segments(&self, segments: Vec<SegmentMeta>) -> Result<()> {
        if segments.is_empty() {
            return Ok(());
        }
        let mut first_err = None;
        let mut kept = Vec::new();
        let mut removed = false;
        for seg in segments {
            match self.fs.remove_file(&seg.path) {
                Ok(()) => removed = true,
                Err(e) => {
                    first_err.get_or_insert(e);
                    kept.push(seg);
                }
            }
        }
        if removed {
            if let Err(e) = self.fs.sync_dir(&self.dir) {
                first_err.get_or_insert(e);
            }
        }
        if !kept.is_empty() {
            let mut f = lock(&self.file);
            f.closed.extend(kept);
            f.closed.sort_by_key(|s| s.number);
        }
        match first_err {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }
}
