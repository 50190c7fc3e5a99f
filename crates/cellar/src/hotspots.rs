//! Hot regions: a region taking most of its table's requests, found from the request
//! counts every region keeps. When the hot region is the table's last and takes nearly
//! every write, the keys grow monotonically (a timestamp or a sequence first) and every
//! new row lands at the end of the key space — the advice is to lead the row key with
//! an entity id, or salt it. Works on any connection (the counts are in RegionStats).

use std::collections::BTreeMap;

use cellar_api::RegionStats;

use crate::large_rows::Entry;

/// Requests a table needs before its spread is judged.
pub const MIN_REQUESTS: u64 = 1000;
/// The share of a table's requests that makes a region hot (and at least 1.5 times an
/// even share).
pub const HOT_SHARE: f64 = 0.5;
/// The share of writes the last region takes when keys grow monotonically.
pub const MONOTONIC_SHARE: f64 = 0.8;

/// A region taking most of its table's requests.
#[derive(Debug, Clone, PartialEq)]
pub struct HotRegion {
    pub table: String,
    pub region: String,
    pub start: Vec<u8>,
    pub end: Vec<u8>,
    /// Its share of the table's reads plus writes, and of its writes.
    pub share: f64,
    pub write_share: f64,
    pub requests: u64,
    /// Every write lands in the last region: monotonic keys.
    pub monotonic: bool,
    pub advice: String,
}

/// The hot regions of one table's regions.
pub fn hot_regions(regions: &[RegionStats]) -> Vec<HotRegion> {
    if regions.len() < 2 {
        return Vec::new();
    }
    let total: u64 = regions
        .iter()
        .map(|r| r.read_requests + r.write_requests)
        .sum();
    let writes: u64 = regions.iter().map(|r| r.write_requests).sum();
    if total < MIN_REQUESTS {
        return Vec::new();
    }
    let fair = 1.0 / regions.len() as f64;
    regions
        .iter()
        .filter_map(|r| {
            let n = r.read_requests + r.write_requests;
            let share = n as f64 / total as f64;
            if share < HOT_SHARE.max(1.5 * fair) {
                return None;
            }
            let write_share = if writes == 0 {
                0.0
            } else {
                r.write_requests as f64 / writes as f64
            };
            let last = r.info.end.is_empty();
            let monotonic = last && write_share >= MONOTONIC_SHARE && writes >= MIN_REQUESTS / 2;
            let advice = if monotonic {
                "every new row lands in the last region: the row keys grow (a timestamp or sequence first); lead the key with an entity id, or salt it".to_string()
            } else {
                "one region serves most requests: split it at its busy rows, or spread the keys (salt, hash prefix)".to_string()
            };
            Some(HotRegion {
                table: r.info.table.clone(),
                region: r.info.encoded.clone(),
                start: r.info.start.clone(),
                end: r.info.end.clone(),
                share,
                write_share,
                requests: n,
                monotonic,
                advice,
            })
        })
        .collect()
}

/// A row whose reads skip many delete markers (`cellar.tombstone.warn.cells`), all its
/// tracked families summed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TombstoneRow {
    pub table: String,
    pub row: Vec<u8>,
    pub deletes: u64,
    pub cells: u64,
    pub advice: &'static str,
}

/// What reads of a row full of delete markers should do instead.
pub const TOMBSTONE_ADVICE: &str = "reads skip every delete marker until a major compaction drops them: a queue kept as a wide row — give the family a TTL so old items expire without deletes, or keep one row per item";

/// The rows of `cellar:large_rows` entries with a build-up of delete markers, most
/// markers first.
pub fn tombstone_rows(entries: &[Entry]) -> Vec<TombstoneRow> {
    let mut rows: BTreeMap<(String, Vec<u8>), (u64, u64, bool)> = BTreeMap::new();
    for e in entries {
        let r = rows.entry((e.table.clone(), e.row.clone())).or_default();
        r.0 += e.deletes;
        r.1 += e.cells;
        r.2 |= e.tombstones;
    }
    let mut out: Vec<TombstoneRow> = rows
        .into_iter()
        .filter(|(_, v)| v.2)
        .map(|((table, row), (deletes, cells, _))| TombstoneRow {
            table,
            row,
            deletes,
            cells,
            advice: TOMBSTONE_ADVICE,
        })
        .collect();
    out.sort_by(|a, b| b.deletes.cmp(&a.deletes).then_with(|| a.row.cmp(&b.row)));
    out
}

/// A row many writers contend for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HotRow {
    pub table: String,
    pub region: String,
    pub row: Vec<u8>,
    pub contention: cellar_region::row_lock::Contention,
    pub advice: &'static str,
}

/// What to do about a hot row.
pub const HOT_ROW_ADVICE: &str = "many writers wait for this one row (a counter or a checkAndMutate target): spread it over several rows (a sharded counter summed on read) or combine updates before writing";

/// The rows of this process's regions that writers contend for most: any that timed
/// out waiting or was refused as RegionTooBusy, or waited long or often
/// (`cellar.hotrow.wait.ms`, `cellar.hotrow.waits`); most waited on first, ten per
/// region at most.
pub fn hot_rows(master: &crate::master::Master) -> Vec<HotRow> {
    let (waits, wait_ms) = (
        master.config().hot_row_waits,
        master.config().hot_row_wait_ms,
    );
    let mut out = Vec::new();
    for server in master.servers() {
        for region in server.online_regions() {
            for (row, c) in region.hot_rows(10) {
                if c.timeouts > 0 || c.busy > 0 || c.wait_ms >= wait_ms || c.waits >= waits {
                    out.push(HotRow {
                        table: region.table().name.clone(),
                        region: region.name().to_string(),
                        row,
                        contention: c,
                        advice: HOT_ROW_ADVICE,
                    });
                }
            }
        }
    }
    out.sort_by(|a, b| {
        (b.contention.wait_ms, b.contention.waits).cmp(&(a.contention.wait_ms, a.contention.waits))
    });
    out
}

/// A family keeping far more versions than its reads ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionWaste {
    pub table: String,
    pub family: Vec<u8>,
    /// The most versions of one column its files hold, the most a read asked for, and
    /// the family's VERSIONS.
    pub stored: u64,
    pub asked: u64,
    pub configured: u32,
    pub advice: String,
}

impl VersionWaste {
    /// A report of `family`, with its advice.
    pub fn new(
        table: String,
        family: Vec<u8>,
        stored: u64,
        asked: u64,
        configured: u32,
    ) -> VersionWaste {
        VersionWaste {
            advice: format!(
                "reads ask for at most {asked} version(s) of {stored} kept: lower VERSIONS (alter '{table}', {{NAME => '{}', VERSIONS => {asked}}}) or set a TTL",
                cellar_types::to_string_binary(&family)
            ),
            table,
            family,
            stored,
            asked,
            configured,
        }
    }
}

/// Stored versions at least this many times what reads ask for are reported.
pub const VERSION_RATIO: u64 = 10;

/// The families of this process's regions whose stored versions far exceed what their
/// reads ask for (known once a read has asked and a flush or compaction has written).
pub fn version_waste(master: &crate::master::Master) -> Vec<VersionWaste> {
    let mut per: BTreeMap<(String, Vec<u8>), (u64, u64, u32)> = BTreeMap::new();
    for server in master.servers() {
        for region in server.online_regions() {
            let table = region.table().name.clone();
            for store in region.stores() {
                let (stored, asked) = store.versions_stored_and_asked();
                let e = per
                    .entry((table.clone(), store.family.name.clone()))
                    .or_default();
                e.0 = e.0.max(stored);
                e.1 = e.1.max(asked);
                e.2 = store.family.versions;
            }
        }
    }
    per.into_iter()
        .filter(|(_, (stored, asked, _))| {
            *asked > 0 && *stored >= VERSION_RATIO && *stored >= VERSION_RATIO * asked
        })
        .map(|((table, family), (stored, asked, configured))| {
            VersionWaste::new(table, family, stored, asked, configured)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cellar_api::RegionInfo;

    fn region(start: &str, end: &str, reads: u64, writes: u64) -> RegionStats {
        RegionStats {
            info: RegionInfo {
                table: "t".into(),
                start: start.as_bytes().to_vec(),
                end: end.as_bytes().to_vec(),
                id: 1,
                encoded: format!("r-{start}"),
                offline: false,
            },
            server: None,
            store_files: 0,
            store_files_size: 0,
            memstore_size: 0,
            read_requests: reads,
            write_requests: writes,
            largest_store_size: 0,
            split_threshold: 0,
            split_point: None,
            alarm: None,
        }
    }

    #[test]
    fn a_region_with_most_requests_is_hot_and_the_last_one_with_every_write_is_monotonic() {
        let even = [region("", "m", 600, 600), region("m", "", 500, 700)];
        assert!(hot_regions(&even).is_empty());
        let hot = [region("", "m", 100, 0), region("m", "", 200, 5000)];
        let h = hot_regions(&hot);
        assert_eq!(h.len(), 1);
        assert!(h[0].monotonic, "{h:?}");
        assert!(h[0].advice.contains("entity id"));
        let reads = [region("", "m", 5000, 10), region("m", "", 100, 10)];
        let h = hot_regions(&reads);
        assert_eq!((h.len(), h[0].monotonic), (1, false));
        assert!(hot_regions(&[region("", "m", 10, 0), region("m", "", 0, 100)]).is_empty());
    }
}
