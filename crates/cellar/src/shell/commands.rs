//! The shell's commands, each taking HBase shell arguments and writing HBase-shaped output.

use std::fmt::Write as _;

use cellar_region::{Append, Delete, Get, Increment, Put, Scan, TimeRange};
use cellar_types::{to_string_binary, LATEST_TIMESTAMP};

use super::client::Client;
use super::ddl;
use super::format;
use super::parse::{CommandLine, Value};
use super::regions;
use cellar_api::{Error, ErrorKind};

pub(super) type CmdResult = Result<Option<String>, String>;

/// An error as HBase's shell words it.
pub(super) fn db_err(e: Error) -> String {
    match (e.kind(), e.table()) {
        (ErrorKind::TableNotFound, Some(t)) => format!("Unknown table {t}!"),
        (ErrorKind::TableExists, Some(t)) => format!("Table already exists: {t}!"),
        (ErrorKind::TableNotEnabled, Some(t)) => format!("Table {t} is disabled!"),
        (ErrorKind::TableNotDisabled, Some(t)) => {
            format!("Table {t} is enabled. Disable it first.")
        }
        // The shell has no words of its own for these: it prints the server's
        // exception as Java shows it, class first.
        (ErrorKind::SnapshotExists | ErrorKind::SnapshotNotFound, _) => {
            format!("{}: {}", e.exception_class(), e.message())
        }
        _ => e.to_string(),
    }
}

pub(super) fn arg<'a>(c: &'a CommandLine, i: usize, what: &str) -> Result<&'a Value, String> {
    c.args
        .get(i)
        .ok_or_else(|| format!("wrong number of arguments: '{}' needs {what}", c.name))
}

pub(super) fn bytes(v: &Value, what: &str) -> Result<Vec<u8>, String> {
    match v {
        Value::Int(i) => Ok(i.to_string().into_bytes()),
        _ => v
            .bytes()
            .ok_or_else(|| format!("{what} must be a string, got {v}")),
    }
}

pub(super) fn table_name(c: &CommandLine) -> Result<String, String> {
    let v = arg(c, 0, "a table name")?;
    v.text()
        .filter(|_| matches!(v, Value::Str(_) | Value::Const(_)))
        .ok_or_else(|| format!("table name must be a string, got {v}"))
}

/// `family:qualifier` (or `family` alone).
pub(super) fn split_column(col: &[u8]) -> (Vec<u8>, Option<Vec<u8>>) {
    match col.iter().position(|b| *b == b':') {
        Some(i) => (col[..i].to_vec(), Some(col[i + 1..].to_vec())),
        None => (col.to_vec(), None),
    }
}

pub(super) fn int(v: &Value, what: &str) -> Result<i64, String> {
    v.int()
        .ok_or_else(|| format!("{what} must be an integer, got {v}"))
}

pub(super) fn time_range(v: &Value) -> Result<TimeRange, String> {
    match v {
        Value::Array(a) if a.len() == 2 => Ok(TimeRange::new(
            int(&a[0], "TIMERANGE")?,
            int(&a[1], "TIMERANGE")?,
        )),
        _ => Err(format!("TIMERANGE must be [min, max], got {v}")),
    }
}

pub(super) fn columns_of(v: &Value) -> Result<Vec<Vec<u8>>, String> {
    match v {
        Value::Array(items) => items.iter().map(|i| bytes(i, "column")).collect(),
        other => Ok(vec![bytes(other, "column")?]),
    }
}

/// Checks a hash's keys against the options a command understands.
pub(super) fn check_keys(h: &Value, allowed: &[&str], cmd: &str) -> Result<(), String> {
    if let Value::Hash(entries) = h {
        for (k, _) in entries {
            let key = k.text().unwrap_or_default().to_ascii_uppercase();
            if !allowed.contains(&key.as_str()) {
                return Err(format!("'{cmd}' does not support the option {key} (yet)"));
            }
        }
    }
    Ok(())
}

pub fn run(db: &Client, c: &CommandLine, out: &mut String, style: &format::Style) -> CmdResult {
    match c.name.as_str() {
        "help" => ddl::help(out),
        "status" => ddl::status(db, c, out),
        "list" => ddl::list(db, c, out),
        "create" => ddl::create(db, c, out),
        "alter" => ddl::alter(db, c, out),
        "describe" | "desc" => ddl::describe(db, c, out),
        "exists" => {
            let t = table_name(c)?;
            let e = db.table_exists(&t);
            let _ = writeln!(
                out,
                "Table {t} {} exist",
                if e { "does" } else { "does not" }
            );
            Ok(Some(e.to_string()))
        }
        "is_enabled" | "is_disabled" => {
            let t = table_name(c)?;
            let en = db.is_enabled(&t).map_err(db_err)?;
            let v = if c.name == "is_enabled" { en } else { !en };
            let _ = writeln!(out, "{v}");
            Ok(Some(v.to_string()))
        }
        "disable" => db
            .disable_table(&table_name(c)?)
            .map(|_| None)
            .map_err(db_err),
        "enable" => db
            .enable_table(&table_name(c)?)
            .map(|_| None)
            .map_err(db_err),
        "drop" => db.drop_table(&table_name(c)?).map(|_| None).map_err(db_err),
        "truncate" => {
            let t = table_name(c)?;
            let _ = writeln!(out, "Truncating '{t}' table (it may take a while):");
            let _ = writeln!(out, "Disabling table...");
            let _ = writeln!(out, "Truncating table...");
            db.truncate_table(&t).map(|_| None).map_err(db_err)
        }
        "put" => put(db, c),
        "get" => get(db, c, out, style),
        "delete" => delete(db, c, false),
        "deleteall" => delete(db, c, true),
        "incr" => incr(db, c, out),
        "get_counter" => get_counter(db, c, out),
        "append" => append(db, c, out),
        "scan" => scan(db, c, out, style),
        "count" => count(db, c, out),
        "flush" => db.flush(&table_name(c)?).map(|_| None).map_err(db_err),
        "list_regions" => regions::list_regions(db, c, out),
        "merge_region" => {
            let a = arg(c, 0, "two region names")?.text().unwrap_or_default();
            let b = arg(c, 1, "two region names")?.text().unwrap_or_default();
            db.merge_regions_named(&a, &b).map(|_| None).map_err(db_err)
        }
        "split" => {
            let t = table_name(c)?;
            let row = c.args.get(1).map(|v| bytes(v, "split row")).transpose()?;
            db.split(&t, row.as_deref()).map(|_| None).map_err(db_err)
        }
        "create_namespace"
        | "drop_namespace"
        | "list_namespace"
        | "list_namespace_tables"
        | "describe_namespace" => ddl::namespace(db, c, out),
        "compact" => db
            .compact(&table_name(c)?, false)
            .map(|_| None)
            .map_err(db_err),
        "major_compact" => db
            .compact(&table_name(c)?, true)
            .map(|_| None)
            .map_err(db_err),
        "snapshot" | "list_snapshots" | "delete_snapshot" | "clone_snapshot"
        | "restore_snapshot" => super::snapshots::command(db, c, out),
        "large_rows" => super::large_rows::large_rows(db, c, out),
        "hotspots" => super::hotspots::hotspots(db, c, out),
        "get_largelog_responses" => super::large_log::get_largelog_responses(db, c, out),
        other => Err(format!("Unknown command '{other}'. Try 'help'.")),
    }
}

fn put(db: &Client, c: &CommandLine) -> CmdResult {
    let t = db.table(&table_name(c)?).map_err(db_err)?;
    let row = bytes(arg(c, 1, "a row")?, "row")?;
    let (f, q) = split_column(&bytes(arg(c, 2, "a column")?, "column")?);
    let value = bytes(arg(c, 3, "a value")?, "value")?;
    let mut ts = LATEST_TIMESTAMP;
    for extra in &c.args[4..] {
        match extra {
            Value::Int(i) => ts = *i,
            Value::Hash(_) => check_keys(extra, &[], "put")?,
            other => return Err(format!("unexpected argument {other}")),
        }
    }
    t.put(Put::new(row).add_column_at(f, q.unwrap_or_default(), ts, value))
        .map_err(db_err)?;
    Ok(None)
}

fn add_columns_get(mut g: Get, cols: &[Vec<u8>]) -> Get {
    for col in cols {
        g = match split_column(col) {
            (f, Some(q)) => g.add_column(f, q),
            (f, None) => g.add_family(f),
        };
    }
    g
}

fn get(db: &Client, c: &CommandLine, out: &mut String, style: &format::Style) -> CmdResult {
    // As HBase's shell: the header first, then whatever goes wrong.
    out.push_str(&style.header("COLUMN", "CELL"));
    let t = db.table(&table_name(c)?).map_err(db_err)?;
    let row = bytes(arg(c, 1, "a row")?, "row")?;
    let mut g = Get::new(row);
    for extra in &c.args[2..] {
        match extra {
            Value::Hash(_) => {
                check_keys(
                    extra,
                    &[
                        "COLUMN",
                        "COLUMNS",
                        "VERSIONS",
                        "TIMERANGE",
                        "TIMESTAMP",
                        "FILTER",
                    ],
                    "get",
                )?;
                if let Some(v) = extra.get("FILTER") {
                    g = g.filter(filter_of(v)?);
                }
                if let Some(cols) = extra.get("COLUMN").or(extra.get("COLUMNS")) {
                    g = add_columns_get(g, &columns_of(cols)?);
                }
                if let Some(v) = extra.get("VERSIONS") {
                    g = g.max_versions(int(v, "VERSIONS")?.clamp(1, u32::MAX as i64) as u32);
                }
                if let Some(v) = extra.get("TIMERANGE") {
                    g.time_range = time_range(v)?;
                }
                if let Some(v) = extra.get("TIMESTAMP") {
                    g = g.timestamp(int(v, "TIMESTAMP")?);
                }
            }
            other => g = add_columns_get(g, &columns_of(other)?),
        }
    }
    let r = t.get(&g).map_err(db_err)?;
    for cell in &r.cells {
        out.push_str(&style.row_line(&format::column_name(cell), &style.cell_text(cell)));
    }
    out.push_str(&format::rows(u64::from(!r.cells.is_empty())));
    Ok(None)
}

/// `delete` and `deleteall` as HBase 2's shell builds them (`table.rb`
/// `_createdelete_internal`): `delete` removes one version — the newest, or exactly the
/// one at the timestamp given — of a column, or with a bare family the versions at that
/// timestamp in every column (DeleteFamilyVersion); `deleteall` removes every version up
/// to the timestamp of a column (DeleteColumn), a family (DeleteFamily), or with no
/// column or `''` the whole row; `deleteall 't', {ROWPREFIXFILTER => 'p'}` each row
/// with that prefix.
fn delete(db: &Client, c: &CommandLine, all: bool) -> CmdResult {
    let name = if all { "deleteall" } else { "delete" };
    let t = db.table(&table_name(c)?).map_err(db_err)?;
    let target = arg(c, 1, "a row")?;
    let mut column: Option<Vec<u8>> = None;
    let mut ts = LATEST_TIMESTAMP;
    for (i, extra) in c.args[2..].iter().enumerate() {
        match (i, extra) {
            (_, Value::Hash(_)) => check_keys(extra, &[], name)?,
            (0, other) => column = Some(bytes(other, "column")?),
            (1, Value::Int(n)) => ts = *n,
            (_, other) => return Err(format!("unexpected argument {other}")),
        }
    }
    if !all && column.is_none() {
        return Err("wrong number of arguments: delete needs a table, a row and a column".into());
    }
    let build = |row: Vec<u8>| -> Delete {
        let d = Delete::new(row).with_timestamp(ts);
        match column.as_deref() {
            None | Some(b"") => d,
            Some(col) => match (split_column(col), all) {
                ((f, Some(q)), true) => d.add_columns_before(f, q, ts),
                ((f, None), true) => d.add_family_before(f, ts),
                ((f, Some(q)), false) if ts == LATEST_TIMESTAMP => d.add_column(f, q),
                ((f, Some(q)), false) => d.add_column_version(f, q, ts),
                ((f, None), false) => d.add_family_version(f, ts),
            },
        }
    };
    if let Value::Hash(_) = target {
        check_keys(target, &["ROWPREFIXFILTER", "CACHE"], name)?;
        let prefix = target
            .get("ROWPREFIXFILTER")
            .ok_or("deleteall by row needs ROWPREFIXFILTER")?;
        let prefix = bytes(prefix, "ROWPREFIXFILTER")?;
        let scan = Scan::new()
            .with_row_prefix(prefix)
            .filter(cellar_region::FilterSpec::FirstKeyOnly);
        let rows: Vec<Vec<u8>> = t
            .scan(&scan)
            .map_err(db_err)?
            .map(|r| r.map(|r| r.row).map_err(db_err))
            .collect::<Result<_, _>>()?;
        for row in rows {
            t.delete(build(row)).map_err(db_err)?;
        }
        return Ok(None);
    }
    let row = bytes(target, "row")?;
    t.delete(build(row)).map_err(db_err)?;
    Ok(None)
}

fn incr(db: &Client, c: &CommandLine, out: &mut String) -> CmdResult {
    let t = db.table(&table_name(c)?).map_err(db_err)?;
    let row = bytes(arg(c, 1, "a row")?, "row")?;
    let (f, q) = split_column(&bytes(arg(c, 2, "a column")?, "column")?);
    let by = match c.args.get(3) {
        Some(v @ Value::Int(_)) => int(v, "increment")?,
        Some(Value::Hash(_)) | None => 1,
        Some(other) => return Err(format!("increment must be an integer, got {other}")),
    };
    let r = t
        .increment(Increment::new(row).add_column(f, q.unwrap_or_default(), by))
        .map_err(db_err)?;
    let v = r
        .cells
        .first()
        .and_then(|c| <[u8; 8]>::try_from(c.value()).ok())
        .map(i64::from_be_bytes)
        .unwrap_or(0);
    let _ = writeln!(out, "COUNTER VALUE = {v}");
    Ok(None)
}

fn get_counter(db: &Client, c: &CommandLine, out: &mut String) -> CmdResult {
    let t = db.table(&table_name(c)?).map_err(db_err)?;
    let row = bytes(arg(c, 1, "a row")?, "row")?;
    let (f, q) = split_column(&bytes(arg(c, 2, "a column")?, "column")?);
    let r = t
        .get(&Get::new(row).add_column(f, q.unwrap_or_default()))
        .map_err(db_err)?;
    match r.cells.first() {
        None => {
            let _ = writeln!(out, "No counter found at specified coordinates");
        }
        Some(cell) => {
            let v = <[u8; 8]>::try_from(cell.value())
                .map(i64::from_be_bytes)
                .map_err(|_| {
                    format!(
                        "Field is not a long, it's {} bytes wide",
                        cell.value().len()
                    )
                })?;
            let _ = writeln!(out, "COUNTER VALUE = {v}");
        }
    }
    Ok(None)
}

fn append(db: &Client, c: &CommandLine, out: &mut String) -> CmdResult {
    let t = db.table(&table_name(c)?).map_err(db_err)?;
    let row = bytes(arg(c, 1, "a row")?, "row")?;
    let (f, q) = split_column(&bytes(arg(c, 2, "a column")?, "column")?);
    let value = bytes(arg(c, 3, "a value")?, "value")?;
    let r = t
        .append(Append::new(row).add_column(f, q.unwrap_or_default(), value))
        .map_err(db_err)?;
    let v = r
        .cells
        .first()
        .map(|c| to_string_binary(c.value()))
        .unwrap_or_default();
    let _ = writeln!(out, "CURRENT VALUE = {v}");
    Ok(None)
}

fn build_scan(c: &CommandLine) -> Result<Scan, String> {
    let mut s = Scan::new();
    if let Some(h) = c.args.get(1) {
        check_keys(
            h,
            &[
                "STARTROW",
                "STOPROW",
                "ROWPREFIXFILTER",
                "COLUMNS",
                "COLUMN",
                "LIMIT",
                "VERSIONS",
                "TIMERANGE",
                "TIMESTAMP",
                "RAW",
                "CACHE",
                "INTERVAL",
                "BATCH",
                "MAXRESULTSIZE",
                "ALLOW_PARTIAL_RESULTS",
                "REVERSED",
                "FILTER",
                "CACHE_BLOCKS",
            ],
            &c.name,
        )?;
        if let Some(v) = h.get("STARTROW") {
            s.start_row = bytes(v, "STARTROW")?;
        }
        if let Some(v) = h.get("STOPROW") {
            s.stop_row = bytes(v, "STOPROW")?;
        }
        if let Some(v) = h.get("ROWPREFIXFILTER") {
            let p = bytes(v, "ROWPREFIXFILTER")?;
            s.start_row = p.clone();
            s.stop_row = prefix_stop(&p);
        }
        if let Some(v) = h.get("COLUMNS").or(h.get("COLUMN")) {
            for col in columns_of(v)? {
                s = match split_column(&col) {
                    (f, Some(q)) => s.add_column(f, q),
                    (f, None) => s.add_family(f),
                };
            }
        }
        if let Some(v) = h.get("LIMIT") {
            s = s.limit(int(v, "LIMIT")?.max(0) as u64);
        }
        if let Some(v) = h.get("VERSIONS") {
            s = s.max_versions(int(v, "VERSIONS")?.clamp(1, u32::MAX as i64) as u32);
        }
        if let Some(v) = h.get("TIMERANGE") {
            s.time_range = time_range(v)?;
        }
        if let Some(v) = h.get("TIMESTAMP") {
            s.time_range = TimeRange::at(int(v, "TIMESTAMP")?);
        }
        if let Some(v) = h.get("RAW") {
            s.raw = v.truthy().ok_or("RAW must be true or false")?;
        }
        if let Some(v) = h.get("BATCH") {
            s = s.batch(int(v, "BATCH")?.clamp(1, i32::MAX as i64) as u32);
        }
        if let Some(v) = h.get("CACHE") {
            s = s.caching(int(v, "CACHE")?.clamp(1, i32::MAX as i64) as u32);
        }
        if let Some(v) = h.get("MAXRESULTSIZE") {
            s = s.max_result_size(int(v, "MAXRESULTSIZE")?.max(1) as u64);
        }
        if let Some(v) = h.get("ALLOW_PARTIAL_RESULTS") {
            s = s.allow_partial_results(
                v.truthy()
                    .ok_or("ALLOW_PARTIAL_RESULTS must be true or false")?,
            );
        }
        if let Some(v) = h.get("REVERSED") {
            s = s.reversed(v.truthy().ok_or("REVERSED must be true or false")?);
        }
        if let Some(v) = h.get("FILTER") {
            s = s.filter(filter_of(v)?);
        }
        if let Some(v) = h.get("CACHE_BLOCKS") {
            s = s.cache_blocks(v.truthy().ok_or("CACHE_BLOCKS must be true or false")?);
        }
    }
    Ok(s)
}

/// A `FILTER => "..."` value in the filter language.
/// The string's bytes go to the parser unchanged, as HBase's shell hands them to
/// `ParseFilter` (binary comparators see exactly the bytes written).
fn filter_of(v: &Value) -> Result<cellar_region::FilterSpec, String> {
    let text = match v {
        Value::Str(b) => b,
        other => return Err(format!("FILTER must be a filter string, got {other}")),
    };
    cellar_region::parse_filter_bytes(text).map_err(|e| {
        // An unknown filter name in HBase's own words (its ParseFilter's message);
        // other mistakes with where they are.
        if e.message.starts_with("Filter Name ") {
            e.message
        } else {
            format!(
                "Incorrect filter string \"{}\": {e}",
                to_string_binary(text)
            )
        }
    })
}

/// The stop row of a prefix scan: the prefix with trailing 0xFF bytes removed and its last
/// byte incremented (empty = to the end).
fn prefix_stop(prefix: &[u8]) -> Vec<u8> {
    let mut stop = prefix.to_vec();
    while let Some(last) = stop.pop() {
        if last != 0xff {
            stop.push(last + 1);
            return stop;
        }
    }
    Vec::new()
}

fn scan(db: &Client, c: &CommandLine, out: &mut String, style: &format::Style) -> CmdResult {
    // As HBase's shell: the header first, then whatever goes wrong.
    out.push_str(&style.header("ROW", "COLUMN+CELL"));
    let t = db.table(&table_name(c)?).map_err(db_err)?;
    let s = build_scan(c)?;
    let mut rows = 0;
    for r in t.scan(&s).map_err(db_err)? {
        let r = r.map_err(db_err)?;
        // As HBase's shell, every Result counts (a row in BATCH fragments counts each).
        rows += 1;
        for cell in &r.cells {
            out.push_str(&style.row_line(
                &to_string_binary(&r.row),
                &format!(
                    "column={}, {}",
                    format::column_name(cell),
                    style.cell_text(cell)
                ),
            ));
        }
    }
    out.push_str(&format::rows(rows));
    Ok(None)
}

fn count(db: &Client, c: &CommandLine, out: &mut String) -> CmdResult {
    let t = db.table(&table_name(c)?).map_err(db_err)?;
    let s = build_scan(c)?;
    let interval = c
        .args
        .get(1)
        .and_then(|h| h.get("INTERVAL"))
        .and_then(|v| v.int())
        .unwrap_or(1000)
        .max(1) as u64;
    let mut rows = 0u64;
    for r in t.scan(&s).map_err(db_err)? {
        let r = r.map_err(|e| e.to_string())?;
        if r.partial {
            continue;
        }
        rows += 1;
        if rows.is_multiple_of(interval) {
            let _ = writeln!(
                out,
                "Current count: {rows}, row: {}",
                to_string_binary(&r.row)
            );
        }
    }
    out.push_str(&format::rows(rows));
    Ok(Some(rows.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_stop_rows() {
        assert_eq!(prefix_stop(b"abc"), b"abd");
        assert_eq!(prefix_stop(b"a\xff\xff"), b"b");
        assert_eq!(prefix_stop(b"\xff"), b"");
        assert_eq!(prefix_stop(b""), b"");
    }
}
