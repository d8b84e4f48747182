//! `git recode classify <branch>`.

use std::io::Write;

use crate::classify;
use crate::cli::{Ctx, Ui, out_err};
use crate::error::{EXIT_OK, Error};
use crate::{render, wire};

/// Show one worker with the evidence for its state
///
/// Example: `git recode classify feat/issue-12-parser --json | jq -r .action`
#[derive(clap::Args, Debug)]
pub struct ClassifyArgs {
    /// The worker's branch
    #[arg(value_parser = crate::cli::branch::parse)]
    pub branch: String,
    /// Print the worker object with "schema": 1 and "evidence"
    #[arg(long)]
    pub json: bool,
    /// Do not ask the forge
    #[arg(long)]
    pub offline: bool,
}

/// Run `classify`.
///
/// Errors: [`Error::UnknownBranch`] when the branch is nowhere (no local or remote
/// branch, no worktree, no ledger).
pub fn run(args: ClassifyArgs, ui: &Ui) -> Result<i32, Error> {
    let ctx = Ctx::open(ui)?;
    let snap = ctx.one_worker(&args.branch, args.offline)?;
    let worker = classify::classify(&snap);
    let mut out = std::io::stdout().lock();
    if args.json {
        let doc = wire::ClassifyDoc {
            schema: wire::SCHEMA,
            worker: (&worker).into(),
            evidence: worker.evidence.clone(),
        };
        serde_json::to_writer_pretty(&mut out, &doc).map_err(|e| out_err(e.into()))?;
        writeln!(out).map_err(out_err)?;
    } else {
        drop(out);
        let mut screen = ctx.ui.screen();
        render::classify_text(&mut screen, &worker, ctx.ui.style()).map_err(out_err)?;
        screen.flush().map_err(out_err)?;
    }
    Ok(EXIT_OK)
}
