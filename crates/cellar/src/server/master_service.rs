//! MasterService: table and namespace DDL, descriptors and names, table state, region
//! split and merge, the balancer switches (one server: nothing to balance) and the
//! cluster status. DDL runs to completion inside the call; its response carries a
//! procedure id that GetProcedureResult then reports FINISHED, so clients' async DDL
//! futures complete. A failed DDL fails the call itself, as HBase's prepare step does.

use std::sync::atomic::Ordering;

use cellar_api::{Error, ErrorKind, TableName};
use cellar_protocol::convert::{
    family_from_pb, namespace_to_pb, region_info_from_pb, server_name_to_pb, table_from_pb,
    table_name_from_pb, table_name_to_pb, table_to_pb,
};
use cellar_protocol::pb;

use super::dispatch::{unknown_method, Call, CallResult, Reply};
use super::regions::Target;
use crate::client::Admin;

fn proc(call: &Call<'_>) -> Reply {
    Reply::new(pb::ProcedureResponse {
        proc_id: Some(call.ctx.proc_id()),
    })
}

/// The encoded name a region specifier names (a region name ends `.ENCODED.`).
fn encoded_of(spec: &pb::RegionSpecifier) -> String {
    let text = String::from_utf8_lossy(&spec.value).into_owned();
    match text.strip_suffix('.').and_then(|t| t.rsplit_once('.')) {
        Some((_, encoded)) => encoded.to_string(),
        None => text,
    }
}

fn admin(call: &Call<'_>) -> Box<dyn Admin> {
    crate::client::Connection::admin(call.ctx.db.connection())
}

fn name_of(t: &pb::TableName) -> Result<String, Error> {
    Ok(table_name_from_pb(t)?.to_string())
}

fn is_system(name: &str) -> bool {
    TableName::parse(name).is_ok_and(|t| t.namespace() == cellar_api::SYSTEM_NAMESPACE)
}

pub fn call(call: &Call<'_>, method: &str) -> CallResult {
    let a = admin(call);
    // Master.proto names a few methods in lower camel case (truncateTable,
    // getProcedureResult); match them all in upper camel case.
    let mut chars = method.chars();
    let upper: String = chars
        .next()
        .map(|c| c.to_ascii_uppercase())
        .into_iter()
        .chain(chars)
        .collect();
    match upper.as_str() {
        "IsMasterRunning" => Ok(Reply::new(pb::IsMasterRunningResponse {
            is_master_running: true,
        })),
        "CreateTable" => {
            let req: pb::CreateTableRequest = call.param("CreateTableRequest")?;
            let desc = table_from_pb(&req.table_schema)?;
            let keys = req.split_keys.iter().map(|k| k.to_vec()).collect();
            a.create_table(desc, keys)?;
            Ok(proc(call))
        }
        "DeleteTable" => {
            let req: pb::TableNameRequest = call.param("DeleteTableRequest")?;
            a.delete_table(&name_of(&req.table_name)?)?;
            Ok(proc(call))
        }
        "EnableTable" => {
            let req: pb::TableNameRequest = call.param("EnableTableRequest")?;
            a.enable_table(&name_of(&req.table_name)?)?;
            Ok(proc(call))
        }
        "DisableTable" => {
            let req: pb::TableNameRequest = call.param("DisableTableRequest")?;
            a.disable_table(&name_of(&req.table_name)?)?;
            Ok(proc(call))
        }
        "TruncateTable" => {
            let req: pb::TruncateTableRequest = call.param("TruncateTableRequest")?;
            truncate(
                call,
                a.as_ref(),
                &name_of(&req.table_name)?,
                req.preserve_splits.unwrap_or(false),
            )?;
            Ok(proc(call))
        }
        "ModifyTable" => {
            let req: pb::ModifyTableRequest = call.param("ModifyTableRequest")?;
            let name = name_of(&req.table_name)?;
            let mut desc = table_from_pb(&req.table_schema)?;
            desc.name = name;
            a.modify_table(desc)?;
            Ok(proc(call))
        }
        "AddColumn" | "ModifyColumn" => {
            let req: pb::ColumnRequest = call.param("ColumnRequest")?;
            let name = name_of(&req.table_name)?;
            let fam = family_from_pb(&req.column_families)?;
            let (mut desc, _) = a.describe(&name)?;
            let existing = desc.families.iter().position(|f| f.name == fam.name);
            match (upper.as_str(), existing) {
                ("AddColumn", Some(_)) => {
                    return Err(Error::invalid(format!(
                        "Column family '{}' in table '{name}' already exists so cannot be added",
                        String::from_utf8_lossy(&fam.name)
                    ))
                    .into())
                }
                ("ModifyColumn", None) => {
                    return Err(Error::new(
                        ErrorKind::NoSuchColumnFamily,
                        format!(
                            "Column family '{}' does not exist in table '{name}'",
                            String::from_utf8_lossy(&fam.name)
                        ),
                    )
                    .into())
                }
                (_, Some(i)) => desc.families[i] = fam,
                (_, None) => desc.families.push(fam),
            }
            a.modify_table(desc)?;
            Ok(proc(call))
        }
        "DeleteColumn" => {
            let req: pb::DeleteColumnRequest = call.param("DeleteColumnRequest")?;
            let name = name_of(&req.table_name)?;
            let (mut desc, _) = a.describe(&name)?;
            let before = desc.families.len();
            desc.families
                .retain(|f| f.name.as_slice() != &req.column_name[..]);
            if desc.families.len() == before {
                return Err(Error::new(
                    ErrorKind::NoSuchColumnFamily,
                    format!(
                        "Family '{}' does not exist in table '{name}'",
                        String::from_utf8_lossy(&req.column_name)
                    ),
                )
                .into());
            }
            a.modify_table(desc)?;
            Ok(proc(call))
        }
        "GetTableDescriptors" => {
            let req: pb::GetTableDescriptorsRequest = call.param("GetTableDescriptorsRequest")?;
            let names = if req.table_names.is_empty() {
                listed(
                    a.as_ref(),
                    req.regex.as_deref(),
                    req.namespace.as_deref(),
                    req.include_sys_tables.unwrap_or(false),
                )?
            } else {
                req.table_names
                    .iter()
                    .map(name_of)
                    .collect::<Result<Vec<_>, _>>()?
            };
            let mut out = Vec::new();
            for n in names {
                match a.describe(&n) {
                    Ok((d, _)) => out.push(table_to_pb(&d)),
                    Err(e) if e.kind() == ErrorKind::TableNotFound => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Ok(Reply::new(pb::GetTableDescriptorsResponse {
                table_schema: out,
            }))
        }
        "GetTableNames" => {
            let req: pb::GetTableNamesRequest = call.param("GetTableNamesRequest")?;
            let names = listed(
                a.as_ref(),
                req.regex.as_deref(),
                req.namespace.as_deref(),
                req.include_sys_tables.unwrap_or(false),
            )?;
            Ok(Reply::new(pb::GetTableNamesResponse {
                table_names: names.iter().map(|n| table_name_to_pb(n)).collect(),
            }))
        }
        "GetTableState" => {
            let req: pb::GetTableStateRequest = call.param("GetTableStateRequest")?;
            let enabled = a.is_table_enabled(&name_of(&req.table_name)?)?;
            Ok(Reply::new(pb::GetTableStateResponse {
                table_state: pb::TableState {
                    state: if enabled {
                        pb::table_state::State::Enabled
                    } else {
                        pb::table_state::State::Disabled
                    } as i32,
                },
            }))
        }
        "ListTableDescriptorsByNamespace" => {
            let req: pb::NamespaceNameRequest =
                call.param("ListTableDescriptorsByNamespaceRequest")?;
            let mut out = Vec::new();
            for n in a.list_namespace_tables(&req.namespace_name)? {
                out.push(table_to_pb(&a.describe(&n)?.0));
            }
            Ok(Reply::new(pb::ListTableDescriptorsByNamespaceResponse {
                table_schema: out,
            }))
        }
        "ListTableNamesByNamespace" => {
            let req: pb::NamespaceNameRequest = call.param("ListTableNamesByNamespaceRequest")?;
            let names = a.list_namespace_tables(&req.namespace_name)?;
            Ok(Reply::new(pb::ListTableNamesByNamespaceResponse {
                table_name: names.iter().map(|n| table_name_to_pb(n)).collect(),
            }))
        }
        "CreateNamespace" => {
            let req: pb::NamespaceRequest = call.param("CreateNamespaceRequest")?;
            a.create_namespace(&String::from_utf8_lossy(&req.namespace_descriptor.name))?;
            Ok(proc(call))
        }
        "ModifyNamespace" => {
            let req: pb::NamespaceRequest = call.param("ModifyNamespaceRequest")?;
            let ns = String::from_utf8_lossy(&req.namespace_descriptor.name).into_owned();
            namespace_must_exist(a.as_ref(), &ns)?;
            if !req.namespace_descriptor.configuration.is_empty() {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    "namespace properties are not supported",
                )
                .into());
            }
            Ok(proc(call))
        }
        "DeleteNamespace" => {
            let req: pb::NamespaceNameRequest = call.param("DeleteNamespaceRequest")?;
            a.delete_namespace(&req.namespace_name)?;
            Ok(proc(call))
        }
        "GetNamespaceDescriptor" => {
            let req: pb::NamespaceNameRequest = call.param("GetNamespaceDescriptorRequest")?;
            namespace_must_exist(a.as_ref(), &req.namespace_name)?;
            Ok(Reply::new(pb::GetNamespaceDescriptorResponse {
                namespace_descriptor: namespace_to_pb(&req.namespace_name),
            }))
        }
        "ListNamespaceDescriptors" => Ok(Reply::new(pb::ListNamespaceDescriptorsResponse {
            namespace_descriptor: a
                .list_namespaces()?
                .iter()
                .map(|n| namespace_to_pb(n))
                .collect(),
        })),
        "ListNamespaces" => Ok(Reply::new(pb::ListNamespacesResponse {
            namespace_name: a.list_namespaces()?,
        })),
        "FlushTable" => super::master_procedures::flush_table(call),
        "Snapshot"
        | "IsSnapshotDone"
        | "GetCompletedSnapshots"
        | "DeleteSnapshot"
        | "RestoreSnapshot"
        | "IsRestoreSnapshotDone" => super::master_snapshots::call(call, upper.as_str()),
        "RunCatalogScan" => super::master_procedures::run_catalog_scan(call),
        "ExecProcedure" | "ExecProcedureWithRet" => super::master_procedures::exec_procedure(call),
        "IsProcedureDone" => super::master_procedures::is_procedure_done(call),
        "GetSchemaAlterStatus" => super::master_procedures::schema_alter_status(call),
        "GetProcedureResult" => {
            let req: pb::GetProcedureResultRequest = call.param("GetProcedureResultRequest")?;
            let issued = req.proc_id < call.ctx.next_proc_id.load(Ordering::Relaxed);
            let now = call.ctx.db.region_server().clock().now_millis().max(0) as u64;
            let failure = call
                .ctx
                .failed_procs
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(&req.proc_id)
                .cloned();
            let exception = failure.map(|(class, message)| pb::ForeignExceptionMessage {
                source: Some(call.ctx.server_name.to_string()),
                generic_exception: Some(pb::GenericExceptionMessage {
                    class_name: Some(class),
                    message: Some(message),
                    error_info: None,
                    trace: Vec::new(),
                }),
            });
            Ok(Reply::new(pb::GetProcedureResultResponse {
                state: if issued {
                    pb::get_procedure_result_response::State::Finished
                } else {
                    pb::get_procedure_result_response::State::NotFound
                } as i32,
                submitted_time: Some(now),
                last_update: Some(now),
                result: None,
                exception,
            }))
        }
        "SplitRegion" => {
            let req: pb::SplitTableRegionRequest = call.param("SplitTableRegionRequest")?;
            let info = region_info_from_pb(&req.region_info)?;
            let row = match req.split_row.as_ref().filter(|r| !r.is_empty()) {
                Some(r) => r.to_vec(),
                None => {
                    let spec = pb::RegionSpecifier {
                        r#type: pb::region_specifier::RegionSpecifierType::EncodedRegionName as i32,
                        value: info.encoded.clone().into_bytes().into(),
                    };
                    match call.ctx.regions.resolve(call.master(), &spec)? {
                        Target::Region(r, _) => r.split_point().map_err(|why| {
                            Error::invalid(format!(
                                "Region {} cannot be split: {why}",
                                info.region_name()
                            ))
                        })?,
                        Target::Meta => {
                            return Err(Error::invalid("hbase:meta is not split").into())
                        }
                    }
                }
            };
            a.split(&info.table, Some(&row))?;
            Ok(proc(call))
        }
        "MergeTableRegions" => {
            let req: pb::MergeTableRegionsRequest = call.param("MergeTableRegionsRequest")?;
            if req.region.len() != 2 {
                return Err(Error::invalid(format!(
                    "merging {} regions: Cellar merges two adjacent regions",
                    req.region.len()
                ))
                .into());
            }
            let mut names = Vec::new();
            for spec in &req.region {
                match call.ctx.regions.resolve(call.master(), spec) {
                    Ok(Target::Region(r, _)) => names.push(r.name().to_string()),
                    Ok(Target::Meta) => {
                        return Err(Error::invalid("hbase:meta is not merged").into())
                    }
                    // As HBase's merge procedure: a region that is not open (its table
                    // disabled) fails the procedure, not the call.
                    Err(e) if e.kind() == ErrorKind::NotServingRegion => {
                        let message = format!(
                            "org.apache.hadoop.hbase.exceptions.MergeRegionException: org.apache.hadoop.hbase.client.DoNotRetryRegionException: {} is not OPEN; state=CLOSED",
                            encoded_of(spec)
                        );
                        let id = call.ctx.failed_proc(
                            "org.apache.hadoop.hbase.exceptions.MergeRegionException",
                            message,
                        );
                        return Ok(Reply::new(pb::ProcedureResponse { proc_id: Some(id) }));
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            a.merge_regions(&names[0], &names[1])?;
            Ok(proc(call))
        }
        "Balance" => Ok(Reply::new(pb::BalanceResponse {
            balancer_ran: false,
            moves_calculated: Some(0),
            moves_executed: Some(0),
        })),
        "SetBalancerRunning" => {
            let req: pb::SetBalancerRunningRequest = call.param("SetBalancerRunningRequest")?;
            let prev = call.ctx.balancer_on.swap(req.on, Ordering::Relaxed);
            Ok(Reply::new(pb::SetBalancerRunningResponse {
                prev_balance_value: Some(prev),
            }))
        }
        "IsBalancerEnabled" => Ok(Reply::new(pb::BoolResponse {
            value: call.ctx.balancer_on.load(Ordering::Relaxed),
        })),
        "IsMasterInMaintenanceMode" => Ok(Reply::new(pb::BoolResponse { value: false })),
        "GetClusterStatus" => Ok(Reply::new(pb::GetClusterStatusResponse {
            cluster_status: cluster_status(call),
        })),
        _ => Err(unknown_method("MasterService", method)),
    }
}

fn namespace_must_exist(a: &dyn Admin, ns: &str) -> Result<(), Error> {
    if a.list_namespaces()?.iter().any(|n| n == ns) {
        Ok(())
    } else {
        Err(Error::new(ErrorKind::NamespaceNotFound, ns.to_string()))
    }
}

/// Table names filtered as GetTableNames / GetTableDescriptors filter them.
fn listed(
    a: &dyn Admin,
    regex: Option<&str>,
    ns: Option<&str>,
    include_sys: bool,
) -> Result<Vec<String>, Error> {
    let names = match ns.filter(|n| !n.is_empty()) {
        Some(ns) => a.list_namespace_tables(ns)?,
        None => a.list_tables()?,
    };
    let re = match regex.filter(|r| !r.is_empty()) {
        Some(r) => Some(
            regex::Regex::new(&format!("^(?:{r})$"))
                .map_err(|e| Error::invalid(format!("bad table name pattern {r}: {e}")))?,
        ),
        None => None,
    };
    Ok(names
        .into_iter()
        .filter(|n| include_sys || !is_system(n))
        .filter(|n| re.as_ref().is_none_or(|re| re.is_match(n)))
        .collect())
}

fn truncate(
    call: &Call<'_>,
    a: &dyn Admin,
    name: &str,
    preserve_splits: bool,
) -> Result<(), Error> {
    let (desc, enabled) = a.describe(name)?;
    if enabled {
        return Err(Error::new(ErrorKind::TableNotDisabled, name.to_string()).with_table(name));
    }
    let keys: Vec<Vec<u8>> = if preserve_splits {
        call.master()
            .catalog_entries()
            .into_iter()
            .filter(|e| e.info.table == desc.name && !e.info.start.is_empty())
            .map(|e| e.info.start)
            .collect()
    } else {
        Vec::new()
    };
    a.delete_table(name)?;
    a.create_table(desc, keys)?;
    Ok(())
}

fn cluster_status(call: &Call<'_>) -> pb::ClusterStatus {
    let sn = server_name_to_pb(&call.ctx.server_name);
    let mut loads = Vec::new();
    let mut requests = 0u64;
    for e in call.master().catalog_entries() {
        if e.server.is_none() {
            continue;
        }
        let Ok(load) = call.ctx.db.region_server().region_load(&e.info.encoded) else {
            continue;
        };
        requests += load.read_requests + load.write_requests;
        let mb = |b: u64| (b / (1024 * 1024)) as u32;
        loads.push(pb::RegionLoad {
            region_specifier: pb::RegionSpecifier {
                r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
                value: cellar_protocol::region_name::region_name(
                    &e.info.table,
                    &e.info.start,
                    e.info.id,
                )
                .into(),
            },
            stores: None,
            storefiles: Some(load.store_files as u32),
            store_uncompressed_size_mb: Some(mb(load.store_files_size)),
            storefile_size_mb: Some(mb(load.store_files_size)),
            mem_store_size_mb: Some(mb(load.memstore_size)),
            read_requests_count: Some(load.read_requests),
            write_requests_count: Some(load.write_requests),
            region_size_mb: Some(mb(load.store_files_size + load.memstore_size)),
        });
    }
    pb::ClusterStatus {
        hbase_version: Some(pb::HBaseVersionFileContent {
            version: "8".into(),
        }),
        live_servers: vec![pb::LiveServerInfo {
            server: sn.clone(),
            server_load: pb::ServerLoad {
                number_of_requests: Some(0),
                total_number_of_requests: Some(requests),
                used_heap_mb: Some(0),
                max_heap_mb: Some((call.ctx.db.config().heap_size / (1024 * 1024)) as u32),
                region_loads: loads,
                report_start_time: None,
                report_end_time: None,
                info_server_port: Some(call.ctx.info_port as u32),
            },
        }],
        dead_servers: Vec::new(),
        cluster_id: Some(pb::ClusterId {
            cluster_id: call.ctx.cluster_id.clone(),
        }),
        master: Some(sn.clone()),
        backup_masters: Vec::new(),
        balancer_on: Some(call.ctx.balancer_on.load(Ordering::Relaxed)),
        master_info_port: Some(call.ctx.info_port as i32),
        servers_name: vec![sn],
        table_region_states_count: region_states(call),
    }
}

/// Per table, its regions by state: open (served), split (parents kept until their
/// daughters drop their references), closed (of a disabled table).
fn region_states(call: &Call<'_>) -> Vec<pb::TableRegionStatesCount> {
    let mut by_table: std::collections::BTreeMap<String, pb::RegionStatesCount> =
        std::collections::BTreeMap::new();
    for e in call.master().catalog_entries() {
        let c = by_table.entry(e.info.table.clone()).or_default();
        c.total_regions += 1;
        if e.info.offline {
            c.split_regions += 1;
        } else if !e.enabled {
            c.closed_regions += 1;
        } else if e.server.is_some() {
            c.open_regions += 1;
        }
    }
    by_table
        .into_iter()
        .map(|(t, c)| pb::TableRegionStatesCount {
            table_name: table_name_to_pb(&t),
            region_states_count: c,
        })
        .collect()
}
