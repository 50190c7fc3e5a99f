//! Thrift1's `Hbase` service: the dispatch by method name and the table
//! administration methods. Reads and writes are in `hbase1_data`.

use std::sync::Arc;

use cellar_api::{BloomType, Compression, FamilyDescriptor, RegionStats, TableDescriptor, FOREVER};
use cellar_thrift::{Reply, Service, Struct, TType, Value};

use super::{finish, parse_column, table_name, Fault, Outcome, Scanners, Throws, IO_IA, IO_ONLY};
use crate::client::Connection;

/// The Thrift1 service on one connection to the store.
pub struct ThriftOne {
    pub(super) conn: Arc<dyn Connection>,
    pub(super) scanners: Arc<Scanners>,
    cluster_id: String,
}

impl ThriftOne {
    pub fn new(conn: Arc<dyn Connection>, scanners: Arc<Scanners>, cluster_id: String) -> Self {
        ThriftOne {
            conn,
            scanners,
            cluster_id,
        }
    }
}

impl Service for ThriftOne {
    fn call(&self, method: &str, a: &Struct) -> Reply {
        let (outcome, throws): (Outcome, Throws) = match method {
            "enableTable" => (self.enable(a, true), IO_ONLY),
            "disableTable" => (self.enable(a, false), IO_ONLY),
            "isTableEnabled" => (self.is_enabled(a), IO_ONLY),
            "compact" => (self.compact(a, false), IO_ONLY),
            "majorCompact" => (self.compact(a, true), IO_ONLY),
            "getTableNames" => (self.table_names(), IO_ONLY),
            "getTableNamesWithIsTableEnabled" => (self.table_names_enabled(), IO_ONLY),
            "getColumnDescriptors" => (self.column_descriptors(a), IO_ONLY),
            "getTableRegions" => (self.table_regions(a), IO_ONLY),
            "createTable" => (
                self.create_table(a),
                Throws {
                    illegal: true,
                    exists: true,
                },
            ),
            "deleteTable" => (self.delete_table(a), IO_ONLY),
            "getRegionInfo" => (self.region_info(a), IO_ONLY),
            "getThriftServerType" => (Ok(Some(Value::I32(1))), IO_ONLY),
            "getClusterId" => (Ok(Some(Value::string(self.cluster_id.clone()))), IO_ONLY),
            "grant" | "revoke" => (
                Err(Fault::Io(
                    "org.apache.hadoop.hbase.DoNotRetryIOException: access control is not enabled on this server".into(),
                    false,
                )),
                IO_ONLY,
            ),
            "get" => (self.get(a), IO_ONLY),
            "getVer" => (self.get_ver(a, false), IO_ONLY),
            "getVerTs" => (self.get_ver(a, true), IO_ONLY),
            "getRow" => (self.get_rows(a, Shape::ROW), IO_ONLY),
            "getRowWithColumns" => (self.get_rows(a, Shape::ROW_COLS), IO_ONLY),
            "getRowTs" => (self.get_rows(a, Shape::ROW_TS), IO_ONLY),
            "getRowWithColumnsTs" => (self.get_rows(a, Shape::ROW_COLS_TS), IO_ONLY),
            "getRows" => (self.get_rows(a, Shape::ROWS), IO_ONLY),
            "getRowsWithColumns" => (self.get_rows(a, Shape::ROWS_COLS), IO_ONLY),
            "getRowsTs" => (self.get_rows(a, Shape::ROWS_TS), IO_ONLY),
            "getRowsWithColumnsTs" => (self.get_rows(a, Shape::ROWS_COLS_TS), IO_ONLY),
            "getRowOrBefore" => (self.row_or_before(a), IO_ONLY),
            "mutateRow" => (self.mutate_row(a, false), IO_IA),
            "mutateRowTs" => (self.mutate_row(a, true), IO_IA),
            "mutateRows" => (self.mutate_rows(a, false), IO_IA),
            "mutateRowsTs" => (self.mutate_rows(a, true), IO_IA),
            "atomicIncrement" => (self.atomic_increment(a), IO_IA),
            "deleteAll" => (self.delete_all(a, false), IO_ONLY),
            "deleteAllTs" => (self.delete_all(a, true), IO_ONLY),
            "deleteAllRow" => (self.delete_all_row(a, false), IO_ONLY),
            "deleteAllRowTs" => (self.delete_all_row(a, true), IO_ONLY),
            "increment" => (self.increment(a), IO_ONLY),
            "incrementRows" => (self.increment_rows(a), IO_ONLY),
            "append" => (self.append(a), IO_ONLY),
            "checkAndPut" => (self.check_and_put(a), IO_IA),
            "scannerOpenWithScan" => (self.scanner_open_with_scan(a), IO_ONLY),
            "scannerOpen" => (self.scanner_open(a, Open::START), IO_ONLY),
            "scannerOpenWithStop" => (self.scanner_open(a, Open::STOP), IO_ONLY),
            "scannerOpenWithPrefix" => (self.scanner_open(a, Open::PREFIX), IO_ONLY),
            "scannerOpenTs" => (self.scanner_open(a, Open::START_TS), IO_ONLY),
            "scannerOpenWithStopTs" => (self.scanner_open(a, Open::STOP_TS), IO_ONLY),
            "scannerGet" => (self.scanner_get(a, false), IO_IA),
            "scannerGetList" => (self.scanner_get(a, true), IO_IA),
            "scannerClose" => (self.scanner_close(a), IO_IA),
            _ => return Reply::UnknownMethod,
        };
        if let Err(f) = &outcome {
            tracing::debug!(method, "thrift call failed: {f:?}");
        }
        finish(outcome, throws)
    }
}

/// Which `getRow*` form: where its columns and timestamp arguments are.
#[derive(Clone, Copy)]
pub(super) struct Shape {
    pub many: bool,
    pub columns: Option<i16>,
    pub ts: Option<i16>,
}

impl Shape {
    const ROW: Shape = Shape {
        many: false,
        columns: None,
        ts: None,
    };
    const ROW_COLS: Shape = Shape {
        many: false,
        columns: Some(3),
        ts: None,
    };
    const ROW_TS: Shape = Shape {
        many: false,
        columns: None,
        ts: Some(3),
    };
    const ROW_COLS_TS: Shape = Shape {
        many: false,
        columns: Some(3),
        ts: Some(4),
    };
    const ROWS: Shape = Shape {
        many: true,
        columns: None,
        ts: None,
    };
    const ROWS_COLS: Shape = Shape {
        many: true,
        columns: Some(3),
        ts: None,
    };
    const ROWS_TS: Shape = Shape {
        many: true,
        columns: None,
        ts: Some(3),
    };
    const ROWS_COLS_TS: Shape = Shape {
        many: true,
        columns: Some(3),
        ts: Some(4),
    };
}

/// Which `scannerOpen*` form: where its stop row, columns and timestamp are.
#[derive(Clone, Copy)]
pub(super) struct Open {
    pub stop: Option<i16>,
    pub prefix: bool,
    pub columns: i16,
    pub ts: Option<i16>,
}

impl Open {
    const START: Open = Open {
        stop: None,
        prefix: false,
        columns: 3,
        ts: None,
    };
    const STOP: Open = Open {
        stop: Some(3),
        prefix: false,
        columns: 4,
        ts: None,
    };
    const PREFIX: Open = Open {
        stop: None,
        prefix: true,
        columns: 3,
        ts: None,
    };
    const START_TS: Open = Open {
        stop: None,
        prefix: false,
        columns: 3,
        ts: Some(4),
    };
    const STOP_TS: Open = Open {
        stop: Some(3),
        prefix: false,
        columns: 4,
        ts: Some(5),
    };
}

/// HBase's region version byte in TRegionInfo (regions are no longer versioned).
const REGION_VERSION: i8 = 1;

pub(super) fn region_info(r: &RegionStats) -> Struct {
    let (host, port) = match &r.server {
        Some(s) => (s.host.clone(), i32::from(s.port)),
        None => (String::new(), 0),
    };
    Struct::new()
        .with(1, Value::binary(r.info.start.clone()))
        .with(2, Value::binary(r.info.end.clone()))
        .with(3, Value::I64(r.info.id))
        .with(4, Value::string(r.info.region_name()))
        .with(5, Value::Byte(REGION_VERSION))
        .with(6, Value::string(host))
        .with(7, Value::I32(port))
}

fn column_descriptor(f: &FamilyDescriptor) -> Struct {
    let mut name = f.name.clone();
    name.push(b':');
    Struct::new()
        .with(1, Value::binary(name))
        .with(2, Value::I32(i32::try_from(f.versions).unwrap_or(i32::MAX)))
        .with(3, Value::string(f.compression.name()))
        .with(4, Value::Bool(f.in_memory))
        .with(5, Value::string(f.bloom.name()))
        .with(6, Value::I32(0))
        .with(7, Value::I32(0))
        .with(8, Value::Bool(f.block_cache))
        .with(9, Value::I32(f.ttl))
}

/// A family from a ColumnDescriptor, with the IDL's defaults for what is missing.
fn family_from(c: &Struct) -> Result<FamilyDescriptor, Fault> {
    let name = match c.bytes(1) {
        Some(n) if !n.is_empty() => parse_column(n).0,
        _ => return Err(Fault::Illegal("column name is empty".into())),
    };
    if name.is_empty() {
        return Err(Fault::Illegal("column name is empty".into()));
    }
    let mut f = FamilyDescriptor::new(name);
    f.versions = u32::try_from(c.i32(2).unwrap_or(3))
        .map_err(|_| Fault::Illegal("maxVersions must be positive".into()))?;
    let comp = c.text(3).unwrap_or_else(|| "NONE".into());
    f.compression = Compression::from_name(&comp)
        .ok_or_else(|| Fault::Illegal(format!("unknown compression {comp:?}")))?;
    f.in_memory = c.bool(4).unwrap_or(false);
    let bloom = c.text(5).unwrap_or_else(|| "NONE".into());
    f.bloom = BloomType::from_name(&bloom, None)
        .ok_or_else(|| Fault::Illegal(format!("unknown bloom filter type {bloom:?}")))?;
    f.block_cache = c.bool(8).unwrap_or(false);
    f.ttl = match c.i32(9) {
        Some(t) if t > 0 => t,
        _ => FOREVER,
    };
    f.validate()
        .map_err(|e| Fault::Illegal(e.message().to_string()))?;
    Ok(f)
}

impl ThriftOne {
    fn enable(&self, a: &Struct, on: bool) -> Outcome {
        let t = table_name(a.bytes(1))?;
        let admin = self.conn.admin();
        if on {
            admin.enable_table(&t)?;
        } else {
            admin.disable_table(&t)?;
        }
        Ok(None)
    }

    fn is_enabled(&self, a: &Struct) -> Outcome {
        let t = table_name(a.bytes(1))?;
        Ok(Some(Value::Bool(self.conn.admin().is_table_enabled(&t)?)))
    }

    /// A table name, or a region name (`table,start,id.encoded.`): its table.
    fn compact(&self, a: &Struct, major: bool) -> Outcome {
        let name = table_name(a.bytes(1))?;
        let admin = self.conn.admin();
        let table = if admin.table_exists(&name)? {
            name
        } else {
            let t = name.split(',').next().unwrap_or_default().to_string();
            let regions = admin.list_regions(&t).unwrap_or_default();
            if !regions.iter().any(|r| r.info.region_name() == name) {
                return Err(Fault::Io(
                    format!("org.apache.hadoop.hbase.TableNotFoundException: {name}"),
                    false,
                ));
            }
            t
        };
        admin.compact(&table, major)?;
        Ok(None)
    }

    fn table_names(&self) -> Outcome {
        let names = self.conn.admin().list_tables()?;
        Ok(Some(Value::binaries(
            names.into_iter().map(String::into_bytes),
        )))
    }

    fn table_names_enabled(&self) -> Outcome {
        let admin = self.conn.admin();
        let mut entries = Vec::new();
        for t in admin.list_tables()? {
            let on = admin.is_table_enabled(&t)?;
            entries.push((Value::string(t), Value::Bool(on)));
        }
        Ok(Some(Value::Map(TType::String, TType::Bool, entries)))
    }

    fn column_descriptors(&self, a: &Struct) -> Outcome {
        let t = table_name(a.bytes(1))?;
        let (desc, _) = self.conn.admin().describe(&t)?;
        let mut fams: Vec<&FamilyDescriptor> = desc.families.iter().collect();
        fams.sort_by(|x, y| x.name.cmp(&y.name));
        let entries = fams
            .into_iter()
            .map(|f| {
                let mut name = f.name.clone();
                name.push(b':');
                (Value::Binary(name), Value::Struct(column_descriptor(f)))
            })
            .collect();
        Ok(Some(Value::Map(TType::String, TType::Struct, entries)))
    }

    fn table_regions(&self, a: &Struct) -> Outcome {
        let t = table_name(a.bytes(1))?;
        let regions = match self.conn.admin().list_regions(&t) {
            Ok(r) => r,
            // HBase answers an empty list for a table that does not exist.
            Err(e) if e.kind() == cellar_api::ErrorKind::TableNotFound => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        Ok(Some(Value::structs(
            regions.iter().filter(|r| !r.info.offline).map(region_info),
        )))
    }

    fn create_table(&self, a: &Struct) -> Outcome {
        let t = table_name(a.bytes(1))?;
        let admin = self.conn.admin();
        if admin.table_exists(&t)? {
            return Err(Fault::Exists("table name already in use".into()));
        }
        let mut desc = TableDescriptor::new(t);
        for c in a.struct_list(2).unwrap_or_default() {
            desc.families.push(family_from(c)?);
        }
        admin.create_table(desc, Vec::new())?;
        Ok(None)
    }

    fn delete_table(&self, a: &Struct) -> Outcome {
        let t = table_name(a.bytes(1))?;
        let admin = self.conn.admin();
        if !admin.table_exists(&t)? {
            return Err(Fault::Io(
                "java.io.IOException: table does not exist".into(),
                true,
            ));
        }
        admin.delete_table(&t)?;
        Ok(None)
    }

    /// The region holding a catalog row key (`table,row,...`), as HBase's reverse
    /// scan of `hbase:meta` finds it.
    fn region_info(&self, a: &Struct) -> Outcome {
        let key = a.bytes(1).unwrap_or_default();
        let not_found = || {
            Fault::Io(
                format!(
                    "java.io.IOException: Cannot find row in hbase:meta, row={}",
                    cellar_types::to_string_binary(key)
                ),
                true,
            )
        };
        let comma = key.iter().position(|&b| b == b',').ok_or_else(not_found)?;
        let table = String::from_utf8_lossy(&key[..comma]).into_owned();
        let rest = &key[comma + 1..];
        let row = match rest.iter().rposition(|&b| b == b',') {
            Some(i) => &rest[..i],
            None => rest,
        };
        let regions = self
            .conn
            .admin()
            .list_regions(&table)
            .map_err(|_| not_found())?;
        let r = regions
            .iter()
            .filter(|r| !r.info.offline)
            .find(|r| r.info.contains(row))
            .ok_or_else(not_found)?;
        Ok(Some(Value::Struct(region_info(r))))
    }
}
