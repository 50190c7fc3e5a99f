#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The ReadRows chunk-merging conformance cases Google ships with its client libraries
//! (`internal/conformance/testdata/readrows.json` of the Go module
//! `cloud.google.com/go/bigtable`, which `.ci/run` downloads through the Go module
//! proxy), run through [`ChunkReader`]: every valid stream gives the expected cells and
//! every invalid one an error. The gateway's own streams are then read through the same
//! reader (`crates/cellar/tests/bigtable*.rs`).

use base64::Engine;
use cellar_bigtable::chunk::ChunkReader;
use cellar_bigtable::v2::read_rows_response::cell_chunk::RowStatus;
use cellar_bigtable::v2::read_rows_response::CellChunk;
use serde_json::Value;

/// Where the cases are: CELLAR_BIGTABLE_READROWS_JSON, or the Go module cache.
fn cases_file() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("CELLAR_BIGTABLE_READROWS_JSON") {
        return Some(p.into());
    }
    let out = std::process::Command::new("go")
        .args(["env", "GOMODCACHE"])
        .output()
        .ok()?;
    let cache = String::from_utf8(out.stdout).ok()?;
    let p = std::path::Path::new(cache.trim())
        .join("cloud.google.com/go/bigtable@v1.58.0/internal/conformance/testdata/readrows.json");
    p.exists().then_some(p)
}

fn bytes(v: &Value) -> Vec<u8> {
    v.as_str()
        .map(|s| base64::engine::general_purpose::STANDARD.decode(s).unwrap())
        .unwrap_or_default()
}

fn int(v: &Value) -> i64 {
    match v {
        Value::String(s) => s.parse().unwrap(),
        Value::Number(n) => n.as_i64().unwrap(),
        _ => 0,
    }
}

fn chunk(j: &Value) -> CellChunk {
    CellChunk {
        row_key: bytes(&j["rowKey"]),
        family_name: j["familyName"].as_str().map(str::to_string),
        qualifier: j.get("qualifier").map(bytes),
        timestamp_micros: int(&j["timestampMicros"]),
        labels: j["labels"]
            .as_array()
            .map(|a| a.iter().map(|l| l.as_str().unwrap().to_string()).collect())
            .unwrap_or_default(),
        value: bytes(&j["value"]),
        value_size: int(&j["valueSize"]) as i32,
        row_status: if j["commitRow"].as_bool() == Some(true) {
            Some(RowStatus::CommitRow(true))
        } else if j["resetRow"].as_bool() == Some(true) {
            Some(RowStatus::ResetRow(true))
        } else {
            None
        },
    }
}

#[test]
fn the_published_read_rows_cases() {
    let Some(path) = cases_file() else {
        assert!(
            std::env::var("CELLAR_REQUIRE_COMPAT").ok().as_deref() != Some("1"),
            "the ReadRows conformance cases are missing and CELLAR_REQUIRE_COMPAT=1"
        );
        eprintln!("skipped: the ReadRows conformance cases (go mod download cloud.google.com/go/bigtable@v1.58.0)");
        return;
    };
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = doc["readRowsTests"].as_array().unwrap();
    assert!(cases.len() >= 40);
    for case in cases {
        let name = case["description"].as_str().unwrap();
        let mut reader = ChunkReader::new(false);
        let mut got: Vec<String> = Vec::new();
        let mut failed = false;
        for c in case["chunks"].as_array().unwrap() {
            match reader.push(&chunk(c)) {
                Ok(Some(row)) => {
                    for cell in row.cells {
                        got.push(format!(
                            "{}/{}:{}@{}={} {}",
                            String::from_utf8_lossy(&row.key),
                            cell.family,
                            String::from_utf8_lossy(&cell.qualifier),
                            cell.timestamp_micros,
                            String::from_utf8_lossy(&cell.value),
                            cell.labels.join(",")
                        ));
                    }
                }
                Ok(None) => {}
                Err(_) => {
                    failed = true;
                    break;
                }
            }
        }
        if !failed && reader.finish().is_err() {
            failed = true;
        }
        let mut want: Vec<String> = Vec::new();
        let mut want_error = false;
        for r in case["results"].as_array().into_iter().flatten() {
            if r["error"].as_bool() == Some(true) {
                want_error = true;
                continue;
            }
            want.push(format!(
                "{}/{}:{}@{}={} {}",
                r["rowKey"].as_str().unwrap_or(""),
                r["familyName"].as_str().unwrap_or(""),
                r["qualifier"].as_str().unwrap_or(""),
                int(&r["timestampMicros"]),
                r["value"].as_str().unwrap_or(""),
                r["label"].as_str().unwrap_or("")
            ));
        }
        assert_eq!(failed, want_error, "{name}: error expected: {want_error}");
        assert_eq!(got, want, "{name}");
    }
}
