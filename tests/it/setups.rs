//! The set-ups real loops run in (SPEC 1.3 "Errors a newcomer meets (more)"): no git
//! identity, a default branch renamed on the server, a hand-written branch pattern, a hook
//! whose interpreter moved, a deploy key in `core.sshCommand`, an agent CLI that cannot
//! start. Each works, or `doctor` names it with its exact fix.

use std::path::{Path, PathBuf};

use crate::common::{LATER, TestEnv};
use crate::newcomer::{make_executable, stand_in_agent, with_agent};

/// `git-recode <args>` in `dir` with the stand-in agent and `git-recode` on PATH,
/// `RECODE_NOW` at [`LATER`], and `unset` removed from the environment: (exit code,
/// stdout, stderr), the temp root shown as `<root>`.
fn run(env: &TestEnv, dir: &Path, args: &[&str], unset: &[&str]) -> (i32, String, String) {
    let exe = assert_cmd::cargo::cargo_bin("git-recode");
    let bin = env.root().join("agent-bin");
    let mut cmd = with_agent(env, dir, exe.to_str().unwrap(), &bin);
    cmd.env("RECODE_NOW", LATER).args(args);
    for k in unset {
        cmd.env_remove(k);
    }
    let out = cmd.output().unwrap();
    let root = env.root().display().to_string();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).replace(&root, "<root>"),
        String::from_utf8_lossy(&out.stderr).replace(&root, "<root>"),
    )
}

/// The one `doctor` line of `check` (a check with several lines: the first).
fn doctor_line(env: &TestEnv, dir: &Path, check: &str, unset: &[&str]) -> String {
    let (_, out, _) = run(env, dir, &["doctor"], unset);
    out.lines()
        .find(|l| l.split_whitespace().nth(1) == Some(check))
        .unwrap_or_else(|| panic!("no {check} line in:\n{out}"))
        .to_string()
}

const IDENTITY: &[&str] = &[
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "EMAIL",
];

#[test]
fn with_no_git_identity_the_ledger_and_a_wip_commit_work_and_doctor_warns() {
    let env = TestEnv::new();
    stand_in_agent(&env);
    let repo = env.repo("r");
    // No identity at any scope, and no guessing from the host name (as in a container).
    env.git(&repo, &["config", "user.useConfigOnly", "true"]);
    let wt = env.root().join("wt43");
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-43",
            wt.to_str().unwrap(),
        ],
    );
    let (code, _, err) = run(&env, &repo, &["record", "spawn", "issue-43"], IDENTITY);
    assert_eq!(code, 0, "{err}");
    std::fs::write(wt.join("w.txt"), "work in progress\n").unwrap();
    let (code, _, err) = run(
        &env,
        &repo,
        &["record", "exit", "issue-43", "--rc", "143"],
        IDENTITY,
    );
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(&env, &repo, &["recover", "issue-43", "--json"], IDENTITY);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["results"][0]["action"], "wip-commit", "{out}");
    // Made, and held for want of a remote (nothing to push to).
    assert_eq!(v["results"][0]["result"], "held", "{out}");
    assert!(
        v["results"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("WIP commit "),
        "{out}"
    );
    // The ledger's commits and the WIP commit carry git-recode's own identity.
    assert_eq!(
        env.git(
            &repo,
            &[
                "log",
                "-1",
                "--format=%an <%ae>|%cn <%ce>",
                "refs/notes/recode"
            ]
        ),
        "git-recode <git-recode@localhost>|git-recode <git-recode@localhost>"
    );
    assert_eq!(
        env.git(&repo, &["log", "-1", "--format=%an|%cn", "issue-43"]),
        "git-recode|git-recode"
    );
    assert_eq!(
        doctor_line(&env, &repo, "identity", IDENTITY),
        "warn  identity    git has no author nor committer identity (no email was given and auto-detection is disabled): the agent's own commits will fail; git-recode's ledger still works (its commits carry the identity git-recode <git-recode@localhost>) (fix: git config --global user.name 'Your Name' && git config --global user.email you@example.com (or set GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, GIT_COMMITTER_NAME, GIT_COMMITTER_EMAIL in the loop's environment))"
    );
    // With an identity, the ledger still writes its own; doctor is content.
    assert_eq!(
        doctor_line(&env, &repo, "identity", &[]),
        "ok    identity    git finds an author and a committer for commits here"
    );
}

/// A clone whose server renamed `master` to `main` after the clone set `origin/HEAD`,
/// followed by the host's advice (`branch -m`, `fetch --prune`, `branch -u`): `origin/HEAD`
/// is left dangling at `origin/master`. A worker `issue-21` with no commit of its own.
fn renamed_default_branch(env: &TestEnv) -> PathBuf {
    let origin = env.root().join("origin.git");
    env.git(
        &env.root(),
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "master",
            origin.to_str().unwrap(),
        ],
    );
    let repo = env.root().join("r");
    env.git(
        &env.root(),
        &[
            "clone",
            "-q",
            origin.to_str().unwrap(),
            repo.to_str().unwrap(),
        ],
    );
    env.git(&repo, &["symbolic-ref", "HEAD", "refs/heads/master"]);
    for i in 0..4 {
        std::fs::write(repo.join("f.txt"), format!("{i}\n")).unwrap();
        env.git(&repo, &["add", "f.txt"]);
        env.git(&repo, &["commit", "-q", "-m", &format!("c{i}")]);
    }
    env.git(&repo, &["push", "-q", "origin", "master"]);
    env.git(&repo, &["remote", "set-head", "origin", "-a"]);
    env.git(&repo, &["push", "-q", "origin", "master:main"]);
    env.git(&origin, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    env.git(&repo, &["push", "-q", "origin", ":master"]);
    env.git(&repo, &["branch", "-m", "master", "main"]);
    env.git(&repo, &["fetch", "-q", "--prune", "origin"]);
    env.git(&repo, &["branch", "-q", "-u", "origin/main", "main"]);
    let wt = env.root().join("wt21");
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-21",
            wt.to_str().unwrap(),
        ],
    );
    repo
}

#[test]
fn a_dangling_origin_head_is_passed_over_and_doctor_warns() {
    let env = TestEnv::new();
    stand_in_agent(&env);
    let repo = renamed_default_branch(&env);
    assert_eq!(
        env.git(&repo, &["symbolic-ref", "refs/remotes/origin/HEAD"]),
        "refs/remotes/origin/master"
    );
    for args in [
        &["record", "spawn", "issue-21"][..],
        &["record", "exit", "issue-21", "--rc", "1"],
    ] {
        assert_eq!(run(&env, &repo, args, &[]).0, 0);
    }
    let (code, out, err) = run(&env, &repo, &["classify", "issue-21", "--json"], &[]);
    assert_eq!(code, 0, "{err}");
    let w: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (&w["base"], &w["ahead"], &w["state"], &w["action"]),
        (
            &serde_json::json!("main"),
            &serde_json::json!(0),
            &serde_json::json!("empty"),
            &serde_json::json!("delete")
        ),
        "{out}"
    );
    assert_eq!(
        doctor_line(&env, &repo, "config", &[]),
        "warn  config      refs/remotes/origin/HEAD points at refs/remotes/origin/master, which does not exist (the branch was renamed or deleted on 'origin'): it is not used, the base is 'main' (fix: git remote set-head origin -a)"
    );
    // The fix, as printed, clears it.
    env.git(&repo, &["remote", "set-head", "origin", "-a"]);
    assert_eq!(
        doctor_line(&env, &repo, "config", &[]),
        "ok    config      every recode.* value is valid"
    );
}

#[test]
fn a_branch_pattern_without_a_task_group_is_refused_by_every_command_and_doctor() {
    let env = TestEnv::new();
    stand_in_agent(&env);
    let repo = env.repo("r");
    env.git(&repo, &["branch", "issue-7"]);
    env.git(&repo, &["config", "recode.branchPattern", "issue-[0-9]+"]);
    let want = "error: config recode.branchPattern = 'issue-[0-9]+' is invalid: it has no task group: write the task key's part as (?P<task>...), as the default does: (?:^|/)issue-(?P<task>[0-9]+)(?:-|$)";
    for args in [
        &["status"][..],
        &["status", "--json"],
        &["classify", "issue-7"],
        &["record", "spawn", "issue-7"],
        &["record", "exit", "issue-7", "--rc", "1"],
        &["recover", "--all"],
        &["resume", "issue-7", "--dry-run"],
        &["log"],
        &["report"],
        &["sync"],
    ] {
        let (code, _, err) = run(&env, &repo, args, &[]);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert_eq!(err.lines().next(), Some(want), "{args:?}: {err}");
    }
    assert_eq!(
        doctor_line(&env, &repo, "config", &[]),
        "fail  config      recode.branchPattern = 'issue-[0-9]+' is invalid: it has no task group: write the task key's part as (?P<task>...), as the default does: (?:^|/)issue-(?P<task>[0-9]+)(?:-|$) (fix: git config recode.branchPattern <value> (default: (?:^|/)issue-(?P<task>[0-9]+)(?:-|$)))"
    );
    // With the group, it works.
    env.git(
        &repo,
        &["config", "recode.branchPattern", "issue-(?P<task>[0-9]+)"],
    );
    let (code, out, err) = run(&env, &repo, &["status", "--porcelain"], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("7\tissue-7\t"), "{out}");
}

/// Our hook in `repo`, written as a direct hook of an earlier install whose binary has
/// moved since (an upgrade): `#!<root>/old/bin/git-recode`.
fn moved_direct_hook(env: &TestEnv, repo: &Path) -> PathBuf {
    let hook = repo.join(".git/hooks/post-commit");
    let old = env.root().join("old/bin/git-recode");
    let (code, _, err) = run(env, repo, &["hook", "install"], &[]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&hook).unwrap();
    let first = text.lines().next().unwrap().to_string();
    assert!(
        first.starts_with("#!/") && first.ends_with("/git-recode"),
        "{text}"
    );
    std::fs::write(&hook, text.replace(&first, &format!("#!{}", old.display()))).unwrap();
    hook
}

#[test]
fn a_hook_whose_binary_moved_is_named_by_status_and_doctor_and_install_repairs_it() {
    let env = TestEnv::new();
    stand_in_agent(&env);
    let repo = env.repo("r");
    let hook = moved_direct_hook(&env, &repo);
    let why = "<root>/r/.git/hooks/post-commit starts <root>/old/bin/git-recode, which does not exist (moved by an upgrade?): every commit prints \"cannot exec\" and no milestone is ledgered";
    let (_, out, _) = run(&env, &repo, &["hook", "status"], &[]);
    assert_eq!(out, format!("not installed: {why}\n"));
    assert_eq!(
        doctor_line(&env, &repo, "hook", &[]),
        format!(
            "fail  hook        a commit in <root>/r does not reach the milestone hook: {why} (fix: git -C '<root>/r' recode hook install)"
        )
    );
    // The fix, as printed, repairs it (no "already installed").
    let (code, out, err) = run(
        &env,
        &repo,
        &["-C", repo.to_str().unwrap(), "hook", "install"],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        format!("repaired <root>/r/.git/hooks/post-commit (it did not run: {why})\n")
    );
    let exe = assert_cmd::cargo::cargo_bin("git-recode");
    assert_eq!(
        std::fs::read_to_string(&hook).unwrap().lines().next(),
        Some(format!("#!{}", exe.display()).as_str())
    );
    let (_, out, _) = run(&env, &repo, &["hook", "status"], &[]);
    assert_eq!(out, "installed: <root>/r/.git/hooks/post-commit\n");
    assert!(doctor_line(&env, &repo, "hook", &[]).starts_with("ok    hook        "),);
}

#[test]
fn a_tools_hook_whose_interpreter_moved_is_refused_with_the_fix_not_reported_installed() {
    // A hook another tool wrote (a Python script calling us), its interpreter gone after
    // an upgrade of that tool: never "already installed", and the fix doctor prints is
    // one `hook install` does not refuse.
    let env = TestEnv::new();
    let repo = env.repo("r");
    let hook = repo.join(".git/hooks/post-commit");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(
        &hook,
        "#!/nonexistent/tool/python3.11\nimport os\nos.system(\"git-recode hook post-commit\")\n",
    )
    .unwrap();
    crate::newcomer::make_executable(&hook);
    let why = "<root>/r/.git/hooks/post-commit starts /nonexistent/tool/python3.11, which does not exist (moved by an upgrade?): every commit prints \"cannot exec\" and no milestone is ledgered";
    let fix = "correct the `#!` line of <root>/r/.git/hooks/post-commit (or reinstall it with the tool that wrote it), then run";
    let (_, out, _) = run(&env, &repo, &["hook", "status"], &[]);
    assert_eq!(out, format!("not installed: {why}\n"));
    assert_eq!(
        doctor_line(&env, &repo, "hook", &[]),
        format!(
            "fail  hook        a commit in <root>/r does not reach the milestone hook: {why} (fix: {fix} `git -C '<root>/r' recode hook install`)"
        )
    );
    let before = std::fs::read(&hook).unwrap();
    let (code, out, err) = run(&env, &repo, &["hook", "install"], &[]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (
            3,
            "",
            format!("error: {why}\nhint: {fix} `git recode hook install`\n").as_str()
        )
    );
    assert_eq!(std::fs::read(&hook).unwrap(), before, "never rewritten");
    // Its first line corrected, the same fix installs (or finds it reached).
    std::fs::write(&hook, "#!/bin/sh\nexec git-recode hook post-commit\n").unwrap();
    let (code, out, err) = run(&env, &repo, &["hook", "install"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    let (_, out, _) = run(&env, &repo, &["hook", "status"], &[]);
    assert!(out.starts_with("installed: "), "{out}");
}

#[test]
fn a_recode_remote_naming_no_remote_gets_a_fix_naming_the_remotes_there_are() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let line = |env: &TestEnv| doctor_line(env, &repo, "forge", &[]);
    assert_eq!(
        line(&env),
        "warn  forge       no remote 'origin': nothing is pushed, pull requests are opened by hand (fix: git remote add origin <url>)"
    );
    env.git(
        &repo,
        &["remote", "add", "origin", "/nonexistent/origin.git"],
    );
    env.git(&repo, &["config", "recode.remote", "upstream"]);
    assert_eq!(
        line(&env),
        "warn  forge       no remote 'upstream': nothing is pushed, pull requests are opened by hand (fix: git config recode.remote origin (or git remote add upstream <url>))"
    );
    env.git(&repo, &["remote", "add", "fork", "/nonexistent/fork.git"]);
    assert_eq!(
        line(&env),
        "warn  forge       no remote 'upstream': nothing is pushed, pull requests are opened by hand (fix: git config recode.remote <one of: fork, origin> (or git remote add upstream <url>))"
    );
}

#[test]
fn a_hook_whose_command_is_gone_from_path_fails_the_dry_call() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let hooks = repo.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    // Our script hook, `exec git-recode …`, run where git-recode is on no PATH.
    let bare = |args: &[&str]| {
        let out = env
            .cmd(&repo)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .args(args)
            .output()
            .unwrap();
        format!(
            "{}{}[exit status: {}]\n",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            out.status.code().unwrap_or(-1)
        )
        .replace(&env.root().display().to_string(), "<root>")
    };
    insta::assert_snapshot!(bare(&["hook", "install"]), @"
    installed <root>/r/.git/hooks/post-commit
    [exit status: 0]
    ");
    let out = bare(&["hook", "status"]);
    assert!(
        out.starts_with(
            "not installed: a dry call of <root>/r/.git/hooks/post-commit failed (exit 127): "
        ),
        "{out}"
    );
    assert!(
        out.contains("git-recode: not found: commits there do not reach git-recode\n"),
        "{out}"
    );
    // A hook of the user's that names a git-recode that moved: named, and not rewritten.
    let user = "#!/bin/sh\n\"/nonexistent/old/git-recode\" hook post-commit || true\n";
    std::fs::write(hooks.join("post-commit"), user).unwrap();
    let out = bare(&["hook", "install"]);
    assert!(
        out.contains(
            "<root>/r/.git/hooks/post-commit cannot start: No such file or directory (os error 2)"
        ) || out.contains("error: a dry call of /nonexistent/old/git-recode"),
        "{out}"
    );
    assert!(out.ends_with("[exit status: 3]\n"), "{out}");
    assert!(out.contains("hint: the hook is not git-recode's to rewrite: change its line to `git-recode hook post-commit || true`"), "{out}");
    assert_eq!(
        std::fs::read_to_string(hooks.join("post-commit")).unwrap(),
        user
    );
}

#[test]
fn the_demo_hook_runs_and_doctor_passes_it() {
    let env = TestEnv::new();
    stand_in_agent(&env);
    let repo = env.demo();
    let line = doctor_line(&env, &repo, "hook", &[]);
    assert!(
        line.starts_with("ok    hook        the milestone hook is reached from "),
        "{line}"
    );
}

/// A stand-in `ssh` that records its arguments and fails (nothing reaches a network).
fn fake_ssh(env: &TestEnv) -> (PathBuf, PathBuf) {
    let dir = env.root().join("fakessh");
    std::fs::create_dir_all(&dir).unwrap();
    let log = env.root().join("ssh-args");
    let ssh = dir.join("ssh");
    std::fs::write(
        &ssh,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\necho 'fake ssh: no network' >&2\nexit 255\n",
            log.display()
        ),
    )
    .unwrap();
    make_executable(&ssh);
    (ssh, log)
}

#[test]
fn core_ssh_command_is_honoured_with_batch_mode_and_doctor_says_it() {
    let env = TestEnv::new();
    stand_in_agent(&env);
    let repo = env.repo("r");
    let (ssh, log) = fake_ssh(&env);
    let key = env.root().join("deploy_key");
    std::fs::write(&key, "not a real key\n").unwrap();
    env.git(
        &repo,
        &["remote", "add", "origin", "ssh://git@example.invalid/r.git"],
    );
    let command = format!("{} -i {}", ssh.display(), key.display());
    env.git(&repo, &["config", "core.sshCommand", &command]);
    let (code, _, err) = run(&env, &repo, &["sync"], &[]);
    assert_eq!(code, 1, "{err}");
    let args = std::fs::read_to_string(&log).unwrap();
    let first = args
        .lines()
        .next()
        .unwrap()
        .replace(&env.root().display().to_string(), "<root>");
    assert!(
        first.starts_with("-i <root>/deploy_key -o BatchMode=yes "),
        "{first}"
    );
    assert!(first.contains("git@example.invalid"), "{first}");
    assert_eq!(
        doctor_line(&env, &repo, "ssh", &[]),
        "ok    ssh         pushes and fetches of 'origin' use `<root>/fakessh/ssh -i <root>/deploy_key -o BatchMode=yes` (core.sshCommand, batch mode on)"
    );
    // The key moved away: doctor names it with the fix.
    std::fs::remove_file(&key).unwrap();
    assert_eq!(
        doctor_line(&env, &repo, "ssh", &[]),
        "warn  ssh         pushes and fetches of 'origin' use `<root>/fakessh/ssh -i <root>/deploy_key -o BatchMode=yes` (core.sshCommand, batch mode on): its identity file <root>/deploy_key does not exist (fix: git config core.sshCommand 'ssh -i <the deploy key>')"
    );
}

#[test]
fn an_agent_cli_that_cannot_start_fails_doctor() {
    let env = TestEnv::new();
    let bin = stand_in_agent(&env);
    let repo = env.repo("r");
    assert_eq!(
        doctor_line(&env, &repo, "agent", &[]),
        "ok    agent       recode.agent claude: <root>/agent-bin/claude is on PATH and answers --version: 2.0.0 (Claude Code stand-in)"
    );
    // Its runtime moved after an upgrade: found on PATH, but it cannot start.
    std::fs::write(
        bin.join("claude"),
        "#!/nonexistent/node\nconsole.log('x')\n",
    )
    .unwrap();
    assert_eq!(
        doctor_line(&env, &repo, "agent", &[]),
        "fail  agent       recode.agent claude: <root>/agent-bin/claude is on PATH but `claude --version` cannot start: No such file or directory (os error 2), so resume commands cannot run (fix: run `<root>/agent-bin/claude --version` and reinstall claude until it answers)"
    );
}
