//! A store: one column family of one region — its MemStore (active segment and, while
//! flushing, a snapshot) and its store files. Files are written under `.tmp/`, fsynced,
//! renamed into place and the directory fsynced, so a crash leaves either no file or a
//! whole one. A compaction's output names the files it replaces (file info key
//! `CELLAR_COMPACTED_FILES`); opening a store deletes files an existing output replaced.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use cellar_hfile::file_info as fi;
use cellar_hfile::{BlockCache, HFileReader, HFileWriter, WriterOptions};
use cellar_io::FileSystem;
use cellar_types::{Cell, KeyRef};

use crate::cursor::{FileCursor, MemCursor, Source};
use crate::descriptor::FamilyDescriptor;
use crate::error::{RegionError, Result};
use crate::manifest::{Edit, FileEntry, FileKind, Manifest};
use crate::memstore::MemSegment;

/// The directory name of a family's store: the name itself when it is UTF-8, and
/// otherwise each byte of an invalid sequence written `:xx` (hex). A legal family name
/// never contains `:` (`isLegalColumnFamilyName`), so two families never share a
/// directory, and every UTF-8 name keeps the directory it always had.
pub fn family_dir_name(name: &[u8]) -> String {
    let mut out = String::with_capacity(name.len());
    for chunk in name.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!(":{b:02x}"));
        }
    }
    out
}

/// How a family's store files are written: its block size, compression, data block
/// encoding and bloom filter.
pub fn family_writer_options(family: &FamilyDescriptor, now: i64) -> WriterOptions {
    WriterOptions {
        block_size: family.block_size as usize,
        compression: crate::descriptor::compression(family.compression),
        encoding: crate::descriptor::encoding(family.encoding),
        bloom: crate::descriptor::bloom(family.bloom),
        create_time: now,
        ..WriterOptions::default()
    }
}

/// File info key listing (newline-separated) the files a compaction output replaces.
pub const COMPACTED_FILES: &[u8] = b"CELLAR_COMPACTED_FILES";

/// One immutable store file.
#[derive(Debug)]
pub struct StoreFile {
    pub name: String,
    pub path: PathBuf,
    pub reader: Arc<HFileReader>,
    pub max_seq_id: u64,
    pub size: u64,
    pub entries: u64,
    pub major: bool,
    pub time_range: Option<(i64, i64)>,
    /// The oldest put's timestamp (`EARLIEST_PUT_TS`), if the file says.
    pub earliest_put_ts: Option<i64>,
    pub compacted: Vec<String>,
    /// For a reference file left by a split: the half of the parent's file it stands for.
    pub half: Option<Half>,
    /// A bulk-loaded file (HBase's `_SeqId_N_` in its name): every cell reads with
    /// sequence id N, whatever the file holds, unless the file says SKIP_RESET_SEQ_ID.
    pub bulk_seq_id: Option<u64>,
}

/// HBase's mark of a bulk-loaded file's sequence id in its name (`..._SeqId_N_`).
pub const SEQ_ID_MARKER: &str = "_SeqId_";

/// The sequence id a bulk-loaded file's name carries.
pub fn bulk_load_seq_id(name: &str) -> Option<u64> {
    let start = name.find(SEQ_ID_MARKER)? + SEQ_ID_MARKER.len();
    let rest = &name[start..];
    rest[..rest.find('_')?].parse().ok()
}

/// File info key: a bulk-loaded file whose cells keep their own sequence ids.
pub const SKIP_RESET_SEQ_ID: &[u8] = b"SKIP_RESET_SEQ_ID";

/// Half of a parent region's store file: rows below the split row (bottom) or from it
/// on (top); the top half from the empty row is the whole file (a merge).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Half {
    pub split_row: Vec<u8>,
    pub top: bool,
    /// The parent's file, resolved under the table directory.
    pub parent: PathBuf,
    /// The parent region's encoded name.
    pub parent_region: String,
}

impl StoreFile {
    pub fn open(
        fs: &Arc<dyn FileSystem>,
        path: &Path,
        cache: Option<Arc<BlockCache>>,
    ) -> Result<StoreFile> {
        let reader = Arc::new(
            HFileReader::open(fs.as_ref(), path, cache)
                .map_err(|e| RegionError::in_file(path, e))?,
        );
        let info = reader.file_info();
        let max_seq_id = info.get_i64(fi::MAX_SEQ_ID_KEY).unwrap_or(0).max(0) as u64;
        let major = info
            .get(fi::MAJOR_COMPACTION_KEY)
            .is_some_and(|v| v.first().is_some_and(|b| *b != 0));
        let compacted = info
            .get(COMPACTED_FILES)
            .map(|v| {
                String::from_utf8_lossy(v)
                    .lines()
                    .filter(|l| !l.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let time_range = info.time_range();
        let earliest_put_ts = info.get_i64(fi::EARLIEST_PUT_TS);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // As HBase's HStoreFile: a bulk-loaded file's sequence id is the one in its
        // name; with SKIP_RESET_SEQ_ID its cells keep theirs and the file counts one
        // above.
        let mut bulk_seq_id = bulk_load_seq_id(&name);
        let mut max_seq_id = max_seq_id;
        if let Some(n) = bulk_seq_id {
            max_seq_id = n;
            if info.get(SKIP_RESET_SEQ_ID).is_some_and(|v| v == [0xff]) {
                max_seq_id = n + 1;
                bulk_seq_id = None;
            }
        }
        Ok(StoreFile {
            name,
            path: path.to_path_buf(),
            size: reader.file_size(),
            entries: reader.entry_count(),
            reader,
            max_seq_id,
            major,
            time_range,
            earliest_put_ts,
            compacted,
            half: None,
            bulk_seq_id,
        })
    }

    /// The rows of the file's first and last cells; `None` for a file without cells.
    pub fn row_span(&self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let first = self
            .reader
            .first_data_block()
            .map_err(|e| RegionError::in_file(&self.path, e))?
            .and_then(|b| b.cells.first().map(|c| c.row().to_vec()));
        let last = self
            .reader
            .last_key()
            .and_then(|k| cellar_types::KeyRef::parse(k).ok().map(|k| k.row.to_vec()));
        Ok(first.zip(last))
    }

    /// Opens a reference entry of the store in `store_dir`: the parent's file (in the
    /// parent region's directory of the same family, under the same table), seen as
    /// one half.
    pub fn open_reference(
        fs: &Arc<dyn FileSystem>,
        store_dir: &Path,
        entry: &FileEntry,
        cache: Option<Arc<BlockCache>>,
    ) -> Result<StoreFile> {
        let FileKind::Reference {
            parent_region,
            parent_file,
            split_row,
            top,
        } = &entry.kind
        else {
            return StoreFile::open(fs, &store_dir.join(&entry.name), cache);
        };
        let family_dir = store_dir.file_name().unwrap_or_default();
        let table_dir =
            store_dir
                .parent()
                .and_then(Path::parent)
                .ok_or_else(|| RegionError::CorruptStore {
                    path: store_dir.display().to_string(),
                    reason: "a reference outside a table directory".into(),
                })?;
        let parent_path = table_dir
            .join(parent_region)
            .join(family_dir)
            .join(parent_file);
        let parent = StoreFile::open(fs, &parent_path, cache)?;
        Ok(StoreFile {
            name: entry.name.clone(),
            path: parent_path.clone(),
            size: parent.size / 2,
            entries: parent.entries / 2,
            reader: parent.reader,
            max_seq_id: parent.max_seq_id,
            major: false,
            time_range: parent.time_range,
            earliest_put_ts: parent.earliest_put_ts,
            compacted: Vec::new(),
            half: Some(Half {
                split_row: split_row.clone(),
                top: *top,
                parent: parent_path,
                parent_region: parent_region.clone(),
            }),
            bulk_seq_id: parent.bulk_seq_id,
        })
    }

    /// A cursor over the file (or its half) at `start`, hiding cells above `read_point`.
    pub fn cursor(
        &self,
        read_point: u64,
        start: &KeyRef<'_>,
        cache_blocks: bool,
    ) -> Result<FileCursor> {
        FileCursor::with_stamp(
            self.reader.clone(),
            read_point,
            start,
            cache_blocks,
            self.half.clone(),
            self.bulk_seq_id,
        )
    }
}

/// What a store holds right now.
#[derive(Debug)]
pub struct StoreState {
    pub active: Arc<MemSegment>,
    pub snapshot: Option<Arc<MemSegment>>,
    /// Oldest first (by max sequence id). Shared with the readers that took it: a
    /// read takes one reference on the list, not one on every file; a change copies
    /// the list when a reader still holds it.
    pub files: Arc<Vec<Arc<StoreFile>>>,
}

/// One family of one region.
#[derive(Debug)]
pub struct Store {
    pub family: FamilyDescriptor,
    dir: PathBuf,
    fs: Arc<dyn FileSystem>,
    cache: Option<Arc<BlockCache>>,
    state: RwLock<StoreState>,
    /// Which files the store holds.
    manifest: Manifest,
    /// The large rows its flushes and compactions wrote, and the levels that make a row
    /// large.
    largest: crate::row_sizes::LargestRows,
    levels: crate::row_sizes::Levels,
    /// The most versions a read of the store has asked for.
    versions_asked: AtomicU64,
    /// A major compaction was asked for and has not run yet (HBase's `forceMajor`: a
    /// request that finds no files is kept for the next compaction of the store).
    pub(crate) force_major: std::sync::atomic::AtomicBool,
}

static FILE_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A new unique store file name (32 hex digits, like HBase's).
pub(crate) fn new_file_name(now: i64) -> String {
    let n = FILE_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{:016x}{:016x}", now as u64, cellar_io::random_id() ^ n)
}

impl Store {
    /// Opens the store in `dir`, creating it if needed. Its files are what its manifest
    /// names (a directory of the layout before manifests is upgraded once); a file the
    /// manifest names but cannot be opened fails the open, naming it.
    pub fn open(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        family: FamilyDescriptor,
        cache: Option<Arc<BlockCache>>,
    ) -> Result<Store> {
        fs.create_dir_all(dir)?;
        if let Some(parent) = dir.parent() {
            // The store directory's own entry must survive a power loss too.
            fs.sync_dir(parent)?;
        }
        let tmp = dir.join(".tmp");
        if fs.exists(&tmp) {
            // Temporary files of the layout before manifests.
            for p in fs.list_dir(&tmp)? {
                fs.remove_file(&p)?;
            }
        }
        // Nothing is written until every file the store names has opened.
        let (live, legacy_refs) = match Manifest::read(fs.as_ref(), dir)? {
            Some(live) => (live, Vec::new()),
            None => {
                let legacy = crate::store_upgrade::read_legacy(&fs, dir, cache.clone())?;
                (legacy.live, legacy.reference_files)
            }
        };
        let mut files = Vec::with_capacity(live.len());
        for entry in &live {
            files.push(Arc::new(match entry.kind {
                FileKind::HFile => StoreFile::open(&fs, &dir.join(&entry.name), cache.clone())?,
                FileKind::Reference { .. } => {
                    StoreFile::open_reference(&fs, dir, entry, cache.clone())?
                }
            }));
        }
        // A fresh log of the live files (the first one, for a store of the old layout).
        let manifest = Manifest::create(fs.clone(), dir, live.clone())?;
        for p in legacy_refs {
            fs.remove_file(&p)?;
        }
        clean_strays(fs.as_ref(), dir, &live)?;
        files.sort_by(|a, b| a.max_seq_id.cmp(&b.max_seq_id).then(a.name.cmp(&b.name)));
        Ok(Store {
            family,
            dir: dir.to_path_buf(),
            fs,
            cache,
            state: RwLock::new(StoreState {
                active: Arc::new(MemSegment::new()),
                snapshot: None,
                files: Arc::new(files),
            }),
            manifest,
            largest: Default::default(),
            levels: Default::default(),
            versions_asked: AtomicU64::new(0),
            force_major: Default::default(),
        })
    }

    /// The store with these large-row levels.
    pub fn with_levels(mut self, levels: crate::row_sizes::Levels) -> Store {
        self.levels = levels;
        self
    }

    /// The largest rows this store's recent flushes and compactions wrote.
    pub fn largest_rows(&self) -> Vec<crate::row_sizes::RowSize> {
        self.largest.get()
    }

    /// The rows at or above the watch level, largest first.
    pub fn large_rows(&self) -> Vec<crate::row_sizes::RowSize> {
        self.largest.over(&self.levels)
    }

    /// The rows that fell below the watch level since last asked.
    pub fn take_dropped_large_rows(&self) -> Vec<Vec<u8>> {
        self.largest.take_dropped()
    }

    /// The most versions of one column the store holds (as its flushes and compactions
    /// saw), and the most versions a read of it has asked for (0: no read yet).
    pub fn versions_stored_and_asked(&self) -> (u64, u64) {
        (
            self.largest.versions(),
            self.versions_asked.load(Ordering::Relaxed),
        )
    }

    /// Notes the versions a read asks of this store.
    pub fn note_read_versions(&self, versions: u32) {
        // Written only when it grows: an unconditional `fetch_max` wrote the line on
        // every read, from every thread.
        let v = u64::from(versions);
        if self.versions_asked.load(Ordering::Relaxed) < v {
            self.versions_asked.fetch_max(v, Ordering::Relaxed);
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn read(&self) -> RwLockReadGuard<'_, StoreState> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, StoreState> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a cell to the active MemStore; returns the bytes accounted.
    pub fn add(&self, cell: Cell, now: i64) -> usize {
        self.read().active.add(cell, now)
    }

    /// Adds cells of this family from one edit at once.
    pub fn add_all(&self, cells: impl Iterator<Item = Cell>, now: i64) -> usize {
        self.read().active.add_all(cells, now)
    }

    /// Highest sequence id in the store files.
    pub fn max_flushed_seq_id(&self) -> u64 {
        self.read()
            .files
            .iter()
            .map(|f| f.max_seq_id)
            .max()
            .unwrap_or(0)
    }

    /// MemStore bytes (active + snapshot).
    pub fn memstore_size(&self) -> usize {
        let s = self.read();
        s.active.size() + s.snapshot.as_ref().map_or(0, |x| x.size())
    }

    /// Store files, oldest first.
    pub fn files(&self) -> Vec<Arc<StoreFile>> {
        self.read().files.to_vec()
    }

    /// Whether any file is a split reference (such a store cannot split again).
    pub fn has_references(&self) -> bool {
        self.read().files.iter().any(|f| f.half.is_some())
    }

    /// Creates the daughters' stores in `bottom` and `top`: each a manifest of
    /// references to this store's files, halved at `split_row`.
    pub fn write_references(
        &self,
        split_row: &[u8],
        bottom: &Path,
        top: &Path,
        parent: &str,
    ) -> Result<()> {
        self.write_reference_manifest(bottom, parent, split_row, false, true)?;
        self.write_reference_manifest(top, parent, split_row, true, true)
    }

    /// Creates the merged region's store in `dir` (or adds to it, for the second parent):
    /// references to every whole file of this store.
    pub fn write_whole_references(&self, dir: &Path, parent: &str) -> Result<()> {
        self.write_reference_manifest(dir, parent, b"", true, false)
    }

    /// `check_range`: as HBase splits, a daughter gets no reference to a file that has
    /// no cells on its side of the split row (an empty file: neither daughter), and a
    /// file wholly on its side is linked into it rather than referenced.
    fn write_reference_manifest(
        &self,
        dir: &Path,
        parent: &str,
        split_row: &[u8],
        top: bool,
        check_range: bool,
    ) -> Result<()> {
        let mut live = Manifest::read(self.fs.as_ref(), dir)
            .ok()
            .flatten()
            .unwrap_or_default();
        let mut linked = false;
        for f in self.files() {
            if check_range && f.half.is_none() {
                let span = f.row_span()?;
                let keep = match &span {
                    None => false,
                    Some((_, last)) if top => last.as_slice() >= split_row,
                    Some((first, _)) => first.as_slice() < split_row,
                };
                if !keep {
                    continue;
                }
                // Wholly on this side: HBase 2.6 gives the daughter a link to the file,
                // not a reference, so the daughter can split again at once. Here the
                // link is a second name of the file in the daughter's directory.
                let whole = match &span {
                    Some((first, _)) if top => first.as_slice() >= split_row,
                    Some((_, last)) => last.as_slice() < split_row,
                    None => false,
                };
                if whole {
                    if !linked {
                        self.fs.create_dir_all(dir)?;
                        linked = true;
                    }
                    let to = dir.join(&f.name);
                    if self.fs.exists(&to) {
                        self.fs.remove_file(&to)?;
                    }
                    self.fs.link(&f.path, &to)?;
                    live.push(FileEntry {
                        name: f.name.clone(),
                        kind: FileKind::HFile,
                    });
                    continue;
                }
            }
            live.push(FileEntry {
                name: format!("{}.{parent}", f.name),
                kind: FileKind::Reference {
                    parent_region: parent.to_string(),
                    parent_file: f.name.clone(),
                    split_row: split_row.to_vec(),
                    top,
                },
            });
        }
        if linked {
            self.fs.sync_dir(dir)?;
        }
        Manifest::create(self.fs.clone(), dir, live)?;
        Ok(())
    }

    /// Bytes of all store files.
    pub fn files_size(&self) -> u64 {
        self.read().files.iter().map(|f| f.size).sum()
    }

    /// Moves the active segment to the snapshot (a previous failed snapshot is kept and
    /// merged into the flush). Returns the segments to flush.
    pub fn snapshot(&self) -> Vec<Arc<MemSegment>> {
        let mut s = self.write();
        let mut out = Vec::new();
        if let Some(old) = s.snapshot.take() {
            out.push(old);
        }
        if !s.active.is_empty() {
            let active = std::mem::replace(&mut s.active, Arc::new(MemSegment::new()));
            out.push(active);
        }
        match out.len() {
            0 => {}
            1 => s.snapshot = out.first().cloned(),
            _ => {
                // Merge into one segment so readers see one snapshot.
                let merged = MemSegment::new();
                for seg in &out {
                    for c in seg.cells() {
                        merged.add(c, 0);
                    }
                }
                let merged = Arc::new(merged);
                s.snapshot = Some(merged.clone());
                out = vec![merged];
            }
        }
        out
    }

    /// Writer options from the family's attributes.
    pub fn writer_options(&self, now: i64) -> WriterOptions {
        family_writer_options(&self.family, now)
    }

    /// Writes `cells` to a new file of the store, under its final, unique name (it is
    /// part of the store only once a manifest commit names it). Returns the opened file
    /// (not yet visible to readers). A file is written even when every cell was
    /// dropped (a flush of expired cells only), as HBase's flusher writes one: it
    /// counts towards the next compaction's selection as HBase's does.
    pub fn write_file(
        &self,
        cells: &mut dyn Iterator<Item = Result<Cell>>,
        max_seq_id: u64,
        major: bool,
        compacted: &[String],
        now: i64,
    ) -> Result<Option<Arc<StoreFile>>> {
        let name = new_file_name(now);
        let dest = self.dir.join(&name);
        let mut w = HFileWriter::create(self.fs.as_ref(), &dest, self.writer_options(now))?;
        w.add_file_info(fi::MAX_SEQ_ID_KEY, (max_seq_id as i64).to_be_bytes());
        // `Bytes.toBytes(boolean)`, as HBase writes it: 0xFF for true.
        w.add_file_info(fi::MAJOR_COMPACTION_KEY, vec![if major { 0xFF } else { 0 }]);
        if !compacted.is_empty() {
            w.add_file_info(COMPACTED_FILES, compacted.join("\n").into_bytes());
        }
        let mut sizes = crate::row_sizes::RowSizeTracker::with_levels(
            &self.family.name,
            now,
            major,
            self.levels,
            self.largest.tracked(&self.levels),
        );
        let track = self.levels.enabled;
        for cell in cells {
            let cell = cell?;
            if track {
                sizes.add_versioned(
                    cell.row(),
                    cell.qualifier(),
                    crate::row_sizes::cell_bytes(&cell) as usize,
                    cell.cell_type().is_delete(),
                );
            }
            w.append(cell)?;
        }
        let _summary = w.close()?;
        let kind = match (major, compacted.is_empty()) {
            (true, _) => crate::row_sizes::Write::Major,
            (false, true) => crate::row_sizes::Write::Flush,
            (false, false) => crate::row_sizes::Write::Minor,
        };
        if track {
            self.largest.record_versions(sizes.max_versions(), kind);
        }
        for up in self.largest.record(sizes.finish(), kind, &self.levels) {
            tracing::warn!(
                store = %self.dir.display(),
                row = %cellar_types::to_string_binary(&up.row.row),
                bytes = up.row.bytes,
                cells = up.row.cells,
                level = ?up.level,
                "a row crossed a large-row level"
            );
        }
        self.fs.sync_dir(&self.dir)?;
        Ok(Some(Arc::new(StoreFile::open(
            &self.fs,
            &dest,
            self.cache.clone(),
        )?)))
    }

    /// Commits a flushed file to the manifest, publishes it and drops the snapshot it
    /// came from.
    pub fn commit_flush(&self, file: Option<Arc<StoreFile>>) -> Result<()> {
        if let Some(f) = &file {
            self.manifest.commit(Edit {
                add: vec![FileEntry::hfile(f.name.clone())],
                remove: Vec::new(),
            })?;
        }
        let flushed = {
            let mut s = self.write();
            if let Some(f) = file {
                Arc::make_mut(&mut s.files).push(f);
            }
            s.snapshot.take()
        };
        // Freeing a segment walks and frees every node and cell of it (tens of
        // milliseconds for a full MemStore): done after the store's lock is released,
        // which every write to this store takes.
        drop(flushed);
        Ok(())
    }

    /// Commits a bulk-loaded file (already in the store directory under its final
    /// name) to the manifest and publishes it.
    pub fn commit_bulk_load(&self, file: Arc<StoreFile>) -> Result<()> {
        self.manifest.commit(Edit {
            add: vec![FileEntry::hfile(file.name.clone())],
            remove: Vec::new(),
        })?;
        let mut s = self.write();
        let files = Arc::make_mut(&mut s.files);
        files.push(file);
        files.sort_by(|a, b| a.max_seq_id.cmp(&b.max_seq_id).then(a.name.cmp(&b.name)));
        Ok(())
    }

    /// Swaps compacted files for their output in one manifest commit, then deletes the
    /// replaced files of this store (a reference's parent file stays with its parent).
    pub fn commit_compaction(
        &self,
        removed: &[Arc<StoreFile>],
        output: Option<Arc<StoreFile>>,
    ) -> Result<()> {
        self.manifest.commit(Edit {
            add: output
                .iter()
                .map(|o| FileEntry::hfile(o.name.clone()))
                .collect(),
            remove: removed.iter().map(|f| f.name.clone()).collect(),
        })?;
        {
            let mut s = self.write();
            let files = Arc::make_mut(&mut s.files);
            files.retain(|f| !removed.iter().any(|r| r.name == f.name));
            if let Some(o) = output {
                files.push(o);
                files.sort_by(|a, b| a.max_seq_id.cmp(&b.max_seq_id).then(a.name.cmp(&b.name)));
            }
        }
        for f in removed.iter().filter(|f| f.half.is_none()) {
            if let Some(c) = &self.cache {
                c.evict_file(f.reader.id());
            }
            self.fs.remove_file(&f.path)?;
        }
        self.fs.sync_dir(&self.dir)?;
        Ok(())
    }

    /// Cursors over every source, positioned at `start`, showing cells up to `read_point`.
    /// With `get_row` (a Get: the row, and how many cells the MemStore cursors take at
    /// opening), files whose row bloom rules the row out are left out and the MemStore
    /// cursors end with the row.
    pub fn cursors(
        &self,
        read_point: u64,
        start: &KeyRef<'_>,
        get_row: Option<&[u8]>,
        cache_blocks: bool,
    ) -> Result<Vec<Source>> {
        let s = self.read();
        let mut out: Vec<Source> = Vec::with_capacity(4);
        let mem = |seg: &Arc<MemSegment>| match get_row {
            Some(row) => Ok(MemCursor::for_row(seg.clone(), read_point, start, row)),
            None => MemCursor::new(seg.clone(), read_point, start),
        };
        out.push(mem(&s.active)?.into());
        if let Some(snap) = &s.snapshot {
            out.push(mem(snap)?.into());
        }
        let files = s.files.clone();
        drop(s);
        for f in files.iter().rev() {
            if let Some(row) = get_row {
                if !f.reader.might_contain_row(row)? {
                    continue;
                }
            }
            out.push(
                f.cursor(read_point, start, cache_blocks && self.family.block_cache)?
                    .into(),
            );
        }
        Ok(out)
    }

    /// A corrupt-store error for this store.
    pub fn corrupt(&self, reason: impl Into<String>) -> RegionError {
        RegionError::CorruptStore {
            path: self.dir.display().to_string(),
            reason: reason.into(),
        }
    }
}

/// Files in a store directory that its manifest does not name. A store file (32 hex
/// digits) is provably unreferenced — a file becomes part of a store, or of a
/// daughter's references, only through a manifest commit naming it — so it is deleted
/// (the output of a flush or compaction that did not commit); anything else is left
/// alone with a warning.
fn clean_strays(fs: &dyn FileSystem, dir: &Path, live: &[FileEntry]) -> Result<()> {
    let named: std::collections::HashSet<&str> = live
        .iter()
        .filter(|e| e.kind == FileKind::HFile)
        .map(|e| e.name.as_str())
        .collect();
    for path in fs.list_dir(dir)? {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if named.contains(name)
            || name == ".tmp"
            || crate::manifest::manifest_number(name).is_some()
        {
            continue;
        }
        let ours = crate::store_upgrade::is_store_file_name(name)
            || crate::bulk_load::is_bulk_file_name(name)
            || name.starts_with(crate::bulk_load::STAGING_PREFIX);
        if ours && !fs.is_dir(&path) {
            tracing::warn!(path = %path.display(), "store file no manifest names; deleted");
            fs.remove_file(&path)?;
        } else {
            tracing::warn!(path = %path.display(), "not part of the store; ignored");
        }
    }
    Ok(())
}
