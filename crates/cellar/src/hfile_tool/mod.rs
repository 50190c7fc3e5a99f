//! `cellar hfile`: the counterpart of HBase's `hbase hfile` (HFilePrettyPrinter), on
//! Cellar's and HBase's store files alike. Everything streams: memory stays constant
//! whatever the file size.

mod meta;
mod stats;

use std::cmp::Ordering;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use cellar_hfile::{BlockCache, HFileError, HFileReader};
use cellar_io::LocalFs;
use cellar_types::{compare_cells, from_string_binary, to_string_binary, Cell, KeyRef};
use clap::{ArgAction, Args};

use stats::KeyValueStats;

/// Flags of `hbase hfile`.
#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
pub struct HFileArgs {
    /// File to read.
    #[arg(short = 'f', long = "file")]
    file: Option<PathBuf>,
    /// More files to read.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Print every cell: key and value.
    #[arg(short = 'p', long = "printkv")]
    print_kv: bool,
    /// Print keys only.
    #[arg(short = 'e', long = "printkey")]
    print_key: bool,
    /// Process only this row (\xNN escapes allowed).
    #[arg(short = 'w', long = "seekToRow", value_name = "ROW")]
    row: Option<String>,
    /// Print the trailer, file info, mid-key and bloom filter meta.
    #[arg(short = 'm', long = "printmeta")]
    print_meta: bool,
    /// Print the block index and every block header.
    #[arg(short = 'b', long = "printblocks")]
    print_blocks: bool,
    /// Print every block header.
    #[arg(short = 'h', long = "printblockheaders")]
    print_block_headers: bool,
    /// Check that cells are in order; exit non-zero if not.
    #[arg(short = 'k', long = "checkrow")]
    check_row: bool,
    /// Check that every cell has the family of the first one.
    #[arg(short = 'a', long = "checkfamily")]
    check_family: bool,
    /// Verbose: name the file and count the cells scanned.
    #[arg(short = 'v', long = "verbose")]
    verbose: bool,
    /// Statistics: key, value and row size histograms and the biggest row.
    #[arg(short = 's', long = "stats")]
    stats: bool,
    /// Print help.
    #[arg(long = "help", action = ArgAction::Help)]
    help: Option<bool>,
}

/// Runs the tool; exit code 0 on success, 1 when a check failed, 2 on an error.
pub fn run(args: &HFileArgs) -> ExitCode {
    let mut files: Vec<PathBuf> = args.file.iter().cloned().collect();
    files.extend(args.files.iter().cloned());
    if files.is_empty() {
        eprintln!("error: no file given (use -f FILE)");
        return ExitCode::from(2);
    }
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut failed_check = false;
    let mut count = 0u64;
    for file in &files {
        match run_one(args, file, &mut out, &mut count) {
            Ok(ok) => failed_check |= !ok,
            Err(ToolError::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
                return ExitCode::SUCCESS;
            }
            Err(e) => {
                let _ = out.flush();
                eprintln!("error: {}: {e}", file.display());
                return ExitCode::from(2);
            }
        }
    }
    // As HBase's: one count over every file, after them, when cells were listed.
    if args.verbose || args.print_kv || args.print_key {
        if let Err(e) = writeln!(out, "Scanned kv count -> {count}") {
            if e.kind() != io::ErrorKind::BrokenPipe {
                return ExitCode::from(2);
            }
        }
    }
    if let Err(e) = out.flush() {
        if e.kind() != io::ErrorKind::BrokenPipe {
            return ExitCode::from(2);
        }
    }
    if failed_check {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Errors of the tool: the file's, or the output's.
#[derive(Debug)]
enum ToolError {
    File(HFileError),
    Output(io::Error),
    Usage(String),
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolError::File(e) => write!(f, "{e}"),
            ToolError::Output(e) => write!(f, "writing output: {e}"),
            ToolError::Usage(e) => write!(f, "{e}"),
        }
    }
}

impl From<HFileError> for ToolError {
    fn from(e: HFileError) -> Self {
        ToolError::File(e)
    }
}
impl From<io::Error> for ToolError {
    fn from(e: io::Error) -> Self {
        ToolError::Output(e)
    }
}

/// Processes one file; Ok(false) when a check found a problem.
fn run_one(
    args: &HFileArgs,
    file: &Path,
    out: &mut dyn Write,
    count: &mut u64,
) -> Result<bool, ToolError> {
    // A small cache: index and bloom blocks are reused, data blocks stream through.
    let cache = Arc::new(BlockCache::new(16 << 20));
    let reader = HFileReader::open(&LocalFs, file, Some(cache))?;
    if args.verbose {
        writeln!(out, "Scanning -> {}", file.display())?;
    }
    let scan = args.print_kv
        || args.print_key
        || args.check_row
        || args.check_family
        || args.stats
        || args.verbose
        || args.row.is_some();
    let mut ok = true;
    if scan {
        ok = scan_cells(args, &reader, file, out, count)?;
    }
    if args.print_meta {
        meta::print_meta(&reader, out)?;
    }
    if args.print_blocks {
        meta::print_index(&reader, out)?;
    }
    if args.print_blocks || args.print_block_headers {
        meta::print_block_headers(&reader, out)?;
    }
    Ok(ok)
}

fn scan_cells(
    args: &HFileArgs,
    reader: &HFileReader,
    file: &Path,
    out: &mut dyn Write,
    total: &mut u64,
) -> Result<bool, ToolError> {
    let mut scanner = reader.scanner();
    let only_row = match &args.row {
        Some(r) => Some(from_string_binary(r).map_err(|e| ToolError::Usage(e.to_string()))?),
        None => None,
    };
    let mut more = match &only_row {
        Some(row) => scanner.seek(&KeyRef::first_on_row(row))?,
        None => scanner.seek_to_first()?,
    };
    let mut stats = match args.stats {
        true => Some(
            KeyValueStats::new(reader.cell_format().includes_tags)
                .map_err(|e| ToolError::Usage(e.to_string()))?,
        ),
        false => None,
    };
    let mut prev: Option<Cell> = None;
    let mut family: Option<Vec<u8>> = None;
    let mut count = 0u64;
    let mut ok = true;
    while more {
        let Some(cell) = scanner.current().cloned() else {
            break;
        };
        if let Some(row) = &only_row {
            if cell.row() != row.as_slice() {
                break;
            }
        }
        count += 1;
        if args.print_kv {
            write!(
                out,
                "K: {} V: {}",
                cell_string(&cell),
                to_string_binary(cell.value())
            )?;
            write_tags(&cell, out)?;
            writeln!(out)?;
        } else if args.print_key {
            writeln!(out, "K: {}", cell_string(&cell))?;
        }
        if args.check_row {
            if let Some(p) = &prev {
                if compare_cells(p, &cell) == Ordering::Greater {
                    ok = false;
                    let what = if p.row() > cell.row() {
                        "previous row is greater then current row"
                    } else {
                        "previous cell is greater than current cell"
                    };
                    writeln!(
                        out,
                        "WARNING, {what}\n\tfilename -> {}\n\tprevious -> {}\n\tcurrent  -> {}",
                        file.display(),
                        cell_string(p),
                        cell_string(&cell)
                    )?;
                }
            }
        }
        if args.check_family {
            match &family {
                None => family = Some(cell.family().to_vec()),
                Some(f) if f.as_slice() != cell.family() => {
                    ok = false;
                    writeln!(out, "WARNING, previous family differs from current family\n\tfilename -> {}\n\tprevious -> {}\n\tcurrent  -> {}", file.display(), to_string_binary(f), cell_string(&cell))?;
                }
                Some(_) => {}
            }
        }
        if let Some(s) = &mut stats {
            s.collect(&cell);
        }
        prev = Some(cell);
        more = scanner.advance()?;
    }
    if let Some(s) = stats {
        s.finish().print(out)?;
    }
    *total += count;
    Ok(ok)
}

/// HBase's ` T[i]: [Tag type : N, value : V]` for each tag of a cell (the type as
/// Java prints a byte: signed).
fn write_tags(cell: &Cell, out: &mut dyn Write) -> io::Result<()> {
    match cellar_types::tag_bodies(cell.tags()) {
        Some(tags) => {
            for (i, t) in tags.iter().enumerate() {
                write!(
                    out,
                    " T[{i}]: [Tag type : {}, value : {}]",
                    t[0] as i8,
                    to_string_binary(&t[1..])
                )?;
            }
            Ok(())
        }
        None => write!(out, " T: malformed {}", to_string_binary(cell.tags())),
    }
}

/// HBase's `KeyValue.toString` for a cell: `row/family:qualifier/timestamp/Type/vlen=N/seqid=S`.
pub(crate) fn cell_string(c: &Cell) -> String {
    format!(
        "{}/vlen={}/seqid={}",
        key_string(&c.key_ref()),
        c.value().len(),
        c.seq_id()
    )
}

/// HBase's `KeyValue.keyToString`: `row/family:qualifier/timestamp/Type`.
pub(crate) fn key_string(k: &KeyRef<'_>) -> String {
    let ts = if k.timestamp == i64::MAX {
        "LATEST_TIMESTAMP".to_string()
    } else {
        k.timestamp.to_string()
    };
    let t = cellar_types::CellType::from_code(k.type_code)
        .map(|t| t.name().to_string())
        .unwrap_or_else(|_| format!("UNKNOWN({})", k.type_code));
    format!(
        "{}/{}:{}/{}/{}",
        to_string_binary(k.row),
        to_string_binary(k.family),
        to_string_binary(k.qualifier),
        ts,
        t
    )
}

/// A flat key as text, or its bytes escaped when it does not parse.
pub(crate) fn flat_key_string(key: &[u8]) -> String {
    match KeyRef::parse(key) {
        Ok(k) => key_string(&k),
        Err(_) => to_string_binary(key),
    }
}
