//! Schema sizing (`cellar sizing`): the per-cell arithmetic HBase users do by hand for a
//! proposed layout, done for them — the KeyValue size of one cell (4 + 4 bytes of
//! lengths, a 2-byte row length, the row, a 1-byte family length, the family, the
//! qualifier, an 8-byte timestamp, a type byte, the value), the same measured by
//! encoding generated sample cells with every block encoding, rows and row widths, and
//! how long until the heaviest entity's row crosses 100 MiB, 1 GiB and the region size;
//! and the coarsest time bucket that keeps the heaviest row ten times below 100 MiB.
//!
//! Layouts of time-series data of one entity (a sensor, a user's inbox):
//! - `tall`: one row per reading, `entity # reversed-ts`; the qualifier is a column name;
//! - `wide`: one row per entity, a reversed-ts qualifier per reading;
//! - `bucket:UNIT`: one row per entity and time bucket, `entity # bucket`
//!   (`yyyy`, `yyyymm`, `yyyymmdd`, `yyyymmddhh`), a reversed-ts qualifier per reading.

mod measure;

pub use measure::measured_bytes_per_cell;

use cellar_api::{Error, Result};

/// 100 MiB: the large-row warning level (`cellar.largerow.warn.bytes`).
pub const LARGE_ROW: u64 = 100 << 20;
/// 1 GiB.
pub const GIB: u64 = 1 << 30;
/// Bytes of a KeyValue beyond its row, family, qualifier and value.
pub const CELL_OVERHEAD: u64 = 4 + 4 + 2 + 1 + 8 + 1;

/// A time bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bucket {
    Hour,
    Day,
    Month,
    Year,
}

impl Bucket {
    pub const ALL: [Bucket; 4] = [Bucket::Year, Bucket::Month, Bucket::Day, Bucket::Hour];

    pub fn parse(s: &str) -> Result<Bucket> {
        Ok(match s {
            "hour" => Bucket::Hour,
            "day" => Bucket::Day,
            "month" => Bucket::Month,
            "year" => Bucket::Year,
            _ => {
                return Err(Error::invalid(format!(
                    "unknown bucket '{s}' (year, month, day, hour)"
                )))
            }
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Bucket::Hour => "hour",
            Bucket::Day => "day",
            Bucket::Month => "month",
            Bucket::Year => "year",
        }
    }

    /// Characters of the bucket in a row key.
    pub fn key_len(self) -> u64 {
        match self {
            Bucket::Year => 4,
            Bucket::Month => 6,
            Bucket::Day => 8,
            Bucket::Hour => 10,
        }
    }

    /// The longest span of one bucket, in days.
    pub fn days(self) -> f64 {
        match self {
            Bucket::Hour => 1.0 / 24.0,
            Bucket::Day => 1.0,
            Bucket::Month => 31.0,
            Bucket::Year => 366.0,
        }
    }
}

/// How an entity's readings are laid out in rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Tall,
    Wide,
    Bucketed(Bucket),
}

impl Layout {
    pub fn parse(s: &str) -> Result<Layout> {
        match s {
            "tall" => Ok(Layout::Tall),
            "wide" => Ok(Layout::Wide),
            _ => match s.strip_prefix("bucket:") {
                Some(b) => Ok(Layout::Bucketed(Bucket::parse(b)?)),
                None => Err(Error::invalid(format!(
                    "unknown layout '{s}' (tall, wide, bucket:UNIT)"
                ))),
            },
        }
    }

    pub fn name(self) -> String {
        match self {
            Layout::Tall => "tall".into(),
            Layout::Wide => "wide".into(),
            Layout::Bucketed(b) => format!("bucket:{}", b.name()),
        }
    }
}

/// The proposed schema and workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// Bytes of an entity id, of the family name, of a value.
    pub entity_bytes: u64,
    pub family_bytes: u64,
    pub value_bytes: u64,
    /// Bytes of the reversed timestamp (8 binary, 19 or 20 as decimal text).
    pub ts_bytes: u64,
    /// Bytes of the column name a tall row's cell has.
    pub column_bytes: u64,
    /// Bytes between an entity id and what follows it in a row key.
    pub separator_bytes: u64,
    pub entities: u64,
    /// Cells written a day by an average entity and by the heaviest.
    pub cells_per_day: f64,
    pub heaviest_per_day: f64,
    /// Days kept (a TTL); None: kept for ever.
    pub retention_days: Option<f64>,
    /// `hbase.hregion.max.filesize`.
    pub region_size: u64,
}

/// One layout's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct LayoutSizing {
    pub layout: Layout,
    pub row_bytes: u64,
    pub qualifier_bytes: u64,
    /// The KeyValue size of one cell.
    pub cell_bytes: u64,
    /// Rows the table holds (at the retention, or after a year when kept for ever).
    pub rows: f64,
    /// Cells in the average and in the heaviest entity's fullest row.
    pub cells_per_row: f64,
    pub heaviest_row_cells: f64,
    /// Bytes the heaviest row grows by a day, and the most it can hold (None: no cap).
    pub heaviest_row_bytes_per_day: f64,
    pub heaviest_row_cap: Option<f64>,
    /// Days until the heaviest row crosses 100 MiB, 1 GiB and the region size (None:
    /// never).
    pub days_to_large: Option<f64>,
    pub days_to_gib: Option<f64>,
    pub days_to_region: Option<f64>,
}

impl Proposal {
    fn horizon_days(&self) -> f64 {
        self.retention_days.unwrap_or(365.0)
    }

    /// The figures of one layout.
    pub fn sizing(&self, layout: Layout) -> LayoutSizing {
        let (row_bytes, qualifier_bytes) = match layout {
            Layout::Tall => (
                self.entity_bytes + self.separator_bytes + self.ts_bytes,
                self.column_bytes,
            ),
            Layout::Wide => (self.entity_bytes, self.ts_bytes),
            Layout::Bucketed(b) => (
                self.entity_bytes + self.separator_bytes + b.key_len(),
                self.ts_bytes,
            ),
        };
        let cell_bytes =
            CELL_OVERHEAD + row_bytes + self.family_bytes + qualifier_bytes + self.value_bytes;
        let horizon = self.horizon_days();
        let entities = self.entities as f64;
        // How many days of one entity a row holds (None: all of them).
        let span = match layout {
            Layout::Tall => Some(0.0),
            Layout::Wide => self.retention_days,
            Layout::Bucketed(b) => Some(match self.retention_days {
                Some(r) => b.days().min(r),
                None => b.days(),
            }),
        };
        let (rows, cells_per_row, heaviest_row_cells) = match layout {
            Layout::Tall => (entities * self.cells_per_day * horizon, 1.0, 1.0),
            Layout::Wide => (
                entities,
                self.cells_per_day * horizon,
                self.heaviest_per_day * horizon,
            ),
            Layout::Bucketed(b) => {
                let s = span.unwrap_or(b.days());
                (
                    entities * (horizon / s).ceil().max(1.0),
                    self.cells_per_day * s,
                    self.heaviest_per_day * s,
                )
            }
        };
        let daily = match layout {
            Layout::Tall => 0.0,
            _ => self.heaviest_per_day * cell_bytes as f64,
        };
        let cap = match layout {
            Layout::Tall => Some(cell_bytes as f64),
            _ => span.map(|d| d * daily),
        };
        let days_to = |limit: u64| -> Option<f64> {
            let limit = limit as f64;
            if daily <= 0.0 || cap.is_some_and(|c| c < limit) {
                None
            } else {
                Some(limit / daily)
            }
        };
        LayoutSizing {
            layout,
            row_bytes,
            qualifier_bytes,
            cell_bytes,
            rows,
            cells_per_row,
            heaviest_row_cells,
            heaviest_row_bytes_per_day: daily,
            heaviest_row_cap: cap,
            days_to_large: days_to(LARGE_ROW),
            days_to_gib: days_to(GIB),
            days_to_region: days_to(self.region_size),
        }
    }

    /// The coarsest bucket whose heaviest row stays ten times below 100 MiB, with that
    /// row's most bytes; None when even an hour's row is too big (salt or go tall).
    pub fn recommended_bucket(&self) -> Option<(Bucket, f64)> {
        Bucket::ALL.into_iter().find_map(|b| {
            let s = self.sizing(Layout::Bucketed(b));
            let most = s.heaviest_row_cap.unwrap_or(f64::INFINITY);
            (most * 10.0 <= LARGE_ROW as f64).then_some((b, most))
        })
    }
}
