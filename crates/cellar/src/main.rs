//! The `cellar` command: `cellar hfile` inspects store files written by Cellar or HBase.

mod hfile_tool;

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Hfile(args) => hfile_tool::run(&args),
    }
}
