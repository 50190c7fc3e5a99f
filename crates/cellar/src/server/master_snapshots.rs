//! MasterService's snapshot calls: Snapshot (taken within the call; its procedure id is
//! reported finished), IsSnapshotDone, GetCompletedSnapshots, DeleteSnapshot, and
//! RestoreSnapshot, which restores when the target table exists (it must be disabled)
//! and clones into it when it does not, as HBase's master decides.

use cellar_api::Error;
use cellar_protocol::pb;

use super::dispatch::{unknown_method, Call, CallResult, Reply};
use crate::master::snapshot::description;

fn target(d: &pb::SnapshotDescription) -> Result<String, Error> {
    match d.table.as_deref() {
        Some(t) if !t.is_empty() => Ok(t.to_string()),
        _ => Err(Error::invalid(format!(
            "snapshot {} names no table",
            d.name
        ))),
    }
}

pub fn call(call: &Call<'_>, method: &str) -> CallResult {
    let master = call.master();
    match method {
        "Snapshot" => {
            let req: pb::SnapshotRequest = call.param("SnapshotRequest")?;
            master.snapshot(&target(&req.snapshot)?, &req.snapshot.name)?;
            Ok(Reply::new(pb::SnapshotResponse {
                expected_timeout: 300_000,
                proc_id: Some(call.ctx.proc_id() as i64),
            }))
        }
        "IsSnapshotDone" => {
            let req: pb::IsSnapshotDoneRequest = call.param("IsSnapshotDoneRequest")?;
            let all = master.list_snapshots()?;
            let found = match &req.snapshot {
                Some(d) => all.iter().find(|s| s.name == d.name),
                None => all.last(),
            };
            Ok(Reply::new(pb::IsSnapshotDoneResponse {
                done: Some(found.is_some()),
                snapshot: found.map(description),
            }))
        }
        "GetCompletedSnapshots" => {
            let _: pb::GetCompletedSnapshotsRequest = call.param("GetCompletedSnapshotsRequest")?;
            Ok(Reply::new(pb::GetCompletedSnapshotsResponse {
                snapshots: master.list_snapshots()?.iter().map(description).collect(),
            }))
        }
        "DeleteSnapshot" => {
            let req: pb::DeleteSnapshotRequest = call.param("DeleteSnapshotRequest")?;
            master.delete_snapshot(&req.snapshot.name)?;
            Ok(Reply::new(pb::DeleteSnapshotResponse {}))
        }
        "RestoreSnapshot" => {
            let req: pb::RestoreSnapshotRequest = call.param("RestoreSnapshotRequest")?;
            let name = &req.snapshot.name;
            let table = match req.snapshot.table.as_deref() {
                Some(t) if !t.is_empty() => t.to_string(),
                _ => master
                    .list_snapshots()?
                    .into_iter()
                    .find(|s| &s.name == name)
                    .map(|s| s.table)
                    .ok_or_else(|| Error::invalid(format!("Snapshot '{name}' doesn't exist")))?,
            };
            if master.table_exists(&table) {
                master.restore_snapshot_into(name, Some(&table))?;
            } else {
                master.clone_snapshot(name, &table)?;
            }
            Ok(Reply::new(pb::RestoreSnapshotResponse {
                proc_id: call.ctx.proc_id(),
            }))
        }
        "IsRestoreSnapshotDone" => Ok(Reply::new(pb::IsRestoreSnapshotDoneResponse {
            done: Some(true),
        })),
        _ => Err(unknown_method("MasterService", method)),
    }
}
