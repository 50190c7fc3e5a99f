//! Snapshots, with HBase's semantics and on-disk layout (so HBase's tools read them):
//!
//! ```text
//! <root>/.hbase-snapshot/<name>/data.manifest   table schema, regions, their store files
//! <root>/.hbase-snapshot/<name>/.snapshotinfo   name, table, time, type (written last)
//! <root>/archive/data/<ns>/<table>/<region>/<family>/<file>   the files a snapshot keeps
//! ```
//!
//! Taking one holds every region of the table still (no write, flush or compaction),
//! flushes each, and gives every store file a second name under `archive/` (a hard link:
//! no data is copied) before the manifest names it; so the snapshot is the table as of
//! one moment, and compactions, splits and drops that delete the table's own names
//! leave the snapshot's alone. A snapshot exists once its `.snapshotinfo` does; a crash
//! before that leaves an incomplete directory and archive names that the next snapshot
//! operation removes. Deleting a snapshot removes the archive names no other snapshot
//! uses. A clone is a new table whose store files are further names of the archived
//! files (each region takes them oldest first, as a bulk load); a restore replaces a
//! disabled table with the snapshot's contents and leaves it disabled, as HBase does.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use cellar_api::{Error, ErrorKind, RegionInfo};
use cellar_io::FileSystem;
use cellar_protocol::pb;
use cellar_region::manifest::{FileKind, Manifest};
use cellar_region::store::family_dir_name;
use cellar_types::KeyRef;
use prost::Message;

use super::{locked, read, Master};
use crate::error::{DbError, Result};
use crate::layout::{region_dir, table_dir};

/// Where snapshots live under the root.
pub const SNAPSHOT_DIR: &str = ".hbase-snapshot";
const INFO: &str = ".snapshotinfo";
const DATA: &str = "data.manifest";

/// One snapshot as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotInfo {
    pub name: String,
    pub table: String,
    pub creation_time: i64,
}

/// HBase's rule for snapshot names: letters, digits, `_`, `-` and `.`, not starting
/// with a dot.
pub(super) fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "Illegal character in snapshot name '{name}': only letters, digits, '_', '-' and '.' (not first) are allowed"
        ))
        .into())
    }
}

fn write_file(fs: &dyn FileSystem, path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    let mut w = fs.create(&tmp)?;
    w.append(bytes)?;
    w.sync()?;
    drop(w);
    fs.rename(&tmp, path)?;
    Ok(())
}

/// The archive directory of a table's region (`archive/data/<ns>/<table>/<region>`).
fn archive_region_dir(root: &Path, table: &str, region: &str) -> PathBuf {
    let data = table_dir(root, table);
    let rel = data.strip_prefix(root).unwrap_or(&data).to_path_buf();
    root.join("archive").join(rel).join(region)
}

impl Master {
    fn snapshot_dir(&self, name: &str) -> PathBuf {
        self.root.join(SNAPSHOT_DIR).join(name)
    }

    /// Completed snapshots, by name.
    pub fn list_snapshots(&self) -> Result<Vec<SnapshotInfo>> {
        let dir = self.root.join(SNAPSHOT_DIR);
        let mut out = Vec::new();
        if !self.fs.is_dir(&dir) {
            return Ok(out);
        }
        for d in self.fs.list_dir(&dir)? {
            let info = d.join(INFO);
            if !self.fs.exists(&info) {
                continue;
            }
            let bytes = cellar_io::read_all(self.fs.as_ref(), &info)?;
            let desc = pb::SnapshotDescription::decode(bytes.as_slice())
                .map_err(|e| Error::new(ErrorKind::Corrupt, format!("{}: {e}", info.display())))?;
            out.push(SnapshotInfo {
                name: desc.name,
                table: desc.table.unwrap_or_default(),
                creation_time: desc.creation_time.unwrap_or(0),
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    fn snapshot_exists(&self, name: &str) -> bool {
        self.fs.exists(&self.snapshot_dir(name).join(INFO))
    }

    /// Takes snapshot `name` of `table` (enabled: flushed and held still; disabled: its
    /// files as they are).
    pub fn snapshot(&self, table: &str, name: &str) -> Result<()> {
        check_name(name)?;
        let _one = locked(&self.snapshots);
        if self.snapshot_exists(name) {
            return Err(Error::new(
                ErrorKind::SnapshotExists,
                format!("Snapshot '{name}' already stored on the filesystem."),
            )
            .into());
        }
        self.clean_archive_locked()?;
        let st = self.state(table)?;
        let _proc = locked(&st.procedure);
        let (desc, enabled, infos) = {
            let e = read(&st.entry);
            if let Some(why) = &e.damaged {
                return Err(DbError::Open {
                    path: table_dir(&self.root, table),
                    reason: why.clone(),
                });
            }
            (
                e.desc.clone(),
                e.enabled,
                e.regions.iter().map(|s| s.info.clone()).collect::<Vec<_>>(),
            )
        };
        let table = desc.name.clone();
        let regions = if enabled {
            self.locations(&table)?
                .into_iter()
                .map(|l| l.region())
                .collect::<Result<Vec<_>>>()?
        } else {
            Vec::new()
        };
        let frozen: Vec<_> = regions.iter().map(|r| r.freeze()).collect();
        for f in &frozen {
            f.flush()?;
        }
        let creation_time = self.clock.now_millis();
        let dir = self.snapshot_dir(name);
        self.fs.create_dir_all(&dir)?;
        let mut manifests = Vec::new();
        for info in &infos {
            manifests.push(self.snapshot_region(&table, info, &desc)?);
        }
        drop(frozen);
        let data = pb::SnapshotDataManifest {
            table_schema: cellar_protocol::convert::table_to_pb(&desc),
            region_manifests: manifests,
        };
        write_file(self.fs.as_ref(), &dir.join(DATA), &data.encode_to_vec())?;
        let info = pb::SnapshotDescription {
            name: name.to_string(),
            table: Some(table.clone()),
            creation_time: Some(creation_time),
            r#type: Some(if enabled { 1 } else { 0 }),
            version: Some(2),
            ..Default::default()
        };
        // Written last: the snapshot exists from here on.
        write_file(self.fs.as_ref(), &dir.join(INFO), &info.encode_to_vec())?;
        self.fs.sync_dir(&dir)?;
        tracing::info!(snapshot = %name, table = %table, regions = infos.len(), "snapshot taken");
        Ok(())
    }

    /// One region's store files, each given its archive name.
    fn snapshot_region(
        &self,
        table: &str,
        info: &RegionInfo,
        desc: &cellar_api::TableDescriptor,
    ) -> Result<pb::SnapshotRegionManifest> {
        let region_info = cellar_protocol::convert::region_info_to_pb(info);
        // The manifest names a region by its RegionInfo, from which readers (HBase's
        // too) derive the encoded name they look for under archive/.
        let encoded = cellar_protocol::convert::region_info_from_pb(&region_info)
            .map_err(|e| Error::new(ErrorKind::Corrupt, e.to_string()))?
            .encoded;
        let mut family_files = Vec::new();
        for fam in &desc.families {
            let fdir = family_dir_name(&fam.name);
            let store_dir = region_dir(&self.root, info).join(&fdir);
            let live = Manifest::read(self.fs.as_ref(), &store_dir)?.unwrap_or_default();
            let mut store_files = Vec::new();
            for entry in live {
                let (region, file, name, reference) = match &entry.kind {
                    FileKind::HFile => (
                        info.encoded.clone(),
                        entry.name.clone(),
                        entry.name.clone(),
                        None,
                    ),
                    FileKind::Reference {
                        parent_region,
                        parent_file,
                        split_row,
                        top,
                    } => (
                        parent_region.clone(),
                        parent_file.clone(),
                        format!("{parent_file}.{parent_region}"),
                        Some(pb::Reference {
                            splitkey: KeyRef::first_on_row(split_row).to_vec().into(),
                            range: if *top {
                                pb::reference::Range::Top as i32
                            } else {
                                pb::reference::Range::Bottom as i32
                            },
                        }),
                    ),
                };
                let src = table_dir(&self.root, table)
                    .join(&region)
                    .join(&fdir)
                    .join(&file);
                // A region's own files go under the name readers derive; a reference's
                // parent file under the parent's name, as the reference names it.
                let archived_as = if reference.is_some() {
                    &region
                } else {
                    &encoded
                };
                let adir = archive_region_dir(&self.root, table, archived_as).join(&fdir);
                let dst = adir.join(&file);
                if !self.fs.exists(&dst) {
                    self.fs.create_dir_all(&adir)?;
                    self.fs.link(&src, &dst)?;
                    self.fs.sync_dir(&adir)?;
                }
                store_files.push(pb::snapshot_region_manifest::StoreFile {
                    name,
                    reference,
                    file_size: Some(self.fs.file_len(&dst)?),
                });
            }
            family_files.push(pb::snapshot_region_manifest::FamilyFiles {
                family_name: fam.name.clone().into(),
                store_files,
            });
        }
        Ok(pb::SnapshotRegionManifest {
            version: Some(2),
            region_info,
            family_files,
        })
    }

    /// Deletes a snapshot and the archived files only it kept.
    pub fn delete_snapshot(&self, name: &str) -> Result<()> {
        check_name(name)?;
        let _one = locked(&self.snapshots);
        if !self.snapshot_exists(name) {
            return Err(snapshot_missing(name));
        }
        let dir = self.snapshot_dir(name);
        // The snapshot ends when its description goes; the rest is cleanup.
        self.fs.remove_file(&dir.join(INFO))?;
        self.fs.sync_dir(&dir)?;
        self.clean_archive_locked()
    }

    /// Removes incomplete snapshot directories and every archived file no snapshot
    /// names. Holds the snapshot lock.
    fn clean_archive_locked(&self) -> Result<()> {
        let sdir = self.root.join(SNAPSHOT_DIR);
        let mut keep: BTreeSet<PathBuf> = BTreeSet::new();
        if self.fs.is_dir(&sdir) {
            for d in self.fs.list_dir(&sdir)? {
                if !self.fs.exists(&d.join(INFO)) {
                    crate::database::files::remove_tree(self.fs.as_ref(), &d)?;
                    continue;
                }
                let name = d.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                let snap =
                    crate::hbase_snapshot::read_snapshot_in(self.fs.clone(), &self.root, name)?;
                for r in &snap.regions {
                    for (family, files) in &r.families {
                        for f in files {
                            let (region, file) = match &f.reference {
                                Some(_) => match f.name.rsplit_once('.') {
                                    Some((file, parent)) => (parent.to_string(), file.to_string()),
                                    None => continue,
                                },
                                None => (r.info.encoded.clone(), f.name.clone()),
                            };
                            keep.insert(
                                archive_region_dir(&self.root, &snap.table, &region)
                                    .join(family_dir_name(family))
                                    .join(file),
                            );
                        }
                    }
                }
            }
        }
        let archive = self.root.join("archive");
        if self.fs.is_dir(&archive) {
            prune(self.fs.as_ref(), &archive, &keep)?;
        }
        Ok(())
    }

    /// A new table `table` with the snapshot's schema, regions and cells.
    pub fn clone_snapshot(&self, name: &str, table: &str) -> Result<()> {
        check_name(name)?;
        let _one = locked(&self.snapshots);
        if !self.snapshot_exists(name) {
            return Err(snapshot_missing(name));
        }
        crate::snapshot_import::import_with(self, &self.root, name, Some(table), true)?;
        Ok(())
    }
}

/// A snapshot's description as HBase lists it.
pub fn description(s: &SnapshotInfo) -> pb::SnapshotDescription {
    pb::SnapshotDescription {
        name: s.name.clone(),
        table: Some(s.table.clone()),
        creation_time: Some(s.creation_time),
        r#type: Some(1),
        version: Some(2),
        ..Default::default()
    }
}

pub(super) fn snapshot_missing(name: &str) -> DbError {
    Error::new(
        ErrorKind::SnapshotNotFound,
        format!("Snapshot '{name}' doesn't exist on the filesystem"),
    )
    .into()
}

/// Deletes every file under `dir` not in `keep`, and the directories left empty.
fn prune(fs: &dyn FileSystem, dir: &Path, keep: &BTreeSet<PathBuf>) -> Result<()> {
    for p in fs.list_dir(dir)? {
        if fs.is_dir(&p) {
            prune(fs, &p, keep)?;
            if fs.list_dir(&p)?.is_empty() {
                fs.remove_dir(&p)?;
            }
        } else if !keep.contains(&p) {
            fs.remove_file(&p)?;
        }
    }
    Ok(())
}

impl Master {
    /// Copies snapshot `name` to `dir` in ExportSnapshot's layout
    /// (`.hbase-snapshot/<name>/` and the files under `archive/data/...`), on the local
    /// disk; HBase imports it by copying it into its root and cloning. Returns the
    /// number of store files copied.
    pub fn export_snapshot(&self, name: &str, dir: &Path) -> Result<usize> {
        check_name(name)?;
        let _one = locked(&self.snapshots);
        if !self.snapshot_exists(name) {
            return Err(snapshot_missing(name));
        }
        let local = cellar_io::LocalFs;
        let dest_snap = dir.join(SNAPSHOT_DIR).join(name);
        if local.exists(&dest_snap) {
            return Err(
                Error::invalid(format!("{} already holds snapshot {name}", dir.display())).into(),
            );
        }
        let snap = crate::hbase_snapshot::read_snapshot_in(self.fs.clone(), &self.root, name)?;
        let mut copied = 0;
        for r in &snap.regions {
            for (family, files) in &r.families {
                for f in files {
                    let (region, file) = match &f.reference {
                        Some(_) => match f.name.rsplit_once('.') {
                            Some((file, parent)) => (parent.to_string(), file.to_string()),
                            None => continue,
                        },
                        None => (r.info.encoded.clone(), f.name.clone()),
                    };
                    let src = snap.locate(&region, family, &file)?;
                    let rel = src.strip_prefix(&self.root).map_err(|_| {
                        Error::new(
                            ErrorKind::Corrupt,
                            format!("{} is outside the database", src.display()),
                        )
                    })?;
                    // Files always land under archive/, as ExportSnapshot puts them.
                    let rel = rel.strip_prefix("archive").unwrap_or(rel);
                    let dst = dir.join("archive").join(rel);
                    if local.exists(&dst) {
                        continue;
                    }
                    if let Some(p) = dst.parent() {
                        local.create_dir_all(p)?;
                    }
                    let bytes = cellar_io::read_all(self.fs.as_ref(), &src)?;
                    let mut w = local.create(&dst)?;
                    w.append(&bytes)?;
                    w.sync()?;
                    copied += 1;
                }
            }
        }
        // The description last, as in the database: the export is whole once it is there.
        local.create_dir_all(&dest_snap)?;
        let src_dir = self.snapshot_dir(name);
        for f in [DATA, INFO] {
            let bytes = cellar_io::read_all(self.fs.as_ref(), &src_dir.join(f))?;
            write_file(&local, &dest_snap.join(f), &bytes)?;
        }
        local.sync_dir(&dest_snap)?;
        Ok(copied)
    }
}
