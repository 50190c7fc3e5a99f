#![allow(clippy::unwrap_used)]
// Drives real threads and waits for them.
#![allow(clippy::disallowed_methods)]
//! A roll of the log while other writers write: the next segment is created without
//! the log's lock, so writers are not held up by its creation, and every edit written
//! around the roll replays in order.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use cellar_io::{FaultFs, FileSystem, ReadableFile, WritableFile};
use cellar_types::Cell;
use cellar_wal::{Durability, Wal, WalEdit, WalOptions};

/// Where a gated `create` stands.
#[derive(Debug, Default)]
struct Gate {
    armed: bool,
    waiting: bool,
    released: bool,
}

/// A file system whose `create` waits, once armed, until the test lets it go.
#[derive(Clone, Debug)]
struct GateFs {
    inner: FaultFs,
    gate: Arc<(Mutex<Gate>, Condvar)>,
}

impl GateFs {
    fn arm(&self) {
        self.gate.0.lock().unwrap().armed = true;
    }

    fn wait_for_a_blocked_create(&self) {
        let (m, cv) = &*self.gate;
        let mut g = m.lock().unwrap();
        while !g.waiting {
            g = cv.wait(g).unwrap();
        }
    }

    fn release(&self) {
        let (m, cv) = &*self.gate;
        m.lock().unwrap().released = true;
        cv.notify_all();
    }
}

impl FileSystem for GateFs {
    fn create(&self, path: &Path) -> cellar_io::Result<Box<dyn WritableFile>> {
        let (m, cv) = &*self.gate;
        let mut g = m.lock().unwrap();
        if g.armed {
            g.waiting = true;
            cv.notify_all();
            while !g.released {
                g = cv.wait(g).unwrap();
            }
        }
        drop(g);
        self.inner.create(path)
    }
    fn open(&self, path: &Path) -> cellar_io::Result<Arc<dyn ReadableFile>> {
        self.inner.open(path)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn remove_file(&self, path: &Path) -> cellar_io::Result<()> {
        self.inner.remove_file(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> cellar_io::Result<()> {
        self.inner.rename(from, to)
    }
    fn create_dir_all(&self, path: &Path) -> cellar_io::Result<()> {
        self.inner.create_dir_all(path)
    }
    fn list_dir(&self, path: &Path) -> cellar_io::Result<Vec<PathBuf>> {
        self.inner.list_dir(path)
    }
    fn sync_dir(&self, path: &Path) -> cellar_io::Result<()> {
        self.inner.sync_dir(path)
    }
    fn file_len(&self, path: &Path) -> cellar_io::Result<u64> {
        self.inner.file_len(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        self.inner.is_dir(path)
    }
    fn remove_dir(&self, path: &Path) -> cellar_io::Result<()> {
        self.inner.remove_dir(path)
    }
    fn set_len(&self, path: &Path, len: u64) -> cellar_io::Result<()> {
        self.inner.set_len(path, len)
    }
}

fn put(seq: u64) -> WalEdit {
    WalEdit {
        region: "r".into(),
        seq_id: seq,
        write_time: 1000 + seq as i64,
        cells: vec![
            Cell::put(format!("row{seq:05}"), "f", "q", 1, vec![3u8; 200])
                .unwrap()
                .with_seq_id(seq),
        ],
    }
}

/// A log in `/db/wal` of `fs` rolling every `roll_size` bytes, shared by writer threads.
fn shared_log(fs: Arc<dyn FileSystem>, roll_size: u64) -> (Arc<Wal>, PathBuf, WalOptions) {
    let dir = PathBuf::from("/db/wal");
    let opts = WalOptions {
        roll_size,
        ..WalOptions::default()
    };
    let (wal, _) = Wal::open(fs, &dir, opts.clone(), &mut |_| Ok(())).unwrap();
    (Arc::new(wal), dir, opts)
}

fn replayed(fs: Arc<dyn FileSystem>, dir: &Path, opts: WalOptions) -> Vec<u64> {
    let mut seen = Vec::new();
    let (_wal, _) = Wal::open(fs, dir, opts, &mut |e| {
        seen.push(e.seq_id);
        Ok(())
    })
    .unwrap();
    seen
}

/// The writer whose edit fills the segment starts the next one; while that segment's
/// file is being created, another writer's SYNC_WAL and FSYNC_WAL edits go to the
/// current segment and return. Once the roll completes, the log has two segments and
/// every edit replays in order.
#[test]
fn writers_go_on_while_a_roll_creates_the_next_segment() {
    writers_go_on_while_rolled_by(Durability::SyncWal);
}

/// As above with the roll started by an FSYNC_WAL writer, the leader of a shared
/// fsync: the writers its fsync covered, and later ones, are not held by its roll.
#[test]
fn writers_go_on_while_an_fsync_leader_rolls() {
    writers_go_on_while_rolled_by(Durability::FsyncWal);
}

fn writers_go_on_while_rolled_by(roller_durability: Durability) {
    let fs = GateFs {
        inner: FaultFs::new(),
        gate: Arc::new((Mutex::new(Gate::default()), Condvar::new())),
    };
    let (wal, dir, opts) = shared_log(Arc::new(fs.clone()), 2_000);
    fs.arm();
    // Edits of about 260 bytes: the eighth crosses 2,000 and its writer rolls.
    let roller = {
        let wal = wal.clone();
        std::thread::spawn(move || {
            for seq in 1..=8 {
                wal.append(&put(seq), roller_durability).unwrap();
            }
        })
    };
    fs.wait_for_a_blocked_create();
    let (tx, rx) = mpsc::channel();
    {
        let wal = wal.clone();
        std::thread::spawn(move || {
            wal.append(&put(9), Durability::SyncWal).unwrap();
            wal.append(&put(10), Durability::FsyncWal).unwrap();
            let _ = tx.send(());
        });
    }
    // Writes wait for nothing but their own write-out and fsync: a roll holding the
    // log's lock through the creation would keep them here until the gate opens.
    let wrote = rx.recv_timeout(Duration::from_secs(20));
    fs.release();
    roller.join().unwrap();
    assert!(wrote.is_ok(), "writers were held up by the roll");
    assert_eq!(wal.stats().segments, 2, "{:?}", wal.stats());
    for seq in 11..=12 {
        wal.append(&put(seq), Durability::SyncWal).unwrap();
    }
    wal.close().unwrap();
    drop(wal);
    let seen = replayed(Arc::new(fs.inner.clone()), &dir, opts);
    assert_eq!(seen, (1..=12).collect::<Vec<_>>());
}

/// Four writers log FSYNC_WAL edits into segments of 1,500 bytes (a roll every few
/// edits, rolls racing each other and the writers) until a simulated power loss:
/// every edit acknowledged before it replays after it, in each writer's order.
#[test]
fn acknowledged_edits_survive_a_crash_among_rolls() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let fs = FaultFs::new();
    let (wal, dir, opts) = shared_log(Arc::new(fs.clone()), 1_500);
    let crashing = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicUsize::new(0));
    let writers: Vec<_> = (0..4u64)
        .map(|t| {
            let (wal, crashing, acked) = (wal.clone(), crashing.clone(), acked.clone());
            std::thread::spawn(move || {
                let mut mine = Vec::new();
                for i in 0..500u64 {
                    if crashing.load(Ordering::SeqCst) {
                        break;
                    }
                    let seq = t * 10_000 + i + 1;
                    if wal.append(&put(seq), Durability::FsyncWal).is_err() {
                        break;
                    }
                    // Returned before the crash began: it must survive it.
                    if !crashing.load(Ordering::SeqCst) {
                        mine.push(seq);
                        acked.fetch_add(1, Ordering::SeqCst);
                    }
                }
                mine
            })
        })
        .collect();
    while acked.load(Ordering::SeqCst) < 300 {
        std::thread::yield_now();
    }
    crashing.store(true, Ordering::SeqCst);
    fs.crash();
    let survived: Vec<Vec<u64>> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    drop(wal);
    let seen = replayed(Arc::new(fs.clone()), &dir, opts);
    for (t, mine) in survived.iter().enumerate() {
        let replayed_mine: Vec<u64> = seen
            .iter()
            .copied()
            .filter(|s| *s / 10_000 == t as u64)
            .collect();
        assert!(
            replayed_mine.windows(2).all(|w| w[0] < w[1]),
            "writer {t} out of order"
        );
        for seq in mine {
            assert!(replayed_mine.contains(seq), "acknowledged edit {seq} lost");
        }
    }
}
