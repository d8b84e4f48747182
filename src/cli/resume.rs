//! `git recode resume <branch>`.

use std::io::Write;

use crate::app::{self, EXIT_OK, Error};
use crate::cli::{Ui, out_err};

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
pub(crate) struct ResumeArgs {
    /// The worker's branch
    #[arg(value_parser = crate::app::parse_branch)]
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
pub(crate) fn run(args: ResumeArgs, ui: &Ui) -> Result<i32, Error> {
    let (s, ui) = ui.session()?;
    let req = app::ResumeRequest {
        output: args.output.clone(),
        json: args.json,
        dry_run: args.dry_run,
    };
    let r = ui.after(&s, app::resume(&s, &args.branch, req))?;
    print(&args, &r, &ui)
}

/// Print the outcome: the JSON document; or with --output the command on stdout; or the
/// prompt on stdout and the command on stderr.
///
/// Errors: [`Error`] when stdout cannot be written.
fn print(args: &ResumeArgs, r: &app::Resume, ui: &Ui) -> Result<i32, Error> {
    let mut out = ui.out();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &r.doc()).map_err(|e| out_err(e.into()))?;
        writeln!(out).map_err(out_err)?;
    } else if args.output.is_some() {
        writeln!(out, "{}", r.command()).map_err(out_err)?;
        eprintln!("# {}", r.attempt_line());
    } else {
        write!(out, "{}", r.prompt()).map_err(out_err)?;
        eprintln!("# {}", r.attempt_line());
        eprintln!(
            "# save the prompt above to a file, then run: {}",
            r.command()
        );
    }
    Ok(EXIT_OK)
}
