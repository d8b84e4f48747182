//! Pull request feedback (SPEC 1.1): failing checks and requested changes.

use super::*;

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
