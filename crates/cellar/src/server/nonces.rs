//! Nonces of recent Increments and Appends (HBase's `ServerNonceManager`): a client
//! that retries one after a lost response sends the same (nonce group, nonce), and
//! gets the first attempt's result instead of applying it twice. Entries are kept for
//! `NONCE_TTL` and at most `MAX_NONCES` of them.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cellar_api::RowResult;
use cellar_io::Clock;
use cellar_protocol::convert::Nonce;

/// How long a nonce is remembered (HBase: `hbase.server.hashNonce.ttl`-like, 6 min).
const NONCE_TTL: Duration = Duration::from_secs(360);
const MAX_NONCES: usize = 100_000;

pub struct Nonces {
    clock: Arc<dyn Clock>,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    done: HashMap<Nonce, RowResult>,
    order: VecDeque<(Duration, Nonce)>,
}

impl Nonces {
    pub fn new(clock: Arc<dyn Clock>) -> Nonces {
        Nonces {
            clock,
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The result of an operation already applied under `nonce`.
    pub fn done(&self, nonce: Nonce) -> Option<RowResult> {
        self.lock().done.get(&nonce).cloned()
    }

    /// Records an applied operation.
    pub fn record(&self, nonce: Nonce, result: &RowResult) {
        let now = self.clock.monotonic();
        let mut inner = self.lock();
        while let Some(&(at, old)) = inner.order.front() {
            if now.saturating_sub(at) < NONCE_TTL && inner.order.len() < MAX_NONCES {
                break;
            }
            inner.order.pop_front();
            inner.done.remove(&old);
        }
        if inner.done.insert(nonce, result.clone()).is_none() {
            inner.order.push_back((now, nonce));
        }
    }
}
