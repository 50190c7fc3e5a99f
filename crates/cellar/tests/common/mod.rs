//! Helpers the database tests share: options over a fault-injecting file system with a
//! manual clock, and listing the files under a directory.
#![allow(dead_code)]

pub mod compat;
pub mod hbase;
pub mod server;
pub mod thrift;
pub mod zookeeper;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cellar::Options;
use cellar_io::{FaultFs, FileSystem, ManualClock};
use cellar_region::Config;

/// A database on `fs`: no background thread, no directory lock, time at 1.7e12 ms.
pub fn fault_opts(fs: &FaultFs) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        clock: Arc::new(ManualClock::new(1_700_000_000_000)),
        executor: Arc::new(cellar_io::Threads),
        config: Config::default(),
        background: false,
        lock: false,
    }
}

/// Every file below `dir`, depth first.
pub fn files_under(fs: &dyn FileSystem, dir: &Path, out: &mut Vec<PathBuf>) {
    for p in fs.list_dir(dir).unwrap_or_default() {
        if fs.is_dir(&p) {
            files_under(fs, &p, out);
        } else {
            out.push(p);
        }
    }
}
