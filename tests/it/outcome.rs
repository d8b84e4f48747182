//! `record exit` reads how an attempt ended (SPEC "Outcomes: reading how an attempt
//! ended"): the runner-wrapped limit, reset times in the machine's zone (`TZ`), the
//! backoff of consecutive transient exits, and `fresh` for a session that is gone.

use std::path::Path;

use crate::common::TestEnv;

/// Record a spawn and an exit with `message` (rc `rc`) on `branch`, with extra env;
/// return the outcome printed and the exit event's JSON line.
fn exit_with(
    env: &TestEnv,
    repo: &Path,
    branch: &str,
    rc: &str,
    message: &str,
    vars: &[(&str, &str)],
) -> (String, serde_json::Value) {
    env.ok(repo, &["record", "spawn", branch, "--agent", "claude"]);
    let file = env.root().join("message.txt");
    std::fs::write(&file, message).unwrap();
    let mut cmd = env.cmd(repo);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd
        .args(["record", "exit", branch, "--rc", rc, "--message-file"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let outcome = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let log = env.ok(repo, &["log", branch, "--json"]);
    let last = log
        .lines()
        .rfind(|l| l.contains("\"kind\":\"exit\""))
        .unwrap()
        .to_string();
    (outcome, serde_json::from_str(&last).unwrap())
}

#[test]
fn wrapped_limit_is_transient_with_its_reset() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let (outcome, exit) = exit_with(
        &env,
        &repo,
        "issue-1",
        "1",
        "Internal error: You've hit your limit · resets 9am (UTC)\n",
        &[],
    );
    assert_eq!(outcome, "transient");
    // The clock is 2026-11-20T12:00Z: the next 9am UTC is the next day.
    assert_eq!(exit["retry_after"], "2026-11-21T09:00:00Z");
}

#[test]
fn a_clock_time_without_zone_is_read_in_the_machines_zone() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let (_, exit) = exit_with(
        &env,
        &repo,
        "issue-2",
        "1",
        "Claude usage limit reached. Your limit will reset at 5pm.",
        &[("TZ", "America/New_York")],
    );
    // 12:00Z is 07:00 in New York; 5pm there is 22:00Z.
    assert_eq!(exit["retry_after"], "2026-11-20T22:00:00Z");
    let (_, exit) = exit_with(
        &env,
        &repo,
        "issue-3",
        "1",
        "Claude usage limit reached. Your limit will reset at 5pm.",
        &[("TZ", "Asia/Tokyo")],
    );
    // 12:00Z is 21:00 in Tokyo: the next 5pm is the next day, 08:00Z.
    assert_eq!(exit["retry_after"], "2026-11-21T08:00:00Z");
}

#[test]
fn transient_exits_without_a_reset_back_off_doubling_up_to_six_hours() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let mut seen = Vec::new();
    for _ in 0..8 {
        let (outcome, exit) = exit_with(
            &env,
            &repo,
            "issue-4",
            "1",
            "API Error: Rate limit reached",
            &[],
        );
        assert_eq!(outcome, "transient");
        seen.push(exit["retry_after"].as_str().unwrap().to_string());
    }
    assert_eq!(
        seen,
        [
            "2026-11-20T12:05:00Z",
            "2026-11-20T12:10:00Z",
            "2026-11-20T12:20:00Z",
            "2026-11-20T12:40:00Z",
            "2026-11-20T13:20:00Z",
            "2026-11-20T14:40:00Z",
            "2026-11-20T17:20:00Z",
            "2026-11-20T18:00:00Z",
        ]
    );
    // A failed exit ends the streak: the next transient one waits 5 minutes again.
    let (outcome, _) = exit_with(
        &env,
        &repo,
        "issue-4",
        "1",
        "error: could not compile `demo`",
        &[],
    );
    assert_eq!(outcome, "failed");
    let (_, exit) = exit_with(
        &env,
        &repo,
        "issue-4",
        "1",
        "Error: 429 Too Many Requests",
        &[],
    );
    assert_eq!(exit["retry_after"], "2026-11-20T12:05:00Z");
}

#[test]
fn success_mentioning_limits_stays_success_and_has_no_retry_after() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let (outcome, exit) = exit_with(
        &env,
        &repo,
        "issue-5",
        "0",
        "Added a rate limiter (429 Too Many Requests when over quota); session handling and quota tests pass. PR #9 opened.",
        &[],
    );
    assert_eq!(outcome, "success");
    assert!(exit.get("retry_after").is_none());
}

#[test]
fn session_not_found_is_failed_and_fresh() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let (outcome, exit) = exit_with(
        &env,
        &repo,
        "issue-6",
        "1",
        "No conversation found with session ID: 7d3f6a52-1111-4222-8333-944445555666\n",
        &[],
    );
    assert_eq!(outcome, "failed");
    assert_eq!(exit["fresh"], true);
}
