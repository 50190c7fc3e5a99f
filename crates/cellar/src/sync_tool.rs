//! `cellar hashtable` and `cellar synctable` (HBase's HashTable and SyncTable's dry
//! run): hash a table in batches into HBase's output layout, or compare a table with such
//! an output (HBase's or Cellar's) and list the row ranges that differ.

use std::path::PathBuf;

use clap::Args;

use cellar::hashtable::{check_out, hash_table, read_hashes, sync_ranges, write_hashes, HashSpec};
use cellar::Connection;
use cellar_types::to_string_binary;

use crate::bulk_tool::{open, Target};

#[derive(Args)]
pub struct HashTableArgs {
    /// The table to hash.
    table: String,
    /// Output directory (HBase's HashTable layout).
    out: PathBuf,
    /// Bytes of cells per hashed batch.
    #[arg(long, default_value_t = cellar::hashtable::DEFAULT_BATCH_SIZE)]
    batchsize: u64,
    /// Hash files to write (default: one per 100 regions, at least one).
    #[arg(long, default_value_t = 0)]
    numhashfiles: usize,
    /// Families to hash (comma-separated; default all).
    #[arg(long)]
    families: Option<String>,
    /// Versions per column to hash (default: the newest only).
    #[arg(long)]
    versions: Option<u32>,
    #[command(flatten)]
    target: Target,
}

#[derive(Args)]
pub struct SyncTableArgs {
    /// A HashTable output of the source table.
    hashes: PathBuf,
    /// The table to compare with it.
    table: String,
    /// Leave timestamps out of the hashes.
    #[arg(long)]
    ignore_timestamps: bool,
    #[command(flatten)]
    target: Target,
}

fn with_connection<T>(
    t: &Target,
    f: impl FnOnce(&dyn Connection) -> Result<T, String>,
) -> Result<T, String> {
    match open(t)? {
        (_, Some(c)) => f(&c),
        (Some(db), None) => {
            let r = f(db.connection());
            db.close().map_err(|e| e.to_string())?;
            r
        }
        (None, None) => Err("no table to read".into()),
    }
}

pub fn hashtable(a: &HashTableArgs) -> Result<(), String> {
    let out = check_out(&a.out).map_err(|e| e.to_string())?;
    let mut spec = HashSpec::new(&a.table);
    spec.batch_size = a.batchsize;
    spec.num_hash_files = a.numhashfiles;
    spec.families = a
        .families
        .as_ref()
        .map(|f| f.split(',').map(str::to_string).collect());
    spec.versions = a.versions;
    let th = with_connection(&a.target, |c| {
        hash_table(c, &mut spec).map_err(|e| e.to_string())
    })?;
    write_hashes(&th, &out).map_err(|e| e.to_string())?;
    println!(
        "hashed {} in {} batches into {} files under {}",
        th.spec.table,
        th.hashes.len(),
        th.spec.num_hash_files,
        out.display()
    );
    Ok(())
}

/// Ok(true) when every range matched.
pub fn synctable(a: &SyncTableArgs) -> Result<bool, String> {
    let source = read_hashes(&a.hashes).map_err(|e| e.to_string())?;
    let (n, diffs) = with_connection(&a.target, |c| {
        sync_ranges(&source, c, &a.table, a.ignore_timestamps).map_err(|e| e.to_string())
    })?;
    for d in &diffs {
        println!(
            "differs: [{}, {})",
            to_string_binary(&d.start),
            to_string_binary(&d.stop)
        );
    }
    println!(
        "compared {n} ranges of {} with {}: {} differ",
        source.spec.table,
        a.table,
        diffs.len()
    );
    Ok(diffs.is_empty())
}
