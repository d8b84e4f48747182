//! Proof before every irreversible step (SPEC 1.3), more places work hides: a sparse
//! checkout's file outside its patterns, stash entries whose reflog message is not git's
//! (`stash store -m`, a rebase's `autostash`), commits a reset left only in the branch's
//! reflog, a `.git` symlink to another checkout; and the WIP snapshot as one ref update
//! (SPEC 1.2), killed between building it and moving the branch.

use std::path::Path;

use crate::common::{ARM, LATER, TestEnv};
use crate::proof::{classify, dead_worker, recover, sar};

/// `git show <rev>:<path>` in `dir`, or `None`.
fn show(env: &TestEnv, dir: &Path, rev: &str, path: &str) -> Option<String> {
    let out = env
        .git_cmd(dir)
        .args(["show", &format!("{rev}:{path}")])
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `recover issue-5-x` at LATER, SIGKILLed at the failpoint `at`.
fn killed_recover(env: &TestEnv, repo: &Path, at: &str) {
    let out = env
        .cmd(repo)
        .args(["recover", "issue-5-x"])
        .env("RECODE_NOW", LATER)
        .env("RECODE_FAILPOINT", at)
        .env(ARM.0, ARM.1)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), None, "killed at {at}");
}

/// The worker's files `src/main.rs` and `docs/guide.md` committed, then a cone sparse
/// checkout of `src` (`extra`: more `sparse-checkout init` flags, `--sparse-index`).
fn sparse_layout(env: &TestEnv, wt: &Path, extra: &[&str]) {
    for (path, text) in [
        ("src/main.rs", "fn main() {}\n"),
        ("docs/guide.md", "guide\n"),
    ] {
        std::fs::create_dir_all(wt.join(path).parent().unwrap()).unwrap();
        std::fs::write(wt.join(path), text).unwrap();
    }
    env.git(wt, &["add", "."]);
    env.git(wt, &["commit", "-q", "-m", "layout"]);
    let mut init = vec!["sparse-checkout", "init", "--cone"];
    init.extend(extra);
    env.git(wt, &init);
    env.git(wt, &["sparse-checkout", "set", "src"]);
    assert!(!wt.join("docs/guide.md").exists());
}

#[test]
fn an_edit_outside_the_sparse_checkout_patterns_is_captured_by_the_wip_commit() {
    let env = TestEnv::new();
    let (repo, _, wt) = dead_worker(&env, None);
    sparse_layout(&env, &wt, &[]);
    // The agent wrote the file back and edited it; git status shows it modified.
    std::fs::create_dir_all(wt.join("docs")).unwrap();
    std::fs::write(wt.join("docs/guide.md"), "guide\nthe agent's fix\n").unwrap();
    std::fs::write(wt.join("docs/new.md"), "new\n").unwrap();
    let r = recover(&env, &repo);
    assert_eq!(
        (r["action"].as_str(), r["result"].as_str()),
        (Some("wip-commit"), Some("done")),
        "{r:#}"
    );
    assert_eq!(
        show(&env, &repo, "issue-5-x", "docs/guide.md").as_deref(),
        Some("guide\nthe agent's fix\n")
    );
    assert_eq!(
        show(&env, &repo, "issue-5-x", "docs/new.md").as_deref(),
        Some("new\n")
    );
    assert_eq!(env.git(&wt, &["status", "--porcelain"]), "");
}

#[test]
fn a_kill_between_building_the_snapshot_and_moving_the_branch_changes_nothing() {
    let env = TestEnv::new();
    let (repo, _, wt) = dead_worker(&env, None);
    std::fs::write(wt.join("README.md"), "staged\n").unwrap();
    env.git(&wt, &["add", "README.md"]);
    std::fs::write(wt.join("README.md"), "staged\nchanged again\n").unwrap();
    std::fs::write(wt.join("new.rs"), "new\n").unwrap();
    let tip = env.git(&repo, &["rev-parse", "issue-5-x"]);
    let index = env.git(
        &wt,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    );
    let index_before = std::fs::read(&index).unwrap();
    killed_recover(&env, &repo, "wip-commit");
    // The branch where it was, the worktree's index byte-identical.
    assert_eq!(env.git(&repo, &["rev-parse", "issue-5-x"]), tip);
    assert_eq!(std::fs::read(&index).unwrap(), index_before);
    assert_eq!(
        env.git(&wt, &["status", "--porcelain"]),
        "MM README.md\n?? new.rs"
    );
    // The next run makes the whole snapshot: the staged version and the worktree's.
    let r = recover(&env, &repo);
    assert_eq!(r["result"], "done", "{r:#}");
    let head = env.git(&repo, &["rev-parse", "issue-5-x"]);
    assert_eq!(
        show(&env, &repo, &head, "README.md").as_deref(),
        Some("staged\nchanged again\n")
    );
    assert_eq!(
        show(&env, &repo, &format!("{head}~1"), "README.md").as_deref(),
        Some("staged\n")
    );
    assert_eq!(env.git(&repo, &["rev-parse", &format!("{head}~2")]), tip);
    assert_eq!(env.git(&wt, &["status", "--porcelain"]), "");
}

#[test]
fn a_stash_stored_under_a_message_of_its_own_is_still_the_branchs_work() {
    let env = TestEnv::new();
    let (repo, _, wt) = dead_worker(&env, None);
    std::fs::write(wt.join("README.md"), "agent work\n").unwrap();
    let stash = env.git(&wt, &["stash", "create"]);
    env.git(&wt, &["stash", "store", "-m", "before the pull", &stash]);
    env.git(&wt, &["reset", "-q", "--hard"]);
    let (state, action, reason) = sar(&classify(&env, &repo));
    assert_eq!((state.as_str(), action.as_str()), ("half-done", "resume"));
    assert_eq!(
        reason,
        "nothing ahead and the worktree clean, but work made on issue-5-x sits in the stash: stash@{0} (before the pull); resume, so the agent applies it (`git stash list`)"
    );
    let r = recover(&env, &repo);
    assert_eq!(r["action"], "resume", "{r:#}");
    assert!(wt.is_dir());
    env.git(&repo, &["rev-parse", "--verify", "refs/heads/issue-5-x"]);
}

#[test]
fn commits_a_reset_left_only_in_the_branchs_reflog_are_not_empty() {
    let env = TestEnv::new();
    let (repo, _, wt) = dead_worker(&env, None);
    std::fs::write(wt.join("parser.rs"), "one\n").unwrap();
    env.git(&wt, &["add", "parser.rs"]);
    env.git(&wt, &["commit", "-q", "-m", "add parser"]);
    let work = env.git(&wt, &["rev-parse", "HEAD"]);
    env.git(&wt, &["reset", "-q", "--hard", "origin/main"]);
    let (state, action, reason) = sar(&classify(&env, &repo));
    assert_eq!((state.as_str(), action.as_str()), ("half-done", "resume"));
    assert_eq!(
        reason,
        format!(
            "nothing ahead and the worktree clean, but commits made on issue-5-x were dropped from it, only its reflog holds them: issue-5-x@{{1}} ({} add parser); resume, so the agent restores them (`git reflog show issue-5-x`)",
            &work[..12]
        )
    );
    // The resume prompt names them, and its facts hold them.
    let (_, doc, _) = env.json_later(&repo, &["resume", "issue-5-x", "--dry-run"]);
    let named = format!("issue-5-x@{{1}} ({} add parser)", &work[..12]);
    assert_eq!(doc["facts"]["reset_away"], serde_json::json!([named]));
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", LATER)
        .args(["resume", "issue-5-x", "--dry-run"])
        .output()
        .unwrap();
    let prompt = String::from_utf8_lossy(&out.stdout);
    assert!(prompt.contains("## Commits reset away"), "{prompt}");
    assert!(prompt.contains(&named), "{prompt}");
    recover(&env, &repo);
    env.git(&repo, &["rev-parse", "--verify", "refs/heads/issue-5-x"]);
    assert!(wt.is_dir());
    // Restored, amended and merged: the amend's original and the old reset are not counted.
    env.git(&wt, &["reset", "-q", "--hard", &work]);
    env.git(
        &wt,
        &["commit", "-q", "--amend", "-m", "add parser, amended"],
    );
    env.git(&wt, &["push", "-q", "origin", "issue-5-x:main"]);
    env.git(&repo, &["fetch", "-q", "origin"]);
    let (state, action, _) = sar(&classify(&env, &repo));
    assert_eq!((state.as_str(), action.as_str()), ("empty", "delete"));
}

#[test]
fn a_git_symlink_to_another_checkouts_git_dir_is_never_committed_into() {
    let env = TestEnv::new();
    let (repo, _, wt) = dead_worker(&env, None);
    std::fs::write(wt.join("README.md"), "agent work\n").unwrap();
    let main_before = env.git(&repo, &["rev-parse", "main"]);
    std::fs::remove_file(wt.join(".git")).unwrap();
    std::os::unix::fs::symlink(repo.join(".git"), wt.join(".git")).unwrap();
    let (state, action, _) = sar(&classify(&env, &repo));
    assert_eq!(
        (state.as_str(), action.as_str()),
        ("needs-human", "escalate")
    );
    recover(&env, &repo);
    assert_eq!(env.git(&repo, &["rev-parse", "main"]), main_before);
    assert_eq!(
        std::fs::read_to_string(wt.join("README.md")).unwrap(),
        "agent work\n"
    );
}

#[test]
fn a_kill_after_the_branch_moved_is_finished_by_the_next_run_without_a_commit_of_its_own() {
    let env = TestEnv::new();
    let (repo, _, wt) = dead_worker(&env, None);
    std::fs::write(wt.join("README.md"), "staged\n").unwrap();
    env.git(&wt, &["add", "README.md"]);
    std::fs::write(wt.join("README.md"), "staged\nchanged again\n").unwrap();
    std::fs::write(wt.join("new.rs"), "new\n").unwrap();
    killed_recover(&env, &repo, "wip-moved");
    // The branch at the whole snapshot; the worktree's index not yet in place.
    let snapshot = env.git(&repo, &["rev-parse", "issue-5-x"]);
    assert_eq!(
        show(&env, &repo, &snapshot, "new.rs").as_deref(),
        Some("new\n")
    );
    assert_ne!(env.git(&wt, &["status", "--porcelain"]), "");
    // The next run puts the index in place and pushes that snapshot: no commit of its own.
    let r = recover(&env, &repo);
    assert_eq!(r["result"], "done", "{r:#}");
    assert_eq!(env.git(&repo, &["rev-parse", "issue-5-x"]), snapshot);
    assert_eq!(env.git(&wt, &["status", "--porcelain"]), "");
    assert_eq!(
        env.git(&repo, &["ls-remote", "origin", "refs/heads/issue-5-x"]),
        format!("{snapshot}\trefs/heads/issue-5-x")
    );
}

/// Commits off the branch by whatever moved it, each `half-done`, named; squash-merged
/// work reset to the base lives on: `empty`.
#[test]
fn commits_dropped_by_update_ref_rebase_onto_or_a_fast_forward_are_not_empty() {
    let drops: [&[&[&str]]; 3] = [
        &[
            &["update-ref", "refs/heads/issue-5-x", "origin/main"],
            &["reset", "-q", "--hard"],
        ],
        &[&["rebase", "-q", "--onto", "origin/main", "HEAD"]],
        &[
            &["reset", "-q", "--hard", "origin/main"],
            &["merge", "-q", "--ff-only", "origin/main"],
        ],
    ];
    for steps in drops {
        let env = TestEnv::new();
        let (repo, _, wt) = dead_worker(&env, None);
        std::fs::write(wt.join("parser.rs"), "one\n").unwrap();
        env.git(&wt, &["add", "parser.rs"]);
        env.git(&wt, &["commit", "-q", "-m", "add parser"]);
        let work = env.git(&wt, &["rev-parse", "HEAD"]);
        for step in steps {
            env.git(&wt, step);
        }
        let (state, action, reason) = sar(&classify(&env, &repo));
        assert_eq!(
            (state.as_str(), action.as_str()),
            ("half-done", "resume"),
            "{steps:?}"
        );
        assert!(
            reason.contains(&format!("({} add parser)", &work[..12])),
            "{reason}"
        );
    }
    // Squash-merged into the base, then reset to it: its changes are there.
    let env = TestEnv::new();
    let (repo, _, wt) = dead_worker(&env, None);
    std::fs::write(wt.join("parser.rs"), "one\n").unwrap();
    env.git(&wt, &["add", "parser.rs"]);
    env.git(&wt, &["commit", "-q", "-m", "add parser"]);
    std::fs::write(wt.join("parser.rs"), "two\n").unwrap();
    env.git(&wt, &["commit", "-q", "-am", "parser two"]);
    env.git(&repo, &["merge", "-q", "--squash", "issue-5-x"]);
    env.git(&repo, &["commit", "-q", "-m", "squashed"]);
    env.git(&repo, &["push", "-q", "origin", "main"]);
    env.git(&wt, &["reset", "-q", "--hard", "origin/main"]);
    let (state, action, reason) = sar(&classify(&env, &repo));
    assert_eq!(
        (state.as_str(), action.as_str()),
        ("empty", "delete"),
        "{reason}"
    );
}

#[test]
fn a_staged_edit_under_a_sparse_index_is_read_and_wip_committed() {
    let env = TestEnv::new();
    let (repo, _, wt) = dead_worker(&env, None);
    sparse_layout(&env, &wt, &["--sparse-index"]);
    std::fs::write(wt.join("src/main.rs"), "fn main() { fix() }\n").unwrap();
    env.git(&wt, &["add", "src/main.rs"]);
    let w = classify(&env, &repo);
    assert_eq!(
        (
            w["state"].as_str(),
            w["action"].as_str(),
            &w["dirty"]["staged"]
        ),
        (Some("half-done"), Some("wip-commit"), &serde_json::json!(1)),
        "{w:#}"
    );
    let r = recover(&env, &repo);
    assert_eq!(r["result"], "done", "{r:#}");
    assert_eq!(
        show(&env, &repo, "issue-5-x", "src/main.rs").as_deref(),
        Some("fn main() { fix() }\n")
    );
}
