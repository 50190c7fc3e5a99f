//! Bigtable's `RowFilter` over one row, with Bigtable's semantics rather than HBase's:
//! a filter maps a row's cells (families, then qualifiers, ascending; timestamps
//! descending) to the cells it outputs, and says whether the row matched at all. Where
//! the documentation leaves room, the behaviour is that of Google's emulator
//! (`bigtable/bttest`), the reference the gateway's tests compare with:
//!
//! - `chain` and `interleave` need at least two filters; a chain stops at the first
//!   filter that does not match; an interleave pools the outputs of the filters that
//!   matched, sorts them into row order (duplicates kept, in filter order among equals).
//! - `condition` without the branch it takes outputs nothing.
//! - `cells_per_row_limit` and `cells_per_column_limit` always match (the row may be
//!   empty), `cells_per_row_offset` matches when cells remain.
//! - regular expressions are RE2 over bytes and match the whole target (`^(?:…)$`);
//!   `\C` is any byte.
//! - `sink` sends the cells it is given to the read's output past every enclosing filter.
//! - `row_sample` keeps the row with the given probability (drawn from the caller's
//!   source of randomness).

use std::fmt;

use regex::bytes::{Regex, RegexBuilder};

use crate::v2::row_filter::Filter;
use crate::v2::{column_range, value_range, RowFilter};

/// One cell as Bigtable sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub family: String,
    pub qualifier: Vec<u8>,
    pub timestamp_micros: i64,
    pub value: Vec<u8>,
    pub labels: Vec<String>,
}

impl Cell {
    fn column_order(&self, other: &Cell) -> std::cmp::Ordering {
        (self.family.as_str(), self.qualifier.as_slice())
            .cmp(&(other.family.as_str(), other.qualifier.as_slice()))
            .then(other.timestamp_micros.cmp(&self.timestamp_micros))
    }

    fn same_column(&self, other: &Cell) -> bool {
        self.family == other.family && self.qualifier == other.qualifier
    }
}

/// A filter Bigtable would refuse (INVALID_ARGUMENT).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError(pub String);

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FilterError {}

type Result<T> = std::result::Result<T, FilterError>;

fn invalid(msg: impl Into<String>) -> FilterError {
    FilterError(msg.into())
}

/// What a filter made of a row: the cells it passes on, whether the row matched, and
/// the cells a `sink` sent straight to the output.
#[derive(Debug, Default)]
struct Outcome {
    cells: Vec<Cell>,
    matched: bool,
    sunk: Vec<Cell>,
}

/// Filters a row: the cells the read outputs (in row order), or `None` when the row is
/// left out. `sample` draws a number in [0, 1) for `row_sample_filter`.
pub fn filter_row(
    filter: Option<&RowFilter>,
    key: &[u8],
    cells: Vec<Cell>,
    sample: &mut dyn FnMut() -> f64,
) -> Result<Option<Vec<Cell>>> {
    let Some(f) = filter else {
        return Ok(Some(cells));
    };
    let mut out = apply(f, key, cells, sample, 0)?;
    if !out.matched && out.sunk.is_empty() {
        return Ok(None);
    }
    if !out.matched {
        out.cells.clear();
    }
    out.cells.append(&mut out.sunk);
    out.cells.sort_by(Cell::column_order);
    Ok(Some(out.cells))
}

/// Deepest nesting of chains, interleaves and conditions a filter may have.
const MAX_DEPTH: usize = 64;

fn apply(
    f: &RowFilter,
    key: &[u8],
    cells: Vec<Cell>,
    sample: &mut dyn FnMut() -> f64,
    depth: usize,
) -> Result<Outcome> {
    if depth >= MAX_DEPTH {
        return Err(invalid(format!(
            "filter nested deeper than {MAX_DEPTH} levels"
        )));
    }
    let Some(filter) = &f.filter else {
        return Ok(Outcome {
            matched: true,
            cells,
            sunk: Vec::new(),
        });
    };
    let keep = |cells: Vec<Cell>, matched: bool| Outcome {
        cells,
        matched,
        sunk: Vec::new(),
    };
    Ok(match filter {
        Filter::PassAllFilter(true) => keep(cells, true),
        Filter::PassAllFilter(false) => return Err(invalid("pass_all_filter must be true if set")),
        Filter::BlockAllFilter(true) => keep(Vec::new(), false),
        Filter::BlockAllFilter(false) => {
            return Err(invalid("block_all_filter must be true if set"))
        }
        Filter::Sink(true) => Outcome {
            cells: cells.clone(),
            matched: true,
            sunk: cells,
        },
        Filter::Sink(false) => return Err(invalid("sink must be true if set")),
        Filter::Chain(chain) => {
            if chain.filters.len() < 2 {
                return Err(invalid("Chain must contain at least two RowFilters"));
            }
            let mut current = cells;
            let mut sunk = Vec::new();
            for sub in &chain.filters {
                let mut o = apply(sub, key, current, sample, depth + 1)?;
                sunk.append(&mut o.sunk);
                if !o.matched {
                    return Ok(Outcome {
                        cells: Vec::new(),
                        matched: false,
                        sunk,
                    });
                }
                current = o.cells;
            }
            Outcome {
                cells: current,
                matched: true,
                sunk,
            }
        }
        Filter::Interleave(interleave) => {
            if interleave.filters.len() < 2 {
                return Err(invalid("Interleave must contain at least two RowFilters"));
            }
            let mut pooled = Vec::new();
            let mut sunk = Vec::new();
            for sub in &interleave.filters {
                let mut o = apply(sub, key, cells.clone(), sample, depth + 1)?;
                sunk.append(&mut o.sunk);
                if o.matched {
                    pooled.append(&mut o.cells);
                }
            }
            // A stable sort: equal cells stay in filter order.
            pooled.sort_by(Cell::column_order);
            let matched = !pooled.is_empty();
            Outcome {
                cells: pooled,
                matched,
                sunk,
            }
        }
        Filter::Condition(c) => {
            let predicate = match &c.predicate_filter {
                Some(p) => apply(p, key, cells.clone(), sample, depth + 1)?,
                None => keep(cells.clone(), true),
            };
            let branch = if predicate.matched {
                &c.true_filter
            } else {
                &c.false_filter
            };
            match branch {
                Some(b) => apply(b, key, cells, sample, depth + 1)?,
                None => keep(Vec::new(), false),
            }
        }
        Filter::CellsPerColumnLimitFilter(n) => {
            let n = positive(*n, "cells_per_column_limit_filter")?;
            let mut out: Vec<Cell> = Vec::with_capacity(cells.len());
            let mut run = 0usize;
            for c in cells {
                run = match out.last() {
                    Some(prev) if prev.same_column(&c) => run + 1,
                    _ => 1,
                };
                if run <= n {
                    out.push(c);
                }
            }
            keep(out, true)
        }
        Filter::CellsPerRowLimitFilter(n) => {
            let n = positive(*n, "cells_per_row_limit_filter")?;
            let mut cells = cells;
            cells.truncate(n);
            keep(cells, true)
        }
        Filter::CellsPerRowOffsetFilter(n) => {
            let n = usize::try_from(*n).map_err(|_| {
                invalid("Error in field 'cells_per_row_offset_filter' : argument must be >= 0")
            })?;
            let rest: Vec<Cell> = cells.into_iter().skip(n).collect();
            let matched = !rest.is_empty();
            keep(rest, matched)
        }
        Filter::RowSampleFilter(p) => {
            if !(*p > 0.0 && *p < 1.0) {
                return Err(invalid(
                    "row_sample_filter argument must be between 0.0 and 1.0",
                ));
            }
            let matched = sample() < *p;
            keep(if matched { cells } else { Vec::new() }, matched)
        }
        Filter::RowKeyRegexFilter(re) => {
            if re.is_empty() {
                return Err(invalid(
                    "Error in field 'row_key_regex_filter' : argument must not be empty",
                ));
            }
            let rx = regex(re, "row_key_regex_filter")?;
            if rx.is_match(key) {
                let matched = !cells.is_empty();
                keep(cells, matched)
            } else {
                keep(Vec::new(), false)
            }
        }
        per_cell => {
            let test = CellTest::new(per_cell)?;
            let out: Vec<Cell> = cells.into_iter().filter_map(|c| test.apply(c)).collect();
            let matched = !out.is_empty();
            keep(out, matched)
        }
    })
}

fn positive(n: i32, field: &str) -> Result<usize> {
    match usize::try_from(n) {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(invalid(format!(
            "Error in field '{field}' : argument must be > 0"
        ))),
    }
}

/// RE2 over bytes, matching the whole target; non-ASCII pattern bytes stand for
/// themselves and `\C` for any byte.
fn regex(pattern: &[u8], field: &str) -> Result<Regex> {
    let mut p = String::with_capacity(pattern.len() + 16);
    let mut i = 0;
    while i < pattern.len() {
        let b = pattern[i];
        if b == b'\\' && pattern.get(i + 1) == Some(&b'C') {
            p.push_str("(?s-u:.)");
            i += 2;
            continue;
        }
        if b == b'\\' && i + 1 < pattern.len() {
            let n = pattern[i + 1];
            if n.is_ascii() {
                p.push('\\');
                p.push(char::from(n));
            } else {
                p.push_str(&format!("\\x{n:02X}"));
            }
            i += 2;
            continue;
        }
        if b.is_ascii() {
            p.push(char::from(b));
        } else {
            p.push_str(&format!("\\x{b:02X}"));
        }
        i += 1;
    }
    RegexBuilder::new(&format!("^(?:{p})$"))
        .unicode(false)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| invalid(format!("Error in field '{field}' : {e}")))
}

/// A filter that keeps or changes cells one at a time.
enum CellTest<'a> {
    Family(Regex),
    Qualifier(Regex),
    Value(Regex),
    ColumnRange(&'a crate::v2::ColumnRange),
    ValueRange(&'a crate::v2::ValueRange),
    Timestamps(i64, i64),
    Strip,
    Label(String),
}

impl<'a> CellTest<'a> {
    fn new(f: &'a Filter) -> Result<CellTest<'a>> {
        Ok(match f {
            Filter::FamilyNameRegexFilter(re) => {
                if re.contains(':') {
                    return Err(invalid(
                        "Error in field 'family_name_regex_filter' : argument must not contain ':'",
                    ));
                }
                CellTest::Family(regex(re.as_bytes(), "family_name_regex_filter")?)
            }
            Filter::ColumnQualifierRegexFilter(re) => {
                CellTest::Qualifier(regex(re, "column_qualifier_regex_filter")?)
            }
            Filter::ValueRegexFilter(re) => CellTest::Value(regex(re, "value_regex_filter")?),
            Filter::ColumnRangeFilter(r) => CellTest::ColumnRange(r),
            Filter::ValueRangeFilter(r) => CellTest::ValueRange(r),
            Filter::TimestampRangeFilter(r) => {
                let end = if r.end_timestamp_micros == 0 {
                    i64::MAX
                } else {
                    r.end_timestamp_micros
                };
                CellTest::Timestamps(r.start_timestamp_micros, end)
            }
            Filter::StripValueTransformer(true) => CellTest::Strip,
            Filter::StripValueTransformer(false) => {
                return Err(invalid("strip_value_transformer must be true if set"))
            }
            Filter::ApplyLabelTransformer(label) => {
                let ok = !label.is_empty()
                    && label.len() <= 15
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
                if !ok {
                    return Err(invalid(format!(
                        "apply_label_transformer must match RE2([a-z0-9\\-]+) (at most 15), but found {label}"
                    )));
                }
                CellTest::Label(label.clone())
            }
            other => return Err(invalid(format!("unsupported filter {other:?}"))),
        })
    }

    fn apply(&self, mut c: Cell) -> Option<Cell> {
        let keep = match self {
            CellTest::Family(rx) => rx.is_match(c.family.as_bytes()),
            CellTest::Qualifier(rx) => rx.is_match(&c.qualifier),
            CellTest::Value(rx) => rx.is_match(&c.value),
            CellTest::ColumnRange(r) => {
                let q = c.qualifier.as_slice();
                let start = match &r.start_qualifier {
                    Some(column_range::StartQualifier::StartQualifierClosed(s)) => {
                        q >= s.as_slice()
                    }
                    Some(column_range::StartQualifier::StartQualifierOpen(s)) => q > s.as_slice(),
                    None => true,
                };
                let end = match &r.end_qualifier {
                    Some(column_range::EndQualifier::EndQualifierClosed(e)) => q <= e.as_slice(),
                    Some(column_range::EndQualifier::EndQualifierOpen(e)) => q < e.as_slice(),
                    None => true,
                };
                c.family == r.family_name && start && end
            }
            CellTest::ValueRange(r) => {
                let v = c.value.as_slice();
                let start = match &r.start_value {
                    Some(value_range::StartValue::StartValueClosed(s)) => v >= s.as_slice(),
                    Some(value_range::StartValue::StartValueOpen(s)) => v > s.as_slice(),
                    None => true,
                };
                let end = match &r.end_value {
                    Some(value_range::EndValue::EndValueClosed(e)) => v <= e.as_slice(),
                    Some(value_range::EndValue::EndValueOpen(e)) => v < e.as_slice(),
                    None => true,
                };
                start && end
            }
            CellTest::Timestamps(start, end) => {
                c.timestamp_micros >= *start && c.timestamp_micros < *end
            }
            CellTest::Strip => {
                c.value.clear();
                true
            }
            CellTest::Label(l) => {
                c.labels = vec![l.clone()];
                true
            }
        };
        keep.then_some(c)
    }
}

#[cfg(test)]
#[path = "filter_tests.rs"]
mod tests;
