//! Open scanners of both Thrift services, by id. Ids are the gateway's, not a
//! connection's: a client may open a scanner on one pooled connection and read it on
//! another, as with HBase's gateway. A scanner unused for the scanner timeout
//! (`hbase.client.scanner.timeout.period`) is closed and its id forgotten; a call
//! holds its scanner out of the table while it reads, so a lease cannot expire under it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::client::ResultScanner;

/// One open scanner.
pub struct OpenScanner {
    pub scanner: Box<dyn ResultScanner>,
    /// Thrift1's `sortColumns`: answer `sortedColumns` instead of the `columns` map.
    pub sort_columns: bool,
}

struct Entry {
    open: OpenScanner,
    last_used: Instant,
}

/// The gateway's open scanners.
pub struct Scanners {
    timeout: Duration,
    inner: Mutex<Inner>,
}

struct Inner {
    next: i32,
    open: HashMap<i32, Entry>,
}

// Leases run on the gateway's wall clock: the gateway is a network service, not
// engine code driven by a simulated clock.
#[allow(clippy::disallowed_methods)]
fn now() -> Instant {
    Instant::now()
}

impl Scanners {
    pub fn new(timeout: Duration) -> Scanners {
        Scanners {
            timeout,
            inner: Mutex::new(Inner {
                next: 1,
                open: HashMap::new(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Closes scanners idle past the timeout; how many.
    pub fn expire(&self) -> usize {
        let now = now();
        let mut g = self.lock();
        let before = g.open.len();
        let timeout = self.timeout;
        g.open
            .retain(|_, e| now.saturating_duration_since(e.last_used) < timeout);
        before - g.open.len()
    }

    /// Registers a scanner; its id.
    pub fn add(&self, open: OpenScanner) -> i32 {
        self.expire();
        let mut g = self.lock();
        let mut id = g.next;
        while id <= 0 || g.open.contains_key(&id) {
            id = id.wrapping_add(1);
            if id <= 0 {
                id = 1;
            }
        }
        g.next = id.wrapping_add(1);
        g.open.insert(
            id,
            Entry {
                open,
                last_used: now(),
            },
        );
        id
    }

    /// Takes scanner `id` out for one call; `None` when unknown or expired.
    pub fn take(&self, id: i32) -> Option<OpenScanner> {
        self.expire();
        self.lock().open.remove(&id).map(|e| e.open)
    }

    /// Returns a scanner after a call, renewing its lease.
    pub fn put_back(&self, id: i32, open: OpenScanner) {
        self.lock().open.insert(
            id,
            Entry {
                open,
                last_used: now(),
            },
        );
    }

    /// Closes scanner `id`; whether it was open.
    pub fn close(&self, id: i32) -> bool {
        self.expire();
        self.lock().open.remove(&id).is_some()
    }

    /// Scanners open now.
    pub fn len(&self) -> usize {
        self.lock().open.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty() -> OpenScanner {
        OpenScanner {
            scanner: Box::new(std::iter::empty()),
            sort_columns: false,
        }
    }

    #[test]
    fn ids_are_unique_and_leases_expire() {
        let s = Scanners::new(Duration::from_millis(50));
        let a = s.add(empty());
        let b = s.add(empty());
        assert_ne!(a, b);
        let open = s.take(a).unwrap();
        assert!(
            s.take(a).is_none(),
            "a taken scanner is not handed out twice"
        );
        s.put_back(a, open);
        assert!(s.close(b));
        assert!(!s.close(b));
        #[allow(clippy::disallowed_methods)]
        std::thread::sleep(Duration::from_millis(80));
        assert_eq!(s.expire(), 1);
        assert!(s.take(a).is_none());
        assert!(s.is_empty());
    }
}
