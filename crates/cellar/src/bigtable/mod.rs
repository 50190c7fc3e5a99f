//! The Bigtable v2 API on a [`Connection`]: `cellar server --bigtable` serves
//! `google.bigtable.v2.Bigtable`, the table admin and the instance-admin calls clients
//! make, so code written for Bigtable (or Google's emulator) runs against Cellar by
//! setting `BIGTABLE_EMULATOR_HOST`, and keeps its data. Stubs, filters and chunking
//! are `cellar-bigtable`'s; here each call maps onto the client API.
//!
//! Names: `projects/P/instances/I/tables/T` is the Cellar table `I:T` (the instance is a
//! namespace, `-` written `_`; any project). Timestamps: Bigtable's microseconds at
//! millisecond granularity are Cellar's milliseconds times 1000, so a cell written
//! through either API reads the same through the other.

mod admin;
mod data;
mod gc;
mod mutations;
mod read;

use std::sync::Arc;

use cellar_api::ErrorKind;
use tonic::Status;

use crate::client::Connection;

/// The family a Bigtable table without families holds in Cellar, whose tables (HBase's)
/// need one: a name Bigtable's own family names (`[-_.a-zA-Z0-9]+`) can never take,
/// never shown through the Bigtable API and dropped when a real family comes.
pub(crate) const NO_FAMILY: &str = "~none";

/// Google's emulator's habitual port.
pub const DEFAULT_PORT: u16 = 8086;

/// The services, ready to be served.
pub struct Services {
    pub data: data::DataService,
    pub tables: admin::TableAdmin,
    pub instances: admin::InstanceAdmin,
}

/// The Bigtable services over `conn`.
pub fn services(conn: Arc<dyn Connection>) -> Services {
    let shared = Arc::new(Shared {
        conn,
        row_locks: (0..64).map(|_| tokio::sync::Mutex::new(())).collect(),
    });
    Services {
        data: data::DataService::new(shared.clone()),
        tables: admin::TableAdmin::new(shared.clone()),
        instances: admin::InstanceAdmin::new(shared),
    }
}

/// Serves the Bigtable API on `listener` until `stop` resolves.
pub async fn serve(
    conn: Arc<dyn Connection>,
    listener: tokio::net::TcpListener,
    stop: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), String> {
    use cellar_bigtable::stubs::bigtable_instance_admin_server::BigtableInstanceAdminServer;
    use cellar_bigtable::stubs::bigtable_server::BigtableServer;
    use cellar_bigtable::stubs::bigtable_table_admin_server::BigtableTableAdminServer;
    let s = services(conn);
    let incoming = tonic::transport::server::TcpIncoming::from(listener);
    tonic::transport::Server::builder()
        .add_service(BigtableServer::new(s.data).max_decoding_message_size(256 << 20))
        .add_service(BigtableTableAdminServer::new(s.tables))
        .add_service(BigtableInstanceAdminServer::new(s.instances))
        .serve_with_incoming_shutdown(incoming, stop)
        .await
        .map_err(|e| format!("bigtable gateway: {e}"))
}

/// What the services share.
pub(crate) struct Shared {
    pub conn: Arc<dyn Connection>,
    /// Check-and-mutate and read-modify-write of one row run one at a time here.
    row_locks: Vec<tokio::sync::Mutex<()>>,
}

impl Shared {
    pub fn row_lock(&self, table: &str, row: &[u8]) -> &tokio::sync::Mutex<()> {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        table.hash(&mut h);
        row.hash(&mut h);
        &self.row_locks[(h.finish() as usize) % self.row_locks.len()]
    }
}

/// Runs blocking client work off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Status> + Send + 'static,
) -> Result<T, Status> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Status::internal(format!("the call did not finish: {e}")))?
}

/// A store error as the gRPC status Bigtable gives for it.
pub(crate) fn status(e: cellar_api::Error) -> Status {
    let m = e.message().to_string();
    match e.kind() {
        ErrorKind::TableNotFound | ErrorKind::NamespaceNotFound => Status::not_found(m),
        ErrorKind::NoSuchColumnFamily => Status::not_found(m),
        ErrorKind::TableExists | ErrorKind::NamespaceExists => Status::already_exists(m),
        ErrorKind::InvalidRequest | ErrorKind::FailedSanityCheck | ErrorKind::RowTooBig => {
            Status::invalid_argument(m)
        }
        ErrorKind::TableNotEnabled | ErrorKind::TableNotDisabled => Status::failed_precondition(m),
        ErrorKind::Unsupported => Status::unimplemented(m),
        ErrorKind::RegionTooBusy | ErrorKind::LockTimeout | ErrorKind::ServerStopped => {
            Status::unavailable(m)
        }
        _ => Status::internal(m),
    }
}

/// A store error about the table `name`, worded as Bigtable (and its emulator) word
/// an unknown or existing table.
pub(crate) fn table_status(name: &TableName) -> impl Fn(cellar_api::Error) -> Status + '_ {
    move |e| match e.kind() {
        ErrorKind::TableNotFound => Status::not_found(format!("table {:?} not found", name.full())),
        ErrorKind::TableExists => {
            Status::already_exists(format!("table {:?} already exists", name.full()))
        }
        _ => status(e),
    }
}

/// A Bigtable resource name taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TableName {
    pub project: String,
    pub instance: String,
    pub table: String,
}

impl TableName {
    /// `projects/P/instances/I/tables/T`.
    pub fn parse(name: &str) -> Result<TableName, Status> {
        let parts: Vec<&str> = name.split('/').collect();
        match parts.as_slice() {
            ["projects", p, "instances", i, "tables", t]
                if !p.is_empty() && !i.is_empty() && !t.is_empty() =>
            {
                Ok(TableName {
                    project: p.to_string(),
                    instance: i.to_string(),
                    table: t.to_string(),
                })
            }
            _ => Err(Status::invalid_argument(format!(
                "Invalid table name: {name:?} (projects/P/instances/I/tables/T)"
            ))),
        }
    }

    /// The Cellar table.
    pub fn cellar(&self) -> String {
        format!("{}:{}", namespace(&self.instance), self.table)
    }

    pub fn full(&self) -> String {
        format!(
            "projects/{}/instances/{}/tables/{}",
            self.project, self.instance, self.table
        )
    }
}

/// `projects/P/instances/I` → (P, I).
pub(crate) fn parse_instance(name: &str) -> Result<(String, String), Status> {
    let parts: Vec<&str> = name.split('/').collect();
    match parts.as_slice() {
        ["projects", p, "instances", i] if !p.is_empty() && !i.is_empty() => {
            Ok((p.to_string(), i.to_string()))
        }
        _ => Err(Status::invalid_argument(format!(
            "Invalid instance name: {name:?} (projects/P/instances/I)"
        ))),
    }
}

/// The Cellar namespace of a Bigtable instance.
pub(crate) fn namespace(instance: &str) -> String {
    instance.replace('-', "_")
}

/// A row's cells as Bigtable's, timestamps in microseconds.
pub(crate) fn bigtable_cells(cells: &[cellar_api::Cell]) -> Vec<cellar_bigtable::filter::Cell> {
    cells
        .iter()
        .map(|c| cellar_bigtable::filter::Cell {
            family: String::from_utf8_lossy(c.family()).into_owned(),
            qualifier: c.qualifier().to_vec(),
            timestamp_micros: micros(c.timestamp()),
            value: c.value().to_vec(),
            labels: Vec::new(),
        })
        .collect()
}

/// Cellar's milliseconds as Bigtable's microseconds.
pub(crate) fn micros(ms: i64) -> i64 {
    ms.saturating_mul(1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_namespaced_tables() {
        let t = TableName::parse("projects/p/instances/my-inst/tables/t1").unwrap();
        assert_eq!(t.cellar(), "my_inst:t1");
        assert_eq!(t.full(), "projects/p/instances/my-inst/tables/t1");
        assert!(TableName::parse("projects/p/instances/i").is_err());
        assert!(TableName::parse("projects//instances/i/tables/t").is_err());
        assert_eq!(
            parse_instance("projects/p/instances/i").unwrap(),
            ("p".to_string(), "i".to_string())
        );
        assert_eq!(micros(1_700_000_000_123), 1_700_000_000_123_000);
    }
}
