//! The catalog: `cellar:meta`, itself a Cellar table (one region, family `info`), with a
//! row per region — `<table> 0x00 <start key>` — holding the region's range, id and
//! directory name. A table's regions are one prefix scan of it, in start-key order;
//! changes to several of them are one atomic multi-row mutation.

pub use cellar_api::RegionInfo;
use cellar_region::{Delete, FamilyDescriptor, Mutation, Put, Region, Scan, TableDescriptor};
use cellar_types::to_string_binary;

use crate::error::{DbError, Result};

/// The catalog table's name and its region's directory name (HBase's meta encoded name).
pub const META_TABLE: &str = "meta";
pub const META_NAMESPACE: &str = "cellar";
pub const META_REGION: &str = "1588230740";
const FAMILY: &[u8] = b"info";
const QUALIFIER: &[u8] = b"regioninfo";

/// The catalog's descriptor.
pub fn meta_descriptor() -> TableDescriptor {
    let mut f = FamilyDescriptor::new(FAMILY);
    f.versions = 3;
    f.in_memory = true;
    let mut t = TableDescriptor::new(META_TABLE).with_family(f);
    // A catalog change is a commit point (a split, a new table): it must survive a
    // power loss once made.
    t.durability = cellar_wal::Durability::FsyncWal;
    t
}

/// A new region of `table` for `[start, end)`, created at `id` (ms), with a unique
/// encoded name.
pub fn new_region(table: &str, start: Vec<u8>, end: Vec<u8>, id: i64) -> RegionInfo {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in table
        .bytes()
        .chain(start.iter().copied())
        .chain(id.to_be_bytes())
    {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    let nanos = cellar_io::random_id();
    RegionInfo {
        table: table.to_string(),
        start,
        end,
        id,
        encoded: format!("{:016x}{:016x}", h, nanos ^ h.rotate_left(29)),
        offline: false,
    }
}

/// The catalog row of a region: table, start key and id (a split parent and its first
/// daughter share the start key).
pub fn region_row(info: &RegionInfo) -> Vec<u8> {
    let mut r = meta_row(&info.table, &info.start);
    r.push(0);
    r.extend_from_slice(&info.id.to_be_bytes());
    r
}

fn encode(info: &RegionInfo) -> Vec<u8> {
    format!(
        "start={};end={};id={};encoded={};offline={}",
        cellar_types::to_hex(&info.start),
        cellar_types::to_hex(&info.end),
        info.id,
        info.encoded,
        info.offline
    )
    .into_bytes()
}

fn decode(table: &str, v: &[u8]) -> Option<RegionInfo> {
    let text = std::str::from_utf8(v).ok()?;
    let mut info = RegionInfo {
        table: table.to_string(),
        start: Vec::new(),
        end: Vec::new(),
        id: 0,
        encoded: String::new(),
        offline: false,
    };
    for part in text.split(';') {
        let (k, val) = part.split_once('=')?;
        match k {
            "start" => info.start = cellar_types::from_hex(val)?,
            "end" => info.end = cellar_types::from_hex(val)?,
            "id" => info.id = val.parse().ok()?,
            "encoded" => info.encoded = val.to_string(),
            "offline" => info.offline = val == "true",
            _ => {}
        }
    }
    (!info.encoded.is_empty()).then_some(info)
}

fn meta_row(table: &str, start: &[u8]) -> Vec<u8> {
    let mut r = table.as_bytes().to_vec();
    r.push(0);
    r.extend_from_slice(start);
    r
}

/// The timestamp for a catalog mutation of `rows`: the clock's, or just after the
/// newest cell or delete marker the rows hold. A row is forgotten and written again when
/// a table is dropped and made anew (truncate) or a region is replaced by one with the
/// same start; within one millisecond, a put at the delete's timestamp would be masked
/// by it once the catalog is read back from its files.
fn stamp(meta: &Region, rows: &[Vec<u8>]) -> Result<i64> {
    let mut ts = meta.now_millis();
    for row in rows {
        let mut stop = row.clone();
        stop.push(0);
        let scan = Scan::new()
            .start_row(row.clone())
            .stop_row(stop)
            .raw(true)
            .max_versions(u32::MAX);
        for r in meta.scanner(&scan)? {
            for c in &r?.cells {
                ts = ts.max(c.timestamp().saturating_add(1));
            }
        }
    }
    Ok(ts)
}

/// Records regions (one atomic mutation).
pub fn put_regions(meta: &Region, infos: &[RegionInfo]) -> Result<()> {
    let rows: Vec<Vec<u8>> = infos.iter().map(region_row).collect();
    let ts = stamp(meta, &rows)?;
    let muts: Vec<Mutation> = infos
        .iter()
        .map(|i| {
            Mutation::Put(Put::new(region_row(i)).add_column_at(FAMILY, QUALIFIER, ts, encode(i)))
        })
        .collect();
    if muts.is_empty() {
        return Ok(());
    }
    meta.mutate_rows(&muts)?;
    Ok(())
}

/// Forgets regions (one atomic mutation).
pub fn delete_regions(meta: &Region, infos: &[RegionInfo]) -> Result<()> {
    let rows: Vec<Vec<u8>> = infos.iter().map(region_row).collect();
    let ts = stamp(meta, &rows)?;
    let muts: Vec<Mutation> = infos
        .iter()
        .map(|i| Mutation::Delete(Delete::new(region_row(i)).with_timestamp(ts)))
        .collect();
    if muts.is_empty() {
        return Ok(());
    }
    meta.mutate_rows(&muts)?;
    Ok(())
}

/// The regions of `table`, in start-key order.
pub fn regions_of(meta: &Region, table: &str) -> Result<Vec<RegionInfo>> {
    let scan = Scan::new().with_row_prefix(meta_row(table, b""));
    let mut out = Vec::new();
    for r in meta.scanner(&scan)? {
        let r = r?;
        let v = r.value(FAMILY, QUALIFIER).ok_or_else(|| DbError::Open {
            path: "cellar:meta".into(),
            reason: format!("row {} has no region info", to_string_binary(&r.row)),
        })?;
        out.push(decode(table, v).ok_or_else(|| DbError::Open {
            path: "cellar:meta".into(),
            reason: format!("bad region info in row {}", to_string_binary(&r.row)),
        })?);
    }
    out.sort_by(|a, b| a.start.cmp(&b.start).then(a.id.cmp(&b.id)));
    Ok(out)
}

/// Every table the catalog has regions of.
pub fn table_names(meta: &Region) -> Result<std::collections::BTreeSet<String>> {
    let mut out = std::collections::BTreeSet::new();
    for r in meta.scanner(&Scan::new())? {
        let r = r?;
        let end = r.row.iter().position(|b| *b == 0).unwrap_or(r.row.len());
        out.insert(String::from_utf8_lossy(&r.row[..end]).into_owned());
    }
    Ok(out)
}

/// The most regions a table can be created with (pre-split keys + 1): far above any
/// sensible layout (HBase suggests tens to hundreds of regions per server), far below
/// what exhausts memory or the disk's directory entries.
pub const MAX_CREATE_REGIONS: u64 = 10_000;

/// Split keys for `n` regions by HBase's algorithms: HexStringSplit (8 hex digits,
/// 2^32 × i / n), DecimalStringSplit (8 digits, 10^8 × i / n),
/// UniformSplit (8 bytes over the whole byte space).
pub fn split_keys(algo: &str, n: u64) -> std::result::Result<Vec<Vec<u8>>, String> {
    if n < 2 {
        return Err(format!("NUMREGIONS must be at least 2, got {n}"));
    }
    if n > MAX_CREATE_REGIONS {
        return Err(format!(
            "NUMREGIONS must be at most {MAX_CREATE_REGIONS}, got {n}"
        ));
    }
    let short = algo.rsplit(['.', '$']).next().unwrap_or(algo);
    let keys: Vec<Vec<u8>> = match short {
        "HexStringSplit" => (1..n)
            .map(|i| format!("{:08x}", ((1u128 << 32) * i as u128 / n as u128) as u64).into_bytes())
            .collect(),
        "DecimalStringSplit" => (1..n)
            .map(|i| {
                format!("{:08}", (100_000_000u128 * i as u128 / n as u128) as u64).into_bytes()
            })
            .collect(),
        "UniformSplit" => (1..n)
            .map(|i| {
                ((((1u128 << 64) * i as u128) / n as u128) as u64)
                    .to_be_bytes()
                    .to_vec()
            })
            .collect(),
        other => {
            return Err(format!(
                "unknown SPLITALGO '{other}' (HexStringSplit, DecimalStringSplit or UniformSplit)"
            ))
        }
    };
    Ok(keys)
}

/// Checks user split keys: non-empty, distinct, not too many; returned sorted.
pub fn check_splits(mut keys: Vec<Vec<u8>>) -> std::result::Result<Vec<Vec<u8>>, String> {
    if keys.len() as u64 >= MAX_CREATE_REGIONS {
        return Err(format!(
            "{} split keys: a table is created with at most {MAX_CREATE_REGIONS} regions",
            keys.len()
        ));
    }
    if keys.iter().any(|k| k.is_empty()) {
        return Err("Empty split key must not be passed in the split keys.".into());
    }
    keys.sort();
    let n = keys.len();
    keys.dedup();
    if keys.len() != n {
        return Err("Split keys must be distinct".into());
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_algorithms() {
        assert_eq!(
            split_keys("HexStringSplit", 4).unwrap(),
            vec![
                b"40000000".to_vec(),
                b"80000000".to_vec(),
                b"c0000000".to_vec()
            ]
        );
        assert_eq!(
            split_keys(
                "org.apache.hadoop.hbase.util.RegionSplitter$DecimalStringSplit",
                2
            )
            .unwrap(),
            vec![b"50000000".to_vec()]
        );
        let u = split_keys("UniformSplit", 4).unwrap();
        assert_eq!(u[0], vec![0x40, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(u[2], vec![0xc0, 0, 0, 0, 0, 0, 0, 0]);
        assert!(split_keys("HexStringSplit", 1).is_err());
        assert!(split_keys("Nope", 3).is_err());
        assert!(check_splits(vec![b"b".to_vec(), b"a".to_vec(), b"a".to_vec()]).is_err());
        assert_eq!(
            check_splits(vec![b"m".to_vec(), b"a".to_vec()]).unwrap(),
            vec![b"a".to_vec(), b"m".to_vec()]
        );
    }

    #[test]
    fn region_info_round_trips() {
        let i = new_region("t", b"a\x00b".to_vec(), b"zz".to_vec(), 1700000000000);
        assert_eq!(decode("t", &encode(&i)).unwrap(), i);
        assert!(i.region_name().starts_with("t,a\\x00b,1700000000000."));
        assert!(
            i.contains(b"a\x00b") && i.contains(b"m") && !i.contains(b"zz") && !i.contains(b"a")
        );
    }
}
