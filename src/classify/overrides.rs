//! The overrides: after the state table has given a state and its action, these rules,
//! in this order, each one SPEC sentence, may replace the action (never the state) and
//! say why. Each is a named pure function, tested on its own in `tests.rs`.

use crate::model::reason::{HostWait, Kept, Override, Reason, RunningBy};
use crate::model::replay::Replay;
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
    /// When `running`, why ([`RunningBy`]).
    pub running_by: Option<RunningBy>,
    /// Activity within `recode.stallAfter`.
    pub fresh_activity: bool,
    /// Seconds since the last activity.
    pub idle: Option<i64>,
}

/// An action and the typed reason behind it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Decision {
    /// The action.
    pub action: Action,
    /// The table row and the overrides so far.
    pub reason: Reason,
}

/// A rule: `Some((action, why))` when it replaces the action.
type Rule = fn(&Facts, &Decision) -> Option<(Action, Override)>;

/// The overrides, in order; a later rule sees what an earlier one decided.
pub(super) const OVERRIDES: &[(&str, Rule)] = &[
    ("never-removed", never_removed),
    ("shallow-never-deleted", shallow),
    ("main-worktree-not-committed", main_not_committed),
    ("unreadable-is-not-clean", unreadable),
    ("detached-never-published", detached),
    ("missing-directory", missing_directory),
    ("secrets-kept", secrets_kept),
    ("forge-failed", forge_failed),
    ("transient-limit", transient),
    ("blocked", blocked),
    ("hung", stalled_alive),
    ("running", running),
    ("unrecorded-activity", unrecorded_activity),
    ("other-host", other_host),
];

/// SPEC `recover`/safety: the main worktree, a locked worktree and one holding submodules
/// are never removed.
fn never_removed(f: &Facts, d: &Decision) -> Option<(Action, Override)> {
    let w = f.s.worktree.as_ref().filter(|w| !w.missing)?;
    if d.action != Action::Delete {
        return None;
    }
    let why = if w.is_main {
        Kept::Main
    } else if let Some(r) = &w.locked {
        Kept::Locked(r.clone())
    } else if w.has_submodules {
        Kept::Submodules
    } else {
        return None;
    };
    Some((Action::None, Override::NeverRemoved(why)))
}

/// SPEC 1.2: in a shallow history where the branch and its base have no merge base,
/// nothing is deleted (what the branch holds beyond the base cannot be told).
fn shallow(f: &Facts, d: &Decision) -> Option<(Action, Override)> {
    (f.s.shallow && d.action == Action::Delete)
        .then_some((Action::None, Override::ShallowNeverDeleted))
}

/// The main worktree is the user's own checkout: never WIP-committed; resume in place.
fn main_not_committed(f: &Facts, d: &Decision) -> Option<(Action, Override)> {
    let w = f.s.worktree.as_ref()?;
    (d.action == Action::WipCommit && w.is_main)
        .then_some((Action::Resume, Override::MainNotCommitted))
}

/// SPEC special cases: what cannot be read is not clean — never deleted, published or
/// WIP-committed on that reading.
fn unreadable(f: &Facts, d: &Decision) -> Option<(Action, Override)> {
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
    Some((
        Action::None,
        Override::Unreadable {
            path: w.path.clone(),
            why,
        },
    ))
}

/// SPEC special cases: a detached worker's branch is never published while the worktree
/// is detached, and a WIP commit there would land on no branch.
fn detached(f: &Facts, d: &Decision) -> Option<(Action, Override)> {
    let w = f.s.worktree.as_ref().filter(|w| w.detached && !w.missing)?;
    if !matches!(
        d.action,
        Action::Publish | Action::WipCommit | Action::Delete
    ) {
        return None;
    }
    Some((
        Action::None,
        Override::Detached {
            path: w.path.clone(),
            branch: f.s.branch.clone(),
            refused: d.action,
        },
    ))
}

/// SPEC special cases: a registered worktree whose directory is missing is never
/// removed; and (1.2 "The loop settles") never handed to `resume`, which refuses it:
/// a human mounts or repairs it (`escalate`).
fn missing_directory(f: &Facts, d: &Decision) -> Option<(Action, Override)> {
    let w = f.s.worktree.as_ref().filter(|w| w.missing)?;
    let path = w.path.clone();
    match d.action {
        Action::Delete => Some((Action::None, Override::MissingDirectory { path })),
        Action::Resume => Some((Action::Escalate, Override::MissingNotResumed { path })),
        _ => None,
    }
}

/// SPEC special cases: ignored files matching `recode.secrets` keep the worktree.
fn secrets_kept(f: &Facts, d: &Decision) -> Option<(Action, Override)> {
    let w = f.s.worktree.as_ref().filter(|w| !w.secrets.is_empty())?;
    (d.action == Action::Delete).then(|| {
        (
            Action::None,
            Override::SecretsKept {
                files: w.secrets.clone(),
            },
        )
    })
}

/// SPEC: when the forge failed in this run, a delete (and a publish: a closed pull
/// request is never reopened) waits for a run in which it answers.
fn forge_failed(f: &Facts, d: &Decision) -> Option<(Action, Override)> {
    if !matches!(f.s.forge, crate::model::Forge::Failed) {
        return None;
    }
    matches!(d.action, Action::Delete | Action::Publish)
        .then_some((Action::Wait, Override::ForgeFailed { refused: d.action }))
}

/// SPEC: a transient last outcome waits until its `retry_after` has passed.
fn transient(f: &Facts, d: &Decision) -> Option<(Action, Override)> {
    if matches!(d.action, Action::Escalate | Action::Wait | Action::Kill) {
        return None;
    }
    match (f.r.last_outcome, f.r.retry_after) {
        (Some(Outcome::Transient), Some(t)) if t > f.s.now => {
            Some((Action::Wait, Override::Transient { retry_after: t }))
        }
        _ => None,
    }
}

/// SPEC: a `blocked` outcome waits until the blocker is resolved.
fn blocked(f: &Facts, d: &Decision) -> Option<(Action, Override)> {
    if matches!(d.action, Action::Escalate | Action::Wait) {
        return None;
    }
    let b = f.r.blocked.as_ref()?;
    Some((Action::Wait, Override::Blocked { on: b.clone() }))
}

/// SPEC 1.3 "The loop as people run it": a worker stalled while its agent's pid is alive
/// (hung past `recode.hungAfter`, or parked on a limit and silent past its reset +
/// `recode.stallAfter`) is never resumed beside that agent, nor WIP-committed, published or
/// deleted under it: `kill` (`recover` ends the process, the next tick acts on the rest).
fn stalled_alive(f: &Facts, _d: &Decision) -> Option<(Action, Override)> {
    (f.liveness == Liveness::Stalled && f.s.pid_alive == Some(true)).then_some((
        Action::Kill,
        Override::Hung {
            idle: f.idle.unwrap_or(0),
            until: f.s.parked_until,
        },
    ))
}

/// SPEC: a running worker's action is `wait`, whatever its debris; the reason names the
/// fact its liveness was decided on.
fn running(f: &Facts, d: &Decision) -> Option<(Action, Override)> {
    let why = Override::Running {
        by: f.running_by.unwrap_or(RunningBy::Activity),
    };
    (f.liveness == Liveness::Running && !repeats(d, &why)).then_some((Action::Wait, why))
}

/// SPEC: `unknown` liveness with recent activity waits (an unrecorded agent may be at work).
fn unrecorded_activity(f: &Facts, d: &Decision) -> Option<(Action, Override)> {
    let why = Override::UnrecordedActivity {
        idle: f.idle.unwrap_or(0),
    };
    (f.liveness == Liveness::Unknown && f.fresh_activity && !repeats(d, &why))
        .then_some((Action::Wait, why))
}

/// Whether `d` already waits for exactly this reason (a rule never repeats itself).
fn repeats(d: &Decision, why: &Override) -> bool {
    d.action == Action::Wait && d.reason.last_override() == Some(why)
}

/// SPEC 1.2 "Several machines": a worker whose newest attempt ran on another host is
/// never acted on here (`wait`, the host named) until that host has been silent for
/// `recode.hostTimeout`; its pid is never probed here (its heartbeat says).
fn other_host(f: &Facts, d: &Decision) -> Option<(Action, Override)> {
    let o = f.s.hosts.other.as_ref()?;
    let now = f.s.now;
    let beat_age = o
        .beat_at
        .map(|b| o.beat_age(now, b))
        .filter(|a| *a < o.timeout);
    let attempt_age = o.beat_age(now, o.attempt_at);
    let why = match (beat_age, o.alive) {
        (Some(age), Some(true)) => HostWait::Alive { age },
        _ if attempt_age < f.s.stall_after => HostWait::Young { age: attempt_age },
        (Some(age), _) => HostWait::HostHandles { age },
        _ if !o.silent(now) => HostWait::NotSilent {
            age: o.beat_age(now, o.last_seen()),
            timeout: o.timeout,
        },
        // Silent: only a takeover (`resume`) acts on its worker here; what needs a human
        // still says so. Publishing or deleting another host's branch is that host's.
        _ if matches!(
            d.action,
            Action::Resume | Action::Escalate | Action::Wait | Action::None
        ) =>
        {
            return None;
        }
        _ => {
            return Some((
                Action::None,
                Override::OtherHost {
                    host: crate::model::host_shown(&o.host, o.label.as_deref()),
                    why: HostWait::Silent {
                        age: o.beat_age(now, o.last_seen()),
                        refused: d.action,
                    },
                },
            ));
        }
    };
    Some((
        Action::Wait,
        Override::OtherHost {
            host: crate::model::host_shown(&o.host, o.label.as_deref()),
            why,
        },
    ))
}
