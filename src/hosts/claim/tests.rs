use super::*;

fn ev(i: u64, body: Body) -> Event {
    let t = crate::clock::parse("2026-11-29T12:00:00Z").unwrap()
        + jiff::SignedDuration::from_secs(i as i64);
    let mut e = Event::new(t, "1", Some("issue-1"), body);
    e.seq = i;
    e
}

fn doc(from: &str, ts: &Event, by: &str) -> ClaimDoc {
    ClaimDoc {
        branch: "issue-1".into(),
        from_host: from.into(),
        attempt_ts: ts.ts.to_string(),
        host: by.into(),
        pid: None,
        pid_start: None,
    }
}

#[test]
fn a_claim_on_the_same_attempt_holds_a_ledgered_one_runs_an_unknown_one_holds() {
    let a = ev(1, Body::test_spawn("a"));
    let b = ev(2, Body::test_resume(2, Some("b")));
    let events = vec![a.clone(), b.clone()];
    let resumed = ("b", b.ts.to_string());
    let r = (resumed.0, resumed.1.as_str());
    assert_eq!(
        judge(&doc("b", &b, "c"), &events, "issue-1", r, "me"),
        Verdict::Held
    );
    assert_eq!(
        judge(&doc("b", &b, "me"), &events, "issue-1", r, "me"),
        Verdict::Ours
    );
    assert_eq!(
        judge(&doc("a", &a, "b"), &events, "issue-1", r, "me"),
        Verdict::Running,
        "b's attempt is ledgered and runs: b's heartbeat is its lease"
    );
    assert_eq!(
        judge(&doc("a", &a, "me"), &events, "issue-1", r, "me"),
        Verdict::Stale,
        "this host's own claim on another attempt"
    );
    let unknown = ev(9, Body::test_resume(2, Some("x")));
    assert_eq!(
        judge(&doc("x", &unknown, "y"), &events, "issue-1", r, "me"),
        Verdict::Held,
        "an attempt this ledger does not know is newer: behind"
    );
}

#[test]
fn a_claim_ends_with_the_attempt_it_started() {
    let a = ev(1, Body::test_spawn("a"));
    let mut events = vec![a.clone()];
    let d = doc("a", &a, "b");
    assert!(!ended(&d, &events), "claimed, not appended yet");
    events.push(ev(2, Body::test_resume(2, Some("b"))));
    assert!(!ended(&d, &events), "its attempt runs");
    let exit = Body::test_exit(crate::outcome::Outcome::Success, None);
    events.push(ev(3, exit));
    assert!(ended(&d, &events));
}

/// Seed 9181: the exit of the attempt taken over, ledgered late by its host (cut off, its
/// clock ahead), sorts after the claimer's resume: it ends nothing of the claimer's. An
/// exit naming the claimer's attempt does.
#[test]
fn a_late_exit_of_the_attempt_taken_over_never_ends_the_claim() {
    let a = ev(1, Body::test_spawn("a"));
    let d = doc("a", &a, "b");
    let exit = |attempt: u32, host: &str| {
        Body::test_exit(crate::outcome::Outcome::Success, Some((attempt, host)))
    };
    let mut events = vec![
        a,
        ev(2, Body::test_resume(2, Some("b"))),
        ev(3, exit(1, "a")),
    ];
    assert!(!ended(&d, &events), "a's late exit of its own attempt 1");
    events.push(ev(4, exit(2, "b")));
    assert!(
        ended(&d, &events),
        "b's exit of the attempt the claim started"
    );
}

#[test]
fn a_lease_runs_out_after_the_claimers_observed_silence() {
    let t = |s: i64| Timestamp::from_second(1_900_000_000 + s).unwrap();
    assert!(!lease_ran_out(
        Some(t(0)),
        t(0),
        t(7199),
        jiff::SignedDuration::from_secs(7200)
    ));
    assert!(lease_ran_out(
        Some(t(0)),
        t(0),
        t(7200),
        jiff::SignedDuration::from_secs(7200)
    ));
    assert!(
        !lease_ran_out(
            Some(t(0)),
            t(5000),
            t(7200),
            jiff::SignedDuration::from_secs(7200)
        ),
        "the claim was seen later"
    );
    assert!(lease_ran_out(
        None,
        t(0),
        t(7200),
        jiff::SignedDuration::from_secs(7200)
    ));
    assert!(is_claim_name(&claim_ref("issue-1")));
    assert!(!is_claim_name("refs/recode/claims/x/y"));
}

/// Seed 5111 of the hosts simulation: this host resumed its own worker (attempt 2, never
/// pushed: its sync was killed), and another host took over the attempt it knew, the
/// spawn. That claim names an attempt older than this host's newest, and still holds.
#[test]
fn a_claim_on_an_older_attempt_is_stale_only_when_this_ledger_shows_its_attempt_ended() {
    let a = ev(1, Body::test_spawn("me"));
    let mine = ev(2, Body::test_resume(2, Some("me")));
    let mut events = vec![a.clone(), mine.clone()];
    let r = ("me", mine.ts.to_string());
    let r = (r.0, r.1.as_str());
    let b_claim = doc("me", &a, "b");
    assert_eq!(
        judge(&b_claim, &events, "issue-1", r, "me"),
        Verdict::Held,
        "b's takeover is not in this ledger"
    );
    let mut b_resume = ev(3, Body::test_resume(2, Some("b")));
    b_resume.seq = 3;
    events.push(b_resume);
    assert_eq!(
        judge(&b_claim, &events, "issue-1", r, "me"),
        Verdict::Running
    );
    let exit = Body::test_exit(crate::outcome::Outcome::Failed, None);
    events.push(ev(4, exit));
    assert_eq!(judge(&b_claim, &events, "issue-1", r, "me"), Verdict::Stale);
}

/// Only the claimer proves its `resume` died, by the pid and start token in the claim: a
/// live one (this test's own process) holds; a recycled pid, another host's claim, or a
/// claim naming no process is never proved dead.
#[test]
fn a_claimer_proves_its_own_resume_died_by_pid_and_start_token() {
    let a = ev(1, Body::test_spawn("a"));
    let me = std::process::id();
    let with = |by: &str, token: Option<String>| ClaimDoc {
        pid: Some(me),
        pid_start: token,
        ..doc("a", &a, by)
    };
    let live = crate::process::start_token(me);
    assert!(live.is_some());
    assert!(!claimer_died(&with("me", live.clone()), "me"), "alive");
    assert!(
        claimer_died(&with("me", Some("0".into())), "me"),
        "a recycled pid"
    );
    assert!(
        !claimer_died(&with("b", Some("0".into())), "me"),
        "b's to prove"
    );
    assert!(!claimer_died(&with("me", None), "me"), "no token: unknown");
    assert!(
        !claimer_died(&doc("a", &a, "me"), "me"),
        "written before pids"
    );
    let text = with("me", live).text();
    assert!(
        text.contains(&format!(r#""host":"me","pid":{me},"pid_start":"#)),
        "{text}"
    );
    let old: ClaimDoc = serde_json::from_str(&doc("a", &a, "me").text()).unwrap();
    assert_eq!(old.pid, None);
}
