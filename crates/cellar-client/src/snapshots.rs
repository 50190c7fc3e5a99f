//! Snapshot administration over MasterService, as HBase's Admin does it: Snapshot,
//! GetCompletedSnapshots, DeleteSnapshot, and RestoreSnapshot for both restoring (into
//! the snapshot's disabled table) and cloning (into a new table).

use cellar_api::{Error, ErrorKind, Result};
use cellar_protocol::pb;

use crate::admin::Admin;
use crate::connection::normalize;

fn description(name: &str, table: Option<&str>) -> pb::SnapshotDescription {
    pb::SnapshotDescription {
        name: name.to_string(),
        table: table.map(normalize),
        r#type: Some(1),
        ..Default::default()
    }
}

/// A snapshot as listed: its name, table and creation time (ms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotListing {
    pub name: String,
    pub table: String,
    pub creation_time: i64,
}

impl Admin {
    /// Takes snapshot `name` of `table` (flushed first).
    pub async fn snapshot(&self, table: &str, name: &str) -> Result<()> {
        let req = pb::SnapshotRequest {
            snapshot: description(name, Some(table)),
            nonce_group: None,
            nonce: None,
        };
        let _: pb::SnapshotResponse = self.conn().master_for(table, "Snapshot", &req).await?;
        Ok(())
    }

    pub async fn list_snapshots(&self) -> Result<Vec<SnapshotListing>> {
        let r: pb::GetCompletedSnapshotsResponse = self
            .conn()
            .master(
                "GetCompletedSnapshots",
                &pb::GetCompletedSnapshotsRequest {},
            )
            .await?;
        Ok(r.snapshots
            .into_iter()
            .map(|s| SnapshotListing {
                name: s.name,
                table: s.table.unwrap_or_default(),
                creation_time: s.creation_time.unwrap_or(0),
            })
            .collect())
    }

    pub async fn delete_snapshot(&self, name: &str) -> Result<()> {
        let req = pb::DeleteSnapshotRequest {
            snapshot: description(name, None),
        };
        let _: pb::DeleteSnapshotResponse = self.conn().master("DeleteSnapshot", &req).await?;
        Ok(())
    }

    async fn restore_or_clone(&self, name: &str, table: Option<&str>) -> Result<()> {
        let req = pb::RestoreSnapshotRequest {
            snapshot: description(name, table),
            ..Default::default()
        };
        let r: pb::RestoreSnapshotResponse = self.conn().master("RestoreSnapshot", &req).await?;
        self.wait_procedure(pb::ProcedureResponse {
            proc_id: Some(r.proc_id),
        })
        .await
    }

    /// A new table with the snapshot's contents. An existing table is refused here, as
    /// HBase's Admin refuses it (the master would restore into it instead).
    pub async fn clone_snapshot(&self, name: &str, table: &str) -> Result<()> {
        let table = normalize(table);
        if self.table_exists(&table).await? {
            return Err(Error::new(ErrorKind::TableExists, table.clone()).with_table(table));
        }
        self.restore_or_clone(name, Some(&table)).await
    }

    /// The snapshot's contents back into its table, which must be disabled.
    pub async fn restore_snapshot(&self, name: &str) -> Result<()> {
        let table = self
            .list_snapshots()
            .await?
            .into_iter()
            .find(|s| s.name == name)
            .map(|s| s.table);
        // Checked here first, as HBase's Admin does.
        if let Some(t) = &table {
            if self.table_exists(t).await? && self.is_table_enabled(t).await? {
                return Err(
                    Error::new(ErrorKind::TableNotDisabled, t.clone()).with_table(t.clone())
                );
            }
        }
        self.restore_or_clone(name, table.as_deref()).await
    }
}
