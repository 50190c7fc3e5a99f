//! Opening a region over a fault-injecting file system with a manual clock.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;

use cellar_io::{FaultFs, FileSystem, ManualClock};
use cellar_region::{Config, Region, RegionContext, TableDescriptor};
use cellar_wal::{Wal, WalOptions};

pub const T0: i64 = 1_700_000_000_000;

pub struct Harness {
    pub fs: FaultFs,
    pub clock: Arc<ManualClock>,
    pub config: Arc<Config>,
    pub table: TableDescriptor,
    pub region: Region,
    pub wal: Arc<Wal>,
}

pub fn open_region(
    fs: &FaultFs,
    clock: &Arc<ManualClock>,
    config: &Arc<Config>,
    table: &TableDescriptor,
) -> cellar_region::Result<(Region, Arc<Wal>)> {
    open_region_with(
        fs,
        clock,
        config,
        table,
        None,
        Arc::new(cellar_hfile::BlockCache::new(8 << 20)),
    )
}

pub fn open_region_with(
    fs: &FaultFs,
    clock: &Arc<ManualClock>,
    config: &Arc<Config>,
    table: &TableDescriptor,
    maintenance: Option<std::sync::mpsc::Sender<cellar_region::Maintenance>>,
    cache: Arc<cellar_hfile::BlockCache>,
) -> cellar_region::Result<(Region, Arc<Wal>)> {
    let dynfs: Arc<dyn FileSystem> = Arc::new(fs.clone());
    let mut edits = Vec::new();
    let (wal, _) = Wal::open(
        dynfs.clone(),
        Path::new("/db/wal"),
        WalOptions::default(),
        &mut |e| {
            edits.push(e);
            Ok(())
        },
    )?;
    let wal = Arc::new(wal);
    let ctx = RegionContext {
        fs: dynfs,
        clock: clock.clone(),
        config: config.clone(),
        wal: wal.clone(),
        cache: Some(cache),
        maintenance,
        large_log: None,
    };
    let region = Region::open(Path::new("/db/data/default/t/r1"), "r1", table.clone(), ctx)?;
    for e in &edits {
        if e.region == "r1" {
            region.replay(e)?;
        }
    }
    Ok((region, wal))
}

impl Harness {
    pub fn new(table: TableDescriptor, config: Config) -> Harness {
        let fs = FaultFs::new();
        let clock = Arc::new(ManualClock::new(T0));
        let config = Arc::new(config);
        let (region, wal) = open_region(&fs, &clock, &config, &table).unwrap();
        Harness {
            fs,
            clock,
            config,
            table,
            region,
            wal,
        }
    }

    /// Closes in order (flushing) and opens again.
    pub fn reopen(&mut self) {
        self.region.close().unwrap();
        self.wal.close().unwrap();
        let (region, wal) = open_region(&self.fs, &self.clock, &self.config, &self.table).unwrap();
        self.region = region;
        self.wal = wal;
    }

    /// Loses power: everything not fsynced is gone; then opens again.
    pub fn crash_and_reopen(&mut self) {
        self.region.abort();
        self.fs.crash();
        let (region, wal) = open_region(&self.fs, &self.clock, &self.config, &self.table).unwrap();
        self.region = region;
        self.wal = wal;
    }
}
