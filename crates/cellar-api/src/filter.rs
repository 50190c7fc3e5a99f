//! Filter specifications: the declarative, clonable filter tree a Get or Scan carries
//! (HBase's filters by name and arguments), the compare operators and comparators, and
//! the filter-language text of a tree. Running a filter is the engine's business
//! (`cellar-filter` builds the stateful filter from a spec).

use std::cmp::Ordering;
use std::fmt;

use cellar_types::to_string_binary;

/// HBase's `CompareOperator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompareOp {
    Less,
    LessOrEqual,
    Equal,
    NotEqual,
    GreaterOrEqual,
    Greater,
    NoOp,
}

impl CompareOp {
    pub fn name(self) -> &'static str {
        match self {
            CompareOp::Less => "LESS",
            CompareOp::LessOrEqual => "LESS_OR_EQUAL",
            CompareOp::Equal => "EQUAL",
            CompareOp::NotEqual => "NOT_EQUAL",
            CompareOp::GreaterOrEqual => "GREATER_OR_EQUAL",
            CompareOp::Greater => "GREATER",
            CompareOp::NoOp => "NO_OP",
        }
    }

    /// Parses `LESS`… or the filter language's `<`, `<=`, `=`, `!=`, `>=`, `>`.
    pub fn from_name(s: &str) -> Option<CompareOp> {
        Some(match s.to_ascii_uppercase().as_str() {
            "LESS" | "<" => CompareOp::Less,
            "LESS_OR_EQUAL" | "<=" => CompareOp::LessOrEqual,
            "EQUAL" | "=" => CompareOp::Equal,
            "NOT_EQUAL" | "!=" => CompareOp::NotEqual,
            "GREATER_OR_EQUAL" | ">=" => CompareOp::GreaterOrEqual,
            "GREATER" | ">" => CompareOp::Greater,
            "NO_OP" => CompareOp::NoOp,
            _ => return None,
        })
    }

    /// Whether `left OP right` holds, given `ordering` = left compared with right.
    pub fn holds(self, ordering: Ordering) -> bool {
        match self {
            CompareOp::Less => ordering == Ordering::Less,
            CompareOp::LessOrEqual => ordering != Ordering::Greater,
            CompareOp::Equal => ordering == Ordering::Equal,
            CompareOp::NotEqual => ordering != Ordering::Equal,
            CompareOp::GreaterOrEqual => ordering != Ordering::Less,
            CompareOp::Greater => ordering == Ordering::Greater,
            CompareOp::NoOp => false,
        }
    }
}

/// What a filter compares cell bytes with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Comparator {
    /// Whole-value lexicographic comparison.
    Binary(Vec<u8>),
    /// Compares only as many bytes as the operand has.
    BinaryPrefix(Vec<u8>),
    /// Equal when the regular expression (Java syntax) finds a match (EQUAL / NOT_EQUAL
    /// only).
    RegexString(String),
    /// Equal when the value contains the text, case-insensitively (EQUAL / NOT_EQUAL
    /// only); held lower-cased, as HBase's `SubstringComparator` does.
    Substring(String),
}

impl Comparator {
    /// A substring comparator (case-insensitive, as HBase lower-cases both sides).
    pub fn substring(s: &str) -> Comparator {
        Comparator::Substring(s.to_lowercase())
    }
}

impl fmt::Display for Comparator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Comparator::Binary(v) => write!(f, "binary:{}", to_string_binary(v)),
            Comparator::BinaryPrefix(v) => write!(f, "binaryprefix:{}", to_string_binary(v)),
            Comparator::RegexString(s) => write!(f, "regexstring:{s}"),
            Comparator::Substring(s) => write!(f, "substring:{s}"),
        }
    }
}

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
    /// Cells with one of these timestamps, other versions skipped one by one (HBase's
    /// default, and what its Java client sends).
    Timestamps(Vec<i64>),
    /// The same, seeking to the next listed timestamp (`canHint`): faster, and like
    /// HBase's it can seek past a column's delete marker to a version it masks.
    TimestampsCanHint(Vec<i64>),
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
    /// Whether HBase's filter for this tree has row-level hooks (`hasFilterRow`):
    /// SingleColumnValue(Exclude), DependentColumn, Page, Skip, WhileMatch, and lists
    /// holding one. A scan may not batch a row through such a filter
    /// (`IncompatibleFilterException`).
    pub fn has_filter_row(&self) -> bool {
        match self {
            FilterSpec::SingleColumnValue { .. }
            | FilterSpec::DependentColumn { .. }
            | FilterSpec::Page(_)
            | FilterSpec::Skip(_)
            | FilterSpec::WhileMatch(_) => true,
            FilterSpec::List(_, fs) => fs.iter().any(FilterSpec::has_filter_row),
            _ => false,
        }
    }

    /// HBase's `isFamilyEssential`: whether the filter needs the family's cells to
    /// decide on a row (a SingleColumnValueFilter with `filterIfMissing`, and a
    /// ColumnValueFilter, need only their own family; HBase loads the others on demand,
    /// and refuses that in reversed scans).
    pub fn is_family_essential(&self, family: &[u8]) -> bool {
        match self {
            FilterSpec::SingleColumnValue {
                family: f,
                filter_if_missing,
                ..
            } => !filter_if_missing || f.as_slice() == family,
            FilterSpec::ColumnValue { family: f, .. } => f.as_slice() == family,
            FilterSpec::Skip(x) | FilterSpec::WhileMatch(x) => x.is_family_essential(family),
            FilterSpec::List(_, fs) => {
                fs.is_empty() || fs.iter().any(|f| f.is_family_essential(family))
            }
            _ => true,
        }
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
            FilterSpec::Timestamps(ts) | FilterSpec::TimestampsCanHint(ts) => {
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
