//! SPEC 1.2 "The loop settles": the kinds the loop harness (`loopharness.rs`) found,
//! each as a test of its own: a push held for a gitlink the submodule's remote lacks
//! escalates instead of being tried every tick; an agent parked on a limit and silent past
//! its reset while its pid lives is escalated, never resumed beside it (never two agents);
//! a running worker's reason names the fact it runs on.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime};

use crate::common::{LATER, LATER_EPOCH, TestEnv};
use crate::settle::{recover, results, status_of};

/// `git recode <args>` at `now` (epoch seconds); asserts success.
fn at(env: &TestEnv, dir: &Path, now: i64, args: &[&str]) -> String {
    let when = jiff::Timestamp::from_second(now).unwrap().to_string();
    let out = env
        .cmd(dir)
        .env("RECODE_NOW", &when)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The worker on `branch` in `status --json --all` at `now`.
fn worker_at(env: &TestEnv, dir: &Path, now: i64, branch: &str) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_str(&at(env, dir, now, &["status", "--json", "--all"])).unwrap();
    v["workers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["branch"] == branch)
        .cloned()
        .unwrap_or_else(|| panic!("no {branch} in {v:#}"))
}

/// A repository with a bare origin and a worker `issue-7` (worktree `<root>/wt7`) one
/// commit ahead.
fn worker(env: &TestEnv) -> (PathBuf, PathBuf) {
    let repo = env.repo("r");
    let origin = env.root().join("origin.git");
    env.git(
        &env.root(),
        &["init", "-q", "--bare", "-b", "main", "origin.git"],
    );
    env.git(
        &repo,
        &["remote", "add", "origin", origin.to_str().unwrap()],
    );
    env.git(&repo, &["push", "-q", "origin", "main"]);
    let wt = env.root().join("wt7");
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-7",
            wt.to_str().unwrap(),
        ],
    );
    std::fs::write(wt.join("work.txt"), "work\n").unwrap();
    env.git(&wt, &["add", "work.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "work"]);
    (repo, wt)
}

/// A gated worker whose branch bumps a submodule to a commit the submodule's remote
/// lacks: each `recover` holds the push (result `held`, naming the submodule), the third
/// in a row on the head escalates, and the worker is then `needs-human` — never a push
/// tried on every tick for ever. The submodule commit stays.
#[test]
fn a_push_held_for_a_gitlink_the_remote_lacks_escalates_on_the_third_run() {
    let env = TestEnv::new();
    let (repo, wt) = worker(&env);
    let root = env.root();
    env.git(&root, &["init", "-q", "--bare", "-b", "main", "lib.git"]);
    env.git(&root, &["clone", "-q", "lib.git", "libsrc"]);
    let src = root.join("libsrc");
    std::fs::write(src.join("lib.c"), "v1\n").unwrap();
    env.git(&src, &["add", "."]);
    env.git(&src, &["commit", "-q", "-m", "lib"]);
    env.git(&src, &["push", "-q", "origin", "HEAD:main"]);
    let url = root.join("lib.git");
    env.git(
        &wt,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            url.to_str().unwrap(),
            "lib",
        ],
    );
    env.git(&wt, &["commit", "-q", "-m", "add lib"]);
    std::fs::write(wt.join("lib/lib.c"), "patched\n").unwrap();
    env.git(&wt.join("lib"), &["commit", "-q", "-am", "patch lib"]);
    let local_only = env.git(&wt.join("lib"), &["rev-parse", "HEAD"]);
    env.git(&wt, &["add", "lib"]);
    env.git(&wt, &["commit", "-q", "-m", "bump lib"]);
    let t = LATER_EPOCH - 7200;
    at(&env, &wt, t, &["record", "spawn", "issue-7"]);
    at(&env, &wt, t, &["record", "exit", "issue-7", "--rc", "0"]);
    at(&env, &wt, t, &["record", "gate", "issue-7", "--passed"]);
    let mut seen = Vec::new();
    for _ in 0..3 {
        let (_, doc, _) = recover(&env, &repo, &["issue-7"]);
        let r = results(&doc).into_iter().next().unwrap();
        seen.push((r.1, r.2, r.3));
    }
    let why =
        "push held: the push would carry gitlinks to submodule commits their remote lacks: lib";
    for (i, (action, result, reason)) in seen.iter().enumerate() {
        assert_eq!(
            (action.as_str(), result.as_str()),
            ("publish", "held"),
            "run {i}: {seen:?}"
        );
        assert!(reason.starts_with(why), "run {i}: {seen:?}");
    }
    assert!(
        seen[2]
            .2
            .ends_with("failed 3 times in a row on this head: escalated"),
        "{seen:?}"
    );
    let w = status_of(&env, &repo, "issue-7");
    assert_eq!(
        (&w["state"], &w["action"]),
        (&"needs-human".into(), &"escalate".into()),
        "{w:#}"
    );
    // Nothing was pushed, and the submodule's own commit is still there.
    assert_eq!(
        env.git(&root.join("origin.git"), &["branch", "--list", "issue-7"]),
        ""
    );
    env.git(
        &wt.join("lib"),
        &["cat-file", "-e", &format!("{local_only}^{{commit}}")],
    );
}

/// A stand-in agent that printed `line` and then waits for ever.
fn live_agent(out: &Path, line: &str) -> Child {
    let child = Command::new("sh")
        .arg("-c")
        .arg(format!("printf '%s\\n' '{line}'; exec sleep 600"))
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(out).unwrap())
        .spawn()
        .unwrap();
    for _ in 0..400 {
        if std::fs::metadata(out).map(|m| m.len()).unwrap_or(0) > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

/// An agent parked on a limit ("retrying in 2h"), its output written four hours before
/// [`LATER`]: an hour in, it is `running` and its reason says it waits on the limit (not
/// that its pid is alive); past the reset + `recode.stallAfter` with no activity it is
/// hung (SPEC 1.3 "The loop as people run it"): `stalled`, action `kill`, never `resume`
/// while it lives (that would start a second agent beside it); `recover` ends it and
/// ledgers its exit (rc 137), and only then may it be resumed.
#[test]
fn a_parked_agent_silent_past_its_reset_with_its_pid_alive_is_ended_never_resumed_beside_it() {
    let env = TestEnv::new();
    let (repo, wt) = worker(&env);
    let out = env.root().join("agent.out");
    let mut child = live_agent(&out, "Rate Limited [retrying in 2h attempt #4]");
    let written = LATER_EPOCH - 4 * 3600;
    std::fs::File::options()
        .write(true)
        .open(&out)
        .unwrap()
        .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(written as u64))
        .unwrap();
    let pid = child.id().to_string();
    at(
        &env,
        &wt,
        written,
        &[
            "record",
            "spawn",
            "issue-7",
            "--pid",
            &pid,
            "--output",
            out.to_str().unwrap(),
        ],
    );
    let w = worker_at(&env, &repo, written + 3600, "issue-7");
    assert_eq!(
        (&w["liveness"], &w["action"], &w["reason"]),
        (
            &"running".into(),
            &"wait".into(),
            &"worker is running (its output waits on a limit until 2029-12-31T22:00:00Z)".into()
        ),
        "{w:#}"
    );
    // While it lives, a resume is refused: never a second agent beside it.
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", LATER)
        .args(["resume", "issue-7"])
        .output()
        .unwrap();
    assert_ne!(
        out.status.code(),
        Some(0),
        "resume started a second agent: {out:?}"
    );
    let w = status_of(&env, &repo, "issue-7");
    assert_eq!(
        (&w["liveness"], &w["state"], &w["action"]),
        (&"stalled".into(), &"half-done".into(), &"kill".into()),
        "{w:#}"
    );
    let reason = w["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("hung: pid alive, no activity for ")
            && reason.ends_with(" (its limit reset at 2029-12-31T22:00:00Z)"),
        "{w:#}"
    );
    let (_, doc, _) = recover(&env, &repo, &["issue-7"]);
    let r = results(&doc).into_iter().next().unwrap();
    assert_eq!(r.1, "kill", "{doc:#}");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), None, "the agent was ended by a signal");
    // Ended and ledgered: the next tick resumes it (SPEC 1.3).
    let w = status_of(&env, &repo, "issue-7");
    assert_eq!(w["action"], "resume", "{w:#}");
}
