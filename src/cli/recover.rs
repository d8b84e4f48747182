//! `git recode recover`.

use std::io::Write;

use crate::app::{self, EXIT_OK, Error};
use crate::cli::{Ui, out_err};
use crate::{render, wire};

/// Carry out the mechanical actions: delete, publish, wip-commit, escalate
///
/// Every step is ledgered. `wait`, `resume` and `none` are not carried out (`skipped`).
/// A failed gate, a worker that needs a human, or a publish held for want of a remote or
/// a token are results (exit 0); a rejected push or a forge error is an error (exit 1).
///
/// Example: `git recode recover --all --json | jq -r '.results[] | select(.result=="failed") | .branch'`
#[derive(clap::Args, Debug)]
#[command(
    override_usage = "git recode recover [OPTIONS] <BRANCHES>...\n       git recode recover [OPTIONS] --all"
)]
pub(crate) struct RecoverArgs {
    /// The workers' branches (or --all)
    #[arg(conflicts_with = "all", value_parser = crate::app::parse_branch)]
    pub branches: Vec<String>,
    /// Every worker
    #[arg(long)]
    pub all: bool,
    /// Print the plan and change nothing (no ref, note, file or worktree)
    #[arg(long)]
    pub dry_run: bool,
    /// Print {"schema": 1, "results": [...]}
    #[arg(long)]
    pub json: bool,
}

/// Run `recover`.
///
/// Errors: as [`app::recover`]; [`app::Recovered::failure`] once the steps are shown.
pub(crate) fn run(args: RecoverArgs, ui: &Ui) -> Result<i32, Error> {
    let req = app::RecoverRequest {
        branches: args.branches,
        all: args.all,
        dry_run: args.dry_run,
        progress: !args.json,
    };
    if req.branches.is_empty() && !req.all {
        // Before opening the repository: bad usage is bad usage anywhere.
        return Err(app::recover_usage());
    }
    let (s, ui) = ui.session()?;
    let done = ui.after(&s, app::recover(&s, req))?;
    let steps = &done.steps;
    if args.json {
        let mut out = ui.out();
        let doc = wire::RecoverDoc {
            schema: wire::SCHEMA,
            results: steps.iter().map(Into::into).collect(),
        };
        serde_json::to_writer_pretty(&mut out, &doc).map_err(|e| out_err(e.into()))?;
        writeln!(out).map_err(out_err)?;
    } else if steps.is_empty() {
        writeln!(ui.screen(), "no workers").map_err(out_err)?;
    } else {
        // Branches and reasons are untrusted (a synced ledger's): every control character
        // shown escaped, a line break too, so one step stays one line (SPEC 1.2).
        let mut out = ui.screen();
        for s in steps {
            let result = serde_json::to_value(s.result)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            writeln!(
                out,
                "{:<28} {:<10} {:<7} {}",
                render::shown(&s.branch),
                s.action,
                result,
                render::shown(&s.reason)
            )
            .map_err(out_err)?;
        }
        out.flush().map_err(out_err)?;
    }
    match done.failure() {
        Some(e) => Err(e),
        None => Ok(EXIT_OK),
    }
}
