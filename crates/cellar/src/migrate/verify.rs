//! The `verify` step: the old table's cells, re-keyed, against the new table's, entity by
//! entity (an entity is an old row): cell counts and an MD5 of the cells in order, all
//! versions. Every entity whose new rows differ is reported, the heaviest entities
//! first, as the seeds advise checking them; `sample` compares only the heaviest N.

use std::collections::{BTreeMap, BTreeSet};

use cellar_api::Scan;
use cellar_types::Cell;
use md5::{Digest, Md5};

use super::keymap::KeyMap;
use crate::client::Connection;
use crate::error::Result;

/// Re-keys one cell (timestamp, type, value and tags kept).
pub(crate) fn rekey(map: &KeyMap, c: &Cell) -> Result<Cell> {
    let (row, q) = map.map(c.row(), c.qualifier(), c.timestamp())?;
    Ok(
        Cell::new(row, c.family(), q, c.timestamp(), c.cell_type(), c.value())
            .map_err(|e| cellar_api::Error::invalid(e.to_string()))?,
    )
}

/// One old entity whose re-keyed cells differ from the new table's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityDiff {
    pub entity: Vec<u8>,
    /// Its cells in the old table (re-keyed) and the new table's cells in the rows it
    /// maps to.
    pub old_cells: u64,
    pub new_cells: u64,
}

/// Per new row: its cell count and the sum of its cells' digests (order-independent,
/// so the old side needs no sort and holds one small sum per new row, not the cells).
#[derive(Default, Clone, Copy, PartialEq, Eq)]
struct RowSum {
    cells: u64,
    sum: u128,
}

impl RowSum {
    fn add(&mut self, c: &Cell) {
        let mut md5 = Md5::new();
        for part in [c.row(), c.family(), c.qualifier(), c.value()] {
            md5.update((part.len() as u32).to_be_bytes());
            md5.update(part);
        }
        md5.update(c.timestamp().to_be_bytes());
        self.cells += 1;
        self.sum = self
            .sum
            .wrapping_add(u128::from_be_bytes(md5.finalize().into()));
    }
}

/// Compares `to` with `from` re-keyed by `map`, cell for cell (all versions); the
/// number of entities compared and those that differ, heaviest first. With `sample`,
/// only that many of the heaviest entities are compared.
pub fn verify(
    conn: &dyn Connection,
    from: &str,
    to: &str,
    map: &KeyMap,
    sample: Option<usize>,
) -> Result<(usize, Vec<EntityDiff>)> {
    let scan = Scan::new()
        .max_versions(u32::MAX)
        .batch(10_000)
        .allow_partial_results(true);
    // Old side: per entity its cell count and new rows; per new row what it should hold.
    let mut entity_cells: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    let mut expected: BTreeMap<Vec<u8>, RowSum> = BTreeMap::new();
    let mut owners: BTreeMap<Vec<u8>, BTreeSet<Vec<u8>>> = BTreeMap::new();
    for r in conn.table(from)?.scan(&scan)? {
        let r = r?;
        for c in &r.cells {
            let n = rekey(map, c)?;
            *entity_cells.entry(r.row.clone()).or_default() += 1;
            let rows = owners.entry(r.row.clone()).or_default();
            if !rows.contains(n.row()) {
                rows.insert(n.row().to_vec());
            }
            expected.entry(n.row().to_vec()).or_default().add(&n);
        }
    }
    let mut entities: Vec<(Vec<u8>, u64)> = entity_cells.into_iter().collect();
    entities.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if let Some(n) = sample {
        entities.truncate(n);
    }
    let t = conn.table(to)?;
    let mut actual: BTreeMap<Vec<u8>, RowSum> = BTreeMap::new();
    let mut diffs = Vec::new();
    for (entity, count) in &entities {
        let rows = owners.get(entity).cloned().unwrap_or_default();
        let mut differs = false;
        let mut new_cells = 0;
        for row in &rows {
            if !actual.contains_key(row) {
                let mut got = RowSum::default();
                let one_row = scan
                    .clone()
                    .start_row(row.clone())
                    .stop_row(stop_after(row));
                for r in t.scan(&one_row)? {
                    for c in &r?.cells {
                        got.add(c);
                    }
                }
                actual.insert(row.clone(), got);
            }
            let got = actual.get(row).copied().unwrap_or_default();
            new_cells += got.cells;
            differs |= expected.get(row).copied().unwrap_or_default() != got;
        }
        if differs {
            diffs.push(EntityDiff {
                entity: entity.clone(),
                old_cells: *count,
                new_cells,
            });
        }
    }
    Ok((entities.len(), diffs))
}

/// The smallest row after `row`: a scan's stop row that includes `row` alone.
fn stop_after(row: &[u8]) -> Vec<u8> {
    let mut r = row.to_vec();
    r.push(0);
    r
}
