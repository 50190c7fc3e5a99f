//! `cellar census TABLE`: per-row cells and bytes over a snapshot — one it takes (and
//! deletes afterwards), a named one (`--snapshot`), or an HBase export (`--dir`) — with
//! the heaviest rows by bytes and by cells as CSV or JSON, every row to a CSV file
//! (`--rows`), regions in parallel and a progress bar.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use cellar::census::{census, serving_regions, RowCensus};
use cellar::hbase_snapshot::{read_snapshot, read_snapshot_in};
use cellar_types::to_string_binary;

#[derive(Args)]
pub struct CensusArgs {
    /// The table (with --dir: a label; the export names its own).
    table: String,
    /// Count this snapshot instead of taking one.
    #[arg(long)]
    snapshot: Option<String>,
    /// An HBase export (`ExportSnapshot`'s layout) to count, with --snapshot.
    #[arg(long, requires = "snapshot")]
    dir: Option<PathBuf>,
    /// How many of the heaviest rows to list, by bytes and by cells.
    #[arg(long, default_value_t = 20)]
    top: usize,
    /// csv or json.
    #[arg(long, default_value = "csv")]
    format: String,
    /// Write every row (row,cells,bytes,serialized_bytes) to this CSV file.
    #[arg(long)]
    rows: Option<PathBuf>,
    /// Regions counted at once.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Database directory (embedded; default ./cellar-data).
    #[arg(long, default_value = "cellar-data")]
    db: PathBuf,
}

/// The heaviest rows by one measure.
struct Top {
    n: usize,
    rows: Vec<RowCensus>,
}

impl Top {
    fn offer(&mut self, r: &RowCensus, key: fn(&RowCensus) -> u64) {
        if self.rows.len() < self.n {
            self.rows.push(r.clone());
        } else if let Some((i, min)) = self.rows.iter().enumerate().min_by_key(|(_, x)| key(x)) {
            if key(r) > key(min) {
                self.rows[i] = r.clone();
            }
        }
    }

    fn sorted(mut self, key: fn(&RowCensus) -> u64) -> Vec<RowCensus> {
        self.rows
            .sort_by(|a, b| key(b).cmp(&key(a)).then_with(|| a.row.cmp(&b.row)));
        self.rows
    }
}

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn row_json(r: &RowCensus) -> String {
    format!(
        "{{\"row\":{},\"cells\":{},\"bytes\":{},\"serialized_bytes\":{}}}",
        json_str(&to_string_binary(&r.row)),
        r.cells,
        r.formula_bytes,
        r.serialized_bytes
    )
}

pub fn run(a: &CensusArgs) -> Result<(), String> {
    if a.format != "csv" && a.format != "json" {
        return Err(format!("unknown format '{}' (csv, json)", a.format));
    }
    let s = |e: cellar::DbError| e.to_string();
    let mut db = None;
    let mut taken = None;
    let snap = match (&a.dir, &a.snapshot) {
        (Some(dir), Some(name)) => read_snapshot(dir, name).map_err(|e| e.to_string())?,
        _ => {
            let d = crate::open_db(&a.db, None, None)?;
            let name = match &a.snapshot {
                Some(n) => n.clone(),
                None => {
                    use cellar_io::Clock as _;
                    let n = format!(
                        "census-{}-{}",
                        a.table.replace(':', "_"),
                        cellar_io::SystemClock.now_millis()
                    );
                    d.master().snapshot(&a.table, &n).map_err(s)?;
                    taken = Some(n.clone());
                    n
                }
            };
            let snap = read_snapshot_in(d.master().fs().clone(), d.root(), &name)
                .map_err(|e| e.to_string())?;
            db = Some(d);
            snap
        }
    };
    let result = count(a, &snap);
    if let (Some(d), Some(n)) = (&db, &taken) {
        let _ = d.master().delete_snapshot(n);
    }
    if let Some(d) = db {
        d.close().map_err(s)?;
    }
    result
}

fn count(a: &CensusArgs, snap: &cellar::hbase_snapshot::HBaseSnapshot) -> Result<(), String> {
    let regions = serving_regions(snap).len();
    let bar = ProgressBar::with_draw_target(
        Some(regions as u64),
        if a.quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        },
    );
    bar.set_style(
        ProgressStyle::with_template("{spinner} census [{bar:30}] {pos}/{len} regions ({elapsed})")
            .map_err(|e| e.to_string())?
            .progress_chars("=> "),
    );
    let top_bytes = Mutex::new(Top {
        n: a.top,
        rows: Vec::new(),
    });
    let top_cells = Mutex::new(Top {
        n: a.top,
        rows: Vec::new(),
    });
    let (rows, cells, bytes, ser) = (
        AtomicU64::new(0),
        AtomicU64::new(0),
        AtomicU64::new(0),
        AtomicU64::new(0),
    );
    // Each region's rows go to its own part file, joined in key order at the end.
    let parts_dir = a.rows.as_ref().map(|p| {
        let mut d = p.clone().into_os_string();
        d.push(".parts");
        PathBuf::from(d)
    });
    if let Some(d) = &parts_dir {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let writers: Mutex<BTreeMap<usize, std::io::BufWriter<std::fs::File>>> =
        Mutex::new(BTreeMap::new());
    let io = |e: std::io::Error| cellar_api::Error::new(cellar_api::ErrorKind::Io, e.to_string());
    let visit = |i: usize, r: RowCensus| -> cellar_api::Result<()> {
        rows.fetch_add(1, Ordering::Relaxed);
        cells.fetch_add(r.cells, Ordering::Relaxed);
        bytes.fetch_add(r.formula_bytes, Ordering::Relaxed);
        ser.fetch_add(r.serialized_bytes, Ordering::Relaxed);
        top_bytes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .offer(&r, |x| x.formula_bytes);
        top_cells
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .offer(&r, |x| x.cells);
        if let Some(d) = &parts_dir {
            let mut w = writers.lock().unwrap_or_else(|e| e.into_inner());
            let f = match w.entry(i) {
                std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
                std::collections::btree_map::Entry::Vacant(v) => {
                    let f = std::fs::File::create(d.join(format!("{i:06}"))).map_err(io)?;
                    v.insert(std::io::BufWriter::new(f))
                }
            };
            writeln!(
                f,
                "{},{},{},{}",
                csv_field(&to_string_binary(&r.row)),
                r.cells,
                r.formula_bytes,
                r.serialized_bytes
            )
            .map_err(io)?;
        }
        Ok(())
    };
    let done = |_| bar.inc(1);
    census(snap, a.threads, &visit, &done).map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    if let (Some(out), Some(d)) = (&a.rows, &parts_dir) {
        let mut all = std::mem::take(&mut *writers.lock().unwrap_or_else(|e| e.into_inner()));
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?,
        );
        let err = |e: std::io::Error| format!("{}: {e}", out.display());
        writeln!(f, "row,cells,bytes,serialized_bytes").map_err(err)?;
        for (i, mut w) in std::mem::take(&mut all) {
            w.flush().map_err(err)?;
            drop(w);
            let part = d.join(format!("{i:06}"));
            let mut r = std::fs::File::open(&part).map_err(err)?;
            std::io::copy(&mut r, &mut f).map_err(err)?;
        }
        f.flush().map_err(err)?;
        let _ = std::fs::remove_dir_all(d);
    }
    let by_bytes = top_bytes
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .sorted(|x| x.formula_bytes);
    let by_cells = top_cells
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .sorted(|x| x.cells);
    let (rows, cells, bytes, ser) = (
        rows.into_inner(),
        cells.into_inner(),
        bytes.into_inner(),
        ser.into_inner(),
    );
    eprintln!(
        "census of {} (snapshot {}): {regions} regions, {rows} rows, {cells} cells, {bytes} bytes ({ser} serialized)",
        snap.table, snap.name
    );
    if a.format == "json" {
        let list = |v: &[RowCensus]| v.iter().map(row_json).collect::<Vec<_>>().join(",");
        println!(
            "{{\"table\":{},\"snapshot\":{},\"regions\":{regions},\"rows\":{rows},\"cells\":{cells},\"bytes\":{bytes},\"serialized_bytes\":{ser},\"top_by_bytes\":[{}],\"top_by_cells\":[{}]}}",
            json_str(&snap.table),
            json_str(&snap.name),
            list(&by_bytes),
            list(&by_cells)
        );
    } else {
        println!("by,rank,row,cells,bytes,serialized_bytes");
        for (by, list) in [("bytes", &by_bytes), ("cells", &by_cells)] {
            for (i, r) in list.iter().enumerate() {
                println!(
                    "{by},{},{},{},{},{}",
                    i + 1,
                    csv_field(&to_string_binary(&r.row)),
                    r.cells,
                    r.formula_bytes,
                    r.serialized_bytes
                );
            }
        }
    }
    Ok(())
}
