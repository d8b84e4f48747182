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

    insta::assert_snapshot!(env.run(&repo, &["hook", "status"]), @"
    not installed: no post-commit hook in <root>/r/.git/hooks
    --- stderr ---
    [exit status: 0]
    ");
    assert_eq!(
        env.ok(&repo, &["hook", "install"]),
        format!("installed {p}\n")
    );
    assert_eq!(names(&hooks), vec!["post-commit"]);
    // git-recode is on PATH: the hook names it as its interpreter (no shell).
    let direct =
        git_recode::app::parts::hook::direct_script(&assert_cmd::cargo::cargo_bin("git-recode"));
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), direct);
    assert_eq!(git_recode::app::parts::hook::script(false), PLAIN_SCRIPT);
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
    assert_eq!(snapshot(&hook), (direct.as_bytes().to_vec(), 0o755));

    assert_eq!(
        env.ok(&repo, &["hook", "uninstall"]),
        format!("removed {p}\n")
    );
    assert!(names(&hooks).is_empty(), "left behind: {:?}", names(&hooks));
    assert_eq!(
        env.ok(&repo, &["hook", "status"]),
        format!(
            "not installed: no post-commit hook in {}\n",
            hooks.display()
        )
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

/// A foreign hook that logs its arguments and whether git-recode's milestone journal
/// existed when it ran, and exits 7.
fn foreign_hook(log: &Path) -> String {
    format!(
        "#!/bin/sh\necho \"foreign $# $*\" >> '{0}'\nif [ -e \"$(git rev-parse --git-common-dir)/recode/milestones.journal\" ]; then echo journal-before >> '{0}'; else echo no-journal-yet >> '{0}'; fi\nexit 7\n",
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
    insta::assert_snapshot!(env.run(&repo, &["hook", "install"]), @"
    --- stderr ---
    error: <root>/r/.git/hooks/post-commit exists and git-recode did not write it
    hint: `git recode hook install --chain` keeps it and runs it first
    [exit status: 3]
    ");
    assert_eq!(snapshot(&hook), original);
    assert_eq!(names(&hooks), samples);
    insta::assert_snapshot!(env.run(&repo, &["hook", "status"]), @"
    not installed: <root>/r/.git/hooks/post-commit was not written by git-recode and does not call git-recode hook post-commit
    --- stderr ---
    [exit status: 0]
    ");
    // Uninstall leaves a hook it did not write alone.
    env.ok(&repo, &["hook", "uninstall"]);
    assert_eq!(snapshot(&hook), original);

    // --chain keeps it, byte for byte and mode, as post-commit.pre-recode.
    insta::assert_snapshot!(env.run(&repo, &["hook", "install", "--chain"]), @"
    installed <root>/r/.git/hooks/post-commit (runs the previous hook, kept as <root>/r/.git/hooks/post-commit.pre-recode, first)
    --- stderr ---
    [exit status: 0]
    ");
    assert_eq!(snapshot(&kept), original);
    assert_eq!(
        snapshot(&hook),
        (
            git_recode::app::parts::hook::script(true).into_bytes(),
            0o755
        )
    );
    insta::assert_snapshot!(env.run(&repo, &["hook", "status"]), @"
    installed: <root>/r/.git/hooks/post-commit (chained after the previous hook)
    --- stderr ---
    [exit status: 0]
    ");
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

    // A commit runs the foreign hook first (no journal yet when it ran), then journals the
    // milestone (shown at once); the foreign hook's failure does not fail the commit.
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
        "foreign 0 \nno-journal-yet\n"
    );
    assert_eq!(
        shown(&env, &repo, "issue-4"),
        milestone(0, "4", "issue-4", &head, "scoped", None)
    );

    // Run directly: arguments pass through, and its exit status is the hook's.
    let out = isolated(&env, &hook, &repo, &path_with_bin())
        .args(["one", "two words"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7), "stderr: {}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "foreign 0 \nno-journal-yet\nforeign 2 one two words\njournal-before\n"
    );
    // The same (head, phase) again: no second event, shown or ledgered.
    assert_eq!(
        shown(&env, &repo, "issue-4"),
        milestone(0, "4", "issue-4", &head, "scoped", None)
    );
    assert_eq!(
        folded(&env, &repo, "4", "issue-4"),
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
            "not installed: {} was not written by git-recode and does not call git-recode hook post-commit\n",
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
fn relative_core_hooks_path_in_the_working_tree_is_refused_with_the_line() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    hgit(&env, &repo, &["checkout", "-q", "-b", "issue-6"]);
    env.git(&repo, &["config", "core.hooksPath", "githooks"]);
    std::fs::create_dir_all(repo.join("src/deep")).unwrap();
    let sub = repo.join("src/deep");
    insta::assert_snapshot!(env.run(&sub, &["hook", "status"]), @"
    not installed: core.hooksPath githooks does not exist in this worktree (<root>/r/githooks): git runs no hooks here, so milestones are lost
    --- stderr ---
    [exit status: 0]
    ");
    insta::assert_snapshot!(env.run(&sub, &["hook", "install"]), @"
    git-recode hook post-commit || true
    --- stderr ---
    error: the hooks directory <root>/r/githooks (core.hooksPath githooks) is inside a working tree: git-recode never writes there
    hint: add the line printed above to <root>/r/githooks/post-commit (create it with a #!/bin/sh first line and make it executable; if it is tracked, commit it, so every worktree has it)
    hint: `git recode hook status` will then report: installed: <root>/r/githooks/post-commit (which calls git-recode hook post-commit)
    [exit status: 3]
    ");
    assert!(!repo.join("githooks").exists());
    assert!(!repo.join(".git/hooks/post-commit").exists());
    assert_eq!(env.git(&repo, &["status", "--porcelain"]), "");
    // The user adds the line: status follows it, and git runs it.
    let hook = repo.join("githooks/post-commit");
    std::fs::create_dir_all(repo.join("githooks")).unwrap();
    std::fs::write(&hook, "#!/bin/sh\ngit-recode hook post-commit || true\n").unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    insta::assert_snapshot!(env.run(&sub, &["hook", "status"]), @"
    installed: <root>/r/githooks/post-commit (which calls git-recode hook post-commit)
    --- stderr ---
    [exit status: 0]
    ");
    insta::assert_snapshot!(env.run(&sub, &["hook", "install"]), @"
    already installed: <root>/r/githooks/post-commit (which calls git-recode hook post-commit)
    --- stderr ---
    [exit status: 0]
    ");
    let head = commit(
        &env,
        &repo,
        "f",
        "x\n",
        "f\n\nRecode-Phase: implemented\n",
        &[],
    );
    assert_eq!(
        shown(&env, &repo, "issue-6"),
        milestone(0, "6", "issue-6", &head, "implemented", None)
    );
    assert_eq!(
        folded(&env, &repo, "6", "issue-6"),
        milestone(1, "6", "issue-6", &head, "implemented", None)
    );
    // Uninstall leaves the user's file alone.
    let before = snapshot(&hook);
    env.ok(&sub, &["hook", "uninstall"]);
    assert_eq!(snapshot(&hook), before);
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
        shown(&env, &repo, "issue-9"),
        milestone(0, "9", "issue-9", &head, "scoped", None)
    );
    assert_eq!(
        folded(&env, &repo, "9", "issue-9"),
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
    let both = env.run(&wt, &["hook", "status"]);
    insta::assert_snapshot!(both, @"
    installed: <root>/r/.git/hooks/post-commit
      <root>/r: reached via <root>/r/.git/hooks/post-commit
      <root>/wt: reached via <root>/r/.git/hooks/post-commit
    --- stderr ---
    [exit status: 0]
    ");
    assert_eq!(env.run(&repo, &["hook", "status"]), both);
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
    let first = |seq| {
        milestone(
            seq,
            "11",
            "feat/issue-11-x",
            &head,
            "implemented",
            Some("s-wt"),
        )
    };
    assert_eq!(shown(&env, &repo, "feat/issue-11-x"), first(0));

    // A rebase in the linked worktree records the branch being rebased (its rebase state
    // lives in the worktree's own git dir).
    commit(&env, &repo, "m", "m\n", "main moves\n", &[]);
    hgit(&env, &wt, &["rebase", "-q", "main"]);
    let rebased = env.git(&wt, &["rev-parse", "HEAD"]);
    assert_ne!(rebased, head);
    let second = |seq| milestone(seq, "11", "feat/issue-11-x", &rebased, "implemented", None);
    assert_eq!(
        shown(&env, &wt, "feat/issue-11-x"),
        [first(0), second(0)].join("\n")
    );
    assert_eq!(
        folded(&env, &wt, "11", "feat/issue-11-x"),
        [first(1), second(2)].join("\n")
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
    insta::assert_snapshot!(env.run(&repo, &["hook", "install"]), @"
    git-recode hook post-commit || true
    --- stderr ---
    error: the hooks directory <root>/r/.husky/_ belongs to husky, which regenerates it
    hint: add the line printed above to .husky/post-commit (tracked: commit it, so every worktree has it)
    hint: `git recode hook status` will then report: installed: husky (.husky/_/post-commit runs .husky/post-commit)
    [exit status: 3]
    ");
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
    let line = |seq| {
        milestone(
            seq,
            "21",
            "feat/issue-21-thing",
            &head,
            "implemented",
            Some("sess-42"),
        )
    };
    // Shown at once, from the journal (exact time, session id).
    assert_eq!(env.ok(&repo, &["log", "--json"]), format!("{}\n", line(0)));

    // The worker's phase is the milestone's.
    let status = env.ok(&repo, &["status", "--json", "--offline"]);
    let v: serde_json::Value = serde_json::from_str(&status).unwrap();
    let w = &v["workers"][0];
    assert_eq!(w["task"], "21");
    assert_eq!(w["phase"], "implemented");
    assert_eq!(ledger(&env, &repo, "21"), "", "reads write nothing");
    assert_eq!(folded(&env, &repo, "21", "feat/issue-21-thing"), line(1));
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
    insta::assert_snapshot!(env.run(&repo, &["hook", "post-commit"]), @"
    --- stderr ---
    [exit status: 0]
    ");
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
    let one = |seq| milestone(seq, "23", "issue-23", &m1, "implemented", None);
    assert_eq!(shown(&env, &repo, "issue-23"), one(0));

    // Dates are pinned, so `--amend --no-edit` rebuilds the very same commit: the hook
    // fires again for the same (head, phase) and must not show nor ledger it twice.
    hgit(&env, &repo, &["commit", "-q", "--amend", "--no-edit"]);
    assert_eq!(env.git(&repo, &["rev-parse", "HEAD"]), m1);
    assert_eq!(shown(&env, &repo, "issue-23"), one(0));

    // Same phase, new head (a later committer date): one more event, for the new head.
    hgit_env(
        &env,
        &repo,
        &["commit", "-q", "--amend", "--no-edit"],
        &[("GIT_COMMITTER_DATE", "@1795000100 +0000")],
    );
    let m2 = env.git(&repo, &["rev-parse", "HEAD"]);
    assert_ne!(m2, m1);
    let two = |seq| milestone(seq, "23", "issue-23", &m2, "implemented", None);
    assert_eq!(
        shown(&env, &repo, "issue-23"),
        format!("{}\n{}", one(0), two(0))
    );

    // The hook run by hand on the same head: still nothing new.
    insta::assert_snapshot!(env.run(&repo, &["hook", "post-commit"]), @"
    --- stderr ---
    [exit status: 0]
    ");
    assert_eq!(
        shown(&env, &repo, "issue-23"),
        format!("{}\n{}", one(0), two(0))
    );

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
    let three = |seq| milestone(seq, "23", "issue-23", &m3, "tests-green", None);
    assert_eq!(
        shown(&env, &repo, "issue-23"),
        format!("{}\n{}\n{}", one(0), two(0), three(0))
    );
    // A writing command ledgers each (head, phase) exactly once.
    assert_eq!(
        folded(&env, &repo, "23", "issue-23"),
        format!("{}\n{}\n{}", one(1), two(2), three(3))
    );
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
    let before = |s: [u32; 2]| {
        [
            milestone(s[0], "24", "feat/issue-24-r", &c1, "scoped", None),
            milestone(s[1], "24", "feat/issue-24-r", &c3, "implemented", None),
        ]
    };
    assert_eq!(
        shown(&env, &repo, "feat/issue-24-r"),
        before([0, 0]).join("\n")
    );

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
    let after = |s: [u32; 4]| {
        let b = before([s[0], s[1]]);
        [
            b[0].clone(),
            b[1].clone(),
            milestone(s[2], "24", "feat/issue-24-r", &n1, "scoped", Some("s-rb")),
            milestone(
                s[3],
                "24",
                "feat/issue-24-r",
                &n3,
                "implemented",
                Some("s-rb"),
            ),
        ]
    };
    assert_eq!(
        shown(&env, &repo, "feat/issue-24-r"),
        after([0; 4]).join("\n")
    );

    // A forced rebase onto the same base rebuilds the very same commits (dates pinned):
    // every pick fires the hook again for a (head, phase) already journaled: nothing new.
    hgit(&env, &repo, &["rebase", "-q", "--force-rebase", "main"]);
    assert_eq!(env.git(&repo, &["rev-parse", "HEAD"]), n3);
    assert_eq!(
        shown(&env, &repo, "feat/issue-24-r"),
        after([0; 4]).join("\n")
    );
    assert_eq!(
        folded(&env, &repo, "24", "feat/issue-24-r"),
        after([1, 2, 3, 4]).join("\n")
    );

    // Nothing was ledgered against main or a detached HEAD (the fold took every task's
    // journal lines).
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
    // The re-picked milestone is not shown nor ledgered again; the one made while
    // detached is, against the branch being rebased.
    let both = |s: [u32; 2]| {
        [
            milestone(s[0], "25", "issue-25", &a, "scoped", None),
            milestone(s[1], "25", "issue-25", &mid, "implemented", None),
        ]
        .join("\n")
    };
    assert_eq!(shown(&env, &repo, "issue-25"), both([0, 0]));
    assert_eq!(folded(&env, &repo, "25", "issue-25"), both([1, 2]));
}

#[test]
fn the_hook_never_fails_a_commit() {
    let env = TestEnv::new();
    let repo = hooked(&env, "issue-26");
    let before = env.git(&repo, &["rev-parse", "HEAD"]);

    // git-recode missing from PATH behind the shell form of the hook: the commit still
    // succeeds (and ledgers nothing).
    std::fs::write(
        repo.join(".git/hooks/post-commit"),
        git_recode::app::parts::hook::script(false),
    )
    .unwrap();
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

    assert!(!repo.join(".git/recode/milestones.journal").exists());

    // A journal that cannot be appended to (a directory in its place): the hook reports
    // on stderr, exits 0, the commit succeeds.
    std::fs::create_dir_all(repo.join(".git/recode/milestones.journal")).unwrap();
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

// ---------------------------------------------------------------------------------------
// hook managers, per worktree
// ---------------------------------------------------------------------------------------

/// Commit `files` (path, content, mode) on the current branch of `dir` without hooks.
fn commit_files(env: &TestEnv, dir: &Path, files: &[(&str, &str, u32)], msg: &str) {
    for (path, content, mode) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(*mode)).unwrap();
        env.git(dir, &["add", path]);
    }
    env.git(dir, &["commit", "-q", "--no-verify", "-m", msg]);
}

/// Add a linked worktree `<root>/<name>` on a new branch.
fn add_worktree(env: &TestEnv, repo: &Path, name: &str, branch: &str) -> PathBuf {
    let wt = env.root().join(name);
    env.git(
        repo,
        &["worktree", "add", "-q", "-b", branch, wt.to_str().unwrap()],
    );
    wt
}

/// Every file of a worktree (tracked or not, `.git` aside) with its bytes and mode.
fn tree_bytes(dir: &Path) -> Vec<(PathBuf, Vec<u8>, u32)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().unwrap() == ".git" {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                let (b, m) = snapshot(&p);
                out.push((p, b, m));
            }
        }
    }
    out.sort();
    out
}

/// `hook install` in each of `dirs`, without and with `--chain`: refused (exit 3) alike both
/// ways, and no file changed in any of them (`git status --porcelain` stays empty, bytes
/// unchanged). Returns each dir's rendered run (`TestEnv::run`) for the caller's snapshot.
fn refused_untouched(env: &TestEnv, dirs: &[&Path], hooks: &Path) -> Vec<String> {
    let mut refusals = Vec::new();
    for dir in dirs {
        let files: Vec<_> = dirs.iter().map(|d| tree_bytes(d)).collect();
        let hook_files = if hooks.is_dir() {
            tree_bytes(hooks)
        } else {
            Vec::new()
        };
        let mut first: Option<String> = None;
        for chain in [false, true] {
            let args: &[&str] = if chain {
                &["hook", "install", "--chain"]
            } else {
                &["hook", "install"]
            };
            let out = env.run(dir, args);
            assert!(
                out.ends_with("[exit status: 3]\n"),
                "install {args:?} in {}: {out}",
                dir.display()
            );
            if let Some(first) = &first {
                assert_eq!(&out, first, "install {args:?} in {}", dir.display());
            } else {
                first = Some(out);
            }
            let now: Vec<_> = dirs.iter().map(|d| tree_bytes(d)).collect();
            assert_eq!(now, files, "a working tree changed");
            let now_hooks = if hooks.is_dir() {
                tree_bytes(hooks)
            } else {
                Vec::new()
            };
            assert_eq!(now_hooks, hook_files, "the hooks directory changed");
            for d in dirs {
                assert_eq!(env.git(d, &["status", "--porcelain"]), "");
            }
        }
        refusals.extend(first);
    }
    refusals
}

const HUSKY8_HOOK: &str = "#!/usr/bin/env sh\n. \"$(dirname -- \"$0\")/_/husky.sh\"\n\necho lint\n";

/// What `husky install` (v6-8) generates in a worktree: `.husky/_/husky.sh`, ignored.
fn husky8_generate(wt: &Path) {
    std::fs::create_dir_all(wt.join(".husky/_")).unwrap();
    std::fs::write(wt.join(".husky/_/husky.sh"), "#!/usr/bin/env sh\n").unwrap();
    std::fs::write(wt.join(".husky/_/.gitignore"), "*\n").unwrap();
}

#[test]
fn husky8_tracked_hooks_are_never_written_and_status_follows_each_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    commit_files(
        &env,
        &repo,
        &[(".husky/post-commit", HUSKY8_HOOK, 0o755)],
        "husky",
    );
    env.git(&repo, &["config", "core.hooksPath", ".husky"]);
    husky8_generate(&repo);
    let wt = add_worktree(&env, &repo, "wt16", "issue-16");
    husky8_generate(&wt);
    let wt_bare = add_worktree(&env, &repo, "wt17", "issue-17"); // husky never installed there

    let refusals = refused_untouched(&env, &[&repo, &wt], &repo.join(".git/hooks"));
    insta::assert_snapshot!(refusals[0], @"
    git-recode hook post-commit || true
    --- stderr ---
    error: the hooks directory <root>/r/.husky is husky's, tracked in the repository: git-recode never writes a tracked file
    hint: add the line printed above to .husky/post-commit (tracked: commit it, so every worktree has it)
    hint: `git recode hook status` will then report: installed: husky (.husky/post-commit)
    [exit status: 3]
    ");
    insta::assert_snapshot!(refusals[1], @"
    git-recode hook post-commit || true
    --- stderr ---
    error: the hooks directory <root>/wt16/.husky is husky's, tracked in the repository: git-recode never writes a tracked file
    hint: add the line printed above to .husky/post-commit (tracked: commit it, so every worktree has it)
    hint: `git recode hook status` will then report: installed: husky (.husky/post-commit)
    [exit status: 3]
    ");

    // The agent's branch gets the line (a tracked change the user makes and commits).
    commit_files(
        &env,
        &wt,
        &[(
            ".husky/post-commit",
            &format!("{HUSKY8_HOOK}git-recode hook post-commit || true\n"),
            0o755,
        )],
        "call git-recode",
    );
    insta::assert_snapshot!(env.run(&wt, &["hook", "status"]), @"
    installed: husky (.husky/post-commit)
      <root>/r: not reached: husky's .husky/post-commit does not call git-recode hook post-commit: add the line `git-recode hook post-commit || true` to it
      <root>/wt16: reached via husky (.husky/post-commit)
      <root>/wt17: not reached: husky's .husky/post-commit does not call git-recode hook post-commit: add the line `git-recode hook post-commit || true` to it
    --- stderr ---
    [exit status: 0]
    ");
    // wt17 has the line too, but husky.sh was never generated there: the hook stops.
    hgit(&env, &wt_bare, &["merge", "-q", "--ff-only", "issue-16"]);
    let out = env.run(&wt_bare, &["hook", "status"]);
    assert_eq!(
        out.lines().next().unwrap(),
        "not installed: husky's .husky/post-commit sources .husky/_/husky.sh, which is missing in this worktree (run `npx husky install` here): the hook stops before it calls git-recode, so milestones are lost"
    );

    let head = commit(
        &env,
        &wt,
        "x.txt",
        "x\n",
        "implement x\n\nRecode-Phase: implemented\n",
        &[],
    );
    assert_eq!(
        shown(&env, &repo, "issue-16"),
        milestone(0, "16", "issue-16", &head, "implemented", None)
    );
    assert_eq!(
        folded(&env, &repo, "16", "issue-16"),
        milestone(1, "16", "issue-16", &head, "implemented", None)
    );
}

/// What `npx husky` (v9) generates in a worktree: `.husky/_` with `h` and the hook stubs.
fn husky9_generate(wt: &Path) {
    let d = wt.join(".husky/_");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join(".gitignore"), "*\n").unwrap();
    std::fs::write(
        d.join("h"),
        "#!/usr/bin/env sh\nn=$(basename \"$0\")\ns=$(dirname \"$(dirname \"$0\")\")/$n\n[ ! -f \"$s\" ] && exit 0\nsh -e \"$s\" \"$@\"\n",
    )
    .unwrap();
    std::fs::write(
        d.join("post-commit"),
        "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"\n",
    )
    .unwrap();
    std::fs::set_permissions(
        d.join("post-commit"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
}

#[test]
fn husky9_refuses_then_status_follows_h_per_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    commit_files(
        &env,
        &repo,
        &[(".husky/pre-commit", "echo lint\n", 0o644)],
        "husky",
    );
    husky9_generate(&repo);
    env.git(&repo, &["config", "core.hooksPath", ".husky/_"]);
    let refusals = refused_untouched(&env, &[&repo], &repo.join(".git/hooks"));
    insta::assert_snapshot!(refusals[0], @"
    git-recode hook post-commit || true
    --- stderr ---
    error: the hooks directory <root>/r/.husky/_ belongs to husky, which regenerates it
    hint: add the line printed above to .husky/post-commit (tracked: commit it, so every worktree has it)
    hint: `git recode hook status` will then report: installed: husky (.husky/_/post-commit runs .husky/post-commit)
    [exit status: 3]
    ");
    assert_eq!(
        env.ok(&repo, &["hook", "status"]),
        "not installed: husky runs .husky/post-commit, which does not exist here: add the line `git-recode hook post-commit || true` to it\n"
    );
    commit_files(
        &env,
        &repo,
        &[(
            ".husky/post-commit",
            "git-recode hook post-commit || true\n",
            0o644,
        )],
        "husky post-commit calls git-recode",
    );
    let wt17 = add_worktree(&env, &repo, "wt17", "issue-17");
    let wt18 = add_worktree(&env, &repo, "wt18", "issue-18");
    husky9_generate(&wt18);
    let via = "husky (.husky/_/post-commit runs .husky/post-commit)";
    let lost = "core.hooksPath .husky/_ does not exist in this worktree (husky generates it: run `npx husky` here): git runs no hooks here, so milestones are lost";
    insta::assert_snapshot!(env.run(&wt18, &["hook", "status"]), @"
    installed: husky (.husky/_/post-commit runs .husky/post-commit)
      <root>/r: reached via husky (.husky/_/post-commit runs .husky/post-commit)
      <root>/wt17: not reached: core.hooksPath .husky/_ does not exist in this worktree (husky generates it: run `npx husky` here): git runs no hooks here, so milestones are lost
      <root>/wt18: reached via husky (.husky/_/post-commit runs .husky/post-commit)
    --- stderr ---
    [exit status: 0]
    ");
    insta::assert_snapshot!(env.run(&wt17, &["hook", "status"]), @"
    not installed: core.hooksPath .husky/_ does not exist in this worktree (husky generates it: run `npx husky` here): git runs no hooks here, so milestones are lost
      <root>/r: reached via husky (.husky/_/post-commit runs .husky/post-commit)
      <root>/wt17: not reached: core.hooksPath .husky/_ does not exist in this worktree (husky generates it: run `npx husky` here): git runs no hooks here, so milestones are lost
      <root>/wt18: reached via husky (.husky/_/post-commit runs .husky/post-commit)
    --- stderr ---
    [exit status: 0]
    ");
    insta::assert_snapshot!(env.run(&wt18, &["hook", "install"]), @"
    already installed: husky (.husky/_/post-commit runs .husky/post-commit)
    --- stderr ---
    [exit status: 0]
    ");
    // The JSON document.
    let v: serde_json::Value =
        serde_json::from_str(&env.ok(&wt17, &["hook", "status", "--json"])).unwrap();
    let root = env.root().display().to_string();
    assert_eq!(
        v,
        serde_json::json!({"schema": 1, "worktrees": [
            {"path": format!("{root}/r"), "hooks_dir": format!("{root}/r/.husky/_"), "manager": "husky9",
             "reaches": true, "via": via, "why": null, "current": false},
            {"path": format!("{root}/wt17"), "hooks_dir": format!("{root}/wt17/.husky/_"), "manager": "husky9",
             "reaches": false, "via": null, "why": lost, "current": true},
            {"path": format!("{root}/wt18"), "hooks_dir": format!("{root}/wt18/.husky/_"), "manager": "husky9",
             "reaches": true, "via": via, "why": null, "current": false},
        ]})
    );
    // The library answer is the same.
    let lib = git_recode::app::parts::hook::reach(&gix::open(&wt17).unwrap());
    assert_eq!(
        lib.iter().map(|r| r.reaches).collect::<Vec<_>>(),
        vec![true, false, true]
    );
    // Commits: reached in wt18, lost in wt17.
    let h18 = commit(
        &env,
        &wt18,
        "y",
        "y\n",
        "tests pass\n\nRecode-Phase: tests-green\n",
        &[],
    );
    commit(
        &env,
        &wt17,
        "y",
        "y\n",
        "tests pass\n\nRecode-Phase: tests-green\n",
        &[],
    );
    assert_eq!(
        shown(&env, &repo, "issue-18"),
        milestone(0, "18", "issue-18", &h18, "tests-green", None)
    );
    assert_eq!(
        folded(&env, &repo, "18", "issue-18"),
        milestone(1, "18", "issue-18", &h18, "tests-green", None)
    );
    assert_eq!(ledger(&env, &repo, "17"), "");
    assert_eq!(env.git(&repo, &["status", "--porcelain"]), "");
}

const LEFTHOOK_HOOK: &str = "#!/bin/sh\n\nif [ \"$LEFTHOOK_VERBOSE\" = \"1\" -o \"$LEFTHOOK_VERBOSE\" = \"true\" ]; then\n  set -x\nfi\n\nif [ \"$LEFTHOOK\" = \"0\" ]; then\n  exit 0\nfi\n\ncall_lefthook()\n{\n  lefthook \"$@\"\n}\n\ncall_lefthook run \"post-commit\" \"$@\"\n";

#[test]
fn lefthook_gets_the_yaml_stanza_and_status_reads_each_worktrees_config() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let yml = "pre-commit:\n  commands:\n    lint:\n      run: echo lint\n";
    commit_files(&env, &repo, &[("lefthook.yml", yml, 0o644)], "lefthook");
    let hooks = repo.join(".git/hooks");
    std::fs::write(hooks.join("post-commit"), LEFTHOOK_HOOK).unwrap();
    std::fs::set_permissions(
        hooks.join("post-commit"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let wt = add_worktree(&env, &repo, "wt", "issue-5");
    let refusals = refused_untouched(&env, &[&repo, &wt], &hooks);
    insta::assert_snapshot!(refusals[0], @"
    post-commit:
      commands:
        git-recode:
          run: git-recode hook post-commit
    --- stderr ---
    error: post-commit hooks here are lefthook's, configured in lefthook.yml
    hint: add the stanza printed above to lefthook.yml (merge into an existing post-commit: key)
    hint: then run `lefthook install`
    hint: `git recode hook status` will then report: installed: lefthook (<root>/r/.git/hooks/post-commit runs the post-commit commands of lefthook.yml)
    [exit status: 3]
    ");
    assert_eq!(refusals[1], refusals[0], "the worktree is refused alike");
    commit_files(
        &env,
        &wt,
        &[(
            "lefthook.yml",
            &format!(
                "{yml}post-commit:\n  commands:\n    git-recode:\n      run: git-recode hook post-commit\n"
            ),
            0o644,
        )],
        "lefthook runs git-recode",
    );
    insta::assert_snapshot!(env.run(&repo, &["hook", "status"]), @"
    not installed: lefthook runs <root>/r/.git/hooks/post-commit, and no post-commit command in lefthook.yml calls git-recode hook post-commit
      <root>/r: not reached: lefthook runs <root>/r/.git/hooks/post-commit, and no post-commit command in lefthook.yml calls git-recode hook post-commit
      <root>/wt: reached via lefthook (<root>/r/.git/hooks/post-commit runs the post-commit commands of lefthook.yml)
    --- stderr ---
    [exit status: 0]
    ");
}

const PRE_COMMIT_HOOK: &str = "#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n# ID: 138fd403232d2ddd5efb44317e38bf03\n\nARGS=(hook-impl --config=.pre-commit-config.yaml --hook-type=post-commit)\nexec pre-commit \"${ARGS[@]}\"\n";

#[test]
fn pre_commit_gets_a_local_post_commit_hook_and_status_needs_the_stage() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let cfg = "repos:\n- repo: https://github.com/pre-commit/pre-commit-hooks\n  rev: v4.6.0\n  hooks:\n    - id: trailing-whitespace\n";
    commit_files(
        &env,
        &repo,
        &[(".pre-commit-config.yaml", cfg, 0o644)],
        "pre-commit",
    );
    let hooks = repo.join(".git/hooks");
    let wt = add_worktree(&env, &repo, "wt", "issue-8");
    // Not even installed for post-commit yet: refused with the stanza and the install command.
    let refusals = refused_untouched(&env, &[&repo, &wt], &hooks);
    insta::assert_snapshot!(refusals[0], @"
    - repo: local
      hooks:
        - id: git-recode
          name: git-recode milestones
          entry: git-recode hook post-commit
          language: system
          stages: [post-commit]
          always_run: true
          pass_filenames: false
    --- stderr ---
    error: post-commit hooks here are pre-commit's, configured in .pre-commit-config.yaml
    hint: add the stanza printed above to .pre-commit-config.yaml (under repos:)
    hint: then run `pre-commit install --hook-type post-commit`
    hint: `git recode hook status` will then report: installed: pre-commit (<root>/r/.git/hooks/post-commit runs the post-commit stage of .pre-commit-config.yaml)
    [exit status: 3]
    ");
    assert_eq!(refusals[1], refusals[0], "the worktree is refused alike");
    assert!(!hooks.join("post-commit").exists());
    // The stanza without its stage does not count; with it, it does.
    let without_stage = format!(
        "{cfg}- repo: local\n  hooks:\n    - id: git-recode\n      entry: git-recode hook post-commit\n      language: system\n"
    );
    let with_stage =
        format!("{without_stage}      stages: [post-commit]\n      always_run: true\n");
    commit_files(
        &env,
        &repo,
        &[(".pre-commit-config.yaml", &without_stage, 0o644)],
        "no stage",
    );
    commit_files(
        &env,
        &wt,
        &[(".pre-commit-config.yaml", &with_stage, 0o644)],
        "stage",
    );
    insta::assert_snapshot!(env.run(&wt, &["hook", "status"]), @"
    not installed: no post-commit hook in <root>/r/.git/hooks (.pre-commit-config.yaml calls git-recode, but its post-commit hook is not installed: run `pre-commit install --hook-type post-commit`)
      <root>/r: not reached: no post-commit hook in <root>/r/.git/hooks
      <root>/wt: not reached: no post-commit hook in <root>/r/.git/hooks (.pre-commit-config.yaml calls git-recode, but its post-commit hook is not installed: run `pre-commit install --hook-type post-commit`)
    --- stderr ---
    [exit status: 0]
    ");
    std::fs::write(hooks.join("post-commit"), PRE_COMMIT_HOOK).unwrap();
    std::fs::set_permissions(
        hooks.join("post-commit"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    insta::assert_snapshot!(env.run(&wt, &["hook", "status"]), @"
    installed: pre-commit (<root>/r/.git/hooks/post-commit runs the post-commit stage of .pre-commit-config.yaml)
      <root>/r: not reached: pre-commit runs <root>/r/.git/hooks/post-commit, and no hook in .pre-commit-config.yaml calls git-recode hook post-commit with stages: [post-commit]
      <root>/wt: reached via pre-commit (<root>/r/.git/hooks/post-commit runs the post-commit stage of .pre-commit-config.yaml)
    --- stderr ---
    [exit status: 0]
    ");
}

const SIMPLE_PREPEND: &str = "#!/bin/sh\n\nif [ \"$SKIP_SIMPLE_GIT_HOOKS\" = \"1\" ]; then\n    echo \"[INFO] SKIP_SIMPLE_GIT_HOOKS is set to 1, skipping hook.\"\n    exit 0\nfi\n\nif [ -f \"$SIMPLE_GIT_HOOKS_RC\" ]; then\n    . \"$SIMPLE_GIT_HOOKS_RC\"\nfi\n\n";

#[test]
fn simple_git_hooks_gets_the_package_json_stanza_and_a_regenerated_hook_is_reached() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    hgit(&env, &repo, &["checkout", "-q", "-b", "issue-3"]);
    let pkg = "{\n  \"name\": \"x\",\n  \"simple-git-hooks\": {\n    \"pre-commit\": \"npx lint-staged\"\n  }\n}\n";
    commit_files(
        &env,
        &repo,
        &[("package.json", pkg, 0o644)],
        "simple-git-hooks",
    );
    let hooks = repo.join(".git/hooks");
    let refusals = refused_untouched(&env, &[&repo], &hooks);
    insta::assert_snapshot!(refusals[0], @r#"
    "simple-git-hooks": {
      "post-commit": "git-recode hook post-commit"
    }
    --- stderr ---
    error: git hooks here are simple-git-hooks', which rewrites them from its configuration
    hint: add the stanza printed above to package.json (merge into the "simple-git-hooks" key), or .simple-git-hooks.json
    hint: then run `npx simple-git-hooks`
    hint: `git recode hook status` will then report: installed: simple-git-hooks (<root>/r/.git/hooks/post-commit)
    [exit status: 3]
    "#);
    // Configured, not regenerated: status says what to run.
    let configured = "{\n  \"name\": \"x\",\n  \"simple-git-hooks\": {\n    \"pre-commit\": \"npx lint-staged\",\n    \"post-commit\": \"git-recode hook post-commit\"\n  }\n}\n";
    commit_files(
        &env,
        &repo,
        &[("package.json", configured, 0o644)],
        "post-commit",
    );
    assert_eq!(
        env.ok(&repo, &["hook", "status"]),
        format!(
            "not installed: no post-commit hook in {} (simple-git-hooks' configuration calls git-recode, but its hooks are not installed: run `npx simple-git-hooks`)\n",
            hooks.display()
        )
    );
    // What `npx simple-git-hooks` writes: the command inline. A real commit reaches us.
    let hook = hooks.join("post-commit");
    std::fs::write(
        &hook,
        format!("{SIMPLE_PREPEND}git-recode hook post-commit"),
    )
    .unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(
        env.ok(&repo, &["hook", "status"]),
        format!("installed: simple-git-hooks ({})\n", hook.display())
    );
    let head = commit(&env, &repo, "a", "a\n", "a\n\nRecode-Phase: scoped\n", &[]);
    assert_eq!(
        shown(&env, &repo, "issue-3"),
        milestone(0, "3", "issue-3", &head, "scoped", None)
    );
    assert_eq!(
        folded(&env, &repo, "3", "issue-3"),
        milestone(1, "3", "issue-3", &head, "scoped", None)
    );
}

#[test]
fn a_per_worktree_hooks_path_is_installed_into_and_answered_per_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = add_worktree(&env, &repo, "wt", "issue-12");
    let private = env.root().join("private-hooks");
    env.git(&repo, &["config", "extensions.worktreeConfig", "true"]);
    env.git(
        &wt,
        &[
            "config",
            "--worktree",
            "core.hooksPath",
            private.to_str().unwrap(),
        ],
    );
    insta::assert_snapshot!(env.run(&wt, &["hook", "install"]), @"
    installed <root>/private-hooks/post-commit
    --- stderr ---
    [exit status: 0]
    ");
    assert!(!repo.join(".git/hooks/post-commit").exists());
    insta::assert_snapshot!(env.run(&repo, &["hook", "status"]), @"
    not installed: no post-commit hook in <root>/r/.git/hooks
      <root>/r: not reached: no post-commit hook in <root>/r/.git/hooks
      <root>/wt: reached via <root>/private-hooks/post-commit
    --- stderr ---
    [exit status: 0]
    ");
    let head = commit(
        &env,
        &wt,
        "w",
        "w\n",
        "w\n\nRecode-Phase: implemented\n",
        &[],
    );
    assert_eq!(
        shown(&env, &repo, "issue-12"),
        milestone(0, "12", "issue-12", &head, "implemented", None)
    );
    assert_eq!(
        folded(&env, &repo, "12", "issue-12"),
        milestone(1, "12", "issue-12", &head, "implemented", None)
    );
    assert_eq!(env.git(&wt, &["status", "--porcelain"]), "");
}

#[test]
fn a_held_notes_lock_does_not_slow_the_hook_and_the_milestone_is_ledgered_once_it_is_free() {
    let env = TestEnv::new();
    let repo = hooked(&env, "issue-27");
    let base = env.git(&repo, &["rev-parse", "main"]);
    std::fs::create_dir_all(repo.join(".git/refs/notes")).unwrap();
    let lock = repo.join(".git/refs/notes/recode.lock");
    std::fs::write(&lock, "").unwrap();
    std::fs::write(repo.join("a"), "a\n").unwrap();
    env.git(&repo, &["add", "a"]);
    let started = std::time::Instant::now();
    let out = hgit_out(
        &env,
        &repo,
        &["commit", "-q", "-m", "a", "-m", "Recode-Phase: implemented"],
        &[],
    );
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let head = env.git(&repo, &["rev-parse", "HEAD"]);
    // The hook writes only its journal: the held notes lock is none of its business.
    assert_eq!(stderr(&out), "");
    // The whole commit, hook included, stays well under a second on any machine.
    assert!(
        took < std::time::Duration::from_millis(900),
        "took {took:?}"
    );
    assert_eq!(ledger(&env, &repo, "27"), "");
    assert!(lock.exists());
    // Shown at once, from the journal.
    let line = |seq| milestone(seq, "27", "issue-27", &head, "implemented", None);
    assert_eq!(shown(&env, &repo, "issue-27"), line(0));

    // Also recoverable from the trailer.
    let gix_repo = gix::open(&repo).unwrap();
    let tip = gix::ObjectId::from_hex(head.as_bytes()).unwrap();
    let base_id = gix::ObjectId::from_hex(base.as_bytes()).unwrap();
    let missing =
        git_recode::app::parts::hook::unledgered_milestones(&gix_repo, tip, &[base_id], Vec::new())
            .unwrap();
    assert_eq!(missing, vec![(tip, "implemented".to_string())]);

    // Once the lock is gone, a writing command ledgers it (the journal's line: exact time),
    // and nothing is missing any more.
    std::fs::remove_file(&lock).unwrap();
    assert_eq!(folded(&env, &repo, "27", "issue-27"), line(1));
    let (ledger, _) = git_recode::app::parts::hook::read_task(
        &gix_repo,
        &["refs/notes/recode".to_string()],
        "27",
    )
    .unwrap();
    assert_eq!(
        git_recode::app::parts::hook::unledgered_milestones(
            &gix_repo,
            tip,
            &[base_id],
            ledger.events()
        )
        .unwrap(),
        vec![]
    );
}

/// The hook meets a journal it cannot append to (a directory in its place): it says so on
/// one line, the commit stands, and the milestone is shown and ledgered from the trailer.
#[test]
fn an_unwritable_journal_is_one_line_and_the_trailer_keeps_the_milestone() {
    let env = TestEnv::new();
    let repo = hooked(&env, "issue-28");
    let journal = repo.join(".git/recode/milestones.journal");
    std::fs::create_dir_all(&journal).unwrap();
    std::fs::write(repo.join("a"), "a\n").unwrap();
    env.git(&repo, &["add", "a"]);
    env.git(
        &repo,
        &["commit", "-q", "-m", "a", "-m", "Recode-Phase: implemented"],
    );
    let head = env.git(&repo, &["rev-parse", "HEAD"]);
    let out = env.output(&repo, &["hook", "post-commit"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stderr(&out),
        format!(
            "git-recode post-commit: error: cannot append to {}: Is a directory (os error 21); milestone 'implemented' of {} is not journaled (it stays in the commit's Recode-Phase trailer)\n",
            journal.display(),
            &head[..12]
        )
    );
    assert_eq!(ledger(&env, &repo, "28"), "");
    // From the trailer: the committer time (second precision), no session id.
    let line = |seq| {
        milestone(seq, "28", "issue-28", &head, "implemented", None)
            .replace("2026-11-20T12:00:00.000Z", "2026-11-18T11:06:40.000Z")
    };
    assert_eq!(shown(&env, &repo, "issue-28"), line(0));
    assert_eq!(folded(&env, &repo, "28", "issue-28"), line(1));
    assert!(
        journal.is_dir(),
        "the fold leaves what is not a journal file alone"
    );
}
