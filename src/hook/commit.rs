//! What the post-commit hook writes (SPEC "milestone", `hook`): HEAD's commit,
//! when its message carries a `Recode-Phase:` trailer, as one `milestone` event on the
//! branch HEAD is on (during a rebase, the branch the rebase started from), appended as
//! one line to the milestone journal ([`super::journal`]): no ledger read or write, so a
//! commit pays one `O_APPEND` write. Git runs the hook on every rebase pick and amend, so
//! the journal may hold one `(head, phase)` twice: readers and the fold keep the first
//! and drop any the ledger already holds (the fold decides it inside the ledger's
//! compare-and-swap, [`crate::model::replay::milestone_ledgered`]).

use crate::config::Config;
use crate::model::{Body, Event};

/// What the hook did.
#[derive(Debug, PartialEq)]
pub(crate) enum Milestone {
    /// HEAD's message declares no phase (or HEAD is unborn).
    NoPhase,
    /// HEAD is detached outside a rebase: no branch to ledger against.
    NoBranch,
    /// The `milestone` event (`seq` 0), as appended to the journal, and the warning
    /// when [`super::SESSION_ENV`] held no session id (the event is journaled without it).
    Journaled(Box<Event>, Option<String>),
}

/// Why the hook could not journal a milestone: the journal could not be created or
/// appended to. The milestone stays in the commit's trailer, for readers and the next
/// writing command's pickup.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot append to {}: {source}; milestone '{phase}' of {short} is not journaled (it stays in the commit's {trailer} trailer)",
    path.display(),
    short = head.to_hex_with_len(12),
    trailer = super::PHASE_TRAILER
)]
pub(crate) struct CommitError {
    /// The file or directory the write failed on.
    pub path: std::path::PathBuf,
    /// The phase.
    pub phase: String,
    /// The commit.
    pub head: gix::ObjectId,
    /// The I/O error.
    pub source: std::io::Error,
}

/// The branch HEAD is on: HEAD's, or during a rebase the one it started from (the
/// `head-name` git keeps in `rebase-merge/` or `rebase-apply/`).
fn branch_of(repo: &gix::Repository) -> Option<String> {
    if let Some(name) = crate::refs::head(repo).as_ref().and_then(|h| h.branch()) {
        return Some(name.strip_prefix("refs/heads/").unwrap_or(name).to_string());
    }
    crate::worktree::rebase_head_name(repo.git_dir())
        .and_then(|n| n.strip_prefix("refs/heads/").map(str::to_string))
}

/// The session id the hook was given in [`super::SESSION_ENV`]: `None` when unset or
/// empty.
///
/// Errors: the warning when it is not a session id ([`crate::fence::session_id_ok`]: an
/// option word such as `--dangerously-skip-permissions` never enters the ledger, SPEC 1.2
/// "Untrusted input stays out"), the value shown escaped and cut at 200 characters.
pub(crate) fn session_from_env() -> Result<Option<String>, String> {
    let Some(raw) = std::env::var_os(super::SESSION_ENV).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    match raw.to_str() {
        Some(id) if crate::fence::session_id_ok(id) => Ok(Some(id.to_string())),
        _ => {
            let text = raw.to_string_lossy();
            let cut: String = text.chars().take(200).collect();
            Err(format!(
                "{} \"{}\" is not a session id: it must match ^[A-Za-z0-9._:@+-]{{1,200}}$ and not start with `-`",
                super::SESSION_ENV,
                crate::fence::shown(&cut)
            ))
        }
    }
}

/// Journal HEAD's milestone, stamped `now` (milliseconds), with the session id from
/// [`super::SESSION_ENV`] when it is one ([`session_from_env`]; else without, and a
/// warning) and the task from `recode.branchPattern`.
///
/// Errors: [`CommitError`] when the journal cannot be appended to.
pub(crate) fn post_commit(
    repo: &gix::Repository,
    cfg: &Config,
    now: jiff::Timestamp,
) -> Result<Milestone, CommitError> {
    let Some((head, message)) = super::head_commit(repo) else {
        return Ok(Milestone::NoPhase);
    };
    let Some(phase) = super::phase_of(&message) else {
        return Ok(Milestone::NoPhase);
    };
    let Some(branch) = branch_of(repo) else {
        return Ok(Milestone::NoBranch);
    };
    let task = cfg.key_of(&branch);
    let (session_id, warning) = match session_from_env() {
        Ok(id) => (id, None),
        Err(why) => (
            None,
            Some(format!(
                "{why}; milestone '{phase}' is journaled without it"
            )),
        ),
    };
    let body = Body::Milestone {
        phase: phase.clone(),
        session_id,
    };
    let event = Event::new(now, &task, Some(&branch), body).with_head(Some(head));
    match super::journal::append(&super::journal::dir(repo), &event) {
        Ok(_) => Ok(Milestone::Journaled(Box::new(event), warning)),
        Err((path, source)) => Err(CommitError {
            path,
            phase,
            head,
            source,
        }),
    }
}
