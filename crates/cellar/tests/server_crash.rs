#![allow(clippy::unwrap_used, clippy::disallowed_methods)] // kills and restarts a server process in real time
//! Durability over the network: clients write with SYNC_WAL while the server is killed
//! with SIGKILL and restarted, round after round; every write the server acknowledged
//! is there afterwards (recovered from the WAL), whatever was in flight when it died.
//! `CELLAR_SERVER_CRASH_ROUNDS` sets the number of rounds (default 4).

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cellar_api::{Durability, FamilyDescriptor, Get, Put, Scan, TableDescriptor};
use cellar_client::{ClientConfig, Connection};
use common::server::ServerProcess;

fn cfg() -> ClientConfig {
    ClientConfig {
        retries: 0,
        rpc_timeout: Duration::from_secs(5),
        ..ClientConfig::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn acknowledged_writes_survive_kill_9() {
    let rounds: usize = std::env::var("CELLAR_SERVER_CRASH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let acked: Arc<Mutex<BTreeMap<String, String>>> = Arc::default();
    let mut server = ServerProcess::start(&dir);
    {
        let conn = Connection::connect(&server.addr).await.unwrap();
        conn.admin()
            .create_table(
                TableDescriptor::new("t").with_family(FamilyDescriptor::new("f")),
                vec![b"w1".to_vec(), b"w2".to_vec()],
            )
            .await
            .unwrap();
    }
    for round in 0..rounds {
        let conn = Connection::connect_with(&server.addr, cfg()).await.unwrap();
        let mut writers = Vec::new();
        for w in 0..3 {
            let t = conn.table("t");
            let acked = acked.clone();
            writers.push(tokio::spawn(async move {
                for i in 0.. {
                    let row = format!("w{w}-{round:02}-{i:06}");
                    let value = format!("{round}/{i}");
                    let put = Put::new(row.clone())
                        .add_column("f", "q", value.clone())
                        .durability(Durability::SyncWal);
                    match t.put(put).await {
                        Ok(()) => {
                            acked.lock().unwrap().insert(row, value);
                        }
                        // The server died under the call: it may or may not have it.
                        Err(_) => break,
                    }
                }
            }));
        }
        tokio::time::sleep(Duration::from_millis(300 + 150 * (round as u64 % 4))).await;
        server.kill();
        for w in writers {
            w.await.unwrap();
        }
        server = ServerProcess::start(&dir);
        let conn = Connection::connect(&server.addr).await.unwrap();
        let t = conn.table("t");
        let all = t.scan(&Scan::new()).collect().await.unwrap();
        let found: BTreeMap<String, String> = all
            .iter()
            .map(|r| {
                (
                    String::from_utf8_lossy(&r.row).into_owned(),
                    String::from_utf8_lossy(r.value(b"f", b"q").unwrap_or_default()).into_owned(),
                )
            })
            .collect();
        let want = acked.lock().unwrap().clone();
        assert!(!want.is_empty(), "round {round} acknowledged no writes");
        for (row, value) in &want {
            assert_eq!(
                found.get(row),
                Some(value),
                "round {round}: acknowledged {row} lost"
            );
        }
        let sample = want.keys().next_back().unwrap();
        assert!(!t.get(&Get::new(sample.as_str())).await.unwrap().is_empty());
    }
    assert_eq!(server.stop(), Some(0));
}
