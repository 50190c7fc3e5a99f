//! HBase's filters (§9 of the semantics reference): the return codes and the order they
//! are asked in, the comparators, every filter the filter language registers plus
//! WhileMatch, Skip and FilterList, and the parser of the filter language. A
//! [`FilterSpec`] (from `cellar-api`) is the declarative, clonable form a Scan carries;
//! [`build`] makes the stateful [`Filter`] one scanner runs.

mod build;
mod compare;
mod filter;
mod filters;
mod java_regex;
mod list;
mod parse;

pub use build::{build, has_filter_row, BuildError};
pub use cellar_api::{Comparator, CompareOp, FilterSpec, ListOp};
pub use compare::Comparable;
pub use filter::{Filter, ReturnCode};
pub use java_regex::JavaRegex;
pub use parse::{parse_filter, parse_filter_bytes, ParseError, MAX_NESTING};
