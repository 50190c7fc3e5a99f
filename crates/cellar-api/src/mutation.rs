//! What a write asks for: Put, Delete (four marker kinds), Increment, Append, and
//! RowMutations (several of one row, atomically), with HBase's client-side meaning.

use cellar_types::{CellType, LATEST_TIMESTAMP};

use crate::durability::Durability;
use crate::read::TimeRange;

/// A cell of a Put: (family, qualifier, timestamp, value).
pub type PutCell = (Vec<u8>, Vec<u8>, i64, Vec<u8>);

/// Writes cells of one row.
#[derive(Debug, Clone, PartialEq)]
pub struct Put {
    pub row: Vec<u8>,
    /// Timestamp for cells added without one (LATEST = server time).
    pub ts: i64,
    pub cells: Vec<PutCell>,
    pub durability: Durability,
}

impl Put {
    pub fn new(row: impl Into<Vec<u8>>) -> Put {
        Put {
            row: row.into(),
            ts: LATEST_TIMESTAMP,
            cells: Vec::new(),
            durability: Durability::UseDefault,
        }
    }

    pub fn with_timestamp(mut self, ts: i64) -> Put {
        self.ts = ts;
        self
    }

    pub fn add_column(
        mut self,
        family: impl Into<Vec<u8>>,
        qualifier: impl Into<Vec<u8>>,
        value: impl Into<Vec<u8>>,
    ) -> Put {
        let ts = self.ts;
        self.cells
            .push((family.into(), qualifier.into(), ts, value.into()));
        self
    }

    pub fn add_column_at(
        mut self,
        family: impl Into<Vec<u8>>,
        qualifier: impl Into<Vec<u8>>,
        ts: i64,
        value: impl Into<Vec<u8>>,
    ) -> Put {
        self.cells
            .push((family.into(), qualifier.into(), ts, value.into()));
        self
    }

    pub fn durability(mut self, d: Durability) -> Put {
        self.durability = d;
        self
    }
}

/// One marker of a Delete.
#[derive(Debug, Clone, PartialEq)]
pub struct DeleteSpec {
    pub family: Vec<u8>,
    pub qualifier: Vec<u8>,
    pub ts: i64,
    pub kind: CellType,
}

/// Deletes cells of one row. With no markers added, deletes every family of the row at
/// the Delete's timestamp.
#[derive(Debug, Clone, PartialEq)]
pub struct Delete {
    pub row: Vec<u8>,
    pub ts: i64,
    pub specs: Vec<DeleteSpec>,
    pub durability: Durability,
}

impl Delete {
    pub fn new(row: impl Into<Vec<u8>>) -> Delete {
        Delete {
            row: row.into(),
            ts: LATEST_TIMESTAMP,
            specs: Vec::new(),
            durability: Durability::UseDefault,
        }
    }

    /// `new Delete(row, ts)`: markers added without a timestamp use `ts`.
    pub fn with_timestamp(mut self, ts: i64) -> Delete {
        self.ts = ts;
        self
    }

    fn push(mut self, family: &[u8], qualifier: &[u8], ts: i64, kind: CellType) -> Delete {
        self.specs.push(DeleteSpec {
            family: family.to_vec(),
            qualifier: qualifier.to_vec(),
            ts,
            kind,
        });
        self
    }

    /// `addColumn(f, q)`: the newest version of the column.
    pub fn add_column(self, family: impl AsRef<[u8]>, qualifier: impl AsRef<[u8]>) -> Delete {
        let ts = self.ts;
        self.push(family.as_ref(), qualifier.as_ref(), ts, CellType::Delete)
    }

    /// `addColumn(f, q, ts)`: exactly that version.
    pub fn add_column_version(
        self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        ts: i64,
    ) -> Delete {
        self.push(family.as_ref(), qualifier.as_ref(), ts, CellType::Delete)
    }

    /// `addColumns(f, q)`: every version of the column.
    pub fn add_columns(self, family: impl AsRef<[u8]>, qualifier: impl AsRef<[u8]>) -> Delete {
        let ts = self.ts;
        self.push(
            family.as_ref(),
            qualifier.as_ref(),
            ts,
            CellType::DeleteColumn,
        )
    }

    /// `addColumns(f, q, ts)`: every version at or before `ts`.
    pub fn add_columns_before(
        self,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        ts: i64,
    ) -> Delete {
        self.push(
            family.as_ref(),
            qualifier.as_ref(),
            ts,
            CellType::DeleteColumn,
        )
    }

    /// `addFamily(f)`: every cell of the family.
    pub fn add_family(self, family: impl AsRef<[u8]>) -> Delete {
        let ts = self.ts;
        self.push(family.as_ref(), b"", ts, CellType::DeleteFamily)
    }

    /// `addFamily(f, ts)`: every cell of the family at or before `ts`.
    pub fn add_family_before(self, family: impl AsRef<[u8]>, ts: i64) -> Delete {
        self.push(family.as_ref(), b"", ts, CellType::DeleteFamily)
    }

    /// `addFamilyVersion(f, ts)`: every column's version at exactly `ts`.
    pub fn add_family_version(self, family: impl AsRef<[u8]>, ts: i64) -> Delete {
        self.push(family.as_ref(), b"", ts, CellType::DeleteFamilyVersion)
    }

    pub fn durability(mut self, d: Durability) -> Delete {
        self.durability = d;
        self
    }
}

/// Adds to 8-byte big-endian counters.
#[derive(Debug, Clone, PartialEq)]
pub struct Increment {
    pub row: Vec<u8>,
    pub columns: Vec<(Vec<u8>, Vec<u8>, i64)>,
    pub time_range: TimeRange,
    pub return_results: bool,
    pub durability: Durability,
}

impl Increment {
    pub fn new(row: impl Into<Vec<u8>>) -> Increment {
        Increment {
            row: row.into(),
            columns: Vec::new(),
            time_range: TimeRange::ALL,
            return_results: true,
            durability: Durability::UseDefault,
        }
    }

    pub fn add_column(
        mut self,
        family: impl Into<Vec<u8>>,
        qualifier: impl Into<Vec<u8>>,
        amount: i64,
    ) -> Increment {
        self.columns.push((family.into(), qualifier.into(), amount));
        self
    }
}

/// Appends bytes to column values.
#[derive(Debug, Clone, PartialEq)]
pub struct Append {
    pub row: Vec<u8>,
    pub columns: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)>,
    pub return_results: bool,
    pub durability: Durability,
}

impl Append {
    pub fn new(row: impl Into<Vec<u8>>) -> Append {
        Append {
            row: row.into(),
            columns: Vec::new(),
            return_results: true,
            durability: Durability::UseDefault,
        }
    }

    pub fn add_column(
        mut self,
        family: impl Into<Vec<u8>>,
        qualifier: impl Into<Vec<u8>>,
        value: impl Into<Vec<u8>>,
    ) -> Append {
        self.columns
            .push((family.into(), qualifier.into(), value.into()));
        self
    }
}

/// Any single-row write.
#[derive(Debug, Clone, PartialEq)]
pub enum Mutation {
    Put(Put),
    Delete(Delete),
    Increment(Increment),
    Append(Append),
}

impl Mutation {
    pub fn row(&self) -> &[u8] {
        match self {
            Mutation::Put(p) => &p.row,
            Mutation::Delete(d) => &d.row,
            Mutation::Increment(i) => &i.row,
            Mutation::Append(a) => &a.row,
        }
    }

    pub fn durability(&self) -> Durability {
        match self {
            Mutation::Put(p) => p.durability,
            Mutation::Delete(d) => d.durability,
            Mutation::Increment(i) => i.durability,
            Mutation::Append(a) => a.durability,
        }
    }
}

impl From<Put> for Mutation {
    fn from(p: Put) -> Self {
        Mutation::Put(p)
    }
}
impl From<Delete> for Mutation {
    fn from(d: Delete) -> Self {
        Mutation::Delete(d)
    }
}
impl From<Increment> for Mutation {
    fn from(i: Increment) -> Self {
        Mutation::Increment(i)
    }
}
impl From<Append> for Mutation {
    fn from(a: Append) -> Self {
        Mutation::Append(a)
    }
}

/// Several mutations of one row, applied atomically (`RowMutations`).
#[derive(Debug, Clone, PartialEq)]
pub struct RowMutations {
    pub row: Vec<u8>,
    pub mutations: Vec<Mutation>,
}

impl RowMutations {
    pub fn new(row: impl Into<Vec<u8>>) -> RowMutations {
        RowMutations {
            row: row.into(),
            mutations: Vec::new(),
        }
    }

    /// Adds a mutation; it must be of the same row.
    pub fn with(mut self, m: impl Into<Mutation>) -> RowMutations {
        self.mutations.push(m.into());
        self
    }
}
