//! The seeds' scenarios on Cellar. Sensor fleet: devices reporting an 8-byte reading every
//! 10 s, in three layouts (tall `dev#reversed-ts`; wide, one row per device; bucketed wide
//! `dev#day`) with NONE and FAST_DIFF: ingest rate, bytes per cell on disk, "latest 100
//! readings" and "one hour of one day" latency, regions at the end. Messaging inbox:
//! 600-byte messages, light users and one heavy user: whole-row read vs a cursor-paged
//! read vs a month-bucketed read, the heavy row's size over time, and the day a whole-row
//! Get hits RowTooBigException under a lowered `hbase.table.max.rowsize`.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use cellar::{Database, Options};
use cellar_region::{
    Config, FamilyDescriptor, FilterSpec, Get, Put, RegionError, Scan, TableDescriptor,
};
use cellar_wal::Durability;

use crate::target::dir_size;

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn micros(reps: u32, mut f: impl FnMut() -> Result<(), String>) -> Result<f64, String> {
    f()?;
    let t = Instant::now();
    for _ in 0..reps {
        f()?;
    }
    Ok(t.elapsed().as_secs_f64() * 1e6 / reps as f64)
}

fn open(dir: &Path, max_row_size: u64) -> Result<Database, String> {
    let mut o = Options::for_dir(dir).map_err(err)?;
    o.config = Config {
        max_row_size,
        ..Config::default()
    };
    Database::open_with(dir, o).map_err(err)
}

fn table(name: &str, encoding: &str, flush: u64) -> Result<TableDescriptor, String> {
    let mut f = FamilyDescriptor::new("d");
    f.set_attribute("DATA_BLOCK_ENCODING", encoding)
        .map_err(err)?;
    let mut t = TableDescriptor::new(name).with_family(f);
    t.durability = Durability::SkipWal;
    t.memstore_flush_size = Some(flush);
    t.max_file_size = Some(flush * 8);
    Ok(t)
}

/// Runs the sensor-fleet scenario; returns a Markdown report.
pub fn sensor(dir: &Path, devices: u64, hours: u64) -> Result<String, String> {
    let readings = hours * 360;
    let t0: u64 = 1_790_000_000; // seconds
    let db = open(dir, 1 << 30)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Sensor fleet: {devices} devices x {readings} readings (every 10 s for {hours} h)\n"
    );
    let _ = writeln!(
        out,
        "| layout | encoding | ingest puts/s | bytes/cell on disk | latest 100 | one hour | regions |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---:|");
    for layout in ["tall", "wide", "bucketed"] {
        for enc in ["NONE", "FAST_DIFF"] {
            let name = format!("{layout}_{}", enc.to_lowercase());
            db.create_table(table(&name, enc, 1 << 20)?).map_err(err)?;
            let t = db.table(&name).map_err(err)?;
            let start = Instant::now();
            for r in 0..readings {
                let ts = t0 + r * 10;
                for d in 0..devices {
                    let value = ((d * 7919 + r) as f64 * 0.1).to_be_bytes().to_vec();
                    let rev = u64::MAX - ts;
                    let put = match layout {
                        "tall" => {
                            Put::new(format!("dev{d:05}#{rev:020}")).add_column("d", "v", value)
                        }
                        "wide" => Put::new(format!("dev{d:05}")).add_column(
                            "d",
                            format!("{rev:020}"),
                            value,
                        ),
                        _ => {
                            let day = ts / 86_400;
                            let sod = 86_399 - ts % 86_400;
                            Put::new(format!("dev{d:05}#{day}")).add_column(
                                "d",
                                format!("{sod:05}"),
                                value,
                            )
                        }
                    };
                    t.put(put.with_timestamp(ts as i64 * 1000)).map_err(err)?;
                }
            }
            let cells = readings * devices;
            let rate = cells as f64 / start.elapsed().as_secs_f64();
            db.flush(&name).map_err(err)?;
            db.compact(&name, true).map_err(err)?;
            let bytes: u64 = db
                .list_regions(&name)
                .map_err(err)?
                .iter()
                .map(|r| r.store_files_size)
                .sum();
            let dev = devices / 2;
            let last_ts = t0 + (readings - 1) * 10;
            let latest = micros(50, || {
                let n = match layout {
                    "tall" => t
                        .scan(
                            &Scan::new()
                                .with_row_prefix(format!("dev{dev:05}#"))
                                .limit(100),
                        )
                        .map_err(err)?
                        .count(),
                    "wide" => t
                        .get(&Get::new(format!("dev{dev:05}")).filter(
                            FilterSpec::ColumnPagination {
                                limit: 100,
                                offset: 0,
                                column_offset: None,
                            },
                        ))
                        .map_err(err)?
                        .cells
                        .len(),
                    _ => {
                        let day = last_ts / 86_400;
                        t.get(&Get::new(format!("dev{dev:05}#{day}")).filter(
                            FilterSpec::ColumnPagination {
                                limit: 100,
                                offset: 0,
                                column_offset: None,
                            },
                        ))
                        .map_err(err)?
                        .cells
                        .len()
                    }
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
            let hour = micros(20, || {
                let (lo, hi) = (u64::MAX - (h1 - 1), u64::MAX - h0);
                let n = match layout {
                    "tall" => t
                        .scan(
                            &Scan::new()
                                .with_start_row(format!("dev{dev:05}#{lo:020}"), true)
                                .with_stop_row(format!("dev{dev:05}#{hi:020}"), true),
                        )
                        .map_err(err)?
                        .count(),
                    "wide" => t
                        .get(
                            &Get::new(format!("dev{dev:05}")).filter(FilterSpec::ColumnRange {
                                min: Some(format!("{lo:020}").into_bytes()),
                                min_inclusive: true,
                                max: Some(format!("{hi:020}").into_bytes()),
                                max_inclusive: true,
                            }),
                        )
                        .map_err(err)?
                        .cells
                        .len(),
                    _ => {
                        let day = h0 / 86_400;
                        let (a, b) = (86_399 - (h1 - 1) % 86_400, 86_399 - h0 % 86_400);
                        t.get(&Get::new(format!("dev{dev:05}#{day}")).filter(
                            FilterSpec::ColumnRange {
                                min: Some(format!("{a:05}").into_bytes()),
                                min_inclusive: true,
                                max: Some(format!("{b:05}").into_bytes()),
                                max_inclusive: true,
                            },
                        ))
                        .map_err(err)?
                        .cells
                        .len()
                    }
                };
                if n == 360 || hours < 2 {
                    Ok(())
                } else {
                    Err(format!("{layout}: one hour gave {n} readings"))
                }
            })?;
            let regions = db.list_regions(&name).map_err(err)?.len();
            let _ = writeln!(
                out,
                "| {layout} | {enc} | {rate:.0} | {:.2} | {latest:.1} µs | {hour:.1} µs | {regions} |",
                bytes as f64 / cells as f64
            );
        }
    }
    let _ = writeln!(
        out,
        "\nDisk used by the database: {:.1} MiB\n",
        dir_size(dir) as f64 / (1u64 << 20) as f64
    );
    db.close().map_err(err)?;
    Ok(out)
}

/// Runs the messaging-inbox scenario; returns a Markdown report.
pub fn inbox(
    dir: &Path,
    days: u64,
    light_users: u64,
    heavy_per_day: u64,
    max_row: u64,
) -> Result<String, String> {
    let db = open(dir, max_row)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Messaging inbox: {light_users} light users (2 a day), one heavy user ({heavy_per_day} a day), 600-byte messages, {days} days; `hbase.table.max.rowsize` = {max_row}\n"
    );
    for name in ["inbox", "inbox_month"] {
        let mut t = TableDescriptor::new(name).with_family(FamilyDescriptor::new("m"));
        t.durability = Durability::SkipWal;
        db.create_table(t).map_err(err)?;
    }
    let (whole, month) = (
        db.table("inbox").map_err(err)?,
        db.table("inbox_month").map_err(err)?,
    );
    let body = vec![b'm'; 600];
    let mut too_big_day = None;
    let _ = writeln!(
        out,
        "| day | heavy row (whole) | whole-row Get | paged Get (50, cursor) | month-bucket Get |"
    );
    let _ = writeln!(out, "|---:|---:|---|---:|---:|");
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
            for u in users {
                whole
                    .put(Put::new(u.clone()).add_column("m", q.clone(), body.clone()))
                    .map_err(err)?;
                let month_no = (ts / 1000 / 86_400) / 30;
                month
                    .put(Put::new(format!("{u}#{month_no:05}")).add_column(
                        "m",
                        q.clone(),
                        body.clone(),
                    ))
                    .map_err(err)?;
            }
        }
        if day % 7 == 6 || day + 1 == days {
            let heavy_bytes = (day + 1) * heavy_per_day * 660;
            let whole_get = match whole.get(&Get::new("heavy")) {
                Ok(r) => format!("{} cells", r.cells.len()),
                Err(cellar::DbError::Region(RegionError::RowTooBig { .. })) => {
                    too_big_day.get_or_insert(day + 1);
                    "RowTooBigException".to_string()
                }
                Err(e) => return Err(err(e)),
            };
            let paged = micros(20, || {
                let r = whole
                    .get(&Get::new("heavy").filter(FilterSpec::ColumnPagination {
                        limit: 50,
                        offset: 0,
                        column_offset: Some(
                            format!("{:020}", u64::MAX - (t0 + day * 86_400_000)).into_bytes(),
                        ),
                    }))
                    .map_err(err)?;
                if r.cells.is_empty() {
                    return Err("paged read found nothing".into());
                }
                Ok(())
            })?;
            let month_no = ((t0 + day * 86_400_000) / 1000 / 86_400) / 30;
            let bucket = match micros(5, || {
                month
                    .get(&Get::new(format!("heavy#{month_no:05}")))
                    .map(|_| ())
                    .map_err(err)
            }) {
                Ok(us) => format!("{us:.1} µs"),
                Err(e) if e.contains("RowTooBig") => "RowTooBigException".to_string(),
                Err(e) => return Err(e),
            };
            let _ = writeln!(
                out,
                "| {} | {:.1} MiB | {whole_get} | {paged:.1} µs | {bucket} |",
                day + 1,
                heavy_bytes as f64 / (1u64 << 20) as f64
            );
        }
    }
    let _ = writeln!(
        out,
        "\n{msg} messages written. {}\n",
        match too_big_day {
            Some(d) => format!("The heavy user's whole-row Get first failed with RowTooBigException on day {d}; the paged and month-bucketed reads kept working."),
            None => "The heavy row never passed the row-size limit in this run.".to_string(),
        }
    );
    db.close().map_err(err)?;
    Ok(out)
}
