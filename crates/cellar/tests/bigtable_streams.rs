#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The gateway's ReadRows streams read through a client-side chunk merger (the one
//! Google's published conformance cases check, `cellar_bigtable::chunk::ChunkReader`):
//! cells several chunks long, many rows across responses, reversed reads, row limits,
//! filters that leave long runs of rows out (`last_scanned_row_key`), request
//! statistics, and the errors Bigtable gives for bad requests.

mod common;

use cellar_bigtable::admin;
use cellar_bigtable::chunk::{ChunkReader, Row};
use cellar_bigtable::stubs::bigtable_client::BigtableClient;
use cellar_bigtable::stubs::bigtable_table_admin_client::BigtableTableAdminClient;
use cellar_bigtable::v2::{self, mutation, read_rows_request::RequestStatsView, row_filter};
use common::server::ServerProcess;
use tonic::transport::Channel;

const TABLE: &str = "projects/p/instances/streams/tables/t";

fn set(f: &str, q: &str, ts: i64, v: Vec<u8>) -> v2::Mutation {
    v2::Mutation {
        mutation: Some(mutation::Mutation::SetCell(mutation::SetCell {
            family_name: f.into(),
            column_qualifier: q.as_bytes().to_vec(),
            timestamp_micros: ts,
            value: v,
        })),
    }
}

/// Reads through the chunk merger: the rows, how many responses came, the last scanned
/// keys and the statistics.
async fn read(
    c: &mut BigtableClient<Channel>,
    req: v2::ReadRowsRequest,
) -> Result<(Vec<Row>, usize, Vec<Vec<u8>>, Option<v2::RequestStats>), tonic::Status> {
    let reversed = req.reversed;
    let mut stream = c.read_rows(req).await?.into_inner();
    let mut reader = ChunkReader::new(reversed);
    let (mut rows, mut responses, mut scanned, mut stats) = (Vec::new(), 0, Vec::new(), None);
    while let Some(resp) = stream.message().await? {
        responses += 1;
        if !resp.last_scanned_row_key.is_empty() {
            scanned.push(resp.last_scanned_row_key.clone());
        }
        if resp.request_stats.is_some() {
            stats = resp.request_stats;
        }
        for chunk in &resp.chunks {
            if let Some(row) = reader.push(chunk).expect("a valid chunk stream") {
                rows.push(row);
            }
        }
    }
    reader.finish().expect("the stream ends between rows");
    Ok((rows, responses, scanned, stats))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_rows_streams_merge_as_clients_merge_them() {
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start_with(dir.path(), &["--bigtable", "--bigtable-port", "0"]);
    let url = format!("http://{}", server.bigtable.clone().unwrap());
    let channel = Channel::from_shared(url).unwrap().connect().await.unwrap();
    let mut admin_client = BigtableTableAdminClient::new(channel.clone());
    let mut families = std::collections::HashMap::new();
    families.insert("f".to_string(), admin::ColumnFamily::default());
    admin_client
        .create_table(admin::CreateTableRequest {
            parent: "projects/p/instances/streams".into(),
            table_id: "t".into(),
            table: Some(admin::Table {
                column_families: families,
                ..Default::default()
            }),
            initial_splits: vec![admin::create_table_request::Split {
                key: b"r05".to_vec(),
            }],
        })
        .await
        .unwrap();
    let mut c = BigtableClient::new(channel)
        .max_decoding_message_size(64 << 20)
        .max_encoding_message_size(64 << 20);
    // 1,500 small rows, then rows with cells of 2.5 MiB (three chunks each).
    let entries: Vec<v2::mutate_rows_request::Entry> = (0..1500)
        .map(|i| v2::mutate_rows_request::Entry {
            row_key: format!("a{i:05}").into_bytes(),
            mutations: vec![set("f", "q", 1_000_000, vec![b'x'; 10])],
            ..Default::default()
        })
        .collect();
    let statuses = c
        .mutate_rows(v2::MutateRowsRequest {
            table_name: TABLE.into(),
            entries,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .message()
        .await
        .unwrap()
        .unwrap();
    assert!(statuses
        .entries
        .iter()
        .all(|e| e.status.as_ref().is_some_and(|s| s.code == 0)));
    let big: Vec<u8> = (0..(5 << 19)).map(|i| (i % 251) as u8).collect();
    for i in 0..10 {
        c.mutate_row(v2::MutateRowRequest {
            table_name: TABLE.into(),
            row_key: format!("r{i:02}").into_bytes(),
            mutations: vec![
                set("f", "big", 2_000_000, big.clone()),
                set("f", "big", 1_000_000, b"old".to_vec()),
                set("f", "small", -1, b"now".to_vec()),
            ],
            ..Default::default()
        })
        .await
        .unwrap();
    }

    // Everything: every cell, every version, in order; the big rows over several responses.
    let (rows, responses, _, _) = read(
        &mut c,
        v2::ReadRowsRequest {
            table_name: TABLE.into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(rows.len(), 1510);
    assert!(
        responses >= 10,
        "whole rows, each big one its own response: {responses}"
    );
    let r3 = rows.iter().find(|r| r.key == b"r03").unwrap();
    assert_eq!(r3.cells.len(), 3);
    assert_eq!(r3.cells[0].value, big, "a cell of three chunks merges back");
    assert_eq!(r3.cells[0].timestamp_micros, 2_000_000);
    assert_eq!(r3.cells[1].value, b"old");
    assert_eq!(
        r3.cells[2].timestamp_micros % 1000,
        0,
        "server time at millisecond granularity"
    );

    // Reversed, with a limit and a row set that overlaps itself.
    let rows_set = v2::RowSet {
        row_keys: vec![b"r07".to_vec(), b"a00003".to_vec()],
        row_ranges: vec![v2::RowRange {
            start_key: Some(v2::row_range::StartKey::StartKeyClosed(b"r02".to_vec())),
            end_key: Some(v2::row_range::EndKey::EndKeyOpen(b"r08".to_vec())),
        }],
    };
    let (rows, _, _, _) = read(
        &mut c,
        v2::ReadRowsRequest {
            table_name: TABLE.into(),
            rows: Some(rows_set),
            reversed: true,
            rows_limit: 4,
            filter: Some(v2::RowFilter {
                filter: Some(row_filter::Filter::ColumnQualifierRegexFilter(
                    b"small".to_vec(),
                )),
            }),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let keys: Vec<&[u8]> = rows.iter().map(|r| r.key.as_slice()).collect();
    assert_eq!(keys, [&b"r07"[..], b"r06", b"r05", b"r04"]);

    // A filter leaving the small rows out: the client hears how far the scan got.
    let (rows, _, scanned, stats) = read(
        &mut c,
        v2::ReadRowsRequest {
            table_name: TABLE.into(),
            filter: Some(v2::RowFilter {
                filter: Some(row_filter::Filter::ColumnQualifierRegexFilter(
                    b"big".to_vec(),
                )),
            }),
            request_stats_view: RequestStatsView::RequestStatsFull as i32,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(rows.len(), 10);
    assert_eq!(scanned, vec![b"a00999".to_vec()]);
    let Some(v2::request_stats::StatsView::FullReadStatsView(full)) =
        stats.and_then(|s| s.stats_view)
    else {
        panic!("no statistics")
    };
    let it = full.read_iteration_stats.unwrap();
    assert_eq!((it.rows_seen_count, it.rows_returned_count), (1510, 10));
    assert_eq!(it.cells_returned_count, 20);

    // Bad requests: Bigtable's status codes.
    let bad = read(
        &mut c,
        v2::ReadRowsRequest {
            table_name: TABLE.into(),
            filter: Some(v2::RowFilter {
                filter: Some(row_filter::Filter::ValueRegexFilter(b"(".to_vec())),
            }),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(bad.unwrap_err().code(), tonic::Code::InvalidArgument);
    let missing = read(
        &mut c,
        v2::ReadRowsRequest {
            table_name: "projects/p/instances/streams/tables/nope".into(),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(missing.unwrap_err().code(), tonic::Code::NotFound);
    let e = c
        .mutate_row(v2::MutateRowRequest {
            table_name: TABLE.into(),
            row_key: b"x".to_vec(),
            mutations: vec![set("f", "q", 1_500, b"v".to_vec())],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{}", e.message());
    let e = c
        .mutate_row(v2::MutateRowRequest {
            table_name: "not a name".into(),
            row_key: b"x".to_vec(),
            mutations: vec![set("f", "q", -1, b"v".to_vec())],
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    drop(c);
    assert_eq!(server.stop(), Some(0));
}
