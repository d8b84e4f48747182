//! Row 2 of the state table, `published` (SPEC "Classification", "Pull request
//! feedback"; 1.3 "Merged needs proof"): an open request (its feedback), a merged one
//! whose head proves it is the worker's, one being merged.

use super::table::{Decided, Table};
use crate::model::reason::Row;
use crate::model::replay::Replay;
use crate::model::*;

/// Row 2, published: a pull request open or merged, the worktree clean, and no commit
/// beyond the pull request's head (those are new work: classified as if no PR). SPEC 1.3:
/// a merged request counts only when its head is the tip or contains it (a branch name
/// alone is never proof: else classified as if it had none); one being merged waits.
pub(super) fn published(t: &Table) -> Decided {
    let (s, pr) = (t.s, t.pr.filter(|_| t.s.beyond_pr == 0 && t.clean)?);
    if pr.state == PrState::Merged && !s.pr_head.proves() {
        return None;
    }
    match pr.state {
        PrState::Open if pr.merging => Some((
            State::Published,
            Action::Wait,
            Row::Merging { pr: pr.number },
        )),
        PrState::Merged if merged_nothing_to_remove(s, t.wt) => Some((
            State::Published,
            Action::None,
            Row::MergedNothingLeft {
                pr: pr.number,
                branch: s.branch.clone(),
                unique: s.branch_unique,
                base: s.base.clone(),
            },
        )),
        PrState::Open => Some(published_open(s, t.r, pr)),
        PrState::Merged => Some((
            State::Published,
            Action::Delete,
            Row::Merged { pr: pr.number },
        )),
        PrState::Closed => None,
    }
}

/// An open pull request: failing checks or requested changes send it back to its agent
/// (`resume`), bounded by the cap (SPEC "Pull request feedback").
fn published_open(s: &Snapshot, r: &Replay, pr: &Pr) -> (State, Action, Row) {
    let checks = (pr.checks == Some(Checks::Failing)).then(|| {
        pr.feedback
            .failing_checks
            .iter()
            .map(|c| c.name.clone())
            .collect::<Vec<_>>()
    });
    let reviewers = (pr.review == Some(Review::ChangesRequested)).then(|| {
        pr.feedback
            .changes
            .iter()
            .map(|c| c.reviewer.clone())
            .collect::<Vec<_>>()
    });
    if checks.is_none() && reviewers.is_none() {
        let pending = pr.checks == Some(Checks::Pending);
        return (
            State::Published,
            Action::None,
            Row::PrOpen {
                pr: pr.number,
                pending,
            },
        );
    }
    let capped = (r.attempts >= s.max_attempts).then_some((r.attempts, s.max_attempts));
    let (state, action) = match capped {
        Some(_) => (State::NeedsHuman, Action::Escalate),
        None => (State::Published, Action::Resume),
    };
    let row = Row::PrFeedback {
        pr: pr.number,
        checks,
        reviewers,
        capped,
    };
    (state, action, row)
}

/// A merged worker with no worktree whose branch must stay (its commits would become
/// unreachable) or is already gone: nothing for `delete` to do (SPEC `published` row).
fn merged_nothing_to_remove(s: &Snapshot, wt: Option<&WorktreeFacts>) -> bool {
    wt.is_none() && (!s.branch_local || s.branch_unique > 0)
}
