//! The overrides: after the state table has given a state and its action, these rules,
//! in this order, each one SPEC sentence, may replace the action (never the state) and
//! say why. Each is a named pure function, tested on its own in `tests.rs`.

use crate::clock;
use crate::ledger::Replay;
use crate::model::{Action, Liveness, Snapshot};
use crate::outcome::Outcome;

/// What the overrides read: the snapshot, its replay, and the liveness decided.
pub(super) struct Facts<'a> {
    /// What git, the ledger and the forge said.
    pub s: &'a Snapshot,
    /// The ledger replayed.
    pub r: &'a Replay,
    /// Liveness.
    pub liveness: Liveness,
    /// Activity within `recode.stallAfter`.
    pub fresh_activity: bool,
    /// Seconds since the last activity.
    pub idle: Option<i64>,
}

/// An action and the sentence that explains it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Decision {
    /// The action.
    pub action: Action,
    /// One sentence of evidence.
    pub reason: String,
}

type Rule = fn(&Facts, &Decision) -> Option<Decision>;

/// The overrides, in order; a later rule sees what an earlier one decided.
pub(super) const OVERRIDES: &[(&str, Rule)] = &[
    ("never-removed", never_removed),
    ("main-worktree-not-committed", main_not_committed),
    ("unreadable-is-not-clean", unreadable),
    ("detached-never-published", detached),
    ("missing-directory", missing_directory),
    ("secrets-kept", secrets_kept),
    ("forge-failed", forge_failed),
    ("transient-limit", transient),
    ("blocked", blocked),
    ("running", running),
    ("unrecorded-activity", unrecorded_activity),
];

fn with(d: &Decision, action: Action, reason: String) -> Option<Decision> {
    let _ = d;
    Some(Decision { action, reason })
}

/// SPEC `recover`/safety: the main worktree, a locked worktree and one holding submodules
/// are never removed.
fn never_removed(f: &Facts, d: &Decision) -> Option<Decision> {
    let w = f.s.worktree.as_ref().filter(|w| !w.missing)?;
    if d.action != Action::Delete {
        return None;
    }
    let why = if w.is_main {
        "it is the main worktree: git-recode never removes it".to_string()
    } else if let Some(r) = &w.locked {
        if r.is_empty() {
            "the worktree is locked: never removed".to_string()
        } else {
            format!("the worktree is locked ({r}): never removed")
        }
    } else if w.has_submodules {
        "the worktree holds submodules, which git worktree remove refuses: never removed".into()
    } else {
        return None;
    };
    with(d, Action::None, format!("{}; {why}", d.reason))
}

/// The main worktree is the user's own checkout: never WIP-committed; resume in place.
fn main_not_committed(f: &Facts, d: &Decision) -> Option<Decision> {
    let w = f.s.worktree.as_ref()?;
    (d.action == Action::WipCommit && w.is_main).then(|| Decision {
        action: Action::Resume,
        reason: format!(
            "{}; in the main worktree, which git-recode never commits: resume in place",
            d.reason
        ),
    })
}

/// SPEC special cases: what cannot be read is not clean — never deleted, published or
/// WIP-committed on that reading.
fn unreadable(f: &Facts, d: &Decision) -> Option<Decision> {
    let w = f.s.worktree.as_ref().filter(|w| !w.missing)?;
    if !matches!(
        d.action,
        Action::Delete | Action::Publish | Action::WipCommit
    ) {
        return None;
    }
    let why = w.unreadable.clone().or_else(|| {
        w.dirty
            .is_none()
            .then(|| "its status was not read".to_string())
    })?;
    with(
        d,
        Action::None,
        format!(
            "the worktree {} is not clean on this reading: {why}",
            w.path
        ),
    )
}

/// SPEC special cases: a detached worker's branch is never published while the worktree
/// is detached, and a WIP commit there would land on no branch.
fn detached(f: &Facts, d: &Decision) -> Option<Decision> {
    let w = f.s.worktree.as_ref().filter(|w| w.detached && !w.missing)?;
    let what = match d.action {
        Action::Publish => "its branch is never published while the worktree is detached",
        Action::WipCommit => "a WIP commit there would land on no branch",
        Action::Delete => "a detached worktree is never removed",
        _ => return None,
    };
    with(
        d,
        Action::None,
        format!(
            "{}; the worktree {} is on a detached HEAD: {what}; `git -C {} switch {}` first",
            d.reason, w.path, w.path, f.s.branch
        ),
    )
}

/// SPEC special cases: a registered worktree whose directory is missing is never removed.
fn missing_directory(f: &Facts, d: &Decision) -> Option<Decision> {
    let w = f.s.worktree.as_ref().filter(|w| w.missing)?;
    (d.action == Action::Delete).then(|| Decision {
        action: Action::None,
        reason: format!(
            "worktree directory {} is missing (maybe an unmounted volume): never removed",
            w.path
        ),
    })
}

/// SPEC special cases: ignored files matching `recode.secrets` keep the worktree.
fn secrets_kept(f: &Facts, d: &Decision) -> Option<Decision> {
    let w = f.s.worktree.as_ref().filter(|w| !w.secrets.is_empty())?;
    (d.action == Action::Delete).then(|| Decision {
        action: Action::None,
        reason: format!(
            "worktree holds ignored secret files ({}): never removed",
            w.secrets.join(", ")
        ),
    })
}

/// SPEC: when the forge failed in this run, a delete (and a publish: a closed pull
/// request is never reopened) waits for a run in which it answers.
fn forge_failed(f: &Facts, d: &Decision) -> Option<Decision> {
    if !matches!(f.s.forge, crate::model::Forge::Failed) {
        return None;
    }
    let what = match d.action {
        Action::Delete => "a delete",
        Action::Publish => "publishing",
        _ => return None,
    };
    with(
        d,
        Action::Wait,
        format!("the forge failed in this run: {what} waits for a run in which it answers"),
    )
}

/// SPEC: a transient last outcome waits until its `retry_after` has passed.
fn transient(f: &Facts, d: &Decision) -> Option<Decision> {
    if matches!(d.action, Action::Escalate | Action::Wait) {
        return None;
    }
    match (f.r.last_outcome, f.r.retry_after) {
        (Some(Outcome::Transient), Some(t)) if t > f.s.now => with(
            d,
            Action::Wait,
            format!("transient limit: retry after {}", clock::format_secs(t)),
        ),
        _ => None,
    }
}

/// SPEC: a `blocked` outcome waits until the blocker is resolved.
fn blocked(f: &Facts, d: &Decision) -> Option<Decision> {
    if matches!(d.action, Action::Escalate | Action::Wait) {
        return None;
    }
    let b = f.r.blocked.as_ref()?;
    with(
        d,
        Action::Wait,
        format!("blocked on {b} until `git recode record unblock`"),
    )
}

/// SPEC: a running worker's action is `wait`, whatever its debris.
fn running(f: &Facts, d: &Decision) -> Option<Decision> {
    (f.liveness == Liveness::Running)
        .then(|| Decision {
            action: Action::Wait,
            reason: format!(
                "worker is running ({})",
                if f.s.pid_alive == Some(true) {
                    "its pid is alive"
                } else {
                    "recent activity"
                }
            ),
        })
        .filter(|n| n != d)
}

/// SPEC: `unknown` liveness with recent activity waits (an unrecorded agent may be at work).
fn unrecorded_activity(f: &Facts, d: &Decision) -> Option<Decision> {
    (f.liveness == Liveness::Unknown && f.fresh_activity)
        .then(|| Decision {
            action: Action::Wait,
            reason: format!(
                "no attempt recorded but activity {} ago: an unrecorded agent may be at work",
                clock::human_secs(f.idle.unwrap_or(0))
            ),
        })
        .filter(|n| n != d)
}
