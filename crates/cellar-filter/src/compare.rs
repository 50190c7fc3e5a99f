//! Compare operators and comparators (HBase's `CompareOperator` and `ByteArrayComparable`).
//! A comparator answers `compare_to(cell bytes)` = compare(operand, cell bytes); filters
//! keep a cell when `cell OP operand` holds.

use std::cmp::Ordering;
use std::fmt;

use crate::java_regex::JavaRegex;

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
#[derive(Debug, Clone)]
pub enum Comparator {
    /// Whole-value lexicographic comparison.
    Binary(Vec<u8>),
    /// Compares only as many bytes as the operand has.
    BinaryPrefix(Vec<u8>),
    /// Equal when the regular expression finds a match (EQUAL / NOT_EQUAL only), with
    /// Java's regex semantics.
    RegexString(String, JavaRegex),
    /// Equal when the value contains the text, case-insensitively (EQUAL / NOT_EQUAL only).
    Substring(String),
}

impl PartialEq for Comparator {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Comparator::Binary(a), Comparator::Binary(b)) => a == b,
            (Comparator::BinaryPrefix(a), Comparator::BinaryPrefix(b)) => a == b,
            (Comparator::RegexString(a, _), Comparator::RegexString(b, _)) => a == b,
            (Comparator::Substring(a), Comparator::Substring(b)) => a == b,
            _ => false,
        }
    }
}

impl fmt::Display for Comparator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Comparator::Binary(v) => write!(f, "binary:{}", cellar_types::to_string_binary(v)),
            Comparator::BinaryPrefix(v) => {
                write!(f, "binaryprefix:{}", cellar_types::to_string_binary(v))
            }
            Comparator::RegexString(s, _) => write!(f, "regexstring:{s}"),
            Comparator::Substring(s) => write!(f, "substring:{s}"),
        }
    }
}

impl Comparator {
    /// A regex comparator (Java syntax); an error when the pattern does not compile.
    pub fn regex(pattern: &str) -> Result<Comparator, String> {
        let re = JavaRegex::new(pattern)?;
        Ok(Comparator::RegexString(pattern.to_string(), re))
    }

    /// A substring comparator (case-insensitive, as HBase lower-cases both sides).
    pub fn substring(s: &str) -> Comparator {
        Comparator::Substring(s.to_lowercase())
    }

    /// `compare(operand, value)`, as HBase's `compareTo(value)`.
    pub fn compare_to(&self, value: &[u8]) -> Ordering {
        match self {
            Comparator::Binary(op) => op.as_slice().cmp(value),
            Comparator::BinaryPrefix(op) => {
                let n = op.len().min(value.len());
                op.as_slice().cmp(&value[..n])
            }
            Comparator::RegexString(_, re) => {
                if re.find(value) {
                    Ordering::Equal
                } else {
                    Ordering::Greater
                }
            }
            Comparator::Substring(s) => {
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
        let b = Comparator::Binary(b"b".to_vec());
        assert!(b.passes(CompareOp::Less, b"a"));
        assert!(!b.passes(CompareOp::Less, b"b"));
        assert!(b.passes(CompareOp::GreaterOrEqual, b"b"));
        assert!(b.passes(CompareOp::Greater, b"ba"));
        assert!(b.passes(CompareOp::NotEqual, b"c"));
        let p = Comparator::BinaryPrefix(b"ab".to_vec());
        assert!(p.passes(CompareOp::Equal, b"abc"));
        assert!(!p.passes(CompareOp::Equal, b"ac"));
        let s = Comparator::substring("BC");
        assert!(s.passes(CompareOp::Equal, b"xabcx"));
        assert!(s.passes(CompareOp::NotEqual, b"xyz"));
        let r = Comparator::regex("^a.c$").unwrap();
        assert!(r.passes(CompareOp::Equal, b"abc"));
        assert!(!r.passes(CompareOp::Equal, b"abcd"));
        assert!(Comparator::regex("(").is_err());
    }
}
