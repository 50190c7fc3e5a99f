//! The `create` step: the new table, with the old one's families and settings,
//! pre-split at quantiles of a sample of the old cells' keys as the map gives them — so
//! the backfill and the dual writes spread over regions from the first write.

use cellar_api::{Scan, TableDescriptor};

use super::keymap::KeyMap;
use super::plan::Plan;
use super::Site;
use crate::error::Result;

/// Cells sampled from the old table (spread over its regions).
const SAMPLE: usize = 100_000;

/// The old table's regions as (start, end), in key order.
pub(crate) fn region_ranges(site: &Site, table: &str) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut ranges: Vec<(Vec<u8>, Vec<u8>)> = site
        .conn
        .admin()
        .list_regions(table)?
        .into_iter()
        .map(|r| (r.info.start, r.info.end))
        .collect();
    ranges.sort();
    Ok(ranges)
}

/// The split keys: `regions` - 1 quantiles of the sampled mapped rows.
pub fn split_keys(site: &Site, plan: &Plan, regions: usize) -> Result<Vec<Vec<u8>>> {
    let map = KeyMap::parse(&plan.key_map)?;
    let table = site.conn.table(&plan.from)?;
    let ranges = region_ranges(site, &plan.from)?;
    let quota = (SAMPLE / ranges.len().max(1)).max(1);
    let mut keys = Vec::new();
    for (start, end) in ranges {
        let scan = Scan::new()
            .start_row(start)
            .stop_row(end)
            .batch(1000)
            .allow_partial_results(true);
        let mut taken = 0;
        for r in table.scan(&scan)? {
            for c in &r?.cells {
                let k = map.map(c.row(), c.qualifier(), c.timestamp())?.0;
                if keys.last() != Some(&k) {
                    keys.push(k);
                }
                taken += 1;
            }
            if taken >= quota {
                break;
            }
        }
    }
    keys.sort();
    keys.dedup();
    let n = regions.max(1);
    let mut splits: Vec<Vec<u8>> = (1..n)
        .filter_map(|i| keys.get(keys.len() * i / n).cloned())
        .filter(|k| !k.is_empty())
        .collect();
    splits.dedup();
    Ok(splits)
}

/// Creates the new table pre-split in up to `regions` regions; an existing table is
/// left as it is. The new table's region count.
pub fn create(site: &Site, plan: &Plan, regions: usize) -> Result<usize> {
    let admin = site.conn.admin();
    if !admin.table_exists(&plan.to)? {
        let (old, _): (TableDescriptor, bool) = admin.describe(&plan.from)?;
        let mut desc = old.clone();
        desc.name = plan.to.clone();
        let splits = split_keys(site, plan, regions)?;
        admin.create_table(desc, splits)?;
    }
    Ok(admin.list_regions(&plan.to)?.len())
}
