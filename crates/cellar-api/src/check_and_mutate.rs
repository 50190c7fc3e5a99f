//! checkAndMutate (HBase 2.4's `CheckAndMutate`, Bigtable's `CheckAndMutateRow`): apply
//! mutations of one row atomically when a condition on that row holds. The condition
//! is a comparison of one column's newest value, or a filter that must leave a cell.

use crate::filter::{CompareOp, FilterSpec};
use crate::mutation::Mutation;
use crate::read::TimeRange;
use crate::result::RowResult;

/// What must hold for a checkAndMutate to apply its mutations.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// `expected OP stored` on one column (the expected value on the left, as HBase
    /// compares), or the column's absence when `expected` is `None`/empty.
    Column {
        family: Vec<u8>,
        qualifier: Vec<u8>,
        op: CompareOp,
        expected: Option<Vec<u8>>,
        time_range: TimeRange,
    },
    /// Holds when a Get of the row with this filter (and time range) returns a cell.
    Filter {
        filter: FilterSpec,
        time_range: TimeRange,
    },
}

impl Condition {
    /// `ifNotExists(f, q)`.
    pub fn not_exists(family: impl Into<Vec<u8>>, qualifier: impl Into<Vec<u8>>) -> Condition {
        Condition::Column {
            family: family.into(),
            qualifier: qualifier.into(),
            op: CompareOp::Equal,
            expected: None,
            time_range: TimeRange::ALL,
        }
    }

    /// `ifEquals(f, q, v)`.
    pub fn equals(
        family: impl Into<Vec<u8>>,
        qualifier: impl Into<Vec<u8>>,
        value: impl Into<Vec<u8>>,
    ) -> Condition {
        Condition::matches(family, qualifier, CompareOp::Equal, value)
    }

    /// `ifMatches(f, q, op, v)`.
    pub fn matches(
        family: impl Into<Vec<u8>>,
        qualifier: impl Into<Vec<u8>>,
        op: CompareOp,
        value: impl Into<Vec<u8>>,
    ) -> Condition {
        Condition::Column {
            family: family.into(),
            qualifier: qualifier.into(),
            op,
            expected: Some(value.into()),
            time_range: TimeRange::ALL,
        }
    }

    /// `ifMatches(filter)`.
    pub fn filter(filter: FilterSpec) -> Condition {
        Condition::Filter {
            filter,
            time_range: TimeRange::ALL,
        }
    }

    /// `timeRange(min, max)`: only cells in `[min, max)` are considered.
    pub fn time_range(mut self, min: i64, max: i64) -> Condition {
        match &mut self {
            Condition::Column { time_range, .. } | Condition::Filter { time_range, .. } => {
                *time_range = TimeRange::new(min, max)
            }
        }
        self
    }

    /// The family the condition reads, when it names one.
    pub fn family(&self) -> Option<&[u8]> {
        match self {
            Condition::Column { family, .. } => Some(family),
            Condition::Filter { .. } => None,
        }
    }
}

/// A conditional write of one row.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckAndMutate {
    pub row: Vec<u8>,
    pub condition: Condition,
    /// Applied atomically, all of them, when the condition holds.
    pub mutations: Vec<Mutation>,
}

impl CheckAndMutate {
    pub fn new(row: impl Into<Vec<u8>>, condition: Condition) -> CheckAndMutate {
        CheckAndMutate {
            row: row.into(),
            condition,
            mutations: Vec::new(),
        }
    }

    pub fn then(mut self, m: impl Into<Mutation>) -> CheckAndMutate {
        self.mutations.push(m.into());
        self
    }
}

/// What a checkAndMutate answers (`CheckAndMutateResult`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CheckAndMutateResult {
    pub success: bool,
    /// Results of increments and appends among the mutations.
    pub result: RowResult,
}
