//! `git recode hook install|uninstall|status|post-commit`.

use crate::cli::{Ctx, Ui};
use crate::error::{EXIT_OK, Error};
use crate::hook;

/// The post-commit milestone hook
#[derive(clap::Subcommand, Debug)]
pub enum HookCommand {
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
pub fn run(cmd: HookCommand, ui: &Ui) -> Result<i32, Error> {
    match cmd {
        HookCommand::PostCommit => Ok(post_commit_hook()),
        HookCommand::Install { chain } => act(Some(chain), ui),
        HookCommand::Uninstall => act(None, ui),
        HookCommand::Status { json } => status(json, ui),
    }
}

/// `hook status`: whether commits in this worktree (and the others) reach the hook.
fn status(json: bool, ui: &Ui) -> Result<i32, Error> {
    let ctx = Ctx::open(ui)?;
    let all = hook::reach_and_run(&ctx.repo);
    if json {
        let doc = crate::wire::HookStatusDoc::new(&all);
        let text = serde_json::to_string(&doc).expect("plain structs serialize");
        crate::say!("{text}");
        return Ok(EXIT_OK);
    }
    if let Some(r) = all.iter().find(|r| r.current) {
        match (&r.via, &r.why) {
            (Some(via), _) => crate::say!("installed: {via}"),
            (None, why) => crate::say!("not installed: {}", why.as_deref().unwrap_or("")),
        }
    }
    if all.len() > 1 || all.iter().all(|r| !r.current) {
        for r in &all {
            match (&r.via, &r.why) {
                (Some(via), _) => crate::say!("  {}: reached via {via}", r.path.display()),
                (None, why) => crate::say!(
                    "  {}: not reached: {}",
                    r.path.display(),
                    why.as_deref().unwrap_or("")
                ),
            }
        }
    }
    Ok(EXIT_OK)
}

/// `hook install` / `hook uninstall`: act, then say what was done (a refusal prints the
/// configuration to add on stdout and returns exit 3).
fn act(install: Option<bool>, ui: &Ui) -> Result<i32, Error> {
    use hook::install::{Done, InstallError};
    let ctx = Ctx::open(ui)?;
    let done = match install {
        Some(chain) => hook::install::install(&ctx.repo, chain),
        None => hook::install::uninstall(&ctx.repo),
    };
    match done {
        Ok(Done::AlreadyInstalled(p)) => crate::say!("already installed in {}", p.display()),
        Ok(Done::AlreadyReached(via)) => crate::say!("already installed: {via}"),
        Ok(Done::Installed(p)) => crate::say!("installed {}", p.display()),
        Ok(Done::Repaired { hook, why }) => {
            crate::say!("repaired {} (it did not run: {why})", hook.display())
        }
        Ok(Done::Chained { hook, kept }) => crate::say!(
            "installed {} (runs the previous hook, kept as {}, first)",
            hook.display(),
            kept.display()
        ),
        Ok(Done::Removed(p)) => crate::say!("removed {}", p.display()),
        Ok(Done::Restored(p)) => crate::say!("restored the previous hook {}", p.display()),
        Ok(Done::SplicedOut(p)) => crate::say!("removed git-recode's lines from {}", p.display()),
        Ok(Done::NotInstalled(dir)) => crate::say!("not installed in {}", dir.display()),
        Err(InstallError::Refused {
            advice,
            message,
            hint,
        }) => {
            if let Some(text) = advice {
                print!("{text}");
            }
            return Err(Error::Refused { message, hint });
        }
        Err(InstallError::Io { what, path, source }) => {
            return Err(Error::Io { what, path, source });
        }
    }
    Ok(EXIT_OK)
}

/// The post-commit hook, as git runs it (`hook post-commit`, or a [`hook::direct_script`]
/// taken straight from `main` before any argument parsing): never fails, at most one line
/// on stderr. Returns the exit code, always 0.
pub fn post_commit_hook() -> i32 {
    if std::env::var_os(hook::runs::DRY_RUN_ENV).is_some() {
        let exe = std::env::current_exe().unwrap_or_default();
        println!(
            "{} ({} {})",
            hook::runs::DRY_RUN_ANSWER,
            env!("CARGO_PKG_VERSION"),
            exe.display()
        );
        return EXIT_OK;
    }
    if hook::certainly_no_phase() {
        return EXIT_OK;
    }
    if let Err(e) = post_commit() {
        let mut line = format!("git-recode post-commit: error: {e}");
        if let Some(h) = e.hint() {
            line.push_str(&format!("; hint: {h}"));
        }
        eprintln!("{}", line.replace('\n', " "));
    }
    EXIT_OK
}

fn post_commit() -> Result<(), Error> {
    let ctx = Ctx::open(&Ui::default())?;
    match hook::commit::post_commit(&ctx.repo, &ctx.cfg, ctx.now) {
        Ok(hook::commit::Milestone::Journaled(_, Some(warning))) => {
            eprintln!("git-recode post-commit: warning: {warning}");
            Ok(())
        }
        Ok(_) => Ok(()),
        Err(e) => Err(Error::Partial(e.to_string())),
    }
}
