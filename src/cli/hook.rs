//! `git recode hook post-commit`: ledger a milestone for a `Recode-Phase:` commit.

use crate::cli::Ctx;
use crate::error::{EXIT_OK, Error};
use crate::ledger::{self, Body, Event};
use crate::{hook, snapshot};

/// The post-commit milestone hook
#[derive(clap::Subcommand, Debug)]
pub enum HookCommand {
    /// Ledger a milestone when HEAD's message has a Recode-Phase: trailer (run by the hook)
    ///
    /// Never fails a commit: problems are printed on stderr and the exit code is 0.
    PostCommit,
}

/// Run `hook …`.
///
/// Errors: none escape `post-commit` (it reports on stderr and exits 0).
pub fn run(cmd: HookCommand) -> Result<i32, Error> {
    match cmd {
        HookCommand::PostCommit => {
            if let Err(e) = post_commit() {
                eprint!("git-recode post-commit: {}", e.render());
            }
            Ok(EXIT_OK)
        }
    }
}

fn post_commit() -> Result<(), Error> {
    let ctx = Ctx::open()?;
    let Some((head, message)) = hook::head_commit(&ctx.repo) else {
        return Ok(());
    };
    let Some(phase) = hook::phase_of(&message) else {
        return Ok(());
    };
    // The branch: HEAD's, or during a rebase the one it started from.
    let git_dir = ctx.repo.git_dir().to_path_buf();
    let branch = ctx
        .repo
        .head_name()
        .ok()
        .flatten()
        .map(|n| n.shorten().to_string())
        .or_else(|| {
            ["rebase-merge", "rebase-apply"].iter().find_map(|d| {
                std::fs::read_to_string(git_dir.join(d).join("head-name"))
                    .ok()
                    .and_then(|n| n.trim().strip_prefix("refs/heads/").map(str::to_string))
            })
        });
    let Some(branch) = branch else {
        return Ok(()); // detached outside a rebase: no branch to ledger against
    };
    let task = ctx.cfg.key_of(&branch);
    let head_hex = head.to_hex().to_string();
    // Post-commit fires on every rebase pick and amend: one milestone per (head, phase).
    let refs = snapshot::notes_refs(&ctx.repo, &ctx.cfg);
    let (existing, _) = ledger::read_task(&ctx.repo, &refs, &task)?;
    let seen = existing.events().any(|e| {
        e.head.as_deref() == Some(head_hex.as_str())
            && matches!(&e.body, Body::Milestone { phase: p, .. } if *p == phase)
    });
    if seen {
        return Ok(());
    }
    let session_id = std::env::var(hook::SESSION_ENV)
        .ok()
        .filter(|s| !s.is_empty());
    let event = Event::new(
        ctx.now,
        &task,
        Some(&branch),
        Body::Milestone { phase, session_id },
    )
    .with_head(Some(head_hex));
    ledger::append(&ctx.repo, &ctx.cfg.notes_ref, event)?;
    Ok(())
}
