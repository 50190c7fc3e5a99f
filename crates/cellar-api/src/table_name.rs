//! Table names with namespaces, as HBase's `TableName`: `ns:qualifier`, the namespace
//! `default` implied when absent and left out when printed.

use std::fmt;

use crate::error::{Error, Result};

/// The namespace of tables created without one.
pub const DEFAULT_NAMESPACE: &str = "default";
/// The namespace of system tables.
pub const SYSTEM_NAMESPACE: &str = "cellar";

/// A table's full name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TableName {
    namespace: String,
    qualifier: String,
}

fn legal_qualifier(q: &str) -> bool {
    !q.is_empty()
        && !q.starts_with('.')
        && !q.starts_with('-')
        && q.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
}

/// `TableName.isLegalNamespaceName`: letters, digits and `_`.
pub fn is_legal_namespace(ns: &str) -> bool {
    !ns.is_empty() && ns.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl TableName {
    /// Parses `ns:qualifier` or `qualifier`, checking HBase's legal characters.
    pub fn parse(name: &str) -> Result<TableName> {
        let (ns, q) = match name.split_once(':') {
            Some((ns, q)) => (ns, q),
            None => (DEFAULT_NAMESPACE, name),
        };
        if !is_legal_namespace(ns) {
            return Err(Error::invalid(format!(
                "Illegal namespace name '{ns}': only alphanumeric characters and '_' are allowed"
            )));
        }
        if !legal_qualifier(q) {
            return Err(Error::invalid(format!(
                "Illegal table name '{name}': only alphanumeric characters, '_', '-' and '.' are allowed, and it may not start with '.' or '-'"
            )));
        }
        Ok(TableName {
            namespace: ns.to_string(),
            qualifier: q.to_string(),
        })
    }

    /// A name known to be legal (system tables).
    pub fn system(qualifier: &str) -> TableName {
        TableName {
            namespace: SYSTEM_NAMESPACE.to_string(),
            qualifier: qualifier.to_string(),
        }
    }

    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    pub fn qualifier(&self) -> &str {
        &self.qualifier
    }

    pub fn is_default_namespace(&self) -> bool {
        self.namespace == DEFAULT_NAMESPACE
    }
}

impl fmt::Display for TableName {
    /// `qualifier` in the default namespace, `ns:qualifier` otherwise.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_default_namespace() {
            f.write_str(&self.qualifier)
        } else {
            write!(f, "{}:{}", self.namespace, self.qualifier)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_like_hbase() {
        let t = TableName::parse("t1").unwrap();
        assert_eq!((t.namespace(), t.qualifier()), ("default", "t1"));
        assert_eq!(t.to_string(), "t1");
        let t = TableName::parse("ns_1:a.b-c").unwrap();
        assert_eq!(t.to_string(), "ns_1:a.b-c");
        assert_eq!(TableName::parse("default:x").unwrap().to_string(), "x");
        for bad in ["", ".x", "-x", "a b", "n-s:t", ":t", "ns:"] {
            assert!(TableName::parse(bad).is_err(), "{bad}");
        }
    }
}
