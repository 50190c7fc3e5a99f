//! `hbase:meta` as HBase clients read it, built from Cellar's catalog: one row per
//! region, keyed by its region name, with `info:regioninfo` (`PBUF` + RegionInfo),
//! `info:server`, `info:serverstartcode`, `info:seqnumDuringOpen`, `info:sn` and
//! `info:state`; and one row per table (keyed by its name) with `table:state` (a
//! bare TableState), which clients read to tell a disabled table from a moved region.
//! Rows are ordered and ranged with HBase's meta comparator (table, then start key,
//! then region id, each compared on its own), so `table,row,99999999999999` reversed
//! scans find the region holding `row`.

use std::cmp::Ordering;

use cellar_api::{Get, RowResult, Scan, ServerName};
use cellar_protocol::convert::region_info_to_pb;
use cellar_protocol::pb;
use cellar_protocol::region_name;
use cellar_types::{Cell, CellType};
use prost::Message;

use crate::master::Master;

const INFO: &[u8] = b"info";
const TABLE: &[u8] = b"table";

fn pbuf(m: &impl Message) -> Vec<u8> {
    let mut v = b"PBUF".to_vec();
    v.extend_from_slice(&m.encode_to_vec());
    v
}

/// Splits a meta row key into (table, start key, rest) at the first and last commas.
fn parts(row: &[u8]) -> (&[u8], Option<&[u8]>, Option<&[u8]>) {
    let Some(first) = row.iter().position(|&c| c == b',') else {
        return (row, None, None);
    };
    let rest = &row[first + 1..];
    match rest.iter().rposition(|&c| c == b',') {
        Some(last) => (&row[..first], Some(&rest[..last]), Some(&rest[last + 1..])),
        None => (&row[..first], Some(rest), None),
    }
}

/// HBase's `MetaCellComparator` row order.
pub fn compare_meta_rows(a: &[u8], b: &[u8]) -> Ordering {
    let (at, ak, ar) = parts(a);
    let (bt, bk, br) = parts(b);
    at.cmp(bt)
        .then_with(|| ak.cmp(&bk))
        .then_with(|| ar.cmp(&br))
}

fn cell(row: &[u8], family: &[u8], q: &[u8], ts: i64, v: &[u8]) -> Option<Cell> {
    Cell::new(row, family, q, ts, CellType::Put, v).ok()
}

/// Every meta row, in meta order.
pub fn rows(master: &Master, server: &ServerName, now: i64) -> Vec<RowResult> {
    let mut out = Vec::new();
    let mut tables = Vec::new();
    for e in master.catalog_entries() {
        if !tables
            .iter()
            .any(|(t, _): &(String, bool)| *t == e.info.table)
        {
            tables.push((e.info.table.clone(), e.enabled));
        }
        let row = region_name::region_name(&e.info.table, &e.info.start, e.info.id);
        let ts = now;
        let mut cells = vec![cell(
            &row,
            INFO,
            b"regioninfo",
            ts,
            &pbuf(&region_info_to_pb(&e.info)),
        )];
        // As HBase's: a region closed by a disable keeps the location it was last open
        // at (clients go there, meet NotServingRegionException, then read the table
        // state), with its state CLOSED.
        let closed_by_disable = e.server.is_none() && !e.enabled && !e.info.offline;
        if e.server.is_some() || closed_by_disable {
            let seq = (e.info.id.max(1) as u64).to_be_bytes();
            cells.push(cell(&row, INFO, b"seqnumDuringOpen", ts, &seq));
            cells.push(cell(&row, INFO, b"server", ts, server.address().as_bytes()));
            cells.push(cell(
                &row,
                INFO,
                b"serverstartcode",
                ts,
                &server.start_code.to_be_bytes(),
            ));
            let sn = format!("{},{},{}", server.host, server.port, server.start_code);
            cells.push(cell(&row, INFO, b"sn", ts, sn.as_bytes()));
            let state: &[u8] = if closed_by_disable {
                b"CLOSED"
            } else {
                b"OPEN"
            };
            cells.push(cell(&row, INFO, b"state", ts, state));
        } else {
            cells.push(cell(&row, INFO, b"state", ts, b"CLOSED"));
        }
        out.push(RowResult {
            row: row.clone(),
            cells: cells.into_iter().flatten().collect(),
            ..RowResult::default()
        });
    }
    for (t, enabled) in tables {
        let state = pb::TableState {
            state: if enabled {
                pb::table_state::State::Enabled
            } else {
                pb::table_state::State::Disabled
            } as i32,
        };
        let row = t.as_bytes().to_vec();
        // Unlike `info:regioninfo`, the table state carries no PBUF prefix.
        if let Some(c) = cell(&row, TABLE, b"state", now, &state.encode_to_vec()) {
            out.push(RowResult {
                row,
                cells: vec![c],
                ..RowResult::default()
            });
        }
    }
    out.sort_by(|a, b| compare_meta_rows(&a.row, &b.row));
    out
}

fn keep_families(r: RowResult, scan_families: &cellar_api::Columns) -> Option<RowResult> {
    if scan_families.is_empty() {
        return Some(r);
    }
    let cells: Vec<Cell> = r
        .cells
        .into_iter()
        .filter(|c| match scan_families.get(c.family()) {
            None => false,
            Some(None) => true,
            Some(Some(qs)) => qs.contains(c.qualifier()),
        })
        .collect();
    (!cells.is_empty()).then(|| {
        RowResult {
            cells,
            ..RowResult::default()
        }
        .with_row()
    })
}

trait WithRow {
    fn with_row(self) -> Self;
}

impl WithRow for RowResult {
    fn with_row(mut self) -> Self {
        self.row = self
            .cells
            .first()
            .map(|c| c.row().to_vec())
            .unwrap_or_default();
        self
    }
}

/// The meta rows a scan selects, in its direction.
pub fn scan(all: Vec<RowResult>, scan: &Scan) -> Vec<RowResult> {
    let in_range = |row: &[u8]| -> bool {
        let (lo, lo_incl, hi, hi_incl) = if scan.reversed {
            (
                &scan.stop_row,
                scan.stop_inclusive,
                &scan.start_row,
                scan.start_inclusive,
            )
        } else {
            (
                &scan.start_row,
                scan.start_inclusive,
                &scan.stop_row,
                scan.stop_inclusive,
            )
        };
        let above = lo.is_empty()
            || match compare_meta_rows(row, lo) {
                Ordering::Greater => true,
                Ordering::Equal => lo_incl,
                Ordering::Less => false,
            };
        let below = hi.is_empty()
            || match compare_meta_rows(row, hi) {
                Ordering::Less => true,
                Ordering::Equal => hi_incl,
                Ordering::Greater => false,
            };
        above && below
    };
    let mut rows: Vec<RowResult> = all
        .into_iter()
        .filter(|r| in_range(&r.row))
        .filter_map(|r| keep_families(r, &scan.columns))
        .collect();
    if scan.reversed {
        rows.reverse();
    }
    rows
}

/// A Get of one meta row.
pub fn get(all: Vec<RowResult>, get: &Get) -> RowResult {
    let found = all
        .into_iter()
        .find(|r| r.row == get.row)
        .and_then(|r| keep_families(r, &get.columns));
    match found {
        Some(r) if get.check_existence_only => RowResult {
            exists: Some(!r.cells.is_empty()),
            ..RowResult::default()
        },
        Some(r) => r,
        None => RowResult {
            exists: get.check_existence_only.then_some(false),
            ..RowResult::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_order_compares_parts() {
        // Bytewise "t,,1" > "t ,," but in meta order every row of t precedes "t ,,".
        assert_eq!(compare_meta_rows(b"t,,1", b"t ,,"), Ordering::Less);
        assert_eq!(compare_meta_rows(b"t,a,5", b"t,b,1"), Ordering::Less);
        assert_eq!(
            compare_meta_rows(b"t,a,5", b"t,a,99999999999999"),
            Ordering::Less
        );
        assert_eq!(compare_meta_rows(b"t", b"t,,1"), Ordering::Less);
        // A start key may hold commas: the region id is after the last one.
        assert_eq!(compare_meta_rows(b"t,a,b,5", b"t,a,c,5"), Ordering::Less);
    }
}
