//! Thrift1's reads, writes and scanners, each as HBase's `ThriftHBaseServiceHandler`
//! maps it onto the client API: `family` or `family:qualifier` columns, `*Ts` reads
//! over `[0, ts)`, deletes before puts in `mutateRow`, puts before deletes in
//! `mutateRows`, empty rows left out of results.

use std::collections::BTreeMap;

use cellar_api::{
    Append, Cell, CheckAndMutate, Condition, Delete, Durability, Get, Increment, Mutation, Put,
    RowResult, Scan, LATEST_TIMESTAMP,
};
use cellar_thrift::{ApplicationErrorKind, Struct, TType, Value};

use super::hbase1::{Open, Shape, ThriftOne};
use super::scanners::OpenScanner;
use super::{batch_fault, make_column, parse_column, parse_filter, table_name, Fault, Outcome};

fn tcell(c: &Cell) -> Value {
    Value::Struct(
        Struct::new()
            .with(1, Value::binary(c.value().to_vec()))
            .with(2, Value::I64(c.timestamp())),
    )
}

fn tcells(cells: &[Cell]) -> Value {
    Value::List(TType::Struct, cells.iter().map(tcell).collect())
}

/// A TRowResult: the `columns` map (one cell a column, as HBase's map keeps the last
/// it is given) or, sorted, the `sortedColumns` list.
fn row_result(r: &RowResult, sorted: bool) -> Value {
    let s = Struct::new().with(1, Value::binary(r.row.clone()));
    let s = if sorted {
        let cols = r.cells.iter().map(|c| {
            Struct::new()
                .with(1, Value::binary(make_column(c.family(), c.qualifier())))
                .with(2, tcell(c))
        });
        s.with(3, Value::structs(cols))
    } else {
        let mut map: BTreeMap<Vec<u8>, Value> = BTreeMap::new();
        for c in &r.cells {
            map.insert(make_column(c.family(), c.qualifier()), tcell(c));
        }
        s.with(
            2,
            Value::Map(
                TType::String,
                TType::Struct,
                map.into_iter()
                    .map(|(k, v)| (Value::Binary(k), v))
                    .collect(),
            ),
        )
    };
    Value::Struct(s)
}

fn rows_value<'a>(results: impl IntoIterator<Item = &'a RowResult>, sorted: bool) -> Value {
    Value::List(
        TType::Struct,
        results
            .into_iter()
            .filter(|r| !r.cells.is_empty())
            .map(|r| row_result(r, sorted))
            .collect(),
    )
}

fn get_columns(mut g: Get, columns: &[&[u8]]) -> Get {
    for c in columns {
        g = match parse_column(c) {
            (f, None) => g.add_family(f),
            (f, Some(q)) => g.add_column(f, q),
        };
    }
    g
}

fn scan_columns(mut s: Scan, columns: &[&[u8]]) -> Scan {
    for c in columns {
        s = match parse_column(c) {
            (f, None) => s.add_family(f),
            (f, Some(q)) => s.add_column(f, q),
        };
    }
    s
}

fn versions(n: Option<i32>) -> Result<u32, Fault> {
    match n {
        Some(n) if n > 0 => Ok(n as u32),
        _ => Err(Fault::Io(
            "java.io.IOException: versions must be positive".into(),
            false,
        )),
    }
}

fn wal(writes: bool) -> Durability {
    if writes {
        Durability::SyncWal
    } else {
        Durability::SkipWal
    }
}

/// One Thrift1 Mutation.
struct Edit {
    delete: bool,
    family: Vec<u8>,
    qualifier: Option<Vec<u8>>,
    value: Vec<u8>,
    wal: bool,
}

fn edits(list: Option<Vec<&Struct>>) -> Vec<Edit> {
    list.unwrap_or_default()
        .into_iter()
        .map(|m| {
            let (family, qualifier) = parse_column(m.bytes(2).unwrap_or_default());
            Edit {
                delete: m.bool(1).unwrap_or(false),
                family,
                qualifier,
                value: m.bytes(3).unwrap_or_default().to_vec(),
                wal: m.bool(4).unwrap_or(true),
            }
        })
        .collect()
}

/// The put and the delete a row's mutations make (either may be empty).
fn split_edits(
    row: &[u8],
    edits: Vec<Edit>,
    ts: i64,
    strict: bool,
) -> Result<(Put, Delete), Fault> {
    let mut put = Put::new(row.to_vec()).with_timestamp(ts);
    let mut del = Delete::new(row.to_vec());
    for e in edits {
        if e.delete {
            del = match e.qualifier {
                None => del.add_family_before(&e.family, ts),
                Some(q) => del.add_columns_before(&e.family, q, ts),
            }
            .durability(wal(e.wal));
        } else {
            match e.qualifier {
                Some(q) => put = put.add_column(e.family, q, e.value).durability(wal(e.wal)),
                None if strict => return Err(Fault::Illegal("Invalid famAndQf provided.".into())),
                None => tracing::warn!(
                    "No column qualifier specified. Delete is the only mutation supported over the whole column family."
                ),
            }
        }
    }
    Ok((put, del))
}

impl ThriftOne {
    fn table(&self, a: &Struct) -> Result<Box<dyn crate::client::Table>, Fault> {
        let t = table_name(a.bytes(1))?;
        Ok(self.conn.table(&t)?)
    }

    pub(super) fn get(&self, a: &Struct) -> Outcome {
        let table = self.table(a)?;
        let g = get_columns(
            Get::new(a.bytes(2).unwrap_or_default()),
            &[a.bytes(3).unwrap_or_default()],
        );
        Ok(Some(tcells(&table.get(&g)?.cells)))
    }

    pub(super) fn get_ver(&self, a: &Struct, with_ts: bool) -> Outcome {
        let table = self.table(a)?;
        let (ts, n) = if with_ts {
            (a.i64(4).unwrap_or(LATEST_TIMESTAMP), a.i32(5))
        } else {
            (LATEST_TIMESTAMP, a.i32(4))
        };
        let mut g = get_columns(
            Get::new(a.bytes(2).unwrap_or_default()),
            &[a.bytes(3).unwrap_or_default()],
        )
        .max_versions(versions(n)?);
        if with_ts {
            g = g.time_range(0, ts);
        }
        Ok(Some(tcells(&table.get(&g)?.cells)))
    }

    pub(super) fn get_rows(&self, a: &Struct, shape: Shape) -> Outcome {
        let table = self.table(a)?;
        let rows: Vec<&[u8]> = if shape.many {
            a.byte_list(2).unwrap_or_default()
        } else {
            vec![a.bytes(2).unwrap_or_default()]
        };
        let columns = shape.columns.and_then(|i| a.byte_list(i));
        let ts = shape.ts.and_then(|i| a.i64(i)).unwrap_or(LATEST_TIMESTAMP);
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let mut g = Get::new(row);
            if let Some(cols) = &columns {
                g = get_columns(g, cols);
            }
            if ts != LATEST_TIMESTAMP {
                g = g.time_range(0, ts);
            }
            out.push(table.get(&g)?);
        }
        Ok(Some(rows_value(&out, false)))
    }

    /// The newest cells of the last row at or before `row`, in one family.
    pub(super) fn row_or_before(&self, a: &Struct) -> Outcome {
        let table = self.table(a)?;
        let (family, _) = parse_column(a.bytes(3).unwrap_or_default());
        let scan = Scan::new()
            .reversed(true)
            .start_row(a.bytes(2).unwrap_or_default())
            .add_family(family)
            .limit(1);
        match table.scan(&scan)?.next() {
            Some(r) => Ok(Some(tcells(&r?.cells))),
            None => Ok(Some(tcells(&[]))),
        }
    }

    pub(super) fn mutate_row(&self, a: &Struct, with_ts: bool) -> Outcome {
        let table = self.table(a)?;
        let row = a.bytes(2).unwrap_or_default();
        let ts = if with_ts {
            a.i64(4).unwrap_or(LATEST_TIMESTAMP)
        } else {
            LATEST_TIMESTAMP
        };
        let (put, del) = split_edits(row, edits(a.struct_list(3)), ts, false)?;
        if !del.specs.is_empty() {
            table.delete(del)?;
        }
        if !put.cells.is_empty() {
            table.put(put)?;
        }
        Ok(None)
    }

    pub(super) fn mutate_rows(&self, a: &Struct, with_ts: bool) -> Outcome {
        let ts = if with_ts {
            a.i64(3).unwrap_or(LATEST_TIMESTAMP)
        } else {
            LATEST_TIMESTAMP
        };
        let mut puts = Vec::new();
        let mut dels = Vec::new();
        for b in a.struct_list(2).unwrap_or_default() {
            let (put, del) = split_edits(
                b.bytes(1).unwrap_or_default(),
                edits(b.struct_list(2)),
                ts,
                true,
            )?;
            if !put.cells.is_empty() {
                puts.push(Mutation::Put(put));
            }
            if !del.specs.is_empty() {
                dels.push(Mutation::Delete(del));
            }
        }
        let table = self.table(a)?;
        if !puts.is_empty() {
            batch_fault(table.batch(&puts))?;
        }
        if !dels.is_empty() {
            batch_fault(table.batch(&dels))?;
        }
        Ok(None)
    }

    fn increment_value(
        &self,
        table: &str,
        row: &[u8],
        column: &[u8],
        amount: i64,
    ) -> Result<i64, Fault> {
        let (f, q) = parse_column(column);
        let t = self.conn.table(table)?;
        let r =
            t.increment(Increment::new(row.to_vec()).add_column(f, q.unwrap_or_default(), amount))?;
        let v = r.cells.first().map(|c| c.value()).unwrap_or_default();
        let bytes: [u8; 8] = v.try_into().map_err(|_| {
            Fault::Io(
                "java.io.IOException: counter value is not 8 bytes".into(),
                false,
            )
        })?;
        Ok(i64::from_be_bytes(bytes))
    }

    pub(super) fn atomic_increment(&self, a: &Struct) -> Outcome {
        let t = table_name(a.bytes(1))?;
        let v = self.increment_value(
            &t,
            a.bytes(2).unwrap_or_default(),
            a.bytes(3).unwrap_or_default(),
            a.i64(4).unwrap_or(0),
        )?;
        Ok(Some(Value::I64(v)))
    }

    fn one_increment(&self, inc: &Struct) -> Result<(), Fault> {
        let (table, row) = (
            inc.bytes(1).unwrap_or_default(),
            inc.bytes(2).unwrap_or_default(),
        );
        if table.is_empty() || row.is_empty() {
            return Err(Fault::App(
                ApplicationErrorKind::InternalError,
                "Must supply a table and a row key; can't increment".into(),
            ));
        }
        let column = inc.bytes(3).unwrap_or_default();
        if parse_column(column).1.is_none() {
            return Err(Fault::Illegal(format!(
                "increment of {:?} names no qualifier",
                String::from_utf8_lossy(column)
            )));
        }
        let t = String::from_utf8_lossy(table).into_owned();
        self.increment_value(&t, row, column, inc.i64(4).unwrap_or(0))?;
        Ok(())
    }

    pub(super) fn increment(&self, a: &Struct) -> Outcome {
        let inc = a
            .strukt(1)
            .ok_or_else(|| Fault::Illegal("an increment is required".into()))?;
        self.one_increment(inc)?;
        Ok(None)
    }

    pub(super) fn increment_rows(&self, a: &Struct) -> Outcome {
        for inc in a.struct_list(1).unwrap_or_default() {
            self.one_increment(inc)?;
        }
        Ok(None)
    }

    pub(super) fn append(&self, a: &Struct) -> Outcome {
        let ap = a
            .strukt(1)
            .ok_or_else(|| Fault::Illegal("an append is required".into()))?;
        let (table, row) = (
            ap.bytes(1).unwrap_or_default(),
            ap.bytes(2).unwrap_or_default(),
        );
        if table.is_empty() || row.is_empty() {
            return Err(Fault::App(
                ApplicationErrorKind::InternalError,
                "Must supply a table and a row key; can't append".into(),
            ));
        }
        let columns = ap.byte_list(3).unwrap_or_default();
        let values = ap.byte_list(4).unwrap_or_default();
        if columns.len() != values.len() {
            return Err(Fault::Illegal(format!(
                "{} columns but {} values",
                columns.len(),
                values.len()
            )));
        }
        let mut app = Append::new(row.to_vec());
        for (c, v) in columns.iter().zip(values) {
            let (f, q) = parse_column(c);
            app = app.add_column(f, q.unwrap_or_default(), v.to_vec());
        }
        let t = self.conn.table(&String::from_utf8_lossy(table))?;
        let r = t.append(app)?;
        Ok(Some(tcells(&r.cells)))
    }

    pub(super) fn check_and_put(&self, a: &Struct) -> Outcome {
        let row = a.bytes(2).unwrap_or_default();
        let m = a
            .strukt(6)
            .ok_or_else(|| Fault::Illegal("a put mutation is required".into()))?;
        let (pf, pq) = parse_column(m.bytes(2).unwrap_or_default());
        let pq = pq.ok_or_else(|| Fault::Illegal("the put names no qualifier".into()))?;
        let put = Put::new(row.to_vec())
            .add_column(pf, pq, m.bytes(3).unwrap_or_default().to_vec())
            .durability(wal(m.bool(4).unwrap_or(true)));
        let (f, q) = parse_column(a.bytes(3).unwrap_or_default());
        let q = q.unwrap_or_default();
        let cond = match a.bytes(5) {
            Some(v) => Condition::equals(f, q, v.to_vec()),
            None => Condition::not_exists(f, q),
        };
        let table = self.table(a)?;
        let r = table.check_and_mutate(&CheckAndMutate::new(row.to_vec(), cond).then(put))?;
        Ok(Some(Value::Bool(r.success)))
    }

    pub(super) fn delete_all(&self, a: &Struct, with_ts: bool) -> Outcome {
        let table = self.table(a)?;
        let ts = if with_ts {
            a.i64(4).unwrap_or(LATEST_TIMESTAMP)
        } else {
            LATEST_TIMESTAMP
        };
        let del = Delete::new(a.bytes(2).unwrap_or_default());
        let del = match parse_column(a.bytes(3).unwrap_or_default()) {
            (f, None) => del.add_family_before(f, ts),
            (f, Some(q)) => del.add_columns_before(f, q, ts),
        };
        table.delete(del)?;
        Ok(None)
    }

    pub(super) fn delete_all_row(&self, a: &Struct, with_ts: bool) -> Outcome {
        let table = self.table(a)?;
        let ts = if with_ts {
            a.i64(3).unwrap_or(LATEST_TIMESTAMP)
        } else {
            LATEST_TIMESTAMP
        };
        table.delete(Delete::new(a.bytes(2).unwrap_or_default()).with_timestamp(ts))?;
        Ok(None)
    }

    fn open(&self, a: &Struct, scan: &Scan, sort_columns: bool) -> Outcome {
        let table = self.table(a)?;
        let scanner = table.scan(scan)?;
        let id = self.scanners.add(OpenScanner {
            scanner,
            sort_columns,
        });
        Ok(Some(Value::I32(id)))
    }

    pub(super) fn scanner_open_with_scan(&self, a: &Struct) -> Outcome {
        let ts = a.strukt(2).cloned().unwrap_or_default();
        let mut scan = Scan::new();
        if let Some(r) = ts.bytes(1) {
            scan = scan.start_row(r);
        }
        if let Some(r) = ts.bytes(2) {
            scan = scan.stop_row(r);
        }
        if let Some(t) = ts.i64(3) {
            scan = scan.time_range(0, t);
        }
        if let Some(cols) = ts.byte_list(4) {
            scan = scan_columns(scan, &cols);
        }
        if let Some(c) = ts.i32(5).filter(|c| *c > 0) {
            scan = scan.caching(c as u32);
        }
        if let Some(f) = ts.bytes(6) {
            scan = scan.filter(parse_filter(f)?);
        }
        if let Some(b) = ts.i32(7).filter(|b| *b > 0) {
            scan = scan.batch(b as u32);
        }
        if let Some(r) = ts.bool(9) {
            scan = scan.reversed(r);
        }
        if let Some(c) = ts.bool(10) {
            scan = scan.cache_blocks(c);
        }
        self.open(a, &scan, ts.bool(8).unwrap_or(false))
    }

    pub(super) fn scanner_open(&self, a: &Struct, form: Open) -> Outcome {
        let start = a.bytes(2).unwrap_or_default();
        let mut scan = Scan::new().start_row(start);
        if let Some(i) = form.stop {
            scan = scan.stop_row(a.bytes(i).unwrap_or_default());
        }
        if form.prefix {
            scan = scan.filter(cellar_api::FilterSpec::WhileMatch(Box::new(
                cellar_api::FilterSpec::Prefix(start.to_vec()),
            )));
        }
        if let Some(cols) = a.byte_list(form.columns) {
            scan = scan_columns(scan, &cols);
        }
        if let Some(i) = form.ts {
            scan = scan.time_range(0, a.i64(i).unwrap_or(LATEST_TIMESTAMP));
        }
        self.open(a, &scan, false)
    }

    pub(super) fn scanner_get(&self, a: &Struct, list: bool) -> Outcome {
        let id = a.i32(1).unwrap_or(-1);
        let n = if list { a.i32(2).unwrap_or(1) } else { 1 };
        let Some(mut open) = self.scanners.take(id) else {
            return Err(Fault::Illegal("scanner ID is invalid".into()));
        };
        let mut out = Vec::new();
        let mut failed = None;
        while out.len() < usize::try_from(n).unwrap_or(0) {
            match open.scanner.next() {
                Some(Ok(r)) => out.push(r),
                Some(Err(e)) => {
                    failed = Some(e);
                    break;
                }
                None => break,
            }
        }
        let sorted = open.sort_columns;
        self.scanners.put_back(id, open);
        if let Some(e) = failed {
            return Err(e.into());
        }
        Ok(Some(rows_value(&out, sorted)))
    }

    pub(super) fn scanner_close(&self, a: &Struct) -> Outcome {
        if self.scanners.close(a.i32(1).unwrap_or(-1)) {
            Ok(None)
        } else {
            Err(Fault::Illegal("scanner ID is invalid".into()))
        }
    }
}
