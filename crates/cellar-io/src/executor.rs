//! Where the engine's background work runs: an [`Executor`] starts named tasks (the WAL
//! flusher, the maintenance loop). Engine code spawns only through one (`clippy.toml`
//! bans `std::thread::spawn` elsewhere), so a test or a host can run that work its own
//! way.

use std::fmt::Debug;
use std::thread::JoinHandle;

/// A random 64-bit id (from the operating system's hash seeds), for names that must be
/// unique across processes and restarts.
pub fn random_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0x6365_6c6c_6172);
    h.finish()
}

/// A started task; `join` waits for it to end.
#[derive(Debug)]
pub struct TaskHandle(JoinHandle<()>);

impl TaskHandle {
    /// Waits for the task; false when it panicked.
    pub fn join(self) -> bool {
        self.0.join().is_ok()
    }

    pub fn is_finished(&self) -> bool {
        self.0.is_finished()
    }
}

/// Starts background tasks.
pub trait Executor: Send + Sync + Debug {
    /// Starts `task` under `name`; an error when the system refuses a new task.
    fn spawn(&self, name: &str, task: Box<dyn FnOnce() + Send>) -> std::io::Result<TaskHandle>;
}

/// One operating-system thread per task.
#[derive(Debug, Default, Clone, Copy)]
pub struct Threads;

// The one place the engine's tasks meet the operating system's threads.
#[allow(clippy::disallowed_methods)]
impl Executor for Threads {
    fn spawn(&self, name: &str, task: Box<dyn FnOnce() + Send>) -> std::io::Result<TaskHandle> {
        std::thread::Builder::new()
            .name(name.to_string())
            .spawn(task)
            .map(TaskHandle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    #[test]
    fn random_ids_differ() {
        let ids: std::collections::HashSet<u64> = (0..1000).map(|_| random_id()).collect();
        assert_eq!(ids.len(), 1000);
    }

    #[test]
    fn threads_run_tasks_and_report_panics() {
        let ran = Arc::new(AtomicBool::new(false));
        let r = ran.clone();
        let h = Threads
            .spawn("t", Box::new(move || r.store(true, Ordering::SeqCst)))
            .unwrap();
        assert!(h.join());
        assert!(ran.load(Ordering::SeqCst));
        let h = Threads.spawn("p", Box::new(|| panic!("boom"))).unwrap();
        assert!(!h.join());
    }
}
