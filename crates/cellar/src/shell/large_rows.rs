//! `large_rows ['table']`: the rows `cellar:large_rows` tracks (all families of a row
//! summed), largest first, with their growth a day and the days until each limit —
//! 100 MiB, `hbase.table.max.rowsize`, the region split size.

use std::fmt::Write as _;

use cellar_types::to_string_binary;

use super::client::Client;
use super::commands::{db_err, CmdResult};
use super::parse::CommandLine;
use crate::large_rows::forecast;

/// Days to a limit and the date it falls on (from the row's last sighting).
fn days(from: i64, d: Option<f64>) -> String {
    match d {
        None => "-".into(),
        Some(d) if d <= 0.0 => "now".into(),
        Some(d) => format!("{d:.0}({})", crate::large_rows::date_after(from, d)),
    }
}

pub(super) fn large_rows(db: &Client, c: &CommandLine, out: &mut String) -> CmdResult {
    let only = c.args.first().and_then(|v| v.text());
    let entries = crate::large_rows::read(db.connection(), only.as_deref()).map_err(db_err)?;
    let limits = db.row_limits();
    let rows = forecast(&entries, limits.0, limits.1);
    let _ = writeln!(
        out,
        "TABLE ROW FAMILIES BYTES CELLS GROWTH/DAY DAYS-TO-100MiB DAYS-TO-MAX-ROWSIZE DAYS-TO-SPLIT"
    );
    for f in &rows {
        let families: Vec<String> = f.families.iter().map(|x| to_string_binary(x)).collect();
        let _ = writeln!(
            out,
            " {} {} {} {} {} {} {} {} {}",
            f.table,
            to_string_binary(&f.row),
            families.join(","),
            f.bytes,
            f.cells,
            f.growth_per_day
                .map_or("-".to_string(), |g| format!("{g:.0}")),
            days(f.last, f.days_to_large),
            days(f.last, f.days_to_max_row),
            days(f.last, f.days_to_split)
        );
    }
    out.push_str(&super::format::rows(rows.len() as u64));
    Ok(None)
}
