//! A hung agent (SPEC 1.3 "The loop as people run it"): its pid alive, no activity for
//! `recode.hungAfter` → `stalled`, action `kill`, reason "hung: pid alive, no activity
//! for …".

use super::*;

#[test]
fn a_live_pid_idle_past_hung_after_is_stalled_and_killed() {
    let hung = |idle: i64| {
        snap()
            .wt()
            .ahead(1)
            .spawn(idle)
            .with(|s| {
                s.pid_alive = Some(true);
                s.hung_after = jiff::SignedDuration::from_secs(7200);
            })
            .run()
    };
    let w = hung(7199);
    lsa(&w, Liveness::Running, State::HalfDone, Action::Wait);
    let w = hung(7200);
    lsa(&w, Liveness::Stalled, State::HalfDone, Action::Kill);
    assert_eq!(
        w.reason.last_override(),
        Some(&Override::Hung {
            idle: 7200,
            until: None
        })
    );
    assert_eq!(w.reason.to_string(), "hung: pid alive, no activity for 2h");
}

#[test]
fn any_recent_signal_keeps_a_live_pid_running() {
    // A commit, a file change or the transcript within recode.hungAfter is activity.
    let base = || {
        snap().wt().ahead(1).spawn(3 * 3600).with(|s| {
            s.pid_alive = Some(true);
            s.hung_after = jiff::SignedDuration::from_secs(7200);
        })
    };
    let w = base().with(|s| s.newest_commit = Some(at(600))).run();
    assert_eq!((w.liveness, w.action), (Liveness::Running, Action::Wait));
    let w = base().with(|s| s.transcript_mtime = Some(at(600))).run();
    assert_eq!((w.liveness, w.action), (Liveness::Running, Action::Wait));
    let w = base().wt_with(|w| w.newest_mtime = Some(at(600))).run();
    assert_eq!((w.liveness, w.action), (Liveness::Running, Action::Wait));
}

#[test]
fn a_hung_worker_of_a_dead_pid_or_past_the_cap_is_not_killed() {
    // No live pid: stalled as before, resumed (nothing to end).
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(3 * 3600)
        .with(|s| {
            s.pid_alive = Some(false);
            s.hung_after = jiff::SignedDuration::from_secs(7200);
        })
        .run();
    assert_eq!((w.liveness, w.action), (Liveness::Stalled, Action::Resume));
}

#[test]
fn a_parked_agent_silent_past_its_reset_is_killed_too() {
    let w = snap()
        .wt()
        .ahead(1)
        .spawn(5 * 3600)
        .with(|s| {
            s.pid_alive = Some(true);
            s.parked_until = Some(at(3 * 3600));
        })
        .run();
    assert_eq!((w.liveness, w.action), (Liveness::Stalled, Action::Kill));
    assert!(
        w.reason
            .to_string()
            .starts_with("hung: pid alive, no activity for 5h (its limit reset at "),
        "{}",
        w.reason
    );
}

#[test]
fn with_no_gate_a_tests_green_milestone_is_the_agents_own_claim() {
    let claimed = |gate_configured: bool| {
        snap()
            .wt()
            .ahead(1)
            .spawn(7200)
            .milestone(7100, "tests-green", HEAD)
            .exit(7000, 0, Outcome::Success)
            .with(|s| s.gate_configured = gate_configured)
            .run()
    };
    let w = claimed(false);
    assert_eq!((w.state, w.action), (State::Publishable, Action::Publish));
    assert_eq!(
        w.reason.to_string(),
        "1 commit ahead, clean; the gate's pass is the agent's own claim (a tests-green milestone on the head): recode.gate is unset, so nothing independent checks it"
    );
    let w = claimed(true);
    assert_eq!(
        w.reason.to_string(),
        "1 commit ahead, clean, gate passed on the head"
    );
}
