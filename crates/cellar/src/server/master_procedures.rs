//! Table flushes asked of the master — HBase 2.6's `FlushTable` procedure and the
//! older named procedure (`ExecProcedure` / `IsProcedureDone`) — and the
//! schema-alter status older clients wait on. Cellar runs the flush inside the call,
//! and applies an alter to every region before answering it, so both report done at
//! once. A disabled table is not flushed: TableNotEnabledException, as HBase's
//! procedure fails.

use cellar_api::{Error, ErrorKind};
use cellar_protocol::pb;

use super::dispatch::{Call, CallResult, Reply};

/// HBase's `MasterFlushTableProcedureManager.FLUSH_TABLE_PROCEDURE_SIGNATURE`.
const FLUSH_TABLE: &str = "flush-table-proc";

fn unregistered(signature: &str) -> Error {
    Error::invalid(format!("The procedure is not registered: {signature}"))
}

/// Flushes every region of an enabled table.
fn flush(call: &Call<'_>, table: &str) -> Result<(), Error> {
    let (_, enabled) = call.master().describe(table)?;
    if !enabled {
        return Err(Error::new(ErrorKind::TableNotEnabled, table.to_string()).with_table(table));
    }
    call.master().flush_table(table)?;
    Ok(())
}

pub fn flush_table(call: &Call<'_>) -> CallResult {
    let req: pb::FlushTableRequest = call.param("FlushTableRequest")?;
    let name = cellar_protocol::convert::table_name_from_pb(&req.table_name)?.to_string();
    flush(call, &name)?;
    Ok(Reply::new(pb::FlushTableResponse {
        proc_id: Some(call.ctx.proc_id()),
    }))
}

pub fn exec_procedure(call: &Call<'_>) -> CallResult {
    let req: pb::ExecProcedureRequest = call.param("ExecProcedureRequest")?;
    let desc = &req.procedure;
    if desc.signature != FLUSH_TABLE {
        return Err(unregistered(&desc.signature).into());
    }
    flush(call, desc.instance.as_deref().unwrap_or_default())?;
    Ok(Reply::new(pb::ExecProcedureResponse {
        expected_timeout: Some(60_000),
        return_data: None,
    }))
}

pub fn is_procedure_done(call: &Call<'_>) -> CallResult {
    let req: pb::IsProcedureDoneRequest = call.param("IsProcedureDoneRequest")?;
    let signature = req
        .procedure
        .as_ref()
        .map(|p| p.signature.as_str())
        .unwrap_or_default();
    if signature != FLUSH_TABLE {
        return Err(unregistered(signature).into());
    }
    Ok(Reply::new(pb::IsProcedureDoneResponse {
        done: Some(true),
        snapshot: None,
    }))
}

/// HBase's `RunCatalogScan`: the janitor over every table, now; how many parents it
/// deleted.
pub fn run_catalog_scan(call: &Call<'_>) -> CallResult {
    let mut tables: Vec<String> = call
        .master()
        .catalog_entries()
        .into_iter()
        .map(|e| e.info.table)
        .collect();
    tables.dedup();
    let mut cleaned = 0;
    for t in tables {
        cleaned += call.master().janitor(&t)?;
    }
    Ok(Reply::new(pb::RunCatalogScanResponse {
        scan_result: Some(cleaned as i32),
    }))
}

pub fn schema_alter_status(call: &Call<'_>) -> CallResult {
    let req: pb::GetSchemaAlterStatusRequest = call.param("GetSchemaAlterStatusRequest")?;
    let name = cellar_protocol::convert::table_name_from_pb(&req.table_name)?.to_string();
    // Unknown tables fail as HBase's do.
    call.master().describe(&name)?;
    let regions = call
        .master()
        .catalog_entries()
        .into_iter()
        .filter(|e| e.info.table == name && !e.info.offline)
        .count();
    Ok(Reply::new(pb::GetSchemaAlterStatusResponse {
        yet_to_update_regions: Some(0),
        total_regions: Some(regions as u32),
    }))
}
