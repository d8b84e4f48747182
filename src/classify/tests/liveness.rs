//! Liveness (SPEC "Classification", liveness): running, stalled, exited, unknown;
//! what counts as activity.

use super::*;

#[test]
fn running_by_live_pid_even_with_old_activity() {
    let w = snap()
        .wt()
        .ahead(2)
        .spawn(7200)
        .with(|s| s.pid_alive = Some(true))
        .run();
    lsa(&w, Liveness::Running, State::HalfDone, Action::Wait);
    assert_eq!(w.attempts, 1);
    assert_eq!(w.last_outcome, None);
    assert_eq!(w.last_activity, Some(at(7200)));
    assert_eq!(w.idle_seconds, Some(7200));
}

#[test]
fn a_live_worker_not_read_waits_with_dirty_null() {
    // `status` without --deep: the worktree of a live pid is not read.
    let w = snap()
        .wt_with(|w| {
            w.dirty = None;
            w.not_read = true;
        })
        .spawn(7200)
        .with(|s| s.pid_alive = Some(true))
        .run();
    lsa(&w, Liveness::Running, State::Empty, Action::Wait);
    assert_eq!((w.dirty, w.dirty_not_read), (None, true));
    assert_eq!(
        w.reason.last_override(),
        Some(&Override::Running {
            by: crate::model::reason::RunningBy::PidAlive
        })
    );
    assert!(
        w.evidence
            .iter()
            .any(|e| e.starts_with("worktree not read"))
    );
    // Were the pid gone on that same reading, the unread worktree is still never deleted.
    let w = snap()
        .wt_with(|w| {
            w.dirty = None;
            w.not_read = true;
        })
        .spawn(7200)
        .with(|s| s.pid_alive = Some(false))
        .run();
    assert_eq!((w.state, w.action), (State::Empty, Action::None));
    assert_eq!(
        w.reason.last_override(),
        Some(&Override::Unreadable {
            path: WT.into(),
            why: "its status was not read".into()
        })
    );
}

#[test]
fn running_by_recent_activity_without_a_probeable_pid() {
    let w = snap()
        .dirty(dirty(0, 1, 0, 0))
        .wt_with(|w| w.newest_mtime = Some(at(60)))
        .ahead(1)
        .spawn(7200)
        .run();
    lsa(&w, Liveness::Running, State::HalfDone, Action::Wait);
    assert_eq!(w.idle_seconds, Some(60));
    assert_eq!(w.last_activity, Some(at(60)));
}

#[test]
fn running_by_recent_activity_although_the_pid_probe_failed() {
    // One failed probe is not proof of death: a recent commit keeps it running.
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(7200)
        .with(|s| {
            s.pid_alive = Some(false);
            s.newest_commit = Some(at(300));
        })
        .run();
    lsa(&w, Liveness::Running, State::HalfDone, Action::Wait);
    assert_eq!(w.idle_seconds, Some(300));
}

#[test]
fn running_by_a_recent_spawn_itself() {
    let w = snap().wt().spawn(10).run();
    lsa(&w, Liveness::Running, State::Empty, Action::Wait);
    assert_eq!(w.idle_seconds, Some(10));
}

#[test]
fn running_by_a_recent_transcript() {
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(7200)
        .with(|s| s.transcript_mtime = Some(at(100)))
        .run();
    lsa(&w, Liveness::Running, State::HalfDone, Action::Wait);
    assert_eq!(w.idle_seconds, Some(100));
}

#[test]
fn stalled_with_old_activity_and_a_dead_pid() {
    let w = snap()
        .wt_with(|w| w.newest_mtime = Some(at(5000)))
        .ahead(2)
        .spawn(7200)
        .with(|s| {
            s.pid_alive = Some(false);
            s.newest_commit = Some(at(3600));
        })
        .run();
    lsa(&w, Liveness::Stalled, State::HalfDone, Action::Resume);
    assert_eq!(w.attempts, 1, "an attempt with no exit counts");
    assert_eq!(w.last_outcome, None);
    assert_eq!(w.last_activity, Some(at(3600)));
    assert_eq!(w.idle_seconds, Some(3600));
}

#[test]
fn stalled_with_old_activity_and_no_probeable_pid() {
    let w = snap().wt().ahead(2).spawn(7200).run();
    lsa(&w, Liveness::Stalled, State::HalfDone, Action::Resume);
    assert_eq!(w.idle_seconds, Some(7200));
}

#[test]
fn stall_after_is_the_boundary() {
    // Activity exactly `stallAfter` ago: no activity for stallAfter, so stalled.
    let w = snap().wt().ahead(1).spawn(1800).run();
    assert_eq!(w.liveness, Liveness::Stalled);
    assert_eq!(w.idle_seconds, Some(1800));
    let w = snap().wt().ahead(1).spawn(1799).run();
    assert_eq!(w.liveness, Liveness::Running);
    // A shorter stallAfter stalls sooner.
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(120)
        .with(|s| s.stall_after = jiff::SignedDuration::from_secs(60))
        .run();
    assert_eq!(w.liveness, Liveness::Stalled);
}

#[test]
fn exited_when_the_last_attempt_has_an_exit() {
    let w = snap()
        .wt()
        .ahead(2)
        .spawn(7200)
        .exit(3600, 1, Outcome::Failed)
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert_eq!(w.attempts, 1);
    assert_eq!(w.last_outcome, Some(Outcome::Failed));
    assert_eq!(w.idle_seconds, Some(3600));
    assert_eq!(w.last_activity, Some(at(3600)));
}

#[test]
fn exited_even_with_recent_activity_or_a_live_pid() {
    let w = snap()
        .wt()
        .ahead(2)
        .spawn(600)
        .exit(60, 1, Outcome::Failed)
        .with(|s| s.pid_alive = Some(true))
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
}

#[test]
fn a_resume_after_an_exit_is_the_last_attempt() {
    let w = snap()
        .wt()
        .ahead(2)
        .spawn(9000)
        .exit(8000, 1, Outcome::Failed)
        .resume(7200)
        .run();
    lsa(&w, Liveness::Stalled, State::HalfDone, Action::Resume);
    assert_eq!(w.attempts, 2);
    assert_eq!(w.last_outcome, Some(Outcome::Failed));
    let w = snap()
        .wt()
        .ahead(2)
        .spawn(9000)
        .exit(8000, 1, Outcome::Failed)
        .resume(60)
        .run();
    lsa(&w, Liveness::Running, State::HalfDone, Action::Wait);
}

#[test]
fn unknown_without_a_ledger() {
    let w = snap()
        .wt()
        .ahead(1)
        .with(|s| s.newest_commit = Some(at(7200)))
        .run();
    lsa(&w, Liveness::Unknown, State::HalfDone, Action::Resume);
    assert_eq!(w.attempts, 0);
    assert_eq!(w.last_outcome, None);
    assert_eq!(w.idle_seconds, Some(7200));
}

#[test]
fn unknown_with_only_gate_and_milestone_events() {
    let w = snap()
        .wt()
        .ahead(1)
        .milestone(7200, "scoped", OLD_HEAD)
        .gate(7100, OLD_HEAD, false, GateBy::Record)
        .run();
    lsa(&w, Liveness::Unknown, State::HalfDone, Action::Resume);
    assert_eq!(w.attempts, 0);
    assert_eq!(w.phase.as_deref(), Some("scoped"));
    assert_eq!(w.idle_seconds, Some(7100));
}

#[test]
fn unknown_and_no_activity_at_all() {
    let w = snap().ahead(1).run();
    assert_eq!(w.liveness, Liveness::Unknown);
    assert_eq!(w.last_activity, None);
    assert_eq!(w.idle_seconds, None);
    assert_ne!(w.action, Action::Wait);
}

#[test]
fn unknown_with_a_fresh_file_mtime_waits() {
    let w = snap()
        .dirty(dirty(0, 0, 3, 0))
        .wt_with(|w| w.newest_mtime = Some(at(120)))
        .run();
    lsa(&w, Liveness::Unknown, State::HalfDone, Action::Wait);
    assert_eq!(w.idle_seconds, Some(120));
}

#[test]
fn unknown_with_a_fresh_commit_waits() {
    // Even an orphan (no worktree, no ledger) waits while commits keep arriving.
    let w = snap()
        .ahead(3)
        .with(|s| s.newest_commit = Some(at(300)))
        .run();
    lsa(&w, Liveness::Unknown, State::Orphaned, Action::Wait);
    assert_eq!(w.idle_seconds, Some(300));
}

#[test]
fn unknown_with_a_fresh_milestone_or_recorded_gate_waits() {
    let w = snap()
        .wt()
        .ahead(1)
        .milestone(60, "implemented", HEAD)
        .run();
    lsa(&w, Liveness::Unknown, State::HalfDone, Action::Wait);
    let w = snap()
        .wt()
        .ahead(1)
        .gate(60, HEAD, false, GateBy::Record)
        .run();
    lsa(&w, Liveness::Unknown, State::HalfDone, Action::Wait);
}

#[test]
fn unknown_with_old_activity_does_not_wait() {
    let w = snap()
        .dirty(dirty(0, 0, 3, 0))
        .wt_with(|w| w.newest_mtime = Some(at(1800)))
        .run();
    lsa(&w, Liveness::Unknown, State::HalfDone, Action::WipCommit);
}

#[test]
fn running_waits_whatever_the_state() {
    let live = |t: T| t.spawn(7200).with(|s| s.pid_alive = Some(true)).run();
    // needs-human (operation in progress)
    let w = live(
        snap()
            .wt_with(|w| w.operation = Some(Operation::Rebase))
            .ahead(1),
    );
    lsa(&w, Liveness::Running, State::NeedsHuman, Action::Wait);
    // published, merged (would delete)
    let w = live(
        snap()
            .wt()
            .ahead(1)
            .forge(Forge::Known(Some(pr(PrState::Merged)))),
    );
    lsa(&w, Liveness::Running, State::Published, Action::Wait);
    // empty (would delete)
    let w = live(snap().wt());
    lsa(&w, Liveness::Running, State::Empty, Action::Wait);
    // publishable
    let w = live(snap().wt().ahead(1).gate(7300, HEAD, true, GateBy::Record));
    lsa(&w, Liveness::Running, State::Publishable, Action::Wait);
    // half-done, dirty (would wip-commit)
    let w = live(snap().dirty(dirty(1, 0, 0, 0)).ahead(1));
    lsa(&w, Liveness::Running, State::HalfDone, Action::Wait);
    // capped: needs-human
    let w = live(
        snap()
            .wt()
            .ahead(1)
            .failed_attempt(9000)
            .failed_attempt(8000),
    );
    lsa(&w, Liveness::Running, State::NeedsHuman, Action::Wait);
    assert_eq!(w.attempts, 3);
}

#[test]
fn git_recode_own_events_are_not_activity() {
    let own: Vec<(Body, Option<&str>)> = vec![
        (
            Body::Classified {
                state: crate::model::State::HalfDone,
                action: crate::model::Action::Resume,
                reason: "r".into(),
                error: None,
            },
            None,
        ),
        (
            Body::Wip {
                files: 2,
                pushed: false,
                held: None,
                left_out: Vec::new(),
            },
            Some(HEAD),
        ),
        (
            Body::Published {
                pr: 42,
                url: "https://github.com/o/r/pull/42".into(),
            },
            None,
        ),
        (
            Body::Deleted {
                worktree: None,
                ignored: Vec::new(),
            },
            Some(OLD_HEAD),
        ),
        (
            Body::Phantom {
                reason: "no pull request".into(),
            },
            None,
        ),
        (
            Body::Escalated {
                reason: "capped".into(),
            },
            None,
        ),
        (
            Body::Gate {
                passed: false,
                command: None,
                by: GateBy::Recover,
            },
            Some(HEAD),
        ),
        // A human's events are not the worker's either.
        (Body::Cleared { reason: None }, None),
        (Body::Unblocked, None),
    ];
    for (body, head) in own {
        let kind = body.kind();
        let w = snap()
            .wt()
            .ahead(1)
            .spawn(7200)
            .ev_head(60, head, body)
            .run();
        assert_eq!(w.liveness, Liveness::Stalled, "{kind} counted as activity");
        assert_eq!(w.last_activity, Some(at(7200)), "{kind}");
        assert_eq!(w.idle_seconds, Some(7200), "{kind}");
    }
}

#[test]
fn own_events_alone_leave_liveness_unknown_and_no_activity() {
    let w = snap().wt().ahead(1).classified(60).run();
    lsa(&w, Liveness::Unknown, State::HalfDone, Action::Resume);
    assert_eq!(w.last_activity, None);
    assert_eq!(w.idle_seconds, None);
}

#[test]
fn file_mtimes_no_newer_than_the_last_own_action_are_not_activity() {
    // An mtime equal to git-recode's last action (e.g. its WIP commit touching the index).
    let w = snap()
        .wt_with(|w| w.newest_mtime = Some(at(600)))
        .ahead(1)
        .spawn(7200)
        .classified(600)
        .run();
    assert_eq!(w.liveness, Liveness::Stalled);
    assert_eq!(w.last_activity, Some(at(7200)));
    // Older than it.
    let w = snap()
        .wt_with(|w| w.newest_mtime = Some(at(900)))
        .ahead(1)
        .spawn(7200)
        .ev_head(
            600,
            Some(HEAD),
            Body::Wip {
                files: 1,
                pushed: true,
                held: None,
                left_out: Vec::new(),
            },
        )
        .run();
    assert_eq!(w.liveness, Liveness::Stalled);
    assert_eq!(w.last_activity, Some(at(7200)));
    // Newer than it: activity.
    let w = snap()
        .wt_with(|w| w.newest_mtime = Some(at(300)))
        .ahead(1)
        .spawn(7200)
        .classified(600)
        .run();
    lsa(&w, Liveness::Running, State::HalfDone, Action::Wait);
    assert_eq!(w.last_activity, Some(at(300)));
    // With no attempt recorded, a filtered mtime does not make an unknown worker wait.
    let w = snap()
        .dirty(dirty(0, 2, 0, 0))
        .wt_with(|w| w.newest_mtime = Some(at(700)))
        .classified(600)
        .run();
    lsa(&w, Liveness::Unknown, State::HalfDone, Action::WipCommit);
    assert_eq!(w.last_activity, None);
}

#[test]
fn transcript_mtime_no_newer_than_the_last_own_action_is_not_activity() {
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(7200)
        .with(|s| s.transcript_mtime = Some(at(900)))
        .classified(600)
        .run();
    assert_eq!(w.liveness, Liveness::Stalled);
    assert_eq!(w.last_activity, Some(at(7200)));
}

#[test]
fn a_future_timestamp_is_not_activity() {
    // SPEC 1.1: a skewed clock must not keep a dead worker running.
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(7200)
        .with(|s| s.newest_commit = Some(clock::from_secs(NOW + 500)))
        .run();
    assert_eq!(w.last_activity, Some(at(7200)));
    assert_eq!(w.idle_seconds, Some(7200));
    assert_eq!(w.liveness, Liveness::Stalled);
    assert!(
        w.evidence
            .iter()
            .any(|e| e.starts_with("ignored activity stamped in the future")),
        "{:?}",
        w.evidence
    );
}
