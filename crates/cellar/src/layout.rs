//! Where things live under a database root: `data/<namespace>/<table>/<region>/` for
//! tables and regions (the default namespace's tables in `data/default/`). Shared by the
//! master and the region servers.

use std::path::{Path, PathBuf};

use cellar_api::{RegionInfo, DEFAULT_NAMESPACE};

/// The namespace and qualifier of a table name.
fn split_name(table: &str) -> (&str, &str) {
    table.split_once(':').unwrap_or((DEFAULT_NAMESPACE, table))
}

/// A namespace's directory under the database root.
pub fn namespace_dir(root: &Path, ns: &str) -> PathBuf {
    root.join("data").join(ns)
}

/// A table's directory under the database root: `data/<namespace>/<qualifier>`.
pub fn table_dir(root: &Path, table: &str) -> PathBuf {
    let (ns, q) = split_name(table);
    namespace_dir(root, ns).join(q)
}

/// A region's directory under the database root.
pub fn region_dir(root: &Path, info: &RegionInfo) -> PathBuf {
    table_dir(root, &info.table).join(&info.encoded)
}
