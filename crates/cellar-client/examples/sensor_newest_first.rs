//! Tall sensor readings, newest first: one row per reading, keyed
//! `sensor#(Long.MAX_VALUE - timestamp)` so a forward scan of a sensor's prefix meets
//! the newest reading first; `limit` takes the latest N without reading the rest.
//!
//! Run against a server: `cellar server` in one terminal, then
//! `cargo run -p cellar-client --example sensor_newest_first [HOST:PORT]`.

use cellar_client::api::{FamilyDescriptor, Put, Scan, TableDescriptor};
use cellar_client::Connection;

fn reading_key(sensor: &str, ts: i64) -> Vec<u8> {
    let mut k = format!("{sensor}#").into_bytes();
    k.extend_from_slice(&(i64::MAX - ts).to_be_bytes());
    k
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:16020".into());
    let conn = Connection::connect(&addr).await?;
    let admin = conn.admin();
    if !admin.table_exists("sensor_readings").await? {
        let t = TableDescriptor::new("sensor_readings").with_family(FamilyDescriptor::new("r"));
        // Pre-split by sensor so sensors spread over regions.
        admin
            .create_table(t, vec![b"dev-4".to_vec(), b"dev-8".to_vec()])
            .await?;
    }
    let table = conn.table("sensor_readings");
    let start = 1_700_000_000_000i64;
    for minute in 0..120 {
        let ts = start + minute * 60_000;
        table
            .put(Put::new(reading_key("dev-5", ts)).add_column(
                "r",
                "temp",
                format!("{:.1}", 20.0 + minute as f64 / 10.0),
            ))
            .await?;
    }
    // The latest ten readings of dev-5: a prefix scan, newest first, ten rows.
    let latest = table
        .scan(
            &Scan::new()
                .with_row_prefix(b"dev-5#".to_vec())
                .limit(10)
                .caching(10),
        )
        .collect()
        .await?;
    for r in &latest {
        let ts = i64::MAX - i64::from_be_bytes(r.row[6..14].try_into()?);
        let temp = String::from_utf8_lossy(r.value(b"r", b"temp").unwrap_or_default()).into_owned();
        println!("{ts} {temp}");
    }
    assert_eq!(latest.len(), 10);
    Ok(())
}
