//! `cellar migrate`: the re-key migration as one resumable tool, on an embedded database
//! or through a server (`--connect`). `plan` records what moves and how; `create` makes
//! the new table pre-split from a sample of the old keys; `backfill` loads history from
//! a snapshot, regions in parallel, with a progress bar; `verify` compares per entity;
//! `status` shows the plan and the steps done. Writes made meanwhile go to both tables
//! through `cellar_client::migrate::DualWriter`.

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use cellar::bulkload::remote::RemoteTarget;
use cellar::bulkload::LoadTarget;
use cellar::client::RemoteConnection;
use cellar::migrate::backfill::{backfill, BackfillOptions, Progress};
use cellar::migrate::create::create;
use cellar::migrate::keymap::KeyMap;
use cellar::migrate::plan::{backfilled, record, state_dir, steps, Plan};
use cellar::migrate::verify::verify;
use cellar::migrate::Site;
use cellar_types::to_string_binary;

#[derive(Args)]
pub struct MigrateArgs {
    #[command(subcommand)]
    step: Step,
    /// Database directory (embedded; default ./cellar-data).
    #[arg(long, global = true, default_value = "cellar-data")]
    db: PathBuf,
    /// A server's host:port: migrate through it (it reads the backfill's files by path,
    /// so run on its machine or a shared file system).
    #[arg(long, global = true)]
    connect: Option<String>,
    /// Where the migration records its state (default DB/.migrate embedded,
    /// ./cellar-migrate through a server).
    #[arg(long, global = true)]
    state: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Step {
    /// Record the migration: OLD re-keyed by SPEC into NEW.
    Plan {
        #[arg(long)]
        from: String,
        #[arg(long)]
        to: String,
        /// bucket:UNIT[:SOURCE[:SEP]], tall:UNIT[:SEP], rebucket:UNIT[:SEP], salt:N[:SEP],
        /// or row=TEMPLATE[;qualifier=TEMPLATE].
        #[arg(long)]
        key_map: String,
    },
    /// Create the new table, pre-split in REGIONS from a sample of the old keys.
    Create {
        #[arg(long)]
        to: String,
        #[arg(long, default_value_t = 8)]
        regions: usize,
    },
    /// Load the old table's history (as of a snapshot) into the new one.
    Backfill {
        #[arg(long)]
        to: String,
        /// Source regions loaded at once.
        #[arg(long, default_value_t = 2)]
        threads: usize,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
    },
    /// Compare per entity; exit 1 when any differs.
    Verify {
        #[arg(long)]
        to: String,
        /// Only the N heaviest entities.
        #[arg(long)]
        sample: Option<usize>,
    },
    /// The plan and the steps done.
    Status {
        #[arg(long)]
        to: String,
    },
}

impl Step {
    fn to(&self) -> &str {
        match self {
            Step::Plan { to, .. }
            | Step::Create { to, .. }
            | Step::Backfill { to, .. }
            | Step::Verify { to, .. }
            | Step::Status { to } => to,
        }
    }
}

/// Ok(false): verification found differences.
pub fn run(a: &MigrateArgs) -> Result<bool, String> {
    let s = |e: cellar::DbError| e.to_string();
    match &a.connect {
        Some(addr) => {
            let conn = RemoteConnection::connect(addr).map_err(|e| e.to_string())?;
            let root = a.state.clone().unwrap_or_else(|| "cellar-migrate".into());
            let state = state_dir(&root, a.step.to());
            let target = match &a.step {
                Step::Backfill { to, .. } => Some(RemoteTarget::prepare(&conn, to).map_err(s)?),
                _ => None,
            };
            let local = LocalTarget(Arc::new(cellar_io::LocalFs::new()));
            let load: &dyn LoadTarget = match &target {
                Some(t) => t,
                None => &local,
            };
            let site = Site {
                conn: &conn,
                target: load,
                state,
            };
            let result = step(&site, &a.step);
            if let Some(t) = target {
                t.cleanup();
            }
            result
        }
        None => {
            let db = crate::open_db(&a.db, None, None)?;
            let root = a
                .state
                .clone()
                .unwrap_or_else(|| db.root().join(".migrate"));
            let site = Site {
                conn: db.connection(),
                target: db.master().as_ref(),
                state: state_dir(&root, a.step.to()),
            };
            let result = step(&site, &a.step);
            db.close().map_err(s)?;
            result
        }
    }
}

/// The steps that need no load target see the state's file system through this.
struct LocalTarget(Arc<dyn cellar_io::FileSystem>);

impl LoadTarget for LocalTarget {
    fn fs(&self) -> Arc<dyn cellar_io::FileSystem> {
        self.0.clone()
    }
    fn now(&self) -> i64 {
        use cellar_io::Clock as _;
        cellar_io::SystemClock.now_millis()
    }
    fn describe(&self, _: &str) -> cellar::Result<cellar_api::TableDescriptor> {
        Err(cellar_api::Error::new(cellar_api::ErrorKind::Unsupported, "no load target").into())
    }
    fn regions(&self, _: &str) -> cellar::Result<Vec<cellar_api::RegionInfo>> {
        Ok(Vec::new())
    }
    fn load(
        &self,
        _: &str,
        _: &cellar_api::RegionInfo,
        _: &[(Vec<u8>, PathBuf)],
    ) -> cellar::Result<Option<u64>> {
        Ok(None)
    }
}

fn step(site: &Site, step: &Step) -> Result<bool, String> {
    let s = |e: cellar::DbError| e.to_string();
    let fs = site.target.fs();
    let fs = fs.as_ref();
    let dir = &site.state;
    match step {
        Step::Plan { from, to, key_map } => {
            if !site
                .conn
                .admin()
                .table_exists(from)
                .map_err(|e| e.to_string())?
            {
                return Err(format!("table {from} does not exist"));
            }
            Plan::new(from, to, key_map).save(fs, dir).map_err(s)?;
            record(fs, dir, "plan").map_err(s)?;
            println!("planned: {from} -> {to} by {key_map}");
        }
        Step::Create { to, regions } => {
            let plan = Plan::load(fs, dir).map_err(s)?;
            let n = create(site, &plan, *regions).map_err(s)?;
            record(fs, dir, "create").map_err(s)?;
            println!("{to}: {n} regions");
        }
        Step::Backfill { threads, quiet, .. } => {
            let plan = Plan::load(fs, dir).map_err(s)?;
            let bar = ProgressBar::with_draw_target(
                None,
                if *quiet {
                    ProgressDrawTarget::hidden()
                } else {
                    ProgressDrawTarget::stderr()
                },
            );
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} backfill [{bar:30}] {pos}/{len} regions, {msg} ({elapsed})",
                )
                .map_err(|e| e.to_string())?
                .progress_chars("=> "),
            );
            let show = |p: &Progress| {
                bar.set_length(p.regions as u64);
                bar.set_position(p.done as u64);
                bar.set_message(format!("{} cells", p.cells));
            };
            let opts = BackfillOptions {
                threads: *threads,
                ..Default::default()
            };
            let r = backfill(site, &plan, opts, &show).map_err(s)?;
            bar.finish_and_clear();
            println!(
                "backfilled {} cells from {} regions ({} done before)",
                r.cells, r.regions, r.skipped
            );
        }
        Step::Verify { to, sample } => {
            let plan = Plan::load(fs, dir).map_err(s)?;
            let map = KeyMap::parse(&plan.key_map).map_err(|e| e.to_string())?;
            let (n, diffs) = verify(site.conn, &plan.from, to, &map, *sample).map_err(s)?;
            for d in &diffs {
                println!(
                    "differs: {} ({} cells in {}, {} in {to})",
                    to_string_binary(&d.entity),
                    d.old_cells,
                    plan.from,
                    d.new_cells
                );
            }
            println!("verified {n} entities: {} differ", diffs.len());
            if diffs.is_empty() {
                record(fs, dir, "verify").map_err(s)?;
            }
            return Ok(diffs.is_empty());
        }
        Step::Status { .. } => {
            let plan = Plan::load(fs, dir).map_err(s)?;
            println!("{} -> {} by {}", plan.from, plan.to, plan.key_map);
            let done = steps(fs, dir).map_err(s)?;
            for step in ["plan", "create", "backfill", "verify"] {
                let state = if done.contains(step) {
                    "done".to_string()
                } else if step == "backfill" {
                    match backfilled(fs, dir).map_err(s)?.len() {
                        0 => "to do".to_string(),
                        n => format!("{n} source regions loaded, resumable"),
                    }
                } else {
                    "to do".to_string()
                };
                println!("  {step}: {state}");
            }
        }
    }
    Ok(true)
}
