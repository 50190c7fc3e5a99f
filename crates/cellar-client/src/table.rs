//! Data operations on one table: each finds the region holding its row, calls that
//! region's server, and on a moved or closed region drops the cached location and
//! tries again; transient failures back off (`hbase.client.pause`, HBase's schedule)
//! for `hbase.client.retries.number` attempts; anything else fails at once. Cells over
//! `hbase.client.keyvalue.maxsize` are refused before anything is sent.

use std::collections::BTreeMap;

use bytes::Bytes;
use cellar_api::{
    Append, CheckAndMutate, CheckAndMutateResult, Delete, Error, ErrorKind, Get, Increment,
    Mutation, Put, Result, Retry, RowMutations, RowResult, Scan,
};
use cellar_protocol::cell_block::BlockReader;
use cellar_protocol::convert::{
    condition_to_pb, error_from_pair, get_to_pb, mutation_cells, mutation_to_pb,
    mutation_to_pb_block, result_from_pb,
};
use cellar_protocol::{pb, service};
use prost::Message;

use crate::connection::{Connection, RegionLocation};
use crate::scanner::ResultScanner;

/// What a Mutate call answered.
struct Outcome {
    processed: bool,
    result: RowResult,
}

/// A table of a connection.
#[derive(Clone)]
pub struct Table {
    conn: Connection,
    name: String,
}

impl Table {
    pub(crate) fn new(conn: Connection, name: &str) -> Table {
        Table {
            conn,
            name: crate::connection::normalize(name),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Runs `f` against the region holding `row`, relocating and retrying as HBase's
    /// client does.
    pub(crate) async fn on_region<T, F, Fut>(&self, row: &[u8], f: F) -> Result<T>
    where
        F: Fn(RegionLocation) -> Fut,
        Fut: std::future::Future<Output = Result<T>>,
    {
        let cfg = &self.conn.inner.cfg;
        let mut reload = false;
        let mut attempt = 0;
        let named = |e| crate::connection::named(e, &self.name);
        loop {
            let r = match self.conn.locate(&self.name, row, reload).await {
                Ok(loc) => f(loc).await,
                Err(e) => Err(e),
            };
            match r.map_err(named) {
                Ok(v) => return Ok(v),
                Err(e) if attempt < cfg.retries && e.retry() != Retry::Never => {
                    if e.retry() == Retry::Relocate || e.kind() == ErrorKind::Io {
                        self.conn.invalidate(&self.name, Some(row));
                        reload = true;
                    }
                    if e.kind() == ErrorKind::NotServingRegion {
                        if let Some(disabled) = self.conn.disabled_error(&self.name).await {
                            return Err(disabled);
                        }
                    }
                    // A moved region is retried at once the first time, as HBase does.
                    if attempt > 0 || e.retry() != Retry::Relocate {
                        tokio::time::sleep(cfg.backoff(attempt)).await;
                    }
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    async fn client_call<Q: Message, R: Message + Default>(
        &self,
        loc: &RegionLocation,
        method: &str,
        req: &Q,
        cells: &[u8],
    ) -> Result<(R, Option<BlockReader>)> {
        let rpc = self.conn.rpc(&loc.server, service::CLIENT).await?;
        let (r, block) = rpc
            .call(method, req, cells, self.conn.inner.cfg.rpc_timeout)
            .await?;
        let reader = match (rpc.codec(), block.is_empty()) {
            (Some(c), false) => Some(BlockReader::new(c, block)),
            _ => None,
        };
        Ok((r, reader))
    }

    fn check_size(&self, m: &Mutation) -> Result<()> {
        let max = self.conn.inner.cfg.keyvalue_max_size;
        if max <= 0 {
            return Ok(());
        }
        for c in mutation_cells(m)? {
            let size = c.serialized_size(false) as i64;
            if size > max {
                return Err(Error::invalid(format!(
                    "KeyValue size too large: {size} > {max}"
                )));
            }
        }
        Ok(())
    }

    /// Encodes a mutation for `loc`'s connection: cells in the block when it has a codec.
    fn encode(
        &self,
        m: &Mutation,
        nonce: Option<u64>,
        block: &mut Vec<u8>,
    ) -> Result<pb::MutationProto> {
        match self.conn.inner.cfg.cell_blocks {
            true => Ok(mutation_to_pb_block(
                m,
                nonce,
                cellar_protocol::cell_block::Codec::KeyValue,
                block,
            )?),
            false => Ok(mutation_to_pb(m, nonce)),
        }
    }

    fn nonce_for(&self, m: &Mutation) -> Option<u64> {
        matches!(m, Mutation::Increment(_) | Mutation::Append(_)).then(|| self.conn.next_nonce())
    }

    pub async fn get(&self, get: &Get) -> Result<RowResult> {
        let req_get = get_to_pb(get);
        self.on_region(&get.row, |loc| {
            let req_get = req_get.clone();
            async move {
                let req = pb::GetRequest {
                    region: loc.specifier(),
                    get: req_get,
                };
                let (resp, mut block): (pb::GetResponse, _) =
                    self.client_call(&loc, "Get", &req, &[]).await?;
                match resp.result {
                    Some(r) => Ok(result_from_pb(&r, block.as_mut())?),
                    None => Ok(RowResult::default()),
                }
            }
        })
        .await
    }

    /// Whether the row has a cell the Get selects (`existence_only`).
    pub async fn exists(&self, get: &Get) -> Result<bool> {
        let mut g = get.clone();
        g.check_existence_only = true;
        Ok(self.get(&g).await?.exists.unwrap_or(false))
    }

    async fn mutate(&self, m: Mutation, condition: Option<pb::Condition>) -> Result<Outcome> {
        self.check_size(&m)?;
        let nonce = self.nonce_for(&m);
        let row = m.row().to_vec();
        self.on_region(&row, |loc| {
            let m = &m;
            let condition = condition.clone();
            async move {
                let mut cells = Vec::new();
                let req = pb::MutateRequest {
                    region: loc.specifier(),
                    mutation: self.encode(m, nonce, &mut cells)?,
                    condition,
                    nonce_group: nonce.map(|_| self.conn.inner.nonce_group),
                };
                let (resp, mut block): (pb::MutateResponse, _) =
                    self.client_call(&loc, "Mutate", &req, &cells).await?;
                let result = match &resp.result {
                    Some(r) => result_from_pb(r, block.as_mut())?,
                    None => RowResult::default(),
                };
                Ok(Outcome {
                    processed: resp.processed.unwrap_or(true),
                    result,
                })
            }
        })
        .await
    }

    pub async fn put(&self, put: Put) -> Result<()> {
        self.mutate(Mutation::Put(put), None).await.map(|_| ())
    }

    pub async fn delete(&self, delete: Delete) -> Result<()> {
        self.mutate(Mutation::Delete(delete), None)
            .await
            .map(|_| ())
    }

    pub async fn increment(&self, inc: Increment) -> Result<RowResult> {
        Ok(self.mutate(Mutation::Increment(inc), None).await?.result)
    }

    pub async fn append(&self, app: Append) -> Result<RowResult> {
        Ok(self.mutate(Mutation::Append(app), None).await?.result)
    }

    /// HBase 2.4's `checkAndMutate(CheckAndMutate)`.
    pub async fn check_and_mutate(&self, cam: &CheckAndMutate) -> Result<CheckAndMutateResult> {
        let cond = condition_to_pb(&cam.row, &cam.condition);
        if let [only] = cam.mutations.as_slice() {
            let r = self.mutate(only.clone(), Some(cond)).await?;
            return Ok(CheckAndMutateResult {
                success: r.processed,
                result: r.result,
            });
        }
        let (processed, result) = self.atomic(&cam.row, &cam.mutations, Some(cond)).await?;
        Ok(CheckAndMutateResult {
            success: processed,
            result,
        })
    }

    /// Several mutations of one row, atomically (`mutateRow(RowMutations)`).
    pub async fn mutate_row(&self, rm: &RowMutations) -> Result<RowResult> {
        Ok(self.atomic(&rm.row, &rm.mutations, None).await?.1)
    }

    /// An atomic region action: one RegionAction with `atomic` set (and a condition).
    async fn atomic(
        &self,
        row: &[u8],
        muts: &[Mutation],
        condition: Option<pb::Condition>,
    ) -> Result<(bool, RowResult)> {
        for m in muts {
            self.check_size(m)?;
        }
        self.on_region(row, |loc| {
            let condition = condition.clone();
            async move {
                let mut cells = Vec::new();
                let mut actions = Vec::new();
                for (i, m) in muts.iter().enumerate() {
                    actions.push(pb::Action {
                        index: Some(i as u32),
                        mutation: Some(self.encode(m, None, &mut cells)?),
                        ..Default::default()
                    });
                }
                let req = pb::MultiRequest {
                    region_action: vec![pb::RegionAction {
                        region: loc.specifier(),
                        atomic: Some(true),
                        action: actions,
                        condition,
                    }],
                    ..Default::default()
                };
                let (resp, mut block): (pb::MultiResponse, _) =
                    self.client_call(&loc, "Multi", &req, &cells).await?;
                let rar = resp
                    .region_action_result
                    .first()
                    .ok_or_else(|| Error::new(ErrorKind::Io, "a Multi response without results"))?;
                if let Some(e) = &rar.exception {
                    return Err(error_from_pair(e));
                }
                let mut merged = RowResult::default();
                for roe in &rar.result_or_exception {
                    if let Some(e) = &roe.exception {
                        return Err(error_from_pair(e));
                    }
                    if let Some(r) = &roe.result {
                        let r = result_from_pb(r, block.as_mut())?;
                        if merged.row.is_empty() {
                            merged.row = r.row.clone();
                        }
                        merged.cells.extend(r.cells);
                    }
                }
                merged.cells.sort();
                Ok((rar.processed.or(resp.processed).unwrap_or(true), merged))
            }
        })
        .await
    }

    /// Mutations of several rows of one region, atomically, through HBase's
    /// MultiRowMutationService (`MutateRows`).
    pub async fn mutate_rows(&self, mutations: &[Mutation]) -> Result<()> {
        self.mutate_rows_if(&[], mutations).await.map(|_| ())
    }

    /// [`Table::mutate_rows`] applied only if every condition (each on a row of the
    /// same region) holds, atomically (HBase 2.4's conditional MutateRows). Returns
    /// whether the mutations were applied.
    pub async fn mutate_rows_if(
        &self,
        conditions: &[(Vec<u8>, cellar_api::Condition)],
        mutations: &[Mutation],
    ) -> Result<bool> {
        let Some(first) = mutations.first() else {
            return Ok(true);
        };
        for m in mutations {
            self.check_size(m)?;
        }
        let inner = pb::MutateRowsRequest {
            mutation_request: mutations.iter().map(|m| mutation_to_pb(m, None)).collect(),
            condition: conditions
                .iter()
                .map(|(row, c)| condition_to_pb(row, c))
                .collect(),
            ..Default::default()
        };
        let row = first.row().to_vec();
        self.on_region(&row, |loc| {
            let inner = inner.clone();
            let row = row.clone();
            async move {
                let req = pb::CoprocessorServiceRequest {
                    region: loc.specifier(),
                    call: pb::CoprocessorServiceCall {
                        row: Bytes::from(row),
                        // HBase names its own services without the package
                        // (CoprocessorRpcUtils.getServiceName).
                        service_name: "MultiRowMutationService".into(),
                        method_name: "MutateRows".into(),
                        request: inner.encode_to_vec().into(),
                    },
                };
                let (resp, _): (pb::CoprocessorServiceResponse, _) =
                    self.client_call(&loc, "ExecService", &req, &[]).await?;
                let out = pb::MutateRowsResponse::decode(resp.value.value.unwrap_or_default())
                    .map_err(|e| {
                        Error::new(ErrorKind::Io, format!("bad MutateRowsResponse: {e}"))
                    })?;
                Ok(out.processed.unwrap_or(true))
            }
        })
        .await
    }

    /// Each mutation on its own, grouped into one Multi per region; one result per
    /// mutation, in order. Failures that a retry can fix are retried for the
    /// mutations they hit.
    pub async fn batch(&self, mutations: &[Mutation]) -> Vec<Result<RowResult>> {
        let mut out: Vec<Option<Result<RowResult>>> = vec![None; mutations.len()];
        let nonces: Vec<Option<u64>> = mutations.iter().map(|m| self.nonce_for(m)).collect();
        for (i, m) in mutations.iter().enumerate() {
            if let Err(e) = self.check_size(m) {
                out[i] = Some(Err(e));
            }
        }
        let cfg = &self.conn.inner.cfg;
        let mut attempt = 0;
        loop {
            let todo: Vec<usize> = (0..mutations.len()).filter(|&i| out[i].is_none()).collect();
            if todo.is_empty() {
                break;
            }
            let mut groups: BTreeMap<Vec<u8>, (RegionLocation, Vec<usize>)> = BTreeMap::new();
            let mut retry = Vec::new();
            for i in todo {
                match self
                    .conn
                    .locate(&self.name, mutations[i].row(), attempt > 0)
                    .await
                {
                    Ok(loc) => groups
                        .entry(loc.name.clone())
                        .or_insert((loc, Vec::new()))
                        .1
                        .push(i),
                    Err(e) => retry.push((i, e)),
                }
            }
            for (_, (loc, idx)) in groups {
                match self.multi(&loc, mutations, &nonces, &idx).await {
                    Ok(results) => {
                        for (i, r) in idx.iter().zip(results) {
                            match r {
                                Err(e) if e.retry() != Retry::Never => retry.push((*i, e)),
                                r => out[*i] = Some(r),
                            }
                        }
                    }
                    Err(e) => idx.iter().for_each(|&i| retry.push((i, e.clone()))),
                }
            }
            if retry.is_empty() {
                break;
            }
            if retry
                .iter()
                .any(|(_, e)| e.kind() == ErrorKind::NotServingRegion)
            {
                if let Some(disabled) = self.conn.disabled_error(&self.name).await {
                    for (i, _) in retry {
                        out[i] = Some(Err(disabled.clone()));
                    }
                    break;
                }
            }
            if attempt >= cfg.retries {
                for (i, e) in retry {
                    out[i] = Some(Err(e));
                }
                break;
            }
            for (i, e) in &retry {
                if e.retry() == Retry::Never {
                    out[*i] = Some(Err(e.clone()));
                } else {
                    self.conn.invalidate(&self.name, Some(mutations[*i].row()));
                }
            }
            tokio::time::sleep(cfg.backoff(attempt)).await;
            attempt += 1;
        }
        out.into_iter()
            .map(|r| r.unwrap_or_else(|| Err(Error::new(ErrorKind::Io, "no result"))))
            .collect()
    }

    async fn multi(
        &self,
        loc: &RegionLocation,
        mutations: &[Mutation],
        nonces: &[Option<u64>],
        idx: &[usize],
    ) -> Result<Vec<Result<RowResult>>> {
        let mut cells = Vec::new();
        let mut actions = Vec::new();
        for &i in idx {
            actions.push(pb::Action {
                index: Some(i as u32),
                mutation: Some(self.encode(&mutations[i], nonces[i], &mut cells)?),
                ..Default::default()
            });
        }
        let req = pb::MultiRequest {
            region_action: vec![pb::RegionAction {
                region: loc.specifier(),
                atomic: None,
                action: actions,
                condition: None,
            }],
            nonce_group: Some(self.conn.inner.nonce_group),
            condition: None,
        };
        let (resp, mut block): (pb::MultiResponse, _) =
            self.client_call(loc, "Multi", &req, &cells).await?;
        let rar = resp
            .region_action_result
            .into_iter()
            .next()
            .ok_or_else(|| Error::new(ErrorKind::Io, "a Multi response without results"))?;
        if let Some(e) = &rar.exception {
            return Err(error_from_pair(e));
        }
        let mut by_index: BTreeMap<u32, Result<RowResult>> = BTreeMap::new();
        for roe in &rar.result_or_exception {
            let i = roe.index.unwrap_or(0);
            let r = match (&roe.exception, &roe.result) {
                (Some(e), _) => Err(error_from_pair(e)),
                (None, Some(r)) => result_from_pb(r, block.as_mut()).map_err(Error::from),
                (None, None) => Ok(RowResult::default()),
            };
            by_index.insert(i, r);
        }
        Ok(idx
            .iter()
            .map(|&i| {
                by_index
                    .remove(&(i as u32))
                    .unwrap_or_else(|| Err(Error::new(ErrorKind::Io, "no result for an action")))
            })
            .collect())
    }

    /// A scan across the table's regions, as a stream of Results.
    pub fn scan(&self, scan: &Scan) -> ResultScanner {
        ResultScanner::new(self.clone(), scan.clone())
    }
}
