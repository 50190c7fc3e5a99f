//! Table and column family descriptors with HBase's attribute names, defaults and
//! `describe` rendering.

use std::collections::BTreeMap;

use cellar_types::to_string_binary;

use crate::durability::Durability;
use crate::error::{Error, Result};
use crate::family_options::{BloomType, Compression, DataBlockEncoding};

/// TTL of a family that never expires (`HConstants.FOREVER`, seconds).
pub const FOREVER: i32 = i32::MAX;

/// `KEEP_DELETED_CELLS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeepDeletedCells {
    #[default]
    False,
    True,
    Ttl,
}

impl KeepDeletedCells {
    pub fn name(self) -> &'static str {
        match self {
            KeepDeletedCells::False => "FALSE",
            KeepDeletedCells::True => "TRUE",
            KeepDeletedCells::Ttl => "TTL",
        }
    }
}

/// A column family and its attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyDescriptor {
    pub name: Vec<u8>,
    pub versions: u32,
    pub min_versions: u32,
    /// Seconds; [`FOREVER`] disables expiry.
    pub ttl: i32,
    pub keep_deleted_cells: KeepDeletedCells,
    pub encoding: DataBlockEncoding,
    pub compression: Compression,
    pub block_size: u32,
    pub bloom: BloomType,
    pub in_memory: bool,
    pub block_cache: bool,
    /// `CONFIGURATION => {...}` entries.
    pub configuration: BTreeMap<String, String>,
}

fn parse_bool(attr: &str, v: &str) -> Result<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(bad_attr(attr, v)),
    }
}

fn bad_attr(attr: &str, v: &str) -> Error {
    Error::invalid(format!("illegal value '{v}' for {attr}"))
}

fn parse_num<T: std::str::FromStr>(attr: &str, v: &str) -> Result<T> {
    v.trim().parse().map_err(|_| bad_attr(attr, v))
}

/// Parses a TTL: seconds, `FOREVER`, or interval text such as `1 DAY`, `2 HOURS 30 MINUTES`.
fn parse_ttl(v: &str) -> Result<i32> {
    let t = v.trim();
    if t.eq_ignore_ascii_case("FOREVER") {
        return Ok(FOREVER);
    }
    if let Ok(n) = t.parse::<i64>() {
        return i32::try_from(n)
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| bad_attr("TTL", v));
    }
    let words: Vec<&str> = t.split_whitespace().collect();
    if words.is_empty() || !words.len().is_multiple_of(2) {
        return Err(bad_attr("TTL", v));
    }
    let mut total: i64 = 0;
    for pair in words.chunks(2) {
        let n: i64 = pair[0].parse().map_err(|_| bad_attr("TTL", v))?;
        let unit = pair[1].to_ascii_uppercase();
        let mult = match unit.trim_end_matches('S') {
            "SECOND" => 1,
            "MINUTE" => 60,
            "HOUR" => 3600,
            "DAY" => 86400,
            _ => return Err(bad_attr("TTL", v)),
        };
        total = total.saturating_add(n.saturating_mul(mult));
    }
    i32::try_from(total)
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| bad_attr("TTL", v))
}

impl FamilyDescriptor {
    /// A family with HBase's defaults (`versions` from `hbase.column.max.version`).
    pub fn new(name: impl Into<Vec<u8>>) -> FamilyDescriptor {
        FamilyDescriptor {
            name: name.into(),
            versions: 1,
            min_versions: 0,
            ttl: FOREVER,
            keep_deleted_cells: KeepDeletedCells::False,
            encoding: DataBlockEncoding::None,
            compression: Compression::None,
            block_size: 65536,
            bloom: BloomType::Row,
            in_memory: false,
            block_cache: true,
            configuration: BTreeMap::new(),
        }
    }

    /// Checks the name as `ColumnFamilyDescriptorBuilder.isLegalColumnFamilyName` does.
    pub fn validate(&self) -> Result<()> {
        let n = &self.name;
        let shown = to_string_binary(n);
        if n.is_empty() {
            return Err(Error::invalid("Column Family name can not be empty"));
        }
        if n[0] == b'.' {
            return Err(Error::invalid(format!(
                "Column Family names cannot start with a period: {shown}"
            )));
        }
        if n.len() > cellar_types::MAX_FAMILY_LEN {
            return Err(Error::invalid(format!(
                "Column Family name is longer than 127 bytes: {shown}"
            )));
        }
        if n.iter()
            .any(|b| *b < 0x20 || *b == 0x7f || b":\\/".contains(b))
            || n.as_slice() == b"recovered.edits"
        {
            return Err(Error::invalid(format!(
                "Illegal character in column family name: {shown}"
            )));
        }
        if self.min_versions > self.versions {
            return Err(Error::invalid(format!(
                "Minimum versions for column family {shown} must be <= the maximum versions"
            )));
        }
        if self.versions == 0 {
            return Err(Error::invalid(format!(
                "Maximum versions for column family {shown} must be > 0"
            )));
        }
        Ok(())
    }

    /// Sets one attribute given as the shell writes it.
    pub fn set_attribute(&mut self, attr: &str, v: &str) -> Result<()> {
        let key = attr.to_ascii_uppercase();
        match key.as_str() {
            "NAME" => self.name = v.as_bytes().to_vec(),
            "VERSIONS" => self.versions = parse_num(attr, v)?,
            "MIN_VERSIONS" => self.min_versions = parse_num(attr, v)?,
            "TTL" => self.ttl = parse_ttl(v)?,
            "KEEP_DELETED_CELLS" => {
                self.keep_deleted_cells = match v.to_ascii_uppercase().as_str() {
                    "FALSE" => KeepDeletedCells::False,
                    "TRUE" => KeepDeletedCells::True,
                    "TTL" => KeepDeletedCells::Ttl,
                    _ => return Err(bad_attr(attr, v)),
                }
            }
            "DATA_BLOCK_ENCODING" => {
                self.encoding = DataBlockEncoding::from_name(v).ok_or_else(|| bad_attr(attr, v))?
            }
            "COMPRESSION" => {
                // Whether this server can run it is checked when the table is created.
                self.compression = Compression::from_name(v).ok_or_else(|| bad_attr(attr, v))?;
            }
            "BLOCKSIZE" => {
                self.block_size = parse_num(attr, v)?;
                if self.block_size == 0 {
                    return Err(bad_attr(attr, v));
                }
            }
            "BLOOMFILTER" => {
                let prefix = self
                    .configuration
                    .get("RowPrefixBloomFilter.prefix_length")
                    .and_then(|p| p.parse().ok());
                self.bloom = BloomType::from_name(&v.to_ascii_uppercase(), prefix)
                    .ok_or_else(|| bad_attr(attr, v))?
            }
            "IN_MEMORY" => self.in_memory = parse_bool(attr, v)?,
            "BLOCKCACHE" => self.block_cache = parse_bool(attr, v)?,
            // Accepted for compatibility; no effect on one machine.
            "REPLICATION_SCOPE" => {
                parse_num::<u32>(attr, v)?;
            }
            _ => {
                return Err(Error::invalid(format!(
                    "Unknown column family attribute {attr}"
                )))
            }
        }
        Ok(())
    }

    /// `(attribute, value)` pairs in the order HBase's `describe` prints them.
    pub fn attributes(&self) -> Vec<(&'static str, String)> {
        let ttl = if self.ttl == FOREVER {
            "FOREVER".to_string()
        } else {
            format!("{} SECONDS", self.ttl)
        };
        vec![
            ("NAME", String::from_utf8_lossy(&self.name).into_owned()),
            ("BLOOMFILTER", self.bloom.name().to_string()),
            ("IN_MEMORY", self.in_memory.to_string()),
            ("VERSIONS", self.versions.to_string()),
            (
                "KEEP_DELETED_CELLS",
                self.keep_deleted_cells.name().to_string(),
            ),
            ("DATA_BLOCK_ENCODING", self.encoding.name().to_string()),
            ("COMPRESSION", self.compression.name().to_ascii_uppercase()),
            ("TTL", ttl),
            ("MIN_VERSIONS", self.min_versions.to_string()),
            ("BLOCKCACHE", self.block_cache.to_string()),
            ("BLOCKSIZE", self.block_size.to_string()),
            ("REPLICATION_SCOPE", "0".to_string()),
        ]
    }

    /// `{NAME => 'f', VERSIONS => '1', ...}` as HBase's shell prints a family.
    pub fn describe(&self) -> String {
        crate::shell_text::describe_family(self)
    }

    /// TTL in milliseconds, or `None` when the family never expires.
    pub fn ttl_millis(&self) -> Option<i64> {
        (self.ttl != FOREVER).then_some(self.ttl as i64 * 1000)
    }
}

/// A table: its name, families and table attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct TableDescriptor {
    pub name: String,
    pub families: Vec<FamilyDescriptor>,
    pub durability: Durability,
    /// `MEMSTORE_FLUSHSIZE`, overriding `hbase.hregion.memstore.flush.size`.
    pub memstore_flush_size: Option<u64>,
    /// `MAX_FILESIZE`.
    pub max_file_size: Option<u64>,
    pub compaction_enabled: bool,
    pub read_only: bool,
    /// `SPLIT_POLICY` (a class name, short or fully qualified).
    pub split_policy: Option<String>,
    /// Table `CONFIGURATION => {...}` (e.g. `KeyPrefixRegionSplitPolicy.prefix_length`).
    pub configuration: BTreeMap<String, String>,
}

impl TableDescriptor {
    pub fn new(name: impl Into<String>) -> TableDescriptor {
        TableDescriptor {
            name: name.into(),
            families: Vec::new(),
            durability: Durability::UseDefault,
            memstore_flush_size: None,
            max_file_size: None,
            compaction_enabled: true,
            read_only: false,
            split_policy: None,
            configuration: BTreeMap::new(),
        }
    }

    pub fn with_family(mut self, family: FamilyDescriptor) -> TableDescriptor {
        self.families.push(family);
        self
    }

    pub fn family(&self, name: &[u8]) -> Option<&FamilyDescriptor> {
        self.families.iter().find(|f| f.name == name)
    }

    /// Checks the table name (HBase's legal characters) and every family.
    pub fn validate(&self) -> Result<()> {
        let n = &self.name;
        // `ns:qualifier` or a qualifier in the default namespace, as HBase's TableName.
        crate::table_name::TableName::parse(n)?;
        if self.families.is_empty() {
            return Err(Error::invalid(format!(
                "Table {n} should have at least one column family."
            )));
        }
        let mut seen = std::collections::BTreeSet::new();
        for f in &self.families {
            f.validate()?;
            if !seen.insert(f.name.clone()) {
                return Err(Error::invalid(format!(
                    "Column family {} is specified more than once",
                    to_string_binary(&f.name)
                )));
            }
        }
        Ok(())
    }

    /// Sets one table attribute given as the shell writes it.
    pub fn set_attribute(&mut self, attr: &str, v: &str) -> Result<()> {
        match attr.to_ascii_uppercase().as_str() {
            "DURABILITY" => {
                self.durability = v.parse().map_err(|_| bad_attr(attr, v))?;
            }
            "MEMSTORE_FLUSHSIZE" => self.memstore_flush_size = Some(parse_num(attr, v)?),
            "MAX_FILESIZE" => self.max_file_size = Some(parse_num(attr, v)?),
            "COMPACTION_ENABLED" => self.compaction_enabled = parse_bool(attr, v)?,
            "READONLY" => self.read_only = parse_bool(attr, v)?,
            // Resolved (and refused when unknown) when the table is created or altered.
            "SPLIT_POLICY" => self.split_policy = Some(v.to_string()),
            _ => return Err(Error::invalid(format!("Unknown table attribute {attr}"))),
        }
        Ok(())
    }

    /// Table attributes that differ from the defaults, as `describe` lists them.
    pub fn table_attributes(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if self.durability != Durability::UseDefault {
            out.push(("DURABILITY", self.durability.name().to_string()));
        }
        if let Some(s) = self.memstore_flush_size {
            out.push(("MEMSTORE_FLUSHSIZE", s.to_string()));
        }
        if let Some(s) = self.max_file_size {
            out.push(("MAX_FILESIZE", s.to_string()));
        }
        if !self.compaction_enabled {
            out.push(("COMPACTION_ENABLED", "false".into()));
        }
        if self.read_only {
            out.push(("READONLY", "true".into()));
        }
        if let Some(p) = &self.split_policy {
            out.push(("SPLIT_POLICY", p.clone()));
        }
        out
    }

    /// `describe` body lines, as HBase's shell prints them: the state, the table's
    /// attributes, and each family followed by a blank line.
    pub fn describe(&self, enabled: bool) -> String {
        let mut s = format!(
            "Table {} is {}\n{}\nCOLUMN FAMILIES DESCRIPTION\n",
            self.name,
            if enabled { "ENABLED" } else { "DISABLED" },
            crate::shell_text::describe_table_line(self)
        );
        for f in &self.families {
            s.push_str(&f.describe());
            s.push_str("\n\n");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_describe_like_hbase() {
        let f = FamilyDescriptor::new("d");
        assert_eq!(
            f.describe(),
            "{NAME => 'd', VERSIONS => '1', KEEP_DELETED_CELLS => 'FALSE', DATA_BLOCK_ENCODING => 'NONE', TTL => 'FOREVER', MIN_VERSIONS => '0', REPLICATION_SCOPE => '0', BLOOMFILTER => 'ROW', IN_MEMORY => 'false', COMPRESSION => 'NONE', BLOCKCACHE => 'true', BLOCKSIZE => '65536', METADATA => {'INDEX_BLOCK_ENCODING' => 'NONE'}}"
        );
    }

    #[test]
    fn attributes_parse_and_round_trip() {
        let mut f = FamilyDescriptor::new("d");
        for (k, v) in [
            ("VERSIONS", "3"),
            ("MIN_VERSIONS", "1"),
            ("TTL", "1 DAY 2 HOURS"),
            ("KEEP_DELETED_CELLS", "true"),
            ("DATA_BLOCK_ENCODING", "FAST_DIFF"),
            ("COMPRESSION", "GZ"),
            ("BLOCKSIZE", "8192"),
            ("BLOOMFILTER", "ROWCOL"),
            ("IN_MEMORY", "true"),
            ("BLOCKCACHE", "false"),
        ] {
            f.set_attribute(k, v).unwrap();
        }
        assert_eq!(f.ttl, 86400 + 7200);
        let mut t = TableDescriptor::new("t1").with_family(f);
        t.set_attribute("DURABILITY", "FSYNC_WAL").unwrap();
        t.set_attribute("MEMSTORE_FLUSHSIZE", "1048576").unwrap();
        t.validate().unwrap();
        assert!(FamilyDescriptor::new("d")
            .set_attribute("TTL", "0")
            .is_err());
        assert!(FamilyDescriptor::new("d")
            .set_attribute("VERSIONS", "x")
            .is_err());
        assert!(FamilyDescriptor::new("d")
            .set_attribute("COLOR", "red")
            .is_err());
    }

    #[test]
    fn names_are_checked() {
        for bad in ["", ".x", "a:b", "a/b"] {
            assert!(FamilyDescriptor::new(bad).validate().is_err(), "{bad}");
        }
        assert!(TableDescriptor::new("ok_name-1.x")
            .with_family(FamilyDescriptor::new("f"))
            .validate()
            .is_ok());
        assert!(TableDescriptor::new("bad name")
            .with_family(FamilyDescriptor::new("f"))
            .validate()
            .is_err());
        assert!(TableDescriptor::new("nofam").validate().is_err());
    }
}
