//! `git recode status`.

use std::io::Write;

use crate::classify;
use crate::cli::{Ctx, Ui, out_err};
use crate::error::{EXIT_OK, Error};
use crate::model::Worker;
use crate::snapshot::{self, Options};
use crate::{render, wire};

/// Show every worker: liveness, state and the action a loop should take
///
/// Workers are local branches matching recode.branchPattern, plus branches with ledger
/// events. Reading is read-only: no worktree's index is refreshed or locked.
///
/// Example, in a loop: `git recode status --porcelain | while IFS=$'\t' read -r task branch
/// liveness state action attempts; do ...; done`
#[derive(clap::Args, Debug)]
pub struct StatusArgs {
    /// Print one JSON document: {"schema": 1, "workers": [...]}
    #[arg(long, conflicts_with = "porcelain")]
    pub json: bool,
    /// Print one tab-separated line a worker: task branch liveness state action attempts
    #[arg(long)]
    pub porcelain: bool,
    /// Do not ask the forge (pull requests are then unknown)
    #[arg(long)]
    pub offline: bool,
    /// Also list tasks whose branch exists nowhere
    #[arg(long)]
    pub all: bool,
    /// Also read the worktrees of workers whose recorded pid is alive (else not read: dirty is null)
    #[arg(long)]
    pub deep: bool,
}

/// Classify every worker of the repository in the current directory.
///
/// Errors: as [`snapshot::gather`].
pub fn workers(ctx: &Ctx, opts: &Options, roster: snapshot::Roster) -> Result<Vec<Worker>, Error> {
    let census = snapshot::gather_from(&ctx.repo, &ctx.cfg, ctx.now, opts, roster)?;
    ctx.ui.warn(&census.warnings);
    Ok(census.snapshots.iter().map(classify::classify).collect())
}

/// One warning naming the workers whose ledger holds events stamped after now (a skewed
/// clock, or a ledger synced from one): that activity is ignored (SPEC 1.1 "Outcomes").
/// File and commit times are not looked at: only what the ledger says.
fn skew_warning(workers: &[Worker]) -> Option<String> {
    let skewed: Vec<&str> = workers
        .iter()
        .filter(|w| w.future_event.is_some())
        .map(|w| w.branch.as_str())
        .collect();
    (!skewed.is_empty()).then(|| {
        format!(
            "ledger events stamped in the future (a skewed clock, or a ledger synced from one) are ignored as activity for: {}",
            skewed.join(", ")
        )
    })
}

/// Run `status`.
///
/// Errors: [`Error`] from opening the repository or reading it.
pub fn run(args: StatusArgs, ui: &Ui) -> Result<i32, Error> {
    let ctx = Ctx::open(ui)?;
    let roster = snapshot::roster(&ctx.repo, &ctx.cfg, None)?;
    let forge = ctx.forge_view(args.offline, &roster, None, args.all);
    if !args.offline {
        // Once a run: the remote is on a forge whose token is not set (SPEC 1.2 "Forges").
        let missing = crate::forge::missing_token(&ctx.repo, &ctx.cfg);
        ctx.ui.warn(&missing.into_iter().collect::<Vec<_>>());
    }
    let workers = workers(
        &ctx,
        &Options {
            all: args.all,
            only_branch: None,
            forge,
            progress: !args.json && !args.porcelain,
            deep: args.deep,
        },
        roster,
    )?;
    ctx.ui
        .warn(&skew_warning(&workers).into_iter().collect::<Vec<_>>());
    let paths: Vec<&std::path::Path> = workers
        .iter()
        .filter_map(|w| w.worktree.as_deref().map(std::path::Path::new))
        .collect();
    ctx.ui.warn(
        &crate::hook::pickup::unreached_warning(&ctx.repo, &paths)
            .into_iter()
            .collect::<Vec<_>>(),
    );
    let mut out = std::io::stdout().lock();
    if args.json {
        let doc = wire::StatusDoc {
            schema: wire::SCHEMA,
            workers: workers.iter().map(Into::into).collect(),
        };
        serde_json::to_writer_pretty(&mut out, &doc).map_err(|e| out_err(e.into()))?;
        writeln!(out).map_err(out_err)?;
    } else if args.porcelain {
        render::porcelain(&mut out, &workers).map_err(out_err)?;
    } else {
        drop(out);
        let mut screen = ctx.ui.screen();
        render::table(&mut screen, &workers, ctx.ui.style()).map_err(out_err)?;
        screen.flush().map_err(out_err)?;
    }
    Ok(EXIT_OK)
}
