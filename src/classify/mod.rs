//! The classifier: a pure function from a [`Snapshot`] (what git, the ledger and the
//! forge said about one worker) to a [`Worker`] (liveness, state, action, reason).
//!
//! Every rule here is a row of the SPEC's "Classification" tables; the unit tests below
//! walk each row without a repository.

mod liveness;
mod overrides;
mod published;
mod table;

use liveness::{activity, liveness};
use overrides::{Decision, Facts, OVERRIDES};
use table::{Table, decide};

// What the unit tests (`tests/`) read through `use super::*`.
#[cfg(test)]
use crate::clock;
use crate::model::reason::{AfterRequest, Override, Reason, Row};
use crate::model::replay::Replay;
#[cfg(test)]
use crate::model::replay::{gate_on, replay};
use crate::model::*;
use crate::outcome::Outcome;

/// Classify one worker. Pure: the same snapshot always gives the same answer.
pub(crate) fn classify(s: &Snapshot) -> Worker {
    let mut r = s.replayed().clone();
    if s.blocker_closed {
        r.blocked = None; // SPEC: blocked until `record unblock` or the forge reports the blocker closed
    }
    let mut ev: Vec<String> = Vec::new();
    let (last_activity, idle, fresh_activity) = activity(s, &r, &mut ev);
    let (liveness, running_by) = liveness(s, &r, (fresh_activity, idle), &mut ev);
    let wt = s.worktree.as_ref();

    let dirty = wt.and_then(|w| if w.missing { None } else { w.dirty });
    let clean = dirty.is_none_or(|d| d.is_clean());
    let not_read = wt.is_some_and(|w| w.not_read);
    worktree_evidence(s, (dirty, not_read), &mut ev);
    let (pr, phantom) = forge_facts(s, &r, &mut ev);

    let (state, action, row) = decide(&Table {
        s,
        r: &r,
        wt,
        dirty,
        clean,
        pr: pr.as_ref(),
        last_exit: r.last_exit.map(|i| &s.events[i]),
    });
    ev.push(format!("state {state}: {}", row.said(s.noun)));

    // --- overrides, in order (one named rule per SPEC sentence; see OVERRIDES) --------
    let facts = Facts {
        s,
        r: &r,
        liveness,
        running_by,
        fresh_activity,
        idle,
    };
    let (action, mut reason) = overridden(&facts, action, row, &mut ev);
    reason.missing = wt.filter(|w| w.missing).map(|w| w.path.clone());
    reason.after = after_request(s, pr.as_ref());

    Worker {
        task: s.task.clone(),
        branch: s.branch.clone(),
        worktree: wt.map(|w| w.path.clone()),
        head: s.head,
        base: s.base.clone(),
        ahead: (!s.shallow).then_some(s.ahead),
        behind: (!s.shallow).then_some(s.behind),
        remote_ahead: s.remote_ahead,
        dirty,
        dirty_not_read: not_read,
        operation: wt.and_then(|w| w.operation),
        liveness,
        state,
        action,
        reason,
        attempts: r.attempts,
        max_attempts: s.max_attempts,
        last_outcome: r.last_outcome,
        phase: r.phase.clone(),
        session_id: r.session_id.clone(),
        last_activity,
        idle_seconds: idle,
        retry_after: match liveness {
            Liveness::Running if s.pid_alive != Some(false) => s.parked_until.or(r.retry_after),
            _ => r.retry_after,
        },
        pr,
        phantom,
        ignored: wt.map(|w| w.ignored.clone()).unwrap_or_default(),
        future_event: r.last_worker_event.filter(|t| *t > s.now),
        evidence: ev,
        host: s.hosts.attempt_host.clone(),
        other_host: s.hosts.other.is_some(),
    }
}

/// Evidence for the worktree (`dirty`; `not_read`: left unread, its pid alive), the
/// branch's position against its base, and the stash entries made on the branch.
fn worktree_evidence(s: &Snapshot, (dirty, not_read): (Option<Dirty>, bool), ev: &mut Vec<String>) {
    if not_read {
        ev.push("worktree not read: its recorded pid is alive (`status --deep` reads it)".into());
    }
    position_evidence(s, dirty, ev);
    if !s.stashes.is_empty() {
        ev.push(format!(
            "stash entries made on {}: {}",
            s.branch,
            s.stashes.join(", ")
        ));
    }
}

/// What the forge says: the branch's pull request (`None` when it has none or the forge
/// is unknown), and whether a success is phantom (the forge knows no request for it).
/// An unknown or failed forge is said in the evidence: nothing is decided on a guess.
fn forge_facts(s: &Snapshot, r: &Replay, ev: &mut Vec<String>) -> (Option<Pr>, bool) {
    let pr = match &s.forge {
        Forge::Known(pr) => pr.clone(),
        Forge::Unknown | Forge::Failed => None,
    };
    let phantom = matches!(s.forge, Forge::Known(None)) && r.last_outcome == Some(Outcome::Success);
    if matches!(s.forge, Forge::Unknown | Forge::Failed) {
        ev.push("forge unknown: nothing is published or phantom on a guess".into());
    }
    (pr, phantom)
}

/// SPEC `published` row: an open or merged request whose head the worker's head has moved
/// past (new work; classified as if it had no request) is named in the reason.
fn after_request(s: &Snapshot, pr: Option<&Pr>) -> Option<AfterRequest> {
    let PrHead::Behind(beyond) = s.pr_head else {
        return None;
    };
    pr.filter(|p| p.state != PrState::Closed)
        .map(|p| AfterRequest {
            pr: p.number,
            state: p.state,
            beyond,
        })
}

/// Evidence for the worktree's dirt and the branch's position against its base.
fn position_evidence(s: &Snapshot, dirty: Option<Dirty>, ev: &mut Vec<String>) {
    if let Some(d) = dirty {
        ev.push(format!(
            "worktree: {} staged, {} unstaged, {} untracked, {} conflicted",
            d.staged, d.unstaged, d.untracked, d.conflicted
        ));
    }
    ev.push(format!(
        "{} ahead, {} behind {}{}",
        s.ahead,
        s.behind,
        s.base,
        s.remote_ahead
            .map(|n| format!("; remote-tracking branch {n} ahead"))
            .unwrap_or_default()
    ));
}

/// The overrides, in order (one named rule per SPEC sentence; see [`OVERRIDES`]), applied
/// to the table's action; each one that fires is ledgered in the evidence.
fn overridden(facts: &Facts, action: Action, row: Row, ev: &mut Vec<String>) -> (Action, Reason) {
    // The comeback's row stands whatever else holds (the new host's agent running there
    // does not make this host's worktree wait).
    let taken = matches!(row, Row::TakenOver { .. });
    let mut d = Decision {
        action,
        reason: Reason {
            noun: facts.s.noun,
            ..Reason::row(row)
        },
    };
    for (name, rule) in OVERRIDES.iter().filter(|_| !taken) {
        if let Some((action, why)) = rule(facts, &d) {
            tracing::trace!(rule = name, "override");
            let waits = matches!(
                why,
                Override::Running { .. } | Override::UnrecordedActivity { .. }
            );
            d.action = action;
            d.reason.overrides.push(why);
            ev.push(if waits {
                format!("action wait: {}", d.reason)
            } else {
                d.reason.to_string()
            });
        }
    }
    (d.action, d.reason)
}

#[cfg(test)]
mod tests;
