//! The engine's side of descriptors: each family option mapped to the store-file
//! implementation that runs it, the check of a descriptor against what this engine can
//! run, and the on-disk form of a descriptor (`.tabledesc`, TOML).

use cellar_api::{BloomType, Compression, DataBlockEncoding};
pub use cellar_api::{FamilyDescriptor, KeepDeletedCells, TableDescriptor, FOREVER};

use crate::error::{RegionError, Result};

/// The `.tabledesc` format this release writes and reads.
pub const DESCRIPTOR_VERSION: i64 = 1;

/// The store-file encoding of a family's `DATA_BLOCK_ENCODING`.
pub fn encoding(e: DataBlockEncoding) -> cellar_hfile::DataBlockEncoding {
    e.into()
}

/// The store-file codec of a family's `COMPRESSION`.
pub fn compression(c: Compression) -> cellar_hfile::Compression {
    c.into()
}

/// The store-file bloom of a family's `BLOOMFILTER`.
pub fn bloom(b: BloomType) -> cellar_hfile::BloomType {
    b.into()
}

/// Checks a descriptor (names, families) and that this engine can run it: its codecs
/// and its split policy.
pub fn check_descriptor(desc: &TableDescriptor) -> Result<()> {
    desc.validate()?;
    for f in &desc.families {
        if !compression(f.compression).is_supported() {
            return Err(RegionError::Api(cellar_api::Error::invalid(format!(
                "Compression algorithm '{}' is not supported by this build",
                f.compression.name().to_lowercase()
            ))));
        }
    }
    if let Some(p) = &desc.split_policy {
        crate::split_policy::PolicyKind::parse(p)?;
    }
    Ok(())
}

/// The on-disk form.
pub fn to_toml(desc: &TableDescriptor) -> String {
    let mut table = toml::Table::new();
    table.insert(
        "format_version".into(),
        toml::Value::Integer(DESCRIPTOR_VERSION),
    );
    table.insert("name".into(), toml::Value::String(desc.name.clone()));
    let mut attrs = toml::Table::new();
    for (k, v) in desc.table_attributes() {
        attrs.insert(k.into(), toml::Value::String(v));
    }
    table.insert("attributes".into(), toml::Value::Table(attrs));
    let mut conf = toml::Table::new();
    for (k, v) in &desc.configuration {
        conf.insert(k.clone(), toml::Value::String(v.clone()));
    }
    table.insert("configuration".into(), toml::Value::Table(conf));
    let mut fams = Vec::new();
    for f in &desc.families {
        let mut t = toml::Table::new();
        t.insert(
            "name_hex".into(),
            toml::Value::String(cellar_types::to_hex(&f.name)),
        );
        for (k, v) in f.attributes() {
            if k != "NAME" {
                let v = if k == "TTL" { f.ttl.to_string() } else { v };
                t.insert(k.into(), toml::Value::String(v));
            }
        }
        let mut conf = toml::Table::new();
        for (k, v) in &f.configuration {
            conf.insert(k.clone(), toml::Value::String(v.clone()));
        }
        t.insert("CONFIGURATION".into(), toml::Value::Table(conf));
        fams.push(toml::Value::Table(t));
    }
    table.insert("families".into(), toml::Value::Array(fams));
    table.to_string()
}

/// Parses the on-disk form.
pub fn from_toml(text: &str) -> Result<TableDescriptor> {
    let corrupt = |m: String| RegionError::CorruptStore {
        path: ".tabledesc".into(),
        reason: m,
    };
    let t: toml::Table = text.parse().map_err(|e| corrupt(format!("{e}")))?;
    // Descriptors written before versions were recorded are version 1.
    let version = t
        .get("format_version")
        .and_then(|v| v.as_integer())
        .unwrap_or(1);
    if version > DESCRIPTOR_VERSION {
        return Err(corrupt(format!(
            "table descriptor format version {version} is newer than this release reads (version {DESCRIPTOR_VERSION}); open it with a newer Cellar"
        )));
    }
    let name = t
        .get("name")
        .and_then(|v| v.as_str())
        .ok_or_else(|| corrupt("no table name".into()))?;
    let mut d = TableDescriptor::new(name);
    if let Some(attrs) = t.get("attributes").and_then(|v| v.as_table()) {
        for (k, v) in attrs {
            d.set_attribute(k, v.as_str().unwrap_or_default())?;
        }
    }
    if let Some(conf) = t.get("configuration").and_then(|v| v.as_table()) {
        for (k, v) in conf {
            d.configuration
                .insert(k.clone(), v.as_str().unwrap_or_default().to_string());
        }
    }
    for f in t
        .get("families")
        .and_then(|v| v.as_array())
        .ok_or_else(|| corrupt("no families".into()))?
    {
        let f = f.as_table().ok_or_else(|| corrupt("bad family".into()))?;
        let name = f
            .get("name_hex")
            .and_then(|v| v.as_str())
            .and_then(cellar_types::from_hex)
            .ok_or_else(|| corrupt("bad family name".into()))?;
        let mut fd = FamilyDescriptor::new(name);
        if let Some(conf) = f.get("CONFIGURATION").and_then(|v| v.as_table()) {
            for (k, v) in conf {
                fd.configuration
                    .insert(k.clone(), v.as_str().unwrap_or_default().to_string());
            }
        }
        for (k, v) in f {
            if k != "name_hex" && k != "CONFIGURATION" {
                fd.set_attribute(k, v.as_str().unwrap_or_default())?;
            }
        }
        d.families.push(fd);
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_round_trip_through_their_file() {
        // Every attribute the file carries, including non-defaults of each kind.
        let mut f = FamilyDescriptor::new("d");
        f.versions = 3;
        f.min_versions = 1;
        f.ttl = 93_600;
        f.keep_deleted_cells = KeepDeletedCells::True;
        f.encoding = DataBlockEncoding::FastDiff;
        f.compression = Compression::Gz;
        f.block_size = 8192;
        f.bloom = BloomType::RowCol;
        f.in_memory = true;
        f.block_cache = false;
        f.configuration.insert("k".into(), "v".into());
        let mut t = TableDescriptor::new("t1").with_family(f);
        t.set_attribute("DURABILITY", "FSYNC_WAL").unwrap();
        t.memstore_flush_size = Some(1 << 20);
        check_descriptor(&t).unwrap();
        assert_eq!(from_toml(&to_toml(&t)).unwrap(), t);
    }

    #[test]
    fn a_newer_descriptor_format_is_refused() {
        let t = TableDescriptor::new("t").with_family(FamilyDescriptor::new("f"));
        let text = to_toml(&t).replace("format_version = 1", "format_version = 2");
        let e = from_toml(&text).unwrap_err().to_string();
        assert!(e.contains("newer than this release"), "{e}");
        let old = to_toml(&t).replace("format_version = 1\n", "");
        assert_eq!(from_toml(&old).unwrap(), t);
    }

    #[test]
    fn what_the_engine_cannot_run_is_refused() {
        let mut t = TableDescriptor::new("t").with_family(FamilyDescriptor::new("f"));
        t.families[0].set_attribute("COMPRESSION", "LZO").unwrap();
        let e = check_descriptor(&t).unwrap_err().to_string();
        assert!(e.contains("'lzo' is not supported"), "{e}");
        let mut t = TableDescriptor::new("t").with_family(FamilyDescriptor::new("f"));
        t.set_attribute("SPLIT_POLICY", "NoSuchPolicy").unwrap();
        assert!(check_descriptor(&t).is_err());
    }
}
