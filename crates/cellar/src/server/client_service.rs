//! ClientService's Get, Mutate, Multi and ExecService (for MultiRowMutationService's
//! MutateRows): each addresses a region by name, decodes its Gets and mutations (cells
//! inline or from the call's cell block), runs them on the region, and answers with
//! results in the form the connection negotiated (bulk loads: `bulk_load_service`). Increments and Appends carrying a
//! nonce are applied once however often a client retries them.

use std::sync::Arc;

use cellar_api::{CheckAndMutate, Error, ErrorKind, Get, Mutation, RowResult};
use cellar_protocol::cell_block::BlockReader;
use cellar_protocol::convert::{
    condition_from_pb, error_to_pair, get_from_pb, mutation_from_pb, result_to_pb, Nonce,
};
use cellar_protocol::pb;
use cellar_region::Region;
use prost::Message;

use super::dispatch::{unknown_method, Call, CallError, CallResult, Reply};
use super::meta;
use super::regions::Target;

pub fn call(call: &Call<'_>, method: &str) -> CallResult {
    match method {
        "Get" => get(call),
        "Mutate" => mutate(call),
        "Multi" => multi(call),
        "ExecService" => exec_service(call),
        "BulkLoadHFile" | "PrepareBulkLoad" | "CleanupBulkLoad" => {
            super::bulk_load_service::call(call, method)
        }
        _ => Err(unknown_method("ClientService", method)),
    }
}

fn meta_rows(call: &Call<'_>) -> Vec<RowResult> {
    let now = call.ctx.db.region_server().clock().now_millis();
    meta::rows(call.master(), &call.ctx.server_name, now)
}

pub(super) fn region(
    call: &Call<'_>,
    spec: &pb::RegionSpecifier,
) -> Result<Arc<Region>, CallError> {
    match call.ctx.regions.resolve(call.master(), spec)? {
        Target::Region(r, _) => Ok(r),
        Target::Meta => Err(Error::new(
            ErrorKind::Unsupported,
            "hbase:meta is read-only: it is Cellar's catalog",
        )
        .into()),
    }
}

fn run_get(call: &Call<'_>, target: &Target, get: &Get) -> Result<RowResult, Error> {
    match target {
        Target::Meta => Ok(meta::get(meta_rows(call), get)),
        Target::Region(r, _) => Ok(r.get(get)?),
    }
}

fn get(call: &Call<'_>) -> CallResult {
    let req: pb::GetRequest = call.param("GetRequest")?;
    let get = get_from_pb(&req.get)?;
    let target = call.ctx.regions.resolve(call.master(), &req.region)?;
    let result = run_get(call, &target, &get)?;
    let mut cells = Vec::new();
    let result = result_to_pb(&result, call.conn.codec, &mut cells);
    Ok(Reply::with_cells(
        pb::GetResponse {
            result: Some(result),
        },
        cells,
    ))
}

fn nonce(group: Option<u64>, nonce: Option<u64>) -> Option<Nonce> {
    match (group.unwrap_or(0), nonce.unwrap_or(0)) {
        (_, 0) => None,
        (group, nonce) => Some(Nonce { group, nonce }),
    }
}

/// Applies one mutation on its own; Increment and Append results are returned.
fn apply(
    call: &Call<'_>,
    region: &Region,
    m: Mutation,
    nonce: Option<Nonce>,
) -> Result<Option<RowResult>, Error> {
    let once = |f: &dyn Fn() -> Result<RowResult, Error>| -> Result<RowResult, Error> {
        if let Some(n) = nonce {
            if let Some(r) = call.ctx.nonces.done(n) {
                return Ok(r);
            }
            let r = f()?;
            call.ctx.nonces.record(n, &r);
            return Ok(r);
        }
        f()
    };
    Ok(match m {
        Mutation::Put(p) => {
            region.put(p)?;
            None
        }
        Mutation::Delete(d) => {
            region.delete(d)?;
            None
        }
        Mutation::Increment(i) => {
            let rr = i.return_results;
            let r = once(&|| Ok(region.increment(i.clone())?))?;
            Some(if rr { r } else { RowResult::default() })
        }
        Mutation::Append(a) => {
            let rr = a.return_results;
            let r = once(&|| Ok(region.append(a.clone())?))?;
            Some(if rr { r } else { RowResult::default() })
        }
    })
}

fn mutate(call: &Call<'_>) -> CallResult {
    let req: pb::MutateRequest = call.param("MutateRequest")?;
    let mut block = call.cells()?;
    let (m, n) = mutation_from_pb(&req.mutation, block.as_mut())?;
    let region = region(call, &req.region)?;
    let mut cells = Vec::new();
    if let Some(cond) = &req.condition {
        let cam = CheckAndMutate {
            row: cond.row.to_vec(),
            condition: condition_from_pb(cond)?,
            mutations: vec![m],
        };
        let r = region.check_and_mutate_request(&cam)?;
        let result = (!r.result.cells.is_empty())
            .then(|| result_to_pb(&r.result, call.conn.codec, &mut cells));
        return Ok(Reply::with_cells(
            pb::MutateResponse {
                result,
                processed: Some(r.success),
            },
            cells,
        ));
    }
    let result = apply(call, &region, m, nonce(req.nonce_group, n))?;
    Ok(Reply::with_cells(
        pb::MutateResponse {
            result: result.map(|r| result_to_pb(&r, call.conn.codec, &mut cells)),
            processed: Some(true),
        },
        cells,
    ))
}

/// An action of a Multi, decoded before any runs (cells come off the block in order).
enum Action {
    Get(Get),
    Mutate(Mutation, Option<u64>),
    Failed(Error),
}

fn decode_actions(ra: &pb::RegionAction, block: &mut Option<BlockReader>) -> Vec<(u32, Action)> {
    ra.action
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let index = a.index.unwrap_or(i as u32);
            let action = if let Some(g) = &a.get {
                get_from_pb(g)
                    .map(Action::Get)
                    .unwrap_or_else(|e| Action::Failed(e.into()))
            } else if let Some(m) = &a.mutation {
                match mutation_from_pb(m, block.as_mut()) {
                    Ok((m, n)) => Action::Mutate(m, n),
                    Err(e) => Action::Failed(e.into()),
                }
            } else if a.service_call.is_some() {
                Action::Failed(Error::new(
                    ErrorKind::Unsupported,
                    "coprocessor calls inside Multi are not supported",
                ))
            } else {
                Action::Failed(Error::invalid(
                    "an action with neither a Get nor a mutation",
                ))
            };
            (index, action)
        })
        .collect()
}

fn failed_region(e: &Error) -> pb::RegionActionResult {
    pb::RegionActionResult {
        exception: Some(error_to_pair(e)),
        ..Default::default()
    }
}

fn multi(call: &Call<'_>) -> CallResult {
    let req: pb::MultiRequest = call.param("MultiRequest")?;
    let mut block = call.cells()?;
    let decoded: Vec<Vec<(u32, Action)>> = req
        .region_action
        .iter()
        .map(|ra| decode_actions(ra, &mut block))
        .collect();
    let mut cells = Vec::new();
    let mut results = Vec::with_capacity(decoded.len());
    let mut processed = None;
    for (ra, actions) in req.region_action.iter().zip(decoded) {
        let target = match call.ctx.regions.resolve(call.master(), &ra.region) {
            Ok(t) => t,
            Err(e) => {
                results.push(failed_region(&e));
                continue;
            }
        };
        let condition = ra.condition.as_ref().or(req.condition.as_ref());
        if ra.atomic.unwrap_or(false) || condition.is_some() {
            let r = match &target {
                Target::Region(region, _) => atomic(call, region, condition, actions, &mut cells),
                Target::Meta => Err(Error::new(
                    ErrorKind::Unsupported,
                    "hbase:meta is read-only",
                )),
            };
            match r {
                Ok((res, ok)) => {
                    if condition.is_some() {
                        processed = Some(ok);
                    }
                    results.push(res);
                }
                Err(e) => results.push(failed_region(&e)),
            }
            continue;
        }
        let mut out = pb::RegionActionResult::default();
        for (index, action) in actions {
            let r: Result<Option<RowResult>, Error> = match (action, &target) {
                (Action::Failed(e), _) => Err(e),
                (Action::Get(g), t) => run_get(call, t, &g).map(Some),
                (Action::Mutate(m, n), Target::Region(region, _)) => {
                    apply(call, region, m, nonce(req.nonce_group, n))
                        .map(|r| r.or_else(|| Some(RowResult::default())))
                }
                (Action::Mutate(..), Target::Meta) => Err(Error::new(
                    ErrorKind::Unsupported,
                    "hbase:meta is read-only",
                )),
            };
            out.result_or_exception.push(match r {
                Ok(r) => pb::ResultOrException {
                    index: Some(index),
                    result: r.map(|r| result_to_pb(&r, call.conn.codec, &mut cells)),
                    ..Default::default()
                },
                Err(e) => pb::ResultOrException {
                    index: Some(index),
                    exception: Some(error_to_pair(&e)),
                    ..Default::default()
                },
            });
        }
        results.push(out);
    }
    Ok(Reply::with_cells(
        pb::MultiResponse {
            region_action_result: results,
            processed,
            region_statistics: None,
        },
        cells,
    ))
}

/// An atomic region action: RowMutations (one row), several rows of one region
/// (MultiRowMutation through Multi), or a checkAndMutate of a row's mutations.
fn atomic(
    call: &Call<'_>,
    region: &Region,
    condition: Option<&pb::Condition>,
    actions: Vec<(u32, Action)>,
    cells: &mut Vec<u8>,
) -> Result<(pb::RegionActionResult, bool), Error> {
    let mut indexes = Vec::new();
    let mut muts = Vec::new();
    for (i, a) in actions {
        match a {
            Action::Mutate(m, _) => {
                indexes.push(i);
                muts.push(m);
            }
            Action::Get(_) => return Err(Error::invalid("a Get inside an atomic region action")),
            Action::Failed(e) => return Err(e),
        }
    }
    let Some(first) = muts.first() else {
        return Ok((pb::RegionActionResult::default(), true));
    };
    let row = first.row().to_vec();
    let (result, ok) = if let Some(c) = condition {
        let cam = CheckAndMutate {
            row: c.row.to_vec(),
            condition: condition_from_pb(c)?,
            mutations: muts.clone(),
        };
        let r = region.check_and_mutate_request(&cam)?;
        (r.result, r.success)
    } else if muts.iter().all(|m| m.row() == row.as_slice()) {
        (region.mutate_row(&row, &muts)?, true)
    } else {
        region.mutate_rows(&muts)?;
        (RowResult::default(), true)
    };
    let mut out = pb::RegionActionResult {
        processed: condition.map(|_| ok),
        ..Default::default()
    };
    for (i, m) in indexes.iter().zip(&muts) {
        let r = match m {
            Mutation::Increment(_) | Mutation::Append(_) => {
                let mine: Vec<_> = result
                    .cells
                    .iter()
                    .filter(|c| mutation_touches(m, c.family(), c.qualifier()))
                    .cloned()
                    .collect();
                RowResult {
                    row: row.clone(),
                    cells: mine,
                    ..RowResult::default()
                }
            }
            _ => RowResult::default(),
        };
        out.result_or_exception.push(pb::ResultOrException {
            index: Some(*i),
            result: Some(result_to_pb(&r, call.conn.codec, cells)),
            ..Default::default()
        });
    }
    Ok((out, ok))
}

fn mutation_touches(m: &Mutation, family: &[u8], qualifier: &[u8]) -> bool {
    match m {
        Mutation::Increment(i) => i
            .columns
            .iter()
            .any(|(f, q, _)| f == family && q == qualifier),
        Mutation::Append(a) => a
            .columns
            .iter()
            .any(|(f, q, _)| f == family && q == qualifier),
        _ => false,
    }
}

const UNKNOWN_PROTOCOL: &str = "org.apache.hadoop.hbase.exceptions.UnknownProtocolException";

fn exec_service(call: &Call<'_>) -> CallResult {
    let req: pb::CoprocessorServiceRequest = call.param("CoprocessorServiceRequest")?;
    let svc = req.call.service_name.rsplit('.').next().unwrap_or_default();
    if svc != cellar_protocol::service::MULTI_ROW_MUTATION || req.call.method_name != "MutateRows" {
        return Err(CallError::with_class(
            Error::new(
                ErrorKind::Unsupported,
                format!(
                    "No registered coprocessor service found for {}.{}",
                    req.call.service_name, req.call.method_name
                ),
            ),
            UNKNOWN_PROTOCOL,
            true,
        ));
    }
    let inner = pb::MutateRowsRequest::decode(req.call.request.clone())
        .map_err(|e| Error::invalid(format!("cannot decode MutateRowsRequest: {e}")))?;
    let conditions = inner
        .condition
        .iter()
        .map(|c| Ok((c.row.to_vec(), condition_from_pb(c)?)))
        .collect::<Result<Vec<_>, cellar_protocol::ProtocolError>>()?;
    let muts = inner
        .mutation_request
        .iter()
        .map(|m| mutation_from_pb(m, None).map(|(m, _)| m))
        .collect::<Result<Vec<_>, _>>()?;
    let region = region(call, &req.region)?;
    let processed = region.mutate_rows_if(&conditions, &muts)?;
    Ok(Reply::new(pb::CoprocessorServiceResponse {
        region: req.region.clone(),
        value: pb::NameBytesPair {
            name: "hbase.pb.MutateRowsResponse".into(),
            value: Some(
                pb::MutateRowsResponse {
                    processed: Some(processed),
                }
                .encode_to_vec()
                .into(),
            ),
        },
    }))
}
