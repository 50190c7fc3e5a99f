//! Bucketed wide rows: one row per sensor per day (`sensor#yyyymmdd`), one column per
//! reading named by its time of day (`HHMMSS`), so a day is one row and an hour of it is
//! a `ColumnRangeFilter` over `[HH0000, HH+10000)` — read without touching the rest of
//! the row.
//!
//! `cargo run -p cellar-client --example bucketed_wide_rows [HOST:PORT]` with a server
//! running.

use cellar_client::api::{FamilyDescriptor, FilterSpec, Get, Put, TableDescriptor};
use cellar_client::Connection;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:16020".into());
    let conn = Connection::connect(&addr).await?;
    let admin = conn.admin();
    if !admin.table_exists("sensor_days").await? {
        admin
            .create_table(
                TableDescriptor::new("sensor_days").with_family(FamilyDescriptor::new("r")),
                vec![],
            )
            .await?;
    }
    let table = conn.table("sensor_days");
    let row = "dev-7#20261201";
    let mut day = Put::new(row);
    for minute in 0..(24 * 60) {
        let q = format!("{:02}{:02}00", minute / 60, minute % 60);
        day = day.add_column("r", q, format!("{}", 15 + minute % 10));
    }
    table.put(day).await?;
    // 14:00 to 15:00 of that day: sixty columns of one row.
    let hour = FilterSpec::ColumnRange {
        min: Some(b"140000".to_vec()),
        min_inclusive: true,
        max: Some(b"150000".to_vec()),
        max_inclusive: false,
    };
    let r = table.get(&Get::new(row).filter(hour)).await?;
    println!("{} readings between 14:00 and 15:00", r.cells.len());
    assert_eq!(r.cells.len(), 60);
    Ok(())
}
