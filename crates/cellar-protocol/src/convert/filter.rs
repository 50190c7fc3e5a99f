//! HBase's serialized filters and comparators (a Java class name and that class's
//! message) ↔ Cellar's declarative [`FilterSpec`] and [`Comparator`]. A filter or
//! comparator class Cellar does not implement is an error naming the class.

use bytes::Bytes;
use cellar_api::{Comparator, CompareOp, FilterSpec, ListOp};
use prost::Message;

use super::b;
use super::mutation::{compare_op_from, compare_op_to};
use crate::error::{ProtocolError, Result};
use crate::pb;

const FILTER_PKG: &str = "org.apache.hadoop.hbase.filter.";

/// How deep filter lists may nest: a hostile request must not exhaust the stack.
const MAX_DEPTH: usize = 64;

/// Java `Pattern` flags HBase's RegexStringComparator carries.
const CASE_INSENSITIVE: i32 = 2;
const COMMENTS: i32 = 4;
const MULTILINE: i32 = 8;
const DOTALL: i32 = 32;

fn decode<M: Message + Default>(bytes: &Option<Bytes>, what: &'static str) -> Result<M> {
    M::decode(bytes.clone().unwrap_or_default())
        .map_err(|source| ProtocolError::Decode { what, source })
}

/// Decodes a comparator; `None` for HBase's `NullComparator` (a missing value).
pub fn comparator_from_pb(c: &pb::Comparator) -> Result<Option<Comparator>> {
    let short = c.name.strip_prefix(FILTER_PKG).unwrap_or(&c.name);
    let bytes = &c.serialized_comparator;
    Ok(Some(match short {
        "BinaryComparator" => {
            let m: pb::BinaryComparator = decode(bytes, "BinaryComparator")?;
            Comparator::Binary(m.comparable.value.unwrap_or_default().to_vec())
        }
        "BinaryPrefixComparator" => {
            let m: pb::BinaryPrefixComparator = decode(bytes, "BinaryPrefixComparator")?;
            Comparator::BinaryPrefix(m.comparable.value.unwrap_or_default().to_vec())
        }
        "SubstringComparator" => {
            let m: pb::SubstringComparator = decode(bytes, "SubstringComparator")?;
            Comparator::substring(&m.substr)
        }
        "RegexStringComparator" => {
            let m: pb::RegexStringComparator = decode(bytes, "RegexStringComparator")?;
            if m.engine.as_deref().is_some_and(|e| e != "JAVA") {
                return Err(ProtocolError::invalid(
                    "RegexStringComparator.engine",
                    format!("{:?}: only the JAVA engine is served", m.engine),
                ));
            }
            let known = CASE_INSENSITIVE | COMMENTS | MULTILINE | DOTALL;
            if m.pattern_flags & !known != 0 {
                return Err(ProtocolError::invalid(
                    "RegexStringComparator.pattern_flags",
                    format!("0x{:x}", m.pattern_flags),
                ));
            }
            let mut flags = String::new();
            for (bit, c) in [(CASE_INSENSITIVE, 'i'), (COMMENTS, 'x'), (MULTILINE, 'm')] {
                if m.pattern_flags & bit != 0 {
                    flags.push(c);
                }
            }
            let mut pattern = String::new();
            if !flags.is_empty() {
                pattern.push_str(&format!("(?{flags})"));
            }
            if m.pattern_flags & DOTALL == 0 {
                pattern.push_str("(?-s)");
            }
            pattern.push_str(&m.pattern);
            Comparator::RegexString(pattern)
        }
        "NullComparator" => return Ok(None),
        other => {
            return Err(ProtocolError::invalid(
                "comparator",
                format!("{other} is not supported"),
            ))
        }
    }))
}

fn comparable(v: &[u8]) -> pb::ByteArrayComparable {
    pb::ByteArrayComparable { value: Some(b(v)) }
}

/// Encodes a comparator; `None` as HBase's `NullComparator`.
pub fn comparator_to_pb(c: Option<&Comparator>) -> pb::Comparator {
    let (name, bytes) = match c {
        None => ("NullComparator", pb::NullComparator {}.encode_to_vec()),
        Some(Comparator::Binary(v)) => (
            "BinaryComparator",
            pb::BinaryComparator {
                comparable: comparable(v),
            }
            .encode_to_vec(),
        ),
        Some(Comparator::BinaryPrefix(v)) => (
            "BinaryPrefixComparator",
            pb::BinaryPrefixComparator {
                comparable: comparable(v),
            }
            .encode_to_vec(),
        ),
        Some(Comparator::Substring(s)) => (
            "SubstringComparator",
            pb::SubstringComparator { substr: s.clone() }.encode_to_vec(),
        ),
        Some(Comparator::RegexString(p)) => (
            "RegexStringComparator",
            pb::RegexStringComparator {
                pattern: p.clone(),
                pattern_flags: DOTALL,
                charset: "UTF-8".into(),
                engine: None,
            }
            .encode_to_vec(),
        ),
    };
    pb::Comparator {
        name: format!("{FILTER_PKG}{name}"),
        serialized_comparator: Some(Bytes::from(bytes)),
    }
}

fn compare(cf: &pb::CompareFilter) -> Result<(CompareOp, Comparator)> {
    let op = compare_op_from(cf.compare_op)?;
    let c = cf
        .comparator
        .as_ref()
        .ok_or(ProtocolError::Missing("CompareFilter.comparator"))?;
    let c = comparator_from_pb(c)?
        .ok_or_else(|| ProtocolError::invalid("CompareFilter.comparator", "NullComparator"))?;
    Ok((op, c))
}

fn compare_to(op: CompareOp, c: &Comparator) -> pb::CompareFilter {
    pb::CompareFilter {
        compare_op: compare_op_to(op),
        comparator: Some(comparator_to_pb(Some(c))),
    }
}

fn non_negative(v: i64, what: &'static str) -> Result<u64> {
    u64::try_from(v).map_err(|_| ProtocolError::invalid(what, v.to_string()))
}

/// Decodes a filter tree.
pub fn filter_from_pb(f: &pb::Filter) -> Result<FilterSpec> {
    from_pb(f, 0)
}

fn from_pb(f: &pb::Filter, depth: usize) -> Result<FilterSpec> {
    if depth > MAX_DEPTH {
        return Err(ProtocolError::invalid(
            "filter",
            format!("nested deeper than {MAX_DEPTH}"),
        ));
    }
    let short = f.name.strip_prefix(FILTER_PKG).unwrap_or(&f.name);
    let s = &f.serialized_filter;
    Ok(match short {
        "KeyOnlyFilter" => {
            let m: pb::KeyOnlyFilter = decode(s, "KeyOnlyFilter")?;
            FilterSpec::KeyOnly {
                len_as_value: m.len_as_val,
            }
        }
        "FirstKeyOnlyFilter" => FilterSpec::FirstKeyOnly,
        "PrefixFilter" => {
            let m: pb::PrefixFilter = decode(s, "PrefixFilter")?;
            FilterSpec::Prefix(m.prefix.unwrap_or_default().to_vec())
        }
        "ColumnPrefixFilter" => {
            let m: pb::ColumnPrefixFilter = decode(s, "ColumnPrefixFilter")?;
            FilterSpec::ColumnPrefix(m.prefix.to_vec())
        }
        "MultipleColumnPrefixFilter" => {
            let m: pb::MultipleColumnPrefixFilter = decode(s, "MultipleColumnPrefixFilter")?;
            FilterSpec::MultipleColumnPrefix(m.sorted_prefixes.iter().map(|p| p.to_vec()).collect())
        }
        "ColumnRangeFilter" => {
            let m: pb::ColumnRangeFilter = decode(s, "ColumnRangeFilter")?;
            FilterSpec::ColumnRange {
                min: m.min_column.map(|v| v.to_vec()).filter(|v| !v.is_empty()),
                min_inclusive: m.min_column_inclusive.unwrap_or(false),
                max: m.max_column.map(|v| v.to_vec()).filter(|v| !v.is_empty()),
                max_inclusive: m.max_column_inclusive.unwrap_or(false),
            }
        }
        "ColumnPaginationFilter" => {
            let m: pb::ColumnPaginationFilter = decode(s, "ColumnPaginationFilter")?;
            FilterSpec::ColumnPagination {
                limit: non_negative(m.limit as i64, "ColumnPaginationFilter.limit")? as u32,
                offset: non_negative(
                    m.offset.unwrap_or(0) as i64,
                    "ColumnPaginationFilter.offset",
                )? as u32,
                column_offset: m.column_offset.map(|v| v.to_vec()),
            }
        }
        "ColumnCountGetFilter" => {
            let m: pb::ColumnCountGetFilter = decode(s, "ColumnCountGetFilter")?;
            FilterSpec::ColumnCountGet(
                non_negative(m.limit as i64, "ColumnCountGetFilter.limit")? as u32
            )
        }
        "PageFilter" => {
            let m: pb::PageFilter = decode(s, "PageFilter")?;
            FilterSpec::Page(non_negative(m.page_size, "PageFilter.page_size")?)
        }
        "InclusiveStopFilter" => {
            let m: pb::InclusiveStopFilter = decode(s, "InclusiveStopFilter")?;
            FilterSpec::InclusiveStop(m.stop_row_key.unwrap_or_default().to_vec())
        }
        "TimestampsFilter" => {
            let m: pb::TimestampsFilter = decode(s, "TimestampsFilter")?;
            if m.can_hint.unwrap_or(false) {
                FilterSpec::TimestampsCanHint(m.timestamps)
            } else {
                FilterSpec::Timestamps(m.timestamps)
            }
        }
        "RowFilter" => {
            let m: pb::RowFilter = decode(s, "RowFilter")?;
            let (o, c) = compare(&m.compare_filter)?;
            FilterSpec::Row(o, c)
        }
        "FamilyFilter" => {
            let m: pb::FamilyFilter = decode(s, "FamilyFilter")?;
            let (o, c) = compare(&m.compare_filter)?;
            FilterSpec::Family(o, c)
        }
        "QualifierFilter" => {
            let m: pb::QualifierFilter = decode(s, "QualifierFilter")?;
            let (o, c) = compare(&m.compare_filter)?;
            FilterSpec::Qualifier(o, c)
        }
        "ValueFilter" => {
            let m: pb::ValueFilter = decode(s, "ValueFilter")?;
            let (o, c) = compare(&m.compare_filter)?;
            FilterSpec::Value(o, c)
        }
        "ColumnValueFilter" => {
            let m: pb::ColumnValueFilter = decode(s, "ColumnValueFilter")?;
            FilterSpec::ColumnValue {
                family: m.family.to_vec(),
                qualifier: m.qualifier.to_vec(),
                op: compare_op_from(m.compare_op)?,
                comparator: comparator_from_pb(&m.comparator)?.ok_or_else(|| {
                    ProtocolError::invalid("ColumnValueFilter.comparator", "NullComparator")
                })?,
            }
        }
        "SingleColumnValueFilter" => {
            let m: pb::SingleColumnValueFilter = decode(s, "SingleColumnValueFilter")?;
            single_column(&m, false)?
        }
        "SingleColumnValueExcludeFilter" => {
            let m: pb::SingleColumnValueExcludeFilter =
                decode(s, "SingleColumnValueExcludeFilter")?;
            single_column(&m.single_column_value_filter, true)?
        }
        "DependentColumnFilter" => {
            let m: pb::DependentColumnFilter = decode(s, "DependentColumnFilter")?;
            let op = compare_op_from(m.compare_filter.compare_op)?;
            let compare = match (&m.compare_filter.comparator, op) {
                (None, _) | (_, CompareOp::NoOp) => None,
                (Some(c), op) => comparator_from_pb(c)?.map(|c| (op, c)),
            };
            FilterSpec::DependentColumn {
                family: m.column_family.unwrap_or_default().to_vec(),
                qualifier: m.column_qualifier.unwrap_or_default().to_vec(),
                drop_dependent: m.drop_dependent_column.unwrap_or(false),
                compare,
            }
        }
        "WhileMatchFilter" => {
            let m: pb::WhileMatchFilter = decode(s, "WhileMatchFilter")?;
            FilterSpec::WhileMatch(Box::new(from_pb(&m.filter, depth + 1)?))
        }
        "SkipFilter" => {
            let m: pb::SkipFilter = decode(s, "SkipFilter")?;
            FilterSpec::Skip(Box::new(from_pb(&m.filter, depth + 1)?))
        }
        "FilterList" => {
            let m: pb::FilterList = decode(s, "FilterList")?;
            let op = match pb::filter_list::Operator::try_from(m.operator) {
                Ok(pb::filter_list::Operator::MustPassAll) => ListOp::MustPassAll,
                Ok(pb::filter_list::Operator::MustPassOne) => ListOp::MustPassOne,
                Err(_) => {
                    return Err(ProtocolError::invalid(
                        "FilterList.operator",
                        m.operator.to_string(),
                    ))
                }
            };
            let fs = m
                .filters
                .iter()
                .map(|f| from_pb(f, depth + 1))
                .collect::<Result<Vec<_>>>()?;
            FilterSpec::List(op, fs)
        }
        other => {
            return Err(ProtocolError::invalid(
                "filter",
                format!("{other} is not supported"),
            ))
        }
    })
}

fn single_column(m: &pb::SingleColumnValueFilter, exclude: bool) -> Result<FilterSpec> {
    Ok(FilterSpec::SingleColumnValue {
        family: m.column_family.as_deref().unwrap_or_default().to_vec(),
        qualifier: m.column_qualifier.as_deref().unwrap_or_default().to_vec(),
        op: compare_op_from(m.compare_op)?,
        comparator: comparator_from_pb(&m.comparator)?.ok_or_else(|| {
            ProtocolError::invalid("SingleColumnValueFilter.comparator", "NullComparator")
        })?,
        filter_if_missing: m.filter_if_missing.unwrap_or(false),
        latest_version_only: m.latest_version_only.unwrap_or(true),
        exclude,
    })
}

fn wrap(name: &str, m: impl Message) -> pb::Filter {
    pb::Filter {
        name: format!("{FILTER_PKG}{name}"),
        serialized_filter: Some(Bytes::from(m.encode_to_vec())),
    }
}

/// Encodes a filter tree.
pub fn filter_to_pb(f: &FilterSpec) -> pb::Filter {
    match f {
        FilterSpec::KeyOnly { len_as_value } => wrap(
            "KeyOnlyFilter",
            pb::KeyOnlyFilter {
                len_as_val: *len_as_value,
            },
        ),
        FilterSpec::FirstKeyOnly => wrap("FirstKeyOnlyFilter", pb::FirstKeyOnlyFilter {}),
        FilterSpec::Prefix(p) => wrap("PrefixFilter", pb::PrefixFilter { prefix: Some(b(p)) }),
        FilterSpec::ColumnPrefix(p) => wrap(
            "ColumnPrefixFilter",
            pb::ColumnPrefixFilter { prefix: b(p) },
        ),
        FilterSpec::MultipleColumnPrefix(ps) => wrap(
            "MultipleColumnPrefixFilter",
            pb::MultipleColumnPrefixFilter {
                sorted_prefixes: ps.iter().map(|p| b(p)).collect(),
            },
        ),
        FilterSpec::ColumnRange {
            min,
            min_inclusive,
            max,
            max_inclusive,
        } => wrap(
            "ColumnRangeFilter",
            pb::ColumnRangeFilter {
                min_column: min.as_deref().map(b),
                min_column_inclusive: Some(*min_inclusive),
                max_column: max.as_deref().map(b),
                max_column_inclusive: Some(*max_inclusive),
            },
        ),
        FilterSpec::ColumnPagination {
            limit,
            offset,
            column_offset,
        } => wrap(
            "ColumnPaginationFilter",
            pb::ColumnPaginationFilter {
                limit: *limit as i32,
                offset: column_offset.is_none().then_some(*offset as i32),
                column_offset: column_offset.as_deref().map(b),
            },
        ),
        FilterSpec::ColumnCountGet(n) => wrap(
            "ColumnCountGetFilter",
            pb::ColumnCountGetFilter { limit: *n as i32 },
        ),
        FilterSpec::Page(n) => wrap(
            "PageFilter",
            pb::PageFilter {
                page_size: *n as i64,
            },
        ),
        FilterSpec::InclusiveStop(r) => wrap(
            "InclusiveStopFilter",
            pb::InclusiveStopFilter {
                stop_row_key: Some(b(r)),
            },
        ),
        FilterSpec::Timestamps(ts) => wrap(
            "TimestampsFilter",
            pb::TimestampsFilter {
                timestamps: ts.clone(),
                can_hint: None,
            },
        ),
        FilterSpec::TimestampsCanHint(ts) => wrap(
            "TimestampsFilter",
            pb::TimestampsFilter {
                timestamps: ts.clone(),
                can_hint: Some(true),
            },
        ),
        FilterSpec::Row(o, c) => wrap(
            "RowFilter",
            pb::RowFilter {
                compare_filter: compare_to(*o, c),
            },
        ),
        FilterSpec::Family(o, c) => wrap(
            "FamilyFilter",
            pb::FamilyFilter {
                compare_filter: compare_to(*o, c),
            },
        ),
        FilterSpec::Qualifier(o, c) => wrap(
            "QualifierFilter",
            pb::QualifierFilter {
                compare_filter: compare_to(*o, c),
            },
        ),
        FilterSpec::Value(o, c) => wrap(
            "ValueFilter",
            pb::ValueFilter {
                compare_filter: compare_to(*o, c),
            },
        ),
        FilterSpec::ColumnValue {
            family,
            qualifier,
            op,
            comparator,
        } => wrap(
            "ColumnValueFilter",
            pb::ColumnValueFilter {
                family: b(family),
                qualifier: b(qualifier),
                compare_op: compare_op_to(*op),
                comparator: comparator_to_pb(Some(comparator)),
            },
        ),
        FilterSpec::SingleColumnValue {
            family,
            qualifier,
            op,
            comparator,
            filter_if_missing,
            latest_version_only,
            exclude,
        } => {
            let inner = pb::SingleColumnValueFilter {
                column_family: Some(b(family)),
                column_qualifier: Some(b(qualifier)),
                compare_op: compare_op_to(*op),
                comparator: comparator_to_pb(Some(comparator)),
                filter_if_missing: Some(*filter_if_missing),
                latest_version_only: Some(*latest_version_only),
            };
            if *exclude {
                wrap(
                    "SingleColumnValueExcludeFilter",
                    pb::SingleColumnValueExcludeFilter {
                        single_column_value_filter: inner,
                    },
                )
            } else {
                wrap("SingleColumnValueFilter", inner)
            }
        }
        FilterSpec::DependentColumn {
            family,
            qualifier,
            drop_dependent,
            compare,
        } => wrap(
            "DependentColumnFilter",
            pb::DependentColumnFilter {
                compare_filter: match compare {
                    Some((o, c)) => compare_to(*o, c),
                    None => pb::CompareFilter {
                        compare_op: compare_op_to(CompareOp::NoOp),
                        comparator: None,
                    },
                },
                column_family: Some(b(family)),
                column_qualifier: Some(b(qualifier)),
                drop_dependent_column: Some(*drop_dependent),
            },
        ),
        FilterSpec::WhileMatch(x) => wrap(
            "WhileMatchFilter",
            pb::WhileMatchFilter {
                filter: filter_to_pb(x),
            },
        ),
        FilterSpec::Skip(x) => wrap(
            "SkipFilter",
            pb::SkipFilter {
                filter: filter_to_pb(x),
            },
        ),
        FilterSpec::List(op, fs) => wrap(
            "FilterList",
            pb::FilterList {
                operator: match op {
                    ListOp::MustPassAll => pb::filter_list::Operator::MustPassAll,
                    ListOp::MustPassOne => pb::filter_list::Operator::MustPassOne,
                } as i32,
                filters: fs.iter().map(filter_to_pb).collect(),
            },
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<FilterSpec> {
        let bin = Comparator::Binary(b"v".to_vec());
        vec![
            FilterSpec::KeyOnly { len_as_value: true },
            FilterSpec::FirstKeyOnly,
            FilterSpec::Prefix(b"p".to_vec()),
            FilterSpec::ColumnPrefix(b"c".to_vec()),
            FilterSpec::MultipleColumnPrefix(vec![b"a".to_vec(), b"b".to_vec()]),
            FilterSpec::ColumnRange {
                min: Some(b"a".to_vec()),
                min_inclusive: true,
                max: None,
                max_inclusive: false,
            },
            FilterSpec::ColumnPagination {
                limit: 5,
                offset: 2,
                column_offset: None,
            },
            FilterSpec::ColumnPagination {
                limit: 5,
                offset: 0,
                column_offset: Some(b"q".to_vec()),
            },
            FilterSpec::ColumnCountGet(3),
            FilterSpec::Page(10),
            FilterSpec::InclusiveStop(b"z".to_vec()),
            FilterSpec::Timestamps(vec![1, 5]),
            FilterSpec::TimestampsCanHint(vec![2, 7]),
            FilterSpec::Row(CompareOp::Less, bin.clone()),
            FilterSpec::Family(CompareOp::Equal, Comparator::BinaryPrefix(b"f".to_vec())),
            FilterSpec::Qualifier(CompareOp::NotEqual, Comparator::substring("AbC")),
            FilterSpec::Value(CompareOp::Equal, Comparator::RegexString("a.b".into())),
            FilterSpec::ColumnValue {
                family: b"f".to_vec(),
                qualifier: b"q".to_vec(),
                op: CompareOp::Greater,
                comparator: bin.clone(),
            },
            FilterSpec::SingleColumnValue {
                family: b"f".to_vec(),
                qualifier: b"q".to_vec(),
                op: CompareOp::Equal,
                comparator: bin.clone(),
                filter_if_missing: true,
                latest_version_only: false,
                exclude: true,
            },
            FilterSpec::DependentColumn {
                family: b"f".to_vec(),
                qualifier: b"q".to_vec(),
                drop_dependent: true,
                compare: Some((CompareOp::Equal, bin.clone())),
            },
            FilterSpec::DependentColumn {
                family: b"f".to_vec(),
                qualifier: b"q".to_vec(),
                drop_dependent: false,
                compare: None,
            },
            FilterSpec::WhileMatch(Box::new(FilterSpec::Prefix(b"x".to_vec()))),
            FilterSpec::Skip(Box::new(FilterSpec::Value(CompareOp::NotEqual, bin))),
            FilterSpec::List(
                ListOp::MustPassOne,
                vec![FilterSpec::FirstKeyOnly, FilterSpec::Page(1)],
            ),
        ]
    }

    #[test]
    fn every_filter_round_trips() {
        for f in samples() {
            assert_eq!(filter_from_pb(&filter_to_pb(&f)).unwrap(), f, "{f}");
        }
    }

    #[test]
    fn unknown_classes_and_hostile_nesting_are_errors() {
        let unknown = pb::Filter {
            name: "org.apache.hadoop.hbase.filter.FuzzyRowFilter".into(),
            serialized_filter: None,
        };
        let e = filter_from_pb(&unknown).unwrap_err().to_string();
        assert!(e.contains("FuzzyRowFilter"), "{e}");
        let mut f = FilterSpec::FirstKeyOnly;
        for _ in 0..200 {
            f = FilterSpec::Skip(Box::new(f));
        }
        assert!(filter_from_pb(&filter_to_pb(&f)).is_err());
        let garbage = pb::Filter {
            name: "org.apache.hadoop.hbase.filter.PageFilter".into(),
            serialized_filter: Some(Bytes::from_static(b"\xff\xff")),
        };
        assert!(filter_from_pb(&garbage).is_err());
    }

    #[test]
    fn regex_flags_become_inline_flags() {
        let m = pb::RegexStringComparator {
            pattern: "ab".into(),
            pattern_flags: CASE_INSENSITIVE,
            charset: "UTF-8".into(),
            engine: None,
        };
        let c = pb::Comparator {
            name: format!("{FILTER_PKG}RegexStringComparator"),
            serialized_comparator: Some(Bytes::from(m.encode_to_vec())),
        };
        assert_eq!(
            comparator_from_pb(&c).unwrap(),
            Some(Comparator::RegexString("(?i)(?-s)ab".into()))
        );
    }
}
