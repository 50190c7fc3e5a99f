//! AdminService GetLogEntries (and the older GetLargeLogResponses /
//! GetSlowLogResponses): the region server's large-response log as HBase's
//! `SlowLogPayload`s, so HBase's shell (`get_largelog_responses`) and `cellar shell
//! --connect` read it. What HBase keeps in `param` (the request) holds here the row,
//! the request's shape and the fix, as `key=value` parts a client can read back.

use cellar_protocol::pb;
use cellar_region::large_log::LargeResponse;
use cellar_types::to_string_binary;
use prost::Message;

use super::dispatch::{Call, CallError};

/// The Java class names a LogRequest and a LogEntry carry.
pub const REQUEST_CLASS: &str =
    "org.apache.hadoop.hbase.shaded.protobuf.generated.AdminProtos$SlowLogResponseRequest";
pub const RESPONSES_CLASS: &str =
    "org.apache.hadoop.hbase.shaded.protobuf.generated.AdminProtos$SlowLogResponses";

fn large(e: &LargeResponse) -> bool {
    e.kind.contains("responseTooLarge") || e.kind.contains("RowTooBig")
}

fn slow(e: &LargeResponse) -> bool {
    e.kind.contains("responseTooSlow")
}

/// The `param` text of an entry.
pub fn param(e: &LargeResponse) -> String {
    format!(
        "table={}; row={}; cells={}; kind={}; shape={}; fix={}",
        e.table,
        to_string_binary(&e.row),
        e.cells,
        e.kind,
        e.shape,
        e.advice
    )
}

/// One of a request's filters.
type Filter = Box<dyn Fn(&LargeResponse) -> bool>;

/// The entries a request selects, as payloads.
pub fn select(entries: &[LargeResponse], req: &pb::SlowLogResponseRequest) -> pb::SlowLogResponses {
    use pb::slow_log_response_request::{FilterByOperator, LogType};
    let want_large = req.log_type == Some(LogType::LargeLog as i32);
    let and = req.filter_by_operator == Some(FilterByOperator::And as i32);
    let filters: Vec<Filter> = [
        req.table_name.clone().filter(|t| !t.is_empty()).map(|t| {
            Box::new(move |e: &LargeResponse| e.table == t) as Box<dyn Fn(&LargeResponse) -> bool>
        }),
        req.region_name.clone().filter(|r| !r.is_empty()).map(|r| {
            Box::new(move |e: &LargeResponse| e.region == r || r.contains(&e.region))
                as Box<dyn Fn(&LargeResponse) -> bool>
        }),
    ]
    .into_iter()
    .flatten()
    .collect();
    let payloads = entries
        .iter()
        .filter(|e| if want_large { large(e) } else { slow(e) })
        .filter(|e| {
            filters.is_empty()
                || if and {
                    filters.iter().all(|f| f(e))
                } else {
                    filters.iter().any(|f| f(e))
                }
        })
        .take(req.limit.unwrap_or(10) as usize)
        .map(|e| {
            use pb::slow_log_payload::Type;
            let kind = match (large(e), slow(e)) {
                (true, true) => Type::All,
                (true, false) => Type::LargeLog,
                _ => Type::SlowLog,
            };
            pb::SlowLogPayload {
                start_time: e.at - e.millis as i64,
                processing_time: e.millis.min(i32::MAX as u64) as i32,
                queue_time: 0,
                response_size: e.bytes as i64,
                client_address: String::new(),
                server_class: "HRegionServer".into(),
                method_name: e.op.to_string(),
                call_details: format!(
                    "{}(org.apache.hadoop.hbase.shaded.protobuf.generated.ClientProtos${}Request)",
                    e.op, e.op
                ),
                param: Some(param(e)),
                user_name: String::new(),
                region_name: Some(e.region.clone()),
                r#type: kind as i32,
                ..Default::default()
            }
        })
        .collect();
    pb::SlowLogResponses {
        slow_log_payloads: payloads,
    }
}

fn entries(call: &Call<'_>) -> Vec<LargeResponse> {
    call.ctx.db.region_server().large_responses()
}

/// Cellar's log class for hot rows and unread versions.
pub const HOTSPOTS_CLASS: &str = "cellar.Hotspots";

fn hotspots(call: &Call<'_>, req: &pb::CellarHotspotsRequest) -> pb::CellarHotspots {
    let master = call.ctx.db.master();
    let wanted = |t: &str| {
        req.table_name
            .as_deref()
            .is_none_or(|w| w.is_empty() || w == t)
    };
    pb::CellarHotspots {
        hot_rows: crate::hotspots::hot_rows(master)
            .into_iter()
            .filter(|h| wanted(&h.table))
            .map(|h| pb::CellarHotRow {
                table_name: h.table,
                region_name: h.region,
                row: h.row.into(),
                waits: h.contention.waits,
                wait_ms: h.contention.wait_ms,
                timeouts: h.contention.timeouts,
                busy: h.contention.busy,
            })
            .collect(),
        versions: crate::hotspots::version_waste(master)
            .into_iter()
            .filter(|w| wanted(&w.table))
            .map(|w| pb::CellarVersionWaste {
                table_name: w.table,
                family: w.family.into(),
                stored: w.stored,
                asked: w.asked,
                configured: w.configured,
            })
            .collect(),
    }
}

/// GetLogEntries.
pub fn get_log_entries(call: &Call<'_>) -> Result<pb::LogEntry, CallError> {
    let req: pb::LogRequest = call.param("LogRequest")?;
    if req.log_class_name == HOTSPOTS_CLASS {
        let inner = pb::CellarHotspotsRequest::decode(req.log_message.as_ref())
            .map_err(|e| cellar_api::Error::invalid(format!("a bad CellarHotspotsRequest: {e}")))?;
        return Ok(pb::LogEntry {
            log_class_name: HOTSPOTS_CLASS.into(),
            log_message: hotspots(call, &inner).encode_to_vec().into(),
        });
    }
    if req.log_class_name != REQUEST_CLASS {
        return Err(cellar_api::Error::invalid(format!(
            "log class {} is not served (SlowLogResponseRequest, cellar.Hotspots)",
            req.log_class_name
        ))
        .into());
    }
    let inner = pb::SlowLogResponseRequest::decode(req.log_message.as_ref())
        .map_err(|e| cellar_api::Error::invalid(format!("a bad SlowLogResponseRequest: {e}")))?;
    let out = select(&entries(call), &inner);
    Ok(pb::LogEntry {
        log_class_name: RESPONSES_CLASS.into(),
        log_message: out.encode_to_vec().into(),
    })
}

/// GetLargeLogResponses / GetSlowLogResponses (HBase 2.4's calls).
pub fn get_responses(call: &Call<'_>, large: bool) -> Result<pb::SlowLogResponses, CallError> {
    let mut req: pb::SlowLogResponseRequest = call.param("SlowLogResponseRequest")?;
    req.log_type = Some(if large {
        pb::slow_log_response_request::LogType::LargeLog as i32
    } else {
        pb::slow_log_response_request::LogType::SlowLog as i32
    });
    Ok(select(&entries(call), &req))
}
