//! The scenarios' RocksDB peer (feature `rocksdb`): one database per table, WAL off
//! (as Cellar's SKIP_WAL ingest), no compression, the write buffer as Cellar's MemStore
//! flush size, a shared block cache, bloom filters; one key per cell,
//! `row 0x00 qualifier` (see `store`).

use std::path::{Path, PathBuf};

use super::store::{err, WholeRow, WideEngine, WideTable};

pub struct RocksEngine {
    dir: PathBuf,
    cache: rocksdb::Cache,
}

impl RocksEngine {
    pub fn open(dir: &Path, cache_bytes: usize) -> Result<RocksEngine, String> {
        std::fs::create_dir_all(dir).map_err(err)?;
        Ok(RocksEngine {
            dir: dir.to_path_buf(),
            cache: rocksdb::Cache::new_lru_cache(cache_bytes),
        })
    }
}

impl WideEngine for RocksEngine {
    fn name(&self) -> String {
        "rocksdb".into()
    }

    fn encodings(&self) -> Vec<&'static str> {
        // Block-based tables always delta-encode keys between restart points.
        vec!["key delta"]
    }

    fn table(&self, name: &str, _encoding: &str, flush: u64) -> Result<Box<dyn WideTable>, String> {
        let mut opts = rocksdb::Options::default();
        opts.create_if_missing(true);
        opts.set_compression_type(rocksdb::DBCompressionType::None);
        opts.set_write_buffer_size(flush as usize);
        let mut block = rocksdb::BlockBasedOptions::default();
        block.set_block_cache(&self.cache);
        block.set_bloom_filter(10.0, false);
        opts.set_block_based_table_factory(&block);
        let db = rocksdb::DB::open(&opts, self.dir.join(name)).map_err(err)?;
        Ok(Box::new(RocksTable { db }))
    }
}

struct RocksTable {
    db: rocksdb::DB,
}

fn key(row: &[u8], qualifier: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(row.len() + 1 + qualifier.len());
    k.extend_from_slice(row);
    k.push(0);
    k.extend_from_slice(qualifier);
    k
}

/// The row of a key (up to its first zero byte).
fn row_of(k: &[u8]) -> &[u8] {
    let end = k.iter().position(|b| *b == 0).unwrap_or(k.len());
    &k[..end]
}

impl RocksTable {
    /// Visits keys from `from` while `keep` says so; returns how many it kept.
    fn walk(
        &self,
        from: &[u8],
        mut keep: impl FnMut(&[u8], usize) -> bool,
    ) -> Result<usize, String> {
        let mut it = self.db.raw_iterator();
        it.seek(from);
        let mut n = 0;
        while it.valid() {
            let Some(k) = it.key() else { break };
            if !keep(k, n) {
                break;
            }
            // Read the value, as a client would.
            let _ = it.value();
            n += 1;
            it.next();
        }
        it.status().map_err(err)?;
        Ok(n)
    }
}

impl WideTable for RocksTable {
    fn put(&self, row: &[u8], qualifier: &[u8], _ts: i64, value: &[u8]) -> Result<(), String> {
        let mut w = rocksdb::WriteOptions::default();
        w.disable_wal(true);
        self.db.put_opt(key(row, qualifier), value, &w).map_err(err)
    }

    fn settle(&self) -> Result<(), String> {
        self.db.flush().map_err(err)?;
        self.db.compact_range::<&[u8], &[u8]>(None, None);
        Ok(())
    }

    fn file_bytes(&self) -> Result<u64, String> {
        Ok(self
            .db
            .property_int_value("rocksdb.total-sst-files-size")
            .map_err(err)?
            .unwrap_or(0))
    }

    fn regions(&self) -> Result<Option<usize>, String> {
        Ok(None)
    }

    fn row_head(&self, row: &[u8], n: usize) -> Result<usize, String> {
        let from = key(row, b"");
        self.walk(&from, |k, i| i < n && k.starts_with(&from))
    }

    fn row_range(&self, row: &[u8], lo: &[u8], hi: &[u8]) -> Result<usize, String> {
        let (from, to) = (key(row, lo), key(row, hi));
        self.walk(&from, |k, _| k <= to.as_slice())
    }

    fn prefix_rows(&self, prefix: &[u8], n: usize) -> Result<usize, String> {
        self.walk(prefix, |k, i| i < n && k.starts_with(prefix))
    }

    fn row_span(&self, start: &[u8], stop: &[u8]) -> Result<usize, String> {
        self.walk(start, |k, _| row_of(k) <= stop)
    }

    fn whole_row(&self, row: &[u8]) -> Result<WholeRow, String> {
        let from = key(row, b"");
        self.walk(&from, |k, _| k.starts_with(&from))
            .map(WholeRow::Cells)
    }

    fn page_from(&self, row: &[u8], cursor: &[u8], n: usize) -> Result<usize, String> {
        let (prefix, from) = (key(row, b""), key(row, cursor));
        self.walk(&from, |k, i| i < n && k.starts_with(&prefix))
    }
}
