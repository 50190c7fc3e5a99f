//! `hotspots ['table']`: the regions taking most of their table's requests, and whether
//! the keys grow monotonically into the last region, with the advice.

use std::fmt::Write as _;

use cellar_types::to_string_binary;

use super::client::Client;
use super::commands::{db_err, CmdResult};
use super::parse::CommandLine;

pub(super) fn hotspots(db: &Client, c: &CommandLine, out: &mut String) -> CmdResult {
    let tables = match c.args.first().and_then(|v| v.text()) {
        Some(t) => vec![t],
        None => db.list_tables(),
    };
    let mut n = 0;
    for t in tables {
        if !db.describe(&t).map_err(db_err)?.1 {
            continue;
        }
        for h in crate::hotspots::hot_regions(&db.list_regions(&t).map_err(db_err)?) {
            n += 1;
            let _ = writeln!(
                out,
                " {} region={} [{}, {}) requests={} share={:.0}% writes={:.0}%{}: {}",
                h.table,
                h.region,
                to_string_binary(&h.start),
                to_string_binary(&h.end),
                h.requests,
                h.share * 100.0,
                h.write_share * 100.0,
                if h.monotonic { " monotonic keys" } else { "" },
                h.advice
            );
        }
    }
    out.push_str(&super::format::rows(n));
    Ok(None)
}
