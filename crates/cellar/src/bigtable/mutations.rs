//! Bigtable's mutations of one row as Cellar's: SetCell a put (timestamp `-1` the
//! server's; otherwise microseconds at millisecond granularity), DeleteFromColumn a
//! column delete (a time range from 0 a delete of every version before its end; any
//! other range a delete of each version it holds, found by a read first), DeleteFromFamily
//! and DeleteFromRow the family and row deletes. Aggregate mutations (AddToCell,
//! MergeToCell) are refused: Cellar has no aggregate families.

use cellar_api::{Delete, Get, Mutation, Put, RowMutations, LATEST_TIMESTAMP};
use cellar_bigtable::v2::mutation::Mutation as M;
use cellar_bigtable::v2::Mutation as BtMutation;
use tonic::Status;

use super::status;
use crate::client::Table;

/// A timestamp given in microseconds as Cellar's milliseconds.
pub(crate) fn millis(micros: i64, field: &str) -> Result<i64, Status> {
    if micros == -1 {
        return Ok(LATEST_TIMESTAMP);
    }
    if micros < 0 || micros % 1000 != 0 {
        return Err(Status::invalid_argument(format!(
            "Error in field '{field}' : Timestamp granularity mismatch: {micros} is not a non-negative multiple of 1000 (the table's granularity is MILLIS)"
        )));
    }
    Ok(micros / 1000)
}

/// The versions of one column whose timestamps (in microseconds) are in [start, end).
fn versions_in(
    table: &dyn Table,
    row: &[u8],
    family: &str,
    qualifier: &[u8],
    start: i64,
    end: i64,
) -> Result<Vec<i64>, Status> {
    let g = Get::new(row.to_vec())
        .add_column(family.as_bytes(), qualifier)
        .all_versions();
    let r = table.get(&g).map_err(status)?;
    Ok(r.cells
        .iter()
        .map(|c| c.timestamp())
        .filter(|ms| {
            let us = ms.saturating_mul(1000);
            us >= start && (end == 0 || us < end)
        })
        .collect())
}

/// The row mutations `muts` make of `row`, in their order.
pub(crate) fn row_mutations(
    table: &dyn Table,
    row: &[u8],
    muts: &[BtMutation],
) -> Result<RowMutations, Status> {
    if row.is_empty() {
        return Err(Status::invalid_argument("Row keys must be non-empty"));
    }
    if muts.is_empty() {
        return Err(Status::invalid_argument("No mutations provided"));
    }
    let mut out = RowMutations::new(row.to_vec());
    for m in muts {
        let Some(m) = &m.mutation else {
            return Err(Status::invalid_argument("a mutation without a kind"));
        };
        let next: Mutation = match m {
            M::SetCell(s) => {
                let ts = millis(s.timestamp_micros, "timestamp_micros")?;
                Mutation::Put(Put::new(row.to_vec()).add_column_at(
                    s.family_name.as_bytes(),
                    s.column_qualifier.clone(),
                    ts,
                    s.value.clone(),
                ))
            }
            M::DeleteFromColumn(d) => {
                let family = d.family_name.as_bytes();
                let (start, end) = d.time_range.as_ref().map_or((0, 0), |r| {
                    (r.start_timestamp_micros, r.end_timestamp_micros)
                });
                if start < 0 || end < 0 || (end != 0 && end < start) {
                    return Err(Status::invalid_argument(format!(
                        "Invalid time range [{start}, {end})"
                    )));
                }
                let del = Delete::new(row.to_vec());
                Mutation::Delete(match (start, end) {
                    (0, 0) => del.add_columns(family, &d.column_qualifier),
                    (0, e) => del.add_columns_before(
                        family,
                        &d.column_qualifier,
                        (e - 1).div_euclid(1000),
                    ),
                    (s, e) => {
                        let mut del = del;
                        for ts in
                            versions_in(table, row, &d.family_name, &d.column_qualifier, s, e)?
                        {
                            del = del.add_column_version(family, &d.column_qualifier, ts);
                        }
                        if del.specs.is_empty() {
                            continue;
                        }
                        del
                    }
                })
            }
            M::DeleteFromFamily(d) => {
                Mutation::Delete(Delete::new(row.to_vec()).add_family(d.family_name.as_bytes()))
            }
            M::DeleteFromRow(_) => Mutation::Delete(Delete::new(row.to_vec())),
            M::AddToCell(_) | M::MergeToCell(_) => {
                return Err(Status::unimplemented(
                    "aggregate mutations (AddToCell, MergeToCell) are not supported",
                ))
            }
        };
        out = out.with(next);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_at_millisecond_granularity() {
        assert_eq!(millis(-1, "t").unwrap(), LATEST_TIMESTAMP);
        assert_eq!(millis(1_000, "t").unwrap(), 1);
        assert_eq!(millis(0, "t").unwrap(), 0);
        let e = millis(1_500, "t").unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument);
        assert!(e.message().contains("granularity"), "{}", e.message());
        assert!(millis(-5, "t").is_err());
    }
}
