//! The shell's data-definition and administration commands: help, status, list,
//! create, alter, describe.

use std::fmt::Write as _;

use cellar_region::{FamilyDescriptor, TableDescriptor};

use super::client::Client;
use super::commands::{arg, bytes, check_keys, columns_of, db_err, int, table_name, CmdResult};
use super::format;
use super::parse::{CommandLine, Value};

pub(super) fn help(out: &mut String) -> CmdResult {
    out.push_str(
        "Cellar shell: HBase shell commands on an embedded database.\n\n\
COMMAND GROUPS:\n\
  Group name: general\n\
  Commands: help, status, exit, quit\n\n\
  Group name: ddl\n\
  Commands: alter, create, describe, desc, disable, drop, enable, exists, is_disabled, is_enabled, list, truncate\n\n\
  Group name: namespace\n\
  Commands: create_namespace, describe_namespace, drop_namespace, list_namespace, list_namespace_tables\n\n\
  Group name: dml\n\
  Commands: append, count, delete, deleteall, get, get_counter, incr, put, scan\n\n\
  Group name: tools\n\
  Commands: compact, flush, list_regions, major_compact, merge_region, split\n\n\
Examples:\n\
  create 't', {NAME => 'd', VERSIONS => 3, DATA_BLOCK_ENCODING => 'FAST_DIFF'}\n\
  put 't', 'r1', 'd:q', 'value'\n\
  get 't', 'r1', {COLUMN => 'd:q', VERSIONS => 2}\n\
  scan 't', {STARTROW => 'a', STOPROW => 'm', LIMIT => 10}\n",
    );
    Ok(None)
}

pub(super) fn status(db: &Client, c: &CommandLine, out: &mut String) -> CmdResult {
    let tables = db.list_tables();
    let detailed = c
        .args
        .first()
        .and_then(|v| v.text())
        .is_some_and(|m| m.eq_ignore_ascii_case("detailed"));
    if detailed {
        let mut lines = Vec::new();
        let (mut regions, mut files, mut size, mut mem, mut reads, mut writes) =
            (0, 0, 0u64, 0u64, 0, 0);
        for t in &tables {
            for r in db.list_regions(t).unwrap_or_default() {
                regions += 1;
                files += r.store_files;
                size += r.store_files_size;
                mem += r.memstore_size;
                reads += r.read_requests;
                writes += r.write_requests;
                lines.push(format!("        \"{}\"", r.info.region_name()));
                lines.push(format!(
                    "            numberOfStorefiles={}, storefileSizeMB={}, memstoreSizeMB={}, readRequestsCount={}, writeRequestsCount={}{}",
                    r.store_files,
                    r.store_files_size >> 20,
                    r.memstore_size >> 20,
                    r.read_requests,
                    r.write_requests,
                    r.alarm.as_ref().map(|a| format!(", WARNING={a}")).unwrap_or_default()
                ));
            }
        }
        let _ = writeln!(out, "version {}", env!("CARGO_PKG_VERSION"));
        let _ = writeln!(out, "0 regionsInTransition");
        let _ = writeln!(out, "active master:  localhost:16000");
        let _ = writeln!(out, "0 backup masters");
        let _ = writeln!(out, "master coprocessors: []");
        let _ = writeln!(out, "1 live servers");
        let _ = writeln!(out, "    localhost:16020");
        let _ = writeln!(
            out,
            "        numberOfOnlineRegions={regions}, numberOfStorefiles={files}, storefileSizeMB={}, memstoreSizeMB={}, readRequestsCount={reads}, writeRequestsCount={writes}",
            size >> 20,
            mem >> 20
        );
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        let _ = writeln!(out, "0 dead servers");
        failed_regions(db, out);
        return Ok(None);
    }
    let mut regions = 0;
    for t in &tables {
        if db.is_enabled(t).unwrap_or(false) {
            regions += db.list_regions(t).map(|r| r.len()).unwrap_or(0);
        }
    }
    let _ = writeln!(
        out,
        "1 active master, 0 backup masters, 1 servers, 0 dead, {:.4} average load",
        regions as f64
    );
    failed_regions(db, out);
    Ok(None)
}

/// Regions that could not open, with the file and the reason (HBase's FAILED_OPEN).
fn failed_regions(db: &Client, out: &mut String) {
    let failed = db.failed_regions();
    if failed.is_empty() {
        return;
    }
    let _ = writeln!(out, "{} regions failed to open:", failed.len());
    for f in failed {
        let _ = writeln!(out, "    \"{}\" FAILED_OPEN: {}", f.region, f.reason);
    }
}

pub(super) fn list(db: &Client, c: &CommandLine, out: &mut String) -> CmdResult {
    let filter = c.args.first().and_then(|v| v.text());
    out.push_str("TABLE\n");
    let mut names = Vec::new();
    for t in db.list_tables() {
        if let Some(f) = &filter {
            if !glob_match(f, &t) {
                continue;
            }
        }
        let _ = writeln!(out, "{t}");
        names.push(format!("\"{t}\""));
    }
    out.push_str(&format::rows(names.len() as u64));
    Ok(Some(format!("[{}]", names.join(", "))))
}

/// HBase's `list` and `list_snapshots` take a Java regex that must match the whole
/// name (`Pattern.matcher(name).matches()`); the common syntax is the same here.
pub(super) fn glob_match(pattern: &str, name: &str) -> bool {
    match regex::Regex::new(&format!("^(?:{pattern})$")) {
        Ok(re) => re.is_match(name),
        Err(_) => pattern == name,
    }
}

const FAMILY_KEYS: &[&str] = &[
    "NAME",
    "VERSIONS",
    "MIN_VERSIONS",
    "TTL",
    "KEEP_DELETED_CELLS",
    "DATA_BLOCK_ENCODING",
    "COMPRESSION",
    "BLOCKSIZE",
    "BLOOMFILTER",
    "IN_MEMORY",
    "BLOCKCACHE",
    "REPLICATION_SCOPE",
];
const TABLE_KEYS: &[&str] = &[
    "DURABILITY",
    "MEMSTORE_FLUSHSIZE",
    "MAX_FILESIZE",
    "COMPACTION_ENABLED",
    "READONLY",
    "SPLIT_POLICY",
];

fn family_from_hash(h: &Value, f: &mut FamilyDescriptor) -> Result<(), String> {
    let Value::Hash(entries) = h else {
        return Err(format!("expected a family hash, got {h}"));
    };
    if let Some(Value::Hash(c)) = h.get("CONFIGURATION") {
        for (k, v) in c {
            f.configuration
                .insert(k.text().unwrap_or_default(), v.text().unwrap_or_default());
        }
    }
    for (k, v) in entries {
        let key = k.text().unwrap_or_default().to_ascii_uppercase();
        if key == "NAME" || key == "CONFIGURATION" || key == "METHOD" {
            continue;
        }
        if TABLE_KEYS.contains(&key.as_str()) {
            continue;
        }
        let val = v.text().ok_or_else(|| format!("bad value {v} for {key}"))?;
        f.set_attribute(&key, &val).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn table_attrs_from_hash(h: &Value, t: &mut TableDescriptor) -> Result<(), String> {
    if let Value::Hash(entries) = h {
        for (k, v) in entries {
            let key = k.text().unwrap_or_default().to_ascii_uppercase();
            if TABLE_KEYS.contains(&key.as_str()) {
                let val = v.text().ok_or_else(|| format!("bad value {v} for {key}"))?;
                t.set_attribute(&key, &val).map_err(|e| e.to_string())?;
            }
        }
    }
    Ok(())
}

pub(super) fn create(db: &Client, c: &CommandLine, out: &mut String) -> CmdResult {
    let name = table_name(c)?;
    let mut desc = TableDescriptor::new(name.clone());
    let mut splits: Vec<Vec<u8>> = Vec::new();
    for a in &c.args[1..] {
        match a {
            Value::Str(_) | Value::Const(_) => {
                desc.families
                    .push(FamilyDescriptor::new(bytes(a, "family")?));
            }
            Value::Hash(_) => {
                let mut allowed = FAMILY_KEYS.to_vec();
                allowed.extend_from_slice(TABLE_KEYS);
                allowed.extend_from_slice(&["CONFIGURATION", "SPLITS", "NUMREGIONS", "SPLITALGO"]);
                check_keys(a, &allowed, "create")?;
                table_attrs_from_hash(a, &mut desc)?;
                if a.get("NAME").is_none() {
                    if let Some(Value::Hash(conf)) = a.get("CONFIGURATION") {
                        for (k, v) in conf {
                            desc.configuration
                                .insert(k.text().unwrap_or_default(), v.text().unwrap_or_default());
                        }
                    }
                }
                if let Some(v) = a.get("SPLITS") {
                    splits = columns_of(v)?;
                }
                if let Some(n) = a.get("NUMREGIONS") {
                    let algo = a
                        .get("SPLITALGO")
                        .and_then(|v| v.text())
                        .ok_or("NUMREGIONS needs SPLITALGO")?;
                    splits = crate::master::catalog::split_keys(
                        &algo,
                        int(n, "NUMREGIONS")?.max(0) as u64,
                    )?;
                }
                if let Some(n) = a.get("NAME") {
                    let mut f = FamilyDescriptor::new(bytes(n, "NAME")?);
                    family_from_hash(a, &mut f)?;
                    desc.families.push(f);
                }
            }
            other => return Err(format!("unexpected argument {other}")),
        }
    }
    db.create_table_split(desc, splits).map_err(db_err)?;
    let _ = writeln!(out, "Created table {name}");
    Ok(Some(format!("Hbase::Table - {name}")))
}

pub(super) fn alter(db: &Client, c: &CommandLine, out: &mut String) -> CmdResult {
    let name = table_name(c)?;
    let specs: Vec<Value> = c.args[1..].to_vec();
    if specs.is_empty() {
        return Err("wrong number of arguments: alter needs a family or attribute hash".into());
    }
    db.alter_table(&name, |desc| {
        for spec in &specs {
            let to_err = |m: String| cellar_api::Error::invalid(m);
            match spec {
                Value::Str(_) | Value::Const(_) => {
                    let fname = spec.bytes().unwrap_or_default();
                    if desc.family(&fname).is_none() {
                        desc.families.push(FamilyDescriptor::new(fname));
                    }
                }
                Value::Hash(_) => {
                    if let Some(del) = spec.get("delete") {
                        let fname = del.bytes().unwrap_or_default();
                        desc.families.retain(|f| f.name != fname);
                        continue;
                    }
                    table_attrs_from_hash(spec, desc).map_err(to_err)?;
                    if spec.get("NAME").is_none() {
                        if let Some(Value::Hash(conf)) = spec.get("CONFIGURATION") {
                            for (k, v) in conf {
                                desc.configuration.insert(
                                    k.text().unwrap_or_default(),
                                    v.text().unwrap_or_default(),
                                );
                            }
                        }
                    }
                    let Some(n) = spec.get("NAME") else { continue };
                    let fname = n.bytes().unwrap_or_default();
                    if spec
                        .get("METHOD")
                        .and_then(|m| m.text())
                        .is_some_and(|m| m.eq_ignore_ascii_case("delete"))
                    {
                        desc.families.retain(|f| f.name != fname);
                        continue;
                    }
                    let pos = desc.families.iter().position(|f| f.name == fname);
                    let mut f = match pos {
                        Some(i) => desc.families[i].clone(),
                        None => FamilyDescriptor::new(fname),
                    };
                    family_from_hash(spec, &mut f).map_err(to_err)?;
                    match pos {
                        Some(i) => desc.families[i] = f,
                        None => desc.families.push(f),
                    }
                }
                other => return Err(to_err(format!("unexpected argument {other}"))),
            }
        }
        Ok(())
    })
    .map_err(db_err)?;
    out.push_str("Updating all regions with the new schema...\n1/1 regions updated.\nDone.\n");
    Ok(None)
}

pub(super) fn describe(db: &Client, c: &CommandLine, out: &mut String) -> CmdResult {
    let name = table_name(c)?;
    let (desc, enabled) = db.describe(&name).map_err(db_err)?;
    out.push_str(&desc.describe(enabled));
    let _ = write!(out, "{}", format::rows(desc.families.len() as u64));
    // HBase's shell reports quotas when its quota table exists; Cellar has none.
    out.push_str("Quota is disabled\n");
    Ok(None)
}

/// `create_namespace`, `drop_namespace`, `describe_namespace`, `list_namespace` and
/// `list_namespace_tables`, as HBase's shell prints them.
pub(super) fn namespace(db: &Client, c: &CommandLine, out: &mut String) -> CmdResult {
    let admin = db.admin();
    let ns = || -> Result<String, String> {
        let v = arg(c, 0, "a namespace name")?;
        v.text()
            .ok_or_else(|| format!("namespace name must be a string, got {v}"))
    };
    match c.name.as_str() {
        "create_namespace" => admin.create_namespace(&ns()?).map_err(db_err)?,
        "drop_namespace" => admin.delete_namespace(&ns()?).map_err(db_err)?,
        "describe_namespace" => {
            let n = ns()?;
            if !admin.list_namespaces().map_err(db_err)?.contains(&n) {
                return Err(format!("Unknown namespace {n}!"));
            }
            let _ = writeln!(out, "DESCRIPTION\n{{NAME => '{n}'}}");
        }
        "list_namespace" => {
            let all = admin.list_namespaces().map_err(db_err)?;
            out.push_str("NAMESPACE\n");
            for n in &all {
                let _ = writeln!(out, "{n}");
            }
            out.push_str(&format::rows(all.len() as u64));
        }
        _ => {
            let n = ns()?;
            let tables = admin.list_namespace_tables(&n).map_err(|e| {
                if e.kind() == cellar_api::ErrorKind::NamespaceNotFound {
                    format!("Unknown namespace {n}!")
                } else {
                    db_err(e)
                }
            })?;
            out.push_str("TABLE\n");
            for t in &tables {
                let q = t.split_once(':').map_or(t.as_str(), |(_, q)| q);
                let _ = writeln!(out, "{q}");
            }
            out.push_str(&format::rows(tables.len() as u64));
        }
    }
    Ok(None)
}
