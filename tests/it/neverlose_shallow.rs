//! Shallow, partial (blobless) and sparse clones (SPEC 1.2 "Never lose work: more
//! states"): where the branch and its base have no merge base in the available history,
//! `ahead`/`behind` are null, the worker is never `empty` nor deleted and the reason says
//! the history is shallow; blobless clones and sparse checkouts keep status, recover and
//! the WIP commit working.

use std::path::{Path, PathBuf};

use crate::common::TestEnv;
use crate::neverlose_states::{json, status_of};

/// An origin with `main` at c1..c5; `issue-1` one commit on c2, `issue-2` at c3 with
/// nothing of its own. Returns the origin's path.
fn origin_with_history(env: &TestEnv) -> PathBuf {
    let root = env.root();
    env.git(&root, &["init", "-q", "--bare", "-b", "main", "o.git"]);
    env.git(&root, &["clone", "-q", "o.git", "src"]);
    let src = root.join("src");
    for i in 1..=5 {
        std::fs::write(src.join(format!("f{i}")), format!("{i}\n")).unwrap();
        env.git(&src, &["add", "."]);
        env.git(&src, &["commit", "-q", "-m", &format!("c{i}")]);
    }
    env.git(&src, &["branch", "issue-2", "HEAD~2"]);
    env.git(&src, &["switch", "-q", "-c", "issue-1", "HEAD~3"]);
    std::fs::write(src.join("work.txt"), "work\n").unwrap();
    env.git(&src, &["add", "."]);
    env.git(&src, &["commit", "-q", "-m", "work"]);
    env.git(
        &src,
        &["push", "-q", "origin", "main", "issue-1", "issue-2"],
    );
    env.git(
        &root.join("o.git"),
        &["config", "uploadpack.allowFilter", "true"],
    );
    root.join("o.git")
}

/// `git clone <args> file://<origin> <name>` under the test root.
fn clone(env: &TestEnv, origin: &Path, name: &str, args: &[&str]) -> PathBuf {
    let url = format!("file://{}", origin.display());
    let mut all = vec!["clone", "-q"];
    all.extend_from_slice(args);
    all.extend_from_slice(&[&url, name]);
    env.git(&env.root(), &all);
    env.root().join(name)
}

/// A dead worker on `branch` (spawned and exited 0) in a worktree `name`.
fn dead_worker(env: &TestEnv, repo: &Path, branch: &str, name: &str) -> PathBuf {
    let wt = env.root().join(name);
    env.git(
        repo,
        &["worktree", "add", "-q", wt.to_str().unwrap(), branch],
    );
    env.record(&wt, &["spawn", branch]);
    env.record(repo, &["exit", branch, "--rc", "0"]);
    wt
}

/// A depth-1 clone: neither worker's branch meets `main` in the available history. Both
/// have null ahead/behind, `needs-human` with the shallow reason, and survive `recover`
/// (issue-2 has nothing of its own: on the old code it looked 1 ahead).
#[test]
fn in_a_shallow_clone_without_a_merge_base_ahead_is_null_and_nothing_is_deleted() {
    let env = TestEnv::new();
    let origin = origin_with_history(&env);
    let repo = clone(&env, &origin, "sh", &["--depth", "1"]);
    env.git(
        &repo,
        &[
            "fetch",
            "-q",
            "--depth",
            "1",
            "origin",
            "issue-1:issue-1",
            "issue-2:issue-2",
        ],
    );
    let wt1 = dead_worker(&env, &repo, "issue-1", "wt1");
    let wt2 = dead_worker(&env, &repo, "issue-2", "wt2");
    for b in ["issue-1", "issue-2"] {
        let w = status_of(&env, &repo, b);
        assert_eq!(w["ahead"], serde_json::Value::Null, "{w:#}");
        assert_eq!(w["behind"], serde_json::Value::Null, "{w:#}");
        assert_eq!(w["state"], "needs-human", "{w:#}");
        assert_eq!(w["action"], "none", "{w:#}");
        assert_eq!(
            w["reason"],
            "the history is shallow: the branch and main have no merge base in it, so ahead/behind are unknown; never deleted (`git fetch --unshallow`)",
            "{w:#}"
        );
    }
    let table = env.run(&repo, &["status", "--offline"]);
    assert!(table.contains("+? -?"), "{table}");
    for _ in 0..2 {
        let (code, doc) = json(&env, &repo, &["recover", "--all"]);
        assert_eq!(code, 0, "{doc:#}");
    }
    assert!(wt1.join("work.txt").is_file() && wt2.join("f3").is_file());
    for b in ["issue-1", "issue-2"] {
        env.git(
            &repo,
            &["rev-parse", "--verify", &format!("refs/heads/{b}")],
        );
    }
    // Dirt is still WIP-committed (no count needed), and the branch kept.
    std::fs::write(wt1.join("more.txt"), "more\n").unwrap();
    let w = status_of(&env, &repo, "issue-1");
    assert_eq!(
        (w["state"].as_str(), w["action"].as_str()),
        (Some("half-done"), Some("wip-commit")),
        "{w:#}"
    );
    json(&env, &repo, &["recover", "issue-1"]);
    assert_eq!(env.git(&repo, &["show", "issue-1:more.txt"]), "more");
    // Once the history is complete the counts are exact again.
    env.git(&repo, &["fetch", "-q", "--unshallow", "origin"]);
    let w = status_of(&env, &repo, "issue-2");
    assert_eq!(
        (w["ahead"].as_u64(), w["behind"].as_u64()),
        (Some(0), Some(2)),
        "{w:#}"
    );
}

/// A shallow clone deep enough to hold the merge base counts exactly, as a full one.
#[test]
fn a_shallow_clone_that_holds_the_merge_base_counts_exactly() {
    let env = TestEnv::new();
    let origin = origin_with_history(&env);
    let repo = clone(&env, &origin, "sh", &["--depth", "5", "--no-single-branch"]);
    env.git(&repo, &["branch", "issue-1", "origin/issue-1"]);
    dead_worker(&env, &repo, "issue-1", "wt1");
    let w = status_of(&env, &repo, "issue-1");
    assert_eq!(
        (w["ahead"].as_u64(), w["behind"].as_u64()),
        (Some(1), Some(3)),
        "{w:#}"
    );
    assert_eq!(w["state"], "half-done", "{w:#}");
}

/// A blobless clone (`--filter=blob:none`): status reads the worker, recover WIP-commits
/// its dirt and pushes it, and an empty worker is deleted as in a full clone.
#[test]
fn a_blobless_partial_clone_keeps_status_recover_and_the_wip_commit_working() {
    let env = TestEnv::new();
    let origin = origin_with_history(&env);
    let repo = clone(&env, &origin, "partial", &["--filter=blob:none"]);
    assert_eq!(
        env.git(&repo, &["config", "remote.origin.promisor"]),
        "true"
    );
    // issue-6: issue-1's commit, on no remote yet (so its WIP commit is pushed).
    env.git(
        &repo,
        &["branch", "--no-track", "issue-6", "origin/issue-1"],
    );
    env.git(&repo, &["branch", "issue-3", "main"]);
    let wt6 = dead_worker(&env, &repo, "issue-6", "wt6");
    let wt3 = dead_worker(&env, &repo, "issue-3", "wt3");
    std::fs::write(wt6.join("work.txt"), "work, more\n").unwrap();
    std::fs::write(wt6.join("new.txt"), "new\n").unwrap();
    let w = status_of(&env, &repo, "issue-6");
    assert_eq!(
        (w["ahead"].as_u64(), w["behind"].as_u64()),
        (Some(1), Some(3)),
        "{w:#}"
    );
    assert_eq!(w["action"], "wip-commit", "{w:#}");
    assert_eq!(status_of(&env, &repo, "issue-3")["state"], "empty");
    let (code, doc) = json(&env, &repo, &["recover", "--all"]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(env.git(&repo, &["show", "issue-6:work.txt"]), "work, more");
    assert_eq!(env.git(&repo, &["show", "issue-6:new.txt"]), "new");
    assert_eq!(
        env.git(&origin, &["rev-parse", "refs/heads/issue-6"]),
        env.git(&repo, &["rev-parse", "issue-6"]),
        "{doc:#}"
    );
    assert!(!wt3.exists(), "{doc:#}");
}

/// A sparse checkout (cone `d1`): files outside the cone are not on disk and are never
/// read as deleted; the WIP commit takes the dirt inside the cone and keeps every file
/// outside it in the tree; status reads it clean afterwards.
#[test]
fn a_sparse_checkout_keeps_status_recover_and_the_wip_commit_working() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    for p in ["d1/a.txt", "d2/b.txt", "d2/c.txt"] {
        std::fs::create_dir_all(repo.join(p).parent().unwrap()).unwrap();
        std::fs::write(repo.join(p), format!("{p}\n")).unwrap();
    }
    env.git(&repo, &["add", "."]);
    env.git(&repo, &["commit", "-q", "-m", "dirs"]);
    env.git(&repo, &["branch", "issue-5"]);
    let wt = dead_worker(&env, &repo, "issue-5", "wt5");
    env.git(&wt, &["sparse-checkout", "set", "--cone", "d1"]);
    assert!(!wt.join("d2").exists());
    let w = status_of(&env, &repo, "issue-5");
    assert_eq!(w["state"], "empty", "{w:#}");
    std::fs::write(wt.join("d1/a.txt"), "changed\n").unwrap();
    std::fs::write(wt.join("d1/new.txt"), "new\n").unwrap();
    let w = status_of(&env, &repo, "issue-5");
    assert_eq!(w["dirty"]["unstaged"], 1, "{w:#}");
    assert_eq!(w["dirty"]["untracked"], 1, "{w:#}");
    assert_eq!(w["action"], "wip-commit", "{w:#}");
    let (code, doc) = json(&env, &repo, &["recover", "issue-5"]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(
        env.git(&repo, &["ls-tree", "-r", "--name-only", "issue-5"]),
        "README.md\nd1/a.txt\nd1/new.txt\nd2/b.txt\nd2/c.txt"
    );
    assert_eq!(env.git(&repo, &["show", "issue-5:d1/a.txt"]), "changed");
    assert_eq!(env.git(&repo, &["show", "issue-5:d2/b.txt"]), "d2/b.txt");
    assert_eq!(env.git(&wt, &["status", "--porcelain"]), "");
    assert!(!wt.join("d2").exists());
}

/// The base's history is the shallow one: `main` is cut at its tip while `issue-1` was
/// fetched whole (down to the root). No commit of the branch's walk is a shallow boundary,
/// yet the base reaches none of them: still no merge base, still null.
#[test]
fn a_base_cut_shallower_than_its_branch_still_has_no_merge_base() {
    let env = TestEnv::new();
    let origin = origin_with_history(&env);
    let repo = clone(&env, &origin, "sh", &["--depth", "1"]);
    env.git(
        &repo,
        &["fetch", "-q", "--depth", "10", "origin", "issue-1:issue-1"],
    );
    dead_worker(&env, &repo, "issue-1", "wt1");
    let w = status_of(&env, &repo, "issue-1");
    assert_eq!(
        (w["ahead"].as_u64(), w["behind"].as_u64()),
        (None, None),
        "{w:#}"
    );
    assert_eq!(w["state"], "needs-human", "{w:#}");
}
