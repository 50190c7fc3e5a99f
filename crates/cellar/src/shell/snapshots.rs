//! The snapshot commands, as HBase's shell has them: `snapshot 't', 'name'`,
//! `list_snapshots` (a table of name and table with its creation time), `delete_snapshot
//! 'name'`, `clone_snapshot 'name', 'new_table'` and `restore_snapshot 'name'`.

use std::fmt::Write as _;

use super::client::Client;
use super::commands::{arg, db_err, CmdResult};
use super::parse::CommandLine;

fn text(c: &CommandLine, i: usize, what: &str) -> Result<String, String> {
    arg(c, i, what)?
        .text()
        .ok_or_else(|| format!("{what} must be a string"))
}

/// Ruby's `Time#to_s` of a creation time: `2026-12-02 07:00:00 +0000`.
fn creation(millis: i64) -> String {
    use chrono::TimeZone;
    match chrono::Local.timestamp_millis_opt(millis / 1000 * 1000) {
        chrono::LocalResult::Single(t) => t.format("%Y-%m-%d %H:%M:%S %z").to_string(),
        _ => millis.to_string(),
    }
}

pub(super) fn command(db: &Client, c: &CommandLine, out: &mut String) -> CmdResult {
    let admin = db.admin();
    match c.name.as_str() {
        "snapshot" => {
            let table = text(c, 0, "a table name")?;
            let name = text(c, 1, "a snapshot name")?;
            admin.snapshot(&table, &name).map_err(db_err)?;
            Ok(None)
        }
        "list_snapshots" => {
            let all = admin.list_snapshots().map_err(db_err)?;
            let width = all
                .iter()
                .map(|(n, _, _)| n.len() + 1)
                .chain([8])
                .max()
                .unwrap_or(8);
            let _ = writeln!(out, "{:<width$} TABLE + CREATION TIME", "SNAPSHOT");
            for (name, table, time) in &all {
                let _ = writeln!(
                    out,
                    " {name:<w$} {table} ({})",
                    creation(*time),
                    w = width - 1
                );
            }
            out.push_str(&super::format::rows(all.len() as u64));
            let names: Vec<String> = all.iter().map(|(n, _, _)| format!("\"{n}\"")).collect();
            Ok(Some(format!("[{}]", names.join(", "))))
        }
        "delete_snapshot" => {
            admin
                .delete_snapshot(&text(c, 0, "a snapshot name")?)
                .map_err(db_err)?;
            Ok(None)
        }
        "clone_snapshot" => {
            let name = text(c, 0, "a snapshot name")?;
            let table = text(c, 1, "a table name")?;
            admin.clone_snapshot(&name, &table).map_err(db_err)?;
            Ok(None)
        }
        "restore_snapshot" => {
            admin
                .restore_snapshot(&text(c, 0, "a snapshot name")?)
                .map_err(db_err)?;
            Ok(None)
        }
        other => Err(format!("Unknown command '{other}'. Try 'help'.")),
    }
}
