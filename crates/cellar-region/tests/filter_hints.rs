#![allow(clippy::unwrap_used)]
//! Where a filter's SEEK_NEXT_USING_HINT leaves a store, as HBase's `StoreScanner`
//! does: a forward scan seeks to the hint (past the row when the hint is), a reversed
//! scan steps to the next cell of its row and asks the filter about it.

mod common;

use cellar_filter::{FilterSpec, ListOp};
use cellar_region::{Config, FamilyDescriptor, Put, Scan, TableDescriptor};
use common::Harness;

fn harness(families: &[&str], versions: u32) -> Harness {
    let mut table = TableDescriptor::new("t");
    for f in families {
        let mut d = FamilyDescriptor::new(*f);
        d.versions = versions;
        table = table.with_family(d);
    }
    Harness::new(table, Config::default())
}

fn put(h: &Harness, row: &str, fam: &str, qual: &str, ts: i64) {
    h.region
        .put(Put::new(row).add_column_at(fam, qual, ts, format!("{row}{fam}{qual}{ts}")))
        .unwrap();
}

/// "row/fam:qual@ts" for every cell a scan returns.
fn scan(h: &Harness, s: &Scan) -> Vec<String> {
    h.region
        .scanner(s)
        .unwrap()
        .flat_map(|r| r.unwrap().cells)
        .map(|c| {
            format!(
                "{}/{}:{}@{}",
                String::from_utf8_lossy(c.row()),
                String::from_utf8_lossy(c.family()),
                String::from_utf8_lossy(c.qualifier()),
                c.timestamp()
            )
        })
        .collect()
}

fn or(members: Vec<FilterSpec>) -> FilterSpec {
    FilterSpec::List(ListOp::MustPassOne, members)
}

/// An OR list remembers each member's last hint and answers cells before it without
/// asking the member again. Reversed, the store does not follow a hint within its row:
/// the next cell (`b:a`, after the empty qualifier hinted at `b:n`) is still put to the
/// list, which now asks the member afresh and includes it. Forward, the store seeks.
#[test]
fn a_reversed_scan_asks_about_the_cells_a_hint_within_the_row_passes() {
    let h = harness(&["a", "b"], 1);
    for (fam, qual) in [("a", "a"), ("a", "b"), ("a", "n"), ("b", ""), ("b", "a")] {
        put(&h, "r2", fam, qual, 5);
    }
    let filter = or(vec![FilterSpec::MultipleColumnPrefix(vec![
        b"a".to_vec(),
        b"n".to_vec(),
    ])]);
    let forward = scan(&h, &Scan::new().filter(filter.clone()));
    assert_eq!(forward, vec!["r2/a:a@5", "r2/a:n@5", "r2/b:a@5"]);
    // Reversed, the list's remembered hint (a:n, turned round) also covers a:n and
    // b:'' — HBase's FilterListWithOR compares the other way in a reversed scan.
    let reversed = scan(&h, &Scan::new().reversed(true).filter(filter));
    assert_eq!(reversed, vec!["r2/a:a@5", "r2/b:a@5"]);
}

/// Row1: three columns of family a, two versions of `b:`; row2: a:x and b:x. Family b
/// keeps `b_versions` versions.
fn spent_count_rows(b_versions: u32) -> Harness {
    let mut table = TableDescriptor::new("t").with_family(FamilyDescriptor::new("a"));
    let mut b = FamilyDescriptor::new("b");
    b.versions = b_versions;
    table = table.with_family(b);
    let h = Harness::new(table, Config::default());
    for qual in ["a", "b", "c"] {
        put(&h, "row1", "a", qual, 5);
    }
    put(&h, "row1", "b", "", 5);
    put(&h, "row1", "b", "", 4);
    put(&h, "row2", "a", "x", 5);
    put(&h, "row2", "b", "x", 5);
    h
}

/// A hint out of the empty qualifier that lies past the row moves the store there:
/// the rows between are never read. Here the list's column count is spent on the
/// row's fourth column, so the next version of `b:` meets only the prefix's hint
/// (the first row of "rox"), and family b of the next row is not returned.
#[test]
fn a_hint_past_the_row_from_the_empty_qualifier_skips_the_rows_between() {
    let filter = or(vec![
        FilterSpec::ColumnCountGet(3),
        FilterSpec::Prefix(b"rox".to_vec()),
    ]);
    let s = Scan::new().max_versions(2).filter(filter);
    // Family a's store is read whole in row1 and meets row2 with the count reset;
    // family b's store went to "rox" from row1's second version of b:.
    assert_eq!(
        scan(&spent_count_rows(3), &s),
        vec!["row1/a:a@5", "row1/a:b@5", "row1/a:c@5", "row2/a:x@5"]
    );
    // With one version of b: kept by the family, the second never reaches the filter
    // (the version limit answers first): no hint, row2's b:x is returned.
    assert_eq!(
        scan(&spent_count_rows(1), &s),
        vec![
            "row1/a:a@5",
            "row1/a:b@5",
            "row1/a:c@5",
            "row2/a:x@5",
            "row2/b:x@5"
        ]
    );
}
