//! Large rows, kept where users can read them: the system table `cellar:large_rows`
//! holds one row per (table, row, family) at or above the watch level — its region,
//! bytes, cells, when first and last seen, its level, and a bounded history of
//! (time, bytes, cells) — written by the master from what its stores' flushes and
//! compactions saw ([`sync`]), and read back with forecasts ([`forecast`]) by the shell,
//! the status page and the metrics, embedded or through a server (it is a table).

pub mod entry;
pub mod forecast;
pub mod sync;

pub use entry::{Entry, FAMILY, TABLE};
pub use forecast::{date_after, forecast, Forecast};

use crate::client::Connection;

/// Every entry of `cellar:large_rows` (none when the table does not exist yet), of
/// `table` alone when given.
pub fn read(conn: &dyn Connection, table: Option<&str>) -> cellar_api::Result<Vec<Entry>> {
    if !conn.admin().table_exists(TABLE)? {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for r in conn.table(TABLE)?.scan(&cellar_api::Scan::new())? {
        if let Some(e) = Entry::from_result(&r?) {
            if table.is_none_or(|t| t == e.table) {
                out.push(e);
            }
        }
    }
    Ok(out)
}
