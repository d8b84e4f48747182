//! The classifier: a pure function from a [`Snapshot`] (what git, the ledger and the
//! forge said about one worker) to a [`Worker`] (liveness, state, action, reason).
//!
//! Every rule here is a row of the SPEC's "Classification" tables; the unit tests below
//! walk each row without a repository.

mod overrides;
mod published;

use overrides::{Decision, Facts, OVERRIDES};
use published::published;

use crate::clock;
#[cfg(test)]
use crate::ledger::replay;
use crate::ledger::{Body, Event, Replay, gate_on, left_out_last, pushed_by_hand, replay_for};
use crate::model::reason::{GateSeen, Override, Reason, Row, RunningBy};
use crate::model::*;
use crate::outcome::Outcome;

/// Classify one worker. Pure: the same snapshot always gives the same answer.
pub fn classify(s: &Snapshot) -> Worker {
    let mut r = replay_for(&s.events, &s.branch);
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
    if not_read {
        ev.push("worktree not read: its recorded pid is alive (`status --deep` reads it)".into());
    }
    position_evidence(s, dirty, &mut ev);
    if !s.stashes.is_empty() {
        ev.push(format!(
            "stash entries made on {}: {}",
            s.branch,
            s.stashes.join(", ")
        ));
    }
    let pr = match &s.forge {
        Forge::Known(pr) => pr.clone(),
        Forge::Unknown | Forge::Failed => None,
    };
    let last_exit = r.last_exit.map(|i| &s.events[i]);
    let phantom = matches!(s.forge, Forge::Known(None)) && r.last_outcome == Some(Outcome::Success);
    if matches!(s.forge, Forge::Unknown | Forge::Failed) {
        ev.push("forge unknown: nothing is published or phantom on a guess".into());
    }

    let (state, action, row) = decide(&Table {
        s,
        r: &r,
        wt,
        dirty,
        clean,
        pr: pr.as_ref(),
        last_exit,
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

/// Activity (SPEC "stalled"): the newest of the worker's ledger events, commits, file
/// mtimes and transcript, each after git-recode's own last action; a time after `now` is
/// ignored (a skewed clock). Returns `(last activity, idle seconds, fresh)`.
fn activity(
    s: &Snapshot,
    r: &Replay,
    ev: &mut Vec<String>,
) -> (Option<jiff::Timestamp>, Option<i64>, bool) {
    let wt = s.worktree.as_ref();
    let own = r.last_own_action;
    let file_activity = wt
        .and_then(|w| w.newest_mtime)
        .filter(|m| own.is_none_or(|o| *m > o));
    let transcript = s.transcript_mtime.filter(|m| own.is_none_or(|o| *m > o));
    let signals = [
        r.last_worker_event,
        s.newest_commit,
        file_activity,
        transcript,
    ];
    // A timestamp from the future (a skewed clock, a synced ledger) is not activity
    // (SPEC "Outcomes"): it would keep a dead worker running.
    let future = signals
        .iter()
        .flatten()
        .filter(|t| **t > s.now)
        .max()
        .copied();
    let last_activity = signals
        .iter()
        .flatten()
        .filter(|t| **t <= s.now)
        .max()
        .copied();
    if let Some(t) = future {
        ev.push(format!(
            "ignored activity stamped in the future ({}): a skewed clock",
            clock::format_secs(t)
        ));
    }
    let idle = last_activity.map(|t| (s.now.as_second() - t.as_second()).max(0));
    let fresh_activity = idle.is_some_and(|i| i < s.stall_after.as_secs());
    if let (Some(t), Some(i)) = (last_activity, idle) {
        ev.push(format!(
            "last activity {} ({} ago; stalled after {})",
            clock::format_secs(t),
            clock::human_secs(i),
            clock::human_secs(s.stall_after.as_secs())
        ));
    } else {
        ev.push("no activity recorded".into());
    }

    (last_activity, idle, fresh_activity)
}

/// Liveness (SPEC "Liveness"): from the newest attempt, its exit, the pid probe and
/// fresh activity; when `running`, the fact it was decided on.
fn liveness(
    s: &Snapshot,
    r: &Replay,
    (fresh_activity, idle): (bool, Option<i64>),
    ev: &mut Vec<String>,
) -> (Liveness, Option<RunningBy>) {
    let attempt_desc = r.last_attempt.map(|i| {
        let e = &s.events[i];
        match &e.body {
            Body::Spawn { attempt, .. } | Body::Resume { attempt, .. } => {
                format!(
                    "attempt {attempt} ({} at {})",
                    e.body.kind(),
                    crate::clock::format(e.ts)
                )
            }
            _ => format!(
                "an exit at {} with no recorded start",
                crate::clock::format(e.ts)
            ),
        }
    });
    match (&attempt_desc, r.last_attempt_exited) {
        (None, _) => {
            ev.push("liveness unknown: no attempt in the ledger".into());
            (Liveness::Unknown, None)
        }
        (Some(a), true) if r.exit_unnamed && s.pid_alive == Some(true) => {
            ev.push(format!(
                "running: the newest {a} is followed by an exit naming no branch, and its own pid is alive"
            ));
            (Liveness::Running, Some(RunningBy::PidAlive))
        }
        (Some(a), true) => {
            ev.push(format!("exited: the newest {a} has an exit after it"));
            (Liveness::Exited, None)
        }
        (Some(a), false) => {
            // A gone process waits on nothing: parked only while alive or not probeable.
            if let Some(until) = s.parked_until.filter(|_| s.pid_alive != Some(false)) {
                return parked(s, a, until, fresh_activity, ev);
            }
            // SPEC 1.3: a live pid idle for `recode.hungAfter` is hung.
            if let Some(i) =
                idle.filter(|i| s.pid_alive == Some(true) && *i >= s.hung_after.as_secs())
            {
                ev.push(format!(
                    "stalled: the newest {a} has no exit; hung: pid alive, no activity for {}",
                    clock::human_secs(i)
                ));
                return (Liveness::Stalled, None);
            }
            if s.pid_alive == Some(true) {
                ev.push(format!(
                    "running: the newest {a} has no exit and its pid is alive"
                ));
                (Liveness::Running, Some(RunningBy::PidAlive))
            } else if fresh_activity {
                ev.push(format!(
                    "running: the newest {a} has no exit and activity is recent"
                ));
                (Liveness::Running, Some(RunningBy::Activity))
            } else {
                let pid = match s.pid_alive {
                    Some(false) => "its pid is gone",
                    _ => "no pid probeable here",
                };
                ev.push(format!(
                    "stalled: the newest {a} has no exit, no activity for {}, {pid}",
                    clock::human_secs(s.stall_after.as_secs())
                ));
                (Liveness::Stalled, None)
            }
        }
    }
}

/// Liveness of an open attempt parked on a limit (SPEC 1.2): `running` until the limit's
/// reset plus `recode.stallAfter`, and after that while activity is recent; then
/// `stalled`, even with its pid alive.
fn parked(
    s: &Snapshot,
    a: &str,
    until: jiff::Timestamp,
    fresh_activity: bool,
    ev: &mut Vec<String>,
) -> (Liveness, Option<RunningBy>) {
    let deadline = until.as_second().saturating_add(s.stall_after.as_secs());
    if s.now.as_second() <= deadline {
        ev.push(format!(
            "running: the newest {a} has no exit and its newest output waits on a limit until {}",
            clock::format_secs(until)
        ));
        (Liveness::Running, Some(RunningBy::Parked { until }))
    } else if fresh_activity {
        ev.push(format!(
            "running: the newest {a} has no exit, its limit reset at {} and activity is recent",
            clock::format_secs(until)
        ));
        (Liveness::Running, Some(RunningBy::Activity))
    } else {
        ev.push(format!(
            "stalled: the newest {a} has no exit and waited on a limit that reset at {}, no activity for {} since",
            clock::format_secs(until),
            clock::human_secs(s.stall_after.as_secs())
        ));
        (Liveness::Stalled, None)
    }
}

/// What the state table reads for one worker (so `decide` takes one argument).
struct Table<'a> {
    s: &'a Snapshot,
    r: &'a Replay,
    wt: Option<&'a WorktreeFacts>,
    dirty: Option<Dirty>,
    clean: bool,
    pr: Option<&'a Pr>,
    last_exit: Option<&'a Event>,
}

/// The state table (SPEC "Classification"), first match wins: the state, its action and
/// the row that matched. Each group of rows is a function, asked in the SPEC's order.
fn decide(t: &Table) -> (State, Action, Row) {
    taken_over(t)
        .or_else(|| deregistered(t))
        .or_else(|| needs_human_here(t))
        .or_else(|| published(t))
        .or_else(|| needs_human(t))
        .or_else(|| shallow(t))
        .or_else(|| orphaned(t))
        .or_else(|| empty(t))
        .unwrap_or_else(|| ahead(t))
}

type Decided = Option<(State, Action, Row)>;

/// SPEC 1.2 "Several machines", the comeback: another host took the worker over after
/// this host's own attempt, and this host still holds work on it: `needs-human` here,
/// both hosts named; before any other row (its `escalate` is a save to the side branch).
fn taken_over(t: &Table) -> Decided {
    let o = t.s.hosts.taken_over.as_ref()?;
    Some((
        State::NeedsHuman,
        Action::Escalate,
        Row::TakenOver {
            by: o.by.clone(),
            here: o.here.clone(),
            at: o.at,
            branch: t.s.branch.clone(),
            side_branch: o.side_branch.clone(),
        },
    ))
}

/// SPEC 1.3: a checkout of the branch whose worktree registration is gone, with no
/// worktree registered for it: `recover` registers it again first (its `escalate` is
/// carried out only when that fails), so no other row reads the worker without it.
fn deregistered(t: &Table) -> Decided {
    let d = t.s.deregistered.as_ref().filter(|_| t.wt.is_none())?;
    Some((
        State::NeedsHuman,
        Action::Escalate,
        Row::Deregistered {
            path: d.path.clone(),
            names: d.names.clone(),
            branch: t.s.branch.clone(),
        },
    ))
}

/// Row 1: a worktree whose `.git` leads elsewhere (SPEC 1.3), an operation in progress,
/// conflicts, or a detached HEAD holding unreachable commits.
fn needs_human_here(t: &Table) -> Decided {
    let w = t.wt?;
    let row = if let Some(leads_to) = w.foreign.clone().filter(|_| !w.missing) {
        Row::Foreign {
            path: w.path.clone(),
            leads_to,
            admin: w.admin.clone(),
        }
    } else if let Some(op) = w.operation {
        Row::Operation {
            op,
            path: w.path.clone(),
        }
    } else if let Some(d) = t.dirty.filter(|d| d.conflicted > 0) {
        Row::Conflicted {
            files: d.conflicted,
            path: w.path.clone(),
        }
    } else if let Some(why) = w.unreadable.clone().filter(|_| !w.missing) {
        Row::Unreadable {
            path: w.path.clone(),
            why,
        }
    } else if w.unborn && w.restore_to.is_none() {
        Row::UnbornNoReflog {
            path: w.path.clone(),
            branch: t.s.branch.clone(),
        }
    } else if w.detached && w.unreachable_commits > 0 {
        Row::DetachedUnreachable {
            path: w.path.clone(),
            commits: w.unreachable_commits,
            task: t.s.task.clone(),
        }
    } else {
        return None;
    };
    Some((State::NeedsHuman, Action::Escalate, row))
}

/// Row 3, needs a human: capped, a needs-human outcome, a standing escalation, a closed
/// PR. The cap bounds claimed successes too: only a passing gate on the head (or a pull
/// request, above) confirms one.
fn needs_human(t: &Table) -> Decided {
    let (s, r) = (t.s, t.r);
    let gate = s.head.and_then(|h| gate_on(&s.events, h));
    // A passing gate exempts the head from the cap only where it can be published (a
    // clean worktree): else resumes would go past the cap (safety rule 4), e.g. a worktree
    // whose only dirt is left-out content (found by the loop harness).
    let row = if r.attempts >= s.max_attempts && !(gate == Some(true) && t.clean) {
        Row::Capped {
            attempts: r.attempts,
            max: s.max_attempts,
        }
    } else if r.last_outcome == Some(Outcome::NeedsHuman) {
        Row::LastNeedsHuman {
            exit: exit_line(t.last_exit),
        }
    } else if let Some(count) = transient_bound(s, r) {
        Row::TransientBound {
            count,
            exit: exit_line(t.last_exit),
        }
    } else if let Some(reason) = &r.escalated {
        Row::Escalated {
            reason: reason.clone(),
        }
    } else if let Some(pr) =
        t.pr.filter(|p| p.state == PrState::Closed && s.pr_head != PrHead::Unrelated)
    {
        Row::PrClosed { pr: pr.number }
    } else {
        return None;
    };
    Some((State::NeedsHuman, Action::Escalate, row))
}

/// `rc N: first line` of an exit, for a reason.
fn exit_line(e: Option<&Event>) -> String {
    e.and_then(|e| match &e.body {
        Body::Exit { rc, message, .. } => Some(match message {
            Some(m) => format!("rc {rc}: {}", first_line(m)),
            None => format!("rc {rc}"),
        }),
        _ => None,
    })
    .unwrap_or_default()
}

/// SPEC 1.3 "Outcomes: structured first, bounded": the transient exits in a row on the
/// task (after the last `cleared`) on one head — no new commit between them — when they
/// reach `recode.maxTransient` and the last outcome is still transient; so a misread
/// wording can never loop for ever.
fn transient_bound(s: &Snapshot, r: &Replay) -> Option<u32> {
    if r.last_outcome != Some(Outcome::Transient) {
        return None;
    }
    let since = s
        .events
        .iter()
        .rposition(|e| matches!(e.body, Body::Cleared { .. }))
        .map_or(0, |i| i + 1);
    let mut exits = s.events[since..]
        .iter()
        .rev()
        .filter_map(|e| match &e.body {
            Body::Exit {
                outcome,
                rc,
                message,
                ..
            } => {
                let transient = *outcome == Outcome::Transient
                    || crate::outcome::reread(*outcome, *rc, message.as_deref(), e.ts).is_some();
                Some((e.head, transient))
            }
            _ => None,
        });
    let (head, _) = exits.next()?;
    let count = 1 + exits
        .take_while(|&(h, transient)| h == head && transient)
        .count() as u32;
    (count >= s.max_transient).then_some(count)
}

/// SPEC 1.2, before rows 4 and 5: a clean worker in a shallow history where the branch and
/// the base have no merge base: ahead is unknown, so it is neither orphaned-with-work,
/// `empty` nor publishable; a human fetches the rest (`git fetch --unshallow`). Dirt is
/// still WIP-committed (row 7): capturing work needs no count.
fn shallow(t: &Table) -> Decided {
    (t.s.shallow && t.clean).then(|| {
        (
            State::NeedsHuman,
            Action::None,
            Row::Shallow {
                base: t.s.base.clone(),
            },
        )
    })
}

/// Row 4, orphaned: a branch with no worktree and no ledger events.
fn orphaned(t: &Table) -> Decided {
    let s = t.s;
    if t.wt.is_some() || !s.events.is_empty() || !s.branch_local {
        return None;
    }
    let action = if s.ahead > 0 {
        Action::Resume
    } else {
        Action::None
    };
    Some((State::Orphaned, action, Row::Orphaned { ahead: s.ahead }))
}

/// Row 5, empty: nothing ahead (branch nor remote) and clean.
fn empty(t: &Table) -> Decided {
    let s = t.s;
    if s.ahead > 0 || s.remote_ahead.unwrap_or(0) > 0 || !t.clean {
        return None;
    }
    // SPEC 1.3: empty needs proof that nothing of the branch is anywhere; a stash entry
    // made on it holds work.
    if !s.stashes.is_empty() {
        return Some((
            State::HalfDone,
            Action::Resume,
            Row::Stashed {
                branch: s.branch.clone(),
                entries: s.stashes.clone(),
            },
        ));
    }
    if !s.branch_local && !s.branch_remote && t.wt.is_none() {
        return Some((State::Empty, Action::None, Row::Nowhere));
    }
    // SPEC 1.2 "The loop settles": no worktree and no local branch, only a remote branch
    // with nothing ahead (merged by hand, say): nothing is left for `delete` to remove.
    if !s.branch_local && t.wt.is_none() {
        return Some((
            State::Empty,
            Action::None,
            Row::NothingToRemove {
                branch: s.branch.clone(),
                base: s.base.clone(),
            },
        ));
    }
    Some((
        State::Empty,
        Action::Delete,
        Row::NothingAhead {
            base: s.base.clone(),
            worktree: t.wt.map(|w| w.ignored.clone()),
        },
    ))
}

/// Rows 6 and 7: publishable (ahead, clean, a passing gate on exactly the head), else
/// half-done (uncommitted files: WIP-commit; else resume).
fn ahead(t: &Table) -> (State, Action, Row) {
    let s = t.s;
    let ahead = s.ahead.max(s.remote_ahead.unwrap_or(0));
    let gate = match s.head.and_then(|h| gate_on(&s.events, h)) {
        Some(true) => GateSeen::Passed,
        Some(false) => GateSeen::Failed,
        None => GateSeen::None,
    };
    if ahead > 0 && t.clean && gate == GateSeen::Passed {
        // SPEC 1.2 "The loop settles": where no forge can open a pull request, a head
        // pushed once is left for a human to open it (until the head changes or a forge
        // answers).
        if let Some(head) = s.head.filter(|h| {
            matches!(s.forge, crate::model::Forge::Unknown)
                && pushed_by_hand(&s.events, &s.branch, *h)
        }) {
            return (State::Publishable, Action::None, Row::PushedByHand { head });
        }
        let claimed = !s.gate_configured
            && s.head
                .is_some_and(|h| crate::ledger::gate_claimed(&s.events, h));
        return (
            State::Publishable,
            Action::Publish,
            Row::Publishable { ahead, claimed },
        );
    }
    // SPEC 1.2: content a WIP commit leaves out (nested repositories, submodules,
    // oversize files) is never committed on a later tick: once the rest is committed,
    // what remains is the agent's to decide (`resume`, the paths named).
    let left_out = left_out_last(&s.events, &s.branch);
    if t.dirty.is_some_and(|d| {
        !d.is_clean() && !left_out.is_empty() && d.total() as usize <= left_out.len()
    }) {
        return (
            State::HalfDone,
            Action::Resume,
            Row::LeftOutOnly { paths: left_out },
        );
    }
    match t.dirty.filter(|d| !d.is_clean()) {
        Some(dirty) => (
            State::HalfDone,
            Action::WipCommit,
            Row::Uncommitted {
                dirty,
                gate,
                hidden: t.wt.map(|w| w.hidden.clone()).unwrap_or_default(),
            },
        ),
        None => (
            State::HalfDone,
            Action::Resume,
            Row::Ahead {
                ahead,
                missing: t.wt.is_some_and(|w| w.missing),
                gate,
            },
        ),
    }
}

fn first_line(m: &str) -> String {
    let l = m
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if l.chars().count() > 120 {
        format!("{}…", l.chars().take(120).collect::<String>())
    } else {
        l.to_string()
    }
}

#[cfg(test)]
mod tests;
