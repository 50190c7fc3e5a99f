//! `get_largelog_responses`: the reads the servers logged as too large or too slow,
//! newest first — with HBase's filters (`TABLE_NAME`, `REGION_NAME`, `LIMIT`; `'*'` or
//! nothing for all).

use std::fmt::Write as _;

use cellar_types::to_string_binary;

use super::client::Client;
use super::commands::{db_err, CmdResult};
use super::parse::{CommandLine, Value};

pub(super) fn get_largelog_responses(db: &Client, c: &CommandLine, out: &mut String) -> CmdResult {
    let (mut table, mut region, mut limit) = (None, None, 10usize);
    if let Some(Value::Hash(h)) = c.args.first() {
        for (k, v) in h {
            match k.text().as_deref() {
                Some("TABLE_NAME") => table = v.text(),
                Some("REGION_NAME") => region = v.text(),
                Some("LIMIT") => {
                    if let Value::Int(n) = v {
                        limit = (*n).max(0) as usize;
                    }
                }
                _ => return Err(format!("get_largelog_responses: unknown key {k}")),
            }
        }
    }
    let all = db.connection().large_responses().map_err(db_err)?;
    let shown: Vec<_> = all
        .into_iter()
        .filter(|e| table.as_ref().is_none_or(|t| *t == e.table))
        .filter(|e| region.as_ref().is_none_or(|r| *r == e.region))
        .take(limit)
        .collect();
    for e in &shown {
        let _ = writeln!(
            out,
            " {} {} table={} region={} row={} bytes={} cells={} ms={} shape=\"{}\" fix=\"{}\"",
            e.kind,
            e.op,
            e.table,
            e.region,
            to_string_binary(&e.row),
            e.bytes,
            e.cells,
            e.millis,
            e.shape,
            e.advice
        );
    }
    out.push_str(&super::format::rows(shown.len() as u64));
    Ok(None)
}
