#![allow(clippy::unwrap_used, clippy::disallowed_methods)] // drives server, ZooKeeper and client processes
//! Real HBase clients against a real `cellar server`: HBase's official Java client
//! (hbase-shaded-client 2.6, the Maven module in `compat/java`) through the RPC
//! connection registry and through ZooKeeper, and hbase-driver (PyPI) through
//! ZooKeeper. Each client program checks behaviour itself and exits non-zero on the
//! first difference from HBase.
//!
//! The programs are built by `.ci/run` (which sets CELLAR_REQUIRE_COMPAT=1, so a
//! missing one fails the test); elsewhere a test whose client is not built says so and
//! passes.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::server::ServerProcess;
use common::zookeeper::ZooKeeper;

use common::compat::{need, root};

fn java_classpath() -> Option<String> {
    common::compat::java_classpath("java", "cellar/compat/ClientCheck.class")
}

fn python() -> Option<PathBuf> {
    let p = std::env::var_os("CELLAR_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("compat/python/.venv/bin/python"));
    p.exists().then_some(p)
}

fn run(mut cmd: Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("ALL OK"),
        "{what} failed ({}):\n--- stdout\n{stdout}\n--- stderr (tail)\n{}",
        out.status,
        stderr
            .lines()
            .rev()
            .take(60)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

fn java(cp: &str, mode: &str, target: &str) -> Command {
    let mut c = Command::new("java");
    c.args([
        "-Xmx512m",
        "-cp",
        cp,
        "cellar.compat.ClientCheck",
        mode,
        target,
    ]);
    c
}

const JAVA_MODULE: &str = "the Java client module (mvn -f compat/java/pom.xml package)";
const ZOOKEEPER: &str = "ZooKeeper (Debian package zookeeper)";

/// A server registered in a fresh ZooKeeper, when ZooKeeper is installed.
fn server_with_zookeeper() -> Option<(ZooKeeper, ServerProcess, tempfile::TempDir)> {
    if !need(ZooKeeper::available(), ZOOKEEPER) {
        return None;
    }
    let zk = ZooKeeper::start();
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start_with(dir.path(), &["--zookeeper", &zk.quorum]);
    Some((zk, server, dir))
}

#[test]
fn java_client_through_the_rpc_registry() {
    let Some(cp) = java_classpath() else {
        need(false, JAVA_MODULE);
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(dir.path());
    run(
        java(&cp, "registry", &server.addr),
        "HBase's Java client (RpcConnectionRegistry)",
    );
    assert_eq!(server.stop(), Some(0));
}

#[test]
fn java_client_through_zookeeper() {
    let Some(cp) = java_classpath() else {
        need(false, JAVA_MODULE);
        return;
    };
    let Some((zk, server, _dir)) = server_with_zookeeper() else {
        return;
    };
    run(
        java(&cp, "zookeeper", &zk.quorum),
        "HBase's Java client (ZooKeeper)",
    );
    assert_eq!(server.stop(), Some(0));
}

#[test]
fn hbase_driver_through_zookeeper() {
    let Some(py) = python() else {
        need(
            false,
            "a Python with hbase-driver (compat/python/.venv or CELLAR_PYTHON)",
        );
        return;
    };
    let Some((zk, server, _dir)) = server_with_zookeeper() else {
        return;
    };
    let mut cmd = Command::new(py);
    cmd.arg(root().join("compat/python/hbase_driver_check.py"))
        .arg(&zk.quorum);
    run(cmd, "hbase-driver");
    assert_eq!(server.stop(), Some(0));
}
