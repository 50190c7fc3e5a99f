//! HBase's RPC protocol as Cellar speaks it, on both ends of a connection: the message
//! definitions (`proto/`, generated with prost into [`pb`]), the connection preamble and
//! header, call and response framing ([`frame`]), KeyValueCodec cell blocks
//! ([`cell_block`]), HBase's region names ([`region_name`]) and the conversions between
//! protobuf messages and Cellar's client vocabulary ([`convert`]). No I/O: the server and
//! the client drive sockets and hand this crate bytes.

pub mod cell_block;
pub mod convert;
pub mod error;
pub mod frame;
pub mod region_name;
pub mod znode;

pub use error::ProtocolError;

/// The generated messages, in HBase's package `hbase.pb`.
#[allow(clippy::all, missing_docs)]
pub mod pb {
    include!(concat!(env!("OUT_DIR"), "/hbase.pb.rs"));
}

/// The service names a connection header may carry.
pub mod service {
    pub const CLIENT: &str = "ClientService";
    pub const MASTER: &str = "MasterService";
    pub const ADMIN: &str = "AdminService";
    pub const CLIENT_META: &str = "ClientMetaService";
    pub const REGISTRY: &str = "ConnectionRegistryService";
    /// The coprocessor service `ExecService` dispatches multi-row mutations to.
    pub const MULTI_ROW_MUTATION: &str = "MultiRowMutationService";
}

/// The cell-block codecs a client may ask for.
pub mod codec {
    pub const KEY_VALUE: &str = "org.apache.hadoop.hbase.codec.KeyValueCodec";
    pub const KEY_VALUE_WITH_TAGS: &str = "org.apache.hadoop.hbase.codec.KeyValueCodecWithTags";
}
