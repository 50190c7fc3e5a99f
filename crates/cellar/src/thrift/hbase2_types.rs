//! Thrift2's structs and enums to and from the client API, as HBase's thrift2
//! `ThriftUtilities` converts them: TGet, TScan, TPut, TDelete, TIncrement, TAppend,
//! TRowMutations, TResult, table and family descriptors, region locations.

use cellar_api::{
    Append, BloomType, Cell, CompareOp, Compression, DataBlockEncoding, Delete, Durability,
    FamilyDescriptor, Get, Increment, KeepDeletedCells, Mutation, Put, RegionStats, RowMutations,
    RowResult, Scan, TableDescriptor, FOREVER, LATEST_TIMESTAMP,
};
use cellar_thrift::{Struct, TType, Value};

use super::{parse_filter, Fault};

fn need<'a>(s: &'a Struct, id: i16, what: &str) -> Result<&'a [u8], Fault> {
    s.bytes(id)
        .ok_or_else(|| Fault::Illegal(format!("{what} is required")))
}

pub(super) fn durability(v: Option<i64>) -> Durability {
    match v {
        Some(1) => Durability::SkipWal,
        Some(2) => Durability::AsyncWal,
        Some(3) => Durability::SyncWal,
        Some(4) => Durability::FsyncWal,
        _ => Durability::UseDefault,
    }
}

fn durability_code(d: Durability) -> i32 {
    match d {
        Durability::SkipWal => 1,
        Durability::AsyncWal => 2,
        Durability::SyncWal => 3,
        Durability::FsyncWal => 4,
        _ => 0,
    }
}

pub(super) fn compare_op(v: Option<i64>) -> Result<CompareOp, Fault> {
    Ok(match v {
        Some(0) => CompareOp::Less,
        Some(1) => CompareOp::LessOrEqual,
        Some(2) => CompareOp::Equal,
        Some(3) => CompareOp::NotEqual,
        Some(4) => CompareOp::GreaterOrEqual,
        Some(5) => CompareOp::Greater,
        Some(6) => CompareOp::NoOp,
        other => {
            return Err(Fault::Illegal(format!(
                "unknown compare operator {other:?}"
            )))
        }
    })
}

/// `ns:table` from a TTableName (`default` namespace left out).
pub(super) fn table_name(t: Option<&Struct>) -> Result<String, Fault> {
    let t = t.ok_or_else(|| Fault::Illegal("a table name is required".into()))?;
    let q = t.text(2).unwrap_or_default();
    if q.is_empty() {
        return Err(Fault::Illegal("a table name is required".into()));
    }
    Ok(match t.text(1) {
        Some(ns) if !ns.is_empty() && ns != "default" => format!("{ns}:{q}"),
        _ => q,
    })
}

pub(super) fn ttable_name(name: &str) -> Struct {
    let (ns, q) = match name.split_once(':') {
        Some((ns, q)) => (ns, q),
        None => ("default", name),
    };
    Struct::new()
        .with(1, Value::string(ns))
        .with(2, Value::string(q))
}

pub(super) fn get_from(g: &Struct) -> Result<Get, Fault> {
    let mut out = Get::new(need(g, 1, "a row")?);
    for c in g.struct_list(2).unwrap_or_default() {
        let f = need(c, 1, "a column family")?;
        out = match c.bytes(2) {
            Some(q) => out.add_column(f, q),
            None => out.add_family(f),
        };
    }
    if let Some(ts) = g.i64(3) {
        out = out.timestamp(ts);
    } else if let Some(tr) = g.strukt(4) {
        out = out.time_range(tr.i64(1).unwrap_or(0), tr.i64(2).unwrap_or(i64::MAX));
    }
    if let Some(n) = g.i32(5) {
        out = out.max_versions(positive_versions(n)?);
    }
    if let Some(f) = g.bytes(6) {
        out = out.filter(parse_filter(f)?);
    }
    if g.has(12) || g.has(13) {
        return Err(Fault::Io(
            "java.lang.UnsupportedOperationException: storeLimit and storeOffset are not supported"
                .into(),
            false,
        ));
    }
    if g.has(15) {
        return Err(Fault::Io(
            "java.lang.UnsupportedOperationException: filterBytes is not supported; use filterString".into(),
            false,
        ));
    }
    out.check_existence_only = g.bool(14).unwrap_or(false);
    Ok(out)
}

fn positive_versions(n: i32) -> Result<u32, Fault> {
    u32::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| {
        Fault::Io(
            "java.io.IOException: maxVersions must be positive".into(),
            false,
        )
    })
}

pub(super) fn scan_from(s: &Struct) -> Result<Scan, Fault> {
    let mut out = Scan::new();
    if let Some(r) = s.bytes(1) {
        out = out.start_row(r);
    }
    if let Some(r) = s.bytes(2) {
        out = out.stop_row(r);
    }
    for c in s.struct_list(3).unwrap_or_default() {
        let f = need(c, 1, "a column family")?;
        out = match c.bytes(2) {
            Some(q) => out.add_column(f, q),
            None => out.add_family(f),
        };
    }
    if let Some(c) = s.i32(4).filter(|c| *c > 0) {
        out = out.caching(c as u32);
    }
    if let Some(n) = s.i32(5) {
        out = out.max_versions(positive_versions(n)?);
    }
    if let Some(tr) = s.strukt(6) {
        if let (Some(min), Some(max)) = (tr.i64(1), tr.i64(2)) {
            out = out.time_range(min, max);
        }
    }
    if let Some(f) = s.bytes(7) {
        out = out.filter(parse_filter(f)?);
    }
    if let Some(b) = s.i32(8).filter(|b| *b > 0) {
        out = out.batch(b as u32);
    }
    if let Some(r) = s.bool(11) {
        out = out.reversed(r);
    }
    if let Some(c) = s.bool(12) {
        out = out.cache_blocks(c);
    }
    if s.map(13).is_some_and(|m| !m.is_empty()) {
        return Err(Fault::Io(
            "java.lang.UnsupportedOperationException: colFamTimeRangeMap is not supported".into(),
            false,
        ));
    }
    if let Some(l) = s.i32(15).filter(|l| *l > 0) {
        out = out.limit(l as u64);
    }
    if s.has(18) {
        return Err(Fault::Io(
            "java.lang.UnsupportedOperationException: filterBytes is not supported; use filterString".into(),
            false,
        ));
    }
    Ok(out)
}

pub(super) fn put_from(p: &Struct) -> Result<Put, Fault> {
    let ts = p.i64(3).unwrap_or(LATEST_TIMESTAMP);
    let mut out = Put::new(need(p, 1, "a row")?).with_timestamp(ts);
    for cv in p.struct_list(2).unwrap_or_default() {
        out = out.add_column_at(
            need(cv, 1, "a column family")?.to_vec(),
            cv.bytes(2).unwrap_or_default().to_vec(),
            cv.i64(4).unwrap_or(ts),
            cv.bytes(3).unwrap_or_default().to_vec(),
        );
    }
    Ok(out.durability(durability(p.i64(6))))
}

pub(super) fn delete_from(d: &Struct) -> Result<Delete, Fault> {
    let row = need(d, 1, "a row")?;
    let mut out = match (d.struct_list(2), d.i64(3)) {
        (Some(_), _) | (None, None) => Delete::new(row),
        (None, Some(ts)) => Delete::new(row).with_timestamp(ts),
    };
    // The IDL's default type is DELETE_COLUMNS.
    let kind = d.i64(4).unwrap_or(1);
    for c in d.struct_list(2).unwrap_or_default() {
        let f = need(c, 1, "a column family")?;
        let q = c.bytes(2).unwrap_or_default();
        let ts = c.i64(3);
        out = match (kind, ts) {
            (0, Some(ts)) => out.add_column_version(f, q, ts),
            (0, None) => out.add_column(f, q),
            (1, Some(ts)) => out.add_columns_before(f, q, ts),
            (1, None) => out.add_columns(f, q),
            (2, Some(ts)) => out.add_family_before(f, ts),
            (2, None) => out.add_family(f),
            (3, Some(ts)) => out.add_family_version(f, ts),
            (3, None) => {
                return Err(Fault::Illegal(
                    "Timestamp is required for TDelete with DeleteFamilyVersion type".into(),
                ))
            }
            _ => return Err(Fault::Illegal("DeleteType is required for TDelete".into())),
        };
    }
    Ok(out.durability(durability(d.i64(7))))
}

pub(super) fn increment_from(i: &Struct) -> Result<Increment, Fault> {
    let mut out = Increment::new(need(i, 1, "a row")?);
    for c in i.struct_list(2).unwrap_or_default() {
        out = out.add_column(
            need(c, 1, "a column family")?.to_vec(),
            c.bytes(2).unwrap_or_default().to_vec(),
            c.i64(3).unwrap_or(1),
        );
    }
    out.durability = durability(i.i64(5));
    if let Some(r) = i.bool(7) {
        out.return_results = r;
    }
    Ok(out)
}

pub(super) fn append_from(a: &Struct) -> Result<Append, Fault> {
    let mut out = Append::new(need(a, 1, "a row")?);
    for c in a.struct_list(2).unwrap_or_default() {
        out = out.add_column(
            need(c, 1, "a column family")?.to_vec(),
            c.bytes(2).unwrap_or_default().to_vec(),
            c.bytes(3).unwrap_or_default().to_vec(),
        );
    }
    out.durability = durability(a.i64(4));
    if let Some(r) = a.bool(6) {
        out.return_results = r;
    }
    Ok(out)
}

pub(super) fn row_mutations_from(rm: &Struct) -> Result<RowMutations, Fault> {
    let mut out = RowMutations::new(need(rm, 1, "a row")?);
    for m in rm.struct_list(2).unwrap_or_default() {
        if let Some(p) = m.strukt(1) {
            out = out.with(Mutation::Put(put_from(p)?));
        }
        if let Some(d) = m.strukt(2) {
            out = out.with(Mutation::Delete(delete_from(d)?));
        }
    }
    Ok(out)
}

fn column_value(c: &Cell) -> Value {
    let s = Struct::new()
        .with(1, Value::binary(c.family().to_vec()))
        .with(2, Value::binary(c.qualifier().to_vec()))
        .with(3, Value::binary(c.value().to_vec()))
        .with(4, Value::I64(c.timestamp()))
        .with(6, Value::Byte(c.cell_type().code() as i8));
    Value::Struct(if c.tags().is_empty() {
        s
    } else {
        s.with(5, Value::binary(c.tags().to_vec()))
    })
}

pub(super) fn result_value(r: &RowResult) -> Value {
    let s = if r.row.is_empty() && r.cells.is_empty() {
        Struct::new()
    } else {
        Struct::new().with(1, Value::binary(r.row.clone()))
    };
    Value::Struct(
        s.with(
            2,
            Value::List(TType::Struct, r.cells.iter().map(column_value).collect()),
        )
        .with(3, Value::Bool(false))
        .with(4, Value::Bool(r.partial)),
    )
}

fn bloom_from(v: i64) -> BloomType {
    match v {
        0 => BloomType::None,
        2 => BloomType::RowCol,
        _ => BloomType::Row,
    }
}

fn bloom_code(b: BloomType) -> i32 {
    match b {
        BloomType::None => 0,
        BloomType::Row => 1,
        BloomType::RowCol => 2,
        BloomType::RowPrefixFixedLength(_) => 3,
    }
}

fn compression_from(v: i64) -> Compression {
    match v {
        0 => Compression::Lzo,
        1 => Compression::Gz,
        3 => Compression::Snappy,
        4 => Compression::Lz4,
        5 => Compression::Bzip2,
        6 => Compression::Zstd,
        _ => Compression::None,
    }
}

fn compression_code(c: Compression) -> i32 {
    match c {
        Compression::Lzo => 0,
        Compression::Gz => 1,
        Compression::Snappy => 3,
        Compression::Lz4 => 4,
        Compression::Bzip2 => 5,
        Compression::Zstd => 6,
        _ => 2,
    }
}

fn encoding_from(v: i64) -> DataBlockEncoding {
    match v {
        2 => DataBlockEncoding::Prefix,
        3 => DataBlockEncoding::Diff,
        4 => DataBlockEncoding::FastDiff,
        7 => DataBlockEncoding::RowIndexV1,
        _ => DataBlockEncoding::None,
    }
}

fn encoding_code(e: DataBlockEncoding) -> i32 {
    match e {
        DataBlockEncoding::None => 0,
        DataBlockEncoding::Prefix => 2,
        DataBlockEncoding::Diff => 3,
        DataBlockEncoding::FastDiff => 4,
        DataBlockEncoding::RowIndexV1 => 7,
    }
}

/// A family from a TColumnFamilyDescriptor; unset fields keep HBase's defaults, or
/// what `base` has when a family is modified.
pub(super) fn family_from(
    c: &Struct,
    base: Option<&FamilyDescriptor>,
) -> Result<FamilyDescriptor, Fault> {
    let name = need(c, 1, "a column family name")?;
    let mut f = base
        .cloned()
        .unwrap_or_else(|| FamilyDescriptor::new(name.to_vec()));
    if let Some(conf) = c.map(3) {
        for (k, v) in conf {
            if let (Some(k), Some(v)) = (k.as_bytes(), v.as_bytes()) {
                f.configuration.insert(
                    String::from_utf8_lossy(k).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                );
            }
        }
    }
    if let Some(b) = c.i32(4) {
        f.block_size = u32::try_from(b).map_err(|_| Fault::Illegal(format!("block size {b}")))?;
    }
    if let Some(b) = c.i64(5) {
        f.bloom = bloom_from(b);
    }
    if let Some(v) = c.i64(6) {
        f.compression = compression_from(v);
    }
    if let Some(v) = c.i64(8) {
        f.encoding = encoding_from(v);
    }
    if let Some(v) = c.i64(9) {
        f.keep_deleted_cells = match v {
            1 => KeepDeletedCells::True,
            2 => KeepDeletedCells::Ttl,
            _ => KeepDeletedCells::False,
        };
    }
    if let Some(v) = c.i32(10) {
        f.versions = positive_versions(v)?;
    }
    if let Some(v) = c.i32(11) {
        f.min_versions =
            u32::try_from(v).map_err(|_| Fault::Illegal(format!("min versions {v}")))?;
    }
    if let Some(v) = c.i32(13) {
        f.ttl = if v > 0 { v } else { FOREVER };
    }
    if let Some(v) = c.bool(14) {
        f.block_cache = v;
    }
    if let Some(v) = c.bool(20) {
        f.in_memory = v;
    }
    f.validate()
        .map_err(|e| Fault::Illegal(e.message().to_string()))?;
    Ok(f)
}

pub(super) fn family_value(f: &FamilyDescriptor) -> Value {
    let conf = f
        .configuration
        .iter()
        .map(|(k, v)| (Value::string(k.clone()), Value::string(v.clone())))
        .collect();
    Value::Struct(
        Struct::new()
            .with(1, Value::binary(f.name.clone()))
            .with(3, Value::Map(TType::String, TType::String, conf))
            .with(
                4,
                Value::I32(i32::try_from(f.block_size).unwrap_or(i32::MAX)),
            )
            .with(5, Value::I32(bloom_code(f.bloom)))
            .with(6, Value::I32(compression_code(f.compression)))
            .with(8, Value::I32(encoding_code(f.encoding)))
            .with(
                9,
                Value::I32(match f.keep_deleted_cells {
                    KeepDeletedCells::False => 0,
                    KeepDeletedCells::True => 1,
                    KeepDeletedCells::Ttl => 2,
                }),
            )
            .with(
                10,
                Value::I32(i32::try_from(f.versions).unwrap_or(i32::MAX)),
            )
            .with(
                11,
                Value::I32(i32::try_from(f.min_versions).unwrap_or(i32::MAX)),
            )
            .with(12, Value::I32(0))
            .with(13, Value::I32(f.ttl))
            .with(14, Value::Bool(f.block_cache))
            .with(20, Value::Bool(f.in_memory)),
    )
}

pub(super) fn table_desc_from(d: &Struct) -> Result<TableDescriptor, Fault> {
    let mut out = TableDescriptor::new(table_name(d.strukt(1))?);
    for c in d.struct_list(2).unwrap_or_default() {
        out.families.push(family_from(c, None)?);
    }
    out.durability = durability(d.i64(4));
    Ok(out)
}

pub(super) fn table_desc_value(d: &TableDescriptor) -> Value {
    let mut fams: Vec<&FamilyDescriptor> = d.families.iter().collect();
    fams.sort_by(|a, b| a.name.cmp(&b.name));
    Value::Struct(
        Struct::new()
            .with(1, Value::Struct(ttable_name(&d.name)))
            .with(
                2,
                Value::List(TType::Struct, fams.into_iter().map(family_value).collect()),
            )
            .with(3, Value::Map(TType::String, TType::String, Vec::new()))
            .with(4, Value::I32(durability_code(d.durability))),
    )
}

pub(super) fn location_value(r: &RegionStats) -> Value {
    let (host, port, code) = match &r.server {
        Some(s) => (s.host.clone(), i32::from(s.port), s.start_code),
        None => (String::new(), 0, 0),
    };
    let info = Struct::new()
        .with(1, Value::I64(r.info.id))
        .with(2, Value::string(r.info.table.clone()))
        .with(3, Value::binary(r.info.start.clone()))
        .with(4, Value::binary(r.info.end.clone()))
        .with(5, Value::Bool(r.info.offline))
        .with(6, Value::Bool(r.info.offline))
        .with(7, Value::I32(0));
    let server = Struct::new()
        .with(1, Value::string(host))
        .with(2, Value::I32(port))
        .with(3, Value::I64(code));
    Value::Struct(
        Struct::new()
            .with(1, Value::Struct(server))
            .with(2, Value::Struct(info)),
    )
}
