//! AdminService: what this region server says about its regions (GetRegionInfo,
//! GetOnlineRegion, GetServerInfo) and does to them (FlushRegion, CompactRegion).

use cellar_protocol::convert::{meta_region_info, region_info_to_pb, server_name_to_pb};
use cellar_protocol::pb;

use super::client_service::region;
use super::dispatch::{unknown_method, Call, CallResult, Reply};
use super::regions::Target;

pub fn call(call: &Call<'_>, method: &str) -> CallResult {
    match method {
        "GetRegionInfo" => {
            let req: pb::GetRegionInfoRequest = call.param("GetRegionInfoRequest")?;
            let (info, compacting) = match call.ctx.regions.resolve(call.master(), &req.region)? {
                Target::Meta => (meta_region_info(), false),
                Target::Region(r, info) => (region_info_to_pb(&info), r.compaction_pending()),
            };
            use pb::get_region_info_response::CompactionState;
            Ok(Reply::new(pb::GetRegionInfoResponse {
                region_info: info,
                compaction_state: req
                    .compaction_state
                    .unwrap_or(false)
                    .then_some(if compacting {
                        CompactionState::Minor
                    } else {
                        CompactionState::None
                    } as i32),
                splittable: Some(true),
                mergeable: Some(true),
                best_split_row: None,
            }))
        }
        "GetOnlineRegion" => {
            let mut infos = vec![meta_region_info()];
            infos.extend(
                call.master()
                    .catalog_entries()
                    .into_iter()
                    .filter(|e| e.server.is_some())
                    .map(|e| region_info_to_pb(&e.info)),
            );
            Ok(Reply::new(pb::GetOnlineRegionResponse {
                region_info: infos,
            }))
        }
        "GetServerInfo" => Ok(Reply::new(pb::GetServerInfoResponse {
            server_info: pb::ServerInfo {
                server_name: server_name_to_pb(&call.ctx.server_name),
                webui_port: Some(call.ctx.info_port as u32),
            },
        })),
        "FlushRegion" => {
            let req: pb::FlushRegionRequest = call.param("FlushRegionRequest")?;
            let r = region(call, &req.region)?;
            let flushed = r.flush().map_err(cellar_api::Error::from)?;
            call.ctx.db.master().note_large_rows();
            let now = call.ctx.db.region_server().clock().now_millis().max(0) as u64;
            Ok(Reply::new(pb::FlushRegionResponse {
                last_flush_time: now,
                flushed: Some(flushed),
                wrote_flush_wal_marker: Some(false),
            }))
        }
        "CompactRegion" => {
            let req: pb::CompactRegionRequest = call.param("CompactRegionRequest")?;
            let r = region(call, &req.region)?;
            // As HBase: a request while the region compacts selects nothing (a major
            // one stays pending on the stores); a family names one store.
            let ran = r
                .compact_requested_by_user(req.major.unwrap_or(false), req.family.as_deref())
                .map_err(cellar_api::Error::from)?;
            if ran.is_some() {
                call.ctx.db.master().note_large_rows();
            }
            Ok(Reply::new(pb::Empty {}))
        }
        "GetLogEntries" => Ok(Reply::new(super::log_entries::get_log_entries(call)?)),
        "GetLargeLogResponses" => Ok(Reply::new(super::log_entries::get_responses(call, true)?)),
        "GetSlowLogResponses" => Ok(Reply::new(super::log_entries::get_responses(call, false)?)),
        _ => Err(unknown_method("AdminService", method)),
    }
}
