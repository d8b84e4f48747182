//! The state table (SPEC "Classification"), first match wins: each group of rows is a
//! function, asked in the SPEC's order ([`decide`]).

use super::published::published;
use crate::model::Event;
use crate::model::reason::{GateSeen, Row};
use crate::model::replay::{Replay, gate_on, left_out_last, pushed_by_hand};
use crate::model::*;
use crate::outcome::Outcome;

/// What the state table reads for one worker (so `decide` takes one argument).
pub(super) struct Table<'a> {
    pub(super) s: &'a Snapshot,
    pub(super) r: &'a Replay,
    pub(super) wt: Option<&'a WorktreeFacts>,
    pub(super) dirty: Option<Dirty>,
    pub(super) clean: bool,
    pub(super) pr: Option<&'a Pr>,
    pub(super) last_exit: Option<&'a Event>,
}

/// The state table (SPEC "Classification"), first match wins: the state, its action and
/// the row that matched. Each group of rows is a function, asked in the SPEC's order.
pub(super) fn decide(t: &Table) -> (State, Action, Row) {
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

/// A group of rows' answer: the state, its action and the row, when one of them matched.
pub(super) type Decided = Option<(State, Action, Row)>;

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
    // made on it, or a commit reset away that only its reflog holds, is work.
    if !s.stashes.is_empty() || !s.reset_away.is_empty() {
        return Some((
            State::HalfDone,
            Action::Resume,
            Row::Stashed {
                branch: s.branch.clone(),
                entries: s.stashes.clone(),
                reset: s.reset_away.clone(),
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
                .is_some_and(|h| crate::model::replay::gate_claimed(&s.events, h));
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
