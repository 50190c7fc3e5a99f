//! Namespaces, as HBase's: `default` (tables created without one) and the system
//! namespace always exist; others are created and removed by DDL and hold tables named
//! `ns:table`. A namespace is its directory under `data/` with a `.namespace` marker
//! written atomically; removing one requires it to be empty.

use super::{locked, namespace_dir, read, Master, DEFAULT_NAMESPACE};
use crate::database::files::{remove_tree, write_atomic};
use crate::error::{DbError, Result};

const MARKER: &str = ".namespace";

fn builtin(ns: &str) -> bool {
    ns == DEFAULT_NAMESPACE || ns == cellar_api::SYSTEM_NAMESPACE
}

impl Master {
    pub fn namespace_exists(&self, ns: &str) -> bool {
        builtin(ns) || self.fs.exists(&namespace_dir(&self.root, ns).join(MARKER))
    }

    /// `create_namespace 'ns'`.
    pub fn create_namespace(&self, ns: &str) -> Result<()> {
        if !cellar_api::is_legal_namespace(ns) {
            return Err(DbError::Api(cellar_api::Error::invalid(format!(
                "Illegal namespace name '{ns}': only alphanumeric characters and '_' are allowed"
            ))));
        }
        let _ddl = locked(&self.ddl);
        if self.namespace_exists(ns) {
            return Err(DbError::NamespaceExists(ns.to_string()));
        }
        let dir = namespace_dir(&self.root, ns);
        write_atomic(
            self.fs.as_ref(),
            &dir.join(MARKER),
            format!("name = \"{ns}\"\n").as_bytes(),
        )?;
        self.fs.sync_dir(&self.root.join("data"))?;
        Ok(())
    }

    /// `drop_namespace 'ns'`: only an empty, non-reserved namespace.
    pub fn drop_namespace(&self, ns: &str) -> Result<()> {
        if builtin(ns) {
            return Err(DbError::NamespaceConstraint(format!(
                "Reserved namespace {ns} cannot be removed."
            )));
        }
        let _ddl = locked(&self.ddl);
        if !self.namespace_exists(ns) {
            return Err(DbError::NamespaceNotFound(ns.to_string()));
        }
        let tables = self.namespace_tables(ns)?;
        if !tables.is_empty() {
            return Err(DbError::NamespaceConstraint(format!(
                "Only empty namespaces can be removed. Namespace {ns} has {} tables",
                tables.len()
            )));
        }
        let dir = namespace_dir(&self.root, ns);
        // The marker goes first: that is the commit.
        self.fs.remove_file(&dir.join(MARKER))?;
        self.fs.sync_dir(&dir)?;
        remove_tree(self.fs.as_ref(), &dir)?;
        self.fs.sync_dir(&self.root.join("data"))?;
        Ok(())
    }

    /// Every namespace, sorted.
    pub fn list_namespaces(&self) -> Result<Vec<String>> {
        let mut out = vec![
            DEFAULT_NAMESPACE.to_string(),
            cellar_api::SYSTEM_NAMESPACE.to_string(),
        ];
        let data = self.root.join("data");
        if self.fs.exists(&data) {
            for d in self.fs.list_dir(&data)? {
                let Some(name) = d.file_name().and_then(|n| n.to_str()) else {
                    continue;
                };
                if !builtin(name) && self.fs.exists(&d.join(MARKER)) {
                    out.push(name.to_string());
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// The tables of a namespace (their full names), sorted.
    pub fn namespace_tables(&self, ns: &str) -> Result<Vec<String>> {
        if !self.namespace_exists(ns) {
            return Err(DbError::NamespaceNotFound(ns.to_string()));
        }
        Ok(read(&self.tables)
            .keys()
            .filter(|t| match t.split_once(':') {
                Some((n, _)) => n == ns,
                None => ns == DEFAULT_NAMESPACE,
            })
            .cloned()
            .collect())
    }
}
