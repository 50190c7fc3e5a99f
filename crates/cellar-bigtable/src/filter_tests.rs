use super::*;
use crate::v2::row_filter::{Chain, Condition, Interleave};
use crate::v2::{ColumnRange, TimestampRange, ValueRange};

fn cell(f: &str, q: &str, ts: i64, v: &str) -> Cell {
    Cell {
        family: f.into(),
        qualifier: q.as_bytes().to_vec(),
        timestamp_micros: ts,
        value: v.as_bytes().to_vec(),
        labels: Vec::new(),
    }
}

fn row() -> Vec<Cell> {
    vec![
        cell("a", "x", 3000, "v3"),
        cell("a", "x", 2000, "v2"),
        cell("a", "x", 1000, "v1"),
        cell("a", "y", 1000, "y1"),
        cell("b", "x", 5000, "bx"),
    ]
}

fn f(filter: Filter) -> RowFilter {
    RowFilter {
        filter: Some(filter),
    }
}

/// A cell as (family, qualifier, timestamp, value, labels).
type Shown = (String, String, i64, String, Vec<String>);

fn run(filter: &RowFilter) -> Option<Vec<Shown>> {
    filter_row(Some(filter), b"row-1", row(), &mut || 0.5)
        .unwrap()
        .map(|cells| {
            cells
                .into_iter()
                .map(|c| {
                    (
                        c.family,
                        String::from_utf8(c.qualifier).unwrap(),
                        c.timestamp_micros,
                        String::from_utf8(c.value).unwrap(),
                        c.labels,
                    )
                })
                .collect()
        })
}

fn values(filter: &RowFilter) -> Option<Vec<String>> {
    run(filter).map(|cells| cells.into_iter().map(|c| c.3).collect())
}

fn chain(fs: Vec<RowFilter>) -> RowFilter {
    f(Filter::Chain(Chain { filters: fs }))
}

fn interleave(fs: Vec<RowFilter>) -> RowFilter {
    f(Filter::Interleave(Interleave { filters: fs }))
}

#[test]
fn pass_block_and_no_filter() {
    assert_eq!(values(&f(Filter::PassAllFilter(true))).unwrap().len(), 5);
    assert_eq!(values(&f(Filter::BlockAllFilter(true))), None);
    assert!(filter_row(
        Some(&f(Filter::PassAllFilter(false))),
        b"r",
        row(),
        &mut || 0.0
    )
    .is_err());
    assert_eq!(
        filter_row(None, b"r", row(), &mut || 0.0)
            .unwrap()
            .unwrap()
            .len(),
        5
    );
}

#[test]
fn regexes_match_the_whole_target_over_bytes() {
    let fam = |re: &str| values(&f(Filter::FamilyNameRegexFilter(re.into())));
    assert_eq!(fam("a").unwrap(), ["v3", "v2", "v1", "y1"]);
    assert_eq!(fam("[ab]").unwrap().len(), 5);
    assert_eq!(fam("^a"), fam("a"), "anchors are harmless");
    assert_eq!(fam("x"), None, "whole-name match");
    let q = |re: &[u8]| values(&f(Filter::ColumnQualifierRegexFilter(re.to_vec())));
    assert_eq!(q(b"y").unwrap(), ["y1"]);
    assert_eq!(q(b"\\C").unwrap().len(), 5, "\\C is any byte");
    let v = |re: &[u8]| values(&f(Filter::ValueRegexFilter(re.to_vec())));
    assert_eq!(v(b"v[12]").unwrap(), ["v2", "v1"]);
    assert_eq!(
        values(&f(Filter::RowKeyRegexFilter(b"row-\\d".to_vec())))
            .unwrap()
            .len(),
        5
    );
    assert_eq!(values(&f(Filter::RowKeyRegexFilter(b"row".to_vec()))), None);
    // A non-UTF-8 byte in a value and in a pattern.
    let cells = vec![cell("a", "x", 1, "")];
    let mut c = cells;
    c[0].value = vec![0xff, b'z'];
    let out = filter_row(
        Some(&f(Filter::ValueRegexFilter(vec![0xff, b'.']))),
        b"r",
        c,
        &mut || 0.0,
    )
    .unwrap();
    assert_eq!(out.unwrap().len(), 1);
    assert!(filter_row(
        Some(&f(Filter::ValueRegexFilter(b"(".to_vec()))),
        b"r",
        row(),
        &mut || 0.0
    )
    .is_err());
    assert!(filter_row(
        Some(&f(Filter::FamilyNameRegexFilter("a:b".into()))),
        b"r",
        row(),
        &mut || 0.0
    )
    .is_err());
}

#[test]
fn ranges() {
    use crate::v2::column_range::{EndQualifier, StartQualifier};
    use crate::v2::value_range::{EndValue, StartValue};
    let cr = ColumnRange {
        family_name: "a".into(),
        start_qualifier: Some(StartQualifier::StartQualifierOpen(b"x".to_vec())),
        end_qualifier: Some(EndQualifier::EndQualifierClosed(b"y".to_vec())),
    };
    assert_eq!(values(&f(Filter::ColumnRangeFilter(cr))).unwrap(), ["y1"]);
    let cr = ColumnRange {
        family_name: "b".into(),
        start_qualifier: None,
        end_qualifier: None,
    };
    assert_eq!(values(&f(Filter::ColumnRangeFilter(cr))).unwrap(), ["bx"]);
    let vr = ValueRange {
        start_value: Some(StartValue::StartValueClosed(b"v2".to_vec())),
        end_value: Some(EndValue::EndValueOpen(b"y1".to_vec())),
    };
    assert_eq!(
        values(&f(Filter::ValueRangeFilter(vr))).unwrap(),
        ["v3", "v2"]
    );
    let tr = |s, e| {
        values(&f(Filter::TimestampRangeFilter(TimestampRange {
            start_timestamp_micros: s,
            end_timestamp_micros: e,
        })))
    };
    assert_eq!(tr(2000, 3000).unwrap(), ["v2"]);
    assert_eq!(tr(3000, 0).unwrap(), ["v3", "bx"], "end 0 is infinity");
}

#[test]
fn limits_and_offsets() {
    assert_eq!(
        values(&f(Filter::CellsPerColumnLimitFilter(1))).unwrap(),
        ["v3", "y1", "bx"]
    );
    assert_eq!(
        values(&f(Filter::CellsPerColumnLimitFilter(2))).unwrap(),
        ["v3", "v2", "y1", "bx"]
    );
    assert_eq!(
        values(&f(Filter::CellsPerRowLimitFilter(2))).unwrap(),
        ["v3", "v2"]
    );
    assert_eq!(
        values(&f(Filter::CellsPerRowOffsetFilter(3))).unwrap(),
        ["y1", "bx"]
    );
    assert_eq!(values(&f(Filter::CellsPerRowOffsetFilter(5))), None);
    assert!(filter_row(
        Some(&f(Filter::CellsPerRowLimitFilter(0))),
        b"r",
        row(),
        &mut || 0.0
    )
    .is_err());
}

#[test]
fn transformers() {
    let out = run(&f(Filter::StripValueTransformer(true))).unwrap();
    assert!(out.iter().all(|c| c.3.is_empty()));
    let out = run(&f(Filter::ApplyLabelTransformer("lab-1".into()))).unwrap();
    assert!(out.iter().all(|c| c.4 == ["lab-1"]));
    assert!(filter_row(
        Some(&f(Filter::ApplyLabelTransformer("Bad".into()))),
        b"r",
        row(),
        &mut || 0.0
    )
    .is_err());
}

#[test]
fn chains_interleaves_and_conditions() {
    let fam_a = f(Filter::FamilyNameRegexFilter("a".into()));
    let latest = f(Filter::CellsPerColumnLimitFilter(1));
    assert_eq!(
        values(&chain(vec![fam_a.clone(), latest.clone()])).unwrap(),
        ["v3", "y1"]
    );
    assert!(filter_row(Some(&chain(vec![fam_a.clone()])), b"r", row(), &mut || 0.0).is_err());
    // Interleave: pooled, sorted into row order, duplicates kept.
    let out = run(&interleave(vec![
        chain(vec![
            fam_a.clone(),
            f(Filter::ApplyLabelTransformer("one".into())),
        ]),
        chain(vec![
            latest.clone(),
            f(Filter::ApplyLabelTransformer("two".into())),
        ]),
    ]))
    .unwrap();
    let got: Vec<(String, Vec<String>)> = out.into_iter().map(|c| (c.3, c.4)).collect();
    let l = |s: &str| vec![s.to_string()];
    assert_eq!(
        got,
        vec![
            ("v3".into(), l("one")),
            ("v3".into(), l("two")),
            ("v2".into(), l("one")),
            ("v1".into(), l("one")),
            ("y1".into(), l("one")),
            ("y1".into(), l("two")),
            ("bx".into(), l("two")),
        ]
    );
    // Condition: the predicate picks the branch; a missing branch outputs nothing.
    let cond = |pred: RowFilter, t: Option<RowFilter>, e: Option<RowFilter>| {
        f(Filter::Condition(Box::new(Condition {
            predicate_filter: Some(Box::new(pred)),
            true_filter: t.map(Box::new),
            false_filter: e.map(Box::new),
        })))
    };
    let has_b = f(Filter::FamilyNameRegexFilter("b".into()));
    let has_c = f(Filter::FamilyNameRegexFilter("c".into()));
    assert_eq!(
        values(&cond(has_b.clone(), Some(latest.clone()), None)).unwrap(),
        ["v3", "y1", "bx"]
    );
    assert_eq!(
        values(&cond(has_c.clone(), Some(latest.clone()), None)),
        None
    );
    assert_eq!(
        values(&cond(has_c, None, Some(fam_a.clone()))).unwrap(),
        ["v3", "v2", "v1", "y1"]
    );
}

#[test]
fn sink_outputs_past_enclosing_filters() {
    // chain(family a, sink) interleaved with block-all: a's cells still come out.
    let out = values(&interleave(vec![
        chain(vec![
            f(Filter::FamilyNameRegexFilter("a".into())),
            f(Filter::Sink(true)),
            f(Filter::BlockAllFilter(true)),
        ]),
        f(Filter::BlockAllFilter(true)),
    ]));
    assert_eq!(out.unwrap(), ["v3", "v2", "v1", "y1"]);
}

#[test]
fn row_sample_uses_the_callers_draw() {
    let s = f(Filter::RowSampleFilter(0.5));
    let r = filter_row(Some(&s), b"r", row(), &mut || 0.25).unwrap();
    assert_eq!(r.unwrap().len(), 5);
    assert_eq!(
        filter_row(Some(&s), b"r", row(), &mut || 0.75).unwrap(),
        None
    );
    assert!(filter_row(
        Some(&f(Filter::RowSampleFilter(1.0))),
        b"r",
        row(),
        &mut || 0.0
    )
    .is_err());
}

#[test]
fn hostile_nesting_is_refused() {
    let mut f0 = f(Filter::PassAllFilter(true));
    for _ in 0..200 {
        f0 = chain(vec![f0, f(Filter::PassAllFilter(true))]);
    }
    let e = filter_row(Some(&f0), b"r", row(), &mut || 0.0).unwrap_err();
    assert!(e.0.contains("nested deeper"), "{e}");
}
