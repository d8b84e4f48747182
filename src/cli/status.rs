//! `git recode status`.

use std::io::Write;

use crate::app::{self, EXIT_OK, Error};
use crate::cli::{Ui, out_err};
use crate::{render, wire};

/// Show every worker: liveness, state and the action a loop should take
///
/// Workers are local branches matching recode.branchPattern, plus branches with ledger
/// events. Reading is read-only: no worktree's index is refreshed or locked.
///
/// Example, in a loop: `git recode status --porcelain | while IFS=$'\t' read -r task branch
/// liveness state action attempts; do ...; done`
#[derive(clap::Args, Debug)]
pub(crate) struct StatusArgs {
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

/// Run `status`.
///
/// Errors: [`Error`] from opening the repository or reading it.
pub(crate) fn run(args: StatusArgs, ui: &Ui) -> Result<i32, Error> {
    let (s, ui) = ui.session()?;
    let req = app::StatusRequest {
        offline: args.offline,
        all: args.all,
        deep: args.deep,
        progress: !args.json && !args.porcelain,
    };
    let workers = ui.after(&s, app::status(&s, req))?;
    if args.json {
        let mut out = ui.out();
        let doc = wire::StatusDoc {
            schema: wire::SCHEMA,
            workers: workers.iter().map(Into::into).collect(),
        };
        serde_json::to_writer_pretty(&mut out, &doc).map_err(|e| out_err(e.into()))?;
        writeln!(out).map_err(out_err)?;
    } else if args.porcelain {
        render::porcelain(&mut ui.out(), &workers).map_err(out_err)?;
    } else {
        let mut screen = ui.screen();
        render::table(&mut screen, &workers, ui.style()).map_err(out_err)?;
        screen.flush().map_err(out_err)?;
    }
    Ok(EXIT_OK)
}
