//! Open scanners of a server, by id, each with a lease: a scanner not used for
//! `hbase.client.scanner.timeout.period` is closed (the next call for it gets
//! UnknownScannerException), and so are a connection's scanners when it goes away.
//! Each scanner remembers the `next_call_seq` it expects, so a repeated or skipped call
//! is refused with OutOfOrderScannerNextException instead of losing or repeating rows.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use cellar_api::{Error, ErrorKind, RowResult, Scan};
use cellar_io::Clock;
use cellar_region::{Region, RegionScanner};

/// Where a scanner's rows come from.
pub enum Source {
    Region {
        scanner: Box<RegionScanner>,
        region: Arc<Region>,
    },
    /// `hbase:meta` rows, built when the scanner opened.
    Meta(VecDeque<RowResult>),
}

pub struct OpenScanner {
    pub source: Source,
    pub scan: Scan,
    /// The `next_call_seq` the next call must carry.
    pub next_seq: u64,
    /// Complete rows returned so far, and the client's `limit_of_rows` (0 = none).
    pub rows: u64,
    pub limit_of_rows: u64,
    /// Whether the client stitches partial rows (and so may be sent some).
    pub client_handles_partials: bool,
    last_used: Duration,
}

impl OpenScanner {
    /// Renews the lease at the end of a call.
    pub fn touch(&mut self, now: Duration) {
        self.last_used = now;
    }
}

/// A registered scanner: the connection that opened it, and the scanner.
type Entry = (u64, Arc<Mutex<OpenScanner>>);

pub struct Scanners {
    clock: Arc<dyn Clock>,
    timeout: Duration,
    next_id: AtomicU64,
    /// Scanner id → (the connection that opened it, the scanner). Lock order: a
    /// scanner's lock may be held while the map is taken, never the other way round
    /// (the map only try-locks scanners), so a call closing its own scanner and a
    /// connection closing all of its scanners cannot deadlock.
    open: Mutex<HashMap<u64, Entry>>,
}

pub fn lock(s: &Mutex<OpenScanner>) -> MutexGuard<'_, OpenScanner> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

fn unknown(id: u64, why: &str) -> Error {
    Error::new(
        ErrorKind::UnknownScanner,
        format!("Unknown scanner '{id}'. {why}"),
    )
}

impl Scanners {
    pub fn new(clock: Arc<dyn Clock>, timeout_ms: u64) -> Scanners {
        let base = (clock.now_millis().max(0) as u64 & 0xffff_ffff) << 20;
        Scanners {
            clock,
            timeout: Duration::from_millis(timeout_ms),
            next_id: AtomicU64::new(base.max(1)),
            open: Mutex::new(HashMap::new()),
        }
    }

    fn map(&self) -> MutexGuard<'_, HashMap<u64, Entry>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The lease period, as a scan response's `ttl`.
    pub fn ttl_ms(&self) -> u32 {
        self.timeout.as_millis().min(u32::MAX as u128) as u32
    }

    /// Registers a scanner for connection `owner`; returns its id.
    pub fn open(
        &self,
        source: Source,
        scan: Scan,
        limit_of_rows: u64,
        client_handles_partials: bool,
        owner: u64,
    ) -> (u64, Arc<Mutex<OpenScanner>>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let s = Arc::new(Mutex::new(OpenScanner {
            source,
            scan,
            next_seq: 0,
            rows: 0,
            limit_of_rows,
            client_handles_partials,
            last_used: self.clock.monotonic(),
        }));
        self.map().insert(id, (owner, s.clone()));
        (id, s)
    }

    /// A scanner by id, its lease renewed; expired ones are closed here.
    pub fn get(&self, id: u64) -> Result<Arc<Mutex<OpenScanner>>, Error> {
        let s = self.map().get(&id).map(|(_, s)| s.clone()).ok_or_else(|| {
            unknown(
                id,
                "The id is wrong, its lease expired, or the server restarted.",
            )
        })?;
        let now = self.clock.monotonic();
        let mut g = lock(&s);
        if now.saturating_sub(g.last_used) > self.timeout {
            drop(g);
            self.map().remove(&id);
            return Err(unknown(id, "Its lease expired."));
        }
        g.last_used = now;
        drop(g);
        Ok(s)
    }

    pub fn close(&self, id: u64) -> bool {
        self.map().remove(&id).is_some()
    }

    /// Closes every scanner a connection opened.
    pub fn close_owned_by(&self, owner: u64) -> usize {
        let mut map = self.map();
        let before = map.len();
        map.retain(|_, (o, _)| *o != owner);
        before - map.len()
    }

    /// Closes scanners whose lease expired; returns how many.
    pub fn reap(&self) -> usize {
        let now = self.clock.monotonic();
        let mut map = self.map();
        let before = map.len();
        map.retain(|_, (_, s)| match s.try_lock() {
            Ok(g) => now.saturating_sub(g.last_used) <= self.timeout,
            // In use right now: not idle.
            Err(_) => true,
        });
        before - map.len()
    }

    pub fn now(&self) -> Duration {
        self.clock.monotonic()
    }

    pub fn count(&self) -> usize {
        self.map().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scanners() -> Scanners {
        Scanners::new(
            Arc::new(cellar_io::ManualClock::new(1_700_000_000_000)),
            1000,
        )
    }

    #[test]
    fn a_connection_closes_its_scanners_while_one_is_in_use() {
        let s = scanners();
        let (id, handle) = s.open(Source::Meta(VecDeque::new()), Scan::new(), 0, false, 7);
        let _other = s.open(Source::Meta(VecDeque::new()), Scan::new(), 0, false, 8);
        // A call holds its scanner (and may close it) while the connection goes away:
        // closing by owner must not wait for the scanner's lock.
        let in_use = lock(&handle);
        assert_eq!(s.close_owned_by(7), 1);
        assert!(!s.close(id), "already gone");
        drop(in_use);
        assert_eq!(s.count(), 1);
        assert!(s.get(id).is_err());
    }
}
