//! SPEC 1.3 "clocks that lie" and claims, with real separate hosts ([`Fleet`]): causes
//! the multi-host loop (`hosts_loop.rs`) found.
//!
//! - A host whose clock runs behind takes over a worker of a host whose clock runs ahead:
//!   its `takeover` and `resume` are decided on a ledger holding a newer `ts`, and sort
//!   after it. The worker is then its own (never taken over a second time while its agent
//!   works), and the old host, back, sees the takeover.
//! - The taker's agent commits: that commit is its activity, though the old host's
//!   commits on the branch are dated after it by the old host's clock.
//! - A host back from a sleep runs `recover` before its `sync`: its ledger does not show
//!   the takeover yet, but the remote's claim does, and nothing is pushed onto the branch,
//!   even when the takeover was of an attempt older than one of its own that never
//!   reached the remote.
//! - A host whose resume lost its claim after adding its worktree takes the worker over
//!   later, once the winner pushed on and fell silent: the takeover starts from what was
//!   pushed (the leftover branch fast-forwarded), and never moves a branch off commits
//!   the remote lacks (refused).

use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use crate::common::LATER_EPOCH;
use crate::hosts::{Agent, Fleet, MIN, a_starts_issue_1, at, claim_ref, refused_resume};

/// Six hours, in seconds: how far hostC's clock runs behind hostA's.
const BEHIND: i64 = 6 * 3600;

/// RFC 3339 of `LATER_EPOCH + secs` (after every real mtime: the agent's files are dated
/// by the test).
fn later(secs: i64) -> String {
    jiff::Timestamp::from_second(LATER_EPOCH + secs)
        .unwrap()
        .to_string()
}

/// hostA's clock at `secs` of the test.
fn a_at(secs: i64) -> String {
    later(secs)
}

/// hostC's clock at `secs` of the test, 6 h behind hostA's.
fn c_at(secs: i64) -> String {
    later(secs - BEHIND)
}

/// Write `name` in `wt` stamped `secs` of the test on hostC's clock (an agent at work
/// there).
fn c_agent_writes(wt: &Path, name: &str, secs: i64) {
    let file = wt.join(name);
    std::fs::write(&file, "agent work\n").unwrap();
    let when = UNIX_EPOCH + Duration::from_secs((LATER_EPOCH + secs - BEHIND) as u64);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .and_then(|f| f.set_modified(when))
        .unwrap();
}

/// `git commit -q -m <message>` in `wt`, dated `now` (RFC 3339: the committing host's
/// clock).
fn commit_at(f: &Fleet, wt: &Path, now: &str, message: &str) {
    let out = f
        .env
        .git_cmd(wt)
        .env("GIT_AUTHOR_DATE", now)
        .env("GIT_COMMITTER_DATE", now)
        .args(["commit", "-q", "-m", message])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// hostA starts issue-1 at `now` on its clock: a worktree, one pushed commit (dated by
/// its clock), a spawn with the agent's pid.
fn a_starts_at(f: &Fleet, a: &Path, agent: &Agent, now: &str) {
    let env = &f.env;
    let wt = env.root().join("a-issue-1");
    env.git(
        a,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-1",
            wt.to_str().unwrap(),
        ],
    );
    std::fs::write(wt.join("feature.txt"), "pushed work\n").unwrap();
    env.git(&wt, &["add", "feature.txt"]);
    commit_at(f, &wt, now, "feature: first part");
    env.git(&wt, &["push", "-q", "-u", "origin", "issue-1"]);
    f.ok(
        "hostA",
        a,
        now,
        &["record", "spawn", "issue-1", "--pid", &agent.pid()],
    );
}

/// `resume issue-1 --json` on `host`, which must succeed: the new attempt's directory.
fn resumed(f: &Fleet, host: &str, dir: &Path, now: &str) -> PathBuf {
    let prompt = f.env.root().join(format!("prompt-{host}.md"));
    let out = f.ok(
        host,
        dir,
        now,
        &[
            "resume",
            "issue-1",
            "--json",
            "--output",
            prompt.to_str().unwrap(),
        ],
    );
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    PathBuf::from(doc["cwd"].as_str().unwrap())
}

/// The `takeover` events of issue-1 in `dir`'s ledger.
fn takeovers(f: &Fleet, dir: &Path) -> usize {
    f.kinds(dir, "issue-1")
        .iter()
        .filter(|k| *k == "takeover")
        .count()
}

/// `status` on hostC at `secs` of the test: issue-1 is hostC's and `running`, and a
/// resume beside its agent is refused.
fn c_runs_it(f: &Fleet, c: &Path, secs: i64) {
    let w = f.worker("hostC", c, &c_at(secs), "issue-1");
    assert_eq!(
        (
            w["host"].as_str(),
            w["liveness"].as_str(),
            w["action"].as_str()
        ),
        (Some("hostC"), Some("running"), Some("wait")),
        "{w}"
    );
    let prompt = f.env.root().join("again.md");
    refused_resume(f, "hostC", c, &c_at(secs), &prompt);
}

/// Seed 2002: hostC's clock runs 6 h behind hostA's. C takes A's worker over once A has
/// been silent 2 h on C's clock; C's `takeover` and `resume` sort after A's `spawn` (its
/// `ts` is ahead of C's clock), so the worker is C's: while C's agent works it is
/// `running` there and a second resume is refused, never a second takeover. C's own WIP
/// commit, stamped after A's events (in C's future), hides none of C's next agent's work.
/// A, back with its fast clock, sees the takeover.
#[test]
fn a_takeover_by_a_host_whose_clock_runs_behind_sorts_after_the_attempt_it_took_over() {
    let f = Fleet::new();
    let (a, c) = (f.clone("a"), f.clone("c"));
    let agent = Agent::start();
    a_starts_at(&f, &a, &agent, &a_at(0));
    f.ok("hostA", &a, &a_at(MIN), &["recover", "--all"]);
    f.ok("hostA", &a, &a_at(MIN), &["sync"]);
    f.ok("hostC", &c, &c_at(2 * MIN), &["sync"]);
    f.worker("hostC", &c, &c_at(2 * MIN), "issue-1");
    f.env.git(&c, &["config", "recode.maxAttempts", "10"]);
    // A goes silent, its agent dies with it.
    drop(agent);
    let late = c_at(123 * MIN);
    f.env.git(&c, &["fetch", "-q", "origin"]);
    f.ok("hostC", &c, &late, &["sync"]);
    let w = f.worker("hostC", &c, &late, "issue-1");
    assert_eq!(w["action"], "resume", "{w}");
    let wt = resumed(&f, "hostC", &c, &late);
    let kinds = f.kinds(&c, "issue-1");
    assert_eq!(kinds, ["spawn", "takeover", "resume"], "after A's spawn");
    // C's agent works (its files dated by C's clock): the worker is C's, running.
    for m in [130, 150] {
        c_agent_writes(&wt, &format!("work-{m}.txt"), m * MIN);
        f.ok("hostC", &c, &c_at(m * MIN), &["recover", "--all"]);
        f.ok("hostC", &c, &c_at(m * MIN), &["sync"]);
        c_runs_it(&f, &c, m * MIN);
    }
    assert_eq!(takeovers(&f, &c), 1);
    // C's agent dies; C's recover commits its work (a `wip` stamped after A's events, in
    // C's future) and C resumes it: the new agent's work is activity all the same.
    c_agent_writes(&wt, "work-160.txt", 160 * MIN);
    f.ok("hostC", &c, &c_at(195 * MIN), &["recover", "--all"]);
    assert_eq!(
        f.kinds(&c, "issue-1").last().map(String::as_str),
        Some("wip")
    );
    assert_eq!(resumed(&f, "hostC", &c, &c_at(196 * MIN)), wt);
    c_agent_writes(&wt, "work-200.txt", 200 * MIN);
    c_runs_it(&f, &c, 200 * MIN);
    assert_eq!(takeovers(&f, &c), 1);
    // A comes back (its clock 6 h ahead of C's): it sees the takeover, never its own.
    let back = a_at(400 * MIN);
    f.ok("hostA", &a, &back, &["sync"]);
    let w = f.worker("hostA", &a, &back, "issue-1");
    assert_eq!(
        (&w["state"], &w["action"], &w["host"]),
        (&"needs-human".into(), &"escalate".into(), &"hostC".into()),
        "{w}"
    );
}

/// Seed 9181: hostA's agent ends and A ledgers its exit, then A is cut off before any
/// sync. hostC (its clock 6 h behind) takes the worker over and C's agent works. A comes
/// back and syncs: its exit, stamped by its clock, sorts after C's resume. The exit names
/// A's attempt, so C's stays open: the worker is C's, `running`, and a resume beside C's
/// agent is refused (it was `exited` and resumed: two agents on one task).
#[test]
fn the_late_exit_of_an_attempt_taken_over_never_ends_the_takers_attempt() {
    late_exit_of_a_taken_over_attempt(false);
}

/// As above, but A syncs (and so knows of C's takeover) before its surviving agent ends
/// and A ledgers the exit: it still names A's own attempt, not C's newer one.
#[test]
fn an_exit_ledgered_after_the_takeover_is_known_names_this_hosts_attempt() {
    late_exit_of_a_taken_over_attempt(true);
}

fn late_exit_of_a_taken_over_attempt(a_knows_the_takeover: bool) {
    let f = Fleet::new();
    let (a, c) = (f.clone("a"), f.clone("c"));
    let agent = Agent::start();
    a_starts_at(&f, &a, &agent, &a_at(0));
    f.ok("hostA", &a, &a_at(MIN), &["recover", "--all"]);
    f.ok("hostA", &a, &a_at(MIN), &["sync"]);
    f.ok("hostC", &c, &c_at(2 * MIN), &["sync"]);
    f.worker("hostC", &c, &c_at(2 * MIN), "issue-1");
    drop(agent);
    let exit = ["record", "exit", "issue-1", "--rc", "1"];
    if !a_knows_the_takeover {
        f.ok("hostA", &a, &a_at(10 * MIN), &exit);
    }
    let late = c_at(123 * MIN);
    f.env.git(&c, &["fetch", "-q", "origin"]);
    f.ok("hostC", &c, &late, &["sync"]);
    assert_eq!(f.worker("hostC", &c, &late, "issue-1")["action"], "resume");
    let wt = resumed(&f, "hostC", &c, &late);
    c_agent_writes(&wt, "work-130.txt", 130 * MIN);
    c_runs_it(&f, &c, 130 * MIN);
    f.ok("hostA", &a, &a_at(140 * MIN), &["sync"]);
    if a_knows_the_takeover {
        f.ok("hostA", &a, &a_at(141 * MIN), &exit);
        f.ok("hostA", &a, &a_at(141 * MIN), &["sync"]);
    }
    c_agent_writes(&wt, "work-150.txt", 150 * MIN);
    f.ok("hostC", &c, &c_at(150 * MIN), &["sync"]);
    assert_eq!(
        f.kinds(&c, "issue-1").last().map(String::as_str),
        Some("exit"),
        "A's exit sorts after C's resume"
    );
    c_runs_it(&f, &c, 150 * MIN);
    assert_eq!(takeovers(&f, &c), 1);
}

/// Seeds 2024, 2033, 2036: hostA's commits on issue-1 are dated by its clock, 6 h ahead
/// of hostC's. C takes the worker over and C's agent commits its work (nothing left
/// uncommitted): that commit is C's activity, though A's commits on the branch are dated
/// after it. The worker is `running` on C and a resume beside its agent is refused.
#[test]
fn a_commit_dated_ahead_by_another_hosts_clock_never_hides_this_hosts_newer_commit() {
    let f = Fleet::new();
    let (a, c) = (f.clone("a"), f.clone("c"));
    let agent = Agent::start();
    a_starts_at(&f, &a, &agent, &a_at(0));
    f.ok("hostA", &a, &a_at(MIN), &["recover", "--all"]);
    f.ok("hostA", &a, &a_at(MIN), &["sync"]);
    f.ok("hostC", &c, &c_at(2 * MIN), &["sync"]);
    f.worker("hostC", &c, &c_at(2 * MIN), "issue-1");
    drop(agent);
    let late = c_at(123 * MIN);
    f.env.git(&c, &["fetch", "-q", "origin"]);
    f.ok("hostC", &c, &late, &["sync"]);
    let wt = resumed(&f, "hostC", &c, &late);
    // C's agent commits at 140m of the test (C's clock): its worktree is clean again.
    c_agent_writes(&wt, "work.txt", 140 * MIN);
    f.env.git(&wt, &["add", "-A"]);
    commit_at(&f, &wt, &c_at(140 * MIN), "agent: progress");
    let w = f.worker("hostC", &c, &c_at(150 * MIN), "issue-1");
    assert_eq!(w["last_activity"], c_at(140 * MIN), "{w}");
    c_runs_it(&f, &c, 150 * MIN);
    assert_eq!(takeovers(&f, &c), 1);
}

/// Seed 2003: hostB took A's worker over (its claim is on the remote). A comes back and
/// runs `recover --all` before its `sync`: its ledger still says the stalled worker is its
/// own, with its agent's unsaved work. The WIP commit is made, but its push is held by B's
/// claim: the remote branch stays where B's worktree started, B's agent pushes on it, and
/// once A syncs its work is saved on the side branch. Nothing lost, nothing diverged.
#[test]
fn a_host_back_from_a_sleep_never_pushes_onto_a_branch_another_host_claimed() {
    let f = Fleet::new();
    let env = &f.env;
    let (a, b) = (f.clone("a"), f.clone("b"));
    let agent = Agent::start();
    let a_wt = a_starts_issue_1(&f, &a, &agent);
    for now in [at(MIN), at(2 * MIN)] {
        f.ok("hostA", &a, &now, &["recover", "--all"]);
        f.ok("hostA", &a, &now, &["sync"]);
        f.ok("hostB", &b, &now, &["recover", "--all"]);
        f.ok("hostB", &b, &now, &["sync"]);
    }
    f.worker("hostB", &b, &at(2 * MIN), "issue-1");
    // A goes down: its agent dies, leaving unsaved work.
    drop(agent);
    std::fs::write(a_wt.join("unsaved.txt"), "unsaved\n").unwrap();
    let late = at(181 * MIN);
    env.git(&b, &["fetch", "-q", "origin"]);
    f.ok("hostB", &b, &late, &["sync"]);
    let b_wt = resumed(&f, "hostB", &b, &late);
    let tip = f.remote_ref("refs/heads/issue-1").unwrap();
    // A is back; its loop runs recover before sync.
    let back = at(182 * MIN);
    let before = env.work(&a);
    f.ok("hostA", &a, &back, &["recover", "--all"]);
    assert_eq!(
        f.remote_ref("refs/heads/issue-1").as_deref(),
        Some(tip.as_str()),
        "nothing pushed onto issue-1"
    );
    let log = env.ok(&a, &["log", "issue-1", "--json"]);
    let wip: serde_json::Value = log
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .rfind(|v| v["kind"] == "wip")
        .expect("a WIP commit on A");
    assert_eq!(wip["pushed"], false, "{wip}");
    assert!(
        wip["held"]
            .as_str()
            .unwrap()
            .starts_with("hostB resumed issue-1 after hostA's attempt of "),
        "{wip}"
    );
    env.assert_nothing_lost(&a, &before);
    // B's agent pushes onto what it started from.
    std::fs::write(b_wt.join("more.txt"), "more\n").unwrap();
    env.git(&b_wt, &["add", "-A"]);
    env.git(&b_wt, &["commit", "-q", "-m", "agent: progress"]);
    env.git(&b_wt, &["push", "-q", "origin", "HEAD:refs/heads/issue-1"]);
    // A syncs: the comeback saves its work on the side branch, never onto issue-1.
    f.ok("hostA", &a, &back, &["sync"]);
    f.ok("hostA", &a, &back, &["recover", "issue-1"]);
    let side = f.remote_ref("refs/heads/recode/takeover/issue-1/hostA");
    assert!(side.is_some(), "A's work is on its side branch");
    let unsaved = env.git(
        &f.bare,
        &[
            "show",
            "refs/heads/recode/takeover/issue-1/hostA:unsaved.txt",
        ],
    );
    assert_eq!(unsaved, "unsaved");
    assert_eq!(
        f.remote_ref("refs/heads/issue-1"),
        Some(env.git(&b_wt, &["rev-parse", "HEAD"])),
        "issue-1 is B's"
    );
}

/// Seed 2098: hostA resumed its own worker (its claim on the remote, its `resume` in its
/// ledger only: the sync that would push it never ran) and fell silent. hostB took over
/// the attempt it knew, A's spawn, once A's claim's lease ran out. A comes back and runs
/// `recover --all` before its `sync`: its ledger's newest attempt is its own resume, newer
/// than the attempt B's claim names, yet B's claim holds the push: A's ledger does not
/// show B's attempt ended. Nor does its claim yield to a `resume` of A's before the sync.
#[test]
fn a_takeover_of_an_older_attempt_holds_the_push_of_a_resume_that_never_reached_the_remote() {
    let f = Fleet::new();
    let env = &f.env;
    let (a, b) = (f.clone("a"), f.clone("b"));
    let agent = Agent::start();
    let a_wt = a_starts_issue_1(&f, &a, &agent);
    for now in [at(MIN), at(2 * MIN)] {
        f.ok("hostA", &a, &now, &["recover", "--all"]);
        f.ok("hostA", &a, &now, &["sync"]);
        f.ok("hostB", &b, &now, &["recover", "--all"]);
        f.ok("hostB", &b, &now, &["sync"]);
    }
    f.worker("hostB", &b, &at(2 * MIN), "issue-1");
    // A's agent dies; A resumes it (claiming it on the remote) and goes down before its
    // next sync: the resume stays in A's ledger, and its new agent's work unsaved.
    drop(agent);
    let prompt = env.root().join("a.md");
    f.ok(
        "hostA",
        &a,
        &at(40 * MIN),
        &["resume", "issue-1", "--output", prompt.to_str().unwrap()],
    );
    std::fs::write(a_wt.join("unsaved.txt"), "unsaved\n").unwrap();
    // B would take over A's spawn, the newest attempt it knows: A's claim holds it until
    // its lease runs out, 2 h after B first saw it; then B takes it over.
    let late = at(181 * MIN);
    env.git(&b, &["fetch", "-q", "origin"]);
    f.ok("hostB", &b, &late, &["sync"]);
    refused_resume(&f, "hostB", &b, &late, &env.root().join("b.md"));
    let later = at(302 * MIN);
    f.ok("hostB", &b, &later, &["sync"]);
    resumed(&f, "hostB", &b, &later);
    let tip = f.remote_ref("refs/heads/issue-1").unwrap();
    // A is back; its loop runs recover before sync.
    let back = at(303 * MIN);
    let before = env.work(&a);
    f.ok("hostA", &a, &back, &["recover", "--all"]);
    assert_eq!(
        f.remote_ref("refs/heads/issue-1").as_deref(),
        Some(tip.as_str()),
        "nothing pushed onto issue-1"
    );
    let log = env.ok(&a, &["log", "issue-1", "--json"]);
    let wip: serde_json::Value = log
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .rfind(|v| v["kind"] == "wip")
        .expect("a WIP commit on A");
    assert_eq!(wip["pushed"], false, "{wip}");
    assert!(
        wip["held"]
            .as_str()
            .unwrap()
            .starts_with("hostB resumed issue-1 after hostA's attempt of "),
        "{wip}"
    );
    env.assert_nothing_lost(&a, &before);
    // Nor does A resume its worker before its sync (seed 5111): the resume syncs first and
    // sees B's takeover, and B's claim (on an attempt older than A's resume) stands.
    let claim = f.remote_ref(&claim_ref("issue-1"));
    f.ok("hostB", &b, &back, &["recover", "--all"]);
    f.ok("hostB", &b, &back, &["sync"]);
    let why = refused_resume(&f, "hostA", &a, &back, &env.root().join("a2.md"));
    assert!(why.contains("taken over by host hostB"), "{why}");
    assert_eq!(
        f.remote_ref(&claim_ref("issue-1")),
        claim,
        "B's claim stands"
    );
    // A syncs: B's takeover is newer than A's resume; A's work goes to its side branch.
    f.ok("hostA", &a, &back, &["sync"]);
    let w = f.worker("hostA", &a, &back, "issue-1");
    assert_eq!(
        (&w["state"], &w["host"]),
        (&"needs-human".into(), &"hostB".into()),
        "{w}"
    );
    f.ok("hostA", &a, &back, &["recover", "issue-1"]);
    let unsaved = env.git(
        &f.bare,
        &[
            "show",
            "refs/heads/recode/takeover/issue-1/hostA:unsaved.txt",
        ],
    );
    assert_eq!(unsaved, "unsaved");
    assert_eq!(
        f.remote_ref("refs/heads/issue-1"),
        Some(tip),
        "issue-1 is B's"
    );
}

/// Seed 5111, its second story: hostB took over hostA's worker, finished it and pushed;
/// its claim was removed with its ended attempt. A comes back and its sync is killed:
/// its ledger still says the worker is its own, stalled. A `resume` syncs the ledger
/// first where other hosts share the remote, sees B's attempt, and starts nothing.
#[test]
fn a_host_whose_ledger_is_behind_never_resumes_a_worker_another_host_finished() {
    let f = Fleet::new();
    let env = &f.env;
    let (a, b) = (f.clone("a"), f.clone("b"));
    let agent = Agent::start();
    a_starts_issue_1(&f, &a, &agent);
    for now in [at(MIN), at(2 * MIN)] {
        f.ok("hostA", &a, &now, &["recover", "--all"]);
        f.ok("hostA", &a, &now, &["sync"]);
        f.ok("hostB", &b, &now, &["recover", "--all"]);
        f.ok("hostB", &b, &now, &["sync"]);
    }
    f.worker("hostB", &b, &at(2 * MIN), "issue-1");
    drop(agent);
    // A falls silent; B takes its worker over, and B's agent finishes and pushes.
    let late = at(130 * MIN);
    f.ok("hostB", &b, &late, &["sync"]);
    let b_wt = resumed(&f, "hostB", &b, &late);
    std::fs::write(b_wt.join("done.txt"), "done\n").unwrap();
    env.git(&b_wt, &["add", "done.txt"]);
    commit_at(&f, &b_wt, &late, "B finishes");
    env.git(&b_wt, &["push", "-q", "origin", "HEAD:issue-1"]);
    f.ok(
        "hostB",
        &b,
        &late,
        &["record", "gate", "issue-1", "--passed"],
    );
    f.ok(
        "hostB",
        &b,
        &late,
        &["record", "exit", "issue-1", "--rc", "0"],
    );
    f.ok("hostB", &b, &late, &["sync"]);
    assert_eq!(f.remote_ref(&claim_ref("issue-1")), None, "its claim ended");
    let tip = f.remote_ref("refs/heads/issue-1");
    // A is back, its ledger behind: its resume syncs first and refuses.
    let back = at(140 * MIN);
    let before = env.work(&a);
    let out = f.on(
        "hostA",
        &a,
        &back,
        &[
            "resume",
            "issue-1",
            "--output",
            env.root().join("a.md").to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(takeovers(&f, &a), 1, "A's ledger now shows B's takeover");
    assert_eq!(
        f.remote_ref(&claim_ref("issue-1")),
        None,
        "A claimed nothing"
    );
    assert_eq!(f.remote_ref("refs/heads/issue-1"), tip);
    env.assert_nothing_lost(&a, &before);
}

/// Seed 6933: hostA spawned and resumed its worker in one second (two attempts of one
/// host with one `ts`), slept, and back, resumed it again before any `sync` (its claim,
/// naming its second attempt, pushed by the resume; its heartbeat, unchanged since before
/// the sleep, pushed only by its next `sync`). hostB had seen that heartbeat silent and
/// the attempt unchanged for over `recode.hostTimeout`. Reading A's claim as naming A's
/// spawn, B took A's second attempt for the one the claim started, so the claim's lease
/// was A's old heartbeat alone: B replaced it and took over beside A's new agent. The
/// claim names the newest attempt with its host and `ts`: its attempt is not in B's
/// ledger yet, so the claim itself is A's lease, and B's resume is refused (exit 3) until
/// it too has been unchanged that long.
#[test]
fn a_claim_naming_one_of_two_attempts_in_one_second_holds_off_a_takeover() {
    let f = Fleet::new();
    let (a, b) = (f.clone("a"), f.clone("b"));
    let agent = Agent::start();
    a_starts_issue_1(&f, &a, &agent);
    drop(agent);
    f.ok(
        "hostA",
        &a,
        &at(0),
        &["record", "exit", "issue-1", "--rc", "1"],
    );
    resumed(&f, "hostA", &a, &at(0));
    for now in [at(MIN), at(2 * MIN)] {
        f.ok("hostA", &a, &now, &["recover", "--all"]);
        f.ok("hostA", &a, &now, &["sync"]);
        f.ok("hostB", &b, &now, &["recover", "--all"]);
        f.ok("hostB", &b, &now, &["sync"]);
    }
    // A sleeps. B's loop sees A silent: A's attempt starts ageing there.
    let w = f.worker("hostB", &b, &at(125 * MIN), "issue-1");
    assert_eq!(w["action"], "wait", "{w}");
    // Back, A resumes its own worker before any `sync`.
    let back = at(250 * MIN);
    let beat = f.remote_ref("refs/recode/hosts/hostA");
    resumed(&f, "hostA", &a, &back);
    assert!(f.remote_ref(&claim_ref("issue-1")).is_some(), "A's claim");
    assert_eq!(
        f.remote_ref("refs/recode/hosts/hostA"),
        beat,
        "A's old heartbeat"
    );
    let soon = at(251 * MIN);
    f.ok("hostB", &b, &soon, &["sync"]);
    let prompt = f.env.root().join("b.md");
    let why = refused_resume(&f, "hostB", &b, &soon, &prompt);
    assert_eq!(
        why,
        "error: issue-1 was taken over from hostA by another host first (its claim is on \
         origin): nothing ledgered"
    );
    assert_eq!(takeovers(&f, &b), 0);
}

/// The stage a lost claim leaves (seed 6548 of the hosts simulation): hostB and hostC both
/// see hostA silent; B's takeover wins the claim, but its ledger push is held (a
/// pre-receive hook refusing the notes), so C's resume sees no takeover, adds its
/// worktree from `origin/issue-1` and loses the claim (exit 3). Then the remote takes notes
/// again and B syncs. Returns B's worktree, C's leftover worktree and the tip both started
/// from.
struct LostClaim {
    b: PathBuf,
    c: PathBuf,
    b_wt: PathBuf,
    c_wt: PathBuf,
    old: String,
}

fn c_loses_its_claim(f: &Fleet) -> LostClaim {
    let env = &f.env;
    let (a, b, c) = (f.clone("a"), f.clone("b"), f.clone("c"));
    let agent = Agent::start();
    a_starts_issue_1(f, &a, &agent);
    f.ok("hostA", &a, &at(MIN), &["recover", "--all"]);
    f.ok("hostA", &a, &at(MIN), &["sync"]);
    for (host, dir) in [("hostB", &b), ("hostC", &c)] {
        f.ok(host, dir, &at(2 * MIN), &["recover", "--all"]);
        f.ok(host, dir, &at(2 * MIN), &["sync"]);
        f.worker(host, dir, &at(2 * MIN), "issue-1");
    }
    drop(agent);
    // A is silent past recode.hostTimeout; B and C tick (B's heartbeat fresh on C).
    let late = at(181 * MIN);
    for (host, dir) in [("hostB", &b), ("hostC", &c)] {
        env.git(dir, &["fetch", "-q", "origin"]);
        f.ok(host, dir, &late, &["recover", "--all"]);
        f.ok(host, dir, &late, &["sync"]);
    }
    f.ok("hostC", &c, &late, &["sync"]);
    let w = f.worker("hostC", &c, &late, "issue-1");
    assert_eq!(w["action"], "resume", "{w}");
    let old = f.remote_ref("refs/heads/issue-1").unwrap();
    f.hold_notes();
    let b_wt = resumed(f, "hostB", &b, &late);
    let why = refused_resume(f, "hostC", &c, &late, &env.root().join("c.md"));
    assert!(why.contains("by another host first"), "{why}");
    // The lost claim left C a worktree on issue-1 at the tip both started from.
    let c_wt = env
        .worktrees(&c)
        .into_iter()
        .find(|w| w.file_name().is_some_and(|n| n != "c"))
        .expect("C's resume added a worktree before it lost the claim");
    assert_eq!(env.git(&c_wt, &["rev-parse", "HEAD"]), old);
    f.release_notes();
    f.ok("hostB", &b, &late, &["sync"]);
    LostClaim {
        b,
        c,
        b_wt,
        c_wt,
        old,
    }
}

/// B's agent commits and pushes a new tip of issue-1; B ticks once more (C sees it
/// alive, the worker B's), then falls silent; C's loop sees it silent for
/// recode.hostTimeout. Returns the tip B pushed and C's clock then.
fn b_pushes_then_falls_silent(f: &Fleet, l: &LostClaim) -> (String, String) {
    let env = &f.env;
    std::fs::write(l.b_wt.join("b-work.txt"), "B's agent's work\n").unwrap();
    env.git(&l.b_wt, &["add", "b-work.txt"]);
    env.git(&l.b_wt, &["commit", "-q", "-m", "agent: B's progress"]);
    env.git(
        &l.b_wt,
        &["push", "-q", "origin", "HEAD:refs/heads/issue-1"],
    );
    let pushed = env.git(&l.b_wt, &["rev-parse", "HEAD"]);
    assert_ne!(pushed, l.old);
    let tick = at(190 * MIN);
    f.ok("hostB", &l.b, &tick, &["recover", "--all"]);
    f.ok("hostB", &l.b, &tick, &["sync"]);
    f.ok("hostC", &l.c, &tick, &["recover", "--all"]);
    f.ok("hostC", &l.c, &tick, &["sync"]);
    let w = f.worker("hostC", &l.c, &tick, "issue-1");
    assert_eq!(
        (&w["host"], &w["action"]),
        (&"hostB".into(), &"wait".into()),
        "{w}"
    );
    // B goes down; C's loop ticks past recode.hostTimeout.
    let late = at(320 * MIN);
    env.git(&l.c, &["fetch", "-q", "origin"]);
    f.ok("hostC", &l.c, &late, &["recover", "--all"]);
    f.ok("hostC", &l.c, &late, &["sync"]);
    let w = f.worker("hostC", &l.c, &late, "issue-1");
    assert_eq!(w["host"], "hostB", "{w}");
    assert!(
        !w["reason"]
            .as_str()
            .unwrap()
            .contains("never acted on here"),
        "{w}"
    );
    (pushed, late)
}

/// Seed 6548: hostC's lost claim left it a worktree (and a local branch) at the tip A
/// pushed. B's agent pushed on, and B fell silent: C's takeover must start from what B
/// pushed, not from its leftover worktree's old tip, so its agent's push is a
/// fast-forward (docs/hosts.md: a takeover starts from what was pushed).
#[test]
fn a_takeover_on_a_host_a_lost_claim_left_a_worktree_starts_from_the_pushed_branch() {
    let f = Fleet::new();
    let env = &f.env;
    let l = c_loses_its_claim(&f);
    let (pushed, late) = b_pushes_then_falls_silent(&f, &l);
    assert_eq!(
        f.worker("hostC", &l.c, &late, "issue-1")["action"],
        "resume"
    );
    let wt = resumed(&f, "hostC", &l.c, &late);
    assert!(
        wt.starts_with(&l.c_wt),
        "{} in {}",
        wt.display(),
        l.c_wt.display()
    );
    assert_eq!(
        env.git(&wt, &["rev-parse", "HEAD"]),
        pushed,
        "the takeover starts from what B pushed"
    );
    assert_eq!(env.git(&l.c, &["rev-parse", "refs/heads/issue-1"]), pushed);
    // C's agent commits and pushes: a fast-forward.
    std::fs::write(wt.join("c-work.txt"), "C's agent's work\n").unwrap();
    env.git(&wt, &["add", "c-work.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "agent: C's progress"]);
    env.git(&wt, &["push", "-q", "origin", "HEAD:refs/heads/issue-1"]);
    assert_eq!(
        f.remote_ref("refs/heads/issue-1"),
        Some(env.git(&wt, &["rev-parse", "HEAD"]))
    );
}

/// The same without the worktree: a human removed C's leftover worktree, its local branch
/// stays at the old tip. The worktree the takeover adds starts from what B pushed.
#[test]
fn a_takeover_on_a_host_a_lost_claim_left_a_local_branch_starts_from_the_pushed_branch() {
    let f = Fleet::new();
    let env = &f.env;
    let l = c_loses_its_claim(&f);
    env.git(&l.c, &["worktree", "remove", l.c_wt.to_str().unwrap()]);
    assert_eq!(env.git(&l.c, &["rev-parse", "refs/heads/issue-1"]), l.old);
    let (pushed, late) = b_pushes_then_falls_silent(&f, &l);
    let wt = resumed(&f, "hostC", &l.c, &late);
    assert_eq!(env.git(&wt, &["rev-parse", "HEAD"]), pushed);
    std::fs::write(wt.join("c-work.txt"), "C's agent's work\n").unwrap();
    env.git(&wt, &["add", "c-work.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "agent: C's progress"]);
    env.git(&wt, &["push", "-q", "origin", "HEAD:refs/heads/issue-1"]);
}

/// `resume issue-1` on hostC, refused (exit 3): its stderr. Nothing ledgered here, no
/// claim of C's on the remote, nothing of C's lost.
fn c_refuses_the_takeover(f: &Fleet, l: &LostClaim, late: &str) -> String {
    let env = &f.env;
    let before = env.work(&l.c);
    let kinds = f.kinds(&l.c, "issue-1");
    let claim = f.remote_ref(&claim_ref("issue-1"));
    let out = f.on(
        "hostC",
        &l.c,
        late,
        &[
            "resume",
            "issue-1",
            "--output",
            env.root().join("c2.md").to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(f.kinds(&l.c, "issue-1"), kinds, "nothing ledgered");
    assert_eq!(
        f.remote_ref(&claim_ref("issue-1")),
        claim,
        "nothing claimed"
    );
    env.assert_nothing_lost(&l.c, &before);
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// SPEC 1.2 "Never lose work": C's local branch holds a commit the remote lacks (made in
/// its leftover worktree), and B pushed on meanwhile. The takeover never moves the branch
/// off that commit: refused (exit 3), nothing ledgered, the commit still C's tip.
#[test]
fn a_takeover_refuses_a_local_branch_holding_commits_the_remote_lacks() {
    let f = Fleet::new();
    let env = &f.env;
    let l = c_loses_its_claim(&f);
    std::fs::write(l.c_wt.join("local.txt"), "only here\n").unwrap();
    env.git(&l.c_wt, &["add", "local.txt"]);
    env.git(&l.c_wt, &["commit", "-q", "-m", "a commit only C has"]);
    let local = env.git(&l.c_wt, &["rev-parse", "HEAD"]);
    let (_, late) = b_pushes_then_falls_silent(&f, &l);
    let err = c_refuses_the_takeover(&f, &l, &late);
    assert!(
        err.contains("issue-1 holds 1 commit origin/issue-1 lacks"),
        "{err}"
    );
    assert_eq!(env.git(&l.c, &["rev-parse", "refs/heads/issue-1"]), local);
    assert_eq!(env.git(&l.c_wt, &["rev-parse", "HEAD"]), local);
    // Without the worktree, the same: the branch is never overwritten.
    env.git(&l.c, &["worktree", "remove", l.c_wt.to_str().unwrap()]);
    let err = c_refuses_the_takeover(&f, &l, &late);
    assert!(
        err.contains("issue-1 holds 1 commit origin/issue-1 lacks"),
        "{err}"
    );
    assert_eq!(env.git(&l.c, &["rev-parse", "refs/heads/issue-1"]), local);
}

/// C's leftover worktree holds an ignored file (C's `info/exclude`) that B's pushed commit
/// tracks: git's merge would overwrite it silently; the fast-forward
/// (`git merge --ff-only --no-overwrite-ignore`) refuses, so the takeover is refused
/// (exit 3) and the file is as it was. (A changed or untracked file there makes the
/// worker's action a WIP commit, which a silent host's worker never gets here: `resume`
/// refuses it before.)
#[test]
fn a_takeover_refuses_a_leftover_worktree_the_fast_forward_would_overwrite() {
    let f = Fleet::new();
    let env = &f.env;
    let l = c_loses_its_claim(&f);
    let exclude = l.c.join(".git/info/exclude");
    std::fs::create_dir_all(exclude.parent().unwrap()).unwrap();
    std::fs::write(&exclude, "b-work.txt\n").unwrap();
    std::fs::write(l.c_wt.join("b-work.txt"), "C's own, never committed\n").unwrap();
    assert_eq!(env.git(&l.c_wt, &["status", "--porcelain"]), "", "ignored");
    let (_, late) = b_pushes_then_falls_silent(&f, &l);
    let err = c_refuses_the_takeover(&f, &l, &late);
    assert!(err.contains("cannot fast-forward"), "{err}");
    assert_eq!(
        std::fs::read_to_string(l.c_wt.join("b-work.txt")).unwrap(),
        "C's own, never committed\n"
    );
    assert_eq!(env.git(&l.c_wt, &["rev-parse", "HEAD"]), l.old);
}
