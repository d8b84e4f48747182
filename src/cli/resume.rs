//! `git recode resume <branch>`.

use std::io::Write;

use crate::classify;
use crate::cli::{Ctx, Ui, out_err};
use crate::error::{EXIT_OK, Error};
use crate::resume::start::{Request, Resumed, Started, start};
use crate::resume::{Facts, Launch, Mode};

/// Write the resume prompt and the command that continues the agent's session
///
/// The prompt is built from the repository and the ledger: commits since the base with
/// their milestones, the diffstat, WIP snapshots, uncommitted changes, the last gate,
/// and the previous attempt's final message fenced as untrusted output. A `resume` event
/// is ledgered with the new attempt number. At recode.maxAttempts (or when the worker
/// needs a human) it refuses with exit 3 and ledgers `escalated` once.
///
/// Without --output the prompt goes to stdout and the command to stderr; with --output F
/// the prompt goes to F and the command to stdout. The agent comes from recode.agent.
///
/// Example: `cmd=$(git recode resume "$branch" --output /tmp/p.md) && sh -c "$cmd"; git recode record exit "$branch" --rc $?`
#[derive(clap::Args, Debug)]
pub struct ResumeArgs {
    /// The worker's branch
    #[arg(value_parser = crate::cli::branch::parse)]
    pub branch: String,
    /// Write the prompt to this file
    #[arg(long, short, value_name = "F")]
    pub output: Option<std::path::PathBuf>,
    /// Print what would be done; write nothing (no ledger event, no file)
    #[arg(long)]
    pub dry_run: bool,
    /// Print {"schema": 1, ...} with the prompt path, command, attempt, mode and facts
    #[arg(long)]
    pub json: bool,
}

/// Run `resume`.
///
/// Errors: [`Error::UnknownBranch`]; [`Error::Refused`] (exit 3) when capped, needing a
/// human, or running.
pub fn run(args: ResumeArgs, ui: &Ui) -> Result<i32, Error> {
    let ctx = Ctx::open(ui)?;
    if !args.dry_run {
        crate::cli::pick_up(&ctx, std::slice::from_ref(&args.branch));
    }
    let mut snap = ctx.one_worker(&args.branch, false)?;
    let mut w = classify::classify(&snap);
    // SPEC 1.2 "Several machines": a takeover syncs and fetches first, then decides again.
    if !args.dry_run && snap.hosts.other.is_some() && crate::resume::refusal(&w).is_none() {
        crate::resume::takeover::before(&ctx.repo, &ctx.cfg, ctx.now, &args.branch)?;
        snap = ctx.one_worker(&args.branch, false)?;
        w = classify::classify(&snap);
    }
    let req = Request {
        output: args
            .output
            .as_deref()
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())),
        json: args.json,
        dry_run: args.dry_run,
    };
    let s = match start(&ctx.repo, &ctx.cfg, ctx.now, &snap, &w, &req)? {
        Resumed::Refused { why, running } => {
            return Err(Error::Refused {
                message: why,
                hint: if running {
                    "wait for it to exit (or stall), then resume".into()
                } else {
                    "a human must look: fix the cause, then `git recode record clear <branch>`"
                        .into()
                },
            });
        }
        Resumed::Started(s) => s,
    };
    ctx.ui.warn(&s.warnings);
    print(&args, &s)
}

/// Print the outcome: the JSON document; or with --output the command on stdout; or the
/// prompt on stdout and the command on stderr.
///
/// Errors: [`Error`] when stdout cannot be written.
fn print(args: &ResumeArgs, s: &Started) -> Result<i32, Error> {
    let mut out = std::io::stdout().lock();
    if args.json {
        let doc = crate::wire::ResumeDoc::new(s, args.dry_run);
        serde_json::to_writer_pretty(&mut out, &doc).map_err(|e| out_err(e.into()))?;
        writeln!(out).map_err(out_err)?;
    } else if args.output.is_some() {
        writeln!(out, "{}", s.launch.command).map_err(out_err)?;
        eprint_attempt(&s.facts, &s.launch);
    } else {
        write!(out, "{}", s.prompt).map_err(out_err)?;
        eprint_attempt(&s.facts, &s.launch);
        eprintln!(
            "# save the prompt above to a file, then run: {}",
            s.launch.command
        );
    }
    Ok(EXIT_OK)
}

/// The `# attempt N of M, MODE mode: WHY` line on stderr.
fn eprint_attempt(facts: &Facts, launch: &Launch) {
    let mode = match launch.mode {
        Mode::Session => "session",
        Mode::Fresh => "fresh",
    };
    eprintln!(
        "# attempt {} of {}, {mode} mode: {}",
        facts.attempt, facts.max_attempts, launch.why
    );
}
