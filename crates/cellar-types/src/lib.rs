//! The cell model shared by every Cellar crate: cells keyed by
//! (row, family, qualifier, timestamp, type), their KeyValue serialization,
//! their sort order, and the binary escaping used by tools. No I/O here.

mod cell;
mod cell_pack;
mod comparator;
mod dictionary;
mod error;
mod escape;
mod key;
mod shared_cells;
mod short_bytes;
mod tags;

pub use bytes::Bytes;
pub use cell::{Cell, CellType, LATEST_TIMESTAMP, MAX_FAMILY_LEN, MAX_ROW_LEN};
pub use cell_pack::PutParts;
pub use comparator::{compare_cells, compare_keys, compare_rows, compare_within_row, row_prefix};
pub use dictionary::{LruDictionary, NOT_IN_DICTIONARY};
pub use error::{Result, TypesError};
pub use escape::{from_hex, from_string_binary, to_hex, to_string_binary};
pub use key::{KeyRef, KEY_INFRASTRUCTURE_SIZE};
pub use shared_cells::SharedCells;
pub use short_bytes::{compare_bytes, same_bytes};
pub use tags::tag_bodies;
