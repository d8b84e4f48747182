//! Unit tests of the classifier: every row and special case of the SPEC's
//! "Classification" tables, walked without a repository.

use super::*;
use crate::ledger::GateBy;
use jiff::Timestamp;

/// The fixed clock of every snapshot (2026-11-17T22:13:20Z).
const NOW: i64 = 1_795_040_000;
const HEAD: &str = "1111111111111111111111111111111111111111";
const OLD_HEAD: &str = "2222222222222222222222222222222222222222";
const WT: &str = "/work/trees/issue-7";

/// The clock minus `age` seconds.
fn at(age: i64) -> Timestamp {
    clock::from_secs(NOW - age)
}

fn dirty(staged: u32, unstaged: u32, untracked: u32, conflicted: u32) -> Dirty {
    Dirty {
        staged,
        unstaged,
        untracked,
        conflicted,
    }
}

fn open_pr() -> Pr {
    pr(PrState::Open)
}

fn pr(state: PrState) -> Pr {
    Pr {
        number: 42,
        state,
        url: "https://github.com/o/r/pull/42".into(),
        head: None,
        checks: None,
        review: None,
        feedback: Feedback::default(),
    }
}

/// A snapshot of task 7 on `issue-7`: local branch at [`HEAD`], nothing ahead, no
/// worktree, no ledger, forge unknown, stall after 30m, 3 attempts.
fn snap() -> T {
    T(Snapshot {
        task: "7".into(),
        branch: "issue-7".into(),
        base: "main".into(),
        head: Some(HEAD.into()),
        branch_local: true,
        branch_remote: false,
        ahead: 0,
        behind: 0,
        remote_ahead: None,
        worktree: None,
        newest_commit: None,
        events: Vec::new(),
        branch_unique: 0,
        beyond_pr: 0,
        pid_alive: None,
        transcript_mtime: None,
        forge: Forge::Unknown,
        blocker_closed: false,
        now: at(0),
        stall_after_secs: 1800,
        max_attempts: 3,
    })
}

/// Builder around a [`Snapshot`]; events must be pushed oldest first (ledger order).
struct T(Snapshot);

impl T {
    fn ev_head(mut self, age: i64, head: Option<&str>, body: Body) -> T {
        if let Some(prev) = self.0.events.last() {
            assert!(
                clock::parse(&prev.ts).unwrap() <= at(age),
                "test bug: events must be pushed in ledger order"
            );
        }
        let mut e = Event::new(at(age), &self.0.task, Some(&self.0.branch), body)
            .with_head(head.map(str::to_string));
        e.seq = self.0.events.len() as u64 + 1;
        self.0.events.push(e);
        self
    }
    fn ev(self, age: i64, body: Body) -> T {
        self.ev_head(age, None, body)
    }
    fn spawn(self, age: i64) -> T {
        let attempt = self.next_attempt();
        self.ev(
            age,
            Body::Spawn {
                attempt,
                cwd: WT.into(),
                host: "box".into(),
                session_id: None,
                agent: Some("claude".into()),
                pid: Some(4242),
                pid_start: Some("123456".into()),
            },
        )
    }
    fn spawn_session(self, age: i64, session: &str) -> T {
        let attempt = self.next_attempt();
        self.ev(
            age,
            Body::Spawn {
                attempt,
                cwd: WT.into(),
                host: "box".into(),
                session_id: Some(session.into()),
                agent: None,
                pid: None,
                pid_start: None,
            },
        )
    }
    fn resume(self, age: i64) -> T {
        let attempt = self.next_attempt();
        self.ev(
            age,
            Body::Resume {
                attempt,
                session_id: None,
                prompt_sha: None,
            },
        )
    }
    fn next_attempt(&self) -> u32 {
        self.0
            .events
            .iter()
            .filter(|e| matches!(e.body, Body::Spawn { .. } | Body::Resume { .. }))
            .count() as u32
            + 1
    }
    fn exit_full(
        self,
        age: i64,
        rc: i32,
        outcome: Outcome,
        message: Option<&str>,
        retry_after: Option<Timestamp>,
        blocker: Option<&str>,
    ) -> T {
        self.ev(
            age,
            Body::Exit {
                rc,
                outcome,
                message: message.map(str::to_string),
                retry_after: retry_after.map(clock::format_secs),
                fresh: None,
                blocker: blocker.map(str::to_string),
                session_id: None,
            },
        )
    }
    fn exit(self, age: i64, rc: i32, outcome: Outcome) -> T {
        self.exit_full(age, rc, outcome, None, None, None)
    }
    /// A spawn `age` seconds ago and a failed exit a minute later.
    fn failed_attempt(self, age: i64) -> T {
        self.spawn(age).exit(age - 60, 1, Outcome::Failed)
    }
    fn transient(self, age: i64, retry_after: Option<Timestamp>) -> T {
        self.exit_full(
            age,
            1,
            Outcome::Transient,
            Some("rate limit"),
            retry_after,
            None,
        )
    }
    fn blocked(self, age: i64, blocker: &str) -> T {
        self.exit_full(age, 0, Outcome::Blocked, None, None, Some(blocker))
    }
    fn milestone(self, age: i64, phase: &str, head: &str) -> T {
        self.ev_head(
            age,
            Some(head),
            Body::Milestone {
                phase: phase.into(),
                session_id: None,
            },
        )
    }
    fn gate(self, age: i64, head: &str, passed: bool, by: GateBy) -> T {
        self.ev_head(
            age,
            Some(head),
            Body::Gate {
                passed,
                command: Some("cargo test".into()),
                by,
            },
        )
    }
    fn cleared(self, age: i64) -> T {
        self.ev(
            age,
            Body::Cleared {
                reason: Some("fixed the login".into()),
            },
        )
    }
    fn escalated(self, age: i64, reason: &str) -> T {
        self.ev(
            age,
            Body::Escalated {
                reason: reason.into(),
            },
        )
    }
    fn unblocked(self, age: i64) -> T {
        self.ev(age, Body::Unblocked)
    }
    fn classified(self, age: i64) -> T {
        self.ev(
            age,
            Body::Classified {
                state: "half-done".into(),
                action: "resume".into(),
                reason: "r".into(),
                error: None,
            },
        )
    }
    /// A worktree at [`WT`], readable and clean.
    fn wt(self) -> T {
        self.wt_with(|_| {})
    }
    fn wt_with(mut self, f: impl FnOnce(&mut WorktreeFacts)) -> T {
        let w = self.0.worktree.get_or_insert_with(|| WorktreeFacts {
            path: WT.into(),
            dirty: Some(Dirty::default()),
            ..WorktreeFacts::default()
        });
        f(w);
        self
    }
    fn dirty(self, d: Dirty) -> T {
        self.wt_with(|w| w.dirty = Some(d))
    }
    fn with(mut self, f: impl FnOnce(&mut Snapshot)) -> T {
        f(&mut self.0);
        self
    }
    fn ahead(self, n: u32) -> T {
        self.with(|s| s.ahead = n)
    }
    fn forge(self, f: Forge) -> T {
        self.with(|s| s.forge = f)
    }
    fn run(&self) -> Worker {
        classify(&self.0)
    }
}

/// Assert liveness, state and action at once, with the reason in the message.
#[track_caller]
fn lsa(w: &Worker, liveness: Liveness, state: State, action: Action) {
    assert_eq!(
        (w.liveness, w.state, w.action),
        (liveness, state, action),
        "reason: {}; evidence: {:#?}",
        w.reason,
        w.evidence
    );
}

// ======================================================================================
// liveness
// ======================================================================================

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
        Some(&Override::Running { pid_alive: true })
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
        .with(|s| s.stall_after_secs = 60)
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
                state: "half-done".into(),
                action: "resume".into(),
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

// ======================================================================================
// state, first match wins
// ======================================================================================

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
    assert_eq!(w.behind, 4);
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
    assert_eq!(w.ahead, 3);
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
    assert_eq!(gate_on(&t.0.events, HEAD), Some(false));
    assert_eq!(gate_on(&t.0.events, OLD_HEAD), Some(true));
    assert_eq!(gate_on(&t.0.events, "3333"), None);
    let t = t.milestone(5000, "tests-green", HEAD);
    assert_eq!(gate_on(&t.0.events, HEAD), Some(true));
    assert_eq!(gate_on(&[], HEAD), None);
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
    assert_eq!((w.ahead, w.behind), (4, 1));
}

// ======================================================================================
// attempts
// ======================================================================================

#[test]
fn transient_and_blocked_outcomes_are_not_counted() {
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(9000)
        .transient(8900, None)
        .spawn(8000)
        .blocked(7900, "#12")
        .unblocked(7500)
        .spawn(7000)
        .exit(6900, 1, Outcome::Failed)
        .run();
    assert_eq!(w.attempts, 1);
    assert_eq!(w.last_outcome, Some(Outcome::Failed));
    let r = replay(&snap().spawn(9000).transient(8900, None).0.events);
    assert_eq!(r.attempts, 0);
    let r = replay(&snap().spawn(9000).blocked(8900, "#12").0.events);
    assert_eq!(r.attempts, 0);
}

#[test]
fn timeouts_and_successes_are_counted() {
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(9000)
        .exit(8900, 124, Outcome::Failed)
        .spawn(8000)
        .exit(7900, 0, Outcome::Success)
        .run();
    assert_eq!(w.attempts, 2);
    assert_eq!(w.last_outcome, Some(Outcome::Success));
}

#[test]
fn an_attempt_with_no_exit_counts() {
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(9000)
        .spawn(8000)
        .exit(7900, 1, Outcome::Failed)
        .run();
    assert_eq!(w.attempts, 2);
    let r = replay(&snap().spawn(9000).0.events);
    assert_eq!(r.attempts, 1);
    assert!(!r.last_attempt_exited);
}

#[test]
fn resume_events_are_attempts() {
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(9000)
        .exit(8900, 1, Outcome::Failed)
        .resume(8000)
        .exit(7900, 1, Outcome::Failed)
        .resume(7200)
        .run();
    assert_eq!(w.attempts, 3);
    lsa(&w, Liveness::Stalled, State::NeedsHuman, Action::Escalate);
}

#[test]
fn only_attempts_after_the_last_cleared_count() {
    let w = snap()
        .wt()
        .ahead(1)
        .failed_attempt(9000)
        .cleared(8500)
        .failed_attempt(8000)
        .failed_attempt(7500)
        .cleared(7000)
        .failed_attempt(6000)
        .run();
    assert_eq!(w.attempts, 1);
    assert_eq!(w.last_outcome, Some(Outcome::Failed));
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
}

// ======================================================================================
// transient and blocked outcomes
// ======================================================================================

#[test]
fn transient_waits_until_retry_after() {
    let reset = clock::from_secs(NOW + 3600);
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(7200)
        .transient(7000, Some(reset))
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Wait);
    assert_eq!(w.attempts, 0);
    assert_eq!(w.last_outcome, Some(Outcome::Transient));
    assert_eq!(w.retry_after, Some(reset));
}

#[test]
fn transient_resumes_once_retry_after_has_passed() {
    let reset = at(60);
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(7200)
        .transient(7000, Some(reset))
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert_eq!(w.attempts, 0);
    assert_eq!(w.retry_after, Some(reset));
    // With no known reset time it is resumable at once.
    let w = snap().wt().ahead(1).spawn(7200).transient(7000, None).run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert_eq!(w.retry_after, None);
}

#[test]
fn transient_under_the_cap_waits_for_the_reset() {
    // Two counted failures and a transient: still under the cap, waits for the reset.
    let w = snap()
        .wt()
        .ahead(1)
        .failed_attempt(9000)
        .failed_attempt(8000)
        .spawn(7200)
        .transient(7000, Some(clock::from_secs(NOW + 600)))
        .run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Wait);
    assert_eq!(w.attempts, 2);
}

#[test]
fn retry_after_belongs_to_a_transient_last_outcome_only() {
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(9000)
        .transient(8900, Some(clock::from_secs(NOW + 3600)))
        .failed_attempt(8000)
        .run();
    assert_eq!(w.retry_after, None);
    assert_eq!(w.last_outcome, Some(Outcome::Failed));
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
}

#[test]
fn blocked_waits_until_unblocked() {
    let blocked = snap().wt().ahead(1).spawn(7200).blocked(7000, "#12");
    let w = blocked.run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Wait);
    assert_eq!(w.attempts, 0);
    assert_eq!(w.last_outcome, Some(Outcome::Blocked));
    assert_eq!(
        w.reason.last_override(),
        Some(&Override::Blocked { on: "#12".into() })
    );
    let w = blocked.unblocked(3600).run();
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
    assert_eq!(w.attempts, 0);
}

#[test]
fn blocked_on_an_empty_branch_waits_instead_of_deleting() {
    let w = snap().wt().spawn(7200).blocked(7000, "#12").run();
    lsa(&w, Liveness::Exited, State::Empty, Action::Wait);
}

// ======================================================================================
// missing worktree, secrets, forge failure
// ======================================================================================

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
    lsa(&w, Liveness::Exited, State::HalfDone, Action::Resume);
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
    assert_eq!(w.head.as_deref(), Some(HEAD));
    assert_eq!(w.worktree.as_deref(), Some(WT));
    assert_eq!((w.ahead, w.behind, w.remote_ahead), (2, 5, Some(1)));
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

// ======================================================================================
// pull request feedback (SPEC 1.1)

fn fed_back(checks: Option<Checks>, review: Option<Review>) -> Pr {
    let mut p = open_pr();
    p.checks = checks;
    p.review = review;
    if checks == Some(Checks::Failing) {
        p.feedback.failing_checks.push(FailingCheck {
            name: "ci/test".into(),
            conclusion: "failure".into(),
            ..FailingCheck::default()
        });
    }
    if review == Some(Review::ChangesRequested) {
        p.feedback.changes.push(ChangeRequest {
            reviewer: "octocat".into(),
            body: "please fix".into(),
            comments: Vec::new(),
        });
    }
    p
}

fn open_with(checks: Option<Checks>, review: Option<Review>, attempts: u32) -> Worker {
    let mut t = snap().wt().ahead(2);
    for i in 0..attempts {
        t = t.failed_attempt(9000 - i64::from(i) * 100);
    }
    t.forge(Forge::Known(Some(fed_back(checks, review)))).run()
}

#[test]
fn failing_checks_send_an_open_pr_back_to_its_agent() {
    let w = open_with(Some(Checks::Failing), None, 1);
    assert_eq!((w.state, w.action), (State::Published, Action::Resume));
    assert_eq!(
        w.reason.to_string(),
        "pull request #42: checks fail: ci/test"
    );
}

#[test]
fn requested_changes_send_an_open_pr_back_to_its_agent() {
    let w = open_with(Some(Checks::Passing), Some(Review::ChangesRequested), 1);
    assert_eq!((w.state, w.action), (State::Published, Action::Resume));
    assert_eq!(
        w.reason.to_string(),
        "pull request #42: changes requested by octocat"
    );
}

#[test]
fn pending_or_passing_checks_and_approval_wait_for_nothing() {
    let w = open_with(Some(Checks::Pending), None, 1);
    assert_eq!((w.state, w.action), (State::Published, Action::None));
    assert_eq!(
        w.reason.to_string(),
        "pull request #42 is open; checks pending"
    );
    let w = open_with(Some(Checks::Passing), Some(Review::Approved), 1);
    assert_eq!((w.state, w.action), (State::Published, Action::None));
    let w = open_with(None, None, 1);
    assert_eq!((w.state, w.action), (State::Published, Action::None));
}

#[test]
fn failing_feedback_at_the_cap_is_needs_human() {
    let w = open_with(Some(Checks::Failing), Some(Review::ChangesRequested), 3);
    assert_eq!((w.state, w.action), (State::NeedsHuman, Action::Escalate));
    assert_eq!(
        w.reason.to_string(),
        "pull request #42: checks fail: ci/test; changes requested by octocat; 3 counted attempts reached recode.maxAttempts (3)"
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
