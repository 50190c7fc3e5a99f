//! The RocksDB peer (feature `rocksdb`), configured like Cellar: WAL on, the same sync
//! policy, a block cache of the same size, no compression, one column family `f`.

use std::path::{Path, PathBuf};

use crate::target::{dir_size, Record, Target};

pub struct RocksTarget {
    db: rocksdb::DB,
    dir: PathBuf,
    fsync: bool,
}

fn encode(record: &Record) -> Vec<u8> {
    let mut out = Vec::new();
    for (f, v) in record {
        out.extend_from_slice(&(f.len() as u32).to_be_bytes());
        out.extend_from_slice(f.as_bytes());
        out.extend_from_slice(&(v.len() as u32).to_be_bytes());
        out.extend_from_slice(v);
    }
    out
}

fn decode(mut b: &[u8]) -> Record {
    let mut out = Vec::new();
    let take = |n: usize, b: &mut &[u8]| -> Option<Vec<u8>> {
        if b.len() < n {
            return None;
        }
        let (h, t) = b.split_at(n);
        *b = t;
        Some(h.to_vec())
    };
    while let Some(l) = take(4, &mut b) {
        let n = u32::from_be_bytes([l[0], l[1], l[2], l[3]]) as usize;
        let Some(f) = take(n, &mut b) else { break };
        let Some(l) = take(4, &mut b) else { break };
        let n = u32::from_be_bytes([l[0], l[1], l[2], l[3]]) as usize;
        let Some(v) = take(n, &mut b) else { break };
        out.push((String::from_utf8_lossy(&f).into_owned(), v));
    }
    out
}

impl RocksTarget {
    pub fn open(dir: &Path, fsync: bool, cache_bytes: usize) -> Result<RocksTarget, String> {
        let mut opts = rocksdb::Options::default();
        opts.create_if_missing(true);
        opts.create_missing_column_families(true);
        opts.set_compression_type(rocksdb::DBCompressionType::None);
        let mut block = rocksdb::BlockBasedOptions::default();
        block.set_block_cache(&rocksdb::Cache::new_lru_cache(cache_bytes));
        block.set_bloom_filter(10.0, false);
        opts.set_block_based_table_factory(&block);
        let db = rocksdb::DB::open_cf(&opts, dir, ["default", "f"]).map_err(|e| e.to_string())?;
        Ok(RocksTarget {
            db,
            dir: dir.to_path_buf(),
            fsync,
        })
    }

    fn write_opts(&self) -> rocksdb::WriteOptions {
        let mut w = rocksdb::WriteOptions::default();
        w.set_sync(self.fsync);
        w.disable_wal(false);
        w
    }

    fn cf(&self) -> Result<&rocksdb::ColumnFamily, String> {
        self.db
            .cf_handle("f")
            .ok_or_else(|| "no column family f".to_string())
    }
}

impl Target for RocksTarget {
    fn name(&self) -> String {
        format!(
            "rocksdb ({})",
            if self.fsync {
                "sync=true"
            } else {
                "sync=false, WAL on"
            }
        )
    }

    fn insert(&self, key: &str, record: &Record) -> Result<(), String> {
        self.db
            .put_cf_opt(self.cf()?, key, encode(record), &self.write_opts())
            .map_err(|e| e.to_string())
    }

    fn read(&self, key: &str) -> Result<bool, String> {
        Ok(self
            .db
            .get_cf(self.cf()?, key)
            .map_err(|e| e.to_string())?
            .is_some())
    }

    fn update(&self, key: &str, field: &str, value: &[u8]) -> Result<(), String> {
        // YCSB's RocksDB binding: read the record, change the field, write it back.
        let cf = self.cf()?;
        let mut rec = self
            .db
            .get_cf(cf, key)
            .map_err(|e| e.to_string())?
            .map(|v| decode(&v))
            .unwrap_or_default();
        match rec.iter_mut().find(|(f, _)| f == field) {
            Some(slot) => slot.1 = value.to_vec(),
            None => rec.push((field.to_string(), value.to_vec())),
        }
        self.db
            .put_cf_opt(cf, key, encode(&rec), &self.write_opts())
            .map_err(|e| e.to_string())
    }

    fn scan(&self, start: &str, count: usize) -> Result<usize, String> {
        let it = self.db.iterator_cf(
            self.cf()?,
            rocksdb::IteratorMode::From(start.as_bytes(), rocksdb::Direction::Forward),
        );
        let mut n = 0;
        for item in it.take(count) {
            item.map_err(|e| e.to_string())?;
            n += 1;
        }
        Ok(n)
    }

    fn settle(&self) -> Result<(), String> {
        let cf = self.cf()?;
        self.db.flush_cf(cf).map_err(|e| e.to_string())?;
        // Wait for the compactions the flush asked for, as Cellar's settle does.
        for _ in 0..6000 {
            let busy = |p: &str| {
                self.db
                    .property_int_value_cf(cf, p)
                    .map(|v| v.unwrap_or(0))
                    .map_err(|e| e.to_string())
            };
            if busy("rocksdb.compaction-pending")? == 0
                && busy("rocksdb.num-running-compactions")? == 0
            {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        Err("compactions still running after a minute".into())
    }

    fn disk_bytes(&self) -> u64 {
        dir_size(&self.dir)
    }
}
