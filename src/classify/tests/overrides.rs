//! Overrides: a missing worktree, secrets, a failed forge; phantom, phase, session.

use super::*;

fn missing() -> T {
    snap().wt_with(|w| {
        w.missing = true;
        w.dirty = Some(dirty(0, 3, 1, 0));
    })
}

#[test]
fn a_missing_worktree_has_null_dirty_and_is_never_deleted() {
    let w = missing().failed_attempt(7200).run();
    lsa(&w, Liveness::Exited, State::Empty, Action::None);
    assert_eq!(w.dirty, None);
    assert_eq!(w.worktree.as_deref(), Some(WT));
    assert_said_missing(&w);
}

#[test]
fn a_missing_worktree_with_a_merged_pull_request_is_not_deleted() {
    let w = missing()
        .ahead(1)
        .spawn(7200)
        .exit(7000, 0, Outcome::Success)
        .forge(Forge::Known(Some(pr(PrState::Merged))))
        .run();
    lsa(&w, Liveness::Exited, State::Published, Action::None);
    assert_eq!(w.dirty, None);
    assert_said_missing(&w);
}

#[test]
fn a_missing_worktree_is_classified_from_its_branch() {
    let w = missing().ahead(2).failed_attempt(7200).run();
    // SPEC 1.2: `resume` refuses a missing directory, so the action escalates.
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Escalate);
    assert_eq!(
        w.reason.last_override(),
        Some(&Override::MissingNotResumed { path: WT.into() })
    );
    assert_eq!(w.dirty, None);
    assert_said_missing(&w);
}

#[test]
fn a_missing_worktree_reason_says_missing_when_publishable() {
    let w = missing()
        .ahead(2)
        .failed_attempt(7200)
        .gate(7000, HEAD, true, GateBy::Record)
        .run();
    lsa(&w, Liveness::Exited, State::Publishable, Action::Publish);
    assert_eq!(w.dirty, None);
    assert_said_missing(&w);
}

#[test]
fn a_missing_worktree_reason_says_missing_when_published_open() {
    let w = missing()
        .ahead(2)
        .spawn(7200)
        .exit(7000, 0, Outcome::Success)
        .forge(Forge::Known(Some(open_pr())))
        .run();
    lsa(&w, Liveness::Exited, State::Published, Action::None);
    assert_said_missing(&w);
}

#[test]
fn a_missing_worktree_is_not_deleted_even_when_the_forge_failed() {
    let w = missing()
        .failed_attempt(7200)
        .with(|s| s.forge = Forge::Failed)
        .run();
    lsa(&w, Liveness::Exited, State::Empty, Action::None);
}

#[test]
fn a_worktree_holding_secrets_is_never_removed() {
    let w = snap()
        .wt_with(|w| w.secrets = vec![".env".into(), "keys/id_rsa".into()])
        .failed_attempt(7200)
        .run();
    lsa(&w, Liveness::Exited, State::Empty, Action::None);
    assert_eq!(
        w.reason.last_override(),
        Some(&Override::SecretsKept {
            files: vec![".env".into(), "keys/id_rsa".into()]
        })
    );
    // Merged, too.
    let w = snap()
        .wt_with(|w| w.secrets = vec!["deploy.pem".into()])
        .ahead(1)
        .spawn(7200)
        .exit(7000, 0, Outcome::Success)
        .forge(Forge::Known(Some(pr(PrState::Merged))))
        .run();
    lsa(&w, Liveness::Exited, State::Published, Action::None);
    assert!(
        matches!(w.reason.last_override(), Some(Override::SecretsKept { files }) if files.contains(&"deploy.pem".to_string())),
        "{:?}",
        w.reason
    );
}

#[test]
fn secrets_do_not_change_an_action_that_keeps_the_worktree() {
    let w = snap()
        .dirty(dirty(0, 1, 0, 0))
        .wt_with(|w| w.secrets = vec![".env".into()])
        .ahead(1)
        .failed_attempt(7200)
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::WipCommit);
}

#[test]
fn a_delete_waits_when_the_forge_failed() {
    let w = snap()
        .wt()
        .failed_attempt(7200)
        .with(|s| s.forge = Forge::Failed)
        .run();
    lsa(&w, Liveness::Exited, State::Empty, Action::Wait);
    assert_eq!(
        w.reason.last_override(),
        Some(&Override::ForgeFailed {
            refused: Action::Delete
        })
    );
    // Publishing waits too: a pull request a human closed must never be reopened.
    let w = snap()
        .wt()
        .ahead(1)
        .failed_attempt(7200)
        .gate(7000, HEAD, true, GateBy::Record)
        .with(|s| s.forge = Forge::Failed)
        .run();
    lsa(&w, Liveness::Exited, State::Publishable, Action::Wait);
    // Other actions are not held back.
    let w = snap()
        .wt()
        .ahead(1)
        .failed_attempt(7200)
        .with(|s| s.forge = Forge::Failed)
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
}

// ======================================================================================
// phantom, phase, session
// ======================================================================================

#[test]
fn phantom_when_success_was_claimed_and_the_forge_has_no_pull_request() {
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(7200)
        .exit(7000, 0, Outcome::Success)
        .forge(Forge::Known(None))
        .run();
    assert!(w.phantom);
    // The debris is classified as usual.
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert_eq!(w.pr, None);
}

#[test]
fn nothing_is_phantom_without_a_forge() {
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(7200)
        .exit(7000, 0, Outcome::Success)
        .run();
    assert!(!w.phantom);
}

#[test]
fn not_phantom_with_a_pull_request_or_without_a_success_claim() {
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(7200)
        .exit(7000, 0, Outcome::Success)
        .forge(Forge::Known(Some(open_pr())))
        .run();
    assert!(!w.phantom);
    let w = snap()
        .wt()
        .ahead(1)
        .failed_attempt(7200)
        .forge(Forge::Known(None))
        .run();
    assert!(!w.phantom);
    // A failure after an earlier success: the last exit did not claim success.
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(9000)
        .exit(8900, 0, Outcome::Success)
        .failed_attempt(8000)
        .forge(Forge::Known(None))
        .run();
    assert!(!w.phantom);
}

#[test]
fn phase_is_the_newest_milestone_and_session_the_newest_id() {
    let w = snap()
        .wt()
        .ahead(3)
        .spawn_session(9000, "s-1")
        .milestone(8900, "scoped", OLD_HEAD)
        .exit(8800, 1, Outcome::Failed)
        .spawn_session(8000, "s-2")
        .milestone(7900, "implemented", HEAD)
        .exit(7800, 1, Outcome::Failed)
        .run();
    assert_eq!(w.phase.as_deref(), Some("implemented"));
    assert_eq!(w.session_id.as_deref(), Some("s-2"));
    assert_eq!(w.idle_seconds, Some(7800));
    assert_eq!(w.attempts, 2);
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
}

#[test]
fn the_worker_object_echoes_the_snapshot() {
    let w = snap()
        .wt()
        .ahead(2)
        .with(|s| {
            s.behind = 5;
            s.remote_ahead = Some(1);
            s.branch_remote = true;
        })
        .failed_attempt(7200)
        .run();
    assert_eq!(w.task, "7");
    assert_eq!(w.branch, "issue-7");
    assert_eq!(w.base, "main");
    assert_eq!(w.head, Some(id(HEAD)));
    assert_eq!(w.worktree.as_deref(), Some(WT));
    assert_eq!(
        (w.ahead, w.behind, w.remote_ahead),
        (Some(2), Some(5), Some(1))
    );
    assert_eq!(w.max_attempts, 3);
    assert_eq!(w.operation, None);
    assert!(!w.reason.to_string().is_empty());
}

#[test]
fn a_blocker_the_forge_reports_closed_no_longer_blocks() {
    let t = snap()
        .wt()
        .dirty(dirty(0, 0, 1, 0))
        .spawn(7200)
        .blocked(7000, "#12");
    assert_eq!(t.run().action, Action::Wait);
    assert_eq!(
        t.with(|s| s.blocker_closed = true).run().action,
        Action::WipCommit
    );
}

/// The reason says the worktree directory is missing: as the deciding override, in the
/// row, or once at the end; and the rendered sentence says it exactly once.
fn assert_said_missing(w: &Worker) {
    let typed = w.reason.missing.as_deref() == Some(WT)
        && (w
            .reason
            .overrides
            .contains(&Override::MissingDirectory { path: WT.into() })
            || w.reason
                .overrides
                .contains(&Override::MissingNotResumed { path: WT.into() })
            || matches!(w.reason.row, Row::Ahead { missing: true, .. })
            || w.reason.overrides.is_empty());
    assert!(typed, "{:?}", w.reason);
    assert_eq!(
        w.reason.to_string().matches("missing").count(),
        1,
        "{}",
        w.reason
    );
}
