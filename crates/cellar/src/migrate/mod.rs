//! The re-key migration (`cellar migrate`): the seeds' way to change a table's layout —
//! a new table with its own pre-splits, writes to both, history backfilled from a
//! snapshot of the old table through bulk load, per-entity verification, then the switch.
//! [`keymap`] says how an old cell's key becomes the new one.

pub mod backfill;
pub mod dual;
pub mod keymap;
pub mod plan;
