//! `git recode recover`.

use std::io::Write;

use crate::cli::{Ctx, Ui, out_err};
use crate::error::{EXIT_OK, Error};
use crate::recover::{self, Request};
use crate::{fence, wire};

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
pub struct RecoverArgs {
    /// The workers' branches (or --all)
    #[arg(conflicts_with = "all", value_parser = crate::cli::branch::parse)]
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
/// Errors: as [`recover::run`].
pub fn run(args: RecoverArgs, ui: &Ui) -> Result<i32, Error> {
    if args.branches.is_empty() && !args.all {
        return Err(Error::Usage(
            "name the workers' branches to recover, or --all for every worker (`git recode recover --all`)".into(),
        ));
    }
    let ctx = Ctx::open(ui)?;
    ctx.cfg.check_secrets()?; // SPEC 1.2: an invalid recode.secrets stops every command that deletes or pushes
    if !args.dry_run {
        crate::cli::pick_up(&ctx, &args.branches);
    }
    let report = recover::run(
        &ctx.repo,
        &ctx.cfg,
        ctx.now,
        &Request {
            branches: args.branches,
            all: args.all,
            dry_run: args.dry_run,
            progress: !args.json,
        },
    )?;
    ctx.ui.warn(&report.warnings);
    let steps = &report.steps;
    if args.json {
        let mut out = ctx.ui.out();
        let doc = wire::RecoverDoc {
            schema: wire::SCHEMA,
            results: steps.iter().map(Into::into).collect(),
        };
        serde_json::to_writer_pretty(&mut out, &doc).map_err(|e| out_err(e.into()))?;
        writeln!(out).map_err(out_err)?;
    } else if steps.is_empty() {
        writeln!(ctx.ui.screen(), "no workers").map_err(out_err)?;
    } else {
        // Branches and reasons are untrusted (a synced ledger's): every control character
        // shown escaped, a line break too, so one step stays one line (SPEC 1.2).
        let mut out = ctx.ui.screen();
        for s in steps {
            let result = serde_json::to_value(s.result)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            writeln!(
                out,
                "{:<28} {:<10} {:<7} {}",
                fence::shown(&s.branch),
                s.action,
                result,
                fence::shown(&s.reason)
            )
            .map_err(out_err)?;
        }
        out.flush().map_err(out_err)?;
    }
    if let Some(e) = &report.forge_error {
        return Err(Error::Partial(e.clone()));
    }
    let failed = steps.iter().filter(|s| s.error).count();
    if failed > 0 {
        return Err(Error::Partial(format!(
            "{} failed (each result says why); the rest was done",
            crate::render::plural(failed as u64, "step")
        )));
    }
    Ok(EXIT_OK)
}
