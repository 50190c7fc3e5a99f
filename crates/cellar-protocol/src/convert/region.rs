//! `RegionInfo` and `ServerName` messages ↔ Cellar's. On the wire a region carries the
//! encoded name HBase clients compute (see [`crate::region_name`]).

use cellar_api::{RegionInfo, ServerName};

use super::{b, table_name_from_pb, table_name_to_pb};
use crate::error::{ProtocolError, Result};
use crate::pb;
use crate::region_name::{encoded_name, META_ENCODED_NAME};

pub fn region_info_to_pb(r: &RegionInfo) -> pb::RegionInfo {
    pb::RegionInfo {
        region_id: r.id as u64,
        table_name: table_name_to_pb(&r.table),
        start_key: Some(b(&r.start)),
        end_key: Some(b(&r.end)),
        offline: Some(r.offline),
        split: Some(r.offline),
        replica_id: Some(0),
        region_encoded_name: Some(encoded_name(&r.table, &r.start, r.id)),
    }
}

/// A region as a client describes it; `encoded` is the wire (MD5) name.
pub fn region_info_from_pb(r: &pb::RegionInfo) -> Result<RegionInfo> {
    let table = table_name_from_pb(&r.table_name)?.to_string();
    let start = r.start_key.as_deref().unwrap_or_default().to_vec();
    let id = i64::try_from(r.region_id)
        .map_err(|_| ProtocolError::invalid("region_id", r.region_id.to_string()))?;
    Ok(RegionInfo {
        encoded: encoded_name(&table, &start, id),
        table,
        start,
        end: r.end_key.as_deref().unwrap_or_default().to_vec(),
        id,
        offline: r.offline.unwrap_or(false),
    })
}

/// `hbase:meta`'s one region.
pub fn meta_region_info() -> pb::RegionInfo {
    pb::RegionInfo {
        region_id: 1,
        table_name: pb::TableName {
            namespace: b(b"hbase"),
            qualifier: b(b"meta"),
        },
        start_key: Some(b(b"")),
        end_key: Some(b(b"")),
        offline: Some(false),
        split: Some(false),
        replica_id: Some(0),
        region_encoded_name: Some(META_ENCODED_NAME.into()),
    }
}

pub fn server_name_to_pb(s: &ServerName) -> pb::ServerName {
    pb::ServerName {
        host_name: s.host.clone(),
        port: Some(s.port as u32),
        start_code: Some(s.start_code as u64),
    }
}

pub fn server_name_from_pb(s: &pb::ServerName) -> ServerName {
    ServerName::new(
        s.host_name.clone(),
        s.port.unwrap_or(0) as u16,
        s.start_code.unwrap_or(0) as i64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_info_round_trips_with_wire_encoded_name() {
        let r = RegionInfo {
            table: "ns:t".into(),
            start: b"m".to_vec(),
            end: b"z".to_vec(),
            id: 42,
            encoded: "local-name".into(),
            offline: false,
        };
        let back = region_info_from_pb(&region_info_to_pb(&r)).unwrap();
        assert_eq!(back.encoded, encoded_name("ns:t", b"m", 42));
        assert_eq!(
            (back.table.as_str(), back.start, back.end, back.id),
            ("ns:t", r.start, r.end, 42)
        );
    }
}
