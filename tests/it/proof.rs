//! Proof before every irreversible step (SPEC 1.3), each kind end to end with the real
//! binary and real git: work only a stash holds, changes an index flag or a stale
//! file-system monitor hides, a worktree whose `.git` leads to another repository, a branch
//! whose upstream is the base, and a checkout whose worktree registration is gone.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::TestEnv;

/// A repository with an origin and one dead worker `issue-5-x` in `<root>/wt5` (exited
/// rc 143); returns the repository, the origin and the worktree.
pub(crate) fn dead_worker(env: &TestEnv, from: Option<&str>) -> (PathBuf, PathBuf, PathBuf) {
    let (repo, origin) = env.repo_with_origin();
    let wt = env.root().join("wt5");
    let mut args = vec![
        "worktree",
        "add",
        "-q",
        "-b",
        "issue-5-x",
        wt.to_str().unwrap(),
    ];
    args.extend(from);
    env.git(&repo, &args);
    env.record(&repo, &["spawn", "issue-5-x"]);
    env.record(&repo, &["exit", "issue-5-x", "--rc", "143"]);
    (repo, origin, wt)
}

/// The worker of `classify --json` at LATER.
pub(crate) fn classify(env: &TestEnv, repo: &Path) -> Value {
    env.json_later(repo, &["classify", "issue-5-x"]).1
}

/// The first result of `recover issue-5-x --json` at LATER.
pub(crate) fn recover(env: &TestEnv, repo: &Path) -> Value {
    let (_, doc, _) = env.json_later(repo, &["recover", "issue-5-x"]);
    doc["results"][0].clone()
}

pub(crate) fn sar(w: &Value) -> (String, String, String) {
    let s = |k: &str| w[k].as_str().unwrap_or_default().to_string();
    (s("state"), s("action"), s("reason"))
}

#[test]
fn work_only_a_stash_made_on_the_branch_holds_is_half_done_never_deleted() {
    let env = TestEnv::new();
    let (repo, _, wt) = dead_worker(&env, None);
    std::fs::write(wt.join("README.md"), "agent work\n").unwrap();
    std::fs::write(wt.join("parser.rs"), "new\n").unwrap();
    env.git(&wt, &["stash", "push", "-u", "-q", "-m", "check baseline"]);
    let w = classify(&env, &repo);
    assert_eq!(
        sar(&w),
        (
            "half-done".into(),
            "resume".into(),
            "nothing ahead and the worktree clean, but work made on issue-5-x sits in the stash: stash@{0} (On issue-5-x: check baseline); resume, so the agent applies it (`git stash list`)".into()
        )
    );
    assert_eq!(recover(&env, &repo)["result"], "skipped");
    assert!(wt.is_dir());
    assert!(
        !env.git(&repo, &["rev-parse", "--verify", "issue-5-x"])
            .is_empty()
    );
    // A stash made on another branch is not this worker's: empty, deleted.
    env.git(&wt, &["stash", "drop", "-q"]);
    std::fs::write(repo.join("README.md"), "the user's own\n").unwrap();
    env.git(&repo, &["stash", "push", "-q", "-m", "x"]);
    assert_eq!(sar(&classify(&env, &repo)).0, "empty");
}

#[test]
fn a_change_under_assume_unchanged_is_counted_named_and_wip_committed() {
    let env = TestEnv::new();
    let (repo, _, wt) = dead_worker(&env, None);
    env.git(&wt, &["update-index", "--assume-unchanged", "README.md"]);
    std::fs::write(wt.join("README.md"), "hidden edit\n").unwrap();
    assert_eq!(env.git(&wt, &["status", "--porcelain"]), "", "git hides it");
    let w = classify(&env, &repo);
    assert_eq!(w["dirty"]["unstaged"], 1);
    assert_eq!(
        sar(&w),
        (
            "half-done".into(),
            "wip-commit".into(),
            "1 uncommitted file (0 staged, 1 unstaged, 0 untracked); hidden from git status by an index flag: README.md (assume-unchanged); no gate result for the head".into()
        )
    );
    let r = recover(&env, &repo);
    assert_eq!(r["result"], "done", "{r}");
    assert_eq!(
        env.git(&repo, &["show", "issue-5-x:README.md"]),
        "hidden edit"
    );
    // The flag is put back.
    assert!(
        env.git(&wt, &["ls-files", "-v", "README.md"])
            .starts_with("h ")
    );
}

#[test]
fn a_stale_fsmonitor_hides_nothing_from_the_wip_commit() {
    let env = TestEnv::new();
    let (repo, _, wt) = dead_worker(&env, None);
    let hook = env.root().join("fsmonitor-hook");
    std::fs::write(&hook, "#!/bin/sh\nprintf 'tok-1\\0'\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    env.git(&repo, &["config", "core.fsmonitor", hook.to_str().unwrap()]);
    env.git(&repo, &["config", "core.untrackedCache", "true"]);
    env.git(&wt, &["update-index", "--fsmonitor"]);
    env.git(&wt, &["status", "--porcelain"]);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    std::fs::write(wt.join("README.md"), "the agent's fix\n").unwrap();
    assert_eq!(
        env.git(&wt, &["status", "--porcelain"]),
        "",
        "the monitor hides it"
    );
    assert_eq!(sar(&classify(&env, &repo)).1, "wip-commit");
    let r = recover(&env, &repo);
    assert_eq!(r["result"], "done", "{r}");
    assert_eq!(
        env.git(&repo, &["show", "issue-5-x:README.md"]),
        "the agent's fix"
    );
}

#[test]
fn a_worktree_whose_git_leads_to_another_repository_is_needs_human_and_never_committed_into() {
    let env = TestEnv::new();
    let (repo, _, wt) = dead_worker(&env, None);
    std::fs::write(wt.join("c.txt"), "c\n").unwrap();
    let admin = env.git(&wt, &["rev-parse", "--absolute-git-dir"]);
    std::fs::remove_file(wt.join(".git")).unwrap();
    env.git(&wt, &["init", "-q", "."]);
    let w = classify(&env, &repo);
    let wt_s = std::fs::canonicalize(&wt).unwrap().display().to_string();
    assert_eq!(
        sar(&w),
        (
            "needs-human".into(),
            "escalate".into(),
            format!(
                "the worktree {wt_s} no longer leads to this repository: its .git leads to {wt_s}/.git, while this repository lists {admin} for it; nothing is read or committed there (put its `.git` file back, `gitdir: {admin}`, or move that repository away)"
            )
        )
    );
    assert_eq!(w["dirty"], Value::Null);
    recover(&env, &repo);
    let made = env
        .git_cmd(&wt)
        .args(["rev-list", "--all"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&made.stdout),
        "",
        "nothing committed there"
    );
}

#[test]
fn a_branch_tracking_the_base_pushes_its_wip_to_its_own_name() {
    let env = TestEnv::new();
    let (repo, origin, wt) = dead_worker(&env, Some("origin/main"));
    env.git(&repo, &["config", "recode.forge", "none"]);
    let main0 = env.git(&origin, &["rev-parse", "main"]);
    std::fs::write(wt.join("b.txt"), "two\n").unwrap();
    let r = recover(&env, &repo);
    assert_eq!(r["result"], "done", "{r}");
    let tip = env.git(&repo, &["rev-parse", "issue-5-x"]);
    assert_eq!(env.git(&origin, &["rev-parse", "issue-5-x"]), tip);
    assert_eq!(env.git(&origin, &["rev-parse", "main"]), main0);
    // On the remote and not in what is pushed: held, naming it.
    let other = env.git(
        &repo,
        &["commit-tree", "main^{tree}", "-p", "main", "-m", "o"],
    );
    env.git(
        &repo,
        &[
            "push",
            "-q",
            "-f",
            "origin",
            &format!("{other}:refs/heads/issue-5-x"),
        ],
    );
    std::fs::write(wt.join("c.txt"), "three\n").unwrap();
    let r = recover(&env, &repo);
    assert_eq!(r["result"], "held", "{r}");
    assert!(
        r["reason"].as_str().unwrap().contains(&format!(
            "push held: issue-5-x exists on the remote 'origin' at {}, which is not in what would be pushed",
            &other[..12]
        )),
        "{r}"
    );
}

#[test]
fn a_checkout_whose_registration_is_gone_is_registered_again_with_its_content() {
    let env = TestEnv::new();
    let (repo, _, wt) = dead_worker(&env, None);
    std::fs::write(wt.join("c.txt"), "committed\n").unwrap();
    env.git(&wt, &["add", "c.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "commit 1"]);
    std::fs::write(wt.join("notes.txt"), "precious, uncommitted\n").unwrap();
    let away = env.root().join("away");
    std::fs::rename(&wt, &away).unwrap();
    env.git(&repo, &["worktree", "prune"]);
    std::fs::rename(&away, &wt).unwrap();
    let wt_s = std::fs::canonicalize(&wt).unwrap().display().to_string();
    let w = classify(&env, &repo);
    assert_eq!(
        (sar(&w).0, sar(&w).1),
        ("needs-human".into(), "escalate".into())
    );
    assert!(
        sar(&w).2.starts_with(&format!(
            "{wt_s} holds a checkout of issue-5-x whose worktree registration is gone"
        )),
        "{w}"
    );
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", crate::common::LATER)
        .args(["resume", "issue-5-x"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "refused until recover registers it"
    );
    let r = recover(&env, &repo);
    assert_eq!(r["result"], "done", "{r}");
    assert_eq!(env.git(&wt, &["status", "--porcelain"]), "?? notes.txt");
    assert_eq!(
        std::fs::read_to_string(wt.join("notes.txt")).unwrap(),
        "precious, uncommitted\n"
    );
    let w = classify(&env, &repo);
    assert_eq!(
        (sar(&w).0, sar(&w).1),
        ("half-done".into(), "wip-commit".into()),
        "{w}"
    );
    // No escalation stands: the next tick goes on.
    assert!(
        !env.run(&repo, &["log", "issue-5-x"])
            .contains(" escalated ")
    );
}
