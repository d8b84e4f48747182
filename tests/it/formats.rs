//! Every repository git makes: reftable refs (`git init --ref-format=reftable`, git 2.45+),
//! SHA-256 objects (`--object-format=sha256`) and both, read and written as the default
//! files/SHA-1 one: status, the ledger, recover (a branch delete and a WIP commit, nothing
//! lost), resume, the hook, sync, linked worktrees, and the compare-and-swap under races.
//! Each test makes its repositories in each format itself (`TestEnv::in_format`), whatever
//! `RECODE_TEST_FORMAT` says; that variable runs the rest of the suite in one format.

use crate::common::{BEFORE_LATER, LATER, TestEnv};
use crate::ledgerrace::race;
use crate::recover::worker;
use std::path::Path;

/// The formats beside the default files/SHA-1 one that this git makes: SHA-256 (git
/// 2.29), and the reftable ones from git 2.45 (an older git skips them, saying so).
fn formats() -> Vec<&'static str> {
    let tmp = tempfile::tempdir().unwrap();
    let reftable = std::process::Command::new("git")
        .args(["init", "-q", "--ref-format=reftable"])
        .arg(tmp.path())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .is_ok_and(|o| o.status.success());
    if !reftable {
        eprintln!("this git makes no reftable repository (git 2.45 or newer does): skipped");
    }
    ["reftable", "sha256", "reftable-sha256"]
        .into_iter()
        .filter(|f| reftable || !f.starts_with("reftable"))
        .collect()
}

/// [`formats`] with reftable refs.
fn reftable_formats() -> Vec<&'static str> {
    formats()
        .into_iter()
        .filter(|f| f.starts_with("reftable"))
        .collect()
}

/// The hex digits of an object id in `format`.
fn hex_len(format: &str) -> usize {
    if format.ends_with("sha256") { 64 } else { 40 }
}

/// `status --json` at [`LATER`], exit 0.
fn status(env: &TestEnv, dir: &Path) -> serde_json::Value {
    let (code, doc, stderr) = env.json_later(dir, &["status"]);
    assert_eq!(code, 0, "{}: {stderr}", env.format);
    doc
}

/// The events of `branch`'s task, from `log <branch> --json`.
fn log(env: &TestEnv, dir: &Path, branch: &str) -> Vec<serde_json::Value> {
    env.ok(dir, &["log", branch, "--json"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A commit of one new file `name` in `dir`, with `message`.
fn commit(env: &TestEnv, dir: &Path, name: &str, message: &str) -> String {
    std::fs::write(dir.join(name), format!("{name}\n")).unwrap();
    env.git(dir, &["add", name]);
    env.git(dir, &["commit", "-q", "-m", message]);
    env.git(dir, &["rev-parse", "HEAD"])
}

#[test]
fn the_fixtures_are_made_in_the_format_they_name() {
    for format in formats() {
        let env = TestEnv::in_format(format);
        let (repo, origin) = env.repo_with_origin();
        let wt = env.add_worktree(&repo, "issue-1", "wt1");
        let clone = env.root().join("clone");
        env.git(
            &env.root(),
            &[
                "clone",
                "-q",
                origin.to_str().unwrap(),
                clone.to_str().unwrap(),
            ],
        );
        let refs = if format.starts_with("reftable") {
            "reftable"
        } else {
            "files"
        };
        let objects = if format.ends_with("sha256") {
            "sha256"
        } else {
            "sha1"
        };
        for dir in [&repo, &origin, &wt, &clone] {
            assert_eq!(
                env.git(
                    dir,
                    &["rev-parse", "--show-ref-format", "--show-object-format"]
                ),
                format!("{refs}\n{objects}"),
                "{format}: {}",
                dir.display()
            );
        }
    }
}

#[test]
fn status_and_the_ledger_read_every_format_with_ids_of_its_length() {
    for format in formats() {
        let env = TestEnv::in_format(format);
        let (repo, _) = env.repo_with_origin();
        let wt = env.add_worktree(&repo, "issue-1", "wt1");
        let head = commit(&env, &wt, "a.rs", "step one");
        assert_eq!(head.len(), hex_len(format));
        env.record(&wt, &["spawn", "issue-1", "--cwd", wt.to_str().unwrap()]);
        env.record(&wt, &["exit", "issue-1", "--rc", "1"]);
        let st = status(&env, &repo);
        let w = worker(&st, "issue-1");
        assert_eq!(
            (
                w["head"].as_str(),
                w["ahead"].as_u64(),
                w["state"].as_str(),
                w["action"].as_str()
            ),
            (
                Some(head.as_str()),
                Some(1),
                Some("half-done"),
                Some("resume")
            ),
            "{format}: {w:#}"
        );
        assert_eq!(w["worktree"].as_str(), wt.to_str(), "{format}");
        // The ledger is the note on the anchor `git hash-object` names in this format.
        let anchor = env.anchor(&repo, "1");
        assert_eq!(anchor.len(), hex_len(format));
        let note = env.git(&repo, &["notes", "--ref=recode", "show", &anchor]);
        let kinds: Vec<String> = note
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["kind"].to_string())
            .collect();
        assert_eq!(kinds, ["\"spawn\"", "\"exit\""], "{format}");
        // `classify --json` and `log --json` carry the same full ids.
        let (code, doc, _) = env.json_later(&repo, &["classify", "issue-1"]);
        assert_eq!(
            (code, doc["head"].as_str()),
            (0, Some(head.as_str())),
            "{format}"
        );
        let anchors = env.git(&repo, &["ls-tree", "--name-only", "refs/recode/anchors"]);
        assert_eq!(anchors, anchor, "{format}");
    }
}

#[test]
fn recover_deletes_a_branch_and_wip_commits_losing_nothing_in_every_format() {
    for format in formats() {
        let env = TestEnv::in_format(format);
        let (repo, origin) = env.repo_with_origin();
        let empty = env.add_worktree(&repo, "issue-1-empty", "wt1");
        let dirty = env.add_worktree(&repo, "issue-2-dirty", "wt2");
        std::fs::write(dirty.join("half.rs"), "fn half() {}\n").unwrap();
        std::fs::write(dirty.join("README.md"), "changed\n").unwrap();
        for (wt, branch) in [(&empty, "issue-1-empty"), (&dirty, "issue-2-dirty")] {
            env.record(wt, &["spawn", branch, "--cwd", wt.to_str().unwrap()]);
            env.record(wt, &["exit", branch, "--rc", "1"]);
        }
        let before = env.work(&repo);
        let (code, doc, stderr) = env.json_later(&repo, &["recover", "--all"]);
        assert_eq!(code, 0, "{format}: {stderr}");
        let results: Vec<(String, String, String)> = doc["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap().to_string();
                (s("branch"), s("action"), s("result"))
            })
            .collect();
        let row = |b: &str, a: &str| (b.to_string(), a.to_string(), "done".to_string());
        assert_eq!(
            results,
            [
                row("issue-1-empty", "delete"),
                row("issue-2-dirty", "wip-commit")
            ],
            "{format}: {doc:#}"
        );
        env.assert_nothing_lost(&repo, &before);
        assert!(!empty.exists(), "{format}");
        let branches = env.git(
            &repo,
            &["for-each-ref", "--format=%(refname)", "refs/heads"],
        );
        assert_eq!(
            branches, "refs/heads/issue-2-dirty\nrefs/heads/main",
            "{format}"
        );
        // The WIP commit holds both files, is on the remote, and is ledgered by its id.
        let tip = env.git(&repo, &["rev-parse", "issue-2-dirty"]);
        assert_eq!(tip.len(), hex_len(format));
        assert_eq!(env.git(&dirty, &["show", "HEAD:half.rs"]), "fn half() {}");
        assert_eq!(env.git(&origin, &["rev-parse", "issue-2-dirty"]), tip);
        assert_eq!(env.git(&dirty, &["status", "--porcelain"]), "", "{format}");
        let wip = log(&env, &repo, "issue-2-dirty");
        let wip = wip.iter().find(|e| e["kind"] == "wip").unwrap();
        assert_eq!(wip["head"].as_str(), Some(tip.as_str()), "{format}");
        // The delete ledgered the old tip in full, to undo from.
        let deleted = log(&env, &repo, "issue-1-empty");
        let deleted = deleted.iter().find(|e| e["kind"] == "deleted").unwrap();
        assert_eq!(
            deleted["head"].as_str().map(str::len),
            Some(hex_len(format))
        );
    }
}

#[test]
fn the_hook_resume_and_sync_round_trip_in_every_format() {
    for format in formats() {
        let env = TestEnv::in_format(format);
        let (repo, origin) = env.repo_with_origin();
        env.ok(&repo, &["hook", "install"]);
        let wt = env.add_worktree(&repo, "issue-3", "wt3");
        env.record(&wt, &["spawn", "issue-3", "--cwd", wt.to_str().unwrap()]);
        let head = commit(&env, &wt, "b.rs", "step\n\nRecode-Phase: implemented");
        env.record(&wt, &["exit", "issue-3", "--rc", "1"]);
        // The hook's milestone, folded into the ledger by the next writer, with its commit.
        let events = log(&env, &repo, "issue-3");
        let milestone = events.iter().find(|e| e["kind"] == "milestone").unwrap();
        assert_eq!(
            (milestone["phase"].as_str(), milestone["head"].as_str()),
            (Some("implemented"), Some(head.as_str())),
            "{format}: {events:#?}"
        );
        let out = env
            .cmd(&repo)
            .env("RECODE_NOW", LATER)
            .args(["resume", "issue-3", "--json", "--dry-run"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let ids: Vec<&str> = doc["facts"]["commits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, [head.as_str()], "{format}: {doc:#}");
        // A second clone records its own attempt; two syncs give both the union.
        let other = env.root().join("other");
        env.git(
            &env.root(),
            &[
                "clone",
                "-q",
                "-b",
                "main",
                origin.to_str().unwrap(),
                other.to_str().unwrap(),
            ],
        );
        env.git(&other, &["branch", "issue-4"]);
        env.record(&other, &["spawn", "issue-4", "--cwd", "."]);
        for dir in [&repo, &other, &repo] {
            env.ok(dir, &["sync"]);
        }
        let anchor = env.anchor(&repo, "4");
        let ours = env.git(&repo, &["notes", "--ref=recode", "show", &anchor]);
        let theirs = env.git(&other, &["notes", "--ref=recode", "show", &anchor]);
        assert_eq!(ours, theirs, "{format}");
        assert_eq!(ours.lines().count(), 1, "{format}");
        let mine = env.anchor(&repo, "3");
        assert_eq!(
            env.git(&other, &["notes", "--ref=recode", "show", &mine]),
            env.git(&repo, &["notes", "--ref=recode", "show", &mine]),
            "{format}"
        );
    }
}

#[test]
fn writers_racing_on_a_reftable_lose_nothing_and_number_attempts_once() {
    for format in reftable_formats() {
        let env = TestEnv::in_format(format);
        let repo = env.repo("r");
        env.git(&repo, &["branch", "issue-7"]);
        // Eight writers at once on one task's ledger: every lost compare-and-swap (git's
        // `update-ref` refusing an old value, or the stack's lock held) is retried.
        let spawn: &[&str] = &["record", "spawn", "issue-7", "--agent", "claude"];
        let codes = race(&env, &repo, &[spawn; 8]);
        assert_eq!(codes, vec![Some(0); 8], "{format}");
        let mut attempts: Vec<u64> = log(&env, &repo, "issue-7")
            .iter()
            .filter(|e| e["kind"] == "spawn")
            .map(|e| e["attempt"].as_u64().unwrap())
            .collect();
        attempts.sort();
        assert_eq!(attempts, (1..=8).collect::<Vec<u64>>(), "{format}");
    }
}

#[test]
fn a_writer_waits_out_a_held_reftable_lock_and_names_a_stuck_one() {
    if reftable_formats().is_empty() {
        return;
    }
    let env = TestEnv::in_format("reftable");
    let repo = env.repo("r");
    env.git(&repo, &["branch", "issue-8"]);
    let lock = repo.join(".git/reftable/tables.list.lock");
    // Held by another writer for a moment: the append retries until it is gone.
    std::fs::write(&lock, "").unwrap();
    let mut child = env
        .cmd(&repo)
        .env("RECODE_NOW", BEFORE_LATER)
        .args(["record", "spawn", "issue-8"])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(400));
    std::fs::remove_file(&lock).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(log(&env, &repo, "issue-8").len(), 1);
    // Left by a killed writer a minute ago: the append fails at once, naming it.
    std::fs::write(&lock, "").unwrap();
    env.git(&repo, &["config", "recode.staleLockAfter", "1h"]);
    let minute_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&lock)
        .unwrap()
        .set_modified(minute_ago)
        .unwrap();
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", BEFORE_LATER)
        .args(["record", "spawn", "issue-8"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("{}", lock.display())), "{stderr}");
    assert!(
        lock.exists(),
        "a lock younger than recode.staleLockAfter stays"
    );
    assert_eq!(log(&env, &repo, "issue-8").len(), 1, "nothing half written");
}

#[test]
fn linked_worktrees_of_a_reftable_read_their_own_heads() {
    for format in reftable_formats() {
        let env = TestEnv::in_format(format);
        let repo = env.repo("r");
        // On its branch, with a commit; detached after a commit of its own (it belongs to
        // the branch its HEAD reflog says it left); on a branch deleted under it.
        let on = env.add_worktree(&repo, "issue-1", "wt1");
        let on_head = commit(&env, &on, "a.rs", "one");
        let left = env.add_worktree(&repo, "issue-2", "wt2");
        commit(&env, &left, "b.rs", "two");
        env.git(&left, &["checkout", "-q", "--detach"]);
        let detached_head = commit(&env, &left, "c.rs", "three");
        let gone = env.add_worktree(&repo, "issue-3", "wt3");
        env.record(
            &gone,
            &["spawn", "issue-3", "--cwd", gone.to_str().unwrap()],
        );
        let gone_head = commit(&env, &gone, "d.rs", "four");
        env.git(&repo, &["update-ref", "-d", "refs/heads/issue-3"]);
        let st = status(&env, &repo);
        let w1 = worker(&st, "issue-1");
        assert_eq!(
            (w1["head"].as_str(), w1["worktree"].as_str()),
            (Some(on_head.as_str()), on.to_str()),
            "{format}"
        );
        let w2 = worker(&st, "issue-2");
        assert_eq!(w2["worktree"].as_str(), left.to_str(), "{format}: {w2:#}");
        assert_eq!(w2["ahead"].as_u64(), Some(1), "{format}: {w2:#}");
        // The unborn worktree: its branch is gone, and git cannot walk the HEAD reflog of
        // a reftable worktree whose HEAD names no branch (files: recover restores the
        // branch from it), so nothing restores it: it waits for a human, and its commit
        // stays in the object store, reachable from that reflog.
        let w3 = worker(&st, "issue-3");
        assert_eq!(
            (w3["state"].as_str(), w3["action"].as_str()),
            (Some("needs-human"), Some("escalate")),
            "{format}: {w3:#}"
        );
        assert_eq!(env.git(&repo, &["cat-file", "-t", &gone_head]), "commit");
        let before = env.work(&repo);
        let (code, _, stderr) = env.json_later(&repo, &["recover", "--all"]);
        assert_eq!(code, 0, "{format}: {stderr}");
        env.assert_nothing_lost(&repo, &before);
        assert!(left.is_dir() && on.is_dir() && gone.is_dir(), "{format}");
        assert_eq!(env.git(&left, &["rev-parse", "HEAD"]), detached_head);
    }
}
