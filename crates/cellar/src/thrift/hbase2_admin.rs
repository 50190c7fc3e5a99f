//! Thrift2's admin methods: tables (create with split keys, delete, truncate,
//! enable, disable, descriptors, modify, families) and namespaces.

use cellar_api::TableDescriptor;
use cellar_thrift::{Struct, TType, Value};

use super::hbase2::ThriftTwo;
use super::hbase2_types::{
    family_from, table_desc_from, table_desc_value, table_name, ttable_name,
};
use super::{Fault, Outcome};

fn namespace_value(name: &str) -> Value {
    Value::Struct(
        Struct::new()
            .with(1, Value::string(name))
            .with(2, Value::Map(TType::String, TType::String, Vec::new())),
    )
}

impl ThriftTwo {
    /// An admin method, or `None` when the service has no method of that name.
    pub(super) fn admin_call(&self, method: &str, a: &Struct) -> Option<Outcome> {
        Some(match method {
            "getTableDescriptor" => self.descriptor(a),
            "getTableDescriptors" => self.descriptors(a),
            "tableExists" => self.table_exists(a),
            "getTableDescriptorsByPattern" => self.by_pattern(a, true),
            "getTableNamesByPattern" => self.by_pattern(a, false),
            "getTableDescriptorsByNamespace" => self.by_namespace(a, true),
            "getTableNamesByNamespace" => self.by_namespace(a, false),
            "createTable" => self.create_table(a),
            "deleteTable" => self.with_table(a, |ad, t| ad.delete_table(t)),
            "truncateTable" => self.with_table(a, |ad, t| ad.truncate_table(t)),
            "enableTable" => self.with_table(a, |ad, t| ad.enable_table(t)),
            "disableTable" => self.with_table(a, |ad, t| ad.disable_table(t)),
            "isTableEnabled" => self.enabled(a, true),
            "isTableDisabled" => self.enabled(a, false),
            "isTableAvailable" | "isTableAvailableWithSplit" => self.table_exists(a),
            "addColumnFamily" => self.alter_family(a, false),
            "modifyColumnFamily" => self.alter_family(a, true),
            "deleteColumnFamily" => self.delete_family(a),
            "modifyTable" => self.modify_table(a),
            "createNamespace" => self.create_namespace(a),
            "modifyNamespace" => self.modify_namespace(a),
            "deleteNamespace" => self.delete_namespace(a),
            "getNamespaceDescriptor" => self.namespace(a),
            "listNamespaceDescriptors" => self.namespaces(true),
            "listNamespaces" => self.namespaces(false),
            "getClusterId" => Ok(Some(Value::string(""))),
            _ => return None,
        })
    }

    fn with_table(
        &self,
        a: &Struct,
        f: impl FnOnce(&dyn crate::client::Admin, &str) -> cellar_api::Result<()>,
    ) -> Outcome {
        let t = table_name(a.strukt(1))?;
        f(self.conn.admin().as_ref(), &t)?;
        Ok(None)
    }

    fn descriptor(&self, a: &Struct) -> Outcome {
        let t = table_name(a.strukt(1))?;
        let (d, _) = self.conn.admin().describe(&t)?;
        Ok(Some(table_desc_value(&d)))
    }

    fn descriptors(&self, a: &Struct) -> Outcome {
        let admin = self.conn.admin();
        let mut out = Vec::new();
        for t in a.struct_list(1).unwrap_or_default() {
            let (d, _) = admin.describe(&table_name(Some(t))?)?;
            out.push(table_desc_value(&d));
        }
        Ok(Some(Value::List(TType::Struct, out)))
    }

    fn table_exists(&self, a: &Struct) -> Outcome {
        let t = table_name(a.strukt(1))?;
        Ok(Some(Value::Bool(self.conn.admin().table_exists(&t)?)))
    }

    fn enabled(&self, a: &Struct, want: bool) -> Outcome {
        let t = table_name(a.strukt(1))?;
        let on = self.conn.admin().is_table_enabled(&t)?;
        Ok(Some(Value::Bool(on == want)))
    }

    fn listing(&self, names: Vec<String>, descriptors: bool) -> Outcome {
        let admin = self.conn.admin();
        let mut out = Vec::new();
        for n in names {
            if descriptors {
                let (d, _) = admin.describe(&n)?;
                out.push(table_desc_value(&d));
            } else {
                out.push(Value::Struct(ttable_name(&n)));
            }
        }
        Ok(Some(Value::List(TType::Struct, out)))
    }

    fn by_pattern(&self, a: &Struct, descriptors: bool) -> Outcome {
        let pattern = a.text(1).unwrap_or_else(|| ".*".into());
        let re = regex::Regex::new(&format!("^(?:{pattern})$"))
            .map_err(|e| Fault::Illegal(format!("bad table name pattern: {e}")))?;
        let mut names = self.conn.admin().list_tables()?;
        if a.bool(2).unwrap_or(false) {
            names.extend(
                self.conn
                    .admin()
                    .list_namespace_tables("hbase")
                    .unwrap_or_default(),
            );
        }
        names.retain(|n| re.is_match(n));
        self.listing(names, descriptors)
    }

    fn by_namespace(&self, a: &Struct, descriptors: bool) -> Outcome {
        let ns = a.text(1).unwrap_or_default();
        let names = self.conn.admin().list_namespace_tables(&ns)?;
        self.listing(names, descriptors)
    }

    fn create_table(&self, a: &Struct) -> Outcome {
        let d = a
            .strukt(1)
            .ok_or_else(|| Fault::Illegal("a table descriptor is required".into()))?;
        let desc = table_desc_from(d)?;
        let splits = a
            .byte_list(2)
            .unwrap_or_default()
            .into_iter()
            .map(<[u8]>::to_vec)
            .collect();
        self.conn.admin().create_table(desc, splits)?;
        Ok(None)
    }

    fn current(&self, a: &Struct) -> Result<TableDescriptor, Fault> {
        let t = table_name(a.strukt(1))?;
        Ok(self.conn.admin().describe(&t)?.0)
    }

    fn alter_family(&self, a: &Struct, modify: bool) -> Outcome {
        let mut desc = self.current(a)?;
        let c = a
            .strukt(2)
            .ok_or_else(|| Fault::Illegal("a column family is required".into()))?;
        let name = c.bytes(1).unwrap_or_default();
        let pos = desc.families.iter().position(|f| f.name == name);
        match (pos, modify) {
            (Some(i), true) => {
                let f = family_from(c, Some(&desc.families[i]))?;
                desc.families[i] = f;
            }
            (None, false) => desc.families.push(family_from(c, None)?),
            (Some(_), false) => {
                return Err(Fault::Io(
                    format!(
                        "org.apache.hadoop.hbase.InvalidFamilyOperationException: Column family '{}' in table '{}' already exists so cannot be added",
                        String::from_utf8_lossy(name),
                        desc.name
                    ),
                    false,
                ))
            }
            (None, true) => {
                return Err(Fault::Io(
                    format!(
                        "org.apache.hadoop.hbase.InvalidFamilyOperationException: Column family '{}' does not exist",
                        String::from_utf8_lossy(name)
                    ),
                    false,
                ))
            }
        }
        self.conn.admin().modify_table(desc)?;
        Ok(None)
    }

    fn delete_family(&self, a: &Struct) -> Outcome {
        let mut desc = self.current(a)?;
        let name = a.bytes(2).unwrap_or_default();
        let before = desc.families.len();
        desc.families.retain(|f| f.name != name);
        if desc.families.len() == before {
            return Err(Fault::Io(
                format!(
                    "org.apache.hadoop.hbase.InvalidFamilyOperationException: Family '{}' does not exist, so it cannot be deleted",
                    String::from_utf8_lossy(name)
                ),
                false,
            ));
        }
        self.conn.admin().modify_table(desc)?;
        Ok(None)
    }

    fn modify_table(&self, a: &Struct) -> Outcome {
        let d = a
            .strukt(1)
            .ok_or_else(|| Fault::Illegal("a table descriptor is required".into()))?;
        let new = table_desc_from(d)?;
        let mut desc = self.conn.admin().describe(&new.name)?.0;
        desc.families = new.families;
        desc.durability = new.durability;
        self.conn.admin().modify_table(desc)?;
        Ok(None)
    }

    fn namespace_arg(a: &Struct) -> Result<String, Fault> {
        a.strukt(1)
            .and_then(|d| d.text(1))
            .filter(|n| !n.is_empty())
            .ok_or_else(|| Fault::Illegal("a namespace name is required".into()))
    }

    fn create_namespace(&self, a: &Struct) -> Outcome {
        self.conn
            .admin()
            .create_namespace(&Self::namespace_arg(a)?)?;
        Ok(None)
    }

    /// Namespaces carry no settings here: modifying one that exists changes nothing.
    fn modify_namespace(&self, a: &Struct) -> Outcome {
        let ns = Self::namespace_arg(a)?;
        self.require_namespace(&ns)?;
        Ok(None)
    }

    fn require_namespace(&self, ns: &str) -> Result<(), Fault> {
        if self.conn.admin().list_namespaces()?.iter().any(|n| n == ns) {
            Ok(())
        } else {
            Err(Fault::Io(
                format!("org.apache.hadoop.hbase.NamespaceNotFoundException: {ns}"),
                false,
            ))
        }
    }

    fn delete_namespace(&self, a: &Struct) -> Outcome {
        let ns = a.text(1).unwrap_or_default();
        self.conn.admin().delete_namespace(&ns)?;
        Ok(None)
    }

    fn namespace(&self, a: &Struct) -> Outcome {
        let ns = a.text(1).unwrap_or_default();
        self.require_namespace(&ns)?;
        Ok(Some(namespace_value(&ns)))
    }

    fn namespaces(&self, descriptors: bool) -> Outcome {
        let names = self.conn.admin().list_namespaces()?;
        Ok(Some(Value::List(
            if descriptors {
                TType::Struct
            } else {
                TType::String
            },
            names
                .iter()
                .map(|n| {
                    if descriptors {
                        namespace_value(n)
                    } else {
                        Value::string(n.clone())
                    }
                })
                .collect(),
        )))
    }
}
