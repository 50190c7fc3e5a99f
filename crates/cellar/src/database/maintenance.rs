//! The maintenance thread: flushes and compactions regions ask for, splits their
//! policies call for, and the janitor after compactions.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Weak;
use std::time::Duration;

use cellar_region::Maintenance;

use super::Inner;

/// Runs flushes and compactions regions ask for; every minute also checks whether a
/// periodic major compaction is due.
pub(crate) fn maintenance_loop(inner: Weak<Inner>, rx: Receiver<Maintenance>) {
    loop {
        let msg = rx.recv_timeout(Duration::from_secs(60));
        let Some(inner) = inner.upgrade() else {
            return;
        };
        match msg {
            Ok(Maintenance::Flush(name)) => {
                if let Some(r) = inner.region_named(&name) {
                    if r.flush().is_ok() {
                        let _ = inner.maybe_split(&r);
                    }
                }
            }
            Ok(Maintenance::Compact(name)) => {
                if let Some(r) = inner.region_named(&name) {
                    if r.needs_compaction() && r.compact(false).is_ok() {
                        let _ = inner.janitor(&r.table().name);
                        let _ = inner.maybe_split(&r);
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                for r in inner.all_regions() {
                    if r.needs_compaction() {
                        let _ = r.compact(false);
                    }
                }
            }
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}
