//! All of Cellar's file I/O and time go through this crate, so tests can crash,
//! corrupt and time-travel: a [`FileSystem`] trait with a local implementation
//! ([`LocalFs`]), an in-memory one ([`MemoryFs`]) and a fault-injecting one ([`FaultFs`]),
//! a [`Clock`] trait with a system and a manual clock, and an [`Executor`] for background
//! tasks.

mod clock;
mod error;
mod executor;
mod fault;
mod fs;
mod histogram;
mod local;
mod memory;

pub use clock::{Clock, ManualClock, SystemClock};
pub use error::{IoError, Result};
pub use executor::{random_id, Executor, TaskHandle, Threads};
pub use fault::FaultFs;
pub use fs::{read_all, FileSystem, ReadableFile, WritableFile};
pub use histogram::{Histogram, HistogramSnapshot};
pub use local::LocalFs;
pub use memory::MemoryFs;
