//! Runs one operation against one server and reduces what it answered to a comparable
//! outcome: every cell as (row, family, qualifier, timestamp, type, value), with
//! server-assigned timestamps (the two servers' clocks differ) shown as `NOW`, and
//! every error as its kind (the HBase exception class it came from).

use cellar::client::{Admin, Table};
use cellar_api::{
    Append, CheckAndMutate, Condition, Delete, FilterSpec, Get, Increment, Mutation, Put,
    RowMutations, RowResult, Scan,
};

use super::ops::{qual, row, value, Columns, DeleteKind, Op, PutCell, Read, FAMILIES};

/// Timestamps above this were given by a server's clock.
const CLOCK: i64 = 1_000_000_000_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellView(pub String);

#[derive(Debug, Clone)]
pub enum Outcome {
    Done,
    /// Results in the order returned (a scan's, or one Get's).
    Results(Vec<Vec<CellView>>),
    Checked(bool),
    /// The table's regions after a split or merge, by start row.
    Regions(Vec<String>),
    /// The exception class, and the message (shown through Debug, not compared).
    Failed(String, #[allow(dead_code)] String),
}

impl PartialEq for Outcome {
    fn eq(&self, other: &Outcome) -> bool {
        match (self, other) {
            (Outcome::Done, Outcome::Done) => true,
            (Outcome::Results(a), Outcome::Results(b)) => a == b,
            (Outcome::Checked(a), Outcome::Checked(b)) => a == b,
            (Outcome::Regions(a), Outcome::Regions(b)) => a == b,
            (Outcome::Failed(a, _), Outcome::Failed(b, _)) => a == b,
            _ => false,
        }
    }
}

/// Where HBase fails with an error of its own making rather than an answer: which
/// known HBase defect the outcome is (docs/compatibility.md lists them). Such an
/// operation is counted, not compared.
pub fn hbase_defect(op: &Op, outcome: &Outcome) -> Option<&'static str> {
    match outcome {
        // PrefixFilter.filterRowKey compares the prefix's length of bytes of a row key
        // without checking the row's length; a lazy-seek placeholder with an empty row
        // reaches it when a column scan stops on a tiny max result size. The client
        // sees the ArrayIndexOutOfBoundsException's message, or, when it surfaced on a
        // scanner's later call, a bare IOException.
        Outcome::Failed(class, msg)
            if class == "java.io.IOException"
                && (msg.contains("Index 0 out of bounds for length 0")
                    || (msg.trim() == "java.io.IOException" && scans_with_prefix(op))) =>
        {
            Some("PrefixFilter on an empty placeholder row")
        }
        _ => None,
    }
}

/// Whether `op` is a scan whose filter tree holds a PrefixFilter.
fn scans_with_prefix(op: &Op) -> bool {
    fn holds(f: &FilterSpec) -> bool {
        match f {
            FilterSpec::Prefix(_) => true,
            FilterSpec::WhileMatch(f) | FilterSpec::Skip(f) => holds(f),
            FilterSpec::List(_, fs) => fs.iter().any(holds),
            _ => false,
        }
    }
    match op {
        Op::Scan { read, .. } => read.filter.as_ref().is_some_and(holds),
        _ => false,
    }
}

fn failed(e: &cellar_api::Error) -> Outcome {
    Outcome::Failed(e.exception_class().to_string(), e.message().to_string())
}

fn show(bytes: &[u8]) -> String {
    if bytes.len() == 8 && !bytes.iter().all(|b| b.is_ascii_graphic()) {
        let mut a = [0u8; 8];
        a.copy_from_slice(bytes);
        return format!("#{}", i64::from_be_bytes(a));
    }
    cellar_types::to_string_binary(bytes)
}

fn cells(r: &RowResult) -> Vec<CellView> {
    r.cells
        .iter()
        .map(|c| {
            let ts = if c.timestamp() > CLOCK {
                "NOW".to_string()
            } else {
                c.timestamp().to_string()
            };
            CellView(format!(
                "{}/{}:{}/{}/{}={}",
                show(c.row()),
                show(c.family()),
                show(c.qualifier()),
                ts,
                c.cell_type().name(),
                show(c.value())
            ))
        })
        .collect()
}

fn fam(f: u8) -> &'static str {
    FAMILIES[f as usize % FAMILIES.len()]
}

fn add_cell(p: Put, c: &PutCell) -> Put {
    match c.ts {
        Some(ts) => p.add_column_at(fam(c.family), qual(c.qualifier), ts, value(c.value)),
        None => p.add_column(fam(c.family), qual(c.qualifier), value(c.value)),
    }
}

fn put_of(r: u8, c: &PutCell) -> Put {
    add_cell(Put::new(row(r)), c)
}

fn delete_of(r: u8, kind: &DeleteKind, ts: Option<i64>) -> Delete {
    let d = Delete::new(row(r));
    match (kind, ts) {
        (DeleteKind::Row, None) => d,
        (DeleteKind::Row, Some(ts)) => d.with_timestamp(ts),
        (DeleteKind::Family(f), None) => d.add_family(fam(*f)),
        (DeleteKind::Family(f), Some(ts)) => d.add_family_before(fam(*f), ts),
        (DeleteKind::FamilyVersion(f), ts) => d.add_family_version(fam(*f), ts.unwrap_or(1)),
        (DeleteKind::Columns(f, q), None) => d.add_columns(fam(*f), qual(*q)),
        (DeleteKind::Columns(f, q), Some(ts)) => d.add_columns_before(fam(*f), qual(*q), ts),
        (DeleteKind::Column(f, q), None) => d.add_column(fam(*f), qual(*q)),
        (DeleteKind::Column(f, q), Some(ts)) => d.add_column_version(fam(*f), qual(*q), ts),
    }
}

fn get_of(r: u8, read: &Read) -> Get {
    let mut g = Get::new(row(r)).max_versions(read.versions);
    g = match read.columns {
        Columns::All => g,
        Columns::Family(f) => g.add_family(fam(f)),
        Columns::Column(f, q) => g.add_column(fam(f), qual(q)),
    };
    if let Some((a, b)) = read.time_range {
        g = g.time_range(a, b);
    }
    if let Some(f) = &read.filter {
        g = g.filter(f.clone());
    }
    g
}

fn scan_of(read: &Read) -> Scan {
    let mut s = Scan::new().max_versions(read.versions);
    s = match read.columns {
        Columns::All => s,
        Columns::Family(f) => s.add_family(fam(f)),
        Columns::Column(f, q) => s.add_column(fam(f), qual(q)),
    };
    if let Some((a, b)) = read.time_range {
        s = s.time_range(a, b);
    }
    if let Some(f) = &read.filter {
        s = s.filter(f.clone());
    }
    s
}

fn outcome<T>(r: cellar_api::Result<T>, f: impl FnOnce(T) -> Outcome) -> Outcome {
    match r {
        Ok(v) => f(v),
        Err(e) => failed(&e),
    }
}

/// Runs `op` on `table` (named `name`).
pub fn apply(op: &Op, table: &dyn Table, admin: &dyn Admin, name: &str) -> Outcome {
    match op {
        Op::Put { row: r, cells } => {
            let p = cells.iter().fold(Put::new(row(*r)), add_cell);
            outcome(table.put(p), |_| Outcome::Done)
        }
        Op::Delete { row: r, kind, ts } => {
            outcome(table.delete(delete_of(*r, kind, *ts)), |_| Outcome::Done)
        }
        Op::Increment {
            row: r,
            family,
            qualifier,
            by,
        } => outcome(
            table.increment(Increment::new(row(*r)).add_column(
                fam(*family),
                qualifier.as_str(),
                *by,
            )),
            |res| Outcome::Results(vec![cells(&res)]),
        ),
        Op::Append {
            row: r,
            family,
            qualifier,
            value: v,
        } => outcome(
            table.append(Append::new(row(*r)).add_column(
                fam(*family),
                qual(*qualifier),
                value(*v),
            )),
            |res| Outcome::Results(vec![cells(&res)]),
        ),
        Op::CheckAndPut {
            row: r,
            family,
            qualifier,
            op,
            expected,
            put,
        } => {
            let cond = match expected {
                None => Condition::not_exists(fam(*family), qual(*qualifier)),
                Some(v) => Condition::matches(fam(*family), qual(*qualifier), *op, value(*v)),
            };
            let cam = CheckAndMutate::new(row(*r), cond).then(put_of(*r, put));
            outcome(table.check_and_mutate(&cam), |res| {
                Outcome::Checked(res.success)
            })
        }
        Op::RowMutations {
            row: r,
            put,
            delete: (f, q),
        } => {
            let rm = RowMutations::new(row(*r))
                .with(put_of(*r, put))
                .with(Delete::new(row(*r)).add_columns(fam(*f), qual(*q)));
            outcome(table.mutate_row(&rm), |_| Outcome::Done)
        }
        Op::MultiRow { rows } => {
            let ms: Vec<Mutation> = rows.iter().map(|(r, c)| put_of(*r, c).into()).collect();
            outcome(table.mutate_rows(&ms), |_| Outcome::Done)
        }
        Op::Get { row: r, read } => outcome(table.get(&get_of(*r, read)), |res| {
            Outcome::Results(vec![cells(&res)])
        }),
        Op::Scan {
            start,
            stop,
            reversed,
            raw,
            batch,
            caching,
            limit,
            max_result_size,
            allow_partial,
            read,
        } => {
            let mut s = scan_of(read).reversed(*reversed).raw(*raw);
            if let Some(a) = start {
                s = s.start_row(row(*a));
            }
            if let Some(b) = stop {
                s = s.stop_row(row(*b));
            }
            if let Some(b) = batch {
                s = s.batch(*b);
            }
            if let Some(c) = caching {
                s = s.caching(*c);
            }
            if let Some(l) = limit {
                s = s.limit(*l);
            }
            if let Some(m) = max_result_size {
                s = s.max_result_size(*m);
            }
            s = s.allow_partial_results(*allow_partial);
            let scanner = match table.scan(&s) {
                Ok(sc) => sc,
                Err(e) => return failed(&e),
            };
            let mut out = Vec::new();
            for r in scanner {
                match r {
                    Ok(r) => out.push(cells(&r)),
                    Err(e) => return failed(&e),
                }
            }
            if *allow_partial {
                // Where partial results break depends on each server's size estimates:
                // compare the cells, not the breaks.
                out = vec![out.into_iter().flatten().collect()];
            }
            Outcome::Results(out)
        }
        Op::Flush => outcome(admin.flush(name), |_| Outcome::Done),
        Op::Compact { major } => outcome(admin.compact(name, *major), |_| Outcome::Done),
        Op::Split { at } => match admin.split(name, Some(row(*at).as_bytes())) {
            Ok(_) => regions(admin, name),
            Err(e) => failed(&e),
        },
        Op::Merge { index } => {
            let list = match admin.list_regions(name) {
                Ok(l) => l,
                Err(e) => return failed(&e),
            };
            let i = usize::from(*index);
            if i + 1 >= list.len() {
                return Outcome::Done;
            }
            match admin.merge_regions(&list[i].info.encoded, &list[i + 1].info.encoded) {
                Ok(()) => regions(admin, name),
                Err(e) => failed(&e),
            }
        }
        Op::Disable => outcome(admin.disable_table(name), |_| Outcome::Done),
        Op::Enable => outcome(admin.enable_table(name), |_| Outcome::Done),
        Op::Alter {
            family,
            versions,
            min_versions,
            ttl,
            keep_deleted,
        } => {
            let (mut desc, _) = match admin.describe(name) {
                Ok(d) => d,
                Err(e) => return failed(&e),
            };
            let Some(f) = desc
                .families
                .iter_mut()
                .find(|f| f.name == fam(*family).as_bytes())
            else {
                return Outcome::Failed("no such family".into(), String::new());
            };
            f.versions = *versions;
            f.min_versions = *min_versions;
            f.ttl = ttl.unwrap_or(cellar_api::FOREVER);
            f.keep_deleted_cells = *keep_deleted;
            outcome(admin.modify_table(desc), |_| Outcome::Done)
        }
    }
}

/// The table's regions by start row, as its catalog lists them now.
fn regions(admin: &dyn Admin, name: &str) -> Outcome {
    match admin.list_regions(name) {
        Ok(list) => Outcome::Regions(
            list.iter()
                .filter(|r| !r.info.offline)
                .map(|r| cellar_types::to_string_binary(&r.info.start))
                .collect(),
        ),
        Err(e) => failed(&e),
    }
}
