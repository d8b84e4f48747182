//! `git recode classify <branch>`.

use std::io::Write;

use crate::app::{self, EXIT_OK, Error};
use crate::cli::{Ui, out_err};
use crate::{render, wire};

/// Show one worker with the evidence for its state
///
/// Example: `git recode classify feat/issue-12-parser --json | jq -r .action`
#[derive(clap::Args, Debug)]
pub(crate) struct ClassifyArgs {
    /// The worker's branch
    #[arg(value_parser = crate::app::parse_branch)]
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
pub(crate) fn run(args: ClassifyArgs, ui: &Ui) -> Result<i32, Error> {
    let (s, ui) = ui.session()?;
    let worker = ui.after(&s, app::classify(&s, &args.branch, args.offline))?;
    if args.json {
        let mut out = ui.out();
        let doc = wire::ClassifyDoc {
            schema: wire::SCHEMA,
            worker: (&worker).into(),
            evidence: worker.evidence.clone(),
        };
        serde_json::to_writer_pretty(&mut out, &doc).map_err(|e| out_err(e.into()))?;
        writeln!(out).map_err(out_err)?;
    } else {
        let mut screen = ui.screen();
        render::classify_text(&mut screen, &worker, ui.style()).map_err(out_err)?;
        screen.flush().map_err(out_err)?;
    }
    Ok(EXIT_OK)
}
