//! `git recode classify <branch>`.

use std::io::Write;

use crate::classify;
use crate::cli::{Ctx, out_err, warn_all};
use crate::error::{EXIT_OK, Error};
use crate::snapshot::{self, Options};
use crate::{render, wire};

/// Show one worker with the evidence for its state
///
/// Example: `git recode classify feat/issue-12-parser --json | jq -r .action`
#[derive(clap::Args, Debug)]
pub struct ClassifyArgs {
    /// The worker's branch
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
pub fn run(args: ClassifyArgs) -> Result<i32, Error> {
    let ctx = Ctx::open()?;
    let (forge, warning) = crate::forge::view(&ctx.repo, &ctx.cfg.remote, args.offline);
    warn_all(&warning.into_iter().collect::<Vec<_>>());
    let census = snapshot::gather(
        &ctx.repo,
        &ctx.cfg,
        ctx.now,
        &Options {
            all: true,
            only_branch: Some(args.branch.clone()),
            forge,
            progress: false,
        },
    )?;
    warn_all(&census.warnings);
    let snap = census
        .snapshots
        .into_iter()
        .find(|s| s.branch == args.branch)
        .filter(|s| s.head.is_some() || s.worktree.is_some() || !s.events.is_empty())
        .ok_or_else(|| Error::UnknownBranch {
            branch: args.branch.clone(),
        })?;
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
        render::classify_text(&mut out, &worker).map_err(out_err)?;
    }
    Ok(EXIT_OK)
}
