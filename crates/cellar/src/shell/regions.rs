//! `list_regions`, printed as HBase's shell prints it: a right-aligned table of the
//! columns asked for (SERVER_NAME, REGION_NAME, START_KEY, END_KEY, SIZE, REQ,
//! LOCALITY by default), each as wide as its longest value; then, Cellar's own, a
//! warning for each region whose wide-row alarm is raised.

use std::fmt::Write as _;

use cellar_types::to_string_binary;

use super::client::Client;
use super::commands::{db_err, table_name, CmdResult};
use super::parse::{CommandLine, Value};

const COLUMNS: [(&str, usize); 7] = [
    ("SERVER_NAME", 12),
    ("REGION_NAME", 12),
    ("START_KEY", 10),
    ("END_KEY", 10),
    ("SIZE", 5),
    ("REQ", 5),
    ("LOCALITY", 10),
];

fn valid_columns() -> String {
    "Possible values are SERVER_NAME, REGION_NAME, START_KEY, END_KEY, SIZE, REQ, LOCALITY."
        .to_string()
}

/// The columns asked for (the third argument), with their starting widths.
fn columns(arg: Option<&Value>) -> Result<Vec<(&'static str, usize)>, String> {
    let Some(v) = arg.filter(|v| !matches!(v, Value::Nil)) else {
        return Ok(COLUMNS.to_vec());
    };
    let Value::Array(items) = v else {
        return Err(format!(
            "{v} must be an array of strings. {}",
            valid_columns()
        ));
    };
    let mut out: Vec<(&'static str, usize)> = Vec::new();
    for item in items {
        let name = item.text().unwrap_or_else(|| item.to_string());
        let Some(c) = COLUMNS.iter().find(|(c, _)| c.eq_ignore_ascii_case(&name)) else {
            return Err(format!("{name} is not a valid column. {}", valid_columns()));
        };
        // HBase keeps them in a hash keyed by name: a column asked twice shows once.
        if !out.iter().any(|(n, _)| n == &c.0) {
            out.push(*c);
        }
    }
    Ok(out)
}

/// The options (the second argument): a hash, or a server name alone.
fn options(arg: Option<&Value>) -> Result<(Option<String>, f64), String> {
    let mut server = None;
    let mut threshold = 1.0;
    match arg {
        None | Some(Value::Nil) => {}
        Some(Value::Hash(pairs)) => {
            for (k, v) in pairs {
                match k.text().as_deref() {
                    Some("SERVER_NAME") => server = v.text(),
                    Some("LOCALITY_THRESHOLD") => {
                        let Value::Float(f) = v else {
                            return Err("LOCALITY_THRESHOLD must be a float value".into());
                        };
                        if !(0.0..=1.0).contains(f) {
                            return Err(
                                "LOCALITY_THRESHOLD must be between 0 and 1.0, inclusive".into()
                            );
                        }
                        threshold = *f;
                    }
                    _ => {}
                }
            }
        }
        Some(v) => server = v.text(),
    }
    Ok((server, threshold))
}

pub(super) fn list_regions(db: &Client, c: &CommandLine, out: &mut String) -> CmdResult {
    let name = table_name(c)?;
    let (server_filter, threshold) = options(c.args.get(1))?;
    let mut cols = columns(c.args.get(2))?;
    let (_, enabled) = db.describe(&name).map_err(db_err)?;
    if !enabled {
        return Err(format!("Table {name} must be enabled."));
    }
    let regions = db.list_regions(&name).map_err(db_err)?;
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut alarms = Vec::new();
    for r in regions.iter().filter(|r| !r.info.offline) {
        let Some(server) = &r.server else {
            return Err(
                "Some regions might be splitting or merging or transitioning due to other reasons"
                    .into(),
            );
        };
        let server = server.to_string();
        if server_filter
            .as_ref()
            .is_some_and(|s| !server.starts_with(s))
        {
            continue;
        }
        // A region's files are on this server's own disk: all local.
        let locality = 1.0;
        if locality > threshold {
            continue;
        }
        let row: Vec<String> = cols
            .iter()
            .map(|(c, _)| match *c {
                "SERVER_NAME" => server.clone(),
                "REGION_NAME" => r.info.region_name(),
                "START_KEY" => to_string_binary(&r.info.start),
                "END_KEY" => to_string_binary(&r.info.end),
                "SIZE" => (r.store_files_size >> 20).to_string(),
                "REQ" => (r.read_requests + r.write_requests).to_string(),
                _ => format!("{locality:?}"),
            })
            .collect();
        for (w, v) in cols.iter_mut().zip(&row) {
            w.1 = w.1.max(v.len());
        }
        rows.push(row);
        if let Some(a) = &r.alarm {
            alarms.push(format!("WARNING: region {} {}", r.info.region_name(), a));
        }
    }
    let line = |out: &mut String, cells: &mut dyn Iterator<Item = (String, usize)>| {
        for (v, w) in cells {
            let _ = write!(out, " {v:>w$} |");
        }
        out.push('\n');
    };
    line(out, &mut cols.iter().map(|(c, w)| (c.to_string(), *w)));
    line(out, &mut cols.iter().map(|(_, w)| ("-".repeat(*w), *w)));
    for row in &rows {
        line(out, &mut row.iter().cloned().zip(cols.iter().map(|c| c.1)));
    }
    let _ = writeln!(out, " {} rows", rows.len());
    for a in alarms {
        let _ = writeln!(out, "{a}");
    }
    Ok(None)
}
