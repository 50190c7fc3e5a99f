//! The maintenance task: flushes and compactions regions ask for, splits their
//! policies call for, and the janitor after compactions.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Weak};
use std::time::Duration;

use cellar_region::Maintenance;

use crate::master::Master;

/// Runs flushes and compactions regions ask for; every minute also checks whether a
/// periodic major compaction is due.
/// Ends at [`Maintenance::Stop`], without running what was queued before it once
/// `stopping` is set: the database joins this task before it closes its regions and
/// lets go of its directory lock, so nothing of this process touches the directory
/// after that (a split or compaction finishing late would open stores, and roll or
/// prune their manifests, under the next process to open the directory).
pub(crate) fn maintenance_loop(
    master: Weak<Master>,
    rx: Receiver<Maintenance>,
    stopping: Arc<AtomicBool>,
) {
    loop {
        let msg = rx.recv_timeout(Duration::from_secs(60));
        if stopping.load(Ordering::Acquire) {
            return;
        }
        let Some(master) = master.upgrade() else {
            return;
        };
        match msg {
            Ok(Maintenance::Stop) => return,
            Ok(Maintenance::Flush(name)) => {
                if let Some(r) = master.region_named(&name) {
                    if r.flush().is_ok() {
                        master.note_large_rows();
                        let _ = master.maybe_split(&r);
                    }
                }
            }
            Ok(Maintenance::Compact(name)) => {
                if let Some(r) = master.region_named(&name) {
                    if let Ok(true) = r.compact_requested(false) {
                        master.note_large_rows();
                        let _ = master.janitor(&r.table().name);
                        let _ = master.maybe_split(&r);
                    }
                }
            }
            Ok(Maintenance::CompactStores(name)) => {
                if let Some(r) = master.region_named(&name) {
                    if let Ok(true) = r.compact_requested(true) {
                        master.note_large_rows();
                        let _ = master.janitor(&r.table().name);
                        let _ = master.maybe_split(&r);
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                for s in master.servers() {
                    for r in s.online_regions() {
                        if r.needs_compaction() {
                            let _ = r.compact_stores_needing();
                        }
                    }
                }
            }
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}
