//! Milestones the hook could not write are picked up from their commits' trailers:
//! shown by `status`, `classify` and `log` (which write nothing), ledgered by the next
//! ledger write; `status` warns once when workers' worktrees do not reach the hook.

use std::path::{Path, PathBuf};

use crate::common::TestEnv;
use crate::hookenv::*;

/// A repository with the hook installed in the common hooks directory, and a linked
/// worktree `<root>/wt7` on `issue-7` whose own `core.hooksPath` (worktree config) names a
/// directory that does not exist: commits there run no hook.
fn unreached(env: &TestEnv) -> (PathBuf, PathBuf) {
    let repo = env.repo("r");
    env.ok(&repo, &["hook", "install"]);
    let wt = env.root().join("wt7");
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-7",
            wt.to_str().unwrap(),
        ],
    );
    env.git(&repo, &["config", "extensions.worktreeConfig", "true"]);
    env.git(
        &wt,
        &["config", "--worktree", "core.hooksPath", "missing-hooks"],
    );
    (repo, wt)
}

/// The `log --json` line of a milestone picked up from commit `head` (committer time
/// @1795000000, second precision), with `seq` as given (0: shown, not ledgered).
fn picked(seq: u32, head: &str, phase: &str) -> String {
    format!(
        "{{\"branch\":\"issue-7\",\"head\":\"{head}\",\"kind\":\"milestone\",\"phase\":\"{phase}\",\"seq\":{seq},\"task\":\"7\",\"ts\":\"2026-11-18T11:06:40.000Z\",\"v\":1}}"
    )
}

fn status_json(env: &TestEnv, dir: &Path) -> (serde_json::Value, String) {
    let out = env.output(dir, &["status", "--json", "--offline"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (serde_json::from_slice(&out.stdout).unwrap(), stderr(&out))
}

#[test]
fn a_milestone_no_hook_wrote_is_shown_by_reads_and_ledgered_by_the_next_write() {
    let env = TestEnv::new();
    let (repo, wt) = unreached(&env);
    commit(
        &env,
        &wt,
        "a",
        "a\n",
        "scope\n\nRecode-Phase: scoped\n",
        &[],
    );
    let plain = commit(&env, &wt, "b", "b\n", "plain work\n", &[]);
    let head = commit(
        &env,
        &wt,
        "c",
        "c\n",
        "tests\n\nRecode-Phase: tests-green\n",
        &[],
    );
    let first = env.git(&wt, &["rev-parse", "HEAD~2"]);
    assert_ne!(plain, head);
    assert_eq!(ledger(&env, &repo, "7"), "", "no hook ran in wt7");

    // Reads show both milestones from the trailers, oldest first, and write nothing.
    assert_eq!(
        env.ok(&repo, &["log", "issue-7", "--json"]),
        format!(
            "{}\n{}\n",
            picked(0, &first, "scoped"),
            picked(0, &head, "tests-green")
        )
    );
    assert_eq!(
        env.ok(&repo, &["log"]),
        format!(
            "2026-11-18T11:06:40.000Z  7      #0   milestone  head={first} phase=scoped (from the commit's trailer: not ledgered yet)\n\
             2026-11-18T11:06:40.000Z  7      #0   milestone  head={head} phase=tests-green (from the commit's trailer: not ledgered yet)\n"
        )
    );
    let (v, _) = status_json(&env, &repo);
    let w = &v["workers"][0];
    assert_eq!(
        (&w["task"], &w["phase"], &w["state"], &w["action"]),
        (
            &serde_json::json!("7"),
            &serde_json::json!("tests-green"),
            &serde_json::json!("publishable"),
            &serde_json::json!("publish")
        )
    );
    let c: serde_json::Value =
        serde_json::from_str(&env.ok(&repo, &["classify", "issue-7", "--json", "--offline"]))
            .unwrap();
    assert_eq!(c["phase"], "tests-green");
    assert_eq!(ledger(&env, &repo, "7"), "", "reads write nothing");

    // The next ledger write for the branch ledgers them first, with their commit times.
    env.ok(&repo, &["record", "gate", "issue-7", "--failed"]);
    let lines: Vec<String> = ledger(&env, &repo, "7")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0], picked(1, &first, "scoped"));
    assert_eq!(lines[1], picked(2, &head, "tests-green"));
    assert!(lines[2].contains("\"kind\":\"gate\""), "{}", lines[2]);
    assert!(lines[2].contains("\"seq\":3"), "{}", lines[2]);
    // Nothing is shown twice, and a second write adds nothing more.
    assert_eq!(
        env.ok(&repo, &["log", "issue-7", "--json"]).lines().count(),
        3
    );
    env.ok(&repo, &["record", "unblock", "issue-7"]);
    assert_eq!(ledger(&env, &repo, "7").lines().count(), 4);
}

#[test]
fn a_milestone_journaled_under_a_busy_ledger_is_ledgered_by_record_exit() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    hgit(&env, &repo, &["checkout", "-q", "-b", "issue-8"]);
    env.ok(&repo, &["hook", "install"]);
    std::fs::create_dir_all(repo.join(".git/refs/notes")).unwrap();
    let lock = repo.join(".git/refs/notes/recode.lock");
    std::fs::write(&lock, "").unwrap();
    let head = commit(
        &env,
        &repo,
        "a",
        "a\n",
        "x\n\nRecode-Phase: implemented\n",
        &[],
    );
    // Shown at once, from the journal (the hook's exact time), while the lock is held.
    assert_eq!(
        shown(&env, &repo, "issue-8"),
        milestone(0, "8", "issue-8", &head, "implemented", None)
    );
    std::fs::remove_file(&lock).unwrap();
    assert_eq!(ledger(&env, &repo, "8"), "");
    env.ok(&repo, &["record", "exit", "issue-8", "--rc", "1"]);
    let lines: Vec<String> = ledger(&env, &repo, "8")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(
        lines[0],
        milestone(1, "8", "issue-8", &head, "implemented", None)
    );
    assert!(lines[1].contains("\"kind\":\"exit\""), "{}", lines[1]);
}

#[test]
fn status_warns_once_when_workers_worktrees_do_not_reach_the_hook() {
    let env = TestEnv::new();
    let (repo, wt) = unreached(&env);
    let (v, err) = status_json(&env, &repo);
    assert_eq!(v["workers"].as_array().unwrap().len(), 1);
    let root = env.root().display().to_string();
    assert_eq!(
        err,
        format!(
            "warning: commits in 1 worker worktree do not reach the milestone hook ({root}/wt7: core.hooksPath missing-hooks does not exist in this worktree ({root}/wt7/missing-hooks): git runs no hooks here, so milestones are lost): their milestones are ledgered late, from their trailers; see `git recode hook status`\n"
        )
    );
    // Porcelain and the table warn the same, once.
    let out = env.output(&repo, &["status", "--porcelain", "--offline"]);
    assert_eq!(stderr(&out).lines().count(), 1);
    // Once the worktree reaches the hook, no warning.
    std::fs::create_dir_all(wt.join("missing-hooks")).unwrap();
    std::fs::write(wt.join("missing-hooks/post-commit"), PLAIN_SCRIPT).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        wt.join("missing-hooks/post-commit"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    assert_eq!(status_json(&env, &repo).1, "");
    // No hook anywhere: the hook is not in use, nothing to warn about.
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.git(&repo, &["branch", "issue-9"]);
    let wt = env.root().join("wt9");
    env.git(
        &repo,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "issue-9"],
    );
    assert_eq!(status_json(&env, &repo).1, "");
}
