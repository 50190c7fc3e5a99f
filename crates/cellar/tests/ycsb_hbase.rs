#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)] // drives real servers and JVMs in real time
//! YCSB's own harness (site.ycsb core from Maven Central, with the binding of
//! `compat/ycsb` on HBase's Java client) driving a Cellar server and a real HBase 2.6
//! standalone with the same workloads, threads and client.
//!
//! `ycsb_drives_a_cellar_server` runs in CI (small, Cellar only: the harness does not
//! rot). The comparison is opt-in:
//! `cargo test --release -p cellar --test ycsb_hbase -- --ignored --nocapture`
//! (CELLAR_YCSB_RECORDS, CELLAR_YCSB_OPERATIONS, CELLAR_YCSB_THREADS, CELLAR_YCSB_WORKLOADS
//! change the defaults 20000, 40000, 16, ABCDEF); it prints a Markdown table.

mod common;

use std::process::Command;

use cellar::client::{Connection, RemoteConnection};
use cellar_api::{FamilyDescriptor, TableDescriptor};
use common::compat::{java_classpath, need};
use common::hbase::HBase;
use common::server::ServerProcess;

const MODULE: &str = "the YCSB module (mvn -f compat/ycsb/pom.xml package)";

fn classpath() -> Option<String> {
    java_classpath("ycsb", "cellar/ycsb/HBaseTableClient.class")
}

/// YCSB's core workloads A–F as its workload files define them.
fn workload(letter: char) -> &'static [&'static str] {
    match letter {
        'A' => &["readproportion=0.5", "updateproportion=0.5"],
        'B' => &["readproportion=0.95", "updateproportion=0.05"],
        'C' => &["readproportion=1"],
        'D' => &[
            "readproportion=0.95",
            "insertproportion=0.05",
            "requestdistribution=latest",
        ],
        'E' => &[
            "scanproportion=0.95",
            "insertproportion=0.05",
            "maxscanlength=100",
            "scanlengthdistribution=uniform",
        ],
        _ => &["readproportion=0.5", "readmodifywriteproportion=0.5"],
    }
}

/// One YCSB phase's throughput and the operations that did not return OK.
struct Phase {
    ops_per_sec: f64,
    failed: u64,
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `site.ycsb.Client` (`-load` or `-t`) for workload `letter` on `table`.
#[allow(clippy::too_many_arguments)]
fn ycsb(
    cp: &str,
    load: bool,
    letter: char,
    table: &str,
    records: u64,
    operations: u64,
    threads: u64,
    connect: &[String],
) -> Phase {
    let mut c = Command::new("java");
    c.args(["-Xmx1g", "-cp", cp, "site.ycsb.Client"])
        .arg(if load { "-load" } else { "-t" })
        .args(["-db", "cellar.ycsb.HBaseTableClient"])
        .args(["-threads", &threads.to_string()]);
    let mut props = vec![
        "workload=site.ycsb.workloads.CoreWorkload".to_string(),
        format!("table={table}"),
        format!("recordcount={records}"),
        format!("operationcount={operations}"),
        "fieldcount=10".into(),
        "fieldlength=100".into(),
        "readallfields=true".into(),
        "requestdistribution=zipfian".into(),
        "columnfamily=f".into(),
    ];
    props.extend(workload(letter).iter().map(|s| s.to_string()));
    props.extend(connect.iter().cloned());
    for p in &props {
        c.args(["-p", p]);
    }
    let out = c.output().expect("run java");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "YCSB {letter} failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut phase = Phase {
        ops_per_sec: 0.0,
        failed: 0,
    };
    for line in stdout.lines() {
        let parts: Vec<&str> = line.split(", ").collect();
        match parts.as_slice() {
            ["[OVERALL]", "Throughput(ops/sec)", v] => phase.ops_per_sec = v.parse().unwrap(),
            [_, status, n] if status.starts_with("Return=") && *status != "Return=OK" => {
                phase.failed += n.parse::<u64>().unwrap_or(0);
            }
            _ => {}
        }
    }
    assert!(phase.ops_per_sec > 0.0, "no throughput in:\n{stdout}");
    phase
}

fn create(conn: &RemoteConnection, table: &str) {
    let t = TableDescriptor::new(table).with_family(FamilyDescriptor::new("f"));
    conn.admin().create_table(t, Vec::new()).unwrap();
}

fn cellar_registry(server: &ServerProcess) -> Vec<String> {
    vec![
        "hbase.client.registry.impl=org.apache.hadoop.hbase.client.RpcConnectionRegistry"
            .to_string(),
        format!("hbase.client.bootstrap.servers={}", server.addr),
    ]
}

/// A small load and run of workload A through YCSB against a Cellar server: every
/// operation returns OK.
#[test]
fn ycsb_drives_a_cellar_server() {
    let Some(cp) = classpath() else {
        need(false, MODULE);
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(dir.path());
    let conn = RemoteConnection::connect(&server.addr).unwrap();
    create(&conn, "usertable");
    let connect = cellar_registry(&server);
    let load = ycsb(&cp, true, 'A', "usertable", 1_000, 1_000, 4, &connect);
    let run = ycsb(&cp, false, 'A', "usertable", 1_000, 2_000, 4, &connect);
    assert_eq!((load.failed, run.failed), (0, 0));
    // The load wrote every record: a scan of the whole table counts 1,000 rows.
    let t = conn.table("usertable").unwrap();
    let rows = t.scan(&cellar_api::Scan::new()).unwrap().count();
    assert_eq!(rows, 1_000);
}

/// Cellar's server against HBase 2.6 standalone, YCSB A–F, the same client and threads.
#[test]
#[ignore = "minutes of load: cargo test --release -p cellar --test ycsb_hbase -- --ignored"]
fn ycsb_cellar_server_against_hbase_standalone() {
    let Some(cp) = classpath() else {
        need(false, MODULE);
        return;
    };
    let records = env_or("CELLAR_YCSB_RECORDS", 20_000);
    let operations = env_or("CELLAR_YCSB_OPERATIONS", 40_000);
    let threads = env_or("CELLAR_YCSB_THREADS", 16);
    let letters = std::env::var("CELLAR_YCSB_WORKLOADS").unwrap_or_else(|_| "ABCDEF".into());
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(dir.path());
    let cellar = RemoteConnection::connect(&server.addr).unwrap();
    let hbase = HBase::start();
    let hconn = hbase.connect();
    let targets: [(&str, &RemoteConnection, Vec<String>); 2] = [
        ("Cellar server", &cellar, cellar_registry(&server)),
        (
            "HBase 2.6.4 standalone",
            &hconn,
            vec![format!("hbase.zookeeper.quorum={}", hbase.quorum)],
        ),
    ];
    println!(
        "YCSB 0.17.0 core, {records} records x 10 x 100 B, {operations} operations, {threads} threads\n"
    );
    println!("| workload | Cellar load / run ops/s | HBase load / run ops/s | Cellar / HBase load | Cellar / HBase run |");
    println!("|---|---:|---:|---:|---:|");
    for letter in letters.chars() {
        let mut phases = Vec::new();
        for (_, conn, connect) in &targets {
            let table = format!("usertable_{letter}");
            create(conn, &table);
            let load = ycsb(
                &cp, true, letter, &table, records, records, threads, connect,
            );
            let run = ycsb(
                &cp, false, letter, &table, records, operations, threads, connect,
            );
            assert_eq!((load.failed, run.failed), (0, 0), "workload {letter}");
            phases.push((load, run));
        }
        let (c, h) = (&phases[0], &phases[1]);
        println!(
            "| {letter} | {:.0} / {:.0} | {:.0} / {:.0} | {:.2}x | {:.2}x |",
            c.0.ops_per_sec,
            c.1.ops_per_sec,
            h.0.ops_per_sec,
            h.1.ops_per_sec,
            c.0.ops_per_sec / h.0.ops_per_sec,
            c.1.ops_per_sec / h.1.ops_per_sec
        );
    }
}
