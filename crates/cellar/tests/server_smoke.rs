#![allow(clippy::unwrap_used, clippy::disallowed_methods)] // drives a server process from real threads
mod common;

use cellar_api::{FamilyDescriptor, Get, Put, Scan, TableDescriptor};
use cellar_client::Connection;
use common::server::ServerProcess;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn put_get_scan_over_the_wire() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(dir.path());
    let conn = Connection::connect(&server.addr).await.unwrap();
    let admin = conn.admin();
    admin
        .create_table(
            TableDescriptor::new("t").with_family(FamilyDescriptor::new("f")),
            vec![b"m".to_vec()],
        )
        .await
        .unwrap();
    let t = conn.table("t");
    for r in ["a", "k", "m", "z"] {
        t.put(Put::new(r).add_column("f", "q", format!("v-{r}")))
            .await
            .unwrap();
    }
    let got = t.get(&Get::new("k")).await.unwrap();
    assert_eq!(got.value(b"f", b"q"), Some(&b"v-k"[..]));
    let rows = t.scan(&Scan::new()).collect().await.unwrap();
    let keys: Vec<_> = rows
        .iter()
        .map(|r| String::from_utf8_lossy(&r.row).into_owned())
        .collect();
    assert_eq!(keys, ["a", "k", "m", "z"]);
    let rev = t.scan(&Scan::new().reversed(true)).collect().await.unwrap();
    let keys: Vec<_> = rev
        .iter()
        .map(|r| String::from_utf8_lossy(&r.row).into_owned())
        .collect();
    assert_eq!(keys, ["z", "m", "k", "a"]);
    assert_eq!(server.stop(), Some(0));
}
