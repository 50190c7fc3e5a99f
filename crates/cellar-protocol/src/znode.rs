//! What HBase keeps in ZooKeeper, in HBase's encoding: every znode's data starts with
//! the "recoverable ZooKeeper" metadata (byte 0xFF, a 4-byte big-endian length, that
//! many bytes of writer id), then `PBUF` and a protobuf message — `Master` in
//! `/hbase/master`, `MetaRegionServer` in `/hbase/meta-region-server`, `ClusterId` in
//! `/hbase/hbaseid`.

use prost::Message;

use crate::error::{ProtocolError, Result};
use crate::pb;

pub const MASTER: &str = "master";
pub const META_REGION_SERVER: &str = "meta-region-server";
pub const CLUSTER_ID: &str = "hbaseid";
pub const REGION_SERVERS: &str = "rs";

const MAGIC: u8 = 0xFF;
const PBUF: &[u8] = b"PBUF";

/// Wraps a message as HBase writes it to a znode, with writer id `id`.
pub fn encode(id: &[u8], m: &impl Message) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 + 4 + id.len() + 4 + m.encoded_len());
    out.push(MAGIC);
    out.extend_from_slice(&(id.len() as u32).to_be_bytes());
    out.extend_from_slice(id);
    out.extend_from_slice(PBUF);
    out.extend_from_slice(&m.encode_to_vec());
    out
}

/// The message of a znode's data (with or without the metadata prefix).
pub fn decode<M: Message + Default>(data: &[u8], what: &'static str) -> Result<M> {
    let mut body = data;
    if body.first() == Some(&MAGIC) {
        let len = body
            .get(1..5)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .ok_or(ProtocolError::Truncated {
                what,
                need: 5,
                have: body.len(),
            })?;
        body = body.get(5 + len..).ok_or(ProtocolError::Truncated {
            what,
            need: 5 + len,
            have: data.len(),
        })?;
    }
    let body = body
        .strip_prefix(PBUF)
        .ok_or_else(|| ProtocolError::invalid(what, "no PBUF magic"))?;
    M::decode(body).map_err(|source| ProtocolError::Decode { what, source })
}

/// The `/hbase/master` payload.
pub fn master(server: &pb::ServerName, info_port: u16) -> pb::Master {
    pb::Master {
        master: server.clone(),
        rpc_version: Some(0),
        info_port: Some(info_port as u32),
    }
}

/// The `/hbase/meta-region-server` payload (state OPEN).
pub fn meta_region_server(server: &pb::ServerName) -> pb::MetaRegionServer {
    pb::MetaRegionServer {
        server: server.clone(),
        rpc_version: Some(0),
        state: Some(3),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_garbage() {
        let sn = pb::ServerName {
            host_name: "h".into(),
            port: Some(16020),
            start_code: Some(7),
        };
        let data = encode(b"writer-1", &master(&sn, 16030));
        assert_eq!(data[0], 0xFF);
        let back: pb::Master = decode(&data, "master").unwrap();
        assert_eq!(back.master, sn);
        assert!(decode::<pb::Master>(&data[..7], "master").is_err());
        assert!(decode::<pb::Master>(b"\xff\x00\x00\x00\x02abXXXX", "master").is_err());
    }
}
