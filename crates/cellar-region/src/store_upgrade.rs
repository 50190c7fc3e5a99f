//! Reading a store of the layout before manifests (Cellar 0.1): its files were what the
//! directory listed, split and merge references were text files `<file>.<parent>`
//! naming the parent's file by an absolute path, and a compaction's output listed the
//! files it replaced. This turns such a directory into manifest entries once; the store
//! then writes its first manifest and never lists again.

use std::path::Path;
use std::sync::Arc;

use cellar_hfile::BlockCache;
use cellar_io::FileSystem;

use crate::error::{RegionError, Result};
use crate::manifest::{manifest_number, FileEntry, FileKind};
use crate::store::StoreFile;

/// What the old layout held: the live files, and the reference files that become
/// manifest entries (deleted once the manifest is written).
pub struct Legacy {
    pub live: Vec<FileEntry>,
    pub reference_files: Vec<std::path::PathBuf>,
}

fn parse_reference(text: &str) -> Option<(String, String, Vec<u8>, bool)> {
    let mut parent = None;
    let mut split_row = None;
    let mut top = None;
    for line in text.lines() {
        let (k, v) = line.split_once('=')?;
        match k {
            "parent" => parent = Some(v.to_string()),
            "split_row" => split_row = Some(cellar_types::from_hex(v)?),
            "half" => top = Some(v == "top"),
            _ => {}
        }
    }
    // `<anything>/<parent region>/<family>/<file>`: only the last three parts count.
    let parent = parent?;
    let mut parts = parent.rsplit('/');
    let file = parts.next()?.to_string();
    let _family = parts.next()?;
    let region = parts.next()?.to_string();
    Some((region, file, split_row?, top?))
}

/// Lists an old-layout store in `dir`.
pub fn read_legacy(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    cache: Option<Arc<BlockCache>>,
) -> Result<Legacy> {
    let mut live = Vec::new();
    let mut reference_files = Vec::new();
    let mut replaced = std::collections::HashSet::new();
    for path in fs.list_dir(dir)? {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name.starts_with('.') || manifest_number(name).is_some() || fs.is_dir(&path) {
            continue;
        }
        match name.split_once('.') {
            Some((_, parent))
                if !parent.is_empty()
                    && is_store_file_name(name.split('.').next().unwrap_or_default()) =>
            {
                let text =
                    String::from_utf8_lossy(&cellar_io::read_all(fs.as_ref(), &path)?).into_owned();
                let (parent_region, parent_file, split_row, top) = parse_reference(&text)
                    .ok_or_else(|| RegionError::CorruptStore {
                        path: path.display().to_string(),
                        reason: "unreadable split reference".into(),
                    })?;
                live.push(FileEntry {
                    name: name.to_string(),
                    kind: FileKind::Reference {
                        parent_region,
                        parent_file,
                        split_row,
                        top,
                    },
                });
                reference_files.push(path);
            }
            None if is_store_file_name(name) => {
                let f = StoreFile::open(fs, &path, cache.clone())?;
                replaced.extend(f.compacted.iter().cloned());
                live.push(FileEntry::hfile(name));
            }
            _ => tracing::warn!(
                path = %path.display(),
                "not a store file; ignored while upgrading the store to a manifest"
            ),
        }
    }
    // Files a finished compaction replaced, whose deletion did not complete, are not
    // live (the old layout's rule); they are removed after the manifest is written.
    live.retain(|e| !replaced.contains(&e.name));
    Ok(Legacy {
        live,
        reference_files,
    })
}

/// A store file name as Cellar writes them: 32 lower-case hex digits.
pub fn is_store_file_name(name: &str) -> bool {
    name.len() == 32
        && name
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}
