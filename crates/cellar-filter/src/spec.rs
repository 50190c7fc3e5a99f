//! The declarative form of a filter tree: what a Scan carries and the parser produces.

use std::fmt;

use cellar_types::to_string_binary;

use crate::compare::{Comparator, CompareOp};
use crate::filter::Filter;
use crate::filters::{column, row, value};
use crate::list::{FilterList, SkipFilter, WhileMatchFilter};

/// How a FilterList combines its filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListOp {
    /// AND.
    MustPassAll,
    /// OR.
    MustPassOne,
}

/// A filter tree.
#[derive(Debug, Clone, PartialEq)]
pub enum FilterSpec {
    KeyOnly {
        len_as_value: bool,
    },
    FirstKeyOnly,
    Prefix(Vec<u8>),
    ColumnPrefix(Vec<u8>),
    MultipleColumnPrefix(Vec<Vec<u8>>),
    /// Empty bounds are unbounded.
    ColumnRange {
        min: Option<Vec<u8>>,
        min_inclusive: bool,
        max: Option<Vec<u8>>,
        max_inclusive: bool,
    },
    /// `limit` columns from the `offset`-th, or from the column `column_offset` (inclusive).
    ColumnPagination {
        limit: u32,
        offset: u32,
        column_offset: Option<Vec<u8>>,
    },
    ColumnCountGet(u32),
    Page(u64),
    InclusiveStop(Vec<u8>),
    Timestamps(Vec<i64>),
    Row(CompareOp, Comparator),
    Family(CompareOp, Comparator),
    Qualifier(CompareOp, Comparator),
    Value(CompareOp, Comparator),
    /// The matching cells of one column only.
    ColumnValue {
        family: Vec<u8>,
        qualifier: Vec<u8>,
        op: CompareOp,
        comparator: Comparator,
    },
    SingleColumnValue {
        family: Vec<u8>,
        qualifier: Vec<u8>,
        op: CompareOp,
        comparator: Comparator,
        filter_if_missing: bool,
        latest_version_only: bool,
        /// SingleColumnValueExcludeFilter: drop the tested column from the output.
        exclude: bool,
    },
    DependentColumn {
        family: Vec<u8>,
        qualifier: Vec<u8>,
        drop_dependent: bool,
        compare: Option<(CompareOp, Comparator)>,
    },
    WhileMatch(Box<FilterSpec>),
    Skip(Box<FilterSpec>),
    List(ListOp, Vec<FilterSpec>),
}

impl FilterSpec {
    /// A stateful filter for one scanner.
    pub fn build(&self) -> Box<dyn Filter> {
        match self {
            FilterSpec::KeyOnly { len_as_value } => Box::new(column::KeyOnly {
                len_as_value: *len_as_value,
            }),
            FilterSpec::FirstKeyOnly => Box::new(row::FirstKeyOnly::default()),
            FilterSpec::Prefix(p) => Box::new(row::Prefix::new(p.clone())),
            FilterSpec::ColumnPrefix(p) => Box::new(column::ColumnPrefix { prefix: p.clone() }),
            FilterSpec::MultipleColumnPrefix(ps) => Box::new(column::MultipleColumnPrefix::new(ps)),
            FilterSpec::ColumnRange {
                min,
                min_inclusive,
                max,
                max_inclusive,
            } => Box::new(column::ColumnRange {
                min: min.clone(),
                min_inclusive: *min_inclusive,
                max: max.clone(),
                max_inclusive: *max_inclusive,
            }),
            FilterSpec::ColumnPagination {
                limit,
                offset,
                column_offset,
            } => Box::new(column::ColumnPagination {
                limit: *limit,
                offset: *offset,
                column_offset: column_offset.clone(),
                count: 0,
            }),
            FilterSpec::ColumnCountGet(n) => Box::new(column::ColumnCountGet {
                limit: *n,
                count: 0,
            }),
            FilterSpec::Page(n) => Box::new(row::Page {
                page_size: *n,
                rows_accepted: 0,
            }),
            FilterSpec::InclusiveStop(r) => Box::new(row::InclusiveStop {
                stop: r.clone(),
                done: false,
                reversed: false,
            }),
            FilterSpec::Timestamps(ts) => Box::new(column::Timestamps::new(ts)),
            FilterSpec::Row(op, c) => Box::new(row::RowCompare {
                op: *op,
                cmp: c.clone(),
                filter_out: false,
            }),
            FilterSpec::Family(op, c) => Box::new(column::FamilyCompare {
                op: *op,
                cmp: c.clone(),
            }),
            FilterSpec::Qualifier(op, c) => Box::new(column::QualifierCompare {
                op: *op,
                cmp: c.clone(),
            }),
            FilterSpec::Value(op, c) => Box::new(value::ValueCompare {
                op: *op,
                cmp: c.clone(),
            }),
            FilterSpec::ColumnValue {
                family,
                qualifier,
                op,
                comparator,
            } => Box::new(value::ColumnValue {
                family: family.clone(),
                qualifier: qualifier.clone(),
                op: *op,
                cmp: comparator.clone(),
                column_found: false,
            }),
            FilterSpec::SingleColumnValue {
                family,
                qualifier,
                op,
                comparator,
                filter_if_missing,
                latest_version_only,
                exclude,
            } => Box::new(value::SingleColumnValue {
                family: family.clone(),
                qualifier: qualifier.clone(),
                op: *op,
                cmp: comparator.clone(),
                filter_if_missing: *filter_if_missing,
                latest_version_only: *latest_version_only,
                exclude: *exclude,
                found: false,
                matched: false,
            }),
            FilterSpec::DependentColumn {
                family,
                qualifier,
                drop_dependent,
                compare,
            } => Box::new(value::DependentColumn {
                family: family.clone(),
                qualifier: qualifier.clone(),
                drop_dependent: *drop_dependent,
                compare: compare.clone(),
                stamps: Default::default(),
            }),
            FilterSpec::WhileMatch(f) => Box::new(WhileMatchFilter::new(f.build())),
            FilterSpec::Skip(f) => Box::new(SkipFilter::new(f.build())),
            FilterSpec::List(op, fs) => {
                Box::new(FilterList::new(*op, fs.iter().map(|f| f.build()).collect()))
            }
        }
    }

    /// Whether the tree uses row-level hooks (then batching a row is refused, as HBase's
    /// `IncompatibleFilterException`).
    pub fn has_filter_row(&self) -> bool {
        self.build().has_filter_row()
    }
}

fn q(b: &[u8]) -> String {
    format!("'{}'", to_string_binary(b).replace('\'', "''"))
}

fn cmp(c: &Comparator) -> String {
    format!("'{}'", c.to_string().replace('\'', "''"))
}

fn op(o: CompareOp) -> &'static str {
    match o {
        CompareOp::Less => "<",
        CompareOp::LessOrEqual => "<=",
        CompareOp::Equal => "=",
        CompareOp::NotEqual => "!=",
        CompareOp::GreaterOrEqual => ">=",
        CompareOp::Greater => ">",
        CompareOp::NoOp => "NO_OP",
    }
}

impl fmt::Display for FilterSpec {
    /// The filter-language form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FilterSpec::KeyOnly { len_as_value } => write!(f, "KeyOnlyFilter({len_as_value})"),
            FilterSpec::FirstKeyOnly => write!(f, "FirstKeyOnlyFilter()"),
            FilterSpec::Prefix(p) => write!(f, "PrefixFilter({})", q(p)),
            FilterSpec::ColumnPrefix(p) => write!(f, "ColumnPrefixFilter({})", q(p)),
            FilterSpec::MultipleColumnPrefix(ps) => {
                let parts: Vec<String> = ps.iter().map(|p| q(p)).collect();
                write!(f, "MultipleColumnPrefixFilter({})", parts.join(", "))
            }
            FilterSpec::ColumnRange {
                min,
                min_inclusive,
                max,
                max_inclusive,
            } => write!(
                f,
                "ColumnRangeFilter({}, {min_inclusive}, {}, {max_inclusive})",
                q(min.as_deref().unwrap_or_default()),
                q(max.as_deref().unwrap_or_default())
            ),
            FilterSpec::ColumnPagination {
                limit,
                offset,
                column_offset,
            } => match column_offset {
                None => write!(f, "ColumnPaginationFilter({limit}, {offset})"),
                Some(c) => write!(f, "ColumnPaginationFilter({limit}, {})", q(c)),
            },
            FilterSpec::ColumnCountGet(n) => write!(f, "ColumnCountGetFilter({n})"),
            FilterSpec::Page(n) => write!(f, "PageFilter({n})"),
            FilterSpec::InclusiveStop(r) => write!(f, "InclusiveStopFilter({})", q(r)),
            FilterSpec::Timestamps(ts) => {
                let parts: Vec<String> = ts.iter().map(|t| t.to_string()).collect();
                write!(f, "TimestampsFilter({})", parts.join(", "))
            }
            FilterSpec::Row(o, c) => write!(f, "RowFilter({}, {})", op(*o), cmp(c)),
            FilterSpec::Family(o, c) => write!(f, "FamilyFilter({}, {})", op(*o), cmp(c)),
            FilterSpec::Qualifier(o, c) => write!(f, "QualifierFilter({}, {})", op(*o), cmp(c)),
            FilterSpec::Value(o, c) => write!(f, "ValueFilter({}, {})", op(*o), cmp(c)),
            FilterSpec::ColumnValue {
                family,
                qualifier,
                op: o,
                comparator,
            } => write!(
                f,
                "ColumnValueFilter({}, {}, {}, {})",
                q(family),
                q(qualifier),
                op(*o),
                cmp(comparator)
            ),
            FilterSpec::SingleColumnValue {
                family,
                qualifier,
                op: o,
                comparator,
                filter_if_missing,
                latest_version_only,
                exclude,
            } => write!(
                f,
                "{}({}, {}, {}, {}, {filter_if_missing}, {latest_version_only})",
                if *exclude {
                    "SingleColumnValueExcludeFilter"
                } else {
                    "SingleColumnValueFilter"
                },
                q(family),
                q(qualifier),
                op(*o),
                cmp(comparator)
            ),
            FilterSpec::DependentColumn {
                family,
                qualifier,
                drop_dependent,
                compare,
            } => match compare {
                None => write!(
                    f,
                    "DependentColumnFilter({}, {}, {drop_dependent})",
                    q(family),
                    q(qualifier)
                ),
                Some((o, c)) => write!(
                    f,
                    "DependentColumnFilter({}, {}, {drop_dependent}, {}, {})",
                    q(family),
                    q(qualifier),
                    op(*o),
                    cmp(c)
                ),
            },
            FilterSpec::WhileMatch(x) => write!(f, "WHILE ({x})"),
            FilterSpec::Skip(x) => write!(f, "SKIP ({x})"),
            FilterSpec::List(lop, fs) => {
                let sep = match lop {
                    ListOp::MustPassAll => " AND ",
                    ListOp::MustPassOne => " OR ",
                };
                let parts: Vec<String> = fs.iter().map(|x| format!("({x})")).collect();
                write!(f, "{}", parts.join(sep))
            }
        }
    }
}
