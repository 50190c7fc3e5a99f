//! Thrift2's `THBaseService`: the dispatch by method name and the data methods
//! (gets, puts, deletes, check-and-mutates, increments, appends, scanners, region
//! locations). The admin methods are in `hbase2_admin`.

use std::sync::Arc;

use cellar_api::{CheckAndMutate, Condition, Mutation, RowResult};
use cellar_thrift::{Reply, Service, Struct, TType, Value};

use super::hbase2_types::{
    append_from, compare_op, delete_from, get_from, increment_from, location_value, put_from,
    result_value, row_mutations_from, scan_from,
};
use super::scanners::OpenScanner;
use super::{batch_fault, finish2, table_name, Fault, Outcome, Scanners, Throws, IO_IA, IO_ONLY};
use crate::client::{Connection, Table};

/// The Thrift2 service on one connection to the store.
pub struct ThriftTwo {
    pub(super) conn: Arc<dyn Connection>,
    scanners: Arc<Scanners>,
}

impl ThriftTwo {
    pub fn new(conn: Arc<dyn Connection>, scanners: Arc<Scanners>) -> Self {
        ThriftTwo { conn, scanners }
    }
}

impl Service for ThriftTwo {
    fn call(&self, method: &str, a: &Struct) -> Reply {
        let (outcome, throws): (Outcome, Throws) = match method {
            "exists" => (self.exists(a), IO_ONLY),
            "existsAll" => (self.exists_all(a), IO_ONLY),
            "get" => (self.get(a), IO_ONLY),
            "getMultiple" => (self.get_multiple(a), IO_ONLY),
            "put" => (self.put(a), IO_ONLY),
            "putMultiple" => (self.put_multiple(a), IO_ONLY),
            "deleteSingle" => (self.delete_single(a), IO_ONLY),
            "deleteMultiple" => (self.delete_multiple(a), IO_ONLY),
            "checkAndPut" => (self.check_and(a, true), IO_ONLY),
            "checkAndDelete" => (self.check_and(a, false), IO_ONLY),
            "checkAndMutate" => (self.check_and_mutate(a), IO_ONLY),
            "increment" => (self.increment(a), IO_ONLY),
            "append" => (self.append(a), IO_ONLY),
            "mutateRow" => (self.mutate_row(a), IO_ONLY),
            "openScanner" => (self.open_scanner(a), IO_ONLY),
            "getScannerRows" => (self.scanner_rows(a), IO_IA),
            "closeScanner" => (self.close_scanner(a), IO_IA),
            "getScannerResults" => (self.scanner_results(a), IO_ONLY),
            "getRegionLocation" => (self.region_location(a), IO_ONLY),
            "getAllRegionLocations" => (self.all_region_locations(a), IO_ONLY),
            "getThriftServerType" => (Ok(Some(Value::I32(2))), IO_ONLY),
            other => match self.admin_call(other, a) {
                Some(o) => (o, IO_ONLY),
                None => return Reply::UnknownMethod,
            },
        };
        if let Err(f) = &outcome {
            tracing::debug!(method, "thrift2 call failed: {f:?}");
        }
        finish2(outcome, throws)
    }
}

fn arg<'a>(a: &'a Struct, id: i16, what: &str) -> Result<&'a Struct, Fault> {
    a.strukt(id)
        .ok_or_else(|| Fault::Illegal(format!("{what} is required")))
}

fn results(rs: &[RowResult]) -> Value {
    Value::List(TType::Struct, rs.iter().map(result_value).collect())
}

impl ThriftTwo {
    fn table(&self, a: &Struct) -> Result<Box<dyn Table>, Fault> {
        Ok(self.conn.table(&table_name(a.bytes(1))?)?)
    }

    fn exists(&self, a: &Struct) -> Outcome {
        let t = self.table(a)?;
        let r = t.get(&get_from(arg(a, 2, "a TGet")?)?)?;
        Ok(Some(Value::Bool(r.exists.unwrap_or(!r.cells.is_empty()))))
    }

    fn exists_all(&self, a: &Struct) -> Outcome {
        let t = self.table(a)?;
        let mut out = Vec::new();
        for g in a.struct_list(2).unwrap_or_default() {
            let r = t.get(&get_from(g)?)?;
            out.push(Value::Bool(r.exists.unwrap_or(!r.cells.is_empty())));
        }
        Ok(Some(Value::List(TType::Bool, out)))
    }

    fn get(&self, a: &Struct) -> Outcome {
        let t = self.table(a)?;
        let r = t.get(&get_from(arg(a, 2, "a TGet")?)?)?;
        Ok(Some(result_value(&r)))
    }

    fn get_multiple(&self, a: &Struct) -> Outcome {
        let t = self.table(a)?;
        let mut out = Vec::new();
        for g in a.struct_list(2).unwrap_or_default() {
            out.push(t.get(&get_from(g)?)?);
        }
        Ok(Some(results(&out)))
    }

    fn put(&self, a: &Struct) -> Outcome {
        let t = self.table(a)?;
        t.put(put_from(arg(a, 2, "a TPut")?)?)?;
        Ok(None)
    }

    fn put_multiple(&self, a: &Struct) -> Outcome {
        let t = self.table(a)?;
        let puts = a
            .struct_list(2)
            .unwrap_or_default()
            .into_iter()
            .map(|p| put_from(p).map(Mutation::Put))
            .collect::<Result<Vec<_>, _>>()?;
        batch_fault(t.batch(&puts))?;
        Ok(None)
    }

    fn delete_single(&self, a: &Struct) -> Outcome {
        let t = self.table(a)?;
        t.delete(delete_from(arg(a, 2, "a TDelete")?)?)?;
        Ok(None)
    }

    fn delete_multiple(&self, a: &Struct) -> Outcome {
        let t = self.table(a)?;
        let dels = a
            .struct_list(2)
            .unwrap_or_default()
            .into_iter()
            .map(|d| delete_from(d).map(Mutation::Delete))
            .collect::<Result<Vec<_>, _>>()?;
        batch_fault(t.batch(&dels))?;
        Ok(Some(Value::List(TType::Struct, Vec::new())))
    }

    fn condition(a: &Struct, op: Option<cellar_api::CompareOp>, value_id: i16) -> Condition {
        let f = a.bytes(3).unwrap_or_default().to_vec();
        let q = a.bytes(4).unwrap_or_default().to_vec();
        match (a.bytes(value_id), op) {
            (None, _) => Condition::not_exists(f, q),
            (Some(v), None) => Condition::equals(f, q, v.to_vec()),
            (Some(v), Some(op)) => Condition::matches(f, q, op, v.to_vec()),
        }
    }

    fn check_and(&self, a: &Struct, put: bool) -> Outcome {
        let t = self.table(a)?;
        let row = a.bytes(2).unwrap_or_default().to_vec();
        let m = if put {
            Mutation::Put(put_from(arg(a, 6, "a TPut")?)?)
        } else {
            Mutation::Delete(delete_from(arg(a, 6, "a TDelete")?)?)
        };
        if m.row() != row.as_slice() {
            return Err(Fault::Io(
                "org.apache.hadoop.hbase.DoNotRetryIOException: Action's getRow must match".into(),
                false,
            ));
        }
        let cam = CheckAndMutate::new(row, Self::condition(a, None, 5)).then(m);
        Ok(Some(Value::Bool(t.check_and_mutate(&cam)?.success)))
    }

    fn check_and_mutate(&self, a: &Struct) -> Outcome {
        let t = self.table(a)?;
        let row = a.bytes(2).unwrap_or_default().to_vec();
        let op = compare_op(a.i64(5))?;
        let rm = row_mutations_from(arg(a, 7, "row mutations")?)?;
        let mut cam = CheckAndMutate::new(row, Self::condition(a, Some(op), 6));
        cam.mutations = rm.mutations;
        Ok(Some(Value::Bool(t.check_and_mutate(&cam)?.success)))
    }

    fn increment(&self, a: &Struct) -> Outcome {
        let t = self.table(a)?;
        let r = t.increment(increment_from(arg(a, 2, "a TIncrement")?)?)?;
        Ok(Some(result_value(&r)))
    }

    fn append(&self, a: &Struct) -> Outcome {
        let t = self.table(a)?;
        let r = t.append(append_from(arg(a, 2, "a TAppend")?)?)?;
        Ok(Some(result_value(&r)))
    }

    fn mutate_row(&self, a: &Struct) -> Outcome {
        let t = self.table(a)?;
        t.mutate_row(&row_mutations_from(arg(a, 2, "row mutations")?)?)?;
        Ok(None)
    }

    fn open_scanner(&self, a: &Struct) -> Outcome {
        let t = self.table(a)?;
        let scanner = t.scan(&scan_from(arg(a, 2, "a TScan")?)?)?;
        let id = self.scanners.add(OpenScanner {
            scanner,
            sort_columns: false,
        });
        Ok(Some(Value::I32(id)))
    }

    fn scanner_rows(&self, a: &Struct) -> Outcome {
        let id = a.i32(1).unwrap_or(-1);
        let n = a.i32(2).unwrap_or(1);
        let Some(mut open) = self.scanners.take(id) else {
            return Err(Fault::Illegal("Invalid scanner Id".into()));
        };
        let got = take(&mut open, n);
        self.scanners.put_back(id, open);
        Ok(Some(results(&got?)))
    }

    fn close_scanner(&self, a: &Struct) -> Outcome {
        if self.scanners.close(a.i32(1).unwrap_or(-1)) {
            Ok(None)
        } else {
            Err(Fault::Illegal("Invalid scanner Id".into()))
        }
    }

    fn scanner_results(&self, a: &Struct) -> Outcome {
        let t = self.table(a)?;
        let scanner = t.scan(&scan_from(arg(a, 2, "a TScan")?)?)?;
        let mut open = OpenScanner {
            scanner,
            sort_columns: false,
        };
        Ok(Some(results(&take(&mut open, a.i32(3).unwrap_or(1))?)))
    }

    fn region_location(&self, a: &Struct) -> Outcome {
        let name = table_name(a.bytes(1))?;
        let row = a.bytes(2).unwrap_or_default();
        let regions = self.conn.admin().list_regions(&name)?;
        let r = regions
            .iter()
            .filter(|r| !r.info.offline)
            .find(|r| r.info.contains(row))
            .ok_or_else(|| {
                Fault::Io(
                    format!("java.io.IOException: no region of {name} holds the row"),
                    true,
                )
            })?;
        Ok(Some(location_value(r)))
    }

    fn all_region_locations(&self, a: &Struct) -> Outcome {
        let name = table_name(a.bytes(1))?;
        let regions = self.conn.admin().list_regions(&name)?;
        Ok(Some(Value::List(
            TType::Struct,
            regions
                .iter()
                .filter(|r| !r.info.offline)
                .map(location_value)
                .collect(),
        )))
    }
}

/// Up to `n` results of a scanner.
fn take(open: &mut OpenScanner, n: i32) -> Result<Vec<RowResult>, Fault> {
    let mut out = Vec::new();
    while out.len() < usize::try_from(n).unwrap_or(0) {
        match open.scanner.next() {
            Some(r) => out.push(r?),
            None => break,
        }
    }
    Ok(out)
}
