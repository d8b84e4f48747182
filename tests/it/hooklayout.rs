//! Hook layouts not covered in `hook.rs`: the hook git starts directly (no shell), husky 4,
//! and a plain `core.hooksPath` (absolute, relative) answered per worktree in a main
//! checkout and a linked worktree, with exact `hook status` output.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::common::TestEnv;
use crate::hookenv::*;

/// Add a linked worktree `<root>/<name>` on a new branch.
fn add_worktree(env: &TestEnv, repo: &Path, name: &str, branch: &str) -> PathBuf {
    let wt = env.root().join(name);
    env.git(
        repo,
        &["worktree", "add", "-q", "-b", branch, wt.to_str().unwrap()],
    );
    wt
}

fn write_exec(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `git-recode <args>` in `dir` with the binary under test first on PATH.
fn with_path(env: &TestEnv, dir: &Path, args: &[&str]) -> std::process::Output {
    isolated(
        env,
        assert_cmd::cargo::cargo_bin("git-recode"),
        dir,
        &path_with_bin(),
    )
    .args(args)
    .output()
    .unwrap()
}

#[test]
fn with_git_recode_on_path_the_hook_is_started_by_git_without_a_shell() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    hgit(&env, &repo, &["checkout", "-q", "-b", "issue-31"]);
    let hook = repo.join(".git/hooks/post-commit");
    let out = with_path(&env, &repo, &["hook", "install"]);
    assert_eq!(
        (stdout(&out), stderr(&out)),
        (format!("installed {}\n", hook.display()), String::new())
    );
    let exe = bin_dir().join("git-recode");
    let text = format!(
        "#!{}\n# BEGIN git-recode\n# git starts git-recode itself (no shell): it logs commits with a Recode-Phase: trailer as milestones\n# END git-recode\n",
        exe.display()
    );
    assert_eq!(snapshot(&hook), (text.into_bytes(), 0o755));
    assert_eq!(
        env.ok(&repo, &["hook", "status"]),
        format!("installed: {}\n", hook.display())
    );
    assert_eq!(
        stdout(&with_path(&env, &repo, &["hook", "install"])),
        format!("already installed in {}\n", hook.display())
    );
    // git runs it: a milestone is journaled (shown at once, ledgered by the next write),
    // an ordinary commit adds nothing.
    let head = commit(&env, &repo, "a", "a\n", "a\n\nRecode-Phase: scoped\n", &[]);
    commit(&env, &repo, "b", "b\n", "plain\n", &[]);
    assert_eq!(
        shown(&env, &repo, "issue-31"),
        milestone(0, "31", "issue-31", &head, "scoped", None)
    );
    assert_eq!(
        std::fs::read_to_string(repo.join(".git/recode/milestones.journal"))
            .unwrap()
            .lines()
            .count(),
        1
    );
    // Called by hand with the hook's path, as git does, it is the hook too.
    let again = env.output(&repo, &[hook.to_str().unwrap()]);
    assert_eq!(
        (again.status.code(), stderr(&again)),
        (Some(0), String::new())
    );
    assert_eq!(
        folded(&env, &repo, "31", "issue-31"),
        milestone(1, "31", "issue-31", &head, "scoped", None)
    );
    // Uninstall removes it.
    assert_eq!(
        env.ok(&repo, &["hook", "uninstall"]),
        format!("removed {}\n", hook.display())
    );
    assert!(!hook.exists());
}

const HUSKY4_HOOK: &str = "#!/bin/sh\n# husky\n\n# Hook created by Husky v4.3.8 (https://github.com/typicode/husky#readme)\n. \"$(dirname \"$0\")/husky.sh\"\n";

#[test]
fn husky4_gets_the_package_json_stanza_and_status_reads_each_worktrees_package_json() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    std::fs::write(
        repo.join("package.json"),
        "{\"name\": \"x\", \"husky\": {\"hooks\": {\"pre-commit\": \"lint\"}}}\n",
    )
    .unwrap();
    env.git(&repo, &["add", "package.json"]);
    env.git(&repo, &["commit", "-q", "-m", "husky 4"]);
    let hooks = repo.join(".git/hooks");
    let hook = hooks.join("post-commit");
    write_exec(&hook, HUSKY4_HOOK);
    let wt = add_worktree(&env, &repo, "wt", "issue-4");
    insta::assert_snapshot!(env.run(&wt, &["hook", "install", "--chain"]), @r#"
    "husky": {
      "hooks": {
        "post-commit": "git-recode hook post-commit"
      }
    }
    --- stderr ---
    error: <root>/r/.git/hooks/post-commit is run by husky 4, configured in package.json
    hint: add the stanza printed above to package.json (merge into an existing "husky" key)
    hint: `git recode hook status` will then report: installed: husky 4 (<root>/r/.git/hooks/post-commit runs package.json's husky.hooks.post-commit)
    [exit status: 3]
    "#);
    assert_eq!(std::fs::read_to_string(&hook).unwrap(), HUSKY4_HOOK);
    // The stanza added in the main checkout only (not committed): the linked worktree's
    // package.json still lacks it.
    std::fs::write(
        repo.join("package.json"),
        "{\"name\": \"x\", \"husky\": {\"hooks\": {\"pre-commit\": \"lint\", \"post-commit\": \"git-recode hook post-commit\"}}}\n",
    )
    .unwrap();
    insta::assert_snapshot!(env.run(&repo, &["hook", "status"]), @"
    installed: husky 4 (<root>/r/.git/hooks/post-commit runs package.json's husky.hooks.post-commit)
      <root>/r: reached via husky 4 (<root>/r/.git/hooks/post-commit runs package.json's husky.hooks.post-commit)
      <root>/wt: not reached: husky 4 runs <root>/r/.git/hooks/post-commit, and package.json's husky.hooks.post-commit does not call git-recode hook post-commit
    --- stderr ---
    [exit status: 0]
    ");
    insta::assert_snapshot!(env.run(&wt, &["hook", "status"]), @"
    not installed: husky 4 runs <root>/r/.git/hooks/post-commit, and package.json's husky.hooks.post-commit does not call git-recode hook post-commit
      <root>/r: reached via husky 4 (<root>/r/.git/hooks/post-commit runs package.json's husky.hooks.post-commit)
      <root>/wt: not reached: husky 4 runs <root>/r/.git/hooks/post-commit, and package.json's husky.hooks.post-commit does not call git-recode hook post-commit
    --- stderr ---
    [exit status: 0]
    ");
}

#[test]
fn an_absolute_hooks_path_is_answered_alike_in_the_main_checkout_and_a_linked_worktree() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let shared = env.root().join("shared/hooks");
    env.git(
        &repo,
        &["config", "core.hooksPath", shared.to_str().unwrap()],
    );
    let wt = add_worktree(&env, &repo, "wt", "issue-6");
    assert_eq!(
        env.ok(&wt, &["hook", "install"]),
        format!("installed {}\n", shared.join("post-commit").display())
    );
    let alike = env.run(&repo, &["hook", "status"]);
    insta::assert_snapshot!(alike, @"
    installed: <root>/shared/hooks/post-commit
      <root>/r: reached via <root>/shared/hooks/post-commit
      <root>/wt: reached via <root>/shared/hooks/post-commit
    --- stderr ---
    [exit status: 0]
    ");
    assert_eq!(env.run(&wt, &["hook", "status"]), alike);
    let head = commit(&env, &wt, "f", "x\n", "f\n\nRecode-Phase: scoped\n", &[]);
    assert_eq!(
        shown(&env, &repo, "issue-6"),
        milestone(0, "6", "issue-6", &head, "scoped", None)
    );
    assert_eq!(
        folded(&env, &repo, "6", "issue-6"),
        milestone(1, "6", "issue-6", &head, "scoped", None)
    );
}

#[test]
fn a_relative_hooks_path_is_each_worktrees_own_directory() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.git(&repo, &["config", "core.hooksPath", "githooks"]);
    // The linked worktree's branch starts before the hook is committed.
    let wt = add_worktree(&env, &repo, "wt", "issue-3");
    write_exec(
        &repo.join("githooks/post-commit"),
        "#!/bin/sh\ngit-recode hook post-commit || true\n",
    );
    env.git(&repo, &["add", "githooks/post-commit"]);
    env.git(&repo, &["commit", "-q", "--no-verify", "-m", "hooks"]);
    insta::assert_snapshot!(env.run(&repo, &["hook", "status"]), @"
    installed: <root>/r/githooks/post-commit (which calls git-recode hook post-commit)
      <root>/r: reached via <root>/r/githooks/post-commit (which calls git-recode hook post-commit)
      <root>/wt: not reached: core.hooksPath githooks does not exist in this worktree (<root>/wt/githooks): git runs no hooks here, so milestones are lost
    --- stderr ---
    [exit status: 0]
    ");
    insta::assert_snapshot!(env.run(&wt, &["hook", "status"]), @"
    not installed: core.hooksPath githooks does not exist in this worktree (<root>/wt/githooks): git runs no hooks here, so milestones are lost
      <root>/r: reached via <root>/r/githooks/post-commit (which calls git-recode hook post-commit)
      <root>/wt: not reached: core.hooksPath githooks does not exist in this worktree (<root>/wt/githooks): git runs no hooks here, so milestones are lost
    --- stderr ---
    [exit status: 0]
    ");
    // Once the branch has the hook (merged in), the worktree reaches it.
    env.git(&wt, &["merge", "-q", "--ff-only", "main"]);
    assert_eq!(
        env.ok(&wt, &["hook", "status"]),
        "installed: <root>/wt/githooks/post-commit (which calls git-recode hook post-commit)\n  \
         <root>/r: reached via <root>/r/githooks/post-commit (which calls git-recode hook post-commit)\n  \
         <root>/wt: reached via <root>/wt/githooks/post-commit (which calls git-recode hook post-commit)\n"
            .replace("<root>", &env.root().display().to_string())
    );
}
