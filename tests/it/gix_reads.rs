//! Worktree HEAD, in-progress operation and HEAD reflog read through gix: each
//! operation git can leave in a linked worktree is named as git's `wt_status_get_state`
//! names it, a rebase keeps the branch it started from, and a detached worktree is
//! attributed from its HEAD reflog.

use std::path::{Path, PathBuf};

use crate::common::TestEnv;

/// `git <args>` in `dir` that is expected to stop with a conflict (exit 1).
fn conflicted(env: &TestEnv, dir: &Path, args: &[&str]) {
    let out = env.git_cmd(dir).args(args).output().unwrap();
    assert!(
        !out.status.success(),
        "git {args:?} was expected to stop: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Commit `f` = `text` in `dir`; its id.
fn commit(env: &TestEnv, dir: &Path, text: &str, msg: &str) -> String {
    std::fs::write(dir.join("f"), text).unwrap();
    env.git(dir, &["add", "f"]);
    env.git(dir, &["commit", "-q", "-m", msg]);
    env.git(dir, &["rev-parse", "HEAD"])
}

/// `classify <branch> --json` as a document.
fn classify(env: &TestEnv, repo: &Path, branch: &str) -> serde_json::Value {
    let out = env.ok(repo, &["classify", branch, "--json"]);
    serde_json::from_str(&out).unwrap()
}

/// A repository whose `main` changed `f` to "main\n" after `other` changed it to
/// "other\n" (so picking, merging or rebasing across them conflicts).
fn diverged(env: &TestEnv) -> (PathBuf, String) {
    let repo = env.repo("r");
    commit(env, &repo, "base\n", "base");
    env.git(&repo, &["branch", "other"]);
    commit(env, &repo, "main\n", "main side");
    env.git(&repo, &["checkout", "-q", "other"]);
    let other = commit(env, &repo, "other\n", "other side");
    env.git(&repo, &["checkout", "-q", "main"]);
    (repo, other)
}

#[test]
fn every_operation_in_a_linked_worktree_is_named_as_git_names_it() {
    let env = TestEnv::new();
    let (repo, other) = diverged(&env);
    let add = |n: &str| env.add_worktree(&repo, &format!("issue-{n}-op"), &format!("wt{n}"));

    let merge = add("1");
    conflicted(&env, &merge, &["merge", "-q", "other"]);
    let pick = add("2");
    conflicted(&env, &pick, &["cherry-pick", &other]);
    let revert = add("3");
    // Reverting `main side` on a branch that changed f again conflicts.
    commit(&env, &revert, "again\n", "again");
    conflicted(&env, &revert, &["revert", "--no-edit", "HEAD~1"]);
    let bisect = add("4");
    env.git(&bisect, &["bisect", "start"]);
    let am = add("5");
    let patch = env.git(&repo, &["format-patch", "-1", "--stdout", &other]);
    let mbox = env.root().join("other.patch");
    std::fs::write(&mbox, format!("{patch}\n")).unwrap();
    conflicted(&env, &am, &["am", mbox.to_str().unwrap()]);
    let sequence = add("6");
    // Two picks, the first conflicting: a cherry-pick sequence (sequencer/todo).
    env.git(&repo, &["checkout", "-q", "other"]);
    let second = commit(&env, &repo, "other\nmore\n", "more");
    env.git(&repo, &["checkout", "-q", "main"]);
    conflicted(&env, &sequence, &["cherry-pick", &other, &second]);

    let ops: Vec<(String, serde_json::Value)> = (1..=6)
        .map(|n| {
            let b = format!("issue-{n}-op");
            let doc = classify(&env, &repo, &b);
            (b, doc["operation"].clone())
        })
        .collect();
    let want = [
        "merge",
        "cherry-pick",
        "revert",
        "bisect",
        "am",
        "cherry-pick",
    ];
    for ((b, got), want) in ops.iter().zip(want) {
        assert_eq!(got, want, "{b}");
    }
}

#[test]
fn a_rebase_keeps_its_branch_and_a_detached_worktree_is_named_by_its_reflog() {
    let env = TestEnv::new();
    let (repo, _) = diverged(&env);
    // A rebase stopped on a conflict: HEAD detached, the branch from `head-name`, the
    // head the branch's tip as the rebase found it.
    let wt = env.add_worktree(&repo, "issue-7-rebase", "wt7");
    let tip = commit(&env, &wt, "mine\n", "mine");
    conflicted(&env, &wt, &["rebase", "-q", "other"]);
    let doc = classify(&env, &repo, "issue-7-rebase");
    assert_eq!(doc["operation"], "rebase");
    assert_eq!(doc["head"], tip.as_str());
    assert_eq!(doc["worktree"], wt.to_str().unwrap());

    // A worktree detached from a worker branch by `git checkout --detach`: its HEAD
    // reflog's `checkout: moving from issue-8-left to …` names the branch.
    let left = env.add_worktree(&repo, "issue-8-left", "wt8");
    let head = commit(&env, &left, "left\n", "left");
    env.git(&left, &["checkout", "-q", "--detach"]);
    env.git(&repo, &["branch", "-q", "-f", "issue-8-left", "main"]);
    let doc = classify(&env, &repo, "issue-8-left");
    assert_eq!(doc["worktree"], left.to_str().unwrap(), "{doc:#}");
    assert_eq!(
        env.git(&left, &["rev-parse", "HEAD"]),
        head,
        "the detached HEAD is kept"
    );
}

#[test]
fn a_core_hooks_path_under_home_is_interpolated_as_git_does() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.git(&repo, &["config", "core.hooksPath", "~/hooks"]);
    insta::assert_snapshot!(env.run(&repo, &["hook", "status"]), @"
    not installed: core.hooksPath ~/hooks does not exist in this worktree (<root>/home/hooks): git runs no hooks here, so milestones are lost
    --- stderr ---
    [exit status: 0]
    ");
}
