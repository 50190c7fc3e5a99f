//! Key maps for a re-key migration: how an old cell's (row, qualifier) becomes the new
//! table's. The seeds' layouts are built in, and a small template form covers others.
//!
//! ```text
//! bucket:UNIT[:SOURCE[:SEP]]     wide row -> bucketed wide: row + SEP + time bucket of the
//!                                cell; the qualifier stays. UNIT: year|month|day|hour;
//!                                SOURCE where the time comes from: ts (the cell's
//!                                timestamp, default), rdec (the qualifier is a 20-digit
//!                                decimal of u64::MAX - ts), rlong (8 bytes, big-endian
//!                                Long.MAX_VALUE - ts). SEP defaults to '#'.
//! tall:UNIT[:SEP]                tall -> bucketed: the row `entity SEP reversed-ts` becomes
//!                                `entity SEP bucket` and the reversed-ts part the qualifier
//!                                (the old qualifier is appended after SEP when not empty).
//! rebucket:UNIT[:SEP]            bucket size change: the row `entity SEP old-bucket`
//!                                becomes `entity SEP new-bucket` from the cell's timestamp.
//! salt:N[:SEP]                   salt prefix: a two-digit (or wider) bucket of the row's
//!                                hash modulo N, then SEP, then the row.
//! row=TEMPLATE[;qualifier=TEMPLATE]
//!                                templates of {row}, {qualifier}, {ts:FMT} (chrono's
//!                                format, UTC), {part:SEP:I} (field I of the row split at
//!                                SEP), {salt:N}; other text as is.
//! ```
//!
//! A map must not send one old row's cells to rows another old row also maps to unless
//! that is meant (verification counts per old entity); it never fails on a cell it can
//! map, and says which cell it could not.

use cellar_api::{Error, Result};
use chrono::{TimeZone, Utc};

/// The time granularity of a bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Year,
    Month,
    Day,
    Hour,
}

impl Unit {
    fn parse(s: &str) -> Result<Unit> {
        Ok(match s {
            "year" => Unit::Year,
            "month" => Unit::Month,
            "day" => Unit::Day,
            "hour" => Unit::Hour,
            _ => {
                return Err(Error::invalid(format!(
                    "unknown bucket unit '{s}' (year, month, day, hour)"
                )))
            }
        })
    }

    fn format(self) -> &'static str {
        match self {
            Unit::Year => "%Y",
            Unit::Month => "%Y%m",
            Unit::Day => "%Y%m%d",
            Unit::Hour => "%Y%m%d%H",
        }
    }
}

/// Where a cell's time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeSource {
    /// The cell's timestamp.
    CellTs,
    /// The qualifier: 20 decimal digits of `u64::MAX - ts`.
    ReversedDecimal,
    /// The qualifier: 8 bytes, big-endian `i64::MAX - ts`.
    ReversedLong,
}

/// One piece of a template (text, or a placeholder filled from the old cell).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(Vec<u8>),
    Row,
    Qualifier,
    Ts(String),
    Part(Vec<u8>, usize),
    Salt(u32),
}

/// A parsed key map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyMap {
    Bucket {
        unit: Unit,
        source: TimeSource,
        sep: Vec<u8>,
    },
    Tall {
        unit: Unit,
        sep: Vec<u8>,
    },
    Rebucket {
        unit: Unit,
        sep: Vec<u8>,
    },
    Salt {
        n: u32,
        sep: Vec<u8>,
    },
    Template {
        row: Vec<Piece>,
        qualifier: Option<Vec<Piece>>,
    },
}

fn bad(spec: &str, why: impl std::fmt::Display) -> Error {
    Error::invalid(format!("key map '{spec}': {why}"))
}

fn parse_template(spec: &str, t: &str) -> Result<Vec<Piece>> {
    let mut out = Vec::new();
    let mut rest = t;
    while !rest.is_empty() {
        match rest.find('{') {
            None => {
                out.push(Piece::Text(rest.as_bytes().to_vec()));
                break;
            }
            Some(i) => {
                if i > 0 {
                    out.push(Piece::Text(rest.as_bytes()[..i].to_vec()));
                }
                let end = rest[i..]
                    .find('}')
                    .ok_or_else(|| bad(spec, "a '{' without its '}'"))?
                    + i;
                let inner = &rest[i + 1..end];
                let mut f = inner.splitn(3, ':');
                let piece = match (f.next(), f.next(), f.next()) {
                    (Some("row"), None, None) => Piece::Row,
                    (Some("qualifier"), None, None) => Piece::Qualifier,
                    (Some("ts"), Some(fmt), None) => Piece::Ts(fmt.to_string()),
                    (Some("part"), Some(sep), Some(i)) => Piece::Part(
                        sep.as_bytes().to_vec(),
                        i.parse()
                            .map_err(|_| bad(spec, format!("{{{inner}}}: not an index")))?,
                    ),
                    (Some("salt"), Some(n), None) => Piece::Salt(
                        n.parse()
                            .ok()
                            .filter(|n| *n > 0)
                            .ok_or_else(|| bad(spec, format!("{{{inner}}}: not a bucket count")))?,
                    ),
                    _ => return Err(bad(spec, format!("unknown placeholder {{{inner}}}"))),
                };
                out.push(piece);
                rest = &rest[end + 1..];
            }
        }
    }
    Ok(out)
}

impl KeyMap {
    /// Parses a map's specification (see the module's documentation).
    pub fn parse(spec: &str) -> Result<KeyMap> {
        if let Some(t) = spec.strip_prefix("row=") {
            let (row, qual) = match t.split_once(";qualifier=") {
                Some((r, q)) => (r, Some(q)),
                None => (t, None),
            };
            return Ok(KeyMap::Template {
                row: parse_template(spec, row)?,
                qualifier: qual.map(|q| parse_template(spec, q)).transpose()?,
            });
        }
        let parts: Vec<&str> = spec.split(':').collect();
        let sep = |i: usize| -> Vec<u8> {
            parts
                .get(i)
                .filter(|s| !s.is_empty())
                .map_or(b"#".to_vec(), |s| s.as_bytes().to_vec())
        };
        let unit = || -> Result<Unit> { Unit::parse(parts.get(1).copied().unwrap_or("")) };
        match parts[0] {
            "bucket" => {
                let source = match parts.get(2).copied().unwrap_or("ts") {
                    "ts" | "" => TimeSource::CellTs,
                    "rdec" => TimeSource::ReversedDecimal,
                    "rlong" => TimeSource::ReversedLong,
                    other => {
                        return Err(bad(
                            spec,
                            format!("unknown time source '{other}' (ts, rdec, rlong)"),
                        ))
                    }
                };
                Ok(KeyMap::Bucket {
                    unit: unit()?,
                    source,
                    sep: sep(3),
                })
            }
            "tall" => Ok(KeyMap::Tall {
                unit: unit()?,
                sep: sep(2),
            }),
            "rebucket" => Ok(KeyMap::Rebucket {
                unit: unit()?,
                sep: sep(2),
            }),
            "salt" => {
                let n = parts
                    .get(1)
                    .and_then(|n| n.parse::<u32>().ok())
                    .filter(|n| *n > 0)
                    .ok_or_else(|| bad(spec, "salt needs a bucket count above zero"))?;
                Ok(KeyMap::Salt { n, sep: sep(2) })
            }
            other => Err(bad(
                spec,
                format!("unknown map '{other}' (bucket, tall, rebucket, salt, row=TEMPLATE)"),
            )),
        }
    }

    /// True when a cell's new key depends on its timestamp (so versions of one column
    /// may land in different new rows).
    pub fn uses_timestamp(&self) -> bool {
        match self {
            KeyMap::Bucket { source, .. } => *source == TimeSource::CellTs,
            KeyMap::Rebucket { .. } => true,
            KeyMap::Tall { .. } | KeyMap::Salt { .. } => false,
            KeyMap::Template { row, qualifier } => row
                .iter()
                .chain(qualifier.iter().flatten())
                .any(|p| matches!(p, Piece::Ts(_))),
        }
    }

    /// True when every old row maps to one new row of its own whatever its cells, so a
    /// delete of a whole family or row maps to the same delete of the new row.
    pub fn maps_whole_rows(&self) -> bool {
        matches!(self, KeyMap::Salt { .. })
    }

    /// The new (row, qualifier) of a cell.
    pub fn map(&self, row: &[u8], qualifier: &[u8], ts: i64) -> Result<(Vec<u8>, Vec<u8>)> {
        match self {
            KeyMap::Bucket { unit, source, sep } => {
                let t = match source {
                    TimeSource::CellTs => ts,
                    TimeSource::ReversedDecimal => reversed_decimal(qualifier)?,
                    TimeSource::ReversedLong => reversed_long(qualifier)?,
                };
                Ok((
                    [row, sep, bucket(*unit, t)?.as_bytes()].concat(),
                    qualifier.to_vec(),
                ))
            }
            KeyMap::Tall { unit, sep } => {
                let (entity, rts) =
                    split_last(row, sep).ok_or_else(|| cell_err(row, "has no separator"))?;
                let t = if rts.len() == 20 {
                    reversed_decimal(rts)?
                } else if rts.len() == 8 {
                    reversed_long(rts)?
                } else {
                    return Err(cell_err(
                        row,
                        "ends in neither a 20-digit nor an 8-byte reversed timestamp",
                    ));
                };
                let mut q = rts.to_vec();
                if !qualifier.is_empty() {
                    q.extend_from_slice(sep);
                    q.extend_from_slice(qualifier);
                }
                Ok(([entity, sep, bucket(*unit, t)?.as_bytes()].concat(), q))
            }
            KeyMap::Rebucket { unit, sep } => {
                let (entity, _) =
                    split_last(row, sep).ok_or_else(|| cell_err(row, "has no separator"))?;
                Ok((
                    [entity, sep, bucket(*unit, ts)?.as_bytes()].concat(),
                    qualifier.to_vec(),
                ))
            }
            KeyMap::Salt { n, sep } => Ok((
                [salt(row, *n).as_bytes(), sep, row].concat(),
                qualifier.to_vec(),
            )),
            KeyMap::Template {
                row: rt,
                qualifier: qt,
            } => {
                let r = render(rt, row, qualifier, ts)?;
                let q = match qt {
                    Some(qt) => render(qt, row, qualifier, ts)?,
                    None => qualifier.to_vec(),
                };
                Ok((r, q))
            }
        }
    }
}

fn cell_err(row: &[u8], why: &str) -> Error {
    Error::invalid(format!(
        "row '{}' {why}",
        cellar_types::to_string_binary(row)
    ))
}

fn split_last<'a>(row: &'a [u8], sep: &[u8]) -> Option<(&'a [u8], &'a [u8])> {
    if sep.is_empty() || row.len() < sep.len() {
        return None;
    }
    (0..=row.len() - sep.len())
        .rev()
        .find(|&i| &row[i..i + sep.len()] == sep)
        .map(|i| (&row[..i], &row[i + sep.len()..]))
}

fn reversed_decimal(q: &[u8]) -> Result<i64> {
    let s = std::str::from_utf8(q)
        .ok()
        .filter(|s| s.len() == 20 && s.bytes().all(|b| b.is_ascii_digit()));
    let v: u64 = s.and_then(|s| s.parse().ok()).ok_or_else(|| {
        Error::invalid(format!(
            "'{}' is not a 20-digit reversed timestamp",
            cellar_types::to_string_binary(q)
        ))
    })?;
    i64::try_from(u64::MAX - v).map_err(|_| Error::invalid("a reversed timestamp out of range"))
}

fn reversed_long(q: &[u8]) -> Result<i64> {
    let b: [u8; 8] = q
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .filter(|_| q.len() == 8)
        .ok_or_else(|| {
            Error::invalid(format!(
                "'{}' is not an 8-byte reversed timestamp",
                cellar_types::to_string_binary(q)
            ))
        })?;
    Ok(i64::MAX - i64::from_be_bytes(b))
}

fn utc(ts: i64) -> Result<chrono::DateTime<Utc>> {
    match Utc.timestamp_millis_opt(ts) {
        chrono::LocalResult::Single(t) => Ok(t),
        _ => Err(Error::invalid(format!("timestamp {ts} is not a date"))),
    }
}

fn bucket(unit: Unit, ts: i64) -> Result<String> {
    Ok(utc(ts)?.format(unit.format()).to_string())
}

/// A row's salt: its CRC-32C modulo `n`, at least two digits wide.
fn salt(row: &[u8], n: u32) -> String {
    let width = n.saturating_sub(1).to_string().len().max(2);
    format!("{:0width$}", crc32c::crc32c(row) % n)
}

fn render(pieces: &[Piece], row: &[u8], qualifier: &[u8], ts: i64) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for p in pieces {
        match p {
            Piece::Text(t) => out.extend_from_slice(t),
            Piece::Row => out.extend_from_slice(row),
            Piece::Qualifier => out.extend_from_slice(qualifier),
            Piece::Ts(fmt) => out.extend_from_slice(utc(ts)?.format(fmt).to_string().as_bytes()),
            Piece::Part(sep, i) => {
                let fields: Vec<&[u8]> = if sep.is_empty() {
                    vec![row]
                } else {
                    let mut v = Vec::new();
                    let mut rest = row;
                    while let Some(pos) = (0..=rest.len().saturating_sub(sep.len())).find(|&k| {
                        rest.len() >= sep.len() && &rest[k..k + sep.len()] == sep.as_slice()
                    }) {
                        v.push(&rest[..pos]);
                        rest = &rest[pos + sep.len()..];
                    }
                    v.push(rest);
                    v
                };
                let f = fields
                    .get(*i)
                    .ok_or_else(|| cell_err(row, &format!("has no field {i}")))?;
                out.extend_from_slice(f);
            }
            Piece::Salt(n) => out.extend_from_slice(salt(row, *n).as_bytes()),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-12-02 07:00:00 UTC.
    const TS: i64 = 1_796_194_800_000;

    #[test]
    fn wide_rows_bucket_by_month_from_the_timestamp_or_the_qualifier() {
        let m = KeyMap::parse("bucket:month").unwrap();
        assert_eq!(
            m.map(b"user7", b"q", TS).unwrap(),
            (b"user7#202612".to_vec(), b"q".to_vec())
        );
        let rdec = format!("{:020}", u64::MAX - TS as u64);
        let m = KeyMap::parse("bucket:month:rdec").unwrap();
        let (r, q) = m.map(b"heavy", rdec.as_bytes(), 0).unwrap();
        assert_eq!((r, q), (b"heavy#202612".to_vec(), rdec.into_bytes()));
        let rlong = (i64::MAX - TS).to_be_bytes();
        let m = KeyMap::parse("bucket:day:rlong:_").unwrap();
        assert_eq!(m.map(b"u", &rlong, 0).unwrap().0, b"u_20261202".to_vec());
        assert!(m.map(b"u", b"short", 0).is_err());
    }

    #[test]
    fn tall_rebucket_and_salt() {
        let rdec = format!("{:020}", u64::MAX - TS as u64);
        let m = KeyMap::parse("tall:day").unwrap();
        let (r, q) = m.map(format!("dev1#{rdec}").as_bytes(), b"", 0).unwrap();
        assert_eq!(r, b"dev1#20261202".to_vec());
        assert_eq!(q, rdec.as_bytes().to_vec());
        let (_, q) = m.map(format!("dev1#{rdec}").as_bytes(), b"t", 0).unwrap();
        assert_eq!(q, format!("{rdec}#t").into_bytes());
        assert!(m.map(b"nosep", b"", 0).is_err());
        let m = KeyMap::parse("rebucket:month").unwrap();
        assert_eq!(
            m.map(b"dev1#20261202", b"q", TS).unwrap().0,
            b"dev1#202612".to_vec()
        );
        let m = KeyMap::parse("salt:16").unwrap();
        let (r, _) = m.map(b"user7", b"q", 0).unwrap();
        assert_eq!(&r[2..], b"#user7");
        assert_eq!(
            r,
            m.map(b"user7", b"x", 5).unwrap().0,
            "a row's salt is stable"
        );
    }

    #[test]
    fn templates() {
        let m =
            KeyMap::parse("row={part:#:1}|{ts:%Y-%m};qualifier={qualifier}@{part:#:0}").unwrap();
        let (r, q) = m.map(b"a#b", b"q", TS).unwrap();
        assert_eq!(r, b"b|2026-12".to_vec());
        assert_eq!(q, b"q@a".to_vec());
        assert!(m.map(b"nosep", b"q", TS).is_err());
        let m = KeyMap::parse("row={salt:4}-{row}").unwrap();
        assert_eq!(m.map(b"r", b"q", 0).unwrap().1, b"q".to_vec());
        for bad in [
            "nope",
            "bucket",
            "bucket:week",
            "salt:0",
            "row={what}",
            "row={row",
            "bucket:month:xx",
        ] {
            assert!(KeyMap::parse(bad).is_err(), "{bad}");
        }
    }
}
