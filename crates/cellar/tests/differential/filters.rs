//! Random filter trees over the differential runs' rows, columns and values: every
//! filter Cellar sends over HBase's protocol, with every comparator, nested in lists,
//! WhileMatch and Skip.

use cellar_api::{Comparator, CompareOp, FilterSpec, ListOp};
use rand::rngs::SmallRng as StdRng;
use rand::Rng;

use super::ops::{qual, row, value, FAMILIES, QUALIFIERS, ROWS};

pub type Filter = FilterSpec;

/// Any of the six comparison operators.
pub fn op(rng: &mut StdRng) -> CompareOp {
    [
        CompareOp::Less,
        CompareOp::LessOrEqual,
        CompareOp::Equal,
        CompareOp::NotEqual,
        CompareOp::GreaterOrEqual,
        CompareOp::Greater,
    ][rng.random_range(0..6)]
}

/// A comparator and an operator it accepts (regex and substring: equality only).
fn compare(rng: &mut StdRng, operand: String) -> (CompareOp, Comparator) {
    match rng.random_range(0..5) {
        0 | 1 => (op(rng), Comparator::Binary(operand.into_bytes())),
        2 => {
            let cut = operand.len().min(rng.random_range(1..=2));
            (
                op(rng),
                Comparator::BinaryPrefix(operand.as_bytes()[..cut].to_vec()),
            )
        }
        3 => {
            let eq = if rng.random_bool(0.7) {
                CompareOp::Equal
            } else {
                CompareOp::NotEqual
            };
            let re = [".*1", "^r[0-3]", "q[12]$", "v1.", "[a-z]5"][rng.random_range(0..5)];
            (eq, Comparator::RegexString(re.to_string()))
        }
        _ => {
            let eq = if rng.random_bool(0.7) {
                CompareOp::Equal
            } else {
                CompareOp::NotEqual
            };
            let cut = rng.random_range(1..=operand.len());
            (eq, Comparator::substring(&operand[cut - 1..]))
        }
    }
}

fn fam(rng: &mut StdRng) -> Vec<u8> {
    FAMILIES[rng.random_range(0..FAMILIES.len())]
        .as_bytes()
        .to_vec()
}

fn q(rng: &mut StdRng) -> String {
    qual(rng.random_range(0..QUALIFIERS))
}

fn v(rng: &mut StdRng) -> String {
    value(rng.random_range(0..20))
}

fn r(rng: &mut StdRng) -> String {
    row(rng.random_range(0..ROWS))
}

fn leaf(rng: &mut StdRng) -> FilterSpec {
    match rng.random_range(0..19) {
        0 => FilterSpec::KeyOnly {
            len_as_value: rng.random_bool(0.3),
        },
        1 => FilterSpec::FirstKeyOnly,
        2 => FilterSpec::Prefix(r(rng).into_bytes()[..rng.random_range(1..=2)].to_vec()),
        3 => FilterSpec::ColumnPrefix(q(rng).into_bytes()),
        4 => FilterSpec::MultipleColumnPrefix(vec![q(rng).into_bytes(), q(rng).into_bytes()]),
        5 => FilterSpec::ColumnRange {
            min: rng.random_bool(0.8).then(|| q(rng).into_bytes()),
            min_inclusive: rng.random_bool(0.5),
            max: rng.random_bool(0.8).then(|| q(rng).into_bytes()),
            max_inclusive: rng.random_bool(0.5),
        },
        6 => FilterSpec::ColumnPagination {
            limit: rng.random_range(1..=3),
            offset: rng.random_range(0..=2),
            column_offset: rng.random_bool(0.3).then(|| q(rng).into_bytes()),
        },
        7 => FilterSpec::ColumnCountGet(rng.random_range(1..=4)),
        8 => FilterSpec::Page(rng.random_range(1..=4)),
        9 => FilterSpec::InclusiveStop(r(rng).into_bytes()),
        10 => {
            let ts = (0..rng.random_range(1..=3))
                .map(|_| rng.random_range(1..=30))
                .collect();
            // Both forms HBase takes: stepping (its client's default) and seeking.
            if rng.random_bool(0.3) {
                FilterSpec::TimestampsCanHint(ts)
            } else {
                FilterSpec::Timestamps(ts)
            }
        }
        11 => {
            let (o, c) = {
                let o = r(rng);
                compare(rng, o)
            };
            FilterSpec::Row(o, c)
        }
        12 => {
            let f = String::from_utf8_lossy(&fam(rng)).into_owned();
            let (o, c) = compare(rng, f);
            FilterSpec::Family(o, c)
        }
        13 => {
            let (o, c) = {
                let o = q(rng);
                compare(rng, o)
            };
            FilterSpec::Qualifier(o, c)
        }
        14 => {
            let (o, c) = {
                let o = v(rng);
                compare(rng, o)
            };
            FilterSpec::Value(o, c)
        }
        15 => {
            let (op, comparator) = {
                let o = v(rng);
                compare(rng, o)
            };
            FilterSpec::ColumnValue {
                family: fam(rng),
                qualifier: q(rng).into_bytes(),
                op,
                comparator,
            }
        }
        16 | 17 => {
            let (op, comparator) = {
                let o = v(rng);
                compare(rng, o)
            };
            FilterSpec::SingleColumnValue {
                family: fam(rng),
                qualifier: q(rng).into_bytes(),
                op,
                comparator,
                filter_if_missing: rng.random_bool(0.5),
                latest_version_only: rng.random_bool(0.7),
                exclude: rng.random_bool(0.3),
            }
        }
        _ => FilterSpec::DependentColumn {
            family: fam(rng),
            qualifier: q(rng).into_bytes(),
            drop_dependent: rng.random_bool(0.5),
            compare: rng.random_bool(0.5).then(|| {
                let o = v(rng);
                compare(rng, o)
            }),
        },
    }
}

/// A filter tree at most `depth` lists deep.
pub fn random_filter(rng: &mut StdRng, depth: u32) -> FilterSpec {
    if depth == 0 || rng.random_bool(0.6) {
        return leaf(rng);
    }
    match rng.random_range(0..4) {
        0 => FilterSpec::WhileMatch(Box::new(random_filter(rng, depth - 1))),
        1 => FilterSpec::Skip(Box::new(random_filter(rng, depth - 1))),
        _ => {
            let op = if rng.random_bool(0.5) {
                ListOp::MustPassAll
            } else {
                ListOp::MustPassOne
            };
            let n = rng.random_range(1..=3);
            FilterSpec::List(op, (0..n).map(|_| random_filter(rng, depth - 1)).collect())
        }
    }
}

/// Simpler trees to try when shrinking: a list's children alone, the list without
/// one child or with one child simplified, a wrapper's inner filter.
pub fn simpler(f: &FilterSpec) -> Vec<FilterSpec> {
    match f {
        FilterSpec::WhileMatch(x) | FilterSpec::Skip(x) => {
            let mut out = vec![(**x).clone()];
            for y in simpler(x) {
                out.push(match f {
                    FilterSpec::WhileMatch(_) => FilterSpec::WhileMatch(Box::new(y)),
                    _ => FilterSpec::Skip(Box::new(y)),
                });
            }
            out
        }
        FilterSpec::List(op, fs) => {
            let mut out: Vec<FilterSpec> = fs.clone();
            for i in 0..fs.len() {
                if fs.len() > 1 {
                    let mut rest = fs.clone();
                    rest.remove(i);
                    out.push(FilterSpec::List(*op, rest));
                }
                for y in simpler(&fs[i]) {
                    let mut with = fs.clone();
                    with[i] = y;
                    out.push(FilterSpec::List(*op, with));
                }
            }
            out
        }
        _ => Vec::new(),
    }
}
