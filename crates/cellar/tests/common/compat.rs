#![allow(dead_code)]
//! Whether a compatibility test's real client is there: `.ci/run` installs them and
//! sets CELLAR_REQUIRE_COMPAT=1, so a missing one fails; elsewhere the test says what
//! is missing and passes.

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn required() -> bool {
    std::env::var("CELLAR_REQUIRE_COMPAT").is_ok_and(|v| v == "1")
}

/// Skips (or, when required, fails) a test whose prerequisite is missing.
pub fn need(ok: bool, what: &str) -> bool {
    if !ok {
        assert!(!required(), "{what} is missing and CELLAR_REQUIRE_COMPAT=1");
        eprintln!("skipped: {what} is not available");
    }
    ok
}

/// The venv's Python (or CELLAR_PYTHON) when it can import `module`.
pub fn python_with(module: &str) -> Option<PathBuf> {
    let p = std::env::var_os("CELLAR_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("compat/python/.venv/bin/python"));
    let ok = p.exists()
        && Command::new(&p)
            .args(["-c", &format!("import {module}")])
            .status()
            .is_ok_and(|s| s.success());
    ok.then_some(p)
}

/// The class path of a Maven module under `compat/` (`classes` and its dependencies),
/// when it has been built and holds `class` (a path like `cellar/compat/X.class`).
pub fn java_classpath(module: &str, class: &str) -> Option<String> {
    let dir = root().join("compat").join(module).join("target");
    let deps = std::fs::read_to_string(dir.join("classpath.txt")).ok()?;
    let classes = dir.join("classes");
    classes
        .join(class)
        .exists()
        .then(|| format!("{}:{}", classes.display(), deps.trim()))
}
