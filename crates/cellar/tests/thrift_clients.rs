#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)] // drives server and client processes
//! happybase (PyPI) against Cellar's Thrift gateway: happybase's own test suite
//! (`tests/test_api.py` from its source distribution, which `.ci/run` unpacks into
//! `compat/python/happybase_suite/upstream/`) over buffered and framed transports, on
//! `cellar server --thrift` and on `cellar thrift --connect`; and our own happybase
//! tests (`compat/python/thrift_tests/`). `.ci/run` sets CELLAR_REQUIRE_COMPAT=1, so a
//! missing client fails; elsewhere the test says what is missing and passes.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::compat::{need, python_with, root};
use common::server::ServerProcess;
use common::thrift::GatewayProcess;

/// pytest from the venv with happybase, when installed.
fn pytest() -> Option<PathBuf> {
    python_with("happybase")?;
    let p = root().join("compat/python/.venv/bin/pytest");
    p.exists().then_some(p)
}

fn upstream_suite() -> PathBuf {
    root().join("compat/python/happybase_suite/upstream/tests")
}

/// Runs pytest on `target` against the gateway at `addr`, with `env`; panics with its
/// output when a test fails.
fn run_pytest(pytest: &Path, target: &Path, addr: &str, env: &[(&str, &str)]) -> String {
    let (host, port) = addr.rsplit_once(':').unwrap();
    let out = Command::new(pytest)
        .args(["-q", "-p", "no:cacheprovider"])
        .arg(target)
        .env("HAPPYBASE_HOST", host)
        .env("CELLAR_THRIFT_HOST", host)
        .env("CELLAR_THRIFT_PORT", port)
        .env_remove("HAPPYBASE_PORT")
        .envs(env.iter().copied())
        .output()
        .expect("run pytest");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "pytest {} failed ({env:?}):\n{stdout}\n{}",
        target.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// pytest and happybase's suite (with our two shims beside it), or why not.
fn prerequisites() -> Option<(PathBuf, PathBuf)> {
    let Some(pytest) = pytest() else {
        need(false, "happybase and pytest in compat/python/.venv");
        return None;
    };
    let Some(suite) = suite_dir() else {
        need(
            false,
            "happybase's test suite (compat/python/happybase_suite/upstream)",
        );
        return None;
    };
    Some((pytest, suite))
}

/// The upstream suite with our two shims beside it.
fn suite_dir() -> Option<PathBuf> {
    let dir = upstream_suite();
    if !dir.join("test_api.py").exists() {
        return None;
    }
    std::fs::copy(
        root().join("compat/python/happybase_suite/conftest.py"),
        dir.join("conftest.py"),
    )
    .expect("copy conftest.py");
    Some(dir)
}

#[test]
fn happybase_suite_on_the_server_gateway() {
    let Some((pytest, suite)) = prerequisites() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start_with(dir.path(), &["--thrift", "--thrift-port", "0"]);
    let addr = server.thrift.clone().unwrap();
    for transport in ["buffered", "framed"] {
        let out = run_pytest(
            &pytest,
            &suite.join("test_api.py"),
            &addr,
            &[("HAPPYBASE_TRANSPORT", transport)],
        );
        assert!(out.contains("25 passed"), "{transport}: {out}");
    }
    let out = run_pytest(
        &pytest,
        &root().join("compat/python/thrift_tests"),
        &addr,
        &[],
    );
    assert!(out.contains("passed") && !out.contains("failed"), "{out}");
    assert_eq!(server.stop(), Some(0));
}

#[test]
fn happybase_suite_on_a_gateway_process() {
    let Some((pytest, suite)) = prerequisites() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::start(dir.path());
    let gw = GatewayProcess::start(&server.addr, false);
    let addr = gw.addr.clone();
    let out = run_pytest(
        &pytest,
        &suite.join("test_api.py"),
        &addr,
        &[("HAPPYBASE_TRANSPORT", "framed")],
    );
    assert!(out.contains("25 passed"), "{out}");
    drop(gw);
    assert_eq!(server.stop(), Some(0));
}
