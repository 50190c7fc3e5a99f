#![allow(clippy::unwrap_used)]
//! Every filter against HBase's documented behaviour (§9), on data spread over store files
//! and the MemStore, through the filter language.

mod common;

use cellar_region::{parse_filter, Config, FamilyDescriptor, Get, Put, Scan, TableDescriptor};
use common::Harness;

/// Rows r0..r4, families a and b, qualifiers q0..q5; values "v<row><q>"; two versions
/// (ts 1 and 2) of each a:q cell, the newer with an upper-case value.
fn harness() -> Harness {
    let mut a = FamilyDescriptor::new("a");
    a.versions = 3;
    let h = Harness::new(
        TableDescriptor::new("t")
            .with_family(a)
            .with_family(FamilyDescriptor::new("b")),
        Config::default(),
    );
    for r in 0..5 {
        for q in 0..6 {
            let row = format!("r{r}");
            h.region
                .put(Put::new(row.clone()).add_column_at(
                    "a",
                    format!("q{q}"),
                    1,
                    format!("v{r}{q}"),
                ))
                .unwrap();
            h.region
                .put(Put::new(row.clone()).add_column_at(
                    "a",
                    format!("q{q}"),
                    2,
                    format!("V{r}{q}"),
                ))
                .unwrap();
            h.region
                .put(Put::new(row).add_column_at("b", format!("q{q}"), 1, format!("b{r}{q}")))
                .unwrap();
        }
        if r == 2 {
            h.region.flush().unwrap();
        }
    }
    h
}

/// "row/fam:qual@ts=value" for every cell a scan with `filter` returns.
fn scan(h: &Harness, filter: &str, versions: u32) -> Vec<String> {
    let s = Scan::new()
        .max_versions(versions)
        .filter(parse_filter(filter).unwrap());
    h.region
        .scanner(&s)
        .unwrap()
        .flat_map(|r| r.unwrap().cells)
        .map(|c| {
            format!(
                "{}/{}:{}@{}={}",
                String::from_utf8_lossy(c.row()),
                String::from_utf8_lossy(c.family()),
                String::from_utf8_lossy(c.qualifier()),
                c.timestamp(),
                String::from_utf8_lossy(c.value())
            )
        })
        .collect()
}

fn rows(cells: &[String]) -> Vec<String> {
    let mut r: Vec<String> = cells
        .iter()
        .map(|c| c.split('/').next().unwrap().to_string())
        .collect();
    r.dedup();
    r
}

#[test]
fn row_filters() {
    let h = harness();
    assert_eq!(rows(&scan(&h, "PrefixFilter('r3')", 1)), vec!["r3"]);
    assert_eq!(
        rows(&scan(&h, "RowFilter(<, 'binary:r2')", 1)),
        vec!["r0", "r1"]
    );
    assert_eq!(
        rows(&scan(&h, "RowFilter(>=, 'binaryprefix:r3')", 1)),
        vec!["r3", "r4"]
    );
    assert_eq!(
        rows(&scan(&h, "RowFilter(=, 'regexstring:r[13]')", 1)),
        vec!["r1", "r3"]
    );
    assert_eq!(
        rows(&scan(&h, "RowFilter(!=, 'substring:R2')", 1)),
        vec!["r0", "r1", "r3", "r4"]
    );
    assert_eq!(
        rows(&scan(&h, "InclusiveStopFilter('r2')", 1)),
        vec!["r0", "r1", "r2"]
    );
    // PageFilter: rows per region.
    assert_eq!(rows(&scan(&h, "PageFilter(2)", 1)), vec!["r0", "r1"]);
    // FirstKeyOnlyFilter: one cell per row, the first.
    assert_eq!(
        scan(&h, "FirstKeyOnlyFilter()", 1),
        (0..5)
            .map(|r| format!("r{r}/a:q0@2=V{r}0"))
            .collect::<Vec<_>>()
    );
    // WHILE stops the scan at the first failing row; SKIP drops a row with any failing cell.
    assert_eq!(
        rows(&scan(&h, "WHILE RowFilter(!=, 'binary:r2')", 1)),
        vec!["r0", "r1"]
    );
    assert_eq!(
        rows(&scan(&h, "SKIP ValueFilter(!=, 'binary:V31')", 1)),
        vec!["r0", "r1", "r2", "r4"]
    );
}

#[test]
fn column_filters() {
    let h = harness();
    let c = scan(&h, "PrefixFilter('r1') AND ColumnPrefixFilter('q2')", 1);
    assert_eq!(c, vec!["r1/a:q2@2=V12", "r1/b:q2@1=b12"]);
    let c = scan(
        &h,
        "PrefixFilter('r1') AND MultipleColumnPrefixFilter('q4', 'q1')",
        1,
    );
    assert_eq!(
        c,
        vec![
            "r1/a:q1@2=V11",
            "r1/a:q4@2=V14",
            "r1/b:q1@1=b11",
            "r1/b:q4@1=b14"
        ]
    );
    let c = scan(
        &h,
        "PrefixFilter('r0') AND ColumnRangeFilter('q1', false, 'q3', true)",
        1,
    );
    assert_eq!(
        c,
        vec![
            "r0/a:q2@2=V02",
            "r0/a:q3@2=V03",
            "r0/b:q2@1=b02",
            "r0/b:q3@1=b03"
        ]
    );
    let c = scan(
        &h,
        "PrefixFilter('r0') AND QualifierFilter(=, 'binary:q5')",
        1,
    );
    assert_eq!(c, vec!["r0/a:q5@2=V05", "r0/b:q5@1=b05"]);
    let c = scan(
        &h,
        "PrefixFilter('r0') AND FamilyFilter(=, 'binary:b') AND ColumnPrefixFilter('q0')",
        1,
    );
    assert_eq!(c, vec!["r0/b:q0@1=b00"]);
    // KeyOnlyFilter rewrites values; with lenAsValue the value is the 4-byte length.
    let c = scan(
        &h,
        "PrefixFilter('r0') AND ColumnPrefixFilter('q0') AND KeyOnlyFilter(true)",
        1,
    );
    assert_eq!(
        c[0],
        format!("r0/a:q0@2={}", String::from_utf8_lossy(&3i32.to_be_bytes()))
    );
    // TimestampsFilter picks versions.
    let c = scan(
        &h,
        "PrefixFilter('r0') AND ColumnPrefixFilter('q0') AND TimestampsFilter(1)",
        3,
    );
    assert_eq!(c, vec!["r0/a:q0@1=v00", "r0/b:q0@1=b00"]);
}

#[test]
fn column_pagination_offset_and_cursor() {
    let h = harness();
    // The row has 12 columns (6 in a, 6 in b); pages count across families.
    let c = scan(&h, "PrefixFilter('r4') AND ColumnPaginationFilter(3, 4)", 1);
    assert_eq!(c, vec!["r4/a:q4@2=V44", "r4/a:q5@2=V45", "r4/b:q0@1=b40"]);
    // Only the newest version of each column counts, even when more are read.
    let c = scan(&h, "PrefixFilter('r4') AND ColumnPaginationFilter(2, 0)", 3);
    assert_eq!(c, vec!["r4/a:q0@2=V40", "r4/a:q1@2=V41"]);
    // The cursor form: the offset column itself is included.
    let s = Scan::new()
        .with_row_prefix("r4")
        .filter(cellar_region::FilterSpec::ColumnPagination {
            limit: 2,
            offset: 0,
            column_offset: Some(b"q3".to_vec()),
        });
    let cells: Vec<String> = h
        .region
        .scanner(&s)
        .unwrap()
        .flat_map(|r| r.unwrap().cells)
        .map(|c| {
            format!(
                "{}:{}",
                String::from_utf8_lossy(c.family()),
                String::from_utf8_lossy(c.qualifier())
            )
        })
        .collect();
    assert_eq!(cells, vec!["a:q3", "a:q4"]);
    // ColumnCountGetFilter ends the scan after the first row's columns.
    let c = scan(&h, "ColumnCountGetFilter(2)", 1);
    assert_eq!(c, vec!["r0/a:q0@2=V00", "r0/a:q1@2=V01"]);
}

#[test]
fn value_filters_run_before_version_counting() {
    let h = harness();
    // The newest version (upper case) fails; the older one is returned instead.
    let c = scan(
        &h,
        "PrefixFilter('r1') AND ColumnPrefixFilter('q1') AND ValueFilter(=, 'regexstring:^v')",
        1,
    );
    assert_eq!(c, vec!["r1/a:q1@1=v11"]);
    let c = scan(&h, "PrefixFilter('r1') AND ValueFilter(=, 'binary:b13')", 1);
    assert_eq!(c, vec!["r1/b:q3@1=b13"]);
}

#[test]
fn single_column_value_and_dependent_column() {
    let h = harness();
    // Rows whose a:q0 (newest) equals V20: only r2, all its cells.
    let c = scan(&h, "SingleColumnValueFilter('a', 'q0', =, 'binary:V20')", 1);
    assert_eq!(rows(&c), vec!["r2"]);
    assert_eq!(c.len(), 12);
    // The Exclude form drops the tested column.
    let c = scan(
        &h,
        "SingleColumnValueExcludeFilter('a', 'q0', =, 'binary:V20')",
        1,
    );
    assert_eq!(c.len(), 11);
    assert!(!c.iter().any(|x| x.contains("a:q0")));
    // A missing column passes unless filterIfMissing.
    let c = scan(&h, "SingleColumnValueFilter('a', 'zz', =, 'binary:x')", 1);
    assert_eq!(rows(&c).len(), 5);
    let c = scan(
        &h,
        "SingleColumnValueFilter('a', 'zz', =, 'binary:x', true, true)",
        1,
    );
    assert!(c.is_empty());
    // latestVersionOnly=false: an older matching version keeps the row.
    let c = scan(
        &h,
        "SingleColumnValueFilter('a', 'q0', =, 'binary:v30', false, false)",
        3,
    );
    assert_eq!(rows(&c), vec!["r3"]);
    // DependentColumnFilter keeps cells sharing a timestamp with the reference column.
    let c = scan(
        &h,
        "PrefixFilter('r0') AND DependentColumnFilter('a', 'q0', true)",
        3,
    );
    assert!(c.iter().all(|x| !x.contains("a:q0")));
    assert!(c.iter().any(|x| x.contains("@2=")) && c.iter().any(|x| x.contains("@1=")));
}

#[test]
fn filter_lists_and_or() {
    let h = harness();
    let c = scan(&h, "PrefixFilter('r0') AND (QualifierFilter(=, 'binary:q1') OR QualifierFilter(=, 'binary:q4'))", 1);
    assert_eq!(
        c,
        vec![
            "r0/a:q1@2=V01",
            "r0/a:q4@2=V04",
            "r0/b:q1@1=b01",
            "r0/b:q4@1=b04"
        ]
    );
    let c = scan(
        &h,
        "(PrefixFilter('r1') OR PrefixFilter('r3')) AND FirstKeyOnlyFilter()",
        1,
    );
    assert_eq!(rows(&c), vec!["r1", "r3"]);
    // OR of hinting filters seeks to the smaller hint.
    let c = scan(&h, "PrefixFilter('r2') AND (ColumnRangeFilter('q4', true, 'q4', true) OR ColumnPrefixFilter('q1'))", 1);
    assert_eq!(
        c,
        vec![
            "r2/a:q1@2=V21",
            "r2/a:q4@2=V24",
            "r2/b:q1@1=b21",
            "r2/b:q4@1=b24"
        ]
    );
}

/// HBase 2.6's PrefixFilter answers `filterRowKey` with "passed" only and `filterRow`
/// with "missed the prefix": in an OR list beside a member that includes cells but
/// drops the row (SKIP), rows outside the prefix still go, in either direction.
#[test]
fn prefix_in_an_or_list_drops_rows_outside_it_by_filter_row() {
    let h = harness();
    let f = "(PrefixFilter('r2') OR SKIP ColumnCountGetFilter(4))";
    assert_eq!(rows(&scan(&h, f, 1)), vec!["r2"]);
    let reversed: Vec<String> = h
        .region
        .scanner(&Scan::new().reversed(true).filter(parse_filter(f).unwrap()))
        .unwrap()
        .map(|r| String::from_utf8_lossy(&r.unwrap().row).into_owned())
        .collect();
    assert_eq!(reversed, vec!["r2"]);
    // A prefix alone, reversed: the rows past it seek by its hint, none is returned.
    let alone: Vec<String> = h
        .region
        .scanner(
            &Scan::new()
                .reversed(true)
                .filter(parse_filter("PrefixFilter('r3')").unwrap()),
        )
        .unwrap()
        .map(|r| String::from_utf8_lossy(&r.unwrap().row).into_owned())
        .collect();
    assert_eq!(alone, vec!["r3"]);
}

/// In the empty qualifier (where a family's delete markers live) HBase's "next column"
/// is only the next cell, which the filter is asked about again: a raw scan paging
/// past one column returns a row's second family marker (found by the HBase oracle).
#[test]
fn column_pagination_counts_each_marker_of_the_empty_qualifier() {
    use cellar_region::Delete;
    let h = harness();
    h.region
        .delete(Delete::new("r9").add_family_version("a", 28))
        .unwrap();
    h.region
        .delete(Delete::new("r9").add_family_before("a", 18))
        .unwrap();
    let s = Scan::new()
        .start_row("r9")
        .raw(true)
        .time_range(9, 39)
        .filter(parse_filter("ColumnPaginationFilter(1, 1)").unwrap());
    let got: Vec<String> = h
        .region
        .scanner(&s)
        .unwrap()
        .flat_map(|r| r.unwrap().cells)
        .map(|c| {
            format!(
                "{}/{}/{:?}",
                String::from_utf8_lossy(c.qualifier()),
                c.timestamp(),
                c.cell_type()
            )
        })
        .collect();
    assert_eq!(got, vec!["/18/DeleteFamily"]);
}

#[test]
fn gets_take_filters_too() {
    let h = harness();
    let g = Get::new("r2").filter(parse_filter("ColumnPrefixFilter('q3')").unwrap());
    let r = h.region.get(&g).unwrap();
    assert_eq!(r.cells.len(), 2);
    let g = Get::new("r2").filter(parse_filter("ColumnCountGetFilter(3)").unwrap());
    assert_eq!(h.region.get(&g).unwrap().cells.len(), 3);
}
