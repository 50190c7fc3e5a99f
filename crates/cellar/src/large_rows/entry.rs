//! One tracked row of `cellar:large_rows` and its encoding: the row key is the table,
//! a zero byte, the row's length (4 bytes) and the row, then the family; the columns
//! of family `r` are text, so `scan 'cellar:large_rows'` reads plainly.

use cellar_api::{Put, RowResult};

/// The system table.
pub const TABLE: &str = "cellar:large_rows";
/// Its one family.
pub const FAMILY: &[u8] = b"r";
/// Points of history kept per row.
pub const HISTORY: usize = 64;

/// A tracked row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub table: String,
    pub row: Vec<u8>,
    pub family: Vec<u8>,
    /// The region that last reported it (encoded name).
    pub region: String,
    pub bytes: u64,
    pub cells: u64,
    /// Delete markers among the cells, and whether they are a build-up
    /// (`cellar.tombstone.warn.cells`).
    pub deletes: u64,
    pub tombstones: bool,
    /// First and last seen (ms).
    pub first: i64,
    pub last: i64,
    /// `watch` or `warn` (`below` for a row kept for its delete markers alone).
    pub level: String,
    /// (time ms, bytes, cells), oldest first.
    pub history: Vec<(i64, u64, u64)>,
}

/// The system table's row key of (table, row, family).
pub fn key(table: &str, row: &[u8], family: &[u8]) -> Vec<u8> {
    let mut k = table.as_bytes().to_vec();
    k.push(0);
    k.extend_from_slice(&(row.len() as u32).to_be_bytes());
    k.extend_from_slice(row);
    k.extend_from_slice(family);
    k
}

fn text(r: &RowResult, q: &str) -> Option<String> {
    r.value(FAMILY, q.as_bytes())
        .map(|v| String::from_utf8_lossy(v).into_owned())
}

fn num<T: std::str::FromStr>(r: &RowResult, q: &str) -> Option<T> {
    text(r, q)?.parse().ok()
}

impl Entry {
    pub fn key(&self) -> Vec<u8> {
        key(&self.table, &self.row, &self.family)
    }

    /// The entry a system-table row holds; None for a row that is not one.
    pub fn from_result(r: &RowResult) -> Option<Entry> {
        let history = text(r, "history")
            .unwrap_or_default()
            .split(';')
            .filter_map(|p| {
                let mut f = p.split(':');
                Some((
                    f.next()?.parse().ok()?,
                    f.next()?.parse().ok()?,
                    f.next()?.parse().ok()?,
                ))
            })
            .collect();
        Some(Entry {
            table: text(r, "table")?,
            row: r.value(FAMILY, b"row")?.to_vec(),
            family: r.value(FAMILY, b"family")?.to_vec(),
            region: text(r, "region").unwrap_or_default(),
            bytes: num(r, "bytes")?,
            cells: num(r, "cells")?,
            deletes: num(r, "deletes").unwrap_or(0),
            tombstones: text(r, "tombstones").is_some_and(|t| t == "true"),
            first: num(r, "first")?,
            last: num(r, "last")?,
            level: text(r, "level").unwrap_or_default(),
            history,
        })
    }

    pub fn to_put(&self) -> Put {
        let history: Vec<String> = self
            .history
            .iter()
            .map(|(t, b, c)| format!("{t}:{b}:{c}"))
            .collect();
        Put::new(self.key())
            .add_column(FAMILY, "table", self.table.as_str())
            .add_column(FAMILY, "row", self.row.clone())
            .add_column(FAMILY, "family", self.family.clone())
            .add_column(FAMILY, "region", self.region.as_str())
            .add_column(FAMILY, "bytes", self.bytes.to_string())
            .add_column(FAMILY, "cells", self.cells.to_string())
            .add_column(FAMILY, "deletes", self.deletes.to_string())
            .add_column(FAMILY, "tombstones", self.tombstones.to_string())
            .add_column(FAMILY, "first", self.first.to_string())
            .add_column(FAMILY, "last", self.last.to_string())
            .add_column(FAMILY, "level", self.level.as_str())
            .add_column(FAMILY, "history", history.join(";"))
    }

    /// Adds a point to the history: a change of size appends (the newest point is
    /// replaced when under an hour old, so a burst of flushes is one point); past
    /// [`HISTORY`] points, every other point of the older half goes, so the history
    /// keeps its whole span at a coarser grain.
    pub fn observe(&mut self, at: i64, bytes: u64, cells: u64) {
        self.bytes = bytes;
        self.cells = cells;
        self.last = at;
        match self.history.last().copied() {
            Some((_, b, c)) if b == bytes && c == cells => return,
            Some((t, _, _)) if at - t < 3_600_000 && self.history.len() > 1 => {
                self.history.pop();
            }
            _ => {}
        }
        self.history.push((at, bytes, cells));
        if self.history.len() > HISTORY {
            let half = self.history.len() / 2;
            let mut i = 0;
            self.history.retain(|_| {
                i += 1;
                i > half || i % 2 == 1
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_is_bounded_and_keeps_its_span() {
        let mut e = Entry {
            table: "t".into(),
            row: b"r".to_vec(),
            family: b"f".to_vec(),
            region: String::new(),
            bytes: 0,
            cells: 0,
            deletes: 0,
            tombstones: false,
            first: 0,
            last: 0,
            level: "watch".into(),
            history: Vec::new(),
        };
        for day in 0..400i64 {
            e.observe(day * 86_400_000, day as u64 * 1000, day as u64);
        }
        assert!(e.history.len() <= HISTORY);
        assert_eq!(e.history[0].0, 0);
        assert_eq!(e.history.last().unwrap().0, 399 * 86_400_000);
        // Within the hour, the newest point moves instead of piling up.
        let n = e.history.len();
        e.observe(399 * 86_400_000 + 1000, 400_000, 400);
        e.observe(399 * 86_400_000 + 2000, 401_000, 401);
        assert_eq!(e.history.len(), n);
        assert_eq!(e.history.last().unwrap().1, 401_000);
    }
}
