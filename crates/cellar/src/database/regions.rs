//! The regions of the open tables: each slot's region, or why it failed to open (HBase's
//! FAILED_OPEN) with the WAL edits it still has to replay; opening a slot; and finding
//! the region that serves a row or a range, with a clear error for one that is offline.

use std::collections::BTreeMap;
use std::sync::Arc;

use cellar_region::{Region, TableDescriptor};
use cellar_wal::WalEdit;

use super::catalog::{self, RegionInfo};
use super::error::{DbError, Result};
use super::{lock, Inner, TableEntry};

/// A region of a table: its catalog entry and, while the table is enabled, the open region
/// — or why it failed to open (HBase's FAILED_OPEN: a damaged store file, say), with the
/// WAL edits it still has to replay once it opens.
pub(crate) struct Slot {
    pub(crate) info: RegionInfo,
    pub(crate) region: Option<Arc<Region>>,
    pub(crate) failed: Option<String>,
    pub(crate) pending: Vec<WalEdit>,
}

impl Slot {
    pub(crate) fn open(info: RegionInfo, region: Arc<Region>) -> Slot {
        Slot {
            info,
            region: Some(region),
            failed: None,
            pending: Vec::new(),
        }
    }
}

/// A region that could not open, and why (the file and the reason).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedRegion {
    pub table: String,
    /// HBase's region name: `table,startkey,id.encoded.`
    pub region: String,
    pub reason: String,
}

/// The entry of `table` when it exists and is enabled.
fn enabled<'a>(tables: &'a BTreeMap<String, TableEntry>, table: &str) -> Result<&'a TableEntry> {
    let t = tables
        .get(table)
        .ok_or_else(|| DbError::TableNotFound(table.to_string()))?;
    if !t.enabled {
        return Err(DbError::TableNotEnabled(table.to_string()));
    }
    Ok(t)
}

/// The error for a region that is not online.
fn not_serving(slot: &Slot) -> DbError {
    DbError::RegionNotServing {
        region: slot.info.region_name(),
        reason: slot
            .failed
            .clone()
            .unwrap_or_else(|| "the region is offline".into()),
    }
}

impl Inner {
    /// Opens a slot's region and replays its pending edits. A failure leaves the region
    /// offline with the reason recorded (and logged), and keeps its edits — in the WAL,
    /// which keeps every segment holding them, and in the slot for a later retry; the
    /// rest of the database goes on serving.
    pub(crate) fn open_slot(&self, desc: &TableDescriptor, slot: &mut Slot) {
        let attempt = (|| -> Result<Arc<Region>> {
            let region = self.open_region(desc, &slot.info)?;
            for e in &slot.pending {
                if let Err(err) = region.replay(e) {
                    region.abort();
                    return Err(err.into());
                }
            }
            Ok(region)
        })();
        match attempt {
            Ok(region) => {
                slot.region = Some(region);
                slot.failed = None;
                slot.pending.clear();
            }
            Err(e) => {
                let reason = e.to_string();
                tracing::warn!(
                    region = %slot.info.region_name(),
                    "region failed to open and stays offline: {reason}"
                );
                slot.region = None;
                slot.failed = Some(reason);
            }
        }
    }

    /// The open regions of an enabled table, in start-key order.
    pub(crate) fn regions_of(&self, table: &str) -> Result<Vec<Arc<Region>>> {
        let tables = lock(&self.tables);
        let t = enabled(&tables, table)?;
        Ok(t.regions.iter().filter_map(|s| s.region.clone()).collect())
    }

    /// The regions of an enabled table whose ranges meet `[lo, hi)` (empty = unbounded),
    /// all online, in start-key order; a region that failed to open among them is an
    /// error naming it.
    pub(crate) fn regions_in(&self, table: &str, lo: &[u8], hi: &[u8]) -> Result<Vec<Arc<Region>>> {
        let tables = lock(&self.tables);
        let t = enabled(&tables, table)?;
        let mut out = Vec::new();
        for s in &t.regions {
            let below_end = s.info.end.is_empty() || lo.is_empty() || lo < s.info.end.as_slice();
            let above_start = hi.is_empty() || s.info.start.as_slice() <= hi;
            if !(below_end && above_start) {
                continue;
            }
            out.push(s.region.clone().ok_or_else(|| not_serving(s))?);
        }
        Ok(out)
    }

    /// Regions that failed to open, with the reason.
    pub(crate) fn failed_regions(&self) -> Vec<FailedRegion> {
        lock(&self.tables)
            .values()
            .flat_map(|t| {
                t.regions.iter().filter_map(|s| {
                    s.failed.as_ref().map(|reason| FailedRegion {
                        table: t.desc.name.clone(),
                        region: s.info.region_name(),
                        reason: reason.clone(),
                    })
                })
            })
            .collect()
    }

    /// The open region of an enabled table serving `row`.
    pub(crate) fn region_for(&self, table: &str, row: &[u8]) -> Result<Arc<Region>> {
        let tables = lock(&self.tables);
        let t = enabled(&tables, table)?;
        let i = t.region_index(row);
        let slot = t
            .regions
            .get(i)
            .ok_or_else(|| DbError::TableNotEnabled(table.to_string()))?;
        slot.region.clone().ok_or_else(|| not_serving(slot))
    }

    pub(super) fn region_named(&self, name: &str) -> Option<Arc<Region>> {
        if name == catalog::META_REGION {
            return Some(self.meta.clone());
        }
        lock(&self.tables)
            .values()
            .flat_map(|t| t.regions.iter())
            .filter(|s| s.info.encoded == name)
            .find_map(|s| s.region.clone())
    }

    pub(super) fn all_regions(&self) -> Vec<Arc<Region>> {
        lock(&self.tables)
            .values()
            .flat_map(|t| t.regions.iter())
            .filter_map(|s| s.region.clone())
            .collect()
    }
}
