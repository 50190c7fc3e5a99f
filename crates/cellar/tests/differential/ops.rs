//! The operations of a differential run, as plain data (so a failing sequence prints
//! as something a person can replay), and their seeded random generation. Rows,
//! families, qualifiers and values come from small sets so operations collide: the
//! same cells are written, deleted, counted and read again and again.

use cellar_api::{CompareOp, KeepDeletedCells};
use rand::rngs::SmallRng as StdRng;
use rand::{Rng, SeedableRng};

use super::filters::{self, random_filter, Filter};

pub const ROWS: u8 = 8;
pub const FAMILIES: [&str; 2] = ["a", "b"];
pub const QUALIFIERS: u8 = 4;
/// Explicit timestamps are 1..=MAX_TS; server timestamps are the clock's (far above).
pub const MAX_TS: i64 = 30;

pub fn row(r: u8) -> String {
    format!("r{r}")
}

pub fn qual(q: u8) -> String {
    format!("q{q}")
}

pub fn value(v: u8) -> String {
    format!("v{v}")
}

/// One cell of a put: family index, qualifier, explicit timestamp or the server's.
#[derive(Debug, Clone)]
pub struct PutCell {
    pub family: u8,
    pub qualifier: u8,
    pub ts: Option<i64>,
    pub value: u8,
}

#[derive(Debug, Clone)]
pub enum DeleteKind {
    /// The whole row, up to the timestamp.
    Row,
    /// Every column of a family (DeleteFamily).
    Family(u8),
    /// One version of every column of a family (DeleteFamilyVersion; needs a timestamp).
    FamilyVersion(u8),
    /// Every version of a column (DeleteColumn).
    Columns(u8, u8),
    /// The newest version of a column, or the one at the timestamp (Delete).
    Column(u8, u8),
}

/// Which columns a read asks for.
#[derive(Debug, Clone)]
pub enum Columns {
    All,
    Family(u8),
    Column(u8, u8),
}

#[derive(Debug, Clone)]
pub struct Read {
    pub columns: Columns,
    pub versions: u32,
    pub time_range: Option<(i64, i64)>,
    pub filter: Option<Filter>,
}

#[derive(Debug, Clone)]
pub enum Op {
    Put {
        row: u8,
        cells: Vec<PutCell>,
    },
    Delete {
        row: u8,
        kind: DeleteKind,
        ts: Option<i64>,
    },
    /// A counter column (`n`) or, now and then, a column holding text.
    Increment {
        row: u8,
        family: u8,
        qualifier: String,
        by: i64,
    },
    Append {
        row: u8,
        family: u8,
        qualifier: u8,
        value: u8,
    },
    CheckAndPut {
        row: u8,
        family: u8,
        qualifier: u8,
        op: CompareOp,
        /// `None`: the column must be absent.
        expected: Option<u8>,
        put: PutCell,
    },
    /// A put and a delete applied atomically to one row.
    RowMutations {
        row: u8,
        put: PutCell,
        delete: (u8, u8),
    },
    /// Puts over several rows at once (MultiRowMutationService).
    MultiRow {
        rows: Vec<(u8, PutCell)>,
    },
    Get {
        row: u8,
        read: Read,
    },
    Scan {
        start: Option<u8>,
        stop: Option<u8>,
        reversed: bool,
        /// Delete markers and the versions they mask too.
        raw: bool,
        batch: Option<u32>,
        caching: Option<u32>,
        limit: Option<u64>,
        max_result_size: Option<u64>,
        allow_partial: bool,
        read: Read,
    },
    Flush,
    Compact {
        major: bool,
    },
    /// Splits the region holding the row at it (then compacts the daughters, so a
    /// later split or merge does not meet reference files).
    Split {
        at: u8,
    },
    /// Merges the region at this place (in row order) with the next, if there is one.
    Merge {
        index: u8,
    },
    Disable,
    Enable,
    /// Changes a family's settings (`alter`).
    Alter {
        family: u8,
        versions: u32,
        min_versions: u32,
        /// Seconds; `None`: FOREVER.
        ttl: Option<i32>,
        keep_deleted: KeepDeletedCells,
    },
}

impl Op {
    /// The read's filter, for shrinking.
    pub fn filter_mut(&mut self) -> Option<&mut Option<Filter>> {
        match self {
            Op::Get { read, .. } | Op::Scan { read, .. } => Some(&mut read.filter),
            _ => None,
        }
    }

    /// Whether the server gives this operation its timestamp (so runs space them out
    /// to land on distinct milliseconds on both servers).
    pub fn takes_server_time(&self) -> bool {
        match self {
            Op::Put { cells, .. } => cells.iter().any(|c| c.ts.is_none()),
            Op::Delete { ts, .. } => ts.is_none(),
            Op::Increment { .. } | Op::Append { .. } => true,
            Op::CheckAndPut { put, .. } => put.ts.is_none(),
            // Its delete (DeleteColumn, no timestamp) always takes the server's clock.
            Op::RowMutations { .. } => true,
            Op::MultiRow { rows } => rows.iter().any(|(_, c)| c.ts.is_none()),
            _ => false,
        }
    }
}

fn put_cell(rng: &mut StdRng) -> PutCell {
    PutCell {
        family: rng.random_range(0..FAMILIES.len() as u8),
        qualifier: rng.random_range(0..QUALIFIERS),
        ts: (!rng.random_bool(0.2)).then(|| rng.random_range(1..=MAX_TS)),
        value: rng.random_range(0..20),
    }
}

fn time_range(rng: &mut StdRng) -> Option<(i64, i64)> {
    rng.random_bool(0.25).then(|| {
        let a = rng.random_range(0..=MAX_TS);
        (a, a + rng.random_range(1..=MAX_TS))
    })
}

fn read(rng: &mut StdRng, filters: bool) -> Read {
    let f = rng.random_range(0..FAMILIES.len() as u8);
    Read {
        columns: match rng.random_range(0..6) {
            0 => Columns::Family(f),
            1 => Columns::Column(f, rng.random_range(0..QUALIFIERS)),
            _ => Columns::All,
        },
        versions: [1, 1, 2, 3, 10][rng.random_range(0..5)],
        time_range: time_range(rng),
        filter: (filters && rng.random_bool(0.3)).then(|| random_filter(rng, 2)),
    }
}

/// `n` operations from `seed`; `filters` adds random filter trees to reads. A
/// Disable is followed by an Enable one to three operations later.
pub fn generate(seed: u64, n: usize, filters: bool) -> Vec<Op> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut enable_in: Option<u32> = None;
    (0..n)
        .map(|_| {
            if let Some(k) = enable_in.as_mut() {
                if *k == 0 {
                    enable_in = None;
                    return Op::Enable;
                }
                *k -= 1;
            }
            let row = rng.random_range(0..ROWS);
            let fam = rng.random_range(0..FAMILIES.len() as u8);
            let q = rng.random_range(0..QUALIFIERS);
            match rng.random_range(0..107) {
                0..=29 => Op::Put {
                    row,
                    cells: (0..rng.random_range(1..=3))
                        .map(|_| put_cell(&mut rng))
                        .collect(),
                },
                30..=41 => {
                    let kind = match rng.random_range(0..5) {
                        0 => DeleteKind::Row,
                        1 => DeleteKind::Family(fam),
                        2 => DeleteKind::FamilyVersion(fam),
                        3 => DeleteKind::Columns(fam, q),
                        _ => DeleteKind::Column(fam, q),
                    };
                    let needs_ts = matches!(kind, DeleteKind::FamilyVersion(_));
                    let ts =
                        (needs_ts || rng.random_bool(0.6)).then(|| rng.random_range(1..=MAX_TS));
                    Op::Delete { row, kind, ts }
                }
                42..=46 => Op::Increment {
                    row,
                    family: fam,
                    qualifier: if rng.random_bool(0.85) {
                        "n".to_string()
                    } else {
                        qual(q)
                    },
                    by: rng.random_range(-3..=5),
                },
                47..=49 => Op::Append {
                    row,
                    family: fam,
                    qualifier: q,
                    value: rng.random_range(0..20),
                },
                50..=54 => Op::CheckAndPut {
                    row,
                    family: fam,
                    qualifier: q,
                    op: filters::op(&mut rng),
                    expected: (!rng.random_bool(0.25)).then(|| rng.random_range(0..20)),
                    put: put_cell(&mut rng),
                },
                55..=57 => Op::RowMutations {
                    row,
                    put: put_cell(&mut rng),
                    delete: (fam, rng.random_range(0..QUALIFIERS)),
                },
                58..=59 => Op::MultiRow {
                    rows: (0..rng.random_range(2..=3))
                        .map(|_| (rng.random_range(0..ROWS), put_cell(&mut rng)))
                        .collect(),
                },
                60..=74 => Op::Get {
                    row,
                    read: read(&mut rng, filters),
                },
                75..=95 => {
                    let a = rng.random_range(0..ROWS);
                    let b = rng.random_range(0..=ROWS);
                    Op::Scan {
                        start: rng.random_bool(0.5).then_some(a),
                        stop: rng.random_bool(0.4).then_some(b),
                        reversed: rng.random_bool(0.25),
                        raw: rng.random_bool(0.12),
                        batch: rng.random_bool(0.2).then(|| rng.random_range(1..=3)),
                        caching: rng.random_bool(0.3).then(|| rng.random_range(1..=4)),
                        limit: rng.random_bool(0.2).then(|| rng.random_range(1..=4)),
                        max_result_size: rng.random_bool(0.15).then(|| rng.random_range(1..=200)),
                        allow_partial: rng.random_bool(0.15),
                        read: read(&mut rng, filters),
                    }
                }
                96..=97 => Op::Flush,
                98..=99 => Op::Compact {
                    major: rng.random_bool(0.7),
                },
                100..=101 => Op::Split {
                    at: rng.random_range(1..ROWS),
                },
                102 => Op::Merge {
                    index: rng.random_range(0..3),
                },
                103 if enable_in.is_none() => {
                    enable_in = Some(rng.random_range(0..3));
                    Op::Disable
                }
                _ => {
                    let versions = rng.random_range(1..=5);
                    Op::Alter {
                        family: fam,
                        versions,
                        // Now and then more than VERSIONS: HBase refuses that.
                        min_versions: [0, 0, 1, 2, 6][rng.random_range(0..5)],
                        ttl: [None, Some(86_400), Some(31_536_000)][rng.random_range(0..3)],
                        keep_deleted: [
                            KeepDeletedCells::False,
                            KeepDeletedCells::True,
                            KeepDeletedCells::Ttl,
                        ][rng.random_range(0..3)],
                    }
                }
            }
        })
        .collect()
}
