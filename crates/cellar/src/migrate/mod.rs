//! The re-key migration (`cellar migrate`): the seeds' way to change a table's layout —
//! a new table with its own pre-splits, writes to both, history backfilled from a
//! snapshot of the old table through bulk load, per-entity verification, then the switch.
//!
//! Every step works through a [`Site`]: a [`Connection`] (embedded or a server) for
//! reads, schema and snapshots, a [`LoadTarget`] for bulk loads, and a state directory
//! on the target's file system where the plan and each step's progress are recorded, so
//! a step stopped anywhere (a crash, Ctrl-C) runs again to the same result.
//! [`keymap`] (from `cellar-client`) says how an old cell's key becomes the new one.

pub mod backfill;
pub mod create;
pub mod dual;
pub mod plan;
pub mod verify;

pub use cellar_client::migrate::keymap;

use std::path::PathBuf;

use crate::bulkload::LoadTarget;
use crate::client::Connection;

/// Where a migration runs.
pub struct Site<'a> {
    pub conn: &'a dyn Connection,
    pub target: &'a dyn LoadTarget,
    /// The migration's state directory (on `target.fs()`).
    pub state: PathBuf,
}
