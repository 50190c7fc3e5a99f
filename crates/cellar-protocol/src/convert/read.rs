//! `Get`, `Scan` and `TimeRange` messages ↔ Cellar's reads. Options Cellar does not
//! serve (per-family time ranges, store limits and offsets, `closest_row_before`) are
//! refused with an error naming them.

use std::collections::BTreeSet;

use cellar_api::{Columns, Get, Scan, TimeRange};

use super::{b, filter_from_pb, filter_to_pb};
use crate::error::{ProtocolError, Result};
use crate::pb;

/// HBase's attribute marking a raw scan (`Scan.setRaw`).
const RAW: &str = "_raw_";

pub fn time_range_from_pb(tr: &pb::TimeRange) -> Result<TimeRange> {
    let min = tr.from.unwrap_or(0);
    let max = tr.to.unwrap_or(i64::MAX as u64);
    if min > i64::MAX as u64 || max > i64::MAX as u64 || min > max {
        return Err(ProtocolError::invalid(
            "TimeRange",
            format!("from {min} to {max}"),
        ));
    }
    Ok(TimeRange::new(min as i64, max as i64))
}

pub fn time_range_to_pb(tr: &TimeRange) -> pb::TimeRange {
    pb::TimeRange {
        from: Some(tr.min.max(0) as u64),
        to: Some(tr.max.max(0) as u64),
    }
}

fn columns_from(cols: &[pb::Column]) -> Columns {
    let mut out = Columns::new();
    for c in cols {
        if c.qualifier.is_empty() {
            out.insert(c.family.to_vec(), None);
        } else {
            let set = out
                .entry(c.family.to_vec())
                .or_insert_with(|| Some(BTreeSet::new()));
            let set = set.get_or_insert_with(BTreeSet::new);
            for q in &c.qualifier {
                set.insert(q.to_vec());
            }
        }
    }
    out
}

fn columns_to(cols: &Columns) -> Vec<pb::Column> {
    cols.iter()
        .map(|(f, qs)| pb::Column {
            family: b(f),
            qualifier: qs
                .as_ref()
                .map(|qs| qs.iter().map(|q| b(q)).collect())
                .unwrap_or_default(),
        })
        .collect()
}

fn refuse(set: bool, what: &'static str) -> Result<()> {
    if set {
        return Err(ProtocolError::invalid(what, "not supported by this server"));
    }
    Ok(())
}

pub fn get_from_pb(g: &pb::Get) -> Result<Get> {
    refuse(
        g.closest_row_before.unwrap_or(false),
        "Get.closest_row_before",
    )?;
    refuse(!g.cf_time_range.is_empty(), "Get.cf_time_range")?;
    refuse(
        g.store_limit.is_some_and(|l| l as i32 >= 0),
        "Get.store_limit",
    )?;
    refuse(g.store_offset.is_some_and(|o| o > 0), "Get.store_offset")?;
    let mut get = Get::new(g.row.to_vec());
    get.columns = columns_from(&g.column);
    if let Some(tr) = &g.time_range {
        get.time_range = time_range_from_pb(tr)?;
    }
    get.max_versions = g.max_versions.unwrap_or(1).max(1);
    get.check_existence_only = g.existence_only.unwrap_or(false);
    get.load_column_families_on_demand = g.load_column_families_on_demand;
    if let Some(f) = &g.filter {
        get.filter = Some(filter_from_pb(f)?);
    }
    Ok(get)
}

pub fn get_to_pb(g: &Get) -> pb::Get {
    pb::Get {
        row: b(&g.row),
        column: columns_to(&g.columns),
        filter: g.filter.as_ref().map(filter_to_pb),
        time_range: (!g.time_range.is_all()).then(|| time_range_to_pb(&g.time_range)),
        max_versions: Some(g.max_versions),
        existence_only: g.check_existence_only.then_some(true),
        load_column_families_on_demand: g.load_column_families_on_demand,
        ..Default::default()
    }
}

pub fn scan_from_pb(s: &pb::Scan) -> Result<Scan> {
    refuse(!s.cf_time_range.is_empty(), "Scan.cf_time_range")?;
    refuse(
        s.store_limit.is_some_and(|l| l as i32 >= 0),
        "Scan.store_limit",
    )?;
    refuse(s.store_offset.is_some_and(|o| o > 0), "Scan.store_offset")?;
    let mut scan = Scan::new();
    scan.start_row = s.start_row.as_deref().unwrap_or_default().to_vec();
    scan.start_inclusive = s.include_start_row.unwrap_or(true);
    scan.stop_row = s.stop_row.as_deref().unwrap_or_default().to_vec();
    scan.stop_inclusive = s.include_stop_row.unwrap_or(false);
    scan.columns = columns_from(&s.column);
    if let Some(tr) = &s.time_range {
        scan.time_range = time_range_from_pb(tr)?;
    }
    scan.max_versions = s.max_versions.unwrap_or(1).max(1);
    scan.raw = s.attribute.iter().any(|a| {
        a.name == RAW
            && a.value
                .as_ref()
                .is_some_and(|v| v.first().copied() == Some(1))
    });
    if let Some(f) = &s.filter {
        scan.filter = Some(filter_from_pb(f)?);
    }
    scan.batch = s.batch_size.filter(|&n| n > 0 && n as i32 > 0);
    scan.allow_partial_results = s.allow_partial_results.unwrap_or(false);
    scan.max_result_size = s.max_result_size.filter(|&n| n > 0 && n as i64 > 0);
    scan.caching = s.caching.filter(|&n| n > 0 && n as i32 > 0);
    scan.reversed = s.reversed.unwrap_or(false);
    scan.cache_blocks = s.cache_blocks.unwrap_or(true);
    scan.need_cursor_result = s.need_cursor_result.unwrap_or(false);
    scan.load_column_families_on_demand = s.load_column_families_on_demand;
    Ok(scan)
}

pub fn scan_to_pb(s: &Scan) -> pb::Scan {
    let mut attribute = Vec::new();
    if s.raw {
        attribute.push(pb::NameBytesPair {
            name: RAW.into(),
            value: Some(b(&[1])),
        });
    }
    pb::Scan {
        column: columns_to(&s.columns),
        attribute,
        start_row: (!s.start_row.is_empty()).then(|| b(&s.start_row)),
        stop_row: (!s.stop_row.is_empty()).then(|| b(&s.stop_row)),
        filter: s.filter.as_ref().map(filter_to_pb),
        time_range: (!s.time_range.is_all()).then(|| time_range_to_pb(&s.time_range)),
        max_versions: Some(s.max_versions),
        cache_blocks: Some(s.cache_blocks),
        batch_size: s.batch,
        max_result_size: s.max_result_size,
        reversed: Some(s.reversed),
        caching: s.caching,
        allow_partial_results: s.allow_partial_results.then_some(true),
        include_start_row: Some(s.start_inclusive),
        include_stop_row: Some(s.stop_inclusive),
        need_cursor_result: s.need_cursor_result.then_some(true),
        load_column_families_on_demand: s.load_column_families_on_demand,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cellar_api::FilterSpec;

    #[test]
    fn get_round_trips() {
        let g = Get::new("r")
            .add_family("f")
            .add_column("g", "q")
            .time_range(3, 9)
            .max_versions(4)
            .filter(FilterSpec::FirstKeyOnly)
            .load_column_families_on_demand(false);
        assert_eq!(get_from_pb(&get_to_pb(&g)).unwrap(), g);
    }

    #[test]
    fn scan_round_trips() {
        let s = Scan::new()
            .with_start_row("a", false)
            .with_stop_row("z", true)
            .add_family("f")
            .batch(3)
            .caching(10)
            .max_result_size(1000)
            .reversed(true)
            .raw(true)
            .allow_partial_results(true)
            .need_cursor_result(true)
            .load_column_families_on_demand(true);
        let mut back = scan_from_pb(&scan_to_pb(&s)).unwrap();
        back.limit = s.limit;
        assert_eq!(back, s);
    }

    #[test]
    fn refused_options_name_themselves() {
        let mut g = get_to_pb(&Get::new("r"));
        g.closest_row_before = Some(true);
        let e = get_from_pb(&g).unwrap_err().to_string();
        assert!(e.contains("closest_row_before"), "{e}");
        let bad = pb::TimeRange {
            from: Some(9),
            to: Some(3),
        };
        assert!(time_range_from_pb(&bad).is_err());
    }
}
