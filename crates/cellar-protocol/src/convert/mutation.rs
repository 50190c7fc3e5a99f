//! `MutationProto` and `Condition` ↔ Put, Delete, Increment, Append and checkAndMutate
//! conditions. Cells travel inline (`column_value`) or in the call's cell block
//! (`associated_cell_count` of them).

use cellar_api::{
    Append, CompareOp, Condition, Delete, DeleteSpec, Durability, Increment, Mutation, Put,
    TimeRange,
};
use cellar_types::{Cell, CellType, LATEST_TIMESTAMP};

use super::{b, comparator_from_pb, comparator_to_pb, filter_from_pb, filter_to_pb};
use super::{time_range_from_pb, time_range_to_pb};
use crate::cell_block::{BlockReader, Codec};
use crate::error::{ProtocolError, Result};
use crate::pb;
use crate::pb::mutation_proto::{DeleteType, MutationType};

/// HBase's attribute asking a mutation not to return its result (`_rr_`).
const RETURN_RESULTS: &str = "_rr_";

/// A retried Increment or Append is recognised by (nonce group, nonce).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Nonce {
    pub group: u64,
    pub nonce: u64,
}

fn durability_from(d: Option<i32>) -> Durability {
    use pb::mutation_proto::Durability as D;
    match d.and_then(|v| D::try_from(v).ok()) {
        Some(D::SkipWal) => Durability::SkipWal,
        Some(D::AsyncWal) => Durability::AsyncWal,
        Some(D::SyncWal) => Durability::SyncWal,
        Some(D::FsyncWal) => Durability::FsyncWal,
        Some(D::UseDefault) | None => Durability::UseDefault,
    }
}

fn durability_to(d: Durability) -> i32 {
    use pb::mutation_proto::Durability as D;
    (match d {
        Durability::SkipWal => D::SkipWal,
        Durability::AsyncWal => D::AsyncWal,
        Durability::SyncWal => D::SyncWal,
        Durability::FsyncWal => D::FsyncWal,
        _ => D::UseDefault,
    }) as i32
}

fn ts_from(ts: Option<u64>) -> i64 {
    ts.map(|t| t as i64).unwrap_or(LATEST_TIMESTAMP)
}

/// One cell of a mutation, whichever way it travelled.
struct Part {
    family: Vec<u8>,
    qualifier: Vec<u8>,
    ts: i64,
    value: Vec<u8>,
    kind: CellType,
}

fn delete_kind(t: Option<i32>) -> Result<CellType> {
    match t.map(DeleteType::try_from) {
        None => Ok(CellType::DeleteColumn),
        Some(Ok(DeleteType::DeleteOneVersion)) => Ok(CellType::Delete),
        Some(Ok(DeleteType::DeleteMultipleVersions)) => Ok(CellType::DeleteColumn),
        Some(Ok(DeleteType::DeleteFamily)) => Ok(CellType::DeleteFamily),
        Some(Ok(DeleteType::DeleteFamilyVersion)) => Ok(CellType::DeleteFamilyVersion),
        Some(Err(_)) => Err(ProtocolError::invalid("delete_type", format!("{t:?}"))),
    }
}

fn parts(
    m: &pb::MutationProto,
    block: Option<&mut BlockReader>,
    default_ts: i64,
) -> Result<Vec<Part>> {
    let mut out = Vec::new();
    for cv in &m.column_value {
        for qv in &cv.qualifier_value {
            out.push(Part {
                family: cv.family.to_vec(),
                qualifier: qv.qualifier.as_deref().unwrap_or_default().to_vec(),
                ts: qv.timestamp.map(|t| t as i64).unwrap_or(default_ts),
                value: qv.value.as_deref().unwrap_or_default().to_vec(),
                kind: if m.mutate_type == Some(MutationType::Delete as i32) {
                    delete_kind(qv.delete_type)?
                } else {
                    CellType::Put
                },
            });
        }
    }
    let count = m.associated_cell_count.unwrap_or(0);
    if count < 0 {
        return Err(ProtocolError::invalid(
            "associated_cell_count",
            count.to_string(),
        ));
    }
    if count > 0 {
        let block = block.ok_or(ProtocolError::Missing("cell block"))?;
        for cell in block.take(count as usize)? {
            out.push(Part {
                family: cell.family().to_vec(),
                qualifier: cell.qualifier().to_vec(),
                ts: cell.timestamp(),
                value: cell.value().to_vec(),
                kind: cell.cell_type(),
            });
        }
    }
    Ok(out)
}

fn return_results(m: &pb::MutationProto) -> bool {
    m.attribute
        .iter()
        .find(|a| a.name == RETURN_RESULTS)
        .and_then(|a| a.value.as_ref())
        .map(|v| v.first().copied() != Some(0))
        .unwrap_or(true)
}

/// Decodes one mutation; its cells come inline or from `block`. Returns the mutation
/// and its nonce when the client set one.
pub fn mutation_from_pb(
    m: &pb::MutationProto,
    block: Option<&mut BlockReader>,
) -> Result<(Mutation, Option<u64>)> {
    let row = m
        .row
        .as_deref()
        .ok_or(ProtocolError::Missing("MutationProto.row"))?
        .to_vec();
    let ts = ts_from(m.timestamp);
    let durability = durability_from(m.durability);
    let kind = m
        .mutate_type
        .map(MutationType::try_from)
        .ok_or(ProtocolError::Missing("MutationProto.mutate_type"))?
        .map_err(|_| ProtocolError::invalid("mutate_type", format!("{:?}", m.mutate_type)))?;
    let parts = parts(m, block, ts)?;
    let mutation = match kind {
        MutationType::Put => {
            let mut p = Put::new(row).with_timestamp(ts);
            for c in parts {
                if c.kind != CellType::Put {
                    return Err(ProtocolError::invalid(
                        "Put cell",
                        format!("type {:?}", c.kind),
                    ));
                }
                p.cells.push((c.family, c.qualifier, c.ts, c.value));
            }
            p.durability = durability;
            Mutation::Put(p)
        }
        MutationType::Delete => {
            let mut d = Delete::new(row).with_timestamp(ts);
            for c in parts {
                if !c.kind.is_delete() {
                    return Err(ProtocolError::invalid(
                        "Delete cell",
                        format!("type {:?}", c.kind),
                    ));
                }
                d.specs.push(DeleteSpec {
                    family: c.family,
                    qualifier: c.qualifier,
                    ts: c.ts,
                    kind: c.kind,
                });
            }
            d.durability = durability;
            Mutation::Delete(d)
        }
        MutationType::Increment => {
            let mut i = Increment::new(row);
            for c in parts {
                let amount: [u8; 8] = c.value.as_slice().try_into().map_err(|_| {
                    ProtocolError::invalid(
                        "Increment amount",
                        format!("{} bytes, expected an 8-byte long", c.value.len()),
                    )
                })?;
                i.columns
                    .push((c.family, c.qualifier, i64::from_be_bytes(amount)));
            }
            if let Some(tr) = &m.time_range {
                i.time_range = time_range_from_pb(tr)?;
            }
            i.return_results = return_results(m);
            i.durability = durability;
            Mutation::Increment(i)
        }
        MutationType::Append => {
            let mut a = Append::new(row);
            for c in parts {
                a.columns.push((c.family, c.qualifier, c.value));
            }
            a.return_results = return_results(m);
            a.durability = durability;
            Mutation::Append(a)
        }
    };
    Ok((mutation, m.nonce))
}

fn qv(
    qualifier: &[u8],
    value: &[u8],
    ts: Option<i64>,
    delete: Option<DeleteType>,
) -> pb::mutation_proto::column_value::QualifierValue {
    pb::mutation_proto::column_value::QualifierValue {
        qualifier: Some(b(qualifier)),
        value: Some(b(value)),
        timestamp: ts.map(|t| t as u64),
        delete_type: delete.map(|d| d as i32),
        tags: None,
    }
}

fn push(
    cvs: &mut Vec<pb::mutation_proto::ColumnValue>,
    family: &[u8],
    q: pb::mutation_proto::column_value::QualifierValue,
) {
    match cvs.iter_mut().find(|cv| cv.family.as_ref() == family) {
        Some(cv) => cv.qualifier_value.push(q),
        None => cvs.push(pb::mutation_proto::ColumnValue {
            family: b(family),
            qualifier_value: vec![q],
        }),
    }
}

/// Encodes one mutation with its cells inline.
pub fn mutation_to_pb(m: &Mutation, nonce: Option<u64>) -> pb::MutationProto {
    let mut out = pb::MutationProto {
        row: Some(b(m.row())),
        durability: Some(durability_to(m.durability())),
        nonce,
        ..Default::default()
    };
    let mut cvs = Vec::new();
    match m {
        Mutation::Put(p) => {
            out.mutate_type = Some(MutationType::Put as i32);
            out.timestamp = Some(p.ts as u64);
            for (f, q, ts, v) in &p.cells {
                push(&mut cvs, f, qv(q, v, Some(*ts), None));
            }
        }
        Mutation::Delete(d) => {
            out.mutate_type = Some(MutationType::Delete as i32);
            out.timestamp = Some(d.ts as u64);
            for s in &d.specs {
                let t = match s.kind {
                    CellType::Delete => DeleteType::DeleteOneVersion,
                    CellType::DeleteFamily => DeleteType::DeleteFamily,
                    CellType::DeleteFamilyVersion => DeleteType::DeleteFamilyVersion,
                    _ => DeleteType::DeleteMultipleVersions,
                };
                push(
                    &mut cvs,
                    &s.family,
                    qv(&s.qualifier, b"", Some(s.ts), Some(t)),
                );
            }
        }
        Mutation::Increment(i) => {
            out.mutate_type = Some(MutationType::Increment as i32);
            for (f, q, amount) in &i.columns {
                push(&mut cvs, f, qv(q, &amount.to_be_bytes(), None, None));
            }
            if !i.time_range.is_all() {
                out.time_range = Some(time_range_to_pb(&i.time_range));
            }
            if !i.return_results {
                out.attribute.push(pb::NameBytesPair {
                    name: RETURN_RESULTS.into(),
                    value: Some(b(&[0])),
                });
            }
        }
        Mutation::Append(a) => {
            out.mutate_type = Some(MutationType::Append as i32);
            for (f, q, v) in &a.columns {
                push(&mut cvs, f, qv(q, v, None, None));
            }
            if !a.return_results {
                out.attribute.push(pb::NameBytesPair {
                    name: RETURN_RESULTS.into(),
                    value: Some(b(&[0])),
                });
            }
        }
    }
    out.column_value = cvs;
    out
}

/// The cells of a mutation as they travel in a cell block.
pub fn mutation_cells(m: &Mutation) -> Result<Vec<Cell>> {
    let bad = |e: cellar_types::TypesError| ProtocolError::invalid("mutation cell", e.to_string());
    let row = m.row();
    let mut out = Vec::new();
    match m {
        Mutation::Put(p) => {
            for (f, q, ts, v) in &p.cells {
                out.push(Cell::new(row, f, q, *ts, CellType::Put, v).map_err(bad)?);
            }
        }
        Mutation::Delete(d) => {
            for s in &d.specs {
                out.push(Cell::new(row, &s.family, &s.qualifier, s.ts, s.kind, b"").map_err(bad)?);
            }
        }
        Mutation::Increment(i) => {
            for (f, q, amount) in &i.columns {
                out.push(
                    Cell::new(
                        row,
                        f,
                        q,
                        LATEST_TIMESTAMP,
                        CellType::Put,
                        amount.to_be_bytes(),
                    )
                    .map_err(bad)?,
                );
            }
        }
        Mutation::Append(a) => {
            for (f, q, v) in &a.columns {
                out.push(Cell::new(row, f, q, LATEST_TIMESTAMP, CellType::Put, v).map_err(bad)?);
            }
        }
    }
    Ok(out)
}

/// Encodes one mutation with its cells appended to `block` (what HBase's client does
/// on a connection with a cell-block codec).
pub fn mutation_to_pb_block(
    m: &Mutation,
    nonce: Option<u64>,
    codec: Codec,
    block: &mut Vec<u8>,
) -> Result<pb::MutationProto> {
    let mut out = mutation_to_pb(m, nonce);
    out.column_value.clear();
    let cells = mutation_cells(m)?;
    for c in &cells {
        codec.write(c, block);
    }
    out.associated_cell_count = Some(cells.len() as i32);
    Ok(out)
}

fn compare_from(t: Option<i32>) -> Result<CompareOp> {
    use pb::CompareType as C;
    Ok(match t.map(C::try_from) {
        Some(Ok(C::Less)) => CompareOp::Less,
        Some(Ok(C::LessOrEqual)) => CompareOp::LessOrEqual,
        Some(Ok(C::Equal)) => CompareOp::Equal,
        Some(Ok(C::NotEqual)) => CompareOp::NotEqual,
        Some(Ok(C::GreaterOrEqual)) => CompareOp::GreaterOrEqual,
        Some(Ok(C::Greater)) => CompareOp::Greater,
        Some(Ok(C::NoOp)) => CompareOp::NoOp,
        None => return Err(ProtocolError::Missing("compare_type")),
        Some(Err(_)) => return Err(ProtocolError::invalid("compare_type", format!("{t:?}"))),
    })
}

pub(crate) fn compare_op_from(t: i32) -> Result<CompareOp> {
    compare_from(Some(t))
}

pub(crate) fn compare_op_to(op: CompareOp) -> i32 {
    use pb::CompareType as C;
    (match op {
        CompareOp::Less => C::Less,
        CompareOp::LessOrEqual => C::LessOrEqual,
        CompareOp::Equal => C::Equal,
        CompareOp::NotEqual => C::NotEqual,
        CompareOp::GreaterOrEqual => C::GreaterOrEqual,
        CompareOp::Greater => C::Greater,
        CompareOp::NoOp => C::NoOp,
    }) as i32
}

/// Decodes a checkAndMutate condition: a column comparison (a `NullComparator` means
/// "the column does not exist") or, from HBase 2.4, a filter.
pub fn condition_from_pb(c: &pb::Condition) -> Result<Condition> {
    let time_range = match &c.time_range {
        Some(tr) => time_range_from_pb(tr)?,
        None => TimeRange::ALL,
    };
    if let Some(f) = &c.filter {
        return Ok(Condition::Filter {
            filter: filter_from_pb(f)?,
            time_range,
        });
    }
    let family = c
        .family
        .as_deref()
        .ok_or(ProtocolError::Missing("Condition.family"))?;
    let comparator = c
        .comparator
        .as_ref()
        .ok_or(ProtocolError::Missing("Condition.comparator"))?;
    let op = compare_from(c.compare_type)?;
    let expected = match comparator_from_pb(comparator)? {
        None => None,
        Some(cellar_api::Comparator::Binary(v)) => Some(v),
        Some(other) => {
            return Err(ProtocolError::invalid(
                "Condition.comparator",
                format!(
                    "{other} (checkAndMutate compares with a BinaryComparator or NullComparator)"
                ),
            ))
        }
    };
    Ok(Condition::Column {
        family: family.to_vec(),
        qualifier: c.qualifier.as_deref().unwrap_or_default().to_vec(),
        op,
        expected,
        time_range,
    })
}

/// Encodes a condition on `row`.
pub fn condition_to_pb(row: &[u8], c: &Condition) -> pb::Condition {
    match c {
        Condition::Column {
            family,
            qualifier,
            op,
            expected,
            time_range,
        } => pb::Condition {
            row: b(row),
            family: Some(b(family)),
            qualifier: Some(b(qualifier)),
            compare_type: Some(compare_op_to(*op)),
            comparator: Some(comparator_to_pb(
                expected
                    .as_ref()
                    .map(|v| cellar_api::Comparator::Binary(v.clone()))
                    .as_ref(),
            )),
            time_range: (!time_range.is_all()).then(|| time_range_to_pb(time_range)),
            filter: None,
        },
        Condition::Filter { filter, time_range } => pb::Condition {
            row: b(row),
            filter: Some(filter_to_pb(filter)),
            time_range: (!time_range.is_all()).then(|| time_range_to_pb(time_range)),
            ..Default::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell_block::Codec;
    use bytes::Bytes;
    use cellar_types::Cell;

    #[test]
    fn every_kind_round_trips_inline() {
        let ms: Vec<Mutation> = vec![
            Put::new("r")
                .add_column("f", "a", "v")
                .add_column_at("f", "b", 7, "w")
                .into(),
            Delete::new("r").into(),
            Delete::new("r")
                .add_column_version("f", "a", 5)
                .add_columns("f", "b")
                .add_family("g")
                .add_family_version("h", 9)
                .into(),
            Increment::new("r").add_column("f", "n", -3).into(),
            Append::new("r").add_column("f", "s", "xy").into(),
        ];
        for m in ms {
            let pbm = mutation_to_pb(&m, Some(42));
            let (back, nonce) = mutation_from_pb(&pbm, None).unwrap();
            assert_eq!(back, m);
            assert_eq!(nonce, Some(42));
        }
    }

    #[test]
    fn cells_from_a_block() {
        let mut block = Vec::new();
        Codec::KeyValue.write(
            &Cell::new("r", "f", "a", 3, CellType::Put, "v").unwrap(),
            &mut block,
        );
        Codec::KeyValue.write(
            &Cell::new("r", "f", "b", 4, CellType::Put, "w").unwrap(),
            &mut block,
        );
        let m = pb::MutationProto {
            row: Some(Bytes::from_static(b"r")),
            mutate_type: Some(MutationType::Put as i32),
            associated_cell_count: Some(2),
            ..Default::default()
        };
        let mut reader = BlockReader::new(Codec::KeyValue, Bytes::from(block));
        let (back, _) = mutation_from_pb(&m, Some(&mut reader)).unwrap();
        let Mutation::Put(p) = back else {
            panic!("not a put")
        };
        assert_eq!(p.cells.len(), 2);
        assert_eq!(p.cells[1], (b"f".to_vec(), b"b".to_vec(), 4, b"w".to_vec()));
        // More cells claimed than the block holds.
        let mut short = BlockReader::new(Codec::KeyValue, Bytes::new());
        assert!(mutation_from_pb(&m, Some(&mut short)).is_err());
        assert!(mutation_from_pb(&m, None).is_err());
    }

    #[test]
    fn every_kind_round_trips_through_a_block() {
        let ms: Vec<Mutation> = vec![
            Put::new("r").add_column_at("f", "b", 7, "w").into(),
            Delete::new("r")
                .add_columns("f", "b")
                .add_family_version("h", 9)
                .into(),
            Increment::new("r").add_column("f", "n", 5).into(),
            Append::new("r").add_column("f", "s", "xy").into(),
        ];
        for m in ms {
            let mut block = Vec::new();
            let pbm = mutation_to_pb_block(&m, None, Codec::KeyValue, &mut block).unwrap();
            assert!(pbm.column_value.is_empty());
            let mut reader = BlockReader::new(Codec::KeyValue, Bytes::from(block));
            let (back, _) = mutation_from_pb(&pbm, Some(&mut reader)).unwrap();
            assert_eq!(back, m);
        }
    }

    #[test]
    fn bad_increment_amount_is_an_error() {
        let mut m = mutation_to_pb(&Increment::new("r").add_column("f", "n", 1).into(), None);
        m.column_value[0].qualifier_value[0].value = Some(Bytes::from_static(b"abc"));
        assert!(mutation_from_pb(&m, None).is_err());
    }

    #[test]
    fn conditions_round_trip() {
        for c in [
            Condition::not_exists("f", "q"),
            Condition::equals("f", "q", "v"),
            Condition::matches("f", "q", CompareOp::Greater, "v").time_range(1, 5),
            Condition::filter(cellar_api::FilterSpec::Prefix(b"r".to_vec())),
        ] {
            assert_eq!(condition_from_pb(&condition_to_pb(b"r", &c)).unwrap(), c);
        }
    }
}
