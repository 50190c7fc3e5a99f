//! Conversions between HBase's protobuf messages and Cellar's client vocabulary, both
//! ways: the server decodes requests and encodes results with them, the client the
//! other way round. Anything a message says that Cellar cannot honour is an error
//! naming the field, never silently dropped.

mod descriptor;
mod exception;
mod filter;
mod mutation;
mod read;
mod region;
mod result;

pub use descriptor::{
    family_from_pb, family_to_pb, namespace_to_pb, table_from_pb, table_name_from_pb,
    table_name_to_pb, table_to_pb,
};
pub use exception::{
    error_from_exception, error_from_pair, error_to_exception, error_to_pair, kind_of_class,
};
pub use filter::{comparator_from_pb, comparator_to_pb, filter_from_pb, filter_to_pb};
pub use mutation::{
    condition_from_pb, condition_to_pb, mutation_cells, mutation_from_pb, mutation_to_pb,
    mutation_to_pb_block, Nonce,
};
pub use read::{
    get_from_pb, get_to_pb, scan_from_pb, scan_to_pb, time_range_from_pb, time_range_to_pb,
};
pub use region::{
    meta_region_info, region_info_from_pb, region_info_to_pb, server_name_from_pb,
    server_name_to_pb,
};
pub use result::{cell_from_pb, cell_to_pb, result_from_pb, result_to_pb};

use bytes::Bytes;

pub(crate) fn b(v: &[u8]) -> Bytes {
    Bytes::copy_from_slice(v)
}
