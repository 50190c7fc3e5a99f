//! The `cellar` command: `cellar shell` runs the HBase-style shell on an embedded
//! database; `cellar hfile` inspects store files written by Cellar or HBase.

mod hfile_tool;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "cellar",
    version,
    about = "Cellar: an HBase-model wide-column store"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Inspect a store file, like `hbase hfile`.
    Hfile(hfile_tool::HFileArgs),
    /// The HBase shell on an embedded database in DIR (default ./cellar-data).
    Shell {
        /// Database directory.
        #[arg(default_value = "cellar-data")]
        dir: PathBuf,
        /// Configuration file (TOML with HBase key names); default DIR/cellar.toml.
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

fn open_db(
    dir: &std::path::Path,
    config: Option<&std::path::Path>,
) -> Result<cellar::Database, String> {
    let mut opts = cellar::Options::for_dir(dir).map_err(|e| e.to_string())?;
    if let Some(path) = config {
        opts.config = cellar::Options::read_config(path).map_err(|e| e.to_string())?;
    }
    let db = cellar::Database::open_with(dir, opts).map_err(|e| e.to_string())?;
    if let Some(t) = &db.replay_report().torn_tail {
        eprintln!("WARN: {}", t.describe());
    }
    Ok(db)
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::WARN)
        .with_target(false)
        .without_time()
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Hfile(args) => hfile_tool::run(&args),
        Command::Shell { dir, config } => {
            let db = match open_db(&dir, config.as_deref()) {
                Ok(db) => db,
                Err(e) => {
                    eprintln!("ERROR: {e}");
                    return ExitCode::from(2);
                }
            };
            match cellar::shell::run_stdio(db) {
                Ok(true) => ExitCode::SUCCESS,
                Ok(false) => ExitCode::from(1),
                Err(e) => {
                    eprintln!("ERROR: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}
