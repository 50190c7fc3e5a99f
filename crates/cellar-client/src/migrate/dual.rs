//! Dual writes while a table is re-keyed: each write goes to the old table as given and
//! to the new table re-keyed by the migration's [`KeyMap`].
//!
//! Cells written without a timestamp are stamped with the writer's clock first, so both
//! tables hold the same timestamp (a time-bucket map needs it, and verification compares
//! it). The old table is written first: until reads switch it is the source of truth; if
//! the second write fails the call fails and the caller retries it (both writes are
//! idempotent, having explicit timestamps). Deletes map where the map makes them
//! unambiguous: a cell version always; a column's versions when the map ignores
//! timestamps; a family or row when each old row has one new row of its own (`salt`).
//! Others are refused with the reason, before anything is written.

use std::collections::BTreeMap;
use std::sync::Arc;

use cellar_api::{Delete, Error, ErrorKind, Put, Result};
use cellar_types::{CellType, LATEST_TIMESTAMP};

use super::KeyMap;
use crate::Table;

/// Milliseconds since the epoch.
pub type WallClock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The old and the new table of a migration, written together.
#[derive(Clone)]
pub struct DualWriter {
    old: Table,
    new: Table,
    map: KeyMap,
    clock: WallClock,
}

fn system_millis() -> i64 {
    // The client stamps cells itself so that the two tables hold the same timestamp.
    #[allow(clippy::disallowed_methods)]
    let now = std::time::SystemTime::now();
    now.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl DualWriter {
    /// Writes through `old` and `new`, stamping unstamped cells with the system clock.
    pub fn new(old: Table, new: Table, map: KeyMap) -> DualWriter {
        DualWriter::with_clock(old, new, map, Arc::new(system_millis))
    }

    /// As [`DualWriter::new`] with another clock.
    pub fn with_clock(old: Table, new: Table, map: KeyMap, clock: WallClock) -> DualWriter {
        DualWriter {
            old,
            new,
            map,
            clock,
        }
    }

    pub fn map(&self) -> &KeyMap {
        &self.map
    }

    /// Writes `put` to the old table and, re-keyed, to the new one.
    pub async fn put(&self, mut put: Put) -> Result<()> {
        let news = rekey_put(&self.map, &mut put, (self.clock)())?;
        self.old.put(put).await?;
        for p in news {
            self.new.put(p).await?;
        }
        Ok(())
    }

    /// Applies `delete` to the old table and, re-keyed, to the new one.
    pub async fn delete(&self, mut delete: Delete) -> Result<()> {
        let news = rekey_delete(&self.map, &mut delete, (self.clock)())?;
        self.old.delete(delete).await?;
        for d in news {
            self.new.delete(d).await?;
        }
        Ok(())
    }
}

/// Stamps `put`'s unstamped cells with `now` and gives the Puts the new table receives
/// for it (one per new row).
pub fn rekey_put(map: &KeyMap, put: &mut Put, now: i64) -> Result<Vec<Put>> {
    if put.ts == LATEST_TIMESTAMP {
        put.ts = now;
    }
    for c in &mut put.cells {
        if c.2 == LATEST_TIMESTAMP {
            c.2 = put.ts;
        }
    }
    let mut rows: BTreeMap<Vec<u8>, Put> = BTreeMap::new();
    for (family, qualifier, ts, value) in &put.cells {
        let (row, q) = map.map(&put.row, qualifier, *ts)?;
        let p = rows.entry(row.clone()).or_insert_with(|| {
            let mut p = Put::new(row);
            p.ts = put.ts;
            p.durability = put.durability;
            p
        });
        p.cells.push((family.clone(), q, *ts, value.clone()));
    }
    Ok(rows.into_values().collect())
}

/// Stamps `delete` with `now` and gives the Deletes the new table receives for it; an
/// error when the map cannot say which new cells it covers.
pub fn rekey_delete(map: &KeyMap, delete: &mut Delete, now: i64) -> Result<Vec<Delete>> {
    if delete.ts == LATEST_TIMESTAMP {
        delete.ts = now;
    }
    let unmappable = |what: &str| {
        Error::new(
            ErrorKind::Unsupported,
            format!(
                "a delete of {what} cannot be re-keyed by {:?}: the new rows it covers depend on the cells; delete cell versions by timestamp instead",
                map
            ),
        )
    };
    if delete.specs.is_empty() {
        if !map.maps_whole_rows() {
            return Err(unmappable("a whole row"));
        }
        let (row, _) = map.map(&delete.row, b"", delete.ts)?;
        let mut d = Delete::new(row).with_timestamp(delete.ts);
        d.durability = delete.durability;
        return Ok(vec![d]);
    }
    let mut rows: BTreeMap<Vec<u8>, Delete> = BTreeMap::new();
    for spec in &mut delete.specs {
        if spec.ts == LATEST_TIMESTAMP && spec.kind != CellType::Delete {
            spec.ts = delete.ts;
        }
        let (row, q) = match spec.kind {
            CellType::Delete if spec.ts != LATEST_TIMESTAMP => {
                map.map(&delete.row, &spec.qualifier, spec.ts)?
            }
            CellType::Delete => return Err(unmappable("a column's latest version")),
            CellType::DeleteColumn if !map.uses_timestamp() => {
                map.map(&delete.row, &spec.qualifier, spec.ts)?
            }
            CellType::DeleteColumn => return Err(unmappable("a column's versions")),
            _ if map.maps_whole_rows() => (map.map(&delete.row, b"", spec.ts)?.0, Vec::new()),
            _ => return Err(unmappable("a family")),
        };
        let d = rows.entry(row.clone()).or_insert_with(|| {
            let mut d = Delete::new(row).with_timestamp(delete.ts);
            d.durability = delete.durability;
            d
        });
        let mut spec = spec.clone();
        spec.qualifier = q;
        d.specs.push(spec);
    }
    Ok(rows.into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_795_132_800_000; // 2026-11-20

    fn month() -> KeyMap {
        KeyMap::parse("bucket:month").unwrap()
    }

    #[test]
    fn a_put_is_stamped_once_and_split_by_new_row() {
        let mut put = Put::new("u1").add_column("m", "a", "now").add_column_at(
            "m",
            "b",
            NOW - 40 * 86_400_000,
            "october",
        );
        let news = rekey_put(&month(), &mut put, NOW).unwrap();
        assert_eq!(put.cells[0].2, NOW, "the old table gets the same stamp");
        let rows: Vec<&[u8]> = news.iter().map(|p| p.row.as_slice()).collect();
        assert_eq!(rows, [b"u1#202610".as_slice(), b"u1#202611"]);
        assert_eq!(news[1].cells[0].2, NOW);
    }

    #[test]
    fn deletes_map_only_where_the_map_is_unambiguous() {
        // A cell version maps under any map.
        let mut d = Delete::new("u1").add_column_version("m", "a", NOW);
        let news = rekey_delete(&month(), &mut d, NOW).unwrap();
        assert_eq!(news.len(), 1);
        assert_eq!(news[0].row, b"u1#202611");
        assert_eq!(news[0].specs[0].kind, CellType::Delete);
        // A column's versions may span buckets of a time map: refused.
        let mut d = Delete::new("u1").add_columns("m", "a");
        let e = rekey_delete(&month(), &mut d, NOW).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported);
        // ... but not of a map that ignores time.
        let salt = KeyMap::parse("salt:4").unwrap();
        let mut d = Delete::new("u1").add_columns("m", "a");
        let news = rekey_delete(&salt, &mut d, NOW).unwrap();
        assert_eq!(news[0].specs[0].kind, CellType::DeleteColumn);
        assert_eq!(news[0].specs[0].ts, NOW);
        // Whole rows and families: only where each old row has its own new row.
        let mut d = Delete::new("u1");
        assert_eq!(rekey_delete(&salt, &mut d, NOW).unwrap().len(), 1);
        let mut d = Delete::new("u1").add_family("m");
        assert!(rekey_delete(&month(), &mut d, NOW).is_err());
        let tall = KeyMap::parse("tall:day").unwrap();
        let mut d = Delete::new("u1");
        assert!(rekey_delete(&tall, &mut d, NOW).is_err());
    }
}
