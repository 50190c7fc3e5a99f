//! Parquet input for `hfile-write`: a file whose columns are named `row`, `family`,
//! `qualifier`, `timestamp` and `value` (byte arrays or strings; the timestamp an INT64
//! or INT32, or null for the write time), read row by row in file order, which must be
//! HBase's cell order within each family as for CSV.

use std::path::Path;

use cellar_api::Error;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;

use super::produce::Record;
use crate::error::Result;

fn bytes(f: &Field) -> Option<Vec<u8>> {
    match f {
        Field::Str(s) => Some(s.as_bytes().to_vec()),
        Field::Bytes(b) => Some(b.data().to_vec()),
        _ => None,
    }
}

/// Every record of the Parquet file at `path`, numbered from 1.
pub fn read_records(path: &Path) -> Result<Vec<(u64, Record)>> {
    let bad = |why: String| -> crate::error::DbError {
        Error::invalid(format!("{}: {why}", path.display())).into()
    };
    let file = std::fs::File::open(path).map_err(|e| bad(e.to_string()))?;
    let reader = SerializedFileReader::new(file).map_err(|e| bad(e.to_string()))?;
    let rows = reader.get_row_iter(None).map_err(|e| bad(e.to_string()))?;
    let mut out = Vec::new();
    for (i, row) in rows.enumerate() {
        let n = i as u64 + 1;
        let row = row.map_err(|e| bad(format!("record {n}: {e}")))?;
        let (mut r, mut f, mut q, mut ts, mut v) = (None, None, None, None, None);
        for (name, field) in row.get_column_iter() {
            match name.as_str() {
                "row" => r = bytes(field),
                "family" => f = bytes(field),
                "qualifier" => q = bytes(field),
                "value" => v = bytes(field),
                "timestamp" => {
                    ts = match field {
                        Field::Long(t) => Some(*t),
                        Field::Int(t) => Some(i64::from(*t)),
                        Field::Null => None,
                        other => {
                            return Err(bad(format!(
                                "record {n}: timestamp {other} is not an integer"
                            )))
                        }
                    }
                }
                _ => {}
            }
        }
        let need = |x: Option<Vec<u8>>, what: &str| {
            x.ok_or_else(|| {
                bad(format!(
                    "record {n}: no {what} (a byte array or string column)"
                ))
            })
        };
        out.push((
            n,
            (
                need(r, "row")?,
                need(f, "family")?,
                need(q, "qualifier")?,
                ts,
                need(v, "value")?,
            ),
        ));
    }
    Ok(out)
}
