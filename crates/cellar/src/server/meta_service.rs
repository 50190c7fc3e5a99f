//! ClientMetaService (HBase 2.5+'s `RpcConnectionRegistry`): how a client that was
//! given this server's address, and no ZooKeeper, learns the cluster id, the active
//! master, where `hbase:meta` is, and which servers to bootstrap from.

use cellar_protocol::convert::{meta_region_info, server_name_to_pb};
use cellar_protocol::pb;

use super::dispatch::{unknown_method, Call, CallResult, Reply};

pub fn call(call: &Call<'_>, method: &str) -> CallResult {
    let sn = server_name_to_pb(&call.ctx.server_name);
    match method {
        "GetClusterId" => Ok(Reply::new(pb::GetClusterIdResponse {
            cluster_id: Some(call.ctx.cluster_id.clone()),
        })),
        "GetActiveMaster" => Ok(Reply::new(pb::GetActiveMasterResponse {
            server_name: Some(sn),
        })),
        "GetMasters" => Ok(Reply::new(pb::GetMastersResponse {
            master_servers: vec![pb::GetMastersResponseEntry {
                server_name: sn,
                is_active: true,
            }],
        })),
        "GetMetaRegionLocations" => Ok(Reply::new(pb::GetMetaRegionLocationsResponse {
            meta_locations: vec![pb::RegionLocation {
                region_info: meta_region_info(),
                server_name: Some(sn),
                seq_num: 0,
            }],
        })),
        "GetBootstrapNodes" => Ok(Reply::new(pb::GetBootstrapNodesResponse {
            server_name: vec![sn],
        })),
        _ => Err(unknown_method("ClientMetaService", method)),
    }
}
