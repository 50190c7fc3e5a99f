//! The snapshot commands, as HBase's shell has them: `snapshot 't', 'name'`,
//! `list_snapshots` (a table of name and table with its creation time), `delete_snapshot
//! 'name'`, `clone_snapshot 'name', 'new_table'` and `restore_snapshot 'name'`.

use std::fmt::Write as _;

use super::client::Client;
use super::commands::{arg, db_err, CmdResult};
use super::parse::CommandLine;

/// The shell's words for a snapshot that is not there, as HBase's shell has them.
fn snap_err(name: &str) -> impl Fn(cellar_api::Error) -> String + '_ {
    move |e| {
        if e.kind() == cellar_api::ErrorKind::SnapshotNotFound {
            format!("Unknown snapshot {name}!")
        } else {
            db_err(e)
        }
    }
}

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
            let pattern = c.args.first().and_then(|v| v.text());
            let mut all = admin.list_snapshots().map_err(db_err)?;
            all.retain(|(n, _, _)| {
                pattern
                    .as_ref()
                    .is_none_or(|p| super::ddl::glob_match(p, n))
            });
            // The shell's two-column rows as it prints them to a file: unpadded.
            out.push_str("SNAPSHOT  TABLE + CREATION TIME\n");
            for (name, table, time) in &all {
                let _ = writeln!(out, " {name} {table} ({})", creation(*time));
            }
            out.push_str(&super::format::rows(all.len() as u64));
            let names: Vec<String> = all.iter().map(|(n, _, _)| format!("\"{n}\"")).collect();
            Ok(Some(format!("[{}]", names.join(", "))))
        }
        "delete_snapshot" => {
            let name = text(c, 0, "a snapshot name")?;
            admin.delete_snapshot(&name).map_err(snap_err(&name))?;
            Ok(None)
        }
        "clone_snapshot" => {
            let name = text(c, 0, "a snapshot name")?;
            let table = text(c, 1, "a table name")?;
            admin
                .clone_snapshot(&name, &table)
                .map_err(snap_err(&name))?;
            Ok(None)
        }
        "restore_snapshot" => {
            let name = text(c, 0, "a snapshot name")?;
            // HBase's Admin checks the table is disabled before asking the master.
            let table = admin
                .list_snapshots()
                .map_err(db_err)?
                .into_iter()
                .find(|(n, _, _)| *n == name)
                .map(|(_, t, _)| t);
            if let Some(t) = table {
                if admin.table_exists(&t).map_err(db_err)?
                    && admin.is_table_enabled(&t).map_err(db_err)?
                {
                    return Err(format!("Table {t} should be disabled!"));
                }
            }
            admin.restore_snapshot(&name).map_err(snap_err(&name))?;
            Ok(None)
        }
        other => Err(format!("Unknown command '{other}'. Try 'help'.")),
    }
}
