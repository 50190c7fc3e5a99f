//! Builds the stateful filter one scanner runs from the declarative [`FilterSpec`] a
//! Get or Scan carries.

use cellar_api::FilterSpec;

use crate::compare::{Comparable, Comparator};
use crate::filter::Filter;
use crate::filters::{column, row, value};
use crate::list::{FilterList, SkipFilter, WhileMatchFilter};

/// A filter spec that cannot run (a regex that does not compile).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid filter: {reason}")]
pub struct BuildError {
    pub reason: String,
}

impl BuildError {
    pub fn kind(&self) -> cellar_api::ErrorKind {
        cellar_api::ErrorKind::InvalidRequest
    }
}

fn compile(c: &Comparator) -> Result<Comparable, BuildError> {
    Comparable::compile(c).map_err(|reason| BuildError { reason })
}

/// A stateful filter for one scanner.
pub fn build(spec: &FilterSpec) -> Result<Box<dyn Filter>, BuildError> {
    Ok(match spec {
        FilterSpec::KeyOnly { len_as_value } => Box::new(column::KeyOnly {
            len_as_value: *len_as_value,
        }),
        FilterSpec::FirstKeyOnly => Box::new(row::FirstKeyOnly::default()),
        FilterSpec::Prefix(p) => Box::new(row::Prefix::new(p.clone())),
        FilterSpec::ColumnPrefix(p) => Box::new(column::ColumnPrefix { prefix: p.clone() }),
        FilterSpec::MultipleColumnPrefix(ps) => {
            // HBase's MultipleColumnPrefixFilter refuses a prefix given twice.
            let distinct: std::collections::BTreeSet<&Vec<u8>> = ps.iter().collect();
            if distinct.len() != ps.len() {
                return Err(BuildError {
                    reason: "MultipleColumnPrefixFilter: prefixes must be distinct".into(),
                });
            }
            Box::new(column::MultipleColumnPrefix::new(ps))
        }
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
        FilterSpec::Timestamps(ts) => Box::new(column::Timestamps::new(ts, false)),
        FilterSpec::TimestampsCanHint(ts) => Box::new(column::Timestamps::new(ts, true)),
        FilterSpec::Row(op, c) => Box::new(row::RowCompare {
            op: *op,
            cmp: compile(c)?,
            filter_out: false,
        }),
        FilterSpec::Family(op, c) => Box::new(column::FamilyCompare {
            op: *op,
            cmp: compile(c)?,
        }),
        FilterSpec::Qualifier(op, c) => Box::new(column::QualifierCompare {
            op: *op,
            cmp: compile(c)?,
        }),
        FilterSpec::Value(op, c) => Box::new(value::ValueCompare {
            op: *op,
            cmp: compile(c)?,
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
            cmp: compile(comparator)?,
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
            cmp: compile(comparator)?,
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
            compare: match compare {
                Some((op, c)) => Some((*op, compile(c)?)),
                None => None,
            },
            stamps: Default::default(),
        }),
        FilterSpec::WhileMatch(f) => Box::new(WhileMatchFilter::new(build(f)?)),
        FilterSpec::Skip(f) => Box::new(SkipFilter::new(build(f)?)),
        FilterSpec::List(op, fs) => Box::new(FilterList::new(
            *op,
            fs.iter().map(build).collect::<Result<Vec<_>, _>>()?,
        )),
    })
}

/// Whether the tree uses row-level hooks (then batching a row is refused, as HBase's
/// `IncompatibleFilterException`).
pub fn has_filter_row(spec: &FilterSpec) -> Result<bool, BuildError> {
    Ok(build(spec)?.has_filter_row())
}
