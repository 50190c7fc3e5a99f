//! `cellar wal`: lists the entries of HBase WAL files (its region servers' write-ahead
//! logs, plain or compressed), one line per entry and one per cell, as HBase's own
//! reader returns them. The counterpart of `hbase wal` (WALPrettyPrinter) for moving
//! edits out of an HBase whose WALs were never replayed.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use cellar_types::{tag_bodies, to_string_binary, Cell};
use cellar_wal::hbase::{algorithm_name, read_hbase_wal, HBaseWal};
use clap::Args;

/// Flags of `cellar wal`.
#[derive(Args, Debug)]
pub struct WalArgs {
    /// WAL files to read.
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    /// Print each file's header (compression, codec) before its entries.
    #[arg(long)]
    header: bool,
}

/// Runs the tool; exit code 0 on success, 2 on an error (after what could be read).
pub fn run(args: &WalArgs) -> ExitCode {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    for file in &args.files {
        let wal = std::fs::read(file)
            .map_err(|e| e.to_string())
            .and_then(|b| read_hbase_wal(&b, file).map_err(|e| e.to_string()));
        let wal = match wal {
            Ok(w) => w,
            Err(e) => {
                eprintln!("error: {}: {e}", file.display());
                return ExitCode::from(2);
            }
        };
        let mut text = String::new();
        if args.header {
            header(&wal, &mut text);
        }
        text.push_str(&listing(&wal));
        if let Some(at) = wal.torn_tail {
            let _ = writeln!(
                text,
                "torn tail at offset {at}: its last entry is incomplete"
            );
        }
        if let Err(e) = out.write_all(text.as_bytes()) {
            if e.kind() == io::ErrorKind::BrokenPipe {
                return ExitCode::SUCCESS;
            }
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

fn header(wal: &HBaseWal, text: &mut String) {
    let h = &wal.header;
    let _ = writeln!(
        text,
        "header compression={} tag_compression={} value_compression={} writer={} codec={} trailer={}",
        h.has_compression,
        h.has_tag_compression,
        if h.has_value_compression {
            algorithm_name(h.value_compression_algorithm.unwrap_or(1))
        } else {
            "NONE"
        },
        h.writer_class.as_deref().unwrap_or("-"),
        h.cell_codec_class.as_deref().unwrap_or("-"),
        wal.trailer
    );
}

/// Every entry and cell, in the layout of the listing HBase's reader makes of the
/// fixtures (testdata/wal/hbase-2.6).
pub fn listing(wal: &HBaseWal) -> String {
    let mut text = String::new();
    for e in &wal.entries {
        let clusters: Vec<String> = e.cluster_ids.iter().map(|(m, l)| uuid(*m, *l)).collect();
        let _ = writeln!(
            text,
            "entry table={} region={} sequence={} time={} nonce={}/{} clusters=[{}] cells={}",
            to_string_binary(&e.table),
            to_string_binary(&e.encoded_region_name),
            e.sequence_id,
            e.write_time,
            e.nonce_group as i64,
            e.nonce as i64,
            clusters.join(","),
            e.cells.len()
        );
        for c in &e.cells {
            cell(c, &mut text);
        }
    }
    text
}

fn cell(c: &Cell, text: &mut String) {
    let tags: Vec<String> = tag_bodies(c.tags())
        .unwrap_or_default()
        .iter()
        .map(|t| format!("{}:{}", t[0] as i8, to_string_binary(&t[1..])))
        .collect();
    let v = c.value();
    let value = if v.len() > 64 {
        format!("({} bytes, sum {})", v.len(), java_hash(v))
    } else {
        to_string_binary(v)
    };
    let _ = writeln!(
        text,
        "  {}/{}:{}/{}/{} value={} tags=[{}]",
        to_string_binary(c.row()),
        to_string_binary(c.family()),
        to_string_binary(c.qualifier()),
        c.timestamp(),
        c.cell_type().name(),
        value,
        tags.join(",")
    );
}

/// Java's `UUID.toString`.
fn uuid(msb: u64, lsb: u64) -> String {
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        msb >> 32,
        (msb >> 16) & 0xffff,
        msb & 0xffff,
        lsb >> 48,
        lsb & 0xffff_ffff_ffff
    )
}

/// Java's `Arrays.hashCode(byte[])`: a short fingerprint of a long value.
fn java_hash(b: &[u8]) -> i32 {
    b.iter().fold(1i32, |h, x| {
        h.wrapping_mul(31).wrapping_add(i32::from(*x as i8))
    })
}
