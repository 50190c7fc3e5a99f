//! `cellar shell [DIR]`: HBase shell syntax and output on the embedded database.
//! Interactive with history and line editing on a terminal; otherwise it reads commands
//! from standard input so scripts work. An error prints as HBase's shell prints it
//! (`ERROR: ...`, then where to find usage and the time taken) and the shell goes on.

mod client;
mod commands;
mod ddl;
mod format;
mod hotspots;
mod large_log;
mod large_rows;
pub mod parse;
mod regions;
mod snapshots;

use std::io::{BufRead, IsTerminal, Write};

use cellar_io::{Clock, SystemClock};

use crate::database::Database;

/// What the shell should do after a command.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Exit,
}

pub use client::Client;

/// A shell on one connection, writing to `out`.
pub struct Shell<W: Write> {
    client: Client,
    /// The embedded database the connection goes to, when the shell opened one.
    db: Option<Database>,
    out: W,
    style: format::Style,
    /// Whether any command failed (the exit status of a script).
    pub had_error: bool,
}

impl<W: Write> Shell<W> {
    /// A shell on an embedded database, printing as to a script's output (no
    /// terminal).
    pub fn new(db: Database, out: W) -> Shell<W> {
        let epoch = db.config().shell_timestamp_epoch;
        let client = Client::new(Box::new(db.connection().clone()))
            .with_row_limits(db.config().max_row_size, db.config().max_file_size);
        let mut shell = Shell::with_client(client, epoch, out);
        shell.db = Some(db);
        shell
    }

    /// A shell on any connection; `epoch_timestamps` is
    /// `hbase.shell.timestamp.format.epoch`.
    pub fn with_client(client: Client, epoch_timestamps: bool, out: W) -> Shell<W> {
        Shell {
            client,
            db: None,
            out,
            style: format::Style::script(epoch_timestamps),
            had_error: false,
        }
    }

    /// Prints for a terminal `width` columns wide (0: not a terminal).
    pub fn set_width(&mut self, width: usize) {
        self.style.width = width;
    }

    /// The embedded database, when the shell runs on one.
    pub fn database(&self) -> Option<&Database> {
        self.db.as_ref()
    }

    /// Where the output goes.
    pub fn output_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Runs one line; output (including errors) goes to the writer.
    pub fn execute(&mut self, line: &str) -> std::io::Result<Flow> {
        let start = SystemClock.monotonic();
        let cmd = match parse::parse_line(line) {
            Ok(None) => return Ok(Flow::Continue),
            Ok(Some(c)) => c,
            Err(e) => {
                self.had_error = true;
                writeln!(self.out, "ERROR: {e}")?;
                return Ok(Flow::Continue);
            }
        };
        if matches!(cmd.name.as_str(), "exit" | "quit") {
            return Ok(Flow::Exit);
        }
        let mut text = String::new();
        match commands::run(&self.client, &cmd, &mut text, &self.style) {
            Ok(ret) => {
                self.out.write_all(text.as_bytes())?;
                self.out.write_all(
                    format::took(SystemClock.monotonic().saturating_sub(start).as_secs_f64())
                        .as_bytes(),
                )?;
                if let Some(r) = ret {
                    writeln!(self.out, "=> {r}")?;
                }
            }
            Err(e) => {
                // HBase's shell: the error between blank lines, where to find usage,
                // and the time taken.
                self.had_error = true;
                self.out.write_all(text.as_bytes())?;
                writeln!(
                    self.out,
                    "\nERROR: {e}\n\nFor usage try 'help \"{}\"'\n",
                    cmd.name
                )?;
                self.out.write_all(
                    format::took(SystemClock.monotonic().saturating_sub(start).as_secs_f64())
                        .as_bytes(),
                )?;
            }
        }
        self.out.flush()?;
        Ok(Flow::Continue)
    }

    /// Reads commands from `input` until the end or `exit`. A line that is not UTF-8 is an
    /// error naming its number, and the script goes on.
    pub fn run_script(&mut self, mut input: impl BufRead) -> std::io::Result<()> {
        let mut buf = Vec::new();
        let mut number = 0u64;
        loop {
            buf.clear();
            if input.read_until(b'\n', &mut buf)? == 0 {
                break;
            }
            number += 1;
            if buf.last() == Some(&b'\n') {
                buf.pop();
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
            }
            let line = match std::str::from_utf8(&buf) {
                Ok(l) => l,
                Err(e) => {
                    self.had_error = true;
                    writeln!(
                        self.out,
                        "ERROR: line {number} is not valid UTF-8 (byte {} of the line); write such bytes as \\xNN escapes in double quotes",
                        e.valid_up_to() + 1
                    )?;
                    continue;
                }
            };
            if self.execute(line)? == Flow::Exit {
                break;
            }
        }
        Ok(())
    }

    /// Closes the embedded database, if any (flushing).
    pub fn close(self) -> Result<(), crate::DbError> {
        drop(self.client);
        match self.db {
            Some(db) => db.close(),
            None => Ok(()),
        }
    }
}

/// Runs the shell on standard input/output: line editing when it is a terminal.
pub fn run_stdio(db: Database) -> Result<bool, String> {
    let stdout = std::io::stdout();
    drive(Shell::new(db, stdout.lock()))
}

/// Runs the shell on standard input/output against a connection (a remote server):
/// the same commands, the same output.
pub fn run_stdio_client(client: Client, epoch_timestamps: bool) -> Result<bool, String> {
    let stdout = std::io::stdout();
    drive(Shell::with_client(client, epoch_timestamps, stdout.lock()))
}

fn drive<W: Write>(mut shell: Shell<W>) -> Result<bool, String> {
    if std::io::stdin().is_terminal() {
        interactive(&mut shell).map_err(|e| e.to_string())?;
    } else {
        shell
            .run_script(std::io::stdin().lock())
            .map_err(|e| e.to_string())?;
    }
    let ok = !shell.had_error;
    shell.close().map_err(|e| e.to_string())?;
    Ok(ok)
}

fn interactive<W: Write>(shell: &mut Shell<W>) -> Result<(), Box<dyn std::error::Error>> {
    let mut rl = rustyline::DefaultEditor::new()?;
    if let Some((cols, _)) = rl.dimensions() {
        shell.set_width(cols as usize);
    }
    let history =
        std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cellar_shell_history"));
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    let mut n = 0;
    loop {
        n += 1;
        match rl.readline(&format!("cellar:{n:03}:0> ")) {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let _ = rl.add_history_entry(line.as_str());
                }
                if shell.execute(&line)? == Flow::Exit {
                    break;
                }
            }
            Err(rustyline::error::ReadlineError::Interrupted) => continue,
            Err(rustyline::error::ReadlineError::Eof) => break,
            Err(e) => return Err(e.into()),
        }
    }
    if let Some(h) = &history {
        let _ = rl.save_history(h);
    }
    Ok(())
}
