//! `cellar bulkload` (HBase's `completebulkload`) and `cellar hfile-write` (a sorted
//! CSV/TSV into loadable HFiles, one per family and region of the target table), on an
//! embedded database or through a server; `cellar import-snapshot` (an HBase export
//! as a new table of the embedded database).

use std::path::PathBuf;

use clap::Args;

use cellar::bulkload::produce::{write_hfiles, ProduceOptions};
use cellar::bulkload::BulkLoadReport;
use cellar::client::RemoteConnection;
use cellar_api::{RegionInfo, TableDescriptor};
use cellar_io::{Clock, FileSystem, LocalFs, SystemClock};

/// Where the table is: an embedded database, or a server.
#[derive(Args)]
pub struct Target {
    /// Database directory (embedded; default ./cellar-data).
    #[arg(long, default_value = "cellar-data")]
    pub db: PathBuf,
    /// Configuration file (TOML with HBase key names); default DB/cellar.toml.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// A server's host:port: work through it (it reads loaded files by path).
    #[arg(long)]
    pub connect: Option<String>,
}

#[derive(Args)]
pub struct BulkloadArgs {
    /// Directory of HFiles, one subdirectory per family.
    dir: PathBuf,
    /// The table to load into.
    table: String,
    #[command(flatten)]
    target: Target,
}

#[derive(Args)]
pub struct HFileWriteArgs {
    /// The input: rows of row, family, qualifier, timestamp, value, sorted ("-": stdin
    /// for CSV/TSV).
    input: PathBuf,
    /// Output directory (OUT/<family>/<file>), loadable with `cellar bulkload`.
    out: PathBuf,
    /// The table whose families and regions the files follow.
    #[arg(long)]
    table: String,
    /// Tab-separated input (default: CSV with quoting).
    #[arg(long, conflicts_with = "parquet")]
    tsv: bool,
    /// A Parquet file with columns row, family, qualifier, timestamp, value.
    #[arg(long)]
    parquet: bool,
    /// Fields are HBase's toStringBinary text (\xNN escapes).
    #[arg(long)]
    escaped: bool,
    #[command(flatten)]
    target: Target,
}

pub type Opened = (Option<cellar::Database>, Option<RemoteConnection>);

pub fn open(t: &Target) -> Result<Opened, String> {
    match &t.connect {
        Some(addr) => Ok((
            None,
            Some(RemoteConnection::connect(addr).map_err(|e| e.to_string())?),
        )),
        None => Ok((
            Some(crate::open_db(&t.db, t.config.as_deref(), None)?),
            None,
        )),
    }
}

fn print_report(r: &BulkLoadReport) {
    println!(
        "loaded {} cells from {} files into {} regions ({} files cut into {} pieces; {} empty files skipped)",
        r.cells,
        r.files - r.empty.len(),
        r.regions,
        r.split_files,
        r.pieces,
        r.empty.len()
    );
}

pub fn bulkload(a: &BulkloadArgs) -> Result<(), String> {
    let report = match open(&a.target)? {
        (_, Some(c)) => cellar::bulkload::remote::load_dir(&c, &a.table, &a.dir),
        (Some(db), None) => {
            let r = db.bulk_load(&a.table, &a.dir);
            db.close().map_err(|e| e.to_string())?;
            r
        }
        (None, None) => return Err("nothing to load into".into()),
    }
    .map_err(|e| e.to_string())?;
    print_report(&report);
    Ok(())
}

fn schema(a: &HFileWriteArgs) -> Result<(TableDescriptor, Vec<RegionInfo>), String> {
    match open(&a.target)? {
        (_, Some(c)) => {
            let conn = c.inner();
            let desc = c
                .block_on(conn.admin().describe(&a.table))
                .map_err(|e| e.to_string())?
                .0;
            let regions = c
                .block_on(conn.regions(&a.table))
                .map_err(|e| e.to_string())?
                .into_iter()
                .map(|l| l.info)
                .collect();
            Ok((desc, regions))
        }
        (Some(db), None) => {
            let out = (|| {
                let desc = db.master().describe(&a.table)?.0;
                let regions = db
                    .master()
                    .locations(&a.table)?
                    .into_iter()
                    .map(|l| l.info)
                    .collect();
                Ok::<_, cellar::DbError>((desc, regions))
            })()
            .map_err(|e| e.to_string());
            db.close().map_err(|e| e.to_string())?;
            out
        }
        (None, None) => Err("no table to follow".into()),
    }
}

pub fn hfile_write(a: &HFileWriteArgs) -> Result<(), String> {
    let (desc, regions) = schema(a)?;
    let fs: std::sync::Arc<dyn FileSystem> = std::sync::Arc::new(LocalFs::new());
    let opts = ProduceOptions {
        delimiter: if a.tsv { b'\t' } else { b',' },
        escaped: a.escaped,
        now: SystemClock.now_millis(),
    };
    let report = if a.parquet {
        let records =
            cellar::bulkload::parquet_input::read_records(&a.input).map_err(|e| e.to_string())?;
        cellar::bulkload::produce::write_records(
            &fs,
            records.into_iter().map(Ok),
            &desc,
            &regions,
            &a.out,
            opts.now,
        )
    } else if a.input.as_os_str() == "-" {
        write_hfiles(&fs, std::io::stdin().lock(), &desc, &regions, &a.out, &opts)
    } else {
        let f = std::fs::File::open(&a.input).map_err(|e| format!("{}: {e}", a.input.display()))?;
        write_hfiles(
            &fs,
            std::io::BufReader::new(f),
            &desc,
            &regions,
            &a.out,
            &opts,
        )
    }
    .map_err(|e| e.to_string())?;
    println!(
        "wrote {} cells into {} files under {}",
        report.cells,
        report.files.len(),
        a.out.display()
    );
    Ok(())
}

#[derive(Args)]
pub struct ImportSnapshotArgs {
    /// The export's directory (holding .hbase-snapshot/ and archive/), or an HBase root.
    dir: PathBuf,
    /// The snapshot's name.
    #[arg(long)]
    snapshot: String,
    /// The new table's name (default: the snapshot's table).
    #[arg(long)]
    table: Option<String>,
    /// Database directory (embedded; default ./cellar-data).
    #[arg(long, default_value = "cellar-data")]
    db: PathBuf,
    /// Configuration file (TOML with HBase key names); default DB/cellar.toml.
    #[arg(long)]
    config: Option<PathBuf>,
}

pub fn import_snapshot(a: &ImportSnapshotArgs) -> Result<(), String> {
    let db = crate::open_db(&a.db, a.config.as_deref(), None)?;
    let r = db.import_snapshot(&a.dir, &a.snapshot, a.table.as_deref());
    db.close().map_err(|e| e.to_string())?;
    let r = r.map_err(|e| e.to_string())?;
    println!(
        "imported snapshot {} as table {}: {} regions, {} store files ({} reference halves rewritten), {} cells",
        a.snapshot, r.table, r.regions, r.files, r.halves, r.cells
    );
    Ok(())
}

#[derive(Args)]
pub struct ExportSnapshotArgs {
    /// The snapshot to export.
    snapshot: String,
    /// Destination directory (ExportSnapshot's layout: .hbase-snapshot/ and archive/).
    dir: PathBuf,
    /// Database directory (embedded; default ./cellar-data).
    #[arg(long, default_value = "cellar-data")]
    db: PathBuf,
    /// Configuration file (TOML with HBase key names); default DB/cellar.toml.
    #[arg(long)]
    config: Option<PathBuf>,
}

pub fn export_snapshot(a: &ExportSnapshotArgs) -> Result<(), String> {
    let db = crate::open_db(&a.db, a.config.as_deref(), None)?;
    let r = db.master().export_snapshot(&a.snapshot, &a.dir);
    db.close().map_err(|e| e.to_string())?;
    let n = r.map_err(|e| e.to_string())?;
    println!(
        "exported snapshot {} to {} ({n} store files)",
        a.snapshot,
        a.dir.display()
    );
    Ok(())
}
