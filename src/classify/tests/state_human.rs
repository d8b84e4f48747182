//! State table, first rows (first match wins): `needs_human` for operations, conflicts,
//! detached heads, the attempt cap, escalations and closed pull requests; `published`.

use super::*;

#[test]
fn needs_human_for_every_operation_in_progress() {
    for op in [
        Operation::Rebase,
        Operation::Merge,
        Operation::CherryPick,
        Operation::Revert,
        Operation::Bisect,
    ] {
        let w = snap()
            .wt_with(|w| w.operation = Some(op))
            .ahead(2)
            .spawn(7200)
            .exit(7000, 1, Outcome::Failed)
            .run();
        lsa(&w, Liveness::Exited, State::NeedsHuman, Action::Escalate);
        assert_eq!(w.operation, Some(op));
        assert_eq!(
            w.reason.row,
            Row::Operation {
                op,
                path: WT.into()
            }
        );
    }
}

#[test]
fn an_operation_in_progress_wins_over_an_open_pull_request_and_empty() {
    let w = snap()
        .wt_with(|w| w.operation = Some(Operation::Merge))
        .ahead(1)
        .forge(Forge::Known(Some(open_pr())))
        .run();
    lsa(&w, Liveness::Unknown, State::NeedsHuman, Action::Escalate);
    let w = snap()
        .wt_with(|w| w.operation = Some(Operation::Bisect))
        .run();
    lsa(&w, Liveness::Unknown, State::NeedsHuman, Action::Escalate);
}

#[test]
fn needs_human_for_conflicts() {
    let w = snap()
        .dirty(dirty(1, 0, 0, 2))
        .ahead(1)
        .spawn(7200)
        .exit(7000, 1, Outcome::Failed)
        .run();
    lsa(&w, Liveness::Exited, State::NeedsHuman, Action::Escalate);
    assert_eq!(w.dirty, Some(dirty(1, 0, 0, 2)));
    assert_eq!(
        w.reason.row,
        Row::Conflicted {
            files: 2,
            path: WT.into()
        }
    );
}

#[test]
fn needs_human_for_a_detached_head_with_unreachable_commits() {
    let w = snap()
        .wt_with(|w| {
            w.detached = true;
            w.unreachable_commits = 2;
        })
        .ahead(2)
        .spawn(7200)
        .exit(7000, 1, Outcome::Failed)
        .run();
    lsa(&w, Liveness::Exited, State::NeedsHuman, Action::Escalate);
    assert!(
        matches!(w.reason.row, Row::DetachedUnreachable { .. }),
        "{:?}",
        w.reason
    );
    // A detached HEAD whose commits a ref contains is not, by itself, a human's problem.
    let w = snap()
        .wt_with(|w| w.detached = true)
        .ahead(2)
        .spawn(7200)
        .exit(7000, 1, Outcome::Failed)
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
}

#[test]
fn published_while_the_pull_request_is_open() {
    let w = snap()
        .wt()
        .ahead(2)
        .spawn(7200)
        .exit(7000, 0, Outcome::Success)
        .forge(Forge::Known(Some(open_pr())))
        .run();
    lsa(&w, Liveness::Exited, State::Published, Action::None);
    assert_eq!(w.pr, Some(open_pr()));
    assert!(!w.phantom);
}

#[test]
fn published_and_merged_is_deleted() {
    let w = snap()
        .wt()
        .ahead(2)
        .spawn(7200)
        .exit(7000, 0, Outcome::Success)
        .forge(Forge::Known(Some(pr(PrState::Merged))))
        .run();
    lsa(&w, Liveness::Exited, State::Published, Action::Delete);
    assert_eq!(w.pr.map(|p| p.state), Some(PrState::Merged));
}

#[test]
fn published_wins_over_the_attempt_cap_and_an_escalation() {
    let w = snap()
        .wt()
        .ahead(2)
        .failed_attempt(9000)
        .failed_attempt(8000)
        .failed_attempt(7000)
        .escalated(6000, "capped")
        .forge(Forge::Known(Some(open_pr())))
        .run();
    lsa(&w, Liveness::Exited, State::Published, Action::None);
    assert_eq!(w.attempts, 3);
}

#[test]
fn a_dirty_worktree_is_not_published() {
    for state in [PrState::Open, PrState::Merged] {
        let w = snap()
            .dirty(dirty(0, 1, 1, 0))
            .ahead(2)
            .spawn(7200)
            .exit(7000, 0, Outcome::Success)
            .forge(Forge::Known(Some(pr(state))))
            .run();
        lsa(&w, Liveness::Exited, State::HalfDone, Action::WipCommit);
        assert_eq!(w.pr.map(|p| p.state), Some(state));
    }
}

#[test]
fn an_unknown_forge_publishes_nothing_on_a_guess() {
    let w = snap()
        .wt()
        .ahead(2)
        .spawn(7200)
        .exit(7000, 0, Outcome::Success)
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert_eq!(w.pr, None);
}

#[test]
fn needs_human_when_counted_attempts_reach_the_cap_without_success() {
    let two = snap()
        .wt()
        .ahead(1)
        .failed_attempt(9000)
        .failed_attempt(8000);
    let w = two.run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert_eq!(w.attempts, 2);
    let w = two.failed_attempt(7000).run();
    lsa(&w, Liveness::Exited, State::NeedsHuman, Action::Escalate);
    assert_eq!(w.attempts, 3);
    assert_eq!(w.max_attempts, 3);
    assert_eq!(w.last_outcome, Some(Outcome::Failed));
    // The cap is recode.maxAttempts.
    let w = snap()
        .wt()
        .ahead(1)
        .failed_attempt(9000)
        .with(|s| s.max_attempts = 1)
        .run();
    lsa(&w, Liveness::Exited, State::NeedsHuman, Action::Escalate);
    assert_eq!(w.max_attempts, 1);
}

#[test]
fn the_cap_counts_attempts_that_never_exited() {
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(9000)
        .spawn(8000)
        .spawn(7200)
        .run();
    lsa(&w, Liveness::Stalled, State::NeedsHuman, Action::Escalate);
    assert_eq!(w.attempts, 3);
    assert_eq!(w.last_outcome, None);
}

#[test]
fn an_unconfirmed_success_at_the_cap_is_needs_human() {
    // SPEC 1.1: a claimed success that no pull request or gate confirms does not stop the cap.
    let w = snap()
        .wt()
        .ahead(1)
        .failed_attempt(9000)
        .failed_attempt(8000)
        .spawn(7000)
        .exit(6900, 0, Outcome::Success)
        .run();
    lsa(&w, Liveness::Exited, State::NeedsHuman, Action::Escalate);
    assert_eq!(w.attempts, 3);
    assert_eq!(w.last_outcome, Some(Outcome::Success));
}

#[test]
fn a_success_at_the_cap_with_a_passing_gate_on_the_head_is_publishable() {
    let w = snap()
        .wt()
        .ahead(1)
        .failed_attempt(9000)
        .failed_attempt(8000)
        .spawn(7000)
        .exit(6900, 0, Outcome::Success)
        .gate(6800, HEAD, true, GateBy::Record)
        .run();
    lsa(&w, Liveness::Exited, State::Publishable, Action::Publish);
}

#[test]
fn a_passing_gate_does_not_lift_the_cap_of_a_dirty_worktree() {
    // SPEC safety rule 4: a head that cannot be published (dirt, e.g. left-out content
    // only) is bounded like any other; found by the loop harness.
    let w = snap()
        .wt()
        .dirty(dirty(0, 0, 1, 0))
        .ahead(1)
        .failed_attempt(9000)
        .failed_attempt(8000)
        .spawn(7000)
        .exit(6900, 0, Outcome::Success)
        .gate(6800, HEAD, true, GateBy::Record)
        .run();
    lsa(&w, Liveness::Exited, State::NeedsHuman, Action::Escalate);
}

#[test]
fn needs_human_when_the_last_outcome_says_so() {
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(7200)
        .exit_full(
            7100,
            127,
            Outcome::NeedsHuman,
            Some("claude: command not found"),
            None,
            None,
        )
        .run();
    lsa(&w, Liveness::Exited, State::NeedsHuman, Action::Escalate);
    assert_eq!(w.attempts, 1);
    assert_eq!(w.last_outcome, Some(Outcome::NeedsHuman));
    assert!(
        matches!(&w.reason.row, Row::LastNeedsHuman { exit } if exit.starts_with("rc 127")),
        "{:?}",
        w.reason
    );
}

#[test]
fn needs_human_while_an_escalated_event_stands() {
    let w = snap()
        .wt()
        .ahead(1)
        .failed_attempt(7200)
        .escalated(7000, "the gate keeps failing")
        .run();
    lsa(&w, Liveness::Exited, State::NeedsHuman, Action::Escalate);
    assert_eq!(w.attempts, 1);
    assert_eq!(
        w.reason.row,
        Row::Escalated {
            reason: "the gate keeps failing".into()
        }
    );
}

#[test]
fn a_cleared_event_lifts_the_escalation_and_counts_afresh() {
    let capped = snap()
        .wt()
        .ahead(1)
        .failed_attempt(9000)
        .failed_attempt(8000)
        .failed_attempt(7000)
        .escalated(6900, "capped");
    assert_eq!(capped.run().state, State::NeedsHuman);
    let cleared = capped.cleared(6000);
    let w = cleared.run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert_eq!(w.attempts, 0);
    assert_eq!(w.last_outcome, None);
    assert_eq!(w.retry_after, None);
    // The next attempt counts from one, and its outcome is the last outcome.
    let w = cleared.failed_attempt(5000).run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert_eq!(w.attempts, 1);
    assert_eq!(w.last_outcome, Some(Outcome::Failed));
}

#[test]
fn a_cleared_event_lifts_a_needs_human_outcome() {
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(7200)
        .exit(7100, 1, Outcome::NeedsHuman)
        .cleared(3600)
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert_eq!(w.attempts, 0);
    assert_eq!(w.last_outcome, None);
}

#[test]
fn an_escalation_after_the_cleared_event_stands_again() {
    let w = snap()
        .wt()
        .ahead(1)
        .escalated(9000, "first")
        .cleared(8000)
        .escalated(7000, "second")
        .run();
    lsa(&w, Liveness::Unknown, State::NeedsHuman, Action::Escalate);
    assert_eq!(
        w.reason.row,
        Row::Escalated {
            reason: "second".into()
        }
    );
}

#[test]
fn needs_human_when_the_pull_request_was_closed() {
    // Even clean, ahead and gated: never reopen by publishing again.
    let w = snap()
        .wt()
        .ahead(2)
        .spawn(7200)
        .exit(7000, 0, Outcome::Success)
        .gate(6900, HEAD, true, GateBy::Record)
        .forge(Forge::Known(Some(pr(PrState::Closed))))
        .run();
    lsa(&w, Liveness::Exited, State::NeedsHuman, Action::Escalate);
    assert_eq!(w.pr.map(|p| p.state), Some(PrState::Closed));
    // Or with nothing ahead (would be empty otherwise).
    let w = snap()
        .wt()
        .spawn(7200)
        .exit(7000, 0, Outcome::Success)
        .forge(Forge::Known(Some(pr(PrState::Closed))))
        .run();
    lsa(&w, Liveness::Exited, State::NeedsHuman, Action::Escalate);
}
