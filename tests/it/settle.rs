//! SPEC 1.2 "The loop settles": deadlines on every child process, stale locks moved
//! aside, no action carried out every tick, WIP commits that are never milestones, and a
//! user's failing hook that never makes a completed step look failed.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::common::{LATER, TestEnv};

/// `recover <args> --json` at [`LATER`]: exit code, the results, stderr.
pub fn recover(env: &TestEnv, dir: &Path, args: &[&str]) -> (i32, serde_json::Value, String) {
    env.json_later(dir, &[&["recover"], args].concat())
}

/// `(branch, action, result, reason)` of each result.
pub fn results(doc: &serde_json::Value) -> Vec<(String, String, String, String)> {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
            (s("branch"), s("action"), s("result"), s("reason"))
        })
        .collect()
}

/// `status --json` at [`LATER`]: the worker on `branch`.
pub fn status_of(env: &TestEnv, dir: &Path, branch: &str) -> serde_json::Value {
    let out = env
        .cmd(dir)
        .env("RECODE_NOW", LATER)
        .args(["status", "--json", "--all"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["workers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["branch"] == branch)
        .cloned()
        .unwrap_or_else(|| panic!("no {branch} in {v:#}"))
}

/// Every ledger line, all tasks.
pub fn ledger_lines(env: &TestEnv, dir: &Path) -> Vec<String> {
    env.ok(dir, &["log", "--json"])
        .lines()
        .map(str::to_string)
        .collect()
}

/// The kinds of `branch`'s ledger, in order.
fn kinds(env: &TestEnv, dir: &Path, branch: &str) -> Vec<String> {
    env.ok(dir, &["log", branch, "--json"])
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["kind"].to_string())
        .map(|k| k.trim_matches('"').to_string())
        .collect()
}

/// A linked worktree on a new `branch` from main, with a spawn and an exit (rc 1) so the
/// worker is exited and acted on.
pub fn dead_worker(env: &TestEnv, repo: &Path, name: &str, branch: &str) -> PathBuf {
    let wt = env.add_worktree(repo, branch, name);
    env.record(&wt, &["spawn", branch]);
    env.record(&wt, &["exit", branch, "--rc", "1"]);
    wt
}

/// Set `path`'s mtime `secs` seconds into the past.
pub fn age(path: &Path, secs: u64) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(secs))
        .unwrap();
}

/// The files next to `lock` that it was moved aside to.
fn moved_aside(lock: &Path) -> Vec<String> {
    let name = format!("{}.stale-", lock.file_name().unwrap().to_string_lossy());
    let mut v: Vec<String> = std::fs::read_dir(lock.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&name))
        .collect();
    v.sort();
    v
}

fn git_path(env: &TestEnv, wt: &Path, name: &str) -> PathBuf {
    PathBuf::from(env.git(
        wt,
        &["rev-parse", "--path-format=absolute", "--git-path", name],
    ))
}

/// A clean filter that never returns (git-lfs waiting on a server, say) hangs `git add`:
/// past `recode.commandTimeout` its process group is killed, the step has failed with
/// the filter's last stderr line, and the index and worktree are byte-identical (the
/// killed git worked in a temporary index of ours: it and its lock are gone, and the
/// worktree's own `index.lock` was never taken).
#[test]
fn a_hung_child_is_killed_at_its_deadline_and_the_wip_step_changes_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = dead_worker(&env, &repo, "wt1", "issue-1");
    env.git(&repo, &["config", "recode.commandTimeout", "2s"]);
    let filter = "echo 'waiting for the LFS server' >&2; exec sleep 40";
    env.git(&repo, &["config", "filter.slow.clean", filter]);
    std::fs::write(wt.join(".gitattributes"), "*.dat filter=slow\n").unwrap();
    std::fs::write(wt.join("a.txt"), "staged\n").unwrap();
    env.git(&wt, &["add", "a.txt"]);
    std::fs::write(wt.join("big.dat"), "data\n").unwrap();
    let index = git_path(&env, &wt, "index");
    let before = std::fs::read(&index).unwrap();
    let status_before = env.git(&wt, &["status", "--porcelain"]);
    let started = Instant::now();
    let (code, doc, _) = recover(&env, &repo, &["issue-1"]);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(15), "took {took:?}");
    assert_eq!(code, 0);
    let r = &results(&doc)[0];
    assert_eq!((r.1.as_str(), r.2.as_str()), ("wip-commit", "failed"));
    assert!(
        r.3.starts_with("WIP commit failed: git -c core.fsmonitor=false -c core.untrackedCache=false add -A --sparse -- . did not finish within 2 s (recode.commandTimeout): stopped: "),
        "{}",
        r.3
    );
    assert!(r.3.ends_with("waiting for the LFS server"), "{}", r.3);
    assert_eq!(
        std::fs::read(&index).unwrap(),
        before,
        "index byte-identical"
    );
    assert_eq!(env.git(&wt, &["status", "--porcelain"]), status_before);
    for left in ["index.lock", "index.recode-wip", "index.recode-wip.lock"] {
        assert!(!index.with_file_name(left).exists(), "{left} does not stay");
    }
    assert!(moved_aside(&index.with_file_name("index.lock")).is_empty());
    assert!(!kinds(&env, &repo, "issue-1").contains(&"unlocked".to_string()));
}

/// The gate runs past `recode.gateTimeout`: its group is killed (a server it started
/// too), the gate has failed with its last stderr line, and nothing is published.
#[test]
fn a_gate_past_its_deadline_fails_with_its_last_line() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = dead_worker(&env, &repo, "wt2", "issue-2");
    std::fs::write(wt.join("f.txt"), "work\n").unwrap();
    env.git(&wt, &["add", "f.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "work"]);
    env.ok(&wt, &["record", "gate", "issue-2", "--passed"]);
    let pidfile = env.root().join("server.pid");
    let gate = format!(
        "sleep 60 & echo $! > '{}'; echo 'waiting for the test database' >&2; wait",
        pidfile.display()
    );
    env.git(&repo, &["config", "recode.gate", &gate]);
    env.git(&repo, &["config", "recode.gateTimeout", "1s"]);
    let started = Instant::now();
    let (code, doc, _) = recover(&env, &repo, &["issue-2"]);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(code, 0);
    let r = &results(&doc)[0];
    assert_eq!(
        (r.1.as_str(), r.2.as_str(), r.3.as_str()),
        (
            "publish",
            "failed",
            "recode.gate failed (killed after 1 s, recode.gateTimeout): waiting for the test database: the worker is half-done (resume)"
        )
    );
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z ")),
        "the gate's server died with its group"
    );
    assert_eq!(status_of(&env, &repo, "issue-2")["action"], "resume");
}

/// A `refs/notes/recode.lock` older than 30 s (a writer SIGKILLed mid-append) is moved
/// aside by the next write, which goes through, ledgers `unlocked` and warns.
#[test]
fn a_stale_notes_lock_is_moved_aside_by_the_next_write() {
    // The files backend's own lock file (reftable: tests/it/formats.rs).
    let env = TestEnv::with_files_refs();
    let repo = env.repo("r");
    env.ok(&repo, &["record", "spawn", "issue-3"]);
    let lock = repo.join(".git/refs/notes/recode.lock");
    std::fs::write(&lock, "").unwrap();
    age(&lock, 45);
    let out = env.output(&repo, &["record", "spawn", "issue-4"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let aside = moved_aside(&lock);
    assert_eq!(aside.len(), 1);
    assert!(!lock.exists());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "warning: moved aside the stale lock {} (45 s old, left by a killed process) to {}.stale-",
            lock.display(),
            lock.display()
        )),
        "{stderr}"
    );
    let events: Vec<serde_json::Value> = env
        .ok(&repo, &["log", "issue-4", "--json"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 2);
    assert_eq!(events[1]["kind"], "unlocked");
    assert_eq!(events[1]["path"], lock.display().to_string());
    assert_eq!(events[1]["age"], 45);
    // The moved lock never reads as a ref.
    env.git(&repo, &["rev-list", "--all"]);
    assert!(aside[0].ends_with(".lock"), "{aside:?}");
}

/// A notes lock younger than 30 s is a writer at work, or one killed a moment ago: the
/// write waits until it is gone or stale, then goes through (no error, no human).
#[test]
fn a_young_notes_lock_is_waited_for() {
    // The files backend's own lock file (reftable: tests/it/formats.rs).
    let env = TestEnv::with_files_refs();
    let repo = env.repo("r");
    env.ok(&repo, &["record", "spawn", "issue-5"]);
    let lock = repo.join(".git/refs/notes/recode.lock");
    std::fs::write(&lock, "").unwrap();
    age(&lock, 28);
    let started = Instant::now();
    let out = env.output(&repo, &["record", "spawn", "issue-6"]);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(took >= Duration::from_secs(1), "it waited: {took:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_eq!(moved_aside(&lock).len(), 1);
    assert_eq!(kinds(&env, &repo, "issue-6"), ["spawn", "unlocked"]);
}

/// No forge can open a pull request (a plain bare remote, no token): the publishable
/// worker is pushed once per head, then `publishable`/`none` "pushed <head>; open the pull
/// request by hand"; the ledger stops growing; a new head is pushed once again.
#[test]
fn without_a_forge_a_head_is_pushed_once_then_the_worker_settles() {
    let env = TestEnv::new();
    let repo = env.repo_with_origin().0;
    let wt = dead_worker(&env, &repo, "wt7", "issue-7");
    std::fs::write(wt.join("f.txt"), "done\n").unwrap();
    env.git(&wt, &["add", "f.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "done"]);
    env.ok(&wt, &["record", "gate", "issue-7", "--passed"]);
    let head = env.git(&wt, &["rev-parse", "HEAD"]);
    let (code, doc, _) = recover(&env, &repo, &["--all"]);
    assert_eq!(code, 0);
    assert_eq!(
        results(&doc)[0],
        (
            "issue-7".to_string(),
            "publish".to_string(),
            "held".to_string(),
            format!(
                "pushed {}; open the pull request by hand (the remote 'origin' is on no known forge and no GH_TOKEN/GITHUB_TOKEN, GITLAB_TOKEN or GITEA_TOKEN/FORGEJO_TOKEN is set (see recode.forge))",
                &head[..12]
            )
        )
    );
    let w = status_of(&env, &repo, "issue-7");
    assert_eq!(
        (&w["state"], &w["action"], &w["reason"]),
        (
            &serde_json::json!("publishable"),
            &serde_json::json!("none"),
            &serde_json::json!(format!(
                "pushed {}; open the pull request by hand",
                &head[..12]
            ))
        )
    );
    let lines = ledger_lines(&env, &repo);
    for _ in 0..2 {
        let (_, doc, _) = recover(&env, &repo, &["--all"]);
        assert_eq!(results(&doc)[0].2, "skipped");
        assert_eq!(ledger_lines(&env, &repo), lines, "no line per tick");
    }
    // A new head (gate passed) is pushed once more.
    std::fs::write(wt.join("g.txt"), "more\n").unwrap();
    env.git(&wt, &["add", "g.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "more"]);
    env.ok(&wt, &["record", "gate", "issue-7", "--passed"]);
    let (_, doc, _) = recover(&env, &repo, &["--all"]);
    assert_eq!(results(&doc)[0].2, "held");
    let new_head = env.git(&wt, &["rev-parse", "HEAD"]);
    assert_eq!(
        env.git(&env.root().join("origin.git"), &["rev-parse", "issue-7"]),
        new_head
    );
}

/// A branch merged by hand whose remote branch remains: deleted once, then `none`
/// (nothing left to remove), and the ledger stops growing.
#[test]
fn a_merged_branch_whose_remote_branch_remains_is_deleted_once() {
    let env = TestEnv::new();
    let repo = env.repo_with_origin().0;
    let wt = dead_worker(&env, &repo, "wt8", "issue-8");
    std::fs::write(wt.join("m.txt"), "merged\n").unwrap();
    env.git(&wt, &["add", "m.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "merged"]);
    env.git(&wt, &["push", "-q", "-u", "origin", "issue-8"]);
    env.git(&repo, &["merge", "-q", "--ff-only", "issue-8"]);
    env.git(&repo, &["push", "-q", "origin", "main"]);
    let (_, doc, _) = recover(&env, &repo, &["--all"]);
    assert_eq!(results(&doc)[0].1, "delete");
    assert_eq!(results(&doc)[0].2, "done");
    let w = status_of(&env, &repo, "issue-8");
    assert_eq!(
        (
            w["state"].as_str(),
            w["action"].as_str(),
            w["reason"].as_str()
        ),
        (
            Some("empty"),
            Some("none"),
            Some(
                "no commits ahead of main, no worktree, no local branch: nothing left to remove (the remote branch issue-8 is kept)"
            )
        )
    );
    let lines = ledger_lines(&env, &repo);
    for _ in 0..2 {
        let (_, doc, _) = recover(&env, &repo, &["--all"]);
        assert_eq!(results(&doc)[0].2, "skipped");
        assert_eq!(ledger_lines(&env, &repo), lines);
    }
}

/// The only uncommitted content is a nested repository (left out): the WIP step says so
/// once, naming it, and the worker is `resume` from then on: never `wip-commit` again,
/// never `delete`, and no ledger line per tick.
#[test]
fn only_left_out_content_is_resumed_not_wip_committed_every_tick() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = dead_worker(&env, &repo, "wt9", "issue-9");
    let dep = wt.join("vendor/dep");
    std::fs::create_dir_all(&dep).unwrap();
    env.git(&dep, &["init", "-q", "-b", "main"]);
    std::fs::write(dep.join("lib.c"), "v1\n").unwrap();
    env.git(&dep, &["add", "lib.c"]);
    env.git(&dep, &["commit", "-q", "-m", "local patch"]);
    let (_, doc, _) = recover(&env, &repo, &["issue-9"]);
    assert_eq!(
        (results(&doc)[0].1.as_str(), results(&doc)[0].2.as_str()),
        ("wip-commit", "held")
    );
    assert_eq!(
        results(&doc)[0].3,
        "nothing to commit but what a WIP commit leaves out: vendor/dep"
    );
    let w = status_of(&env, &repo, "issue-9");
    assert_eq!(
        (
            w["state"].as_str(),
            w["action"].as_str(),
            w["reason"].as_str()
        ),
        (
            Some("half-done"),
            Some("resume"),
            Some(
                "only content a WIP commit leaves out is uncommitted (vendor/dep): resume, so the agent decides about it"
            )
        )
    );
    let lines = ledger_lines(&env, &repo);
    let (_, doc, _) = recover(&env, &repo, &["issue-9"]);
    assert_eq!(results(&doc)[0].1, "resume");
    assert_eq!(ledger_lines(&env, &repo), lines);
    assert_eq!(env.git(&dep, &["log", "--format=%s"]), "local patch");
}

/// A stalled worker whose last commit is a milestone: the WIP commit carries
/// `Recode-Wip: true` and no `Recode-Phase`, so it is no milestone and the worker does
/// not turn `running` (the demo's issue-6).
#[test]
fn a_wip_commit_is_never_a_milestone_and_the_stalled_worker_stays_stalled() {
    let env = TestEnv::new();
    let repo = env.demo();
    let (code, _, stderr) = recover(&env, &repo, &["issue-6-stalled"]);
    assert_eq!(code, 0, "{stderr}");
    let wt = repo.parent().unwrap().join("wt/6");
    let msg = env.git(&wt, &["log", "-1", "--format=%B"]);
    assert!(msg.starts_with("wip: recode snapshot"), "{msg}");
    assert!(msg.ends_with("Recode-Wip: true"), "{msg}");
    assert!(!msg.contains("Recode-Phase"), "{msg}");
    let w = status_of(&env, &repo, "issue-6-stalled");
    assert_eq!(w["liveness"], "stalled", "{w:#}");
    assert_eq!(w["action"], "resume");
}

/// The user's post-checkout hook fails during resume's `git worktree add`: the worktree
/// is there on the branch, so the step has not failed.
#[test]
fn a_failing_post_checkout_hook_does_not_fail_resume() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.git(&repo, &["branch", "issue-10"]);
    let wt = env.root().join("wt10");
    env.git(
        &repo,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "issue-10"],
    );
    std::fs::write(wt.join("x.txt"), "x\n").unwrap();
    env.git(&wt, &["add", "x.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "x"]);
    env.git(&repo, &["worktree", "remove", wt.to_str().unwrap()]);
    let hook = repo.join(".git/hooks/post-checkout");
    std::fs::write(&hook, "#!/bin/sh\necho 'npm install failed' >&2\nexit 1\n").unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", LATER)
        .args(["resume", "issue-10", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let added = env.root().join("r.worktrees/issue-10");
    assert_eq!(
        env.git(&added, &["symbolic-ref", "HEAD"]),
        "refs/heads/issue-10"
    );
}

/// A registered worktree whose directory is missing: `resume` refuses it, so status
/// never says `resume` for it (that would repeat forever): it escalates once.
#[test]
fn a_missing_worktree_directory_escalates_instead_of_a_refused_resume_every_tick() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = dead_worker(&env, &repo, "wt11", "issue-11");
    std::fs::write(wt.join("y.txt"), "y\n").unwrap();
    env.git(&wt, &["add", "y.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "y"]);
    std::fs::rename(&wt, env.root().join("elsewhere")).unwrap();
    let w = status_of(&env, &repo, "issue-11");
    assert_eq!(w["action"], "escalate", "{w:#}");
    let (_, doc, _) = recover(&env, &repo, &["issue-11"]);
    assert_eq!(results(&doc)[0].2, "done");
    let w = status_of(&env, &repo, "issue-11");
    assert_eq!(
        (w["state"].as_str(), w["action"].as_str()),
        (Some("needs-human"), Some("escalate"))
    );
    let lines = ledger_lines(&env, &repo);
    recover(&env, &repo, &["issue-11"]);
    assert_eq!(ledger_lines(&env, &repo), lines);
}

/// A `packed-refs.lock` older than `recode.staleLockAfter` (a `git pack-refs` killed) is
/// moved aside by the next writing command; its `unlocked` event is ledgered; the WIP
/// step goes on at once (no retries for seconds).
#[test]
fn a_stale_packed_refs_lock_is_moved_aside_and_the_step_goes_on() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = dead_worker(&env, &repo, "wt12", "issue-12");
    std::fs::write(wt.join("w.txt"), "work\n").unwrap();
    let lock = repo.join(".git/packed-refs.lock");
    std::fs::write(&lock, "").unwrap();
    age(&lock, 600);
    let started = Instant::now();
    let (code, doc, stderr) = recover(&env, &repo, &["issue-12"]);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(results(&doc)[0].2, "held", "{:?}", results(&doc));
    assert_eq!(env.git(&wt, &["show", "HEAD:w.txt"]), "work");
    assert!(!lock.exists());
    assert_eq!(moved_aside(&lock).len(), 1);
    assert!(stderr.contains("moved aside the stale lock"), "{stderr}");
    assert_eq!(
        kinds(&env, &repo, "issue-12")
            .iter()
            .filter(|k| *k == "unlocked")
            .count(),
        1
    );
}

/// A worktree that cannot be read (a corrupt index) is never acted on; on the third
/// consecutive `recover` run it escalates, once: `needs-human` with the reason.
#[test]
fn an_unreadable_worktree_on_three_runs_is_needs_human() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = dead_worker(&env, &repo, "wt13", "issue-13");
    std::fs::write(wt.join("d.txt"), "dirt\n").unwrap();
    std::fs::write(git_path(&env, &wt, "index"), "junk\n").unwrap();
    // Unreadable is never clean (SPEC 1.2 "Never lose work"): the worker needs a human
    // from the first run (within the three runs of "The loop settles"), escalated once,
    // and nothing in the worktree is touched.
    for run in 1..=3 {
        let (code, doc, _) = recover(&env, &repo, &["issue-13"]);
        assert_eq!(code, 0);
        let r = &results(&doc)[0];
        assert_eq!(r.1.as_str(), "escalate", "run {run}");
        assert!(
            r.3.contains(&format!("the worktree {} cannot be read", wt.display())),
            "{}",
            r.3
        );
    }
    let w = status_of(&env, &repo, "issue-13");
    assert_eq!(
        (w["state"].as_str(), w["action"].as_str()),
        (Some("needs-human"), Some("escalate"))
    );
    assert_eq!(std::fs::read_to_string(wt.join("d.txt")).unwrap(), "dirt\n");
    let lines = ledger_lines(&env, &repo);
    recover(&env, &repo, &["issue-13"]);
    assert_eq!(ledger_lines(&env, &repo), lines, "escalated once");
}
