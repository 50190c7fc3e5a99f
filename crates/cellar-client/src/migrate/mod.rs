//! Client-side pieces of a re-key migration (`cellar migrate`): the key maps that say
//! how an old cell's (row, qualifier) becomes the new table's, and [`DualWriter`], which
//! an application puts in front of its writes while the migration runs so both tables
//! receive them.

mod dual;
pub mod keymap;

pub use dual::{rekey_delete, rekey_put, DualWriter, WallClock};
pub use keymap::KeyMap;
