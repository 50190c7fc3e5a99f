#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)] // drives real processes
//! HBase's own Thrift gateway (hbase-thrift from Maven Central, on the real HBase of
//! the oracle) as the reference for Cellar's: the same happybase session
//! (`compat/python/thrift_tests/session.py`) through HBase's Thrift1 gateway and
//! through `cellar server --thrift`, and the same Thrift2 session through HBase's
//! thrift2 gateway and `cellar thrift --thrift2 --connect`, print the same
//! (server-assigned timestamps normalised).

mod common;
#[path = "thrift_reference/thrift2_session.rs"]
mod thrift2_session;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::compat::{python_with, root};
use common::hbase::{self, HBase};
use common::server::ServerProcess;
use common::thrift::GatewayProcess;
use thrift2_session::thrift2_session;

fn available() -> Option<PathBuf> {
    let ready = hbase::classpath().is_some() && hbase::thrift_classpath().is_some();
    let py = python_with("happybase");
    if !ready || py.is_none() {
        assert!(
            !hbase::required(),
            "HBase, hbase-thrift or happybase is missing and CELLAR_REQUIRE_COMPAT=1"
        );
        eprintln!("skipped: HBase, its Thrift gateway or happybase is not available");
        return None;
    }
    py
}

fn session(py: &Path, addr: &str) -> String {
    let (host, port) = addr.rsplit_once(':').unwrap();
    let out = Command::new(py)
        .arg(root().join("compat/python/thrift_tests/session.py"))
        .args([host, port])
        .output()
        .expect("run session.py");
    assert!(
        out.status.success(),
        "session.py against {addr} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn diff(name: &str, hbase: &str, cellar: &str) {
    if hbase != cellar {
        let mut report = String::new();
        for (h, c) in hbase.lines().zip(cellar.lines()) {
            if h != c {
                report.push_str(&format!("HBase:  {h}\nCellar: {c}\n"));
            }
        }
        panic!("{name}: the sessions differ\n{report}\n--- HBase ---\n{hbase}\n--- Cellar ---\n{cellar}");
    }
}

#[test]
fn cellar_answers_as_hbase_thrift_gateways_do() {
    let Some(py) = available() else { return };
    let hb = HBase::start();
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start_with(dir.path(), &["--thrift", "--thrift-port", "0"]);

    let gw1 = hb.start_thrift(false);
    let reference = session(&py, &gw1.addr);
    drop(gw1);
    let ours = session(&py, server.thrift.as_ref().unwrap());
    diff("Thrift1 (happybase)", &reference, &ours);

    let gw2 = hb.start_thrift(true);
    let reference = thrift2_session(&gw2.addr);
    drop(gw2);
    let gw = GatewayProcess::start(&server.addr, true);
    let addr = gw.addr.clone();
    let ours = thrift2_session(&addr);
    diff("Thrift2", &reference, &ours);
}
