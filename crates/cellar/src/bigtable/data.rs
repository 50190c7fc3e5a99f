//! The data API: ReadRows (in `read`), MutateRow, MutateRows with a status per entry,
//! CheckAndMutateRow (the predicate is a Bigtable filter over the row), ReadModifyWriteRow
//! (appends and 64-bit big-endian increments in order, returning the new cells),
//! SampleRowKeys (region mid-keys and ends, with the bytes before each) and PingAndWarm.
//! Check-and-mutate and read-modify-write hold a per-row lock of the gateway between
//! their read and their write.

use std::pin::Pin;
use std::sync::Arc;

use cellar_api::Get;
use cellar_bigtable::filter::{filter_row, Cell};
use cellar_bigtable::stubs::bigtable_server::Bigtable;
use cellar_bigtable::v2::read_modify_write_rule::Rule;
use cellar_bigtable::v2::{
    self as v2, mutate_rows_response, CheckAndMutateRowRequest, CheckAndMutateRowResponse,
    MutateRowRequest, MutateRowResponse, MutateRowsRequest, MutateRowsResponse, PingAndWarmRequest,
    PingAndWarmResponse, ReadModifyWriteRowRequest, ReadModifyWriteRowResponse, ReadRowsRequest,
    ReadRowsResponse, SampleRowKeysRequest, SampleRowKeysResponse,
};
use tokio::sync::mpsc;
use tonic::codegen::tokio_stream::wrappers::ReceiverStream;
use tonic::codegen::tokio_stream::Stream;
use tonic::{Request, Response, Status};

use super::mutations::row_mutations;
use super::{bigtable_cells, blocking, micros, read, status, table_status, Shared, TableName};

type Streamed<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

pub struct DataService {
    shared: Arc<Shared>,
}

impl DataService {
    pub(crate) fn new(shared: Arc<Shared>) -> DataService {
        DataService { shared }
    }
}

/// A gRPC status as `google.rpc.Status`, for MutateRows' entries.
fn rpc_status(s: &Status) -> googleapis_status {
    googleapis_status {
        code: s.code() as i32,
        message: s.message().to_string(),
        details: Vec::new(),
    }
}

#[allow(non_camel_case_types)]
type googleapis_status = cellar_bigtable::rpc::Status;

/// Cells as a Bigtable `Row` (families, then columns, then cells).
fn row_of(key: &[u8], cells: &[Cell]) -> v2::Row {
    let mut families: Vec<v2::Family> = Vec::new();
    for c in cells {
        if families.last().is_none_or(|f| f.name != c.family) {
            families.push(v2::Family {
                name: c.family.clone(),
                columns: Vec::new(),
            });
        }
        let Some(f) = families.last_mut() else {
            continue;
        };
        if f.columns
            .last()
            .is_none_or(|col| col.qualifier != c.qualifier)
        {
            f.columns.push(v2::Column {
                qualifier: c.qualifier.clone(),
                cells: Vec::new(),
            });
        }
        if let Some(col) = f.columns.last_mut() {
            col.cells.push(v2::Cell {
                timestamp_micros: c.timestamp_micros,
                value: c.value.clone(),
                labels: c.labels.clone(),
            });
        }
    }
    v2::Row {
        key: key.to_vec(),
        families,
    }
}

/// The rules in order over the row's newest cells, each modified column written once:
/// at the current time, or at its previous cell's when that is later (which the new cell
/// then replaces), as Bigtable does.
fn read_modify_write(
    table: &dyn crate::client::Table,
    row: &[u8],
    rules: &[v2::ReadModifyWriteRule],
) -> Result<v2::Row, Status> {
    let mut get = Get::new(row.to_vec());
    for r in rules {
        get = get.add_column(r.family_name.as_bytes(), &r.column_qualifier);
    }
    let current = table.get(&get).map_err(status)?;
    #[allow(clippy::disallowed_methods)] // the server's time for the new cells
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    // (family, qualifier) -> (timestamp in ms, value if any), in first-touched order.
    type Column = ((String, Vec<u8>), (i64, Option<Vec<u8>>));
    let mut cols: Vec<Column> = Vec::new();
    for r in rules {
        let key = (r.family_name.clone(), r.column_qualifier.clone());
        let pos = match cols.iter().position(|(k, _)| *k == key) {
            Some(p) => p,
            None => {
                let prev = current
                    .cells
                    .iter()
                    .find(|c| c.family() == key.0.as_bytes() && c.qualifier() == key.1.as_slice());
                let entry = match prev {
                    Some(c) => (now_ms.max(c.timestamp()), Some(c.value().to_vec())),
                    None => (now_ms, None),
                };
                cols.push((key, entry));
                cols.len() - 1
            }
        };
        let value = &mut cols[pos].1 .1;
        let next = match (&r.rule, value.take()) {
            (Some(Rule::AppendValue(v)), old) => {
                let mut old = old.unwrap_or_default();
                old.extend_from_slice(v);
                old
            }
            (Some(Rule::IncrementAmount(n)), old) => {
                let old = match old {
                    None => 0,
                    Some(bytes) => {
                        let b: [u8; 8] = bytes.as_slice().try_into().map_err(|_| {
                            Status::invalid_argument(format!(
                                "increment of {}:{} whose value is not a 64-bit big-endian integer",
                                r.family_name,
                                String::from_utf8_lossy(&r.column_qualifier)
                            ))
                        })?;
                        i64::from_be_bytes(b)
                    }
                };
                old.wrapping_add(*n).to_be_bytes().to_vec()
            }
            (None, _) => return Err(Status::invalid_argument("a rule without a kind")),
        };
        *value = Some(next);
    }
    let mut put = cellar_api::Put::new(row.to_vec());
    for ((f, q), (ts, v)) in &cols {
        put = put.add_column_at(f.as_bytes(), q.clone(), *ts, v.clone().unwrap_or_default());
    }
    table.put(put).map_err(status)?;
    let mut cells: Vec<Cell> = cols
        .into_iter()
        .map(|((family, qualifier), (ts, value))| Cell {
            family,
            qualifier,
            timestamp_micros: micros(ts),
            value: value.unwrap_or_default(),
            labels: Vec::new(),
        })
        .collect();
    cells.sort_by(|a, b| {
        (a.family.as_str(), a.qualifier.as_slice())
            .cmp(&(b.family.as_str(), b.qualifier.as_slice()))
    });
    Ok(row_of(row, &cells))
}

#[tonic::async_trait]
impl Bigtable for DataService {
    type ReadRowsStream = Streamed<ReadRowsResponse>;

    async fn read_rows(
        &self,
        req: Request<ReadRowsRequest>,
    ) -> Result<Response<Self::ReadRowsStream>, Status> {
        let req = req.into_inner();
        TableName::parse(&req.table_name)?;
        let (tx, rx) = mpsc::channel(4);
        let conn = self.shared.conn.clone();
        tokio::task::spawn_blocking(move || read::run(conn, req, tx));
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    type SampleRowKeysStream = Streamed<SampleRowKeysResponse>;

    async fn sample_row_keys(
        &self,
        req: Request<SampleRowKeysRequest>,
    ) -> Result<Response<Self::SampleRowKeysStream>, Status> {
        let name = TableName::parse(&req.into_inner().table_name)?;
        let conn = self.shared.conn.clone();
        let t = name.cellar();
        let samples = blocking(move || {
            let mut regions = conn.admin().list_regions(&t).map_err(table_status(&name))?;
            regions.retain(|r| !r.info.offline);
            regions.sort_by(|a, b| a.info.start.cmp(&b.info.start));
            let mut offset = 0i64;
            let mut out = Vec::new();
            for r in &regions {
                let size = (r.store_files_size + r.memstore_size) as i64;
                if let Some(mid) = r.split_point.as_ref().filter(|m| !m.is_empty()) {
                    out.push(SampleRowKeysResponse {
                        row_key: mid.clone(),
                        offset_bytes: offset + size / 2,
                    });
                }
                offset += size;
                out.push(SampleRowKeysResponse {
                    row_key: r.info.end.clone(),
                    offset_bytes: offset,
                });
            }
            if out.last().is_none_or(|s| !s.row_key.is_empty()) {
                out.push(SampleRowKeysResponse {
                    row_key: Vec::new(),
                    offset_bytes: offset,
                });
            }
            Ok(out)
        })
        .await?;
        let stream = tonic::codegen::tokio_stream::iter(samples.into_iter().map(Ok));
        Ok(Response::new(Box::pin(stream)))
    }

    async fn mutate_row(
        &self,
        req: Request<MutateRowRequest>,
    ) -> Result<Response<MutateRowResponse>, Status> {
        let req = req.into_inner();
        let name = TableName::parse(&req.table_name)?;
        let conn = self.shared.conn.clone();
        blocking(move || {
            let st = table_status(&name);
            let table = conn.table(&name.cellar()).map_err(&st)?;
            let rm = row_mutations(table.as_ref(), &req.row_key, &req.mutations)?;
            table.mutate_row(&rm).map_err(&st)?;
            Ok(())
        })
        .await?;
        Ok(Response::new(MutateRowResponse {}))
    }

    type MutateRowsStream = Streamed<MutateRowsResponse>;

    async fn mutate_rows(
        &self,
        req: Request<MutateRowsRequest>,
    ) -> Result<Response<Self::MutateRowsStream>, Status> {
        let req = req.into_inner();
        let name = TableName::parse(&req.table_name)?;
        if req.entries.is_empty() {
            return Err(Status::invalid_argument("No entries provided"));
        }
        let conn = self.shared.conn.clone();
        let entries = blocking(move || {
            let table = conn.table(&name.cellar()).map_err(table_status(&name))?;
            let mut out = Vec::with_capacity(req.entries.len());
            for (i, e) in req.entries.iter().enumerate() {
                let r = row_mutations(table.as_ref(), &e.row_key, &e.mutations)
                    .and_then(|rm| table.mutate_row(&rm).map(|_| ()).map_err(status));
                out.push(mutate_rows_response::Entry {
                    index: i as i64,
                    status: Some(match r {
                        Ok(()) => googleapis_status::default(),
                        Err(s) => rpc_status(&s),
                    }),
                });
            }
            Ok(out)
        })
        .await?;
        let resp = MutateRowsResponse {
            entries,
            rate_limit_info: None,
        };
        let stream = tonic::codegen::tokio_stream::iter(std::iter::once(Ok(resp)));
        Ok(Response::new(Box::pin(stream)))
    }

    async fn check_and_mutate_row(
        &self,
        req: Request<CheckAndMutateRowRequest>,
    ) -> Result<Response<CheckAndMutateRowResponse>, Status> {
        let req = req.into_inner();
        let name = TableName::parse(&req.table_name)?;
        if req.row_key.is_empty() {
            return Err(Status::invalid_argument("Row keys must be non-empty"));
        }
        let t = name.cellar();
        let _row = self.shared.row_lock(&t, &req.row_key).lock().await;
        let conn = self.shared.conn.clone();
        let matched = blocking(move || {
            let table = conn.table(&t).map_err(table_status(&name))?;
            let current = table
                .get(&Get::new(req.row_key.clone()).all_versions())
                .map_err(status)?;
            let cells = bigtable_cells(&current.cells);
            let matched = match &req.predicate_filter {
                None => !cells.is_empty(),
                Some(f) => {
                    let mut never = || 0.0;
                    filter_row(Some(f), &req.row_key, cells, &mut never)
                        .map_err(|e| Status::invalid_argument(e.0))?
                        .is_some_and(|c| !c.is_empty())
                }
            };
            let muts = if matched {
                &req.true_mutations
            } else {
                &req.false_mutations
            };
            if !muts.is_empty() {
                let rm = row_mutations(table.as_ref(), &req.row_key, muts)?;
                table.mutate_row(&rm).map_err(status)?;
            }
            Ok(matched)
        })
        .await?;
        Ok(Response::new(CheckAndMutateRowResponse {
            predicate_matched: matched,
        }))
    }

    async fn ping_and_warm(
        &self,
        req: Request<PingAndWarmRequest>,
    ) -> Result<Response<PingAndWarmResponse>, Status> {
        let name = req.into_inner().name;
        super::parse_instance(&name)?;
        Ok(Response::new(PingAndWarmResponse {}))
    }

    async fn read_modify_write_row(
        &self,
        req: Request<ReadModifyWriteRowRequest>,
    ) -> Result<Response<ReadModifyWriteRowResponse>, Status> {
        let req = req.into_inner();
        let name = TableName::parse(&req.table_name)?;
        if req.row_key.is_empty() {
            return Err(Status::invalid_argument("Row keys must be non-empty"));
        }
        if req.rules.is_empty() {
            return Err(Status::invalid_argument("No rules provided"));
        }
        let t = name.cellar();
        let _row = self.shared.row_lock(&t, &req.row_key).lock().await;
        let conn = self.shared.conn.clone();
        let row = blocking(move || {
            let table = conn.table(&t).map_err(table_status(&name))?;
            read_modify_write(table.as_ref(), &req.row_key, &req.rules)
        })
        .await?;
        Ok(Response::new(ReadModifyWriteRowResponse { row: Some(row) }))
    }
}
