//! `sync`: two clones of a bare remote converge on the union of their ledgers, exactly
//! what `git notes merge -s cat_sort_uniq` gives; `--setup`; races.
#![allow(unused_imports)]

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{NOW, TestEnv};
use crate::hookenv::*;

// ---------------------------------------------------------------------------------------
// sync
// ---------------------------------------------------------------------------------------

/// A bare remote with `main`, at `<root>/remote.git`.
fn bare_remote(env: &TestEnv) -> PathBuf {
    let seed = env.repo("seed");
    let bare = env.root().join("remote.git");
    env.git(
        &env.root(),
        &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
    );
    env.git(&seed, &["push", "-q", bare.to_str().unwrap(), "main"]);
    bare
}

fn clone(env: &TestEnv, bare: &Path, name: &str) -> PathBuf {
    let dir = env.root().join(name);
    env.git(
        &env.root(),
        &["clone", "-q", bare.to_str().unwrap(), dir.to_str().unwrap()],
    );
    dir
}

fn remote_refs(env: &TestEnv, bare: &Path) -> String {
    env.git(
        bare,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            "refs/notes",
            "refs/recode",
        ],
    )
}

/// Record a few events in clone `a` and clone `b`: both on task 1, `a` alone on task 2,
/// `b` alone on task 3.
fn record_both(env: &TestEnv, a: &Path, b: &Path) {
    env.ok(
        a,
        &[
            "record",
            "spawn",
            "issue-1",
            "--session-id",
            "a-1",
            "--cwd",
            ".",
        ],
    );
    env.ok(
        a,
        &[
            "record",
            "spawn",
            "issue-2",
            "--session-id",
            "a-2",
            "--cwd",
            ".",
        ],
    );
    env.ok(
        b,
        &[
            "record",
            "spawn",
            "issue-1",
            "--session-id",
            "b-1",
            "--cwd",
            ".",
        ],
    );
    env.ok(b, &["record", "exit", "issue-1", "--rc", "1"]);
    env.ok(b, &["record", "spawn", "issue-3", "--cwd", "."]);
}

#[test]
fn two_clones_converge_on_the_union_which_is_cat_sort_uniq() {
    let env = TestEnv::new();
    let bare = bare_remote(&env);
    let a = clone(&env, &bare, "a");
    let b = clone(&env, &bare, "b");
    let reference = clone(&env, &bare, "reference");
    record_both(&env, &a, &b);
    let la = log_set(&env, &a);
    let lb = log_set(&env, &b);
    assert_eq!((la.len(), lb.len()), (2, 3));
    let union: BTreeSet<String> = la.union(&lb).cloned().collect();
    assert_eq!(union.len(), 5);

    // The reference: plain git's cat_sort_uniq merge of the two ledgers, in a third copy.
    for (from, to) in [(&a, "refs/notes/recode"), (&b, "refs/notes/theirs")] {
        env.git(
            &reference,
            &[
                "fetch",
                "-q",
                from.to_str().unwrap(),
                &format!("refs/notes/recode:{to}"),
            ],
        );
    }
    env.git(
        &reference,
        &[
            "notes",
            "--ref=recode",
            "merge",
            "-q",
            "-s",
            "cat_sort_uniq",
            "refs/notes/theirs",
        ],
    );

    // The remote has no ledger yet: the first sync pushes both refs.
    assert_eq!(
        env.ok(&a, &["sync"]),
        "refs/notes/recode: the remote had none, pushed\nrefs/recode/anchors: the remote had none, pushed\n"
    );
    let a_notes = env.git(&a, &["rev-parse", "refs/notes/recode"]);
    let a_anchors = env.git(&a, &["rev-parse", "refs/recode/anchors"]);
    assert_eq!(
        remote_refs(&env, &bare),
        format!("refs/notes/recode {a_notes}\nrefs/recode/anchors {a_anchors}")
    );
    assert_eq!(
        env.git(&a, &["rev-parse", "refs/recode/remotes/origin/notes"]),
        a_notes
    );

    // b merges and pushes; a then takes the result.
    let out = env.ok(&b, &["sync", "origin"]);
    assert!(out.lines().all(|l| l.ends_with(", pushed")), "{out}");
    env.ok(&a, &["sync"]);
    // Both are now at rest: another round changes nothing.
    let tips = |d: &Path| {
        env.git(
            d,
            &["rev-parse", "refs/notes/recode", "refs/recode/anchors"],
        )
    };
    let (ta, tb) = (tips(&a), tips(&b));
    assert_eq!(ta, tb);
    assert_eq!(
        env.ok(&a, &["sync"]),
        "refs/notes/recode: up to date\nrefs/recode/anchors: up to date\n"
    );
    env.ok(&b, &["sync"]);
    assert_eq!((tips(&a), tips(&b)), (ta.clone(), ta));

    assert_eq!(log_set(&env, &a), union);
    assert_eq!(log_set(&env, &b), union);
    assert_eq!(
        env.ok(&a, &["log", "--json"]),
        env.ok(&b, &["log", "--json"])
    );

    // Per anchor, the merged note is exactly plain git's cat_sort_uniq merge.
    for task in ["1", "2", "3"] {
        let want = ledger(&env, &reference, task);
        assert!(!want.is_empty());
        assert_eq!(ledger(&env, &a, task), want, "task {task} in a");
        assert_eq!(ledger(&env, &b, task), want, "task {task} in b");
    }
    assert_eq!(ledger(&env, &a, "1").lines().count(), 3);
    // The merged notes ref holds only those three notes, on the local ref itself.
    let listed = env.git(&a, &["notes", "--ref=recode", "list"]);
    let anchors: BTreeSet<String> = listed
        .lines()
        .map(|l| l.split(' ').nth(1).unwrap().to_string())
        .collect();
    let want: BTreeSet<String> = ["1", "2", "3"].iter().map(|t| env.anchor(&a, t)).collect();
    assert_eq!(anchors, want);
    // And the anchors ref keeps all three anchors reachable, on both sides and the remote.
    for d in [&a, &b, &bare] {
        let names: BTreeSet<String> = env
            .git(d, &["ls-tree", "--name-only", "refs/recode/anchors"])
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(names, want, "in {}", d.display());
    }
}

#[test]
fn a_clone_with_no_ledger_takes_the_remotes() {
    let env = TestEnv::new();
    let bare = bare_remote(&env);
    let a = clone(&env, &bare, "a");
    let c = clone(&env, &bare, "c");
    env.ok(
        &a,
        &[
            "record",
            "spawn",
            "issue-1",
            "--session-id",
            "a-1",
            "--cwd",
            ".",
        ],
    );
    env.ok(&a, &["sync"]);
    let before = remote_refs(&env, &bare);
    assert_eq!(
        env.ok(&c, &["sync"]),
        "refs/notes/recode: taken from the remote\nrefs/recode/anchors: taken from the remote\n"
    );
    assert_eq!(remote_refs(&env, &bare), before);
    assert_eq!(
        env.ok(&c, &["log", "--json"]),
        env.ok(&a, &["log", "--json"])
    );
    assert_eq!(
        env.git(&c, &["rev-parse", "refs/notes/recode"]),
        env.git(&a, &["rev-parse", "refs/notes/recode"])
    );
    assert_eq!(ledger(&env, &c, "1"), ledger(&env, &a, "1"));

    // Neither side has anything: nothing to do, nothing pushed.
    let empty_bare = env.root().join("empty.git");
    env.git(
        &env.root(),
        &["init", "-q", "--bare", empty_bare.to_str().unwrap()],
    );
    let e = env.repo("e");
    env.git(
        &e,
        &["remote", "add", "origin", empty_bare.to_str().unwrap()],
    );
    assert_eq!(
        env.ok(&e, &["sync"]),
        "refs/notes/recode: nothing on either side\nrefs/recode/anchors: nothing on either side\n"
    );
    assert_eq!(remote_refs(&env, &empty_bare), "");
}

#[test]
fn a_clone_that_only_fetched_sees_the_other_clones_worker() {
    let env = TestEnv::new();
    let bare = bare_remote(&env);
    let a = clone(&env, &bare, "a");
    let d = clone(&env, &bare, "d");
    // a starts a worker and pushes its branch and ledger.
    env.git(&a, &["checkout", "-q", "-b", "issue-31"]);
    std::fs::write(a.join("w"), "w\n").unwrap();
    env.git(&a, &["add", "w"]);
    env.git(&a, &["commit", "-q", "-m", "work"]);
    env.git(&a, &["push", "-q", "origin", "issue-31"]);
    env.ok(
        &a,
        &[
            "record",
            "spawn",
            "issue-31",
            "--session-id",
            "a-31",
            "--cwd",
            ".",
        ],
    );
    env.ok(&a, &["sync"]);

    // d sets up the refspecs (idempotently) and only runs plain `git fetch`.
    let fetch_before = env.git(&d, &["config", "--get-all", "remote.origin.fetch"]);
    let added = env.ok(&d, &["sync", "--setup"]);
    for spec in [
        "+refs/notes/recode*:refs/recode/remotes/origin/notes*",
        "+refs/recode/anchors*:refs/recode/remotes/origin/anchors*",
    ] {
        assert!(
            added
                .lines()
                .any(|l| l == format!("added remote.origin.fetch {spec}")),
            "{added}"
        );
    }
    let fetch = env.git(&d, &["config", "--get-all", "remote.origin.fetch"]);
    assert_eq!(
        fetch,
        format!(
            "{fetch_before}\n+refs/notes/recode*:refs/recode/remotes/origin/notes*\n+refs/recode/anchors*:refs/recode/remotes/origin/anchors*"
        )
    );
    let all_config = env.git(&d, &["config", "--list", "--local"]);
    assert_eq!(env.ok(&d, &["sync", "--setup"]), "already set up\n");
    assert_eq!(env.git(&d, &["config", "--list", "--local"]), all_config);

    env.git(&d, &["fetch", "-q"]);
    assert_eq!(
        env.git(&d, &["rev-parse", "refs/recode/remotes/origin/notes"]),
        env.git(&a, &["rev-parse", "refs/notes/recode"])
    );
    // The local ledger ref was never written: only the tracking refs.
    let local = isolated(&env, "git", &d, &path_without_bin())
        .args(["rev-parse", "-q", "--verify", "refs/notes/recode"])
        .output()
        .unwrap();
    assert!(!local.status.success());

    assert_eq!(
        env.ok(&d, &["log", "--json"]),
        env.ok(&a, &["log", "--json"])
    );
    assert_eq!(
        env.ok(&d, &["log", "issue-31", "--json"]),
        env.ok(&a, &["log", "issue-31", "--json"])
    );
    let status = env.ok(&d, &["status", "--json", "--offline"]);
    let v: serde_json::Value = serde_json::from_str(&status).unwrap();
    let workers = v["workers"].as_array().unwrap();
    let w = workers
        .iter()
        .find(|w| w["task"] == "31")
        .unwrap_or_else(|| panic!("worker 31 missing: {status}"));
    assert_eq!(w["branch"], "issue-31");
    assert_eq!(w["session_id"], "a-31");
    assert_eq!(w["worktree"], serde_json::Value::Null);
    assert_eq!(w["head"], env.git(&a, &["rev-parse", "issue-31"]).as_str());
}

#[test]
fn setup_does_not_break_plain_fetch_and_push_before_any_ledger_exists() {
    let env = TestEnv::new();
    let bare = bare_remote(&env);
    let d = clone(&env, &bare, "d");
    env.ok(&d, &["sync", "--setup"]);
    let out = isolated(&env, "git", &d, &path_without_bin())
        .args(["fetch", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "git fetch: {}", stderr(&out));
    std::fs::write(d.join("x"), "x\n").unwrap();
    env.git(&d, &["add", "x"]);
    env.git(&d, &["commit", "-q", "-m", "x"]);
    let out = isolated(&env, "git", &d, &path_without_bin())
        .args(["push", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "git push: {}", stderr(&out));
}

/// Four rounds of: both clones record events (on a shared task and on tasks of their own),
/// then sync at the same moment. Returns the clones, the remote, every event recorded, and
/// the stderr of each concurrent sync that did not exit 0.
fn concurrent_rounds(env: &TestEnv) -> (PathBuf, PathBuf, PathBuf, BTreeSet<String>, Vec<String>) {
    let bare = bare_remote(env);
    let a = clone(env, &bare, "a");
    let b = clone(env, &bare, "b");
    let mut all = BTreeSet::new();
    let mut failures = Vec::new();
    for round in 0..4 {
        for (dir, who) in [(&a, "a"), (&b, "b")] {
            env.ok(
                dir,
                &[
                    "record",
                    "spawn",
                    "issue-50",
                    "--session-id",
                    &format!("{who}-{round}"),
                    "--cwd",
                    ".",
                ],
            );
            let own = if who == "a" { 60 + round } else { 70 + round };
            env.ok(
                dir,
                &["record", "spawn", &format!("issue-{own}"), "--cwd", "."],
            );
            all.extend(log_set(env, dir));
        }
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let handles: Vec<_> = [a.clone(), b.clone()]
            .into_iter()
            .map(|dir| {
                let mut cmd = env.cmd(&dir);
                cmd.arg("sync");
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    barrier.wait();
                    cmd.output().unwrap()
                })
            })
            .collect();
        for h in handles {
            let out = h.join().unwrap();
            if out.status.code() != Some(0) {
                failures.push(format!(
                    "round {round}: exit {:?}: {}",
                    out.status.code(),
                    stderr(&out)
                ));
            }
        }
    }
    (a, b, bare, all, failures)
}

#[test]
fn concurrent_syncs_lose_no_event() {
    let env = TestEnv::new();
    let (a, b, bare, all, failures) = concurrent_rounds(&env);
    // A sync that lost a race may (today) give up, but it must never drop anything: once
    // both have synced again in turn, both hold every event ever recorded.
    for f in &failures {
        assert!(f.contains("exit Some(1)"), "{f}");
    }
    for dir in [&a, &b, &a] {
        env.ok(dir, &["sync"]);
    }
    assert_eq!(all.len(), 16);
    assert_eq!(log_set(&env, &a), all);
    assert_eq!(log_set(&env, &b), all);
    let tip = env.git(&a, &["rev-parse", "refs/notes/recode"]);
    assert_eq!(env.git(&b, &["rev-parse", "refs/notes/recode"]), tip);
    assert_eq!(env.git(&bare, &["rev-parse", "refs/notes/recode"]), tip);
    // Plain git reads the shared task's merged ledger: eight attempts, one line each.
    assert_eq!(ledger(&env, &a, "50").lines().count(), 8);
}

#[test]
fn concurrent_syncs_all_succeed_by_retrying() {
    let env = TestEnv::new();
    let (a, b, _bare, all, failures) = concurrent_rounds(&env);
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(
        log_set(&env, &a)
            .union(&log_set(&env, &b))
            .cloned()
            .collect::<BTreeSet<_>>(),
        all
    );
}

/// Clone `a` whose next push loses a race, deterministically: its `receivepack` is a
/// wrapper that, the first time only, lets clone `b` sync (push) before the real
/// receive-pack advertises the remote's refs, so `a`'s lease is stale.
fn lose_next_push_race(env: &TestEnv, a: &Path, b: &Path) -> PathBuf {
    let wrapper = env.root().join("receive-pack-wrapper");
    let marker = env.root().join("raced");
    let log = env.root().join("race.log");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh
if [ ! -e '{marker}' ]; then
  : > '{marker}'
  (unset GIT_DIR GIT_WORK_TREE GIT_PREFIX GIT_INDEX_FILE; cd '{b}' && '{bin}' sync) >> '{log}' 2>&1
fi
exec git-receive-pack \"$@\"\n",
            marker = marker.display(),
            b = b.display(),
            bin = assert_cmd::cargo::cargo_bin("git-recode").display(),
            log = log.display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    env.git(
        a,
        &[
            "config",
            "remote.origin.receivepack",
            wrapper.to_str().unwrap(),
        ],
    );
    log
}

#[test]
fn a_lost_race_is_retried_and_loses_nothing() {
    let env = TestEnv::new();
    let bare = bare_remote(&env);
    let a = clone(&env, &bare, "a");
    let b = clone(&env, &bare, "b");
    env.ok(
        &a,
        &[
            "record",
            "spawn",
            "issue-1",
            "--session-id",
            "a-1",
            "--cwd",
            ".",
        ],
    );
    env.ok(&a, &["sync"]);
    env.ok(&b, &["sync"]);
    // Both record more; b's sync lands between a's fetch and a's push.
    env.ok(
        &a,
        &[
            "record",
            "spawn",
            "issue-2",
            "--session-id",
            "a-2",
            "--cwd",
            ".",
        ],
    );
    env.ok(
        &b,
        &[
            "record",
            "spawn",
            "issue-1",
            "--session-id",
            "b-1",
            "--cwd",
            ".",
        ],
    );
    env.ok(&b, &["record", "spawn", "issue-3", "--cwd", "."]);
    let union: BTreeSet<String> = log_set(&env, &a)
        .union(&log_set(&env, &b))
        .cloned()
        .collect();
    assert_eq!(union.len(), 4);
    let log = lose_next_push_race(&env, &a, &b);
    let out = env.output(&a, &["sync"]);
    // The competitor did win the race.
    assert!(std::fs::read_to_string(&log).unwrap().contains("pushed"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(log_set(&env, &a), union);
    assert_eq!(
        env.git(&bare, &["rev-parse", "refs/notes/recode"]),
        env.git(&a, &["rev-parse", "refs/notes/recode"])
    );
    env.ok(&b, &["sync"]);
    assert_eq!(log_set(&env, &b), union);
}

#[test]
fn a_sync_that_lost_a_race_loses_nothing_and_the_next_sync_converges() {
    let env = TestEnv::new();
    let bare = bare_remote(&env);
    let a = clone(&env, &bare, "a");
    let b = clone(&env, &bare, "b");
    env.ok(
        &a,
        &[
            "record",
            "spawn",
            "issue-1",
            "--session-id",
            "a-1",
            "--cwd",
            ".",
        ],
    );
    env.ok(&a, &["sync"]);
    env.ok(&b, &["sync"]);
    env.ok(
        &a,
        &[
            "record",
            "spawn",
            "issue-2",
            "--session-id",
            "a-2",
            "--cwd",
            ".",
        ],
    );
    env.ok(
        &b,
        &[
            "record",
            "spawn",
            "issue-1",
            "--session-id",
            "b-1",
            "--cwd",
            ".",
        ],
    );
    let union: BTreeSet<String> = log_set(&env, &a)
        .union(&log_set(&env, &b))
        .cloned()
        .collect();
    let a_before = log_set(&env, &a);
    let log = lose_next_push_race(&env, &a, &b);
    let out = env.output(&a, &["sync"]);
    assert!(std::fs::read_to_string(&log).unwrap().contains("pushed"));
    // Whether or not it retried, nothing of a's is lost and b's push stands.
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
    assert!(log_set(&env, &a).is_superset(&a_before));
    let winner = if out.status.success() { &a } else { &b };
    assert_eq!(
        env.git(&bare, &["rev-parse", "refs/notes/recode"]),
        env.git(winner, &["rev-parse", "refs/notes/recode"])
    );
    env.ok(&a, &["sync"]);
    env.ok(&b, &["sync"]);
    assert_eq!(log_set(&env, &a), union);
    assert_eq!(log_set(&env, &b), union);
}

#[test]
fn sync_to_a_missing_remote_is_an_error() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.ok(&repo, &["record", "spawn", "issue-1", "--cwd", "."]);
    let tip = env.git(&repo, &["rev-parse", "refs/notes/recode"]);
    for args in [
        &["sync", "nope"][..],
        &["sync"][..],
        &["sync", "nope", "--setup"][..],
    ] {
        let out = env.output(&repo, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "");
        let name = args
            .get(1)
            .filter(|a| !a.starts_with('-'))
            .unwrap_or(&"origin");
        assert!(
            stderr(&out).starts_with(&format!(
                "error: no remote named '{name}' (see `git remote -v`)\n"
            )),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    assert_eq!(env.git(&repo, &["rev-parse", "refs/notes/recode"]), tip);
    let remotes = isolated(&env, "git", &repo, &path_without_bin())
        .args(["config", "--get-regexp", "^remote\\."])
        .output()
        .unwrap();
    assert_eq!(stdout(&remotes), "", "sync wrote remote config");
}
