//! The post-commit milestone hook (install/uninstall/status round trips, chaining,
//! core.hooksPath, linked worktrees, husky; milestones from real commits, amends and
//! rebases). Hooks run the real binary: git is run with the test binary's directory
//! first on PATH.
#![allow(unused_imports)]

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{NOW, TestEnv};
use crate::hookenv::*;

// ---------------------------------------------------------------------------------------
// hook install / uninstall / status
// ---------------------------------------------------------------------------------------

#[test]
fn install_into_an_empty_hooks_dir_and_back() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let hooks = repo.join(".git/hooks");
    for n in names(&hooks) {
        std::fs::remove_file(hooks.join(n)).unwrap();
    }
    let hook = hooks.join("post-commit");
    let p = hook.display().to_string();

    assert_eq!(
        env.run(&repo, &["hook", "status"]),
        "not installed: <root>/r/.git/hooks/post-commit\n--- stderr ---\n[exit status: 0]\n"
    );
    assert_eq!(
        env.ok(&repo, &["hook", "install"]),
        format!("installed {p}\n")
    );
    assert_eq!(names(&hooks), vec!["post-commit"]);
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), PLAIN_SCRIPT);
    assert_eq!(git_recode::hook::script(false), PLAIN_SCRIPT);
    assert_eq!(snapshot(&hook).1, 0o755);
    assert_eq!(
        env.ok(&repo, &["hook", "status"]),
        format!("installed: {p}\n")
    );

    // Idempotent: a second install (with or without --chain) changes nothing.
    assert_eq!(
        env.ok(&repo, &["hook", "install"]),
        format!("already installed in {p}\n")
    );
    assert_eq!(
        env.ok(&repo, &["hook", "install", "--chain"]),
        format!("already installed in {p}\n")
    );
    assert_eq!(names(&hooks), vec!["post-commit"]);
    assert_eq!(snapshot(&hook), (PLAIN_SCRIPT.as_bytes().to_vec(), 0o755));

    assert_eq!(
        env.ok(&repo, &["hook", "uninstall"]),
        format!("removed {p}\n")
    );
    assert!(names(&hooks).is_empty(), "left behind: {:?}", names(&hooks));
    assert_eq!(
        env.ok(&repo, &["hook", "status"]),
        format!("not installed: {p}\n")
    );
    assert_eq!(
        env.ok(&repo, &["hook", "uninstall"]),
        format!("not installed in {}\n", hooks.display())
    );
    assert!(names(&hooks).is_empty());
}

#[test]
fn install_creates_a_missing_hooks_dir_and_leaves_the_samples_alone() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let hooks = repo.join(".git/hooks");
    let before = names(&hooks);
    env.ok(&repo, &["hook", "install"]);
    let mut with = before.clone();
    with.push("post-commit".into());
    with.sort();
    assert_eq!(names(&hooks), with);
    env.ok(&repo, &["hook", "uninstall"]);
    assert_eq!(names(&hooks), before);

    std::fs::remove_dir_all(&hooks).unwrap();
    env.ok(&repo, &["hook", "install"]);
    assert_eq!(names(&hooks), vec!["post-commit"]);
}

/// A foreign hook that logs its arguments and whether the ledger existed when it ran, and
/// exits 7.
fn foreign_hook(log: &Path) -> String {
    format!(
        "#!/bin/sh\necho \"foreign $# $*\" >> '{0}'\nif git rev-parse -q --verify refs/notes/recode >/dev/null; then echo ledger-before >> '{0}'; else echo no-ledger-yet >> '{0}'; fi\nexit 7\n",
        log.display()
    )
}

#[test]
fn foreign_hook_is_refused_then_chained_then_restored_byte_identical() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    hgit(&env, &repo, &["checkout", "-q", "-b", "issue-4"]);
    let hooks = repo.join(".git/hooks");
    let hook = hooks.join("post-commit");
    let kept = hooks.join("post-commit.pre-recode");
    let log = env.root().join("foreign.log");
    std::fs::write(&hook, foreign_hook(&log)).unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o750)).unwrap();
    let original = snapshot(&hook);
    let samples = names(&hooks);

    // Without --chain: refused, with a hint, nothing touched.
    assert_eq!(
        env.run(&repo, &["hook", "install"]),
        "--- stderr ---\n\
         error: <root>/r/.git/hooks/post-commit exists and git-recode did not write it\n\
         hint: `git recode hook install --chain` keeps it and runs it first\n\
         [exit status: 3]\n"
    );
    assert_eq!(snapshot(&hook), original);
    assert_eq!(names(&hooks), samples);
    assert_eq!(
        env.run(&repo, &["hook", "status"]),
        "not installed (a post-commit hook git-recode did not write is there): <root>/r/.git/hooks/post-commit\n--- stderr ---\n[exit status: 0]\n"
    );
    // Uninstall leaves a hook it did not write alone.
    env.ok(&repo, &["hook", "uninstall"]);
    assert_eq!(snapshot(&hook), original);

    // --chain keeps it, byte for byte and mode, as post-commit.pre-recode.
    assert_eq!(
        env.run(&repo, &["hook", "install", "--chain"]),
        "installed <root>/r/.git/hooks/post-commit (runs the previous hook, kept as <root>/r/.git/hooks/post-commit.pre-recode, first)\n--- stderr ---\n[exit status: 0]\n"
    );
    assert_eq!(snapshot(&kept), original);
    assert_eq!(
        snapshot(&hook),
        (git_recode::hook::script(true).into_bytes(), 0o755)
    );
    assert_eq!(
        env.run(&repo, &["hook", "status"]),
        "installed (chained after the previous hook): <root>/r/.git/hooks/post-commit\n--- stderr ---\n[exit status: 0]\n"
    );
    // Idempotent.
    let chained = snapshot(&hook);
    for args in [
        &["hook", "install", "--chain"][..],
        &["hook", "install"][..],
    ] {
        assert_eq!(
            env.ok(&repo, args),
            format!("already installed in {}\n", hook.display())
        );
    }
    assert_eq!(snapshot(&hook), chained);
    assert_eq!(snapshot(&kept), original);

    // A commit runs the foreign hook first (no ledger yet when it ran), then ledgers the
    // milestone; the foreign hook's failure does not fail the commit.
    let head = commit(
        &env,
        &repo,
        "a.txt",
        "a\n",
        "do a\n\nRecode-Phase: scoped\n",
        &[],
    );
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "foreign 0 \nno-ledger-yet\n"
    );
    assert_eq!(
        ledger(&env, &repo, "4"),
        milestone(1, "4", "issue-4", &head, "scoped", None)
    );

    // Run directly: arguments pass through, and its exit status is the hook's.
    let out = isolated(&env, &hook, &repo, &path_with_bin())
        .args(["one", "two words"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7), "stderr: {}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "foreign 0 \nno-ledger-yet\nforeign 2 one two words\nledger-before\n"
    );
    // The same (head, phase) again: no second event.
    assert_eq!(
        ledger(&env, &repo, "4"),
        milestone(1, "4", "issue-4", &head, "scoped", None)
    );
    // A foreign hook that succeeds: the hook exits 0.
    std::fs::write(&kept, "#!/bin/sh\nexit 0\n").unwrap();
    let out = isolated(&env, &hook, &repo, &path_with_bin())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    std::fs::write(&kept, &original.0).unwrap();
    std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(original.1)).unwrap();

    // Uninstall restores it exactly, mode included; nothing else is left.
    assert_eq!(
        env.ok(&repo, &["hook", "uninstall"]),
        format!("restored the previous hook {}\n", hook.display())
    );
    assert_eq!(snapshot(&hook), original);
    assert!(!kept.exists());
    assert_eq!(names(&hooks), samples);
    assert_eq!(
        env.ok(&repo, &["hook", "status"]),
        format!(
            "not installed (a post-commit hook git-recode did not write is there): {}\n",
            hook.display()
        )
    );
}

#[test]
fn chain_refuses_to_overwrite_a_leftover_pre_recode_hook() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let hooks = repo.join(".git/hooks");
    std::fs::write(hooks.join("post-commit"), "#!/bin/sh\necho mine\n").unwrap();
    std::fs::write(
        hooks.join("post-commit.pre-recode"),
        "#!/bin/sh\necho older\n",
    )
    .unwrap();
    let a = snapshot(&hooks.join("post-commit"));
    let b = snapshot(&hooks.join("post-commit.pre-recode"));
    let out = env.output(&repo, &["hook", "install", "--chain"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).starts_with(&format!(
            "error: {} already exists: not overwriting it\n",
            hooks.join("post-commit.pre-recode").display()
        )),
        "{}",
        stderr(&out)
    );
    assert_eq!(snapshot(&hooks.join("post-commit")), a);
    assert_eq!(snapshot(&hooks.join("post-commit.pre-recode")), b);
}

#[test]
fn chain_refusal_hint_is_about_the_hook() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let hooks = repo.join(".git/hooks");
    std::fs::write(hooks.join("post-commit"), "#!/bin/sh\necho mine\n").unwrap();
    std::fs::write(
        hooks.join("post-commit.pre-recode"),
        "#!/bin/sh\necho older\n",
    )
    .unwrap();
    let out = env.output(&repo, &["hook", "install", "--chain"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(!stderr(&out).contains("record clear"), "{}", stderr(&out));
}

#[test]
fn relative_core_hooks_path_is_honoured_from_a_subdirectory() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    hgit(&env, &repo, &["checkout", "-q", "-b", "issue-6"]);
    env.git(&repo, &["config", "core.hooksPath", "githooks"]);
    std::fs::create_dir_all(repo.join("src/deep")).unwrap();
    let sub = repo.join("src/deep");
    let hook = repo.join("githooks/post-commit");
    assert_eq!(
        env.ok(&sub, &["hook", "status"]),
        format!("not installed: {}\n", hook.display())
    );
    assert_eq!(
        env.ok(&sub, &["hook", "install"]),
        format!("installed {}\n", hook.display())
    );
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), PLAIN_SCRIPT);
    assert!(!repo.join(".git/hooks/post-commit").exists());
    assert!(!sub.join("githooks").exists());
    assert_eq!(
        env.ok(&repo, &["hook", "status"]),
        format!("installed: {}\n", hook.display())
    );
    // git runs it from there.
    let head = commit(
        &env,
        &repo,
        "f",
        "x\n",
        "f\n\nRecode-Phase: implemented\n",
        &[],
    );
    assert_eq!(
        ledger(&env, &repo, "6"),
        milestone(1, "6", "issue-6", &head, "implemented", None)
    );
    assert_eq!(
        env.ok(&sub, &["hook", "uninstall"]),
        format!("removed {}\n", hook.display())
    );
    assert!(!hook.exists());
}

#[test]
fn absolute_core_hooks_path_is_honoured_and_created() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    hgit(&env, &repo, &["checkout", "-q", "-b", "issue-9"]);
    let shared = env.root().join("shared/hooks");
    env.git(
        &repo,
        &["config", "core.hooksPath", shared.to_str().unwrap()],
    );
    let hook = shared.join("post-commit");
    assert_eq!(
        env.ok(&repo, &["hook", "install"]),
        format!("installed {}\n", hook.display())
    );
    assert_eq!(names(&shared), vec!["post-commit"]);
    assert!(!repo.join(".git/hooks/post-commit").exists());
    let head = commit(&env, &repo, "f", "x\n", "f\n\nRecode-Phase: scoped\n", &[]);
    assert_eq!(
        ledger(&env, &repo, "9"),
        milestone(1, "9", "issue-9", &head, "scoped", None)
    );
    env.ok(&repo, &["hook", "uninstall"]);
    assert!(names(&shared).is_empty());
}

#[test]
fn from_a_linked_worktree_the_hook_goes_to_the_common_hooks_dir() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = env.root().join("wt");
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "feat/issue-11-x",
            wt.to_str().unwrap(),
        ],
    );
    let hook = repo.join(".git/hooks/post-commit");
    assert_eq!(
        env.ok(&wt, &["hook", "install"]),
        format!("installed {}\n", hook.display())
    );
    assert_eq!(
        env.ok(&wt, &["hook", "status"]),
        format!("installed: {}\n", hook.display())
    );
    assert_eq!(
        env.ok(&repo, &["hook", "status"]),
        format!("installed: {}\n", hook.display())
    );
    assert!(!repo.join(".git/worktrees/wt/hooks").exists());

    let head = commit(
        &env,
        &wt,
        "w",
        "w\n",
        "w\n\nRecode-Phase: implemented\n",
        &[("RECODE_SESSION_ID", "s-wt")],
    );
    assert_eq!(head, env.git(&wt, &["rev-parse", "HEAD"]));
    assert_eq!(
        ledger(&env, &repo, "11"),
        milestone(
            1,
            "11",
            "feat/issue-11-x",
            &head,
            "implemented",
            Some("s-wt")
        )
    );

    // A rebase in the linked worktree records the branch being rebased (its rebase state
    // lives in the worktree's own git dir).
    commit(&env, &repo, "m", "m\n", "main moves\n", &[]);
    hgit(&env, &wt, &["rebase", "-q", "main"]);
    let rebased = env.git(&wt, &["rev-parse", "HEAD"]);
    assert_ne!(rebased, head);
    assert_eq!(
        ledger(&env, &repo, "11"),
        [
            milestone(
                1,
                "11",
                "feat/issue-11-x",
                &head,
                "implemented",
                Some("s-wt")
            ),
            milestone(2, "11", "feat/issue-11-x", &rebased, "implemented", None),
        ]
        .join("\n")
    );
    assert_eq!(
        env.ok(&wt, &["hook", "uninstall"]),
        format!("removed {}\n", hook.display())
    );
}

#[test]
fn husky_hooks_path_is_refused_with_the_line_to_add() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    std::fs::create_dir_all(repo.join(".husky/_")).unwrap();
    std::fs::write(repo.join(".husky/_/h"), "#!/usr/bin/env sh\n").unwrap();
    env.git(&repo, &["config", "core.hooksPath", ".husky/_"]);
    assert_eq!(
        env.run(&repo, &["hook", "install"]),
        "git-recode hook post-commit || true\n\
         --- stderr ---\n\
         error: the hooks directory <root>/r/.husky/_ belongs to husky, which regenerates it\n\
         hint: add this line to husky's own post-commit hook (e.g. .husky/post-commit):\n\
         [exit status: 3]\n"
    );
    assert_eq!(names(&repo.join(".husky/_")), vec!["h"]);
    assert_eq!(names(&repo.join(".husky")), vec!["_"]);
    // --chain does not get around it either.
    let out = env.output(&repo, &["hook", "install", "--chain"]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(stdout(&out), "git-recode hook post-commit || true\n");
    assert_eq!(names(&repo.join(".husky/_")), vec!["h"]);
}

// ---------------------------------------------------------------------------------------
// post-commit
// ---------------------------------------------------------------------------------------

/// A repository on branch `branch` with the hook installed.
fn hooked(env: &TestEnv, branch: &str) -> PathBuf {
    let repo = env.repo("r");
    hgit(env, &repo, &["checkout", "-q", "-b", branch]);
    env.ok(&repo, &["hook", "install"]);
    repo
}

#[test]
fn a_trailer_in_the_last_paragraph_ledgers_one_milestone() {
    let env = TestEnv::new();
    let repo = hooked(&env, "feat/issue-21-thing");
    let head = commit(
        &env,
        &repo,
        "a",
        "a\n",
        "implement the thing\n\nSome prose about it.\n\nSigned-off-by: A <a@example.invalid>\nRecode-Phase: implemented\n",
        &[("RECODE_SESSION_ID", "sess-42")],
    );
    assert_eq!(head, env.git(&repo, &["rev-parse", "HEAD"]));
    let line = milestone(
        1,
        "21",
        "feat/issue-21-thing",
        &head,
        "implemented",
        Some("sess-42"),
    );
    assert_eq!(ledger(&env, &repo, "21"), line);
    assert_eq!(env.ok(&repo, &["log", "--json"]), format!("{line}\n"));

    // The worker's phase is the milestone's.
    let status = env.ok(&repo, &["status", "--json", "--offline"]);
    let v: serde_json::Value = serde_json::from_str(&status).unwrap();
    let w = &v["workers"][0];
    assert_eq!(w["task"], "21");
    assert_eq!(w["phase"], "implemented");
}

#[test]
fn ordinary_commits_and_misplaced_trailers_ledger_nothing() {
    let env = TestEnv::new();
    let repo = hooked(&env, "issue-22");
    commit(&env, &repo, "a", "a\n", "an ordinary commit\n", &[]);
    commit(
        &env,
        &repo,
        "b",
        "b\n",
        "with a body\n\nNo trailers here.\n",
        &[],
    );
    // A trailer followed by prose is not in the last paragraph.
    commit(
        &env,
        &repo,
        "c",
        "c\n",
        "c\n\nRecode-Phase: implemented\n\nmore prose afterwards\n",
        &[],
    );
    // A subject alone is not a trailer block.
    commit(&env, &repo, "d", "d\n", "Recode-Phase: implemented\n", &[]);
    // Prose mixed into the last paragraph makes it not a trailer block.
    commit(
        &env,
        &repo,
        "e",
        "e\n",
        "e\n\nsee Recode-Phase: scoped\nfor details\n",
        &[],
    );
    assert_eq!(ledger(&env, &repo, "22"), "");
    assert_eq!(env.ok(&repo, &["log", "--json"]), "");
    assert_eq!(
        env.run(&repo, &["hook", "post-commit"]),
        "--- stderr ---\n[exit status: 0]\n"
    );
    let out = isolated(&env, "git", &repo, &path_without_bin())
        .args(["rev-parse", "-q", "--verify", "refs/notes/recode"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "a notes ref was created");
}

#[test]
fn amend_with_the_same_head_adds_nothing_and_a_new_head_adds_one() {
    let env = TestEnv::new();
    let repo = hooked(&env, "issue-23");
    let m1 = commit(
        &env,
        &repo,
        "a",
        "a\n",
        "a\n\nRecode-Phase: implemented\n",
        &[],
    );
    let one = milestone(1, "23", "issue-23", &m1, "implemented", None);
    assert_eq!(ledger(&env, &repo, "23"), one);

    // Dates are pinned, so `--amend --no-edit` rebuilds the very same commit: the hook
    // fires again for the same (head, phase) and must not ledger it twice.
    hgit(&env, &repo, &["commit", "-q", "--amend", "--no-edit"]);
    assert_eq!(env.git(&repo, &["rev-parse", "HEAD"]), m1);
    assert_eq!(ledger(&env, &repo, "23"), one);

    // Same phase, new head (a later committer date): one more event, for the new head.
    hgit_env(
        &env,
        &repo,
        &["commit", "-q", "--amend", "--no-edit"],
        &[("GIT_COMMITTER_DATE", "@1795000100 +0000")],
    );
    let m2 = env.git(&repo, &["rev-parse", "HEAD"]);
    assert_ne!(m2, m1);
    let two = milestone(2, "23", "issue-23", &m2, "implemented", None);
    assert_eq!(ledger(&env, &repo, "23"), format!("{one}\n{two}"));

    // The hook run by hand on the same head: still nothing new.
    assert_eq!(
        env.run(&repo, &["hook", "post-commit"]),
        "--- stderr ---\n[exit status: 0]\n"
    );
    assert_eq!(ledger(&env, &repo, "23"), format!("{one}\n{two}"));

    // Amending to another phase on the same head content: a new (head, phase) event.
    let msg = env.root().join("m");
    std::fs::write(&msg, "a\n\nRecode-Phase: tests-green\n").unwrap();
    hgit(
        &env,
        &repo,
        &[
            "commit",
            "-q",
            "--amend",
            "--cleanup=verbatim",
            "-F",
            msg.to_str().unwrap(),
        ],
    );
    let m3 = env.git(&repo, &["rev-parse", "HEAD"]);
    let three = milestone(3, "23", "issue-23", &m3, "tests-green", None);
    assert_eq!(ledger(&env, &repo, "23"), format!("{one}\n{two}\n{three}"));
}

#[test]
fn a_rebase_ledgers_each_replayed_milestone_once_against_the_rebased_branch() {
    let env = TestEnv::new();
    let repo = hooked(&env, "feat/issue-24-r");
    let c1 = commit(
        &env,
        &repo,
        "a",
        "a\n",
        "scope it\n\nRecode-Phase: scoped\n",
        &[],
    );
    commit(&env, &repo, "b", "b\n", "plain work\n", &[]);
    let c3 = commit(
        &env,
        &repo,
        "c",
        "c\n",
        "implement it\n\nRecode-Phase: implemented\n",
        &[],
    );
    let before = [
        milestone(1, "24", "feat/issue-24-r", &c1, "scoped", None),
        milestone(2, "24", "feat/issue-24-r", &c3, "implemented", None),
    ];
    assert_eq!(ledger(&env, &repo, "24"), before.join("\n"));

    // main moves on; the branch is rebased onto it: the two milestone commits are replayed
    // as new commits (HEAD detached meanwhile), each ledgered once under the rebased branch.
    hgit(&env, &repo, &["checkout", "-q", "main"]);
    commit(&env, &repo, "m", "m\n", "main moves\n", &[]);
    hgit(&env, &repo, &["checkout", "-q", "feat/issue-24-r"]);
    let out = hgit_out(
        &env,
        &repo,
        &["rebase", "main"],
        &[("RECODE_SESSION_ID", "s-rb")],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        env.git(&repo, &["symbolic-ref", "--short", "HEAD"]),
        "feat/issue-24-r"
    );
    let n3 = env.git(&repo, &["rev-parse", "HEAD"]);
    let n1 = env.git(&repo, &["rev-parse", "HEAD~2"]);
    assert_ne!(n1, c1);
    assert_ne!(n3, c3);
    let after = [
        before[0].clone(),
        before[1].clone(),
        milestone(3, "24", "feat/issue-24-r", &n1, "scoped", Some("s-rb")),
        milestone(4, "24", "feat/issue-24-r", &n3, "implemented", Some("s-rb")),
    ];
    assert_eq!(ledger(&env, &repo, "24"), after.join("\n"));

    // A forced rebase onto the same base rebuilds the very same commits (dates pinned):
    // every pick fires the hook again for a (head, phase) already ledgered: nothing new.
    hgit(&env, &repo, &["rebase", "-q", "--force-rebase", "main"]);
    assert_eq!(env.git(&repo, &["rev-parse", "HEAD"]), n3);
    assert_eq!(ledger(&env, &repo, "24"), after.join("\n"));

    // Nothing was ledgered against main or a detached HEAD.
    let tasks: BTreeSet<String> = log_set(&env, &repo)
        .iter()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["task"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(tasks, BTreeSet::from(["24".to_string()]));
}

#[test]
fn an_interrupted_rebase_records_the_branch_being_rebased() {
    let env = TestEnv::new();
    let repo = hooked(&env, "issue-25");
    let a = commit(&env, &repo, "a", "a\n", "a\n\nRecode-Phase: scoped\n", &[]);
    commit(&env, &repo, "b", "b\n", "b\n", &[]);
    // Stop after the first pick (rebuilt identical: dates are pinned), then commit a milestone by hand while detached.
    hgit_env(
        &env,
        &repo,
        &["rebase", "-q", "-i", "--force-rebase", "main"],
        &[("GIT_SEQUENCE_EDITOR", "sed -i -e '1s/^pick/edit/'")],
    );
    assert!(repo.join(".git/rebase-merge/head-name").exists());
    let detached = isolated(&env, "git", &repo, &path_without_bin())
        .args(["symbolic-ref", "-q", "HEAD"])
        .output()
        .unwrap();
    assert!(
        !detached.status.success(),
        "HEAD should be detached during the rebase"
    );
    let mid = commit(
        &env,
        &repo,
        "mid",
        "m\n",
        "mid\n\nRecode-Phase: implemented\n",
        &[],
    );
    hgit(&env, &repo, &["rebase", "--continue"]);
    assert_eq!(env.git(&repo, &["rev-parse", "HEAD~1"]), mid);
    assert_eq!(env.git(&repo, &["rev-parse", "HEAD~2"]), a);
    // The re-picked milestone is not ledgered again; the one made while detached is,
    // against the branch being rebased.
    assert_eq!(
        ledger(&env, &repo, "25"),
        [
            milestone(1, "25", "issue-25", &a, "scoped", None),
            milestone(2, "25", "issue-25", &mid, "implemented", None),
        ]
        .join("\n")
    );
}

#[test]
fn the_hook_never_fails_a_commit() {
    let env = TestEnv::new();
    let repo = hooked(&env, "issue-26");
    let before = env.git(&repo, &["rev-parse", "HEAD"]);

    // git-recode missing from PATH: the commit still succeeds (and ledgers nothing).
    assert!(!path_without_bin().is_empty());
    std::fs::write(repo.join("a"), "a\n").unwrap();
    env.git(&repo, &["add", "a"]);
    let out = isolated(&env, "git", &repo, &path_without_bin())
        .args(["commit", "-q", "-m", "a", "-m", "Recode-Phase: scoped"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let head = env.git(&repo, &["rev-parse", "HEAD"]);
    assert_ne!(head, before);
    assert_eq!(env.git(&repo, &["log", "-1", "--format=%s"]), "a");
    assert_eq!(ledger(&env, &repo, "26"), "");

    // A broken ledger ref: the hook reports on stderr, exits 0, the commit succeeds.
    let blob = env.git(&repo, &["hash-object", "-w", "README.md"]);
    env.git(&repo, &["update-ref", "refs/notes/recode", &blob]);
    let out = env.output(&repo, &["hook", "post-commit"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).starts_with("git-recode post-commit: error: "),
        "{}",
        stderr(&out)
    );
    std::fs::write(repo.join("b"), "b\n").unwrap();
    hgit(&env, &repo, &["add", "b"]);
    let out = hgit_out(
        &env,
        &repo,
        &["commit", "-q", "-m", "b", "-m", "Recode-Phase: implemented"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(env.git(&repo, &["log", "-1", "--format=%s"]), "b");

    // Outside a repository: exit 0 too.
    let out = env.output(&env.root(), &["hook", "post-commit"]);
    assert_eq!(out.status.code(), Some(0));
}
