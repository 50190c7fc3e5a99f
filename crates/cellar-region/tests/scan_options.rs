#![allow(clippy::unwrap_used)]
//! Scan options and client stitching (§7): start/stop inclusiveness, prefix scans, limit,
//! caching, batch, partial results, max result size, and a wide row streamed in bounded
//! pieces while a Get or an unbatched scan of it fails with RowTooBig.

mod common;

use cellar_region::{
    Config, FamilyDescriptor, Get, Put, RegionError, RowResult, Scan, TableDescriptor,
};
use common::Harness;

fn harness(config: Config) -> Harness {
    Harness::new(
        TableDescriptor::new("t")
            .with_family(FamilyDescriptor::new("a"))
            .with_family(FamilyDescriptor::new("b")),
        config,
    )
}

fn results(h: &Harness, s: &Scan) -> Vec<RowResult> {
    cellar::client::ClientScanner::open(&h.region, s)
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

fn row_names(rs: &[RowResult]) -> Vec<String> {
    rs.iter()
        .map(|r| String::from_utf8_lossy(&r.row).into_owned())
        .collect()
}

#[test]
fn start_stop_prefix_limit() {
    let h = harness(Config::default());
    for r in ["a", "ab", "abc", "ac", "b", "b\u{ff}", "c"] {
        h.region.put(Put::new(r).add_column("a", "q", "v")).unwrap();
    }
    let names = |s: Scan| row_names(&results(&h, &s));
    assert_eq!(
        names(
            Scan::new()
                .with_start_row("ab", true)
                .with_stop_row("b", false)
        ),
        vec!["ab", "abc", "ac"]
    );
    assert_eq!(
        names(
            Scan::new()
                .with_start_row("ab", false)
                .with_stop_row("b", true)
        ),
        vec!["abc", "ac", "b"]
    );
    assert_eq!(names(Scan::new().with_row_prefix("ab")), vec!["ab", "abc"]);
    assert_eq!(
        names(Scan::new().with_row_prefix("b")),
        vec!["b", "b\u{ff}"]
    );
    assert_eq!(names(Scan::new().limit(2)), vec!["a", "ab"]);
    assert_eq!(
        names(Scan::new().caching(1).limit(3)),
        vec!["a", "ab", "abc"]
    );
}

fn wide_row(h: &Harness, cells: usize, value: usize) {
    for i in 0..cells {
        let fam = if i % 2 == 0 { "a" } else { "b" };
        h.region
            .put(Put::new("wide").add_column(fam, format!("q{i:06}"), vec![b'x'; value]))
            .unwrap();
        if i % 500 == 499 {
            h.region.flush().unwrap();
        }
    }
    h.region
        .put(Put::new("zz").add_column("a", "q", "after"))
        .unwrap();
}

#[test]
fn batch_regroups_and_partials_pass_through() {
    let h = harness(Config::default());
    wide_row(&h, 2003, 10);
    // batch: groups of exactly 100 cells, the last of the row smaller.
    let rs = results(&h, &Scan::new().batch(100).max_result_size(3000));
    let wide: Vec<&RowResult> = rs.iter().filter(|r| r.row == b"wide").collect();
    assert_eq!(wide.len(), 21);
    assert!(wide[..20].iter().all(|r| r.cells.len() == 100 && r.partial));
    assert_eq!(wide[20].cells.len(), 3);
    assert!(!wide[20].partial);
    assert_eq!(row_names(&rs).last().unwrap(), "zz");
    // Partial results: fragments cut at the size limit, flagged until the row's last.
    let rs = results(
        &h,
        &Scan::new()
            .allow_partial_results(true)
            .max_result_size(4000),
    );
    let wide: Vec<&RowResult> = rs.iter().filter(|r| r.row == b"wide").collect();
    assert!(wide.len() > 5);
    assert!(wide[..wide.len() - 1].iter().all(|r| r.partial));
    assert_eq!(wide.iter().map(|r| r.cells.len()).sum::<usize>(), 2003);
    assert!(wide.iter().all(|r| r.size() <= 4000 + 200));
    // Default: whole rows stitched from the size-limited round trips.
    let mut scanner =
        cellar::client::ClientScanner::open(&h.region, &Scan::new().max_result_size(4000)).unwrap();
    let first = scanner.next().unwrap().unwrap();
    assert_eq!(first.cells.len(), 2003);
    assert!(!first.partial);
    assert!(
        scanner.calls > 5,
        "the row came in {} round trips",
        scanner.calls
    );
    // Cells arrive in order, family a before b.
    let fams: Vec<u8> = first.cells.iter().map(|c| c.family()[0]).collect();
    assert!(fams.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn a_row_over_the_row_size_limit_streams_in_batches_but_fails_whole() {
    let config = Config {
        max_row_size: 200_000,
        ..Config::default()
    };
    let h = harness(config);
    wide_row(&h, 3000, 100);
    // Get: RowTooBig.
    let err = h.region.get(&Get::new("wide")).unwrap_err();
    assert!(matches!(err, RegionError::RowTooBig { .. }), "{err}");
    // Unbatched scan: RowTooBig, from the client once the stitched row passes the limit.
    let err = cellar::client::ClientScanner::open(&h.region, &Scan::new())
        .unwrap()
        .find_map(|r| r.err())
        .expect("an unbatched scan of a too-big row fails");
    assert!(matches!(err, RegionError::RowTooBig { .. }), "{err}");
    // Batched: the row streams in pieces of at most 100 cells.
    let rs = results(&h, &Scan::new().batch(100));
    let wide: Vec<&RowResult> = rs.iter().filter(|r| r.row == b"wide").collect();
    assert_eq!(wide.iter().map(|r| r.cells.len()).sum::<usize>(), 3000);
    assert!(wide.iter().all(|r| r.cells.len() <= 100));
    // Partial results likewise, each piece bounded by max result size.
    let rs = results(
        &h,
        &Scan::new()
            .allow_partial_results(true)
            .max_result_size(50_000),
    );
    assert_eq!(
        rs.iter()
            .filter(|r| r.row == b"wide")
            .map(|r| r.cells.len())
            .sum::<usize>(),
        3000
    );
    assert!(rs.iter().all(|r| r.size() < 60_000));
}

#[test]
fn batch_with_a_row_filter_is_refused() {
    let h = harness(Config::default());
    h.region
        .put(Put::new("r").add_column("a", "q", "v"))
        .unwrap();
    let s = Scan::new()
        .batch(10)
        .filter(cellar_region::parse_filter("PageFilter(1)").unwrap());
    let err = cellar::client::ClientScanner::open(&h.region, &s)
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("IncompatibleFilterException"),
        "{err}"
    );
}

#[test]
fn reversed_scans() {
    let h = harness(Config::default());
    for (i, r) in ["a", "ab", "abc", "ac", "b", "c", "d"].iter().enumerate() {
        h.region
            .put(Put::new(*r).add_column("a", "q", format!("v{i}")))
            .unwrap();
        h.region
            .put(Put::new(*r).add_column("b", "q", format!("w{i}")))
            .unwrap();
        if i % 3 == 2 {
            h.region.flush().unwrap();
        }
    }
    h.region.delete(cellar_region::Delete::new("b")).unwrap();
    let names = |s: Scan| row_names(&results(&h, &s));
    assert_eq!(
        names(Scan::new().reversed(true)),
        vec!["d", "c", "ac", "abc", "ab", "a"]
    );
    // Start is the larger key (inclusive), stop the smaller (exclusive).
    assert_eq!(
        names(
            Scan::new()
                .reversed(true)
                .with_start_row("ac", true)
                .with_stop_row("a", false)
        ),
        vec!["ac", "abc", "ab"]
    );
    assert_eq!(
        names(
            Scan::new()
                .reversed(true)
                .with_start_row("ac", false)
                .with_stop_row("a", true)
        ),
        vec!["abc", "ab", "a"]
    );
    assert_eq!(
        names(Scan::new().reversed(true).with_start_row("bz", true)),
        vec!["ac", "abc", "ab", "a"]
    );
    assert_eq!(names(Scan::new().reversed(true).limit(2)), vec!["d", "c"]);
    // Within a row cells stay in forward order.
    let rs = results(&h, &Scan::new().reversed(true).limit(1));
    let fams: Vec<u8> = rs[0].cells.iter().map(|c| c.family()[0]).collect();
    assert_eq!(fams, vec![b'a', b'b']);
    // Filters and batches work backwards too.
    let s = Scan::new()
        .reversed(true)
        .filter(cellar_region::parse_filter("FamilyFilter(=, 'binary:b')").unwrap());
    let rs = results(&h, &s);
    assert_eq!(row_names(&rs), vec!["d", "c", "ac", "abc", "ab", "a"]);
    assert!(rs
        .iter()
        .all(|r| r.cells.len() == 1 && r.cells[0].family() == b"b"));
    let rs = results(&h, &Scan::new().reversed(true).batch(1));
    assert_eq!(rs.len(), 12);
    assert_eq!(rs[0].row, b"d");
    assert!(rs[0].partial && !rs[1].partial);
}

/// Fragments end as HBase's do: every fragment of a row but the last says more cells may
/// follow, the last says none do, even when the cells after it are older versions or
/// filtered out.
#[test]
fn a_rows_last_fragment_is_marked_final() {
    let h = harness(Config::default());
    for (row, q) in [("r1", "x"), ("r1", "y"), ("r2", "x"), ("r3", "z")] {
        for ts in [1, 2, 3] {
            h.region
                .put(Put::new(row).add_column_at("a", q, ts, format!("{row}{q}{ts}")))
                .unwrap();
        }
    }
    h.region
        .put(Put::new("r3").add_column_at("b", "w", 5, "r3w5"))
        .unwrap();
    let check = |s: Scan, label: &str| {
        let rs = results(&h, &s);
        let mut whole: Vec<(String, Vec<String>)> = Vec::new();
        for (i, r) in rs.iter().enumerate() {
            let name = String::from_utf8_lossy(&r.row).into_owned();
            let next_same = rs.get(i + 1).is_some_and(|n| n.row == r.row);
            assert_eq!(r.partial, next_same, "{label}: fragment {i} of {rs:?}");
            let cells = r
                .cells
                .iter()
                .map(|c| String::from_utf8_lossy(c.value()).into_owned());
            match whole.last_mut() {
                Some((n, cs)) if *n == name => cs.extend(cells),
                _ => whole.push((name, cells.collect())),
            }
        }
        assert_eq!(
            whole,
            vec![
                ("r1".into(), vec!["r1x3".into(), "r1y3".into()]),
                ("r2".into(), vec!["r2x3".into()]),
                ("r3".into(), vec!["r3z3".into(), "r3w5".into()]),
            ],
            "{label}"
        );
    };
    for batch in 1..=3 {
        check(Scan::new().batch(batch), &format!("batch {batch}"));
        check(
            Scan::new().batch(batch).caching(1),
            &format!("batch {batch}, caching 1"),
        );
    }
    for size in [1, 10, 40, 1000] {
        check(
            Scan::new()
                .allow_partial_results(true)
                .max_result_size(size),
            &format!("partial, {size} bytes"),
        );
    }
    h.region.flush().unwrap();
    check(Scan::new().batch(1), "batch 1 after a flush");
}

/// A raw read counts delete markers against its versions only behind a filter (HBase's
/// column tracker skips markers; its count after the filter includes them).
#[test]
fn raw_versions_count_markers_only_behind_a_filter() {
    let h = harness(Config::default());
    h.region
        .put(Put::new("r").add_column_at("a", "q", 1, "v"))
        .unwrap();
    h.region
        .delete(cellar_region::Delete::new("r").add_columns_before("a", "q", 5))
        .unwrap();
    let cells = |s: Scan| -> Vec<(i64, bool)> {
        results(&h, &s)
            .iter()
            .flat_map(|r| r.cells.iter())
            .map(|c| (c.timestamp(), c.cell_type().is_delete()))
            .collect()
    };
    let raw = Scan::new().raw(true).max_versions(1);
    assert_eq!(cells(raw.clone()), vec![(5, true), (1, false)]);
    let filtered = raw.filter(cellar_region::parse_filter("KeyOnlyFilter()").unwrap());
    assert_eq!(cells(filtered), vec![(5, true)]);
}
