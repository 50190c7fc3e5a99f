#![allow(clippy::unwrap_used)]
//! The filter language: every registered filter, operators, precedence, quoting, and
//! errors that point at the problem.

use cellar_filter::{
    parse_filter, parse_filter_bytes, Comparator, CompareOp, FilterSpec, ListOp, MAX_NESTING,
};

fn p(s: &str) -> FilterSpec {
    parse_filter(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

#[test]
fn every_registered_filter_parses() {
    assert_eq!(
        p("KeyOnlyFilter()"),
        FilterSpec::KeyOnly {
            len_as_value: false
        }
    );
    assert_eq!(
        p("KeyOnlyFilter(true)"),
        FilterSpec::KeyOnly { len_as_value: true }
    );
    assert_eq!(p("FirstKeyOnlyFilter()"), FilterSpec::FirstKeyOnly);
    assert_eq!(
        p("PrefixFilter('row')"),
        FilterSpec::Prefix(b"row".to_vec())
    );
    assert_eq!(
        p("ColumnPrefixFilter('c')"),
        FilterSpec::ColumnPrefix(b"c".to_vec())
    );
    assert_eq!(
        p("MultipleColumnPrefixFilter('a', 'b')"),
        FilterSpec::MultipleColumnPrefix(vec![b"a".to_vec(), b"b".to_vec()])
    );
    assert_eq!(p("ColumnCountGetFilter(4)"), FilterSpec::ColumnCountGet(4));
    assert_eq!(p("PageFilter(10)"), FilterSpec::Page(10));
    assert_eq!(
        p("ColumnPaginationFilter(5, 10)"),
        FilterSpec::ColumnPagination {
            limit: 5,
            offset: 10,
            column_offset: None
        }
    );
    assert_eq!(
        p("InclusiveStopFilter('z')"),
        FilterSpec::InclusiveStop(b"z".to_vec())
    );
    assert_eq!(
        p("TimestampsFilter(5, 6, 1)"),
        FilterSpec::Timestamps(vec![5, 6, 1])
    );
    assert_eq!(
        p("RowFilter(=, 'binary:r1')"),
        FilterSpec::Row(CompareOp::Equal, Comparator::Binary(b"r1".to_vec()))
    );
    assert_eq!(
        p("FamilyFilter(!=, 'binaryprefix:f')"),
        FilterSpec::Family(CompareOp::NotEqual, Comparator::BinaryPrefix(b"f".to_vec()))
    );
    assert_eq!(
        p("QualifierFilter(>=, 'binary:q')"),
        FilterSpec::Qualifier(CompareOp::GreaterOrEqual, Comparator::Binary(b"q".to_vec()))
    );
    assert_eq!(
        p("ValueFilter(=, 'substring:AbC')"),
        FilterSpec::Value(CompareOp::Equal, Comparator::substring("abc"))
    );
    assert!(matches!(
        p("ValueFilter(!=, 'regexstring:^a.*z$')"),
        FilterSpec::Value(CompareOp::NotEqual, Comparator::RegexString(..))
    ));
    assert_eq!(
        p("ColumnRangeFilter('a', true, '', false)"),
        FilterSpec::ColumnRange {
            min: Some(b"a".to_vec()),
            min_inclusive: true,
            max: None,
            max_inclusive: false
        }
    );
    assert_eq!(
        p("SingleColumnValueFilter('f', 'q', <, 'binary:5', true, false)"),
        FilterSpec::SingleColumnValue {
            family: b"f".to_vec(),
            qualifier: b"q".to_vec(),
            op: CompareOp::Less,
            comparator: Comparator::Binary(b"5".to_vec()),
            filter_if_missing: true,
            latest_version_only: false,
            exclude: false,
        }
    );
    assert!(matches!(
        p("SingleColumnValueExcludeFilter('f', 'q', =, 'binary:5')"),
        FilterSpec::SingleColumnValue {
            exclude: true,
            filter_if_missing: false,
            latest_version_only: true,
            ..
        }
    ));
    assert!(matches!(
        p("DependentColumnFilter('f', 'q', true, =, 'binary:x')"),
        FilterSpec::DependentColumn {
            drop_dependent: true,
            compare: Some(_),
            ..
        }
    ));
    assert!(matches!(
        p("DependentColumnFilter('f', 'q')"),
        FilterSpec::DependentColumn {
            drop_dependent: false,
            compare: None,
            ..
        }
    ));
}

#[test]
fn operators_precedence_and_quoting() {
    // AND binds tighter than OR.
    match p("PrefixFilter('a') OR PrefixFilter('b') AND PageFilter(1)") {
        FilterSpec::List(ListOp::MustPassOne, parts) => {
            assert_eq!(parts[0], FilterSpec::Prefix(b"a".to_vec()));
            assert!(matches!(&parts[1], FilterSpec::List(ListOp::MustPassAll, x) if x.len() == 2));
        }
        other => panic!("{other:?}"),
    }
    // Parentheses first; SKIP and WHILE bind tighter than AND.
    match p("(RowFilter(=,'binary:r1') AND TimestampsFilter(5,6)) OR ColumnRangeFilter('a',true,'c',false)") {
        FilterSpec::List(ListOp::MustPassOne, parts) => {
            assert!(matches!(&parts[0], FilterSpec::List(ListOp::MustPassAll, _)));
        }
        other => panic!("{other:?}"),
    }
    match p("SKIP ValueFilter(=,'binary:0') AND WHILE RowFilter(<,'binary:z')") {
        FilterSpec::List(ListOp::MustPassAll, parts) => {
            assert!(matches!(parts[0], FilterSpec::Skip(_)));
            assert!(matches!(parts[1], FilterSpec::WhileMatch(_)));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        p("PrefixFilter('it''s')"),
        FilterSpec::Prefix(b"it's".to_vec())
    );
    assert_eq!(
        p("  PrefixFilter ( 'x' )  "),
        FilterSpec::Prefix(b"x".to_vec())
    );
    assert_eq!(
        p("org.apache.hadoop.hbase.filter.PageFilter(3)"),
        FilterSpec::Page(3)
    );
    // A name containing AND is not the keyword.
    assert!(parse_filter("PrefixFilter('a')ANDPageFilter(1)").is_err());
    // Display gives a string that parses back to the same tree.
    let spec = p("(PrefixFilter('a''b') AND PageFilter(10)) OR SKIP ValueFilter(!=, 'binary:x')");
    assert_eq!(p(&spec.to_string()), spec);
}

#[test]
fn malformed_strings_are_errors_with_positions() {
    let cases: &[(&str, usize, &str)] = &[
        ("", 0, "empty"),
        ("PrefixFilter('a'", 16, "parenthesis"),
        ("(PrefixFilter('a')", 0, "Mismatched parenthesis"),
        ("PrefixFilter('a'))", 17, "Mismatched parenthesis"),
        (
            "NoSuchFilter('a')",
            0,
            "Filter Name NoSuchFilter not supported",
        ),
        ("PageFilter('x')", 11, "integer"),
        ("PageFilter(-1)", 11, "out of range"),
        ("PageFilter(1, 2)", 0, "argument"),
        ("RowFilter(~, 'binary:a')", 10, "Incorrect argument"),
        ("RowFilter(=, 'nocolon')", 13, "comparator"),
        ("RowFilter(<, 'substring:a')", 10, "substring"),
        ("ValueFilter(=, 'regexstring:(')", 15, "regular expression"),
        ("PrefixFilter('a') XOR PageFilter(1)", 18, "AND or OR"),
        ("PrefixFilter('a') AND", 21, "missing"),
        ("MultipleColumnPrefixFilter('a', 'a')", 32, "distinct"),
        ("PrefixFilter('unterminated)", 13, "unterminated"),
    ];
    for (s, pos, msg) in cases {
        let e = parse_filter(s)
            .err()
            .unwrap_or_else(|| panic!("{s} parsed"));
        assert!(e.message.contains(msg), "{s}: {e}");
        assert_eq!(e.pos, *pos, "{s}: {e}");
    }
}

/// `TestParseFilter#testColumnValueFilter`.
#[test]
fn column_value_filter_parses() {
    assert_eq!(
        p("ColumnValueFilter ('family', 'qualifier', <, 'binaryprefix:value')"),
        FilterSpec::ColumnValue {
            family: b"family".to_vec(),
            qualifier: b"qualifier".to_vec(),
            op: CompareOp::Less,
            comparator: Comparator::BinaryPrefix(b"value".to_vec()),
        }
    );
    let back = p("ColumnValueFilter('f', 'q', =, 'substring:X')");
    assert_eq!(p(&back.to_string()), back);
    assert!(parse_filter("ColumnValueFilter('f', 'q', <, 'regexstring:a')").is_err());
    assert!(parse_filter("ColumnValueFilter('f', 'q', <)").is_err());
}

/// The filter string is bytes: quoted arguments keep bytes that are not UTF-8.
#[test]
fn filter_strings_are_bytes() {
    let mut text = b"PrefixFilter('".to_vec();
    text.extend_from_slice(&[0xfe, 0xff, 0x00, 0x80]);
    text.extend_from_slice(b"') AND ValueFilter(=, 'binary:\xe9\xff')");
    let spec = parse_filter_bytes(&text).unwrap();
    let FilterSpec::List(ListOp::MustPassAll, parts) = spec else {
        panic!("{spec:?}")
    };
    assert_eq!(parts[0], FilterSpec::Prefix(vec![0xfe, 0xff, 0x00, 0x80]));
    let mut raw = b"ValueFilter(=, 'binary:".to_vec();
    raw.extend_from_slice(&[0xe9, 0xff]);
    raw.extend_from_slice(b"')");
    assert_eq!(
        parse_filter_bytes(&raw).unwrap(),
        FilterSpec::Value(CompareOp::Equal, Comparator::Binary(vec![0xe9, 0xff]))
    );
}

/// Deep nesting is a clear error, not a stack overflow.
#[test]
fn nesting_is_bounded() {
    let ok = format!(
        "{}PageFilter(1){}",
        "(".repeat(MAX_NESTING - 1),
        ")".repeat(MAX_NESTING - 1)
    );
    assert!(parse_filter(&ok).is_ok());
    for deep in [
        format!(
            "{}PageFilter(1){}",
            "(".repeat(100_000),
            ")".repeat(100_000)
        ),
        format!("{}PageFilter(1)", "SKIP ".repeat(100_000)),
        format!("{}PageFilter(1)", "WHILE (".repeat(50_000)),
        "(".repeat(1_000_000),
    ] {
        let e = parse_filter(&deep).unwrap_err();
        assert!(e.message.contains("nested"), "{e}");
    }
}
