//! A region of one table on an in-memory file system and a manual clock, for the
//! crate's unit tests.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;

use cellar_io::{FileSystem, ManualClock, MemoryFs};
use cellar_wal::{Wal, WalOptions};

use crate::descriptor::TableDescriptor;
use crate::region::{Region, RegionContext};
use crate::Config;

/// Opens region "r" of `table` under `config`, its clock standing at `now` (ms).
pub(crate) fn open(table: TableDescriptor, config: Config, now: i64) -> Region {
    let fs: Arc<dyn FileSystem> = Arc::new(MemoryFs::new());
    let (wal, _) = Wal::open(
        fs.clone(),
        Path::new("/wal"),
        WalOptions::default(),
        &mut |_| Ok(()),
    )
    .unwrap();
    let ctx = RegionContext {
        fs,
        clock: Arc::new(ManualClock::new(now)),
        config: Arc::new(config),
        wal: Arc::new(wal),
        cache: None,
        maintenance: None,
        large_log: None,
    };
    Region::open(Path::new("/data/t/r"), "r", table, ctx).unwrap()
}
