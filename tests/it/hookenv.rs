//! Helpers shared by the hook and sync tests: git run with the test binary's directory
//! first on PATH, isolated from the machine's config.
#![allow(dead_code, unused_imports)]

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{NOW, TestEnv};

// ---------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------

/// The directory holding the `git-recode` binary under test.
pub fn bin_dir() -> PathBuf {
    assert_cmd::cargo::cargo_bin("git-recode")
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The test binary's directory first, then the inherited PATH.
pub fn path_with_bin() -> OsString {
    let mut dirs = vec![bin_dir()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// The inherited PATH without any directory that holds a `git-recode`.
pub fn path_without_bin() -> OsString {
    let dirs: Vec<PathBuf> = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|d| !d.join("git-recode").exists() && d != &bin_dir())
        .collect();
    std::env::join_paths(dirs).unwrap()
}

/// A command with the same isolated environment as `TestEnv` (HOME, no global/system
/// config, identities, pinned dates and clock) and the given PATH.
pub fn isolated(
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
pub fn hgit_out(env: &TestEnv, dir: &Path, args: &[&str], extra: &[(&str, &str)]) -> Output {
    let mut cmd = isolated(env, "git", dir, &path_with_bin());
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.args(args).output().unwrap()
}

/// Like `hgit_out`, panics unless git succeeds; returns trimmed stdout.
pub fn hgit_env(env: &TestEnv, dir: &Path, args: &[&str], extra: &[(&str, &str)]) -> String {
    let out = hgit_out(env, dir, args, extra);
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}

pub fn hgit(env: &TestEnv, dir: &Path, args: &[&str]) -> String {
    hgit_env(env, dir, args, &[])
}

/// Write `file` (content `content`), stage it, and commit it with message `msg` (verbatim,
/// through a file) with hooks running; extra environment in `extra`.
pub fn commit(
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
pub fn ledger(env: &TestEnv, dir: &Path, task: &str) -> String {
    let anchor = env.anchor(dir, task);
    let out = isolated(env, "git", dir, &path_without_bin())
        .args(["notes", "--ref=recode", "show", &anchor])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}

/// What `log <branch> --json` shows, one event a line (trimmed): the ledger of the
/// branch's task and, with `seq` 0, the milestones not ledgered yet (the journal's, the
/// trailers').
pub fn shown(env: &TestEnv, dir: &Path, branch: &str) -> String {
    env.ok(dir, &["log", branch, "--json"])
        .trim_end()
        .to_string()
}

/// Run a ledger-writing command on `branch` (`record unblock`, whose pickup folds the
/// milestone journal into the ledger first) and return task `task`'s ledger without the
/// `unblocked` line it added (asserted to be the last).
pub fn folded(env: &TestEnv, dir: &Path, task: &str, branch: &str) -> String {
    env.ok(dir, &["record", "unblock", branch]);
    let text = ledger(env, dir, task);
    let (rest, last) = text.rsplit_once('\n').unwrap_or(("", &text));
    assert!(last.contains("\"kind\":\"unblocked\""), "{text}");
    rest.to_string()
}

/// The canonical line of a milestone event.
pub fn milestone(
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
pub fn log_set(env: &TestEnv, dir: &Path) -> BTreeSet<String> {
    env.ok(dir, &["log", "--json"])
        .lines()
        .map(str::to_string)
        .collect()
}

/// The bytes and permission bits of a file.
pub fn snapshot(p: &Path) -> (Vec<u8>, u32) {
    (
        std::fs::read(p).unwrap(),
        std::fs::metadata(p).unwrap().permissions().mode() & 0o7777,
    )
}

/// Sorted names in a directory.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    v.sort();
    v
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

pub const PLAIN_SCRIPT: &str = "#!/bin/sh\n# BEGIN git-recode\n# logs commits with a Recode-Phase: trailer as milestones (a post-commit hook cannot fail a commit)\nexec git-recode hook post-commit\n# END git-recode\n";
