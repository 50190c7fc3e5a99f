//! `cellar sizing`: a proposed layout's per-cell arithmetic, measured encodings, rows,
//! row widths, when the heaviest row crosses each limit, and the bucket to use.

use std::fmt::Write as _;

use clap::Args;

use cellar::sizing::{measured_bytes_per_cell, Layout, LayoutSizing, Proposal, LARGE_ROW};

#[derive(Args)]
pub struct SizingArgs {
    /// Bytes of an entity id (a sensor, a user).
    #[arg(long)]
    entity_bytes: u64,
    /// Bytes of one value.
    #[arg(long)]
    value_bytes: u64,
    /// Bytes of the family name.
    #[arg(long, default_value_t = 1)]
    family_bytes: u64,
    /// Bytes of a reversed timestamp (8 binary; 19 or 20 as decimal text).
    #[arg(long, default_value_t = 8)]
    ts_bytes: u64,
    /// Bytes of a tall row's column name.
    #[arg(long, default_value_t = 1)]
    column_bytes: u64,
    /// Bytes between the entity id and the rest of a row key.
    #[arg(long, default_value_t = 1)]
    separator_bytes: u64,
    /// Entities.
    #[arg(long, default_value_t = 1000)]
    entities: u64,
    /// Cells an average entity writes a day.
    #[arg(long, default_value_t = 1440.0)]
    cells_per_day: f64,
    /// Cells the heaviest entity writes a day (default: the average).
    #[arg(long)]
    heaviest_per_day: Option<f64>,
    /// Days cells are kept (the family's TTL); default: for ever.
    #[arg(long)]
    retention_days: Option<f64>,
    /// Layouts to size: tall, wide, bucket:UNIT (default: tall, wide and the bucket
    /// recommended).
    #[arg(long)]
    layout: Vec<String>,
    /// hbase.hregion.max.filesize.
    #[arg(long, default_value_t = 10 << 30)]
    region_size: u64,
}

fn bytes(v: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = v;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

fn when(limit: &str, d: Option<f64>) -> String {
    match d {
        None => format!("never {limit}"),
        Some(d) if d < 1.0 => format!("{limit} in {:.1} hours", d * 24.0),
        Some(d) => format!("{limit} in {d:.0} days"),
    }
}

fn size_name(b: u64) -> String {
    if b >= 1 << 30 && b.is_multiple_of(1 << 30) {
        format!("{} GiB", b >> 30)
    } else if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else {
        bytes(b as f64)
    }
}

fn report(p: &Proposal, s: &LayoutSizing, out: &mut String) {
    let _ = writeln!(
        out,
        "\n{}: row key {} B, qualifier {} B: {} B a cell; {:.0} rows, {:.0} cells a row ({:.0} in the heaviest)",
        s.layout.name(),
        s.row_bytes,
        s.qualifier_bytes,
        s.cell_bytes,
        s.rows,
        s.cells_per_row,
        s.heaviest_row_cells
    );
    let measured: Vec<String> = measured_bytes_per_cell(p, s.layout)
        .into_iter()
        .map(|(name, b)| format!("{name} {b:.1}"))
        .collect();
    let _ = writeln!(out, "  measured bytes a cell: {}", measured.join(", "));
    if s.heaviest_row_bytes_per_day > 0.0 {
        let cap = match s.heaviest_row_cap {
            Some(c) => format!(", at most {}", bytes(c)),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "  heaviest row grows {} a day{cap}: {}, {}, {}",
            bytes(s.heaviest_row_bytes_per_day),
            when("100 MiB", s.days_to_large),
            when("1 GiB", s.days_to_gib),
            when(
                &format!("the region size ({})", size_name(p.region_size)),
                s.days_to_region
            )
        );
    } else {
        let _ = writeln!(out, "  one cell a row: rows never grow");
    }
}

pub fn run(a: &SizingArgs) -> Result<(), String> {
    let p = Proposal {
        entity_bytes: a.entity_bytes,
        family_bytes: a.family_bytes,
        value_bytes: a.value_bytes,
        ts_bytes: a.ts_bytes,
        column_bytes: a.column_bytes,
        separator_bytes: a.separator_bytes,
        entities: a.entities,
        cells_per_day: a.cells_per_day,
        heaviest_per_day: a.heaviest_per_day.unwrap_or(a.cells_per_day),
        retention_days: a.retention_days,
        region_size: a.region_size,
    };
    let recommended = p.recommended_bucket();
    let layouts: Vec<Layout> = if a.layout.is_empty() {
        vec![
            Layout::Tall,
            Layout::Wide,
            Layout::Bucketed(recommended.map_or(cellar::sizing::Bucket::Hour, |r| r.0)),
        ]
    } else {
        a.layout
            .iter()
            .map(|l| Layout::parse(l).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} entities, {} cells a day each, {} for the heaviest; kept {}",
        p.entities,
        p.cells_per_day,
        p.heaviest_per_day,
        p.retention_days
            .map_or("for ever".to_string(), |d| format!("{d} days"))
    );
    for l in layouts {
        report(&p, &p.sizing(l), &mut out);
    }
    match recommended {
        Some((b, most)) => {
            let _ = writeln!(
                out,
                "\nrecommended: bucket:{} — the heaviest row holds at most {}, {:.0}x below 100 MiB",
                b.name(),
                bytes(most),
                LARGE_ROW as f64 / most.max(1.0)
            );
        }
        None => {
            let hour = p.sizing(Layout::Bucketed(cellar::sizing::Bucket::Hour));
            let _ = writeln!(
                out,
                "\nrecommended: no bucket — even an hour's row of the heaviest entity holds {}, within ten times of 100 MiB: go tall, or salt the heaviest entities",
                bytes(hour.heaviest_row_cap.unwrap_or(0.0))
            );
        }
    }
    print!("{out}");
    Ok(())
}
