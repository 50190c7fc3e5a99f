//! Region statistics and the wide-row alarm: what `list_regions` and `status 'detailed'`
//! report of each region, and why a region over its split threshold has not split.

use cellar_region::{Config, Region, TableDescriptor};

use super::{read, Master};
use crate::error::Result;

pub use cellar_api::RegionStats;

impl Master {
    /// The regions of a table with their statistics.
    pub fn list_regions(&self, name: &str) -> Result<Vec<RegionStats>> {
        let st = self.state(name)?;
        let t = read(&st.entry);
        let n = t.regions.len();
        Ok(t.regions
            .iter()
            .map(|slot| {
                let server = self.server(slot.server);
                let mut st = RegionStats {
                    info: slot.info.clone(),
                    server: Some(server.server_name().clone()),
                    store_files: 0,
                    store_files_size: 0,
                    memstore_size: 0,
                    read_requests: 0,
                    write_requests: 0,
                    largest_store_size: 0,
                    split_threshold: 0,
                    split_point: None,
                    alarm: None,
                };
                if let (Ok(load), Ok(r)) = (
                    server.region_load(&slot.info.encoded),
                    server.region(&slot.info.encoded),
                ) {
                    st.store_files = load.store_files;
                    st.store_files_size = load.store_files_size;
                    st.memstore_size = load.memstore_size;
                    st.read_requests = load.read_requests;
                    st.write_requests = load.write_requests;
                    split_status(&r, &t.desc, &self.config, n, &mut st);
                }
                st
            })
            .collect())
    }
}

/// Fills in the split threshold, split point and wide-row alarm of a region.
fn split_status(
    r: &Region,
    desc: &TableDescriptor,
    config: &Config,
    regions: usize,
    st: &mut RegionStats,
) {
    use cellar_region::split_policy::{PolicyKind, SplitPolicy};
    st.largest_store_size = r.largest_store_size();
    let policy = match SplitPolicy::for_table(desc, config, r.seed()) {
        Ok(p) => p,
        Err(e) => {
            st.alarm = Some(format!("split policy: {e}"));
            return;
        }
    };
    // A disabled policy never splits; the alarm still measures against MAX_FILESIZE.
    st.split_threshold = if policy.kind == PolicyKind::Disabled {
        policy.max_file_size
    } else {
        policy.size_to_check(regions)
    };
    let point = r.split_point().map(|row| policy.truncate(row));
    let point = match point {
        Ok(row) if row.is_empty() || row.as_slice() <= r.start_key() => {
            Err("the policy's key prefix leaves no split row inside the region".to_string())
        }
        other => other,
    };
    if let Ok(row) = &point {
        st.split_point = Some(row.clone());
    }
    if st.largest_store_size <= st.split_threshold {
        return;
    }
    st.alarm = Some(if policy.kind == PolicyKind::Disabled {
        "larger than the split threshold, but the split policy is DisabledRegionSplitPolicy"
            .to_string()
    } else {
        match point {
            Err(why) => format!("larger than the split threshold and cannot split: {why}"),
            Ok(row) => format!(
                "larger than the split threshold; would split at '{}' (splits are not performed yet)",
                cellar_types::to_string_binary(&row)
            ),
        }
    });
}
