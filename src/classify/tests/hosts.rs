//! SPEC 1.2 "Several machines": a worker of another host is never acted on here while
//! that host is not silent; the comeback is `needs-human` with both hosts named.

use super::*;
use crate::model::reason::HostWait;
use crate::model::{HostFacts, OtherHost, TakenOver};

const HOUR: i64 = 3600;

/// A stalled worker with commits ahead and no worktree here, its newest attempt (2 h 30 m
/// ago) on host `a`; its heartbeat `beat` seconds old saying `alive`.
fn foreign(beat: Option<(i64, bool)>, attempt_age: i64) -> T {
    snap().spawn(attempt_age).ahead(2).with(|s| {
        s.worktree = None;
        s.branch_local = false;
        s.branch_remote = true;
        s.remote_ahead = Some(2);
        s.pid_alive = beat.filter(|(age, _)| *age < 2 * HOUR).map(|(_, a)| a);
        s.hosts = HostFacts {
            attempt_host: Some("a".into()),
            other: Some(OtherHost {
                host: "a".into(),
                label: None,
                attempt_at: at(attempt_age),
                beat_at: beat.map(|(age, _)| at(age)),
                alive: beat.map(|(_, a)| a),
                timeout: jiff::SignedDuration::from_secs(2 * HOUR),
            }),
            taken_over: None,
        };
    })
}

fn host_wait(w: &Worker) -> Option<HostWait> {
    match w.reason.last_override() {
        Some(Override::OtherHost { host, why }) if host == "a" => Some(why.clone()),
        _ => None,
    }
}

#[test]
fn a_worker_whose_host_says_alive_waits_and_names_the_host() {
    let w = foreign(Some((600, true)), 45 * 60).run();
    assert_eq!((w.liveness, w.action), (Liveness::Running, Action::Wait));
    assert_eq!(host_wait(&w), Some(HostWait::Alive { age: secs(600) }));
    assert_eq!(
        w.reason.to_string(),
        "worker of host a: its heartbeat 10m ago says it is alive; never acted on here"
    );
}

#[test]
fn a_young_attempt_of_another_host_waits_without_a_heartbeat() {
    let w = foreign(None, 10 * 60).run();
    assert_eq!(w.action, Action::Wait);
    assert_eq!(host_wait(&w), Some(HostWait::Young { age: secs(600) }));
}

#[test]
fn a_host_that_ticks_and_says_dead_handles_its_own_worker() {
    let w = foreign(Some((300, false)), 45 * 60).run();
    assert_eq!(w.action, Action::Wait);
    assert_eq!(
        host_wait(&w),
        Some(HostWait::HostHandles { age: secs(300) })
    );
}

#[test]
fn no_heartbeat_and_not_yet_silent_for_host_timeout_waits() {
    let w = foreign(None, HOUR).run();
    assert_eq!(w.action, Action::Wait);
    assert_eq!(
        host_wait(&w),
        Some(HostWait::NotSilent {
            age: secs(HOUR),
            timeout: secs(2 * HOUR)
        })
    );
}

#[test]
fn a_host_silent_for_host_timeout_may_be_taken_over() {
    // Its heartbeat still said alive, 2 h 10 m ago: silent past recode.hostTimeout.
    let w = foreign(Some((2 * HOUR + 600, true)), 2 * HOUR + 1800).run();
    assert_eq!(host_wait(&w), None);
    lsa(&w, Liveness::Stalled, State::HalfDone, Action::Resume);
}

#[test]
fn the_comeback_is_needs_human_with_both_hosts_whatever_runs_there() {
    let w = snap()
        .spawn(3 * HOUR)
        .wt()
        .dirty(dirty(0, 1, 1, 0))
        .with(|s| {
            // The new host's agent is alive by its heartbeat: this host's worktree is
            // still saved, never waited on.
            s.pid_alive = Some(true);
            s.hosts.taken_over = Some(TakenOver {
                by: "b".into(),
                here: "a".into(),
                at: at(HOUR),
                side_branch: "recode/takeover/issue-7/a".into(),
            });
        })
        .run();
    assert_eq!((w.state, w.action), (State::NeedsHuman, Action::Escalate));
    assert!(w.reason.overrides.is_empty());
    let text = w.reason.to_string();
    assert!(
        text.starts_with("taken over by host b at ")
            && text.contains("while this host a was silent: nothing here is pushed onto issue-7")
            && text.contains("saves this host's work on recode/takeover/issue-7/a"),
        "{text}"
    );
}

#[test]
fn a_silent_hosts_worker_is_only_taken_over_never_published_here() {
    let w = foreign(None, 3 * HOUR)
        .ev_head(
            3 * HOUR - 60,
            Some(HEAD),
            Body::Gate {
                passed: true,
                command: None,
                by: GateBy::Record,
            },
        )
        .run();
    assert_eq!((w.state, w.action), (State::Publishable, Action::None));
    assert_eq!(
        w.reason.to_string(),
        "worker of host a, silent for 3h: only a takeover (resume) acts on it here, never a publish"
    );
}

fn secs(n: i64) -> jiff::SignedDuration {
    jiff::SignedDuration::from_secs(n)
}
