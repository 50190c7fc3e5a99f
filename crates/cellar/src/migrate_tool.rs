//! `cellar migrate`: the re-key migration as one resumable tool on an embedded database.
//! `plan` records what moves and how; `create` makes the new table pre-split from a
//! sample of the old keys; `backfill` loads history from a snapshot; `verify` compares
//! per entity; `status` shows the plan and the steps done. Writes made meanwhile go to
//! both tables through `cellar::migrate::dual::DualWriter`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use cellar::migrate::backfill::{backfill, verify};
use cellar::migrate::keymap::KeyMap;
use cellar::migrate::plan::{create, record, state_dir, steps, Plan};
use cellar_types::to_string_binary;

#[derive(Args)]
pub struct MigrateArgs {
    #[command(subcommand)]
    step: Step,
    /// Database directory (embedded; default ./cellar-data).
    #[arg(long, global = true, default_value = "cellar-data")]
    db: PathBuf,
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

/// Ok(false): verification found differences.
pub fn run(a: &MigrateArgs) -> Result<bool, String> {
    let s = |e: cellar::DbError| e.to_string();
    let db = crate::open_db(&a.db, None, None)?;
    let root = db.root().to_path_buf();
    let result = (|| -> Result<bool, String> {
        match &a.step {
            Step::Plan { from, to, key_map } => {
                if !db.master().table_exists(from) {
                    return Err(format!("table {from} does not exist"));
                }
                let plan = Plan {
                    from: from.clone(),
                    to: to.clone(),
                    key_map: key_map.clone(),
                    snapshot: format!("migrate-{}", to.replace(':', "_")),
                };
                let dir = state_dir(&root, to);
                plan.save(&dir).map_err(s)?;
                if !steps(&dir).contains("plan") {
                    record(&dir, "plan").map_err(s)?;
                }
                println!("planned: {from} -> {to} by {key_map}");
            }
            Step::Create { to, regions } => {
                let dir = state_dir(&root, to);
                let plan = Plan::load(&dir).map_err(s)?;
                let n = create(db.master(), &plan, *regions).map_err(s)?;
                if !steps(&dir).contains("create") {
                    record(&dir, "create").map_err(s)?;
                }
                println!("{to}: {n} regions");
            }
            Step::Backfill { to } => {
                let dir = state_dir(&root, to);
                let plan = Plan::load(&dir).map_err(s)?;
                let map = KeyMap::parse(&plan.key_map).map_err(|e| e.to_string())?;
                let r =
                    backfill(db.master(), &plan.from, to, &map, &plan.snapshot, &dir).map_err(s)?;
                if !steps(&dir).contains("backfill") {
                    record(&dir, "backfill").map_err(s)?;
                }
                println!(
                    "backfilled {} cells from {} regions ({} done before)",
                    r.cells, r.regions, r.skipped
                );
            }
            Step::Verify { to, sample } => {
                let dir = state_dir(&root, to);
                let plan = Plan::load(&dir).map_err(s)?;
                let map = KeyMap::parse(&plan.key_map).map_err(|e| e.to_string())?;
                let (n, diffs) =
                    verify(db.connection(), &plan.from, to, &map, *sample).map_err(s)?;
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
                if diffs.is_empty() && !steps(&dir).contains("verify") {
                    record(&dir, "verify").map_err(s)?;
                }
                return Ok(diffs.is_empty());
            }
            Step::Status { to } => {
                let dir = state_dir(&root, to);
                let plan = Plan::load(&dir).map_err(s)?;
                println!("{} -> {} by {}", plan.from, plan.to, plan.key_map);
                let done = steps(&dir);
                for step in ["plan", "create", "backfill", "verify"] {
                    println!(
                        "  {step}: {}",
                        if done.contains(step) { "done" } else { "to do" }
                    );
                }
            }
        }
        Ok(true)
    })();
    db.close().map_err(s)?;
    result
}
