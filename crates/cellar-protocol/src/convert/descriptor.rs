//! `TableSchema`, `ColumnFamilySchema`, `TableName` and `NamespaceDescriptor` ↔ Cellar's
//! descriptors and names. Attributes travel as HBase writes them (upper-case keys,
//! values as strings); HBase attributes that change nothing on one Cellar server are
//! accepted and ignored, anything else unknown is refused by name.

use cellar_api::{FamilyDescriptor, TableDescriptor, TableName};

use super::b;
use crate::error::{ProtocolError, Result};
use crate::pb;

/// Family attributes HBase clients may send that have no effect here.
const IGNORED_FAMILY_ATTRS: &[&str] = &[
    "REPLICATION_SCOPE",
    "CACHE_DATA_ON_WRITE",
    "CACHE_INDEX_ON_WRITE",
    "CACHE_BLOOMS_ON_WRITE",
    "EVICT_BLOCKS_ON_CLOSE",
    "PREFETCH_BLOCKS_ON_OPEN",
    "COMPRESS_TAGS",
    "DFS_REPLICATION",
    "STORAGE_POLICY",
    "CACHE_DATA_IN_L1",
    "METADATA",
    "COMPRESSION_COMPACT",
    "COMPRESSION_COMPACT_MAJOR",
    "COMPRESSION_COMPACT_MINOR",
    "MOB_THRESHOLD",
    "MOB_COMPACT_PARTITION_POLICY",
    "INDEX_BLOCK_ENCODING",
];

/// Family attributes accepted only at the value that means "off".
const OFF_FAMILY_ATTRS: &[&str] = &["IS_MOB", "NEW_VERSION_BEHAVIOR", "ENCRYPTION"];

/// Table attributes HBase clients may send that have no effect here.
const IGNORED_TABLE_ATTRS: &[&str] = &[
    "IS_META",
    "IS_ROOT",
    "REGION_REPLICATION",
    "NORMALIZATION_ENABLED",
    "NORMALIZER_TARGET_REGION_COUNT",
    "NORMALIZER_TARGET_REGION_SIZE",
    "NORMALIZER_TARGET_REGION_SIZE_MB",
    "PRIORITY",
    "SPLIT_ENABLED",
    "MERGE_ENABLED",
    "FLUSH_POLICY",
    "OWNER",
    "REGION_MEMSTORE_REPLICATION",
    // HBase 2.6 records its store-file tracker in every table; Cellar tracks store
    // files its own way (and reports DEFAULT, as HBase does).
    "HBASE.STORE.FILE-TRACKER.IMPL",
];

fn utf8(v: &[u8], what: &'static str) -> Result<String> {
    String::from_utf8(v.to_vec()).map_err(|_| ProtocolError::invalid(what, "not UTF-8"))
}

pub fn table_name_from_pb(t: &pb::TableName) -> Result<TableName> {
    let ns = utf8(&t.namespace, "TableName.namespace")?;
    let q = utf8(&t.qualifier, "TableName.qualifier")?;
    let full = if ns.is_empty() || ns == cellar_api::DEFAULT_NAMESPACE {
        q
    } else {
        format!("{ns}:{q}")
    };
    TableName::parse(&full)
        .map_err(|e| ProtocolError::invalid("TableName", e.message().to_string()))
}

pub fn table_name_to_pb(name: &str) -> pb::TableName {
    let (ns, q) = match name.split_once(':') {
        Some((ns, q)) => (ns, q),
        None => (cellar_api::DEFAULT_NAMESPACE, name),
    };
    pb::TableName {
        namespace: b(ns.as_bytes()),
        qualifier: b(q.as_bytes()),
    }
}

pub fn namespace_to_pb(ns: &str) -> pb::NamespaceDescriptor {
    pb::NamespaceDescriptor {
        name: b(ns.as_bytes()),
        configuration: Vec::new(),
    }
}

fn attr_error(e: cellar_api::Error) -> ProtocolError {
    ProtocolError::invalid("descriptor attribute", e.message().to_string())
}

pub fn family_from_pb(f: &pb::ColumnFamilySchema) -> Result<FamilyDescriptor> {
    let mut fam = FamilyDescriptor::new(f.name.to_vec());
    for c in &f.configuration {
        fam.configuration.insert(c.name.clone(), c.value.clone());
    }
    for a in &f.attributes {
        let key = utf8(&a.first, "family attribute name")?.to_ascii_uppercase();
        let value = utf8(&a.second, "family attribute value")?;
        if IGNORED_FAMILY_ATTRS.contains(&key.as_str()) {
            continue;
        }
        if OFF_FAMILY_ATTRS.contains(&key.as_str()) {
            if value.eq_ignore_ascii_case("false") || value.is_empty() {
                continue;
            }
            return Err(ProtocolError::invalid(
                "family attribute",
                format!("{key} => {value} is not supported"),
            ));
        }
        fam.set_attribute(&key, &value).map_err(attr_error)?;
    }
    fam.validate().map_err(attr_error)?;
    Ok(fam)
}

fn pair(k: &str, v: impl ToString) -> pb::BytesBytesPair {
    pb::BytesBytesPair {
        first: b(k.as_bytes()),
        second: b(v.to_string().as_bytes()),
    }
}

fn pairs(m: &std::collections::BTreeMap<String, String>) -> Vec<pb::NameStringPair> {
    m.iter()
        .map(|(k, v)| pb::NameStringPair {
            name: k.clone(),
            value: v.clone(),
        })
        .collect()
}

pub fn family_to_pb(f: &FamilyDescriptor) -> pb::ColumnFamilySchema {
    pb::ColumnFamilySchema {
        name: b(&f.name),
        attributes: vec![
            pair("BLOOMFILTER", f.bloom.name()),
            pair("IN_MEMORY", f.in_memory),
            pair("VERSIONS", f.versions),
            pair("KEEP_DELETED_CELLS", f.keep_deleted_cells.name()),
            pair("DATA_BLOCK_ENCODING", f.encoding.name()),
            pair("COMPRESSION", f.compression.name().to_ascii_uppercase()),
            pair("TTL", f.ttl),
            pair("MIN_VERSIONS", f.min_versions),
            pair("BLOCKCACHE", f.block_cache),
            pair("BLOCKSIZE", f.block_size),
            pair("REPLICATION_SCOPE", 0),
            // HBase 2.6 sends every default explicitly, this one included.
            pair("INDEX_BLOCK_ENCODING", "NONE"),
        ],
        configuration: pairs(&f.configuration),
    }
}

pub fn table_from_pb(t: &pb::TableSchema) -> Result<TableDescriptor> {
    let name = table_name_from_pb(
        t.table_name
            .as_ref()
            .ok_or(ProtocolError::Missing("TableSchema.table_name"))?,
    )?;
    let mut desc = TableDescriptor::new(name.to_string());
    for a in &t.attributes {
        let key = utf8(&a.first, "table attribute name")?;
        let value = utf8(&a.second, "table attribute value")?;
        let upper = key.to_ascii_uppercase();
        if IGNORED_TABLE_ATTRS.contains(&upper.as_str()) {
            continue;
        }
        if upper.starts_with("COPROCESSOR$") {
            return Err(ProtocolError::invalid(
                "table attribute",
                format!("{key}: coprocessors are not supported"),
            ));
        }
        desc.set_attribute(&upper, &value).map_err(attr_error)?;
    }
    for c in &t.configuration {
        desc.configuration.insert(c.name.clone(), c.value.clone());
    }
    for f in &t.column_families {
        desc.families.push(family_from_pb(f)?);
    }
    Ok(desc)
}

pub fn table_to_pb(t: &TableDescriptor) -> pb::TableSchema {
    pb::TableSchema {
        table_name: Some(table_name_to_pb(&t.name)),
        attributes: t
            .table_attributes()
            .into_iter()
            .map(|(k, v)| pair(k, v))
            // As HBase 2.6's master records in every table it creates.
            .chain(std::iter::once(pair(
                "hbase.store.file-tracker.impl",
                "DEFAULT",
            )))
            .collect(),
        column_families: t.families.iter().map(family_to_pb).collect(),
        configuration: pairs(&t.configuration),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cellar_api::{DataBlockEncoding, KeepDeletedCells};

    #[test]
    fn tables_round_trip() {
        let mut f = FamilyDescriptor::new("d");
        f.versions = 3;
        f.ttl = 86400;
        f.min_versions = 1;
        f.keep_deleted_cells = KeepDeletedCells::Ttl;
        f.encoding = DataBlockEncoding::FastDiff;
        f.configuration.insert("k".into(), "v".into());
        let mut t = TableDescriptor::new("ns:t")
            .with_family(f)
            .with_family(FamilyDescriptor::new("e"));
        t.max_file_size = Some(1 << 30);
        t.read_only = true;
        let back = table_from_pb(&table_to_pb(&t)).unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn names_and_attributes() {
        let n = table_name_to_pb("t");
        assert_eq!(&n.namespace[..], b"default");
        assert_eq!(table_name_from_pb(&n).unwrap().to_string(), "t");
        let mut schema =
            table_to_pb(&TableDescriptor::new("t").with_family(FamilyDescriptor::new("f")));
        schema.attributes.push(pair("REGION_REPLICATION", 1));
        schema.column_families[0]
            .attributes
            .push(pair("IS_MOB", "false"));
        assert!(table_from_pb(&schema).is_ok());
        schema.column_families[0]
            .attributes
            .push(pair("NO_SUCH_THING", "1"));
        assert!(table_from_pb(&schema).is_err());
        let bad = pb::TableName {
            namespace: b(b"default"),
            qualifier: b(b"bad name"),
        };
        assert!(table_name_from_pb(&bad).is_err());
    }
}
