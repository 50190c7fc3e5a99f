//! The seeds' scenarios, run on Cellar and (feature `rocksdb`) RocksDB in one run.
//! Sensor fleet: devices reporting an 8-byte reading every 10 s, in three layouts (tall
//! `dev#reversed-ts`; wide, one row per device; bucketed wide `dev#day`) with each
//! store's block encodings: ingest rate, bytes per cell on disk, "latest 100 readings"
//! and "one hour of one day" latency, regions at the end. Messaging inbox: 600-byte
//! messages, light users and one heavy user: whole-row read vs a cursor-paged read vs a
//! month-bucketed read, the heavy row's size over time, and the day a whole-row Get
//! hits RowTooBigException under a lowered `hbase.table.max.rowsize`.

#[cfg(feature = "rocksdb")]
mod rocks;
mod store;
mod summary;
mod timing;

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use store::{CellarEngine, WholeRow, WideEngine, WideTable};
use timing::interleaved_micros;

/// Runs `one` `runs` times, each in a fresh directory under `dir` removed after it,
/// returning every run's figures.
fn repeat<T>(
    dir: &Path,
    runs: usize,
    mut one: impl FnMut(&Path) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let mut all = Vec::new();
    for run in 0..runs.max(1) {
        let d = dir.join(format!("run{run}"));
        let _ = std::fs::remove_dir_all(&d);
        let figures = one(&d);
        let _ = std::fs::remove_dir_all(&d);
        all.push(figures?);
    }
    Ok(all)
}

/// Opens the engines named in `targets` (cellar, rocksdb), each in its own directory.
fn engines(
    dir: &Path,
    targets: &[String],
    max_row_size: u64,
    cache_bytes: usize,
) -> Result<Vec<Box<dyn WideEngine>>, String> {
    let mut out: Vec<Box<dyn WideEngine>> = Vec::new();
    for t in targets {
        match t.as_str() {
            "cellar" => out.push(Box::new(CellarEngine::open(
                &dir.join("cellar"),
                max_row_size,
                cache_bytes,
            )?)),
            #[cfg(feature = "rocksdb")]
            "rocksdb" => out.push(Box::new(rocks::RocksEngine::open(
                &dir.join("rocksdb"),
                cache_bytes,
            )?)),
            other => {
                return Err(format!(
                    "unknown target '{other}' for a scenario (cellar{})",
                    if cfg!(feature = "rocksdb") {
                        ", rocksdb"
                    } else {
                        "; rocksdb needs --features rocksdb"
                    }
                ));
            }
        }
    }
    Ok(out)
}

/// One sensor table's figures.
pub(crate) struct SensorRow {
    target: String,
    layout: &'static str,
    encoding: &'static str,
    rate: f64,
    bytes_per_cell: f64,
    latest_us: f64,
    hour_us: f64,
    regions: Option<usize>,
}

fn sensor_row_key(layout: &str, d: u64, ts: u64) -> (String, String) {
    let rev = u64::MAX - ts;
    match layout {
        "tall" => (format!("dev{d:05}#{rev:020}"), "v".into()),
        "wide" => (format!("dev{d:05}"), format!("{rev:020}")),
        _ => (
            format!("dev{d:05}#{}", ts / 86_400),
            format!("{:05}", 86_399 - ts % 86_400),
        ),
    }
}

/// Runs the sensor-fleet scenario `runs` times; returns a Markdown report: each run's
/// table, then (with more than one run) the peers' ratios as min / median / max.
pub fn sensor(
    dir: &Path,
    targets: &[String],
    cache_bytes: usize,
    devices: u64,
    hours: u64,
    runs: usize,
) -> Result<String, String> {
    let all = repeat(dir, runs, |d| {
        sensor_run(d, targets, cache_bytes, devices, hours)
    })?;
    let readings = hours * 360;
    let mut out = String::new();
    for rows in &all {
        out.push_str(&sensor_report(rows, devices, readings, hours));
    }
    if all.len() > 1 {
        out.push_str(&summary::sensor(&all));
    }
    Ok(out)
}

/// A sensor table written and settled, waiting for its reads.
struct SensorTable {
    target: String,
    encoding: &'static str,
    table: Box<dyn WideTable>,
    rate: f64,
    bytes_per_cell: f64,
}

/// One run of the sensor-fleet scenario: per layout, every target's tables are written
/// and settled one after another, then read in turns ([`interleaved_micros`]).
fn sensor_run(
    dir: &Path,
    targets: &[String],
    cache_bytes: usize,
    devices: u64,
    hours: u64,
) -> Result<Vec<SensorRow>, String> {
    let readings = hours * 360;
    let t0: u64 = 1_790_000_000; // seconds
    let mut rows = Vec::new();
    // CELLAR_BENCH_LAYOUTS=tall,wide (say) runs only those layouts, to profile one.
    let only = std::env::var("CELLAR_BENCH_LAYOUTS").ok();
    let layouts = ["tall", "wide", "bucketed"].into_iter().filter(|l| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|x| x == *l))
    });
    let engines = engines(dir, targets, 1 << 30, cache_bytes)?;
    for layout in layouts {
        let mut tables = Vec::new();
        for engine in &engines {
            for enc in engine.encodings() {
                let name = format!("{layout}_{}", enc.to_lowercase().replace(' ', "_"));
                let t = engine.table(&name, enc, 1 << 20)?;
                let start = Instant::now();
                for r in 0..readings {
                    let ts = t0 + r * 10;
                    for d in 0..devices {
                        let value = ((d * 7919 + r) as f64 * 0.1).to_be_bytes();
                        let (row, q) = sensor_row_key(layout, d, ts);
                        t.put(row.as_bytes(), q.as_bytes(), ts as i64 * 1000, &value)?;
                    }
                }
                let cells = readings * devices;
                let rate = cells as f64 / start.elapsed().as_secs_f64();
                t.settle()?;
                let bytes = t.file_bytes()?;
                tables.push(SensorTable {
                    target: engine.name(),
                    encoding: enc,
                    table: t,
                    rate,
                    bytes_per_cell: bytes as f64 / cells as f64,
                });
            }
        }
        let dev = devices / 2;
        let last_ts = t0 + (readings - 1) * 10;
        let latest = interleaved_micros(&tables, 400, |st| {
            let t = &st.table;
            let n = match layout {
                "tall" => t.prefix_rows(format!("dev{dev:05}#").as_bytes(), 100)?,
                _ => t.row_head(sensor_row_key(layout, dev, last_ts).0.as_bytes(), 100)?,
            };
            if n == 100.min(readings as usize) || layout == "bucketed" {
                Ok(())
            } else {
                Err(format!("{layout}: latest 100 gave {n}"))
            }
        })?;
        // One hour in the middle of the data: [h0, h0 + 3600).
        let h0 = t0 + (readings * 10 / 2) / 3600 * 3600;
        let h1 = h0 + 3600;
        let hour = interleaved_micros(&tables, 200, |st| {
            let t = &st.table;
            let (lo_row, lo_q) = sensor_row_key(layout, dev, h1 - 1);
            let (hi_row, hi_q) = sensor_row_key(layout, dev, h0);
            let n = match layout {
                "tall" => t.row_span(lo_row.as_bytes(), hi_row.as_bytes())?,
                _ => t.row_range(lo_row.as_bytes(), lo_q.as_bytes(), hi_q.as_bytes())?,
            };
            if n == 360 || hours < 2 {
                Ok(())
            } else {
                Err(format!("{layout}: one hour gave {n} readings"))
            }
        })?;
        for ((st, latest_us), hour_us) in tables.into_iter().zip(latest).zip(hour) {
            rows.push(SensorRow {
                regions: st.table.regions()?,
                target: st.target,
                layout,
                encoding: st.encoding,
                rate: st.rate,
                bytes_per_cell: st.bytes_per_cell,
                latest_us,
                hour_us,
            });
        }
    }
    Ok(rows)
}

fn sensor_report(rows: &[SensorRow], devices: u64, readings: u64, hours: u64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Sensor fleet: {devices} devices x {readings} readings (every 10 s for {hours} h)\n"
    );
    let _ = writeln!(
        out,
        "| target | layout | encoding | ingest puts/s | bytes/cell on disk | latest 100 | one hour | regions |"
    );
    let _ = writeln!(out, "|---|---|---|---:|---:|---:|---:|---:|");
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.0} | {:.2} | {:.1} µs | {:.1} µs | {} |",
            r.target,
            r.layout,
            r.encoding,
            r.rate,
            r.bytes_per_cell,
            r.latest_us,
            r.hour_us,
            r.regions.map_or("-".to_string(), |n| n.to_string())
        );
    }
    // Ratios of every other target to Cellar's FAST_DIFF table of the same layout.
    let base = |layout: &str| {
        rows.iter()
            .find(|r| r.target == "cellar" && r.layout == layout && r.encoding == "FAST_DIFF")
    };
    let others: Vec<&SensorRow> = rows.iter().filter(|r| r.target != "cellar").collect();
    if !others.is_empty() {
        let _ = writeln!(
            out,
            "\nPeer / Cellar FAST_DIFF, same layout (above 1: the peer is faster or, for bytes, larger):\n"
        );
        let _ = writeln!(
            out,
            "| target | layout | ingest | bytes/cell | latest 100 | one hour |"
        );
        let _ = writeln!(out, "|---|---|---:|---:|---:|---:|");
        for o in others {
            if let Some(b) = base(o.layout) {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.2}x | {:.2}x | {:.2}x | {:.2}x |",
                    o.target,
                    o.layout,
                    o.rate / b.rate,
                    o.bytes_per_cell / b.bytes_per_cell,
                    b.latest_us / o.latest_us,
                    b.hour_us / o.hour_us
                );
            }
        }
    }
    out.push('\n');
    out
}

/// One inbox read-out: a target on a day.
pub(crate) struct InboxRow {
    target: String,
    day: u64,
    heavy_mib: f64,
    /// The whole-row Get: cells, the first call's µs and the median µs of the calls
    /// after it; `None` when it hit RowTooBigException.
    whole: Option<(usize, f64, f64)>,
    paged_us: f64,
    /// The month-bucket Get's median µs, `None` when it hit RowTooBigException.
    bucket_us: Option<f64>,
}

/// One run's inbox figures and its notes (the day each target's whole row got too big).
pub(crate) struct InboxRun {
    rows: Vec<InboxRow>,
    notes: String,
}

/// Runs the messaging-inbox scenario `runs` times; returns a Markdown report: each
/// run's table, then (with more than one run) the peers' ratios as min / median / max.
#[allow(clippy::too_many_arguments)]
pub fn inbox(
    dir: &Path,
    targets: &[String],
    cache_bytes: usize,
    days: u64,
    light_users: u64,
    heavy_per_day: u64,
    max_row: u64,
    runs: usize,
) -> Result<String, String> {
    let all = repeat(dir, runs, |d| {
        inbox_run(
            d,
            targets,
            cache_bytes,
            days,
            light_users,
            heavy_per_day,
            max_row,
        )
    })?;
    let mut out = String::new();
    for run in &all {
        let _ = writeln!(
            out,
            "## Messaging inbox: {light_users} light users (2 a day), one heavy user ({heavy_per_day} a day), 600-byte messages, {days} days; `hbase.table.max.rowsize` = {max_row}\n"
        );
        let _ = writeln!(
            out,
            "| target | day | heavy row | whole-row Get (median; first call) | paged Get (50, cursor) | month-bucket Get |"
        );
        let _ = writeln!(out, "|---|---:|---:|---|---:|---:|");
        let too_big = "RowTooBigException".to_string();
        for r in &run.rows {
            let _ = writeln!(
                out,
                "| {} | {} | {:.1} MiB | {} | {:.1} µs | {} |",
                r.target,
                r.day,
                r.heavy_mib,
                r.whole.map_or(too_big.clone(), |(n, first, us)| format!(
                    "{n} cells, {us:.1} µs (first {first:.1} µs)"
                )),
                r.paged_us,
                r.bucket_us
                    .map_or(too_big.clone(), |us| format!("{us:.1} µs")),
            );
        }
        let _ = writeln!(out, "\n{}", run.notes);
    }
    if all.len() > 1 {
        out.push_str(&summary::inbox(&all));
    }
    Ok(out)
}

/// One target's inbox tables, written day by day in step with the others'.
struct InboxTables {
    target: String,
    whole: Box<dyn WideTable>,
    month: Box<dyn WideTable>,
    too_big_day: Option<u64>,
}

/// One run of the messaging-inbox scenario: every target writes each day's messages in
/// turn, and on the days read the targets' reads take turns ([`interleaved_micros`]).
fn inbox_run(
    dir: &Path,
    targets: &[String],
    cache_bytes: usize,
    days: u64,
    light_users: u64,
    heavy_per_day: u64,
    max_row: u64,
) -> Result<InboxRun, String> {
    let mut rows = Vec::new();
    let mut notes = String::new();
    let mut all = Vec::new();
    for engine in engines(dir, targets, max_row, cache_bytes)? {
        all.push(InboxTables {
            target: engine.name(),
            whole: engine.table("inbox", "NONE", 128 << 20)?,
            month: engine.table("inbox_month", "NONE", 128 << 20)?,
            too_big_day: None,
        });
    }
    let body = vec![b'm'; 600];
    let t0: u64 = 1_790_000_000_000;
    let mut msg = 0u64;
    for day in 0..days {
        for i in 0..heavy_per_day.max(light_users * 2) {
            let ts = t0 + day * 86_400_000 + i * 1000;
            msg += 1;
            let q = format!("{:020}", u64::MAX - ts);
            let mut users = Vec::new();
            if i < heavy_per_day {
                users.push("heavy".to_string());
            }
            if i < light_users * 2 {
                users.push(format!("user{:05}", i / 2));
            }
            let month_no = (ts / 1000 / 86_400) / 30;
            for u in users {
                let bucket = format!("{u}#{month_no:05}");
                for t in &all {
                    t.whole.put(u.as_bytes(), q.as_bytes(), ts as i64, &body)?;
                    t.month
                        .put(bucket.as_bytes(), q.as_bytes(), ts as i64, &body)?;
                }
            }
        }
        if day % 7 != 6 && day + 1 != days {
            continue;
        }
        let heavy_bytes = (day + 1) * heavy_per_day * 660;
        // The first read of the row after its writes (nothing of it cached by the
        // reads), then the median of warm ones.
        let mut firsts = Vec::new();
        for t in &all {
            let start = Instant::now();
            let row = t.whole.whole_row(b"heavy")?;
            firsts.push((row, start.elapsed().as_secs_f64() * 1e6));
        }
        let whole_us = interleaved_micros(&all, 5, |t| t.whole.whole_row(b"heavy").map(|_| ()))?;
        let cursor = format!("{:020}", u64::MAX - (t0 + day * 86_400_000));
        let paged = interleaved_micros(&all, 200, |t| {
            match t.whole.page_from(b"heavy", cursor.as_bytes(), 50)? {
                0 => Err("paged read found nothing".into()),
                _ => Ok(()),
            }
        })?;
        let month_no = ((t0 + day * 86_400_000) / 1000 / 86_400) / 30;
        let bucket_row = format!("heavy#{month_no:05}");
        let bucket_us = interleaved_micros(&all, 20, |t| {
            t.month.whole_row(bucket_row.as_bytes()).map(|_| ())
        })?;
        for (i, t) in all.iter_mut().enumerate() {
            let (first_row, first_us) = &firsts[i];
            let whole_fig = match first_row {
                WholeRow::Cells(n) => Some((*n, *first_us, whole_us[i])),
                WholeRow::TooBig => {
                    t.too_big_day.get_or_insert(day + 1);
                    None
                }
            };
            let bucket_too_big =
                matches!(t.month.whole_row(bucket_row.as_bytes())?, WholeRow::TooBig);
            rows.push(InboxRow {
                target: t.target.clone(),
                day: day + 1,
                heavy_mib: heavy_bytes as f64 / (1u64 << 20) as f64,
                whole: whole_fig,
                paged_us: paged[i],
                bucket_us: (!bucket_too_big).then_some(bucket_us[i]),
            });
        }
    }
    for t in &all {
        let _ = writeln!(
            notes,
            "{}: {msg} messages written. {}",
            t.target,
            match t.too_big_day {
                Some(d) => format!("The heavy user's whole-row Get first failed with RowTooBigException on day {d}; the paged and month-bucketed reads kept working."),
                None => "The heavy row's whole-row Get never failed in this run.".to_string(),
            }
        );
    }
    Ok(InboxRun { rows, notes })
}
