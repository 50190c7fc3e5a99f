//! Paging through a wide row (an inbox: one row per user, one column per message) two
//! ways: a scan with `batch` returns the row in fixed-size pieces, and a
//! `ColumnPaginationFilter` with a column cursor fetches one page per Get, each starting
//! after the last column of the previous one.
//!
//! `cargo run -p cellar-client --example wide_row_paging [HOST:PORT]` with a server
//! running.

use cellar_client::api::{FamilyDescriptor, FilterSpec, Get, Put, Scan, TableDescriptor};
use cellar_client::Connection;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:16020".into());
    let conn = Connection::connect(&addr).await?;
    let admin = conn.admin();
    if !admin.table_exists("inbox").await? {
        admin
            .create_table(
                TableDescriptor::new("inbox").with_family(FamilyDescriptor::new("m")),
                vec![],
            )
            .await?;
    }
    let table = conn.table("inbox");
    let mut inbox = Put::new("user-42");
    for i in 0..1000 {
        inbox = inbox.add_column("m", format!("msg{i:05}"), format!("message {i}"));
    }
    table.put(inbox).await?;

    // 1. A scan of the row with batch = 100: ten Results of 100 cells.
    let only = Scan::new()
        .with_start_row("user-42", true)
        .with_stop_row("user-42", true);
    let pieces = table.scan(&only.batch(100)).collect().await?;
    println!(
        "batch: {} pieces of {} cells",
        pieces.len(),
        pieces[0].cells.len()
    );

    // 2. Pages of 50 columns with a cursor: each page starts at the column after the
    //    last one seen (the smallest qualifier greater than it: append a 0 byte).
    let mut cursor: Option<Vec<u8>> = None;
    let mut pages = 0;
    loop {
        let page = FilterSpec::ColumnPagination {
            limit: 50,
            offset: 0,
            column_offset: Some(cursor.clone().unwrap_or_default()),
        };
        let r = table.get(&Get::new("user-42").filter(page)).await?;
        let Some(last) = r.cells.last() else { break };
        pages += 1;
        let mut next = last.qualifier().to_vec();
        next.push(0);
        cursor = Some(next);
    }
    println!("cursor: {pages} pages of 50");
    assert_eq!(pages, 20);
    Ok(())
}
