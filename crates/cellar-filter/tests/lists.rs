#![allow(clippy::unwrap_used)]
//! FilterList's row hook as HBase 2.6 runs it: the members' `filterRow` are asked in
//! order until one decides the list, so a PageFilter after a member that already
//! decided a row does not count that row (found by the HBase oracle, seed 1004).

use cellar_filter::{build, Comparator, CompareOp, FilterSpec, ListOp};
use cellar_types::Cell;

/// Runs rows r0..r{n} of one cell each (column `a:q`, or `a:p` where `other` says)
/// through `spec` as a region scanner does (reset, filterCell, filterRowCells,
/// filterRow); the rows kept.
fn rows_kept(spec: &FilterSpec, n: u8, other: impl Fn(u8) -> bool) -> Vec<String> {
    let mut f = build(spec).unwrap();
    let mut kept = Vec::new();
    for r in 0..n {
        if f.filter_all_remaining() {
            break;
        }
        f.reset();
        let row = format!("r{r}");
        let q = if other(r) { "p" } else { "q" };
        let cell = Cell::put(row.as_str(), "a", q, 14, "v").unwrap();
        let mut cells = Vec::new();
        if f.filter_cell(&cell).includes() {
            cells.push(cell);
        }
        f.filter_row_cells(&mut cells);
        if !cells.is_empty() && !f.filter_row() {
            kept.push(row);
        }
    }
    kept
}

#[test]
fn or_list_stops_asking_at_the_first_member_keeping_the_row() {
    // Timestamps keeps every row (its filterRow is false), so PageFilter is never
    // asked and never counts: every row passes.
    let spec = FilterSpec::List(
        ListOp::MustPassOne,
        vec![FilterSpec::Timestamps(vec![29, 14]), FilterSpec::Page(2)],
    );
    assert_eq!(rows_kept(&spec, 4, |_| false), ["r0", "r1", "r2", "r3"]);
}

#[test]
fn and_list_stops_asking_at_the_first_member_dropping_the_row() {
    // r0 and r1 lack a:q, so the SingleColumnValueFilter drops them and the page is
    // not asked about them: it counts r2 and r3, and ends the scan after them.
    let spec = FilterSpec::List(
        ListOp::MustPassAll,
        vec![
            FilterSpec::SingleColumnValue {
                family: b"a".to_vec(),
                qualifier: b"q".to_vec(),
                op: CompareOp::Equal,
                comparator: Comparator::Binary(b"v".to_vec()),
                filter_if_missing: true,
                latest_version_only: true,
                exclude: false,
            },
            FilterSpec::Page(2),
        ],
    );
    assert_eq!(rows_kept(&spec, 6, |r| r < 2), ["r2", "r3"]);
}
