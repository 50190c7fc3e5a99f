#![allow(clippy::unwrap_used)]
//! Wrapper filters as HBase 2.6 runs them, where the HBase oracle showed a difference:
//! WhileMatchFilter does not pass `filterRowCells` on, SkipFilter does not pass the row
//! key on, and which trees have row-level
//! hooks (`hasFilterRow`) agrees between the filter spec and the built filter;
//! MultipleColumnPrefixFilter refuses a prefix given twice; wrappers do not pass the
//! reversed flag on.

use cellar_filter::{build, Comparator, CompareOp, FilterSpec, ListOp};
use cellar_types::Cell;

fn dependent() -> FilterSpec {
    FilterSpec::DependentColumn {
        family: b"b".to_vec(),
        qualifier: b"q0".to_vec(),
        drop_dependent: true,
        compare: None,
    }
}

#[test]
fn while_match_keeps_the_cells_its_dependent_column_filter_would_drop() {
    let mut cells = vec![
        Cell::put("r0", "a", "q2", 14, "v4").unwrap(),
        Cell::put("r0", "b", "q1", 30, "v15").unwrap(),
    ];
    // On its own, DependentColumnFilter drops cells of rows without the column.
    let mut alone = build(&dependent()).unwrap();
    let mut dropped = cells.clone();
    alone.filter_row_cells(&mut dropped);
    assert!(dropped.is_empty());
    // Wrapped in WhileMatch, HBase never calls its filterRowCells.
    let mut wrapped = build(&FilterSpec::WhileMatch(Box::new(dependent()))).unwrap();
    wrapped.filter_row_cells(&mut cells);
    assert_eq!(cells.len(), 2);
}

#[test]
fn has_filter_row_agrees_between_spec_and_filter() {
    let value = || (CompareOp::Equal, Comparator::Binary(b"v1".to_vec()));
    let specs = vec![
        FilterSpec::FirstKeyOnly,
        FilterSpec::Page(3),
        dependent(),
        FilterSpec::SingleColumnValue {
            family: b"a".to_vec(),
            qualifier: b"q".to_vec(),
            op: value().0,
            comparator: value().1,
            filter_if_missing: false,
            latest_version_only: true,
            exclude: true,
        },
        FilterSpec::Skip(Box::new(FilterSpec::Value(value().0, value().1))),
        FilterSpec::WhileMatch(Box::new(FilterSpec::Prefix(b"r".to_vec()))),
        FilterSpec::List(
            ListOp::MustPassOne,
            vec![FilterSpec::KeyOnly {
                len_as_value: false,
            }],
        ),
        FilterSpec::List(
            ListOp::MustPassAll,
            vec![FilterSpec::FirstKeyOnly, FilterSpec::Page(1)],
        ),
        FilterSpec::ColumnCountGet(2),
        FilterSpec::InclusiveStop(b"r5".to_vec()),
    ];
    for s in specs {
        assert_eq!(
            s.has_filter_row(),
            build(&s).unwrap().has_filter_row(),
            "{s:?}"
        );
    }
}

#[test]
fn multiple_column_prefix_refuses_a_repeated_prefix() {
    let twice = FilterSpec::MultipleColumnPrefix(vec![b"q3".to_vec(), b"q3".to_vec()]);
    let e = build(&twice).err().unwrap();
    assert!(e.reason.contains("prefixes must be distinct"), "{e}");
    assert!(build(&FilterSpec::MultipleColumnPrefix(vec![
        b"q1".to_vec(),
        b"q3".to_vec()
    ]))
    .is_ok());
}

#[test]
fn skip_does_not_ask_its_filter_about_the_row_key() {
    use cellar_filter::ReturnCode;
    let row = FilterSpec::Row(
        CompareOp::GreaterOrEqual,
        Comparator::Binary(b"r4".to_vec()),
    );
    // Alone, a RowFilter drops r3 by its key.
    assert!(build(&row).unwrap().filter_row_key(b"r3"));
    // Under SkipFilter, HBase never calls filterRowKey: r3's cells pass.
    let mut skip = build(&FilterSpec::Skip(Box::new(row))).unwrap();
    assert!(!skip.filter_row_key(b"r3"));
    let cell = Cell::put("r3", "a", "q0", 11, "v13").unwrap();
    assert_eq!(skip.filter_cell(&cell), ReturnCode::Include);
    assert!(!skip.filter_row());
    assert!(!skip.filter_all_remaining());
}

#[test]
fn while_match_still_asks_its_filter_once_done() {
    use cellar_filter::ReturnCode;
    let mut f = build(&FilterSpec::WhileMatch(Box::new(FilterSpec::ColumnPrefix(
        b"q2".to_vec(),
    ))))
    .unwrap();
    assert!(!f.filter_row_key(b"r4"));
    // q1 is not under the prefix: the filter is done...
    let q1 = Cell::put("r4", "a", "q1", 27, "v1").unwrap();
    assert_ne!(f.filter_cell(&q1), ReturnCode::Include);
    assert!(f.filter_all_remaining());
    // ...but, as HBase's, it still answers for a cell it is given (at the top of a
    // scan, the region asks it no more: its stores close; wrapped in a SkipFilter,
    // later rows reach it) and gives no hint of its own.
    let q2 = Cell::put("r5", "b", "q2", 17, "v19").unwrap();
    assert_eq!(f.filter_cell(&q2), ReturnCode::Include);
    assert!(f.filter_all_remaining());
    assert_eq!(f.next_cell_hint(&q1), None);
    // Done, it refuses every row key.
    assert!(f.filter_row_key(b"r6"));
}

#[test]
fn wrappers_do_not_pass_the_reversed_flag_on() {
    // HBase marks only the top filter reversed: inside WhileMatch, InclusiveStop still
    // runs forward, so in a reversed scan from r6 it ends the scan at once.
    let spec = FilterSpec::WhileMatch(Box::new(FilterSpec::InclusiveStop(b"r4".to_vec())));
    let mut f = build(&spec).unwrap();
    f.set_reversed(true);
    assert!(f.filter_row_key(b"r6"));
    assert!(f.filter_all_remaining());
    // Alone, reversed, it keeps r6 (r4 is its stop going down).
    let mut alone = build(&FilterSpec::InclusiveStop(b"r4".to_vec())).unwrap();
    alone.set_reversed(true);
    assert!(!alone.filter_row_key(b"r6"));
}
