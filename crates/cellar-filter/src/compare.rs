//! Comparators ready to run (HBase's `ByteArrayComparable`), compiled from the
//! declarative [`Comparator`] of a filter spec. A comparator answers
//! `compare_to(cell bytes)` = compare(operand, cell bytes); filters keep a cell when
//! `cell OP operand` holds.

use std::cmp::Ordering;

pub use cellar_api::{Comparator, CompareOp};

use crate::java_regex::JavaRegex;

/// A comparator compiled for one scanner.
#[derive(Debug, Clone)]
pub enum Comparable {
    Binary(Vec<u8>),
    BinaryPrefix(Vec<u8>),
    /// Java's regex semantics.
    Regex(JavaRegex),
    /// Lower-cased text.
    Substring(String),
}

impl Comparable {
    /// Compiles a comparator; an error when a regex pattern does not compile.
    pub fn compile(c: &Comparator) -> Result<Comparable, String> {
        Ok(match c {
            Comparator::Binary(v) => Comparable::Binary(v.clone()),
            Comparator::BinaryPrefix(v) => Comparable::BinaryPrefix(v.clone()),
            Comparator::RegexString(p) => Comparable::Regex(JavaRegex::new(p)?),
            Comparator::Substring(s) => Comparable::Substring(s.to_lowercase()),
        })
    }

    /// `compare(operand, value)`, as HBase's `compareTo(value)`.
    pub fn compare_to(&self, value: &[u8]) -> Ordering {
        match self {
            Comparable::Binary(op) => op.as_slice().cmp(value),
            Comparable::BinaryPrefix(op) => {
                let n = op.len().min(value.len());
                op.as_slice().cmp(&value[..n])
            }
            Comparable::Regex(re) => {
                if re.find(value) {
                    Ordering::Equal
                } else {
                    Ordering::Greater
                }
            }
            Comparable::Substring(s) => {
                let v = String::from_utf8_lossy(value).to_lowercase();
                if v.contains(s.as_str()) {
                    Ordering::Equal
                } else {
                    Ordering::Greater
                }
            }
        }
    }

    /// Whether a cell whose bytes are `value` passes `value OP operand`.
    pub fn passes(&self, op: CompareOp, value: &[u8]) -> bool {
        if op == CompareOp::NoOp {
            return false;
        }
        // compare_to gives operand vs value; the predicate reads value vs operand.
        op.holds(self.compare_to(value).reverse())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_op_operand() {
        let c = |c: Comparator| Comparable::compile(&c).unwrap();
        let b = c(Comparator::Binary(b"b".to_vec()));
        assert!(b.passes(CompareOp::Less, b"a"));
        assert!(!b.passes(CompareOp::Less, b"b"));
        assert!(b.passes(CompareOp::GreaterOrEqual, b"b"));
        assert!(b.passes(CompareOp::Greater, b"ba"));
        assert!(b.passes(CompareOp::NotEqual, b"c"));
        let p = c(Comparator::BinaryPrefix(b"ab".to_vec()));
        assert!(p.passes(CompareOp::Equal, b"abc"));
        assert!(!p.passes(CompareOp::Equal, b"ac"));
        let s = c(Comparator::substring("BC"));
        assert!(s.passes(CompareOp::Equal, b"xabcx"));
        assert!(s.passes(CompareOp::NotEqual, b"xyz"));
        let r = c(Comparator::RegexString("^a.c$".into()));
        assert!(r.passes(CompareOp::Equal, b"abc"));
        assert!(!r.passes(CompareOp::Equal, b"abcd"));
        assert!(Comparable::compile(&Comparator::RegexString("(".into())).is_err());
    }
}
