//! Descriptors as HBase's shell prints them (`describe`), to the character: a family's
//! attributes come out in the order of the Java `HashMap` HBase's client keeps them in
//! (bucket by bucket, the bucket of a key given by `Bytes.hashCode`), reserved ones
//! first, then `METADATA => {...}` and `CONFIGURATION => {...}`; a table's attributes in
//! byte order; TTLs in words (`86400 SECONDS (1 DAY)`). The reference is HBase 2.4's
//! shell client against an HBase 2.6 server, whose families carry
//! `INDEX_BLOCK_ENCODING` and whose tables record their store-file tracker.

use std::fmt::Write as _;

use crate::descriptor::{FamilyDescriptor, TableDescriptor, FOREVER};

/// The family attributes HBase's (2.4) client treats as its own (`RESERVED_KEYWORDS`);
/// the others print under `METADATA`.
const RESERVED: [&str; 16] = [
    "BLOOMFILTER",
    "REPLICATION_SCOPE",
    "VERSIONS",
    "MIN_VERSIONS",
    "COMPRESSION",
    "TTL",
    "BLOCKSIZE",
    "IN_MEMORY",
    "BLOCKCACHE",
    "KEEP_DELETED_CELLS",
    "DATA_BLOCK_ENCODING",
    "ENCRYPTION",
    "ENCRYPTION_KEY",
    "IS_MOB",
    "MOB_THRESHOLD",
    "MOB_COMPACT_PARTITION_POLICY",
];

/// How many entries the client's builder starts from (its defaults).
const BUILDER_DEFAULTS: usize = 11;

/// `Bytes.hashCode` (`WritableComparator.hashBytes`) of a key's bytes.
fn bytes_hash(key: &[u8]) -> i32 {
    key.iter().fold(1i32, |h, b| {
        h.wrapping_mul(31).wrapping_add(*b as i8 as i32)
    })
}

/// `String.hashCode` of a key.
fn string_hash(key: &str) -> i32 {
    key.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(c as i32))
}

/// The bucket of a hash in a `HashMap` table of `cap` slots.
fn bucket(hash: i32, cap: usize) -> usize {
    let h = hash as u32;
    ((h ^ (h >> 16)) as usize) & (cap - 1)
}

/// `HashMap.tableSizeFor`.
fn table_size_for(n: usize) -> usize {
    n.max(1).next_power_of_two().max(1)
}

/// The table size of a map built by `putAll` of `n` entries into an empty map (Java
/// 17: `n / 0.75 + 1`, rounded down, then to a power of two).
fn copy_capacity(n: usize) -> usize {
    table_size_for((n as f32 / 0.75 + 1.0) as usize)
}

/// The table size after inserting `n` entries one by one (resized at 3/4 full).
fn grown_capacity(n: usize) -> usize {
    let mut cap = 16;
    while n > cap * 3 / 4 {
        cap *= 2;
    }
    cap
}

/// `keys` in the order HBase's client iterates them: its descriptor is a copy (by
/// `putAll`) of its builder's map, whose entries were put one by one; a copy iterates
/// bucket by bucket, and within a bucket in the order of the map it copied.
fn java_order<T: Clone>(keys: &[T], hash: impl Fn(&T) -> i32, built_from: usize) -> Vec<T> {
    let n = keys.len();
    let (cap, source_cap) = (copy_capacity(n), grown_capacity(n.max(built_from)));
    let mut order: Vec<(usize, usize, usize, T)> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let h = hash(k);
            (bucket(h, cap), bucket(h, source_cap), i, k.clone())
        })
        .collect();
    order.sort_by_key(|(a, b, i, _)| (*a, *b, *i));
    order.into_iter().map(|(_, _, _, k)| k).collect()
}

/// HBase's `PrettyPrinter.humanReadableTTL` (with its plural of seconds taken from
/// the minutes).
pub fn ttl_text(ttl: i32) -> String {
    if ttl == FOREVER {
        return "FOREVER".into();
    }
    let interval = i64::from(ttl);
    if interval < 60 {
        return format!("{interval} SECOND{}", if interval == 1 { "" } else { "S" });
    }
    let days = interval / 86_400;
    let hours = (interval - days * 86_400) / 3_600;
    let minutes = (interval - days * 86_400 - hours * 3_600) / 60;
    let seconds = interval - days * 86_400 - hours * 3_600 - minutes * 60;
    let mut s = format!("{interval} SECONDS (");
    let plural = |n: i64| if n == 1 { "" } else { "S" };
    if days > 0 {
        let _ = write!(s, "{days} DAY{}", plural(days));
    }
    if hours > 0 {
        let _ = write!(
            s,
            "{}{hours} HOUR{}",
            if days > 0 { " " } else { "" },
            plural(hours)
        );
    }
    if minutes > 0 {
        let sep = if days + hours > 0 { " " } else { "" };
        let _ = write!(s, "{sep}{minutes} MINUTE{}", plural(minutes));
    }
    if seconds > 0 {
        let sep = if days + hours + minutes > 0 { " " } else { "" };
        let _ = write!(s, "{sep}{seconds} SECOND{}", plural(minutes));
    }
    s.push(')');
    s
}

/// The attributes a family is described by, as HBase 2.6 sends them: every default
/// explicitly, `INDEX_BLOCK_ENCODING` included.
fn family_values(f: &FamilyDescriptor) -> Vec<(&'static str, String)> {
    let mut v: Vec<(&'static str, String)> = f
        .attributes()
        .into_iter()
        .filter(|(k, _)| *k != "NAME")
        .map(|(k, v)| {
            if k == "TTL" {
                (k, ttl_text(f.ttl))
            } else {
                (k, v)
            }
        })
        .collect();
    v.push(("INDEX_BLOCK_ENCODING", "NONE".into()));
    v
}

/// `{NAME => 'f', VERSIONS => '1', ...}` as HBase's shell prints a family.
pub fn describe_family(f: &FamilyDescriptor) -> String {
    let values = java_order(
        &family_values(f),
        |(k, _)| bytes_hash(k.as_bytes()),
        BUILDER_DEFAULTS,
    );
    let mut s = format!("{{NAME => '{}'", String::from_utf8_lossy(&f.name));
    for (k, v) in values.iter().filter(|(k, _)| RESERVED.contains(k)) {
        let _ = write!(s, ", {k} => '{v}'");
    }
    let meta: Vec<String> = values
        .iter()
        .filter(|(k, _)| !RESERVED.contains(k))
        .map(|(k, v)| format!("'{k}' => '{v}'"))
        .collect();
    if !meta.is_empty() {
        let _ = write!(s, ", METADATA => {{{}}}", meta.join(", "));
    }
    if !f.configuration.is_empty() {
        let conf: Vec<(&String, &String)> = f.configuration.iter().collect();
        let conf = java_order(&conf, |(k, _)| string_hash(k), 0);
        let parts: Vec<String> = conf
            .iter()
            .map(|(k, v)| format!("'{k}' => '{v}'"))
            .collect();
        let _ = write!(s, ", CONFIGURATION => {{{}}}", parts.join(", "));
    }
    s.push('}');
    s
}

/// `t, {TABLE_ATTRIBUTES => {...}}`: the table's own attributes in byte order, then
/// under `METADATA` its configuration and the store-file tracker HBase 2.6 records.
pub fn describe_table_line(t: &TableDescriptor) -> String {
    let mut reserved: Vec<(&str, String)> = t.table_attributes();
    reserved.sort_by(|a, b| a.0.cmp(b.0));
    let mut meta: Vec<(String, String)> = t
        .configuration
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    meta.push(("hbase.store.file-tracker.impl".into(), "DEFAULT".into()));
    meta.sort();
    let mut parts: Vec<String> = reserved
        .iter()
        .map(|(k, v)| format!("{k} => '{v}'"))
        .collect();
    let meta: Vec<String> = meta
        .iter()
        .map(|(k, v)| format!("'{k}' => '{v}'"))
        .collect();
    parts.push(format!("METADATA => {{{}}}", meta.join(", ")));
    format!(
        "{}, {{TABLE_ATTRIBUTES => {{{}}}}}",
        t.name,
        parts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_print_in_the_order_hbase_prints_them() {
        // As HBase 2.4's shell printed a new family of an HBase 2.6 table.
        assert_eq!(
            describe_family(&FamilyDescriptor::new("f")),
            "{NAME => 'f', VERSIONS => '1', KEEP_DELETED_CELLS => 'FALSE', DATA_BLOCK_ENCODING => 'NONE', TTL => 'FOREVER', MIN_VERSIONS => '0', REPLICATION_SCOPE => '0', BLOOMFILTER => 'ROW', IN_MEMORY => 'false', COMPRESSION => 'NONE', BLOCKCACHE => 'true', BLOCKSIZE => '65536', METADATA => {'INDEX_BLOCK_ENCODING' => 'NONE'}}"
        );
    }

    #[test]
    fn ttls_in_words() {
        assert_eq!(ttl_text(FOREVER), "FOREVER");
        assert_eq!(ttl_text(1), "1 SECOND");
        assert_eq!(ttl_text(59), "59 SECONDS");
        assert_eq!(ttl_text(86_400), "86400 SECONDS (1 DAY)");
        assert_eq!(
            ttl_text(90_061),
            "90061 SECONDS (1 DAY 1 HOUR 1 MINUTE 1 SECOND)"
        );
        // HBase takes the plural of seconds from the minutes.
        assert_eq!(ttl_text(3_602), "3602 SECONDS (1 HOUR 2 SECONDS)");
        assert_eq!(
            ttl_text(7_322),
            "7322 SECONDS (2 HOURS 2 MINUTES 2 SECONDS)"
        );
    }

    #[test]
    fn tables_carry_their_store_file_tracker() {
        let mut t = TableDescriptor::new("t");
        assert_eq!(
            describe_table_line(&t),
            "t, {TABLE_ATTRIBUTES => {METADATA => {'hbase.store.file-tracker.impl' => 'DEFAULT'}}}"
        );
        t.max_file_size = Some(1 << 30);
        t.read_only = true;
        assert_eq!(
            describe_table_line(&t),
            "t, {TABLE_ATTRIBUTES => {MAX_FILESIZE => '1073741824', READONLY => 'true', METADATA => {'hbase.store.file-tracker.impl' => 'DEFAULT'}}}"
        );
    }
}
