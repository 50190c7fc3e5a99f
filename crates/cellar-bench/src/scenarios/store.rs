//! What the seeds' scenarios need of a store: wide rows of (qualifier, value) cells,
//! read by row head, qualifier range, row range, cursor page and whole row. Cellar
//! stores them as its own rows and columns; RocksDB (feature `rocksdb`) as the usual
//! wide-column-on-RocksDB layout, one key per cell: `row 0x00 qualifier` (rows here
//! never hold a zero byte, so key order is row order, then qualifier order).

use std::path::Path;
use std::sync::Arc;

use cellar::Database;
use cellar_region::{FamilyDescriptor, FilterSpec, Get, Put, RegionError, Scan, TableDescriptor};
use cellar_wal::Durability;

use crate::target::cellar_options;

pub fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A whole-row read's outcome.
pub enum WholeRow {
    Cells(usize),
    TooBig,
}

/// One table of a scenario.
pub trait WideTable {
    fn put(&self, row: &[u8], qualifier: &[u8], ts: i64, value: &[u8]) -> Result<(), String>;
    /// Flushes and compacts everything into its final files.
    fn settle(&self) -> Result<(), String>;
    /// Bytes of the table's store files.
    fn file_bytes(&self) -> Result<u64, String>;
    /// Regions the table ended with (None where the store has no such notion).
    fn regions(&self) -> Result<Option<usize>, String>;
    /// The first `n` cells of `row`.
    fn row_head(&self, row: &[u8], n: usize) -> Result<usize, String>;
    /// The cells of `row` with qualifiers in `[lo, hi]`.
    fn row_range(&self, row: &[u8], lo: &[u8], hi: &[u8]) -> Result<usize, String>;
    /// The first `n` rows starting with `prefix` (one cell each in the tall layout).
    fn prefix_rows(&self, prefix: &[u8], n: usize) -> Result<usize, String>;
    /// The rows in `[start, stop]`.
    fn row_span(&self, start: &[u8], stop: &[u8]) -> Result<usize, String>;
    /// Every cell of `row`, or TooBig where the store refuses rows over its limit.
    fn whole_row(&self, row: &[u8]) -> Result<WholeRow, String>;
    /// `n` cells of `row` from qualifier `cursor` (inclusive).
    fn page_from(&self, row: &[u8], cursor: &[u8], n: usize) -> Result<usize, String>;
}

/// A store that makes scenario tables.
pub trait WideEngine {
    fn name(&self) -> String;
    /// The block encodings to compare (stores without a choice give one name).
    fn encodings(&self) -> Vec<&'static str>;
    /// A new table; `flush` bytes is the MemStore (memtable) size.
    fn table(&self, name: &str, encoding: &str, flush: u64) -> Result<Box<dyn WideTable>, String>;
}

/// Cellar embedded, SKIP_WAL (ingest speed), one family `d`.
pub struct CellarEngine {
    db: Arc<Database>,
}

impl CellarEngine {
    pub fn open(dir: &Path, max_row_size: u64, cache_bytes: usize) -> Result<CellarEngine, String> {
        let mut o = cellar_options(dir, cache_bytes)?;
        o.config.max_row_size = max_row_size;
        Ok(CellarEngine {
            db: Arc::new(Database::open_with(dir, o).map_err(err)?),
        })
    }
}

impl WideEngine for CellarEngine {
    fn name(&self) -> String {
        "cellar".into()
    }

    fn encodings(&self) -> Vec<&'static str> {
        vec!["NONE", "FAST_DIFF"]
    }

    fn table(&self, name: &str, encoding: &str, flush: u64) -> Result<Box<dyn WideTable>, String> {
        let mut f = FamilyDescriptor::new("d");
        f.set_attribute("DATA_BLOCK_ENCODING", encoding)
            .map_err(err)?;
        let mut t = TableDescriptor::new(name).with_family(f);
        t.durability = Durability::SkipWal;
        t.memstore_flush_size = Some(flush);
        t.max_file_size = Some(flush * 8);
        self.db.create_table(t).map_err(err)?;
        Ok(Box::new(CellarTable {
            db: self.db.clone(),
            table: self.db.table(name).map_err(err)?,
            name: name.to_string(),
        }))
    }
}

struct CellarTable {
    db: Arc<Database>,
    table: cellar::LocalTable,
    name: String,
}

fn pagination(limit: u32, cursor: Option<&[u8]>) -> FilterSpec {
    FilterSpec::ColumnPagination {
        limit,
        offset: 0,
        column_offset: cursor.map(<[u8]>::to_vec),
    }
}

impl WideTable for CellarTable {
    fn put(&self, row: &[u8], qualifier: &[u8], ts: i64, value: &[u8]) -> Result<(), String> {
        self.table
            .put(
                Put::new(row)
                    .add_column("d", qualifier, value.to_vec())
                    .with_timestamp(ts),
            )
            .map_err(err)
    }

    fn settle(&self) -> Result<(), String> {
        self.db.flush(&self.name).map_err(err)?;
        self.db.compact(&self.name, true).map(|_| ()).map_err(err)
    }

    fn file_bytes(&self) -> Result<u64, String> {
        Ok(self
            .db
            .list_regions(&self.name)
            .map_err(err)?
            .iter()
            .map(|r| r.store_files_size)
            .sum())
    }

    fn regions(&self) -> Result<Option<usize>, String> {
        Ok(Some(self.db.list_regions(&self.name).map_err(err)?.len()))
    }

    fn row_head(&self, row: &[u8], n: usize) -> Result<usize, String> {
        let get = Get::new(row).filter(pagination(n as u32, None));
        Ok(self.table.get(&get).map_err(err)?.cells.len())
    }

    fn row_range(&self, row: &[u8], lo: &[u8], hi: &[u8]) -> Result<usize, String> {
        let get = Get::new(row).filter(FilterSpec::ColumnRange {
            min: Some(lo.to_vec()),
            min_inclusive: true,
            max: Some(hi.to_vec()),
            max_inclusive: true,
        });
        Ok(self.table.get(&get).map_err(err)?.cells.len())
    }

    fn prefix_rows(&self, prefix: &[u8], n: usize) -> Result<usize, String> {
        let scan = Scan::new().with_row_prefix(prefix).limit(n as u64);
        Ok(self.table.scan(&scan).map_err(err)?.count())
    }

    fn row_span(&self, start: &[u8], stop: &[u8]) -> Result<usize, String> {
        let scan = Scan::new()
            .with_start_row(start, true)
            .with_stop_row(stop, true);
        Ok(self.table.scan(&scan).map_err(err)?.count())
    }

    fn whole_row(&self, row: &[u8]) -> Result<WholeRow, String> {
        match self.table.get(&Get::new(row)) {
            Ok(r) => Ok(WholeRow::Cells(r.cells.len())),
            Err(cellar::DbError::Region(RegionError::RowTooBig { .. })) => Ok(WholeRow::TooBig),
            Err(e) => Err(err(e)),
        }
    }

    fn page_from(&self, row: &[u8], cursor: &[u8], n: usize) -> Result<usize, String> {
        let get = Get::new(row).filter(pagination(n as u32, Some(cursor)));
        Ok(self.table.get(&get).map_err(err)?.cells.len())
    }
}
