//! The post-commit milestone hook (install/uninstall/status round trips, chaining,
//! core.hooksPath, linked worktrees, husky; milestones from real commits, amends and
//! rebases) and `sync` (two clones of a bare remote converge on the union of their
//! ledgers, exactly what `git notes merge -s cat_sort_uniq` gives; `--setup`; races).
//!
//! Hooks run the real binary: git is run with the test binary's directory first on PATH.

mod common;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{NOW, TestEnv};

// ---------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------

/// The directory holding the `git-recode` binary under test.
fn bin_dir() -> PathBuf {
    assert_cmd::cargo::cargo_bin("git-recode")
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The test binary's directory first, then the inherited PATH.
fn path_with_bin() -> OsString {
    let mut dirs = vec![bin_dir()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// The inherited PATH without any directory that holds a `git-recode`.
fn path_without_bin() -> OsString {
    let dirs: Vec<PathBuf> = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|d| !d.join("git-recode").exists() && d != &bin_dir())
        .collect();
    std::env::join_paths(dirs).unwrap()
}

/// A command with the same isolated environment as `TestEnv` (HOME, no global/system
/// config, identities, pinned dates and clock) and the given PATH.
fn isolated(
    env: &TestEnv,
    program: impl AsRef<std::ffi::OsStr>,
    dir: &Path,
    path: &OsString,
) -> Command {
    let mut cmd = Command::new(program);
    cmd.env_clear()
        .env("PATH", path)
        .env("HOME", &env.home)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test Author")
        .env("GIT_AUTHOR_EMAIL", "author@example.invalid")
        .env("GIT_COMMITTER_NAME", "Test Committer")
        .env("GIT_COMMITTER_EMAIL", "committer@example.invalid")
        .env("GIT_AUTHOR_DATE", "@1795000000 +0000")
        .env("GIT_COMMITTER_DATE", "@1795000000 +0000")
        .env("LC_ALL", "C")
        .env("TZ", "UTC")
        .env("RECODE_NOW", NOW)
        .current_dir(dir)
        .stdin(Stdio::null());
    cmd
}

/// `git <args>` in `dir` with the binary under test on PATH (so hooks run it), plus `extra`
/// environment; returns the raw output.
fn hgit_out(env: &TestEnv, dir: &Path, args: &[&str], extra: &[(&str, &str)]) -> Output {
    let mut cmd = isolated(env, "git", dir, &path_with_bin());
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.args(args).output().unwrap()
}

/// Like `hgit_out`, panics unless git succeeds; returns trimmed stdout.
fn hgit_env(env: &TestEnv, dir: &Path, args: &[&str], extra: &[(&str, &str)]) -> String {
    let out = hgit_out(env, dir, args, extra);
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}

fn hgit(env: &TestEnv, dir: &Path, args: &[&str]) -> String {
    hgit_env(env, dir, args, &[])
}

/// Write `file` (content `content`), stage it, and commit it with message `msg` (verbatim,
/// through a file) with hooks running; extra environment in `extra`.
fn commit(
    env: &TestEnv,
    dir: &Path,
    file: &str,
    content: &str,
    msg: &str,
    extra: &[(&str, &str)],
) -> String {
    std::fs::write(dir.join(file), content).unwrap();
    hgit(env, dir, &["add", file]);
    let msg_file = env.root().join("commit-msg.txt");
    std::fs::write(&msg_file, msg).unwrap();
    hgit_env(
        env,
        dir,
        &[
            "commit",
            "-q",
            "--cleanup=verbatim",
            "-F",
            msg_file.to_str().unwrap(),
        ],
        extra,
    );
    env.git(dir, &["rev-parse", "HEAD"])
}

/// The ledger of `task` as plain git prints it (empty when there is none).
fn ledger(env: &TestEnv, dir: &Path, task: &str) -> String {
    let anchor = env.anchor(dir, task);
    let out = isolated(env, "git", dir, &path_without_bin())
        .args(["notes", "--ref=recode", "show", &anchor])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}

/// The canonical line of a milestone event.
fn milestone(
    seq: u32,
    task: &str,
    branch: &str,
    head: &str,
    phase: &str,
    session: Option<&str>,
) -> String {
    let session = session
        .map(|s| format!("\"session_id\":\"{s}\","))
        .unwrap_or_default();
    format!(
        "{{\"branch\":\"{branch}\",\"head\":\"{head}\",\"kind\":\"milestone\",\"phase\":\"{phase}\",\"seq\":{seq},{session}\"task\":\"{task}\",\"ts\":\"2026-11-20T12:00:00.000Z\",\"v\":1}}"
    )
}

/// Every event of every task (`log --json`), as a set of lines.
fn log_set(env: &TestEnv, dir: &Path) -> BTreeSet<String> {
    env.ok(dir, &["log", "--json"])
        .lines()
        .map(str::to_string)
        .collect()
}

/// The bytes and permission bits of a file.
fn snapshot(p: &Path) -> (Vec<u8>, u32) {
    (
        std::fs::read(p).unwrap(),
        std::fs::metadata(p).unwrap().permissions().mode() & 0o7777,
    )
}

/// Sorted names in a directory.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    v.sort();
    v
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

const PLAIN_SCRIPT: &str = "#!/bin/sh\n# BEGIN git-recode\n# logs commits with a Recode-Phase: trailer as milestones (a post-commit hook cannot fail a commit)\nexec git-recode hook post-commit\n# END git-recode\n";

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
fn sync_to_a_missing_remote_is_bad_usage() {
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
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
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
