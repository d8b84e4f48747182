//! What the post-commit hook ledgers (SPEC "milestone", `hook`): HEAD's commit, when its
//! message carries a `Recode-Phase:` trailer, as one `milestone` on the branch HEAD is on
//! (during a rebase, the branch the rebase started from). One milestone per head and
//! phase ([`ledger::milestone_ledgered`], decided inside the compare-and-swap): git
//! runs the hook on every rebase pick and amend, and a pickup may race it.

use crate::config::Config;
use crate::ledger::{self, Body, Event, LedgerError};

/// What the hook did.
#[derive(Debug, PartialEq)]
pub enum Milestone {
    /// HEAD's message declares no phase (or HEAD is unborn).
    NoPhase,
    /// HEAD is detached outside a rebase: no branch to ledger against.
    NoBranch,
    /// The milestone for this head and phase was already ledgered.
    AlreadyLedgered,
    /// The `milestone` event, as stored.
    Ledgered(Box<Event>),
}

/// Why the hook could not ledger a milestone.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    /// The deadline passed with the notes ref locked or busy; the milestone stays in the
    /// commit's trailer, for the next writing command's pickup.
    #[error(
        "gave up after {budget_ms} ms: {notes_ref} is locked or busy; milestone '{phase}' of {short} is not ledgered yet (it stays in the commit's {trailer} trailer)",
        short = &head[..12],
        trailer = super::PHASE_TRAILER
    )]
    GaveUp {
        /// The hook's budget, in milliseconds.
        budget_ms: u128,
        /// The notes ref.
        notes_ref: String,
        /// The phase.
        phase: String,
        /// The commit (hex).
        head: String,
    },
    /// The ledger could not be read or written.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

/// The branch HEAD is on: HEAD's, or during a rebase the one it started from (the
/// `head-name` git keeps in `rebase-merge/` or `rebase-apply/`).
fn branch_of(repo: &gix::Repository) -> Option<String> {
    if let Ok(Some(name)) = repo.head_name() {
        return Some(name.shorten().to_string());
    }
    let git_dir = repo.git_dir();
    ["rebase-merge", "rebase-apply"].iter().find_map(|d| {
        std::fs::read_to_string(git_dir.join(d).join("head-name"))
            .ok()
            .and_then(|n| n.trim().strip_prefix("refs/heads/").map(str::to_string))
    })
}

/// Ledger HEAD's milestone, giving up at `deadline` (the hook's budget, `budget_ms` long,
/// for the message), stamped `now`, with the session id from [`super::SESSION_ENV`].
///
/// Errors: [`CommitError::GaveUp`], [`CommitError::Ledger`].
pub fn post_commit(
    repo: &gix::Repository,
    cfg: &Config,
    now: jiff::Timestamp,
    deadline: std::time::Instant,
    budget_ms: u128,
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
    let head = head.to_hex().to_string();
    let session_id = std::env::var(super::SESSION_ENV)
        .ok()
        .filter(|s| !s.is_empty());
    let decide = |events: &[Event]| {
        if ledger::milestone_ledgered(events, &head, &phase) {
            return Vec::new();
        }
        let body = Body::Milestone {
            phase: phase.clone(),
            session_id: session_id.clone(),
        };
        vec![Event::new(now, &task, Some(&branch), body).with_head(Some(head.clone()))]
    };
    match ledger::append_with_deadline(repo, &cfg.notes_ref, &task, now, deadline, decide) {
        Ok(mut stored) => Ok(stored.pop().map_or(Milestone::AlreadyLedgered, |e| {
            Milestone::Ledgered(Box::new(e))
        })),
        Err(LedgerError::Contended { notes_ref, .. }) => Err(CommitError::GaveUp {
            budget_ms,
            notes_ref,
            phase,
            head,
        }),
        Err(e) => Err(e.into()),
    }
}
