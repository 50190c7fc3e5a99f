//! `hotspots ['table']`: the regions taking most of their table's requests (and whether
//! the keys grow monotonically into the last region), the rows whose reads skip a
//! build-up of delete markers, the rows writers wait for, and the families keeping far
//! more versions than reads ask for, each with the advice.

use std::fmt::Write as _;

use cellar_types::to_string_binary;

use super::client::Client;
use super::commands::{db_err, CmdResult};
use super::parse::CommandLine;

pub(super) fn hotspots(db: &Client, c: &CommandLine, out: &mut String) -> CmdResult {
    let only = c.args.first().and_then(|v| v.text());
    let tables = match &only {
        Some(t) => vec![t.clone()],
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
    let entries = crate::large_rows::read(db.connection(), only.as_deref()).map_err(db_err)?;
    for t in crate::hotspots::tombstone_rows(&entries) {
        n += 1;
        let _ = writeln!(
            out,
            " {} row={} tombstones: {} delete markers of {} cells: {}",
            t.table,
            to_string_binary(&t.row),
            t.deletes,
            t.cells,
            t.advice
        );
    }
    // Row locks and stores' version counts: from this process, or from every server
    // (Cellar's `cellar.Hotspots` log); a server that does not answer it has none.
    if let Ok(rows) = db.connection().hot_rows() {
        for h in rows
            .iter()
            .filter(|h| only.as_ref().is_none_or(|t| *t == h.table))
        {
            n += 1;
            let c = h.contention;
            let _ = writeln!(
                out,
                " {} row={} hot row: {} lock waits ({} ms), {} timed out, {} refused busy: {}",
                h.table,
                to_string_binary(&h.row),
                c.waits,
                c.wait_ms,
                c.timeouts,
                c.busy,
                h.advice
            );
        }
    }
    if let Ok(waste) = db.connection().version_waste() {
        for w in waste
            .iter()
            .filter(|w| only.as_ref().is_none_or(|t| *t == w.table))
        {
            n += 1;
            let _ = writeln!(
                out,
                " {} family={} versions: up to {} kept (VERSIONS => {}), reads ask for {}: {}",
                w.table,
                to_string_binary(&w.family),
                w.stored,
                w.configured,
                w.asked,
                w.advice
            );
        }
    }
    out.push_str(&super::format::rows(n));
    Ok(None)
}
