//! `git recode hook install|uninstall|status|post-commit`.

use std::io::Write;

use crate::app::{self, EXIT_OK, Error};
use crate::cli::{Ui, out_err};

/// The post-commit milestone hook
#[derive(clap::Subcommand, Debug)]
pub(crate) enum HookCommand {
    /// Install the post-commit hook into the hooks directory git uses (core.hooksPath honoured)
    ///
    /// Refuses (exit 3) where a post-commit hook git-recode did not write exists, unless
    /// --chain, which keeps that hook and runs it first with the same arguments. Never
    /// writes a tracked file nor inside a working tree: where a hook manager (husky,
    /// lefthook, pre-commit, simple-git-hooks) or a core.hooksPath in the working tree holds
    /// the hooks, it prints the line or stanza to add to their configuration (exit 3).
    Install {
        /// Keep an existing hook and run it first
        #[arg(long)]
        chain: bool,
    },
    /// Remove the hook, restoring exactly what was there before
    Uninstall,
    /// Say, for each worktree, whether a commit there reaches the milestone hook
    ///
    /// Follows core.hooksPath (worktree config included) and hook managers' configuration
    /// in each worktree, and checks that the hook actually runs: its interpreter exists and
    /// a dry call (RECODE_HOOK_DRY_RUN=1) reaches git-recode. The first line answers for
    /// this worktree.
    Status {
        /// One JSON document: {"schema":1,"worktrees":[...]}
        #[arg(long)]
        json: bool,
    },
    /// Journal a milestone when HEAD's message has a Recode-Phase: trailer (run by the hook)
    ///
    /// One line appended to <git common dir>/recode/milestones.journal, shown by status,
    /// classify and log at once and folded into the ledger by the next writing command.
    /// Never fails a commit: problems are printed on one line on stderr and the exit code
    /// is 0.
    PostCommit,
}

/// Run `hook …`.
///
/// Errors: refusals print a hint and return exit 3; I/O errors.
pub(crate) fn run(cmd: HookCommand, ui: &Ui) -> Result<i32, Error> {
    match cmd {
        HookCommand::PostCommit => Ok(post_commit_hook()),
        HookCommand::Install { chain } => act(Some(chain), ui),
        HookCommand::Uninstall => act(None, ui),
        HookCommand::Status { json } => status(json, ui),
    }
}

/// `hook status`: whether commits in this worktree (and the others) reach the hook.
fn status(json: bool, ui: &Ui) -> Result<i32, Error> {
    let (s, ui) = ui.session()?;
    let all = app::hook_status(&s);
    ui.warn(&s.take_warnings());
    let mut out = ui.out();
    if json {
        let text =
            serde_json::to_string(&app::hook_status_doc(&all)).expect("plain structs serialize");
        writeln!(out, "{text}").map_err(out_err)?;
        return Ok(EXIT_OK);
    }
    if let Some(r) = all.iter().find(|r| r.current) {
        match (&r.via, &r.why) {
            (Some(via), _) => writeln!(out, "installed: {via}"),
            (None, why) => writeln!(out, "not installed: {}", why.as_deref().unwrap_or("")),
        }
        .map_err(out_err)?;
    }
    if all.len() > 1 || all.iter().all(|r| !r.current) {
        for r in &all {
            match (&r.via, &r.why) {
                (Some(via), _) => writeln!(out, "  {}: reached via {via}", r.path.display()),
                (None, why) => writeln!(
                    out,
                    "  {}: not reached: {}",
                    r.path.display(),
                    why.as_deref().unwrap_or("")
                ),
            }
            .map_err(out_err)?;
        }
    }
    Ok(EXIT_OK)
}

/// `hook install` / `hook uninstall`: act, then say what was done (a refusal prints the
/// configuration to add on stdout and returns exit 3).
fn act(install: Option<bool>, ui: &Ui) -> Result<i32, Error> {
    let (s, ui) = ui.session()?;
    match ui.after(&s, app::hook_act(&s, install))? {
        app::Acted::Done(said) => writeln!(ui.out(), "{said}").map_err(out_err)?,
        app::Acted::Refused { advice, error } => {
            if let Some(text) = advice {
                write!(ui.out(), "{text}").map_err(out_err)?;
            }
            return Err(error);
        }
    }
    Ok(EXIT_OK)
}

/// The post-commit hook, as git runs it (`hook post-commit`, or the hook file taken
/// straight from `main` before any argument parsing): never fails, at most one line on
/// stderr. Returns the exit code, always 0.
pub(crate) fn post_commit_hook() -> i32 {
    let said = app::post_commit();
    if let Some(line) = said.stdout {
        println!("{line}");
    }
    if let Some(line) = said.stderr {
        eprintln!("{line}");
    }
    said.code
}
