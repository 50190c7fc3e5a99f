//! `-s`: HBase's key-value statistics, in constant memory. Val length is recorded per
//! cell; per row, the key length of its last cell, its bytes (serialized cell sizes as
//! HBase counts them: no tag bytes for a cell without tags) and its cells; and the
//! biggest row by bytes.

use std::io::{self, Write};

use cellar_types::{to_string_binary, Cell};
use hdrhistogram::Histogram;

/// Exact count, extremes and moments, plus an hdr histogram for the quantiles.
struct Dist {
    hist: Histogram<u64>,
    count: u64,
    min: u64,
    max: u64,
    sum: f64,
    sum_sq: f64,
}

impl Dist {
    fn new() -> Result<Dist, hdrhistogram::CreationError> {
        // Auto-resizing, 3 significant digits: constant memory for any value range.
        let mut hist = Histogram::new(3)?;
        hist.auto(true);
        Ok(Dist {
            hist,
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0.0,
            sum_sq: 0.0,
        })
    }

    fn record(&mut self, v: u64) {
        if self.hist.record(v).is_err() {
            self.hist.saturating_record(v);
        }
        self.count += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v as f64;
        self.sum_sq += (v as f64) * (v as f64);
    }

    fn mean(&self) -> f64 {
        self.sum / self.count.max(1) as f64
    }

    fn stddev(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let n = self.count as f64;
        ((self.sum_sq - self.sum * self.sum / n) / (n - 1.0))
            .max(0.0)
            .sqrt()
    }

    /// A quantile, clamped to the exact extremes.
    fn quantile(&self, q: f64) -> u64 {
        self.hist.value_at_quantile(q).clamp(self.min, self.max)
    }
}

/// Streaming collector.
pub struct KeyValueStats {
    with_tags: bool,
    key_len: Dist,
    val_len: Dist,
    row_bytes: Dist,
    row_cells: Dist,
    cur_row: Option<Vec<u8>>,
    cur_bytes: u64,
    cur_cells: u64,
    cur_key_len: u64,
    biggest: Option<(Vec<u8>, u64, u64)>,
}

/// The finished statistics.
pub struct Report {
    stats: KeyValueStats,
}

impl KeyValueStats {
    pub fn new(with_tags: bool) -> Result<KeyValueStats, hdrhistogram::CreationError> {
        Ok(KeyValueStats {
            with_tags,
            key_len: Dist::new()?,
            val_len: Dist::new()?,
            row_bytes: Dist::new()?,
            row_cells: Dist::new()?,
            cur_row: None,
            cur_bytes: 0,
            cur_cells: 0,
            cur_key_len: 0,
            biggest: None,
        })
    }

    pub fn collect(&mut self, cell: &Cell) {
        if self.cur_row.as_deref() != Some(cell.row()) {
            self.end_row();
            self.cur_row = Some(cell.row().to_vec());
        }
        self.val_len.record(cell.value().len() as u64);
        // As HBase's Cell.getSerializedSize of a cell read from a file: the tags length
        // and tags count only when the cell has tags (KeyValue's data structure size).
        self.cur_bytes += cell.serialized_size(self.with_tags && !cell.tags().is_empty()) as u64;
        self.cur_cells += 1;
        self.cur_key_len = cell.key_len() as u64;
    }

    fn end_row(&mut self) {
        let Some(row) = self.cur_row.take() else {
            return;
        };
        self.key_len.record(self.cur_key_len);
        self.row_bytes.record(self.cur_bytes);
        self.row_cells.record(self.cur_cells);
        if self
            .biggest
            .as_ref()
            .is_none_or(|(_, b, _)| self.cur_bytes > *b)
        {
            self.biggest = Some((row, self.cur_bytes, self.cur_cells));
        }
        self.cur_bytes = 0;
        self.cur_cells = 0;
    }

    pub fn finish(mut self) -> Report {
        self.end_row();
        Report { stats: self }
    }
}

fn print_histogram(out: &mut dyn Write, name: &str, h: &Dist) -> io::Result<()> {
    writeln!(out, "{name}: ")?;
    writeln!(out, "{:>18} = {}", "min", h.min)?;
    writeln!(out, "{:>18} = {}", "max", h.max)?;
    writeln!(out, "{:>18} = {:.2}", "mean", h.mean())?;
    writeln!(out, "{:>18} = {:.2}", "stddev", h.stddev())?;
    writeln!(out, "{:>18} = {:.2}", "median", h.quantile(0.5) as f64)?;
    for (label, q) in [
        ("75%", 0.75),
        ("95%", 0.95),
        ("98%", 0.98),
        ("99%", 0.99),
        ("99.9%", 0.999),
    ] {
        writeln!(out, "{:>18} <= {:.2}", label, h.quantile(q) as f64)?;
    }
    writeln!(out, "{:>18} = {}", "count", h.count)
}

impl Report {
    pub fn print(&self, out: &mut dyn Write) -> io::Result<()> {
        let s = &self.stats;
        if s.val_len.count == 0 {
            return writeln!(out, "Stats:\n no data available for statistics");
        }
        writeln!(out, "Stats:")?;
        print_histogram(out, "Key length", &s.key_len)?;
        print_histogram(out, "Val length", &s.val_len)?;
        print_histogram(out, "Row size (bytes)", &s.row_bytes)?;
        print_histogram(out, "Row size (columns)", &s.row_cells)?;
        if let Some((row, bytes, cells)) = &s.biggest {
            writeln!(out, "Key of biggest row: {}", to_string_binary(row))?;
            writeln!(out, "Size of biggest row (bytes): {bytes}")?;
            writeln!(out, "Size of biggest row (columns): {cells}")?;
        }
        Ok(())
    }
}
