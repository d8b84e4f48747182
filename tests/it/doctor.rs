//! `git recode doctor` (SPEC 1.2): a healthy set-up exits 0; a stale lock, a worktree the
//! hook does not reach, two config directories of one account each exit 1 naming it.

use std::path::{Path, PathBuf};

use crate::common::{LATER, TestEnv};
use crate::newcomer::{stand_in_agent, with_agent};

/// A repository with one linked worker worktree and the hook installed.
fn healthy(env: &TestEnv) -> (PathBuf, PathBuf) {
    let repo = env.repo("r");
    let wt = env.root().join("wt1");
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-1-a",
            wt.to_str().unwrap(),
            "main",
        ],
    );
    env.ok(&repo, &["hook", "install"]);
    (repo, stand_in_agent(env))
}

/// `doctor` (extra args) with the stand-in agent on PATH: (exit code, stdout).
fn doctor(env: &TestEnv, repo: &Path, bin: &Path, extra: &[&str]) -> (i32, String) {
    let exe = assert_cmd::cargo::cargo_bin("git-recode");
    let out = with_agent(env, repo, exe.to_str().unwrap(), bin)
        .env("RECODE_NOW", LATER)
        .arg("doctor")
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).replace(&env.root().display().to_string(), "<root>"),
    )
}

fn levels(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(|l| {
            let mut w = l.split_whitespace();
            (w.next().unwrap().to_string(), w.next().unwrap().to_string())
        })
        .collect()
}

#[test]
fn a_healthy_set_up_exits_0() {
    let env = TestEnv::new();
    let (repo, bin) = healthy(&env);
    let (code, text) = doctor(&env, &repo, &bin, &[]);
    assert_eq!(code, 0, "{text}");
    let want: Vec<(String, String)> = [
        ("ok", "git"),
        ("ok", "identity"),
        ("ok", "config"),
        ("ok", "hook"),
        ("warn", "forge"),
        ("warn", "gate"),
        ("ok", "ssh"),
        ("ok", "agent"),
        ("ok", "accounts"),
        ("ok", "locks"),
        ("ok", "clone"),
        ("ok", "maintenance"),
        ("ok", "hosts"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(levels(&text), want, "{text}");
    assert!(
        text.contains("ok    hook        the milestone hook is reached from 2 worktrees\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "ok    agent       recode.agent claude: <root>/agent-bin/claude is on PATH and answers --version: 2.0.0 (Claude Code stand-in)\n"
        ),
        "{text}"
    );
    let (code, json) = doctor(&env, &repo, &bin, &["--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["schema"], 1);
    assert_eq!(v["ok"], true);
    assert_eq!(v["checks"].as_array().unwrap().len(), 13);
    assert_eq!(v["checks"][4]["check"], "forge");
    assert_eq!(v["checks"][4]["level"], "warn");
    assert_eq!(v["checks"][0]["fix"], serde_json::Value::Null);
}

#[test]
fn a_stale_lock_fails_naming_it() {
    let env = TestEnv::new();
    let (repo, bin) = healthy(&env);
    let wt_git = env.git(
        &env.root().join("wt1"),
        &["rev-parse", "--absolute-git-dir"],
    );
    std::fs::write(Path::new(&wt_git).join("index.lock"), "").unwrap();
    let (code, text) = doctor(&env, &repo, &bin, &[]);
    assert_eq!(code, 1, "{text}");
    let line = text.lines().find(|l| l.contains(" locks ")).unwrap();
    assert!(
        line.starts_with(
            "fail  locks       stale lock files: <root>/r/.git/worktrees/wt1/index.lock ("
        ),
        "{line}"
    );
    assert!(line.contains("(fix: if no git process is running there, move each aside: mv '<root>/r/.git/worktrees/wt1/index.lock'"), "{line}");
    // A fresh lock (the clock at the file's own time) is not stale.
    let exe = assert_cmd::cargo::cargo_bin("git-recode");
    let out = with_agent(&env, &repo, exe.to_str().unwrap(), &bin)
        .env_remove("RECODE_NOW")
        .arg("doctor")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_worktree_the_hook_does_not_reach_fails_naming_it() {
    let env = TestEnv::new();
    let (repo, bin) = healthy(&env);
    let wt = env.root().join("wt1");
    // This worktree alone takes its hooks from elsewhere.
    env.git(&repo, &["config", "extensions.worktreeConfig", "true"]);
    let elsewhere = env.root().join("other-hooks");
    std::fs::create_dir_all(&elsewhere).unwrap();
    env.git(
        &wt,
        &[
            "config",
            "--worktree",
            "core.hooksPath",
            elsewhere.to_str().unwrap(),
        ],
    );
    let (code, text) = doctor(&env, &repo, &bin, &[]);
    assert_eq!(code, 1, "{text}");
    let fails: Vec<&str> = text.lines().filter(|l| l.starts_with("fail")).collect();
    assert_eq!(fails.len(), 1, "{text}");
    assert!(
        fails[0].starts_with(
            "fail  hook        a commit in <root>/wt1 does not reach the milestone hook: "
        ),
        "{}",
        fails[0]
    );
    assert!(
        fails[0].ends_with("(fix: git -C '<root>/wt1' recode hook install)"),
        "{}",
        fails[0]
    );
}

#[test]
fn two_config_dirs_of_one_account_fail_naming_both() {
    let env = TestEnv::new();
    let (repo, bin) = healthy(&env);
    for (d, uuid) in [
        ("acct-a", "uuid-1"),
        ("acct-b", "uuid-2"),
        ("acct-c", "uuid-1"),
    ] {
        let dir = env.root().join(d);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(".claude.json"),
            format!(r#"{{"oauthAccount": {{"accountUuid": "{uuid}", "emailAddress": "x@example.invalid"}}, "numStartups": 3}}"#),
        )
        .unwrap();
        env.git(
            &repo,
            &[
                "config",
                "--add",
                "recode.agentConfigDirs",
                dir.to_str().unwrap(),
            ],
        );
    }
    let (code, text) = doctor(&env, &repo, &bin, &[]);
    assert_eq!(code, 1, "{text}");
    let line = text.lines().find(|l| l.contains(" accounts ")).unwrap();
    assert!(
        line.starts_with("fail  accounts    <root>/acct-a and <root>/acct-c are logged into one account (uuid-1): they share one quota"),
        "{line}"
    );
    // Distinct accounts pass.
    env.git(
        &repo,
        &["config", "--unset", "recode.agentConfigDirs", "acct-c"],
    );
    let (code, text) = doctor(&env, &repo, &bin, &[]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("ok    accounts    2 directories, 2 distinct accounts\n"),
        "{text}"
    );
}

#[test]
fn an_invalid_value_and_a_missing_base_fail() {
    let env = TestEnv::new();
    let (repo, bin) = healthy(&env);
    env.git(&repo, &["config", "recode.base", "nope"]);
    env.git(&repo, &["config", "recode.gateTimeout", "10"]);
    let (code, text) = doctor(&env, &repo, &bin, &[]);
    assert_eq!(code, 1, "{text}");
    let fails: Vec<&str> = text.lines().filter(|l| l.starts_with("fail")).collect();
    assert_eq!(
        fails,
        vec![
            "fail  config      recode.gateTimeout = '10' is invalid: '10' has no unit: a duration is a number followed by s, m, h or d, like 10m (fix: git config recode.gateTimeout <value> (default: 30m))",
            "fail  config      config recode.base = 'nope' is invalid: no branch 'nope' here nor on 'origin' (set it to the branch work merges into, or unset it) (fix: git config recode.base <branch>, or git config --unset recode.base)",
        ]
    );
}

/// A `recode.hostTimeout` not above `recode.stallAfter` lets the other hosts take a live
/// host's workers over between two rewrites of its heartbeat: a warning, not a failure.
#[test]
fn a_host_timeout_within_the_heartbeat_rewrite_interval_is_warned() {
    let env = TestEnv::new();
    let (repo, bin) = healthy(&env);
    env.git(&repo, &["config", "recode.hostTimeout", "10m"]);
    let (code, text) = doctor(&env, &repo, &bin, &[]);
    assert_eq!(code, 0, "{text}");
    let config: Vec<&str> = text
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("config"))
        .collect();
    assert_eq!(
        config,
        vec![
            "warn  config      recode.hostTimeout (10m) is not more than recode.stallAfter (30m): a live host rewrites its heartbeat only every 15m, so the other hosts may take its live workers over (fix: git config recode.hostTimeout 2h (the default), or at least twice recode.stallAfter plus a loop tick)",
        ]
    );
    env.git(&repo, &["config", "recode.hostTimeout", "61m"]);
    let (_, text) = doctor(&env, &repo, &bin, &[]);
    assert!(
        text.contains("ok    config      every recode.* value is valid"),
        "{text}"
    );
}
