//! The stores a benchmark runs against. Each stores a YCSB record (ten fields) its own
//! natural way: Cellar as one row with a column per field; RocksDB (feature `rocksdb`)
//! as YCSB's RocksDB binding does, one key per record with the fields serialized in the
//! value. Durability is the same on both sides: WAL on, written to the OS per write
//! (`SYNC_WAL` / `sync=false`), or fsynced per write with `--fsync`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cellar::{Database, LocalTable};
use cellar_region::{FamilyDescriptor, Get, Put, Scan, TableDescriptor};
use cellar_wal::Durability;

/// A record: (field name, value).
pub type Record = Vec<(String, Vec<u8>)>;

/// What a benchmark needs of a store.
pub trait Target: Send + Sync {
    fn name(&self) -> String;
    fn insert(&self, key: &str, record: &Record) -> Result<(), String>;
    /// Reads every field; false when the record is missing.
    fn read(&self, key: &str) -> Result<bool, String>;
    fn update(&self, key: &str, field: &str, value: &[u8]) -> Result<(), String>;
    /// Reads up to `count` records from `start`; returns how many.
    fn scan(&self, start: &str, count: usize) -> Result<usize, String>;
    /// Makes everything durable and compacts what the store compacts on its own.
    fn settle(&self) -> Result<(), String>;
    /// Bytes on disk.
    fn disk_bytes(&self) -> u64;
    /// The block cache's counts so far, when the store reports them.
    fn cache_note(&self) -> Option<String> {
        None
    }
}

pub fn dir_size(p: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(p) else {
        return 0;
    };
    rd.filter_map(|e| e.ok())
        .map(|e| {
            let path = e.path();
            if path.is_dir() {
                dir_size(&path)
            } else {
                e.metadata().map(|m| m.len()).unwrap_or(0)
            }
        })
        .sum()
}

/// Options for a Cellar database in `dir` whose block cache is `cache_bytes`, the size
/// every target of a run gets.
pub fn cellar_options(dir: &Path, cache_bytes: usize) -> Result<cellar::Options, String> {
    let mut opts = cellar::Options::for_dir(dir).map_err(|e| e.to_string())?;
    // The block cache is `hfile.block.cache.size` of `cellar.heap.size`: size the heap
    // so that the cache is exactly `cache_bytes`.
    opts.config.block_cache_fraction = 0.4;
    opts.config.heap_size = (cache_bytes as f64 / 0.4).ceil() as u64;
    Ok(opts)
}

/// Cellar embedded, its family in one data block encoding.
pub struct CellarTarget {
    db: Database,
    table: LocalTable,
    dir: PathBuf,
    durability: Durability,
    encoding: String,
}

impl CellarTarget {
    pub fn open(
        dir: &Path,
        fsync: bool,
        cache_bytes: usize,
        encoding: &str,
    ) -> Result<CellarTarget, String> {
        let db = Database::open_with(dir, cellar_options(dir, cache_bytes)?)
            .map_err(|e| e.to_string())?;
        let durability = if fsync {
            Durability::FsyncWal
        } else {
            Durability::SyncWal
        };
        if !db.table_exists("usertable") {
            let mut f = FamilyDescriptor::new("f");
            f.set_attribute("DATA_BLOCK_ENCODING", encoding)
                .map_err(|e| e.to_string())?;
            let mut t = TableDescriptor::new("usertable").with_family(f);
            t.durability = durability;
            db.create_table(t).map_err(|e| e.to_string())?;
        }
        let table = db.table("usertable").map_err(|e| e.to_string())?;
        Ok(CellarTarget {
            db,
            table,
            dir: dir.to_path_buf(),
            durability,
            encoding: encoding.to_ascii_uppercase(),
        })
    }
}

impl Target for CellarTarget {
    fn name(&self) -> String {
        format!("cellar {} ({})", self.encoding, self.durability.name())
    }

    fn insert(&self, key: &str, record: &Record) -> Result<(), String> {
        let mut p = Put::new(key);
        for (f, v) in record {
            p = p.add_column("f", f.as_str(), v.clone());
        }
        self.table.put(p).map_err(|e| e.to_string())
    }

    fn read(&self, key: &str) -> Result<bool, String> {
        let r = self.table.get(&Get::new(key)).map_err(|e| e.to_string())?;
        Ok(!r.is_empty())
    }

    fn update(&self, key: &str, field: &str, value: &[u8]) -> Result<(), String> {
        self.table
            .put(Put::new(key).add_column("f", field, value.to_vec()))
            .map_err(|e| e.to_string())
    }

    fn scan(&self, start: &str, count: usize) -> Result<usize, String> {
        let t = &self.table;
        let s = Scan::new()
            .start_row(start)
            .limit(count as u64)
            .caching(count as u32);
        let mut n = 0;
        for r in t.scan(&s).map_err(|e| e.to_string())? {
            r.map_err(|e| e.to_string())?;
            n += 1;
        }
        Ok(n)
    }

    fn settle(&self) -> Result<(), String> {
        self.db.flush("usertable").map_err(|e| e.to_string())?;
        // Finish the compactions the flushes asked for, so that the run phase does not
        // share the cores with them (RocksDB's settle waits for its compactions too).
        self.db
            .compact("usertable", false)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    fn disk_bytes(&self) -> u64 {
        dir_size(&self.dir)
    }

    fn cache_note(&self) -> Option<String> {
        let s = self.db.block_cache_stats();
        Some(format!(
            "block cache {} hits, {} misses, {} blocks, {:.1} MiB",
            s.hits,
            s.misses,
            s.blocks,
            s.used_bytes as f64 / (1024.0 * 1024.0)
        ))
    }
}

/// Opens a target by name in `dir`: `cellar` (NONE), `cellar:<ENCODING>` (any data
/// block encoding, e.g. `cellar:FAST_DIFF`), `server`, `rocksdb`.
pub fn open(
    name: &str,
    dir: &Path,
    fsync: bool,
    cache_bytes: usize,
) -> Result<Arc<dyn Target>, String> {
    match name {
        "cellar" => Ok(Arc::new(CellarTarget::open(
            dir,
            fsync,
            cache_bytes,
            "NONE",
        )?)),
        cellar if cellar.starts_with("cellar:") => Ok(Arc::new(CellarTarget::open(
            dir,
            fsync,
            cache_bytes,
            &cellar["cellar:".len()..],
        )?)),
        "server" => Ok(Arc::new(crate::server_target::ServerTarget::open(
            dir,
            fsync,
            cache_bytes,
        )?)),
        #[cfg(feature = "rocksdb")]
        "rocksdb" => Ok(Arc::new(crate::rocks::RocksTarget::open(
            dir,
            fsync,
            cache_bytes,
        )?)),
        other => Err(format!(
            "unknown target '{other}' (cellar, cellar:<ENCODING>, server{})",
            if cfg!(feature = "rocksdb") {
                ", rocksdb"
            } else {
                "; rocksdb needs --features rocksdb"
            }
        )),
    }
}
