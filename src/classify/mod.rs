//! The classifier: a pure function from a [`Snapshot`] (what git, the ledger and the
//! forge said about one worker) to a [`Worker`] (liveness, state, action, reason).
//!
//! Every rule here is a row of the SPEC's "Classification" tables; the unit tests below
//! walk each row without a repository.

mod overrides;

use overrides::{Decision, Facts, OVERRIDES};

use crate::clock;
use crate::ledger::{Body, Event, Replay, gate_on, replay};
use crate::model::*;
use crate::outcome::Outcome;
use crate::render::plural;

/// Classify one worker. Pure: the same snapshot always gives the same answer.
pub fn classify(s: &Snapshot) -> Worker {
    let mut r = replay(&s.events);
    if s.blocker_closed {
        r.blocked = None; // SPEC: blocked until `record unblock` or the forge reports the blocker closed
    }
    let mut ev: Vec<String> = Vec::new();

    // --- activity -------------------------------------------------------------------
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
    let fresh_activity = idle.is_some_and(|i| i < s.stall_after_secs);
    if let (Some(t), Some(i)) = (last_activity, idle) {
        ev.push(format!(
            "last activity {} ({} ago; stalled after {})",
            clock::format_secs(t),
            clock::human_secs(i),
            clock::human_secs(s.stall_after_secs)
        ));
    } else {
        ev.push("no activity recorded".into());
    }

    // --- liveness -------------------------------------------------------------------
    let attempt_desc = r.last_attempt.map(|i| {
        let e = &s.events[i];
        match &e.body {
            Body::Spawn { attempt, .. } | Body::Resume { attempt, .. } => {
                format!("attempt {attempt} ({} at {})", e.body.kind(), e.ts)
            }
            _ => format!("an exit at {} with no recorded start", e.ts),
        }
    });
    let liveness = match (&attempt_desc, r.last_attempt_exited) {
        (None, _) => {
            ev.push("liveness unknown: no attempt in the ledger".into());
            Liveness::Unknown
        }
        (Some(a), true) => {
            ev.push(format!("exited: the newest {a} has an exit after it"));
            Liveness::Exited
        }
        (Some(a), false) => {
            if s.pid_alive == Some(true) {
                ev.push(format!(
                    "running: the newest {a} has no exit and its pid is alive"
                ));
                Liveness::Running
            } else if fresh_activity {
                ev.push(format!(
                    "running: the newest {a} has no exit and activity is recent"
                ));
                Liveness::Running
            } else {
                let pid = match s.pid_alive {
                    Some(false) => "its pid is gone",
                    _ => "no pid probeable here",
                };
                ev.push(format!(
                    "stalled: the newest {a} has no exit, no activity for {}, {pid}",
                    clock::human_secs(s.stall_after_secs)
                ));
                Liveness::Stalled
            }
        }
    };

    // --- state ----------------------------------------------------------------------
    let dirty = wt.and_then(|w| if w.missing { None } else { w.dirty });
    let is_dirty = dirty.is_some_and(|d| !d.is_clean());
    let clean = !is_dirty;
    let not_read = wt.is_some_and(|w| w.not_read);
    if not_read {
        ev.push("worktree not read: its recorded pid is alive (`status --deep` reads it)".into());
    }
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
    let pr = match &s.forge {
        Forge::Known(pr) => pr.clone(),
        Forge::Unknown | Forge::Failed => None,
    };
    let last_exit = r.last_exit.map(|i| &s.events[i]);
    let phantom = matches!(s.forge, Forge::Known(None)) && r.last_outcome == Some(Outcome::Success);
    if matches!(s.forge, Forge::Unknown | Forge::Failed) {
        ev.push("forge unknown: nothing is published or phantom on a guess".into());
    }

    let (state, action, reason) = decide(s, &r, wt, dirty, clean, pr.as_ref(), last_exit);
    ev.push(format!("state {state}: {reason}"));

    // --- overrides, in order (one named rule per SPEC sentence; see OVERRIDES) --------
    let facts = Facts {
        s,
        r: &r,
        liveness,
        fresh_activity,
        idle,
    };
    let mut d = Decision { action, reason };
    for (name, rule) in OVERRIDES {
        if let Some(why) = rule(&facts, &d) {
            tracing::trace!(rule = name, "override");
            ev.push(match *name {
                "running" | "unrecorded-activity" => format!("action wait: {}", why.reason),
                _ => why.reason.clone(),
            });
            d = why;
        }
    }
    let Decision { action, mut reason } = d;
    if let Some(w) = wt.filter(|w| w.missing)
        && !reason.contains("missing")
    {
        reason = format!("{reason}; worktree directory {} is missing", w.path);
    }

    Worker {
        task: s.task.clone(),
        branch: s.branch.clone(),
        worktree: wt.map(|w| w.path.clone()),
        head: s.head.clone(),
        base: s.base.clone(),
        ahead: s.ahead,
        behind: s.behind,
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
        retry_after: r.retry_after,
        pr,
        phantom,
        ignored: wt.map(|w| w.ignored.clone()).unwrap_or_default(),
        evidence: ev,
    }
}

/// The state table, first match wins; returns the state, its action and the reason.
#[allow(clippy::too_many_arguments)]
fn decide(
    s: &Snapshot,
    r: &Replay,
    wt: Option<&WorktreeFacts>,
    dirty: Option<Dirty>,
    clean: bool,
    pr: Option<&Pr>,
    last_exit: Option<&Event>,
) -> (State, Action, String) {
    use Action as A;
    use State as S;
    // 1. An operation in progress, conflicts, or a detached HEAD holding unreachable commits.
    if let Some(w) = wt {
        if let Some(op) = w.operation {
            return (
                S::NeedsHuman,
                A::Escalate,
                format!("a {op} is in progress in {}", w.path),
            );
        }
        if let Some(d) = dirty.filter(|d| d.conflicted > 0) {
            return (
                S::NeedsHuman,
                A::Escalate,
                format!(
                    "{} in {}",
                    plural(u64::from(d.conflicted), "conflicted file"),
                    w.path
                ),
            );
        }
        if w.detached && w.unreachable_commits > 0 {
            return (
                S::NeedsHuman,
                A::Escalate,
                format!(
                    "detached HEAD in {} holds {} no ref contains; keep them with `git -C {} branch recode-keep-{} HEAD`",
                    w.path,
                    plural(u64::from(w.unreachable_commits), "commit"),
                    w.path,
                    s.task
                ),
            );
        }
    }
    // 2. Published: a pull request open or merged, the worktree clean, and no commit
    // beyond the pull request's head (those are new work: classified as if no PR).
    if let Some(pr) = pr.filter(|_| s.beyond_pr == 0) {
        if clean && pr.state == PrState::Merged && merged_nothing_to_remove(s, wt) {
            return (
                S::Published,
                A::None,
                format!(
                    "pull request #{} is merged; nothing left to remove: {} kept, {} of its commits in neither {} nor its remote-tracking branch",
                    pr.number, s.branch, s.branch_unique, s.base
                ),
            );
        }
        if clean && pr.state == PrState::Open {
            return published_open(s, r, pr);
        }
        if clean && pr.state == PrState::Merged {
            return (
                S::Published,
                A::Delete,
                format!("pull request #{} is merged", pr.number),
            );
        }
    }
    // 3. Needs a human: capped, a needs-human outcome, a standing escalation, a closed PR.
    // The cap bounds claimed successes too: only a passing gate on the head (or a pull
    // request, above) confirms one.
    let gate = s.head.as_deref().and_then(|h| gate_on(&s.events, h));
    if r.attempts >= s.max_attempts && gate != Some(true) {
        return (
            S::NeedsHuman,
            A::Escalate,
            format!(
                "{} counted attempts reached recode.maxAttempts ({}) without a passing gate on the head",
                r.attempts, s.max_attempts
            ),
        );
    }
    if r.last_outcome == Some(Outcome::NeedsHuman) {
        let why = last_exit
            .and_then(|e| match &e.body {
                Body::Exit { rc, message, .. } => Some(match message {
                    Some(m) => format!("rc {rc}: {}", first_line(m)),
                    None => format!("rc {rc}"),
                }),
                _ => None,
            })
            .unwrap_or_default();
        return (
            S::NeedsHuman,
            A::Escalate,
            format!("the last attempt needs a human ({why})"),
        );
    }
    if let Some(reason) = &r.escalated {
        return (
            S::NeedsHuman,
            A::Escalate,
            format!("escalated: {reason} (until `git recode record clear`)"),
        );
    }
    if let Some(pr) = pr.filter(|p| p.state == PrState::Closed) {
        return (
            S::NeedsHuman,
            A::Escalate,
            format!(
                "pull request #{} was closed without merging: a human closed it",
                pr.number
            ),
        );
    }
    // 4. Orphaned: a branch with no worktree and no ledger events.
    if wt.is_none() && s.events.is_empty() && s.branch_local {
        return if s.ahead > 0 {
            (
                S::Orphaned,
                A::Resume,
                format!(
                    "no worktree and no ledger; {} ahead: resume, never delete",
                    plural(u64::from(s.ahead), "commit")
                ),
            )
        } else {
            (
                S::Orphaned,
                A::None,
                "no worktree and no ledger: unknown provenance, never deleted".into(),
            )
        };
    }
    // 5. Empty: nothing ahead (branch nor remote) and clean.
    let remote_ahead = s.remote_ahead.unwrap_or(0);
    if s.ahead == 0 && remote_ahead == 0 && clean {
        if !s.branch_local && !s.branch_remote && wt.is_none() {
            return (S::Empty, A::None, "the branch exists nowhere".into());
        }
        let where_ = match wt {
            Some(w) if !w.ignored.is_empty() => {
                format!(
                    "; worktree clean (its ignored files go with it: {})",
                    w.ignored.join(", ")
                )
            }
            Some(_) => "; worktree clean".to_string(),
            None => String::new(),
        };
        return (
            S::Empty,
            A::Delete,
            format!("no commits ahead of {}{where_}", s.base),
        );
    }
    // 6. Publishable: ahead, clean, a passing gate on exactly the head.
    if (s.ahead > 0 || remote_ahead > 0) && clean && gate == Some(true) {
        return (
            S::Publishable,
            A::Publish,
            format!(
                "{} ahead, clean, gate passed on the head",
                plural(u64::from(s.ahead.max(remote_ahead)), "commit")
            ),
        );
    }
    // 7. Half-done.
    let gate_txt = match gate {
        Some(true) => "gate passed on the head",
        Some(false) => "gate failed on the head",
        None => "no gate result for the head",
    };
    if let Some(d) = dirty.filter(|d| !d.is_clean()) {
        (
            S::HalfDone,
            A::WipCommit,
            format!(
                "{} ({} staged, {} unstaged, {} untracked); {gate_txt}",
                plural(u64::from(d.total()), "uncommitted file"),
                d.staged,
                d.unstaged,
                d.untracked
            ),
        )
    } else if wt.is_some_and(|w| w.missing) {
        (
            S::HalfDone,
            A::Resume,
            format!(
                "{} ahead; worktree directory is missing; {gate_txt}",
                plural(u64::from(s.ahead.max(remote_ahead)), "commit")
            ),
        )
    } else {
        (
            S::HalfDone,
            A::Resume,
            format!(
                "{} ahead; {gate_txt}",
                plural(u64::from(s.ahead.max(remote_ahead)), "commit")
            ),
        )
    }
}

/// An open pull request: failing checks or requested changes send it back to its agent
/// (`resume`), bounded by the cap (SPEC "Pull request feedback").
fn published_open(s: &Snapshot, r: &Replay, pr: &Pr) -> (State, Action, String) {
    let mut why = Vec::new();
    if pr.checks == Some(Checks::Failing) {
        let names: Vec<&str> = pr
            .feedback
            .failing_checks
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        why.push(if names.is_empty() {
            "its checks fail".to_string()
        } else {
            format!("checks fail: {}", names.join(", "))
        });
    }
    if pr.review == Some(Review::ChangesRequested) {
        let who: Vec<&str> = pr
            .feedback
            .changes
            .iter()
            .map(|c| c.reviewer.as_str())
            .collect();
        why.push(if who.is_empty() {
            "changes are requested".to_string()
        } else {
            format!("changes requested by {}", who.join(", "))
        });
    }
    if why.is_empty() {
        let state = match pr.checks {
            Some(Checks::Pending) => "; checks pending",
            _ => "",
        };
        return (
            State::Published,
            Action::None,
            format!("pull request #{} is open{state}", pr.number),
        );
    }
    if r.attempts >= s.max_attempts {
        return (
            State::NeedsHuman,
            Action::Escalate,
            format!(
                "pull request #{}: {}; {} counted attempts reached recode.maxAttempts ({})",
                pr.number,
                why.join("; "),
                r.attempts,
                s.max_attempts
            ),
        );
    }
    (
        State::Published,
        Action::Resume,
        format!("pull request #{}: {}", pr.number, why.join("; ")),
    )
}

/// A merged worker with no worktree whose branch must stay (its commits would become
/// unreachable) or is already gone: nothing for `delete` to do (SPEC `published` row).
fn merged_nothing_to_remove(s: &Snapshot, wt: Option<&WorktreeFacts>) -> bool {
    wt.is_none() && (!s.branch_local || s.branch_unique > 0)
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
