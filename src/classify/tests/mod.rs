//! Unit tests of the classifier: every row and special case of the SPEC's
//! "Classification" tables, walked without a repository.

mod feedback;
mod hosts;
mod hung;
mod liveness;
mod outcomes;
mod overrides;
mod proof;
mod state_human;
mod state_work;

use super::*;
use crate::model::GateBy;
use jiff::Timestamp;

/// The fixed clock of every snapshot (2026-11-17T22:13:20Z).
const NOW: i64 = 1_795_040_000;
const HEAD: &str = "1111111111111111111111111111111111111111";
const OLD_HEAD: &str = "2222222222222222222222222222222222222222";

/// The commit id a test's hex names.
fn id(hex: &str) -> gix::ObjectId {
    crate::model::commit_id(hex).expect("a test head is 40 hex digits")
}
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
        merging: false,
        checks: None,
        review: None,
        feedback: Feedback::default(),
    }
}

/// A snapshot of task 7 on `issue-7`: local branch at [`HEAD`], nothing ahead, no
/// worktree, no ledger, forge unknown, stall after 30m, 3 attempts.
fn snap() -> T {
    T(Snapshot {
        replay_cache: Default::default(),
        task: "7".into(),
        branch: "issue-7".into(),
        base: "main".into(),
        head: Some(id(HEAD)),
        branch_local: true,
        branch_remote: false,
        ahead: 0,
        shallow: false,
        behind: 0,
        remote_ahead: None,
        worktree: None,
        newest_commit: None,
        events: Vec::new(),
        branch_unique: 0,
        beyond_pr: 0,
        pr_head: PrHead::Tip,
        stashes: Vec::new(),
        reset_away: Vec::new(),
        deregistered: None,
        pid_alive: None,
        transcript_mtime: None,
        parked_until: None,
        forge: Forge::Unknown,
        noun: crate::model::reason::RequestNoun::PullRequest,
        blocker_closed: false,
        now: at(0),
        stall_after: jiff::SignedDuration::from_secs(1800),
        hung_after: jiff::SignedDuration::from_secs(86_400),
        gate_configured: true,
        max_attempts: 3,
        max_transient: 12,
        hosts: Default::default(),
    })
}

/// Builder around a [`Snapshot`]; events must be pushed oldest first (ledger order).
struct T(Snapshot);

impl T {
    fn ev_head(mut self, age: i64, head: Option<&str>, body: Body) -> T {
        if let Some(prev) = self.0.events.last() {
            assert!(
                prev.ts <= at(age),
                "test bug: events must be pushed in ledger order"
            );
        }
        let mut e =
            Event::new(at(age), &self.0.task, Some(&self.0.branch), body).with_head(head.map(id));
        e.seq = self.0.events.len() as u64 + 1;
        self.0.events.push(e);
        // A new event: the facts are replayed again.
        self.0.replay_cache = Default::default();
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
                label: None,
                session_id: None,
                agent: Some("claude".into()),
                pid: Some(4242),
                pid_start: Some("123456".into()),
                output: None,
                prompt: None,
                agent_args: None,
                config_dir: None,
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
                label: None,
                session_id: Some(session.into()),
                agent: None,
                pid: None,
                pid_start: None,
                output: None,
                prompt: None,
                agent_args: None,
                config_dir: None,
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
                host: None,
                label: None,
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
                retry_after,
                fresh: None,
                blocker: blocker.map(str::to_string),
                session_id: None,
                ends: None,
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
                state: crate::model::State::HalfDone,
                action: crate::model::Action::Resume,
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
