//! Thrift for Cellar's gateways (HBase's Thrift1 `Hbase` and Thrift2 `THBaseService`
//! services live in the `cellar` crate, on its client `Connection`): the wire — buffered
//! or framed, binary or compact, told apart per connection — calls read into dynamic
//! [`Struct`]s without generated code, and a threaded server handing them to a
//! [`Service`].

pub mod server;
pub mod value;
pub mod wire;

pub use server::{Gateway, Reply, ServerConfig, Service};
pub use thrift::protocol::TType;
pub use thrift::ApplicationErrorKind;
pub use value::{describe, Struct, Value};
pub use wire::{Protocol, Transport, Wire, WireError};
