//! Attempts and the cap count; transient and blocked outcomes.

use super::*;

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
