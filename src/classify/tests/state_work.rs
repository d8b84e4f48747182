//! State table, later rows: `orphaned`, `empty`, `publishable` (gates on the head),
//! `half_done`.

use super::*;

#[test]
fn orphaned_branch_ahead_is_resumed() {
    let w = snap()
        .ahead(3)
        .with(|s| s.newest_commit = Some(at(86_400)))
        .run();
    lsa(&w, Liveness::Unknown, State::Orphaned, Action::Resume);
    assert_eq!(w.worktree, None);
    assert_eq!(w.dirty, None);
    assert_eq!(w.attempts, 0);
}

#[test]
fn orphaned_branch_not_ahead_is_never_deleted() {
    let w = snap().run();
    lsa(&w, Liveness::Unknown, State::Orphaned, Action::None);
}

#[test]
fn a_branch_with_a_worktree_or_a_ledger_is_not_orphaned() {
    let w = snap().wt().run();
    lsa(&w, Liveness::Unknown, State::Empty, Action::Delete);
    let w = snap().failed_attempt(7200).run();
    lsa(&w, Liveness::Exited, State::Empty, Action::Delete);
}

#[test]
fn empty_when_nothing_is_ahead_and_the_worktree_is_clean() {
    let w = snap()
        .wt()
        .with(|s| s.behind = 4)
        .spawn(7200)
        .exit(7000, 0, Outcome::Success)
        .run();
    lsa(&w, Liveness::Exited, State::Empty, Action::Delete);
    assert_eq!(w.behind, Some(4));
    assert_eq!(w.dirty, Some(Dirty::default()));
}

#[test]
fn not_empty_with_a_dirty_worktree() {
    for d in [dirty(1, 0, 0, 0), dirty(0, 1, 0, 0), dirty(0, 0, 1, 0)] {
        let w = snap().dirty(d).failed_attempt(7200).run();
        lsa(&w, Liveness::Exited, State::HalfDone, Action::WipCommit);
    }
}

#[test]
fn not_empty_while_the_remote_tracking_branch_is_ahead() {
    let w = snap()
        .wt()
        .with(|s| {
            s.branch_remote = true;
            s.remote_ahead = Some(2);
        })
        .failed_attempt(7200)
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert_eq!(w.remote_ahead, Some(2));
    // A remote-tracking branch with nothing ahead does not keep it.
    let w = snap()
        .wt()
        .with(|s| {
            s.branch_remote = true;
            s.remote_ahead = Some(0);
        })
        .failed_attempt(7200)
        .run();
    lsa(&w, Liveness::Exited, State::Empty, Action::Delete);
}

#[test]
fn a_branch_only_on_the_remote_is_never_empty_while_ahead() {
    let w = snap()
        .ahead(3)
        .with(|s| {
            s.branch_local = false;
            s.branch_remote = true;
            s.remote_ahead = Some(3);
        })
        .failed_attempt(7200)
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert_eq!(w.worktree, None);
    assert_eq!(w.ahead, Some(3));
}

#[test]
fn a_task_whose_branch_exists_nowhere_is_empty_with_no_action() {
    let w = snap()
        .with(|s| {
            s.branch_local = false;
            s.head = None;
        })
        .failed_attempt(7200)
        .run();
    lsa(&w, Liveness::Exited, State::Empty, Action::None);
    assert_eq!(w.head, None);
    assert_eq!(w.worktree, None);
    // Even when the forge failed (nothing to delete, so nothing to wait for).
    let w = snap()
        .with(|s| {
            s.branch_local = false;
            s.head = None;
            s.forge = Forge::Failed;
        })
        .failed_attempt(7200)
        .run();
    lsa(&w, Liveness::Exited, State::Empty, Action::None);
}

#[test]
fn publishable_with_a_recorded_gate_pass_on_the_head() {
    let w = snap()
        .wt()
        .ahead(2)
        .spawn(7200)
        .exit(7000, 0, Outcome::Success)
        .gate(6900, HEAD, true, GateBy::Record)
        .run();
    lsa(&w, Liveness::Exited, State::Publishable, Action::Publish);
    assert!(!w.phantom, "no forge, nothing is phantom");
}

#[test]
fn publishable_with_a_gate_pass_by_recover_on_the_head() {
    let w = snap()
        .wt()
        .ahead(2)
        .failed_attempt(7200)
        .gate(6900, HEAD, true, GateBy::Recover)
        .run();
    lsa(&w, Liveness::Exited, State::Publishable, Action::Publish);
}

#[test]
fn publishable_with_a_tests_green_milestone_on_the_head() {
    let w = snap()
        .wt()
        .ahead(2)
        .spawn(7200)
        .milestone(7100, "tests-green", HEAD)
        .exit(7000, 0, Outcome::Success)
        .run();
    lsa(&w, Liveness::Exited, State::Publishable, Action::Publish);
    assert_eq!(w.phase.as_deref(), Some("tests-green"));
}

#[test]
fn another_milestone_on_the_head_is_not_a_pass() {
    let w = snap()
        .wt()
        .ahead(2)
        .spawn(7200)
        .milestone(7100, "implemented", HEAD)
        .exit(7000, 0, Outcome::Success)
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert_eq!(w.phase.as_deref(), Some("implemented"));
}

#[test]
fn a_gate_pass_on_an_older_head_does_not_count() {
    let w = snap()
        .wt()
        .ahead(2)
        .spawn(7200)
        .gate(7100, OLD_HEAD, true, GateBy::Record)
        .milestone(7050, "tests-green", OLD_HEAD)
        .exit(7000, 0, Outcome::Success)
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
}

#[test]
fn a_later_failed_gate_on_the_same_head_cancels_a_pass() {
    let w = snap()
        .wt()
        .ahead(2)
        .spawn(7200)
        .milestone(7100, "tests-green", HEAD)
        .gate(7050, HEAD, false, GateBy::Recover)
        .exit(7000, 0, Outcome::Success)
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    let w = snap()
        .wt()
        .ahead(2)
        .failed_attempt(7200)
        .gate(7050, HEAD, true, GateBy::Record)
        .gate(7000, HEAD, false, GateBy::Record)
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
}

#[test]
fn a_later_pass_on_the_head_wins_over_an_earlier_failure() {
    let w = snap()
        .wt()
        .ahead(2)
        .failed_attempt(7200)
        .gate(7050, HEAD, false, GateBy::Record)
        .gate(7000, HEAD, true, GateBy::Record)
        .run();
    lsa(&w, Liveness::Exited, State::Publishable, Action::Publish);
}

#[test]
fn a_failed_gate_on_another_head_does_not_cancel_the_pass_on_this_one() {
    let w = snap()
        .wt()
        .ahead(2)
        .failed_attempt(7200)
        .gate(7050, HEAD, true, GateBy::Record)
        .gate(7000, OLD_HEAD, false, GateBy::Record)
        .run();
    lsa(&w, Liveness::Exited, State::Publishable, Action::Publish);
}

#[test]
fn a_passing_gate_does_not_publish_a_dirty_worktree() {
    let w = snap()
        .dirty(dirty(0, 1, 0, 0))
        .ahead(2)
        .failed_attempt(7200)
        .gate(7000, HEAD, true, GateBy::Record)
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::WipCommit);
}

#[test]
fn gate_on_reads_exactly_the_head() {
    let t = snap()
        .gate(9000, OLD_HEAD, true, GateBy::Record)
        .gate(8000, HEAD, true, GateBy::Record)
        .gate(7000, HEAD, false, GateBy::Recover)
        .milestone(6000, "implemented", HEAD);
    assert_eq!(gate_on(&t.0.events, id(HEAD)), Some(false));
    assert_eq!(gate_on(&t.0.events, id(OLD_HEAD)), Some(true));
    assert_eq!(gate_on(&t.0.events, id(&"3".repeat(40))), None);
    let t = t.milestone(5000, "tests-green", HEAD);
    assert_eq!(gate_on(&t.0.events, id(HEAD)), Some(true));
    assert_eq!(gate_on(&[], id(HEAD)), None);
}

#[test]
fn half_done_dirty_is_wip_committed() {
    let w = snap()
        .dirty(dirty(2, 1, 3, 0))
        .ahead(1)
        .failed_attempt(7200)
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::WipCommit);
    assert_eq!(w.dirty, Some(dirty(2, 1, 3, 0)));
    // Dirty with nothing ahead is half-done too.
    let w = snap().dirty(dirty(0, 0, 1, 0)).failed_attempt(7200).run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::WipCommit);
}

#[test]
fn half_done_clean_and_ahead_is_resumed() {
    let w = snap()
        .wt()
        .ahead(4)
        .with(|s| s.behind = 1)
        .failed_attempt(7200)
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert_eq!((w.ahead, w.behind), (Some(4), Some(1)));
}

// --- SPEC 1.2: a shallow history without a merge base ---------------------------------

#[test]
fn shallow_without_a_merge_base_is_never_empty_and_its_counts_are_null() {
    // Nothing ahead in the available history, clean, exited: `empty`/`delete` elsewhere.
    let w = snap()
        .wt()
        .spawn(7200)
        .exit(7000, 0, Outcome::Success)
        .with(|s| s.shallow = true)
        .run();
    lsa(&w, Liveness::Exited, State::NeedsHuman, Action::None);
    assert_eq!((w.ahead, w.behind), (None, None));
    assert_eq!(
        w.reason.to_string(),
        "the history is shallow: the branch and main have no merge base in it, so ahead/behind are unknown; never deleted (`git fetch --unshallow`)"
    );
}

#[test]
fn shallow_dirt_is_still_wip_committed() {
    let w = snap()
        .wt()
        .ahead(1)
        .dirty(Dirty {
            untracked: 1,
            ..Dirty::default()
        })
        .spawn(7200)
        .exit(7000, 0, Outcome::Success)
        .with(|s| s.shallow = true)
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::WipCommit);
    assert_eq!(w.ahead, None);
}

#[test]
fn shallow_is_never_deleted_even_when_the_forge_says_merged() {
    let w = snap()
        .wt()
        .ahead(2)
        .spawn(7200)
        .exit(7000, 0, Outcome::Success)
        .forge(Forge::Known(Some(pr(PrState::Merged))))
        .with(|s| s.shallow = true)
        .run();
    lsa(&w, Liveness::Exited, State::Published, Action::None);
    assert!(
        w.reason
            .to_string()
            .ends_with("the history is shallow and has no merge base of the branch and its base: never deleted (`git fetch --unshallow`)"),
        "{}",
        w.reason
    );
}
