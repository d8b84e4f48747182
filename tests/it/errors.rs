//! Bad input: a clear message and the right exit code, never a panic.

use crate::common::TestEnv;

#[test]
fn outside_a_repository() {
    let env = TestEnv::new();
    let dir = env.root().join("plain");
    std::fs::create_dir_all(&dir).unwrap();
    // GIT_CEILING_DIRECTORIES keeps discovery from walking above the temp dir.
    let out = env
        .cmd(&dir)
        .env("GIT_CEILING_DIRECTORIES", env.root())
        .args(["status"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).replace(&env.root().display().to_string(), "<root>"),
        "error: not a git repository (or any parent up to the root): <root>/plain\n\
         hint: run git recode inside a git repository, or point at one with -C <path>\n"
    );
    insta::assert_snapshot!(env.run(&dir, &["-C", "nowhere", "status"]), @"
    --- stderr ---
    error: cannot change to directory 'nowhere': No such file or directory (os error 2)
    hint: -C takes a directory inside a git repository
    [exit status: 1]
    ");
}

#[test]
fn unknown_branch() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    insta::assert_snapshot!(env.run(&repo, &["classify", "issue-404-nope"]), @"
    --- stderr ---
    error: no worker or branch named 'issue-404-nope'
    hint: `git recode status --all` lists every worker; check the branch name
    [exit status: 1]
    ");
    insta::assert_snapshot!(env.run(&repo, &["record", "gate", "issue-404-nope", "--passed"]), @"
    --- stderr ---
    error: no worker or branch named 'issue-404-nope'
    hint: `git recode status --all` lists every worker; check the branch name
    [exit status: 1]
    ");
    assert_eq!(
        env.run(&repo, &["log", "issue-404-nope"]).lines().last(),
        Some("[exit status: 1]")
    );
}

#[test]
fn bad_usage_exits_2() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    for args in [
        vec!["status", "--json", "--porcelain"],
        vec!["record", "exit", "issue-1"],
        vec!["record", "exit", "issue-1", "--rc", "x"],
        vec!["record", "gate", "issue-1"],
        vec!["frobnicate"],
    ] {
        let out = env.output(&repo, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).starts_with("error: "),
            "{args:?}"
        );
    }
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", "yesterday")
        .args(["status"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: 'yesterday' is not an RFC 3339 timestamp (like 2026-11-29T12:00:00Z)\n\
         hint: set RECODE_NOW to an RFC 3339 time such as 2026-11-29T12:00:00Z, or unset it\n"
    );
    env.git(&repo, &["config", "recode.branchPattern", "issue-("]);
    let out = env.output(&repo, &["status"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .starts_with("error: config recode.branchPattern = 'issue-(' is invalid")
    );
}

#[test]
fn message_file_missing() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    // The branch is known (its spawn is ledgered): the message file is what is missing.
    env.ok(&repo, &["record", "spawn", "issue-1", "--cwd", "."]);
    let out = env.run(
        &repo,
        &[
            "record",
            "exit",
            "issue-1",
            "--rc",
            "0",
            "--message-file",
            "missing.txt",
        ],
    );
    insta::assert_snapshot!(out, @"
    --- stderr ---
    error: cannot read the message file missing.txt: No such file or directory (os error 2)
    [exit status: 1]
    ");
}

#[test]
fn bare_repository_with_linked_worktrees() {
    let env = TestEnv::new();
    let src = env.repo("src");
    let bare = env.root().join("bare.git");
    env.git(
        &env.root(),
        &[
            "clone",
            "-q",
            "--bare",
            src.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    // A bare repository with no worktree has no workers, and says so.
    insta::assert_snapshot!(env.run(&bare, &["status"]), @"
    no workers (no branch matches recode.branchPattern, and no ledgered branch exists; `--all` lists those too)
    --- stderr ---
    [exit status: 0]
    ");
    insta::assert_snapshot!(env.run(&bare, &["status", "--json"]), @r#"
    {
      "schema": 1,
      "workers": []
    }
    --- stderr ---
    [exit status: 0]
    "#);
    // The bare-repository-plus-worktrees layout many loops use works like any other.
    let wt = env.root().join("wt1");
    env.git(
        &bare,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-1",
            wt.to_str().unwrap(),
            "main",
        ],
    );
    std::fs::write(wt.join("new.txt"), "x").unwrap();
    env.ok(&wt, &["record", "spawn", "issue-1"]);
    let mut cmd = env.cmd(&bare);
    cmd.env("RECODE_NOW", "2030-01-01T00:00:00Z"); // after the real mtimes of files written here
    let out = cmd.args(["status", "--porcelain"]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "1\tissue-1\tstalled\thalf-done\twip-commit\t1\n"
    );
}

#[test]
fn worktree_whose_directory_was_deleted() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = env.root().join("gone");
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-3",
            wt.to_str().unwrap(),
        ],
    );
    env.ok(
        &repo,
        &["record", "spawn", "issue-3", "--cwd", wt.to_str().unwrap()],
    );
    std::fs::remove_dir_all(&wt).unwrap();
    let mut cmd = env.cmd(&repo);
    cmd.env("RECODE_NOW", "2030-01-01T00:00:00Z"); // after the real mtimes of files written here
    let out = cmd.args(["status", "--json"]).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = &v["workers"][0];
    assert_eq!(w["branch"], "issue-3");
    assert_eq!(w["worktree"], wt.display().to_string());
    assert_eq!(w["dirty"], serde_json::Value::Null);
    assert_eq!(w["state"], "empty");
    assert_eq!(w["action"], "none", "a missing worktree is never deleted");
    assert_eq!(
        w["reason"],
        format!(
            "worktree directory {} is missing (maybe an unmounted volume): never removed",
            wt.display()
        )
    );
    // The registration is untouched: no prune happened.
    assert!(
        env.git(&repo, &["worktree", "list", "--porcelain"])
            .contains("prunable")
    );
}

#[test]
fn detached_head_worktrees() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = env.root().join("det");
    env.git(
        &repo,
        &["worktree", "add", "-q", "--detach", wt.to_str().unwrap()],
    );
    std::fs::write(wt.join("lost.txt"), "x").unwrap();
    env.git(&wt, &["add", "lost.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "on a detached head"]);
    // No attempt names it: not a worker.
    assert_eq!(env.ok(&repo, &["status", "--porcelain"]), "");
    // The attempt that ran in it claims it: commits no ref contains need a human.
    env.ok(
        &repo,
        &["record", "spawn", "issue-4", "--cwd", wt.to_str().unwrap()],
    );
    let mut cmd = env.cmd(&repo);
    cmd.env("RECODE_NOW", "2030-01-01T00:00:00Z"); // after the real mtimes of files written here
    let out = cmd
        .args(["classify", "issue-4", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["state"], "needs-human");
    assert_eq!(v["action"], "escalate");
    assert_eq!(
        v["reason"],
        format!(
            "detached HEAD in {0} holds 1 commit no ref contains; keep them with `git -C {0} branch recode-keep-4 HEAD`",
            wt.display()
        )
    );
    assert_eq!(v["head"], env.git(&wt, &["rev-parse", "HEAD"]));
}

#[test]
fn reading_never_takes_index_lock() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = env.root().join("w");
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-6",
            wt.to_str().unwrap(),
        ],
    );
    // Make the index stat-dirty so that a refreshing reader would want to rewrite it.
    std::fs::write(wt.join("README.md"), "hello\n").unwrap();
    let index = env.git(
        &wt,
        &["rev-parse", "--path-format=absolute", "--git-path", "index"],
    );
    let before = std::fs::read(&index).unwrap();
    let mtime = std::fs::metadata(&index).unwrap().modified().unwrap();
    // An agent holds the lock: reads must still work and must not touch it.
    let lock = format!("{index}.lock");
    std::fs::write(&lock, b"held by an agent").unwrap();
    env.ok(&repo, &["status", "--json"]);
    env.ok(&repo, &["classify", "issue-6"]);
    env.ok(&repo, &["log"]);
    assert_eq!(std::fs::read(&lock).unwrap(), b"held by an agent");
    assert_eq!(std::fs::read(&index).unwrap(), before);
    assert_eq!(
        std::fs::metadata(&index).unwrap().modified().unwrap(),
        mtime
    );
}

#[test]
fn unknown_repository_formats_are_refused_by_name() {
    // reftable refs and SHA-256 objects are read (tests/it/formats.rs); a format git-recode
    // does not know is refused by name, exit 1, never read as something else.
    let env = TestEnv::new();
    for (name, key, value) in [
        ("refs", "extensions.refStorage", "blob"),
        ("objects", "extensions.objectFormat", "sha512"),
    ] {
        let dir = env.root().join(name);
        env.git(&env.root(), &["init", "-q", dir.to_str().unwrap()]);
        env.git(&dir, &["config", "core.repositoryformatversion", "1"]);
        env.git(&dir, &["config", key, value]);
    }
    insta::assert_snapshot!(env.run(&env.root().join("refs"), &["status"]), @"
    --- stderr ---
    error: the repository at <root>/refs/.git uses the 'blob' ref storage format, which git-recode does not support yet
    hint: use a clone with the files ref format (`git clone --ref-format=files …`)
    [exit status: 1]
    ");
    insta::assert_snapshot!(env.run(&env.root().join("objects"), &["status"]), @"
    --- stderr ---
    error: the repository at <root>/objects/.git uses the 'sha512' object format, which git-recode does not support yet
    hint: git-recode reads SHA-1 and SHA-256 repositories
    [exit status: 1]
    ");
}
