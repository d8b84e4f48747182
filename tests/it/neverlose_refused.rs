//! A WIP push the remote refuses for file size (SPEC 1.2 "Never lose work: more
//! states"; case `wip-commits-oversize-build-artifact.sh`): at the default
//! `recode.wipMaxFileSize`, our own WIP commit is rewritten without the files the remote
//! names (GitHub's GH001, a generic pre-receive hook, GitLab's blob ids), which stay on
//! disk and stay left out on later WIP commits; the branch stays pushable.

use std::path::{Path, PathBuf};

use crate::common::TestEnv;
use crate::neverlose_states::{json, result_of};

/// The wordings a remote refuses a file over 5,000 bytes with.
#[derive(Clone, Copy)]
enum Wording {
    GitHub,
    Generic,
    GitLabBlobs,
    /// A refusal that is not about size.
    NotSize,
}

/// An origin whose pre-receive hook refuses any new blob over 5,000 bytes, naming every
/// such file the way `wording` does.
fn refusing_origin(env: &TestEnv, wording: Wording) -> PathBuf {
    let repo = env.repo_with_origin().0;
    let line = match wording {
        Wording::GitHub => {
            r#"echo "error: File $path is 0.01 MB; this exceeds GitHub's file size limit of 0.00 MB"; echo "error: GH001: Large files detected.""#
        }
        Wording::Generic => r#"echo "error: File $path exceeds the file size limit of 5 kB""#,
        Wording::GitLabBlobs => {
            r#"echo "GitLab: You are attempting to check in one or more files which exceed the 5KiB limit:"; echo "- $oid (6 KiB)""#
        }
        Wording::NotSize => r#"echo "error: pushes of $path are not allowed here""#,
    };
    let hook = format!(
        "#!/bin/sh\nwhile read old new ref; do\n  bad=$(git rev-list --objects \"$new\" --not --all | while read oid path; do\n    [ \"$(git cat-file -t $oid)\" = blob ] || continue\n    [ \"$(git cat-file -s $oid)\" -gt 5000 ] || continue\n    {line}\n  done)\n  if [ -n \"$bad\" ]; then echo \"$bad\"; exit 1; fi\ndone\nexit 0\n"
    );
    let path = env.root().join("origin.git/hooks/pre-receive");
    std::fs::write(&path, hook).unwrap();
    std::process::Command::new("chmod")
        .args(["+x", path.to_str().unwrap()])
        .status()
        .unwrap();
    repo
}

/// A dead worker `issue-61` whose worktree holds `fix.go` and the given untracked files
/// (path, size in bytes); returns the worktree.
fn dead_worker_with(env: &TestEnv, repo: &Path, files: &[(&str, usize)]) -> PathBuf {
    let wt = env.add_worktree(repo, "issue-61", "wt61");
    env.record(&wt, &["spawn", "issue-61"]);
    std::fs::write(wt.join("fix.go"), "fix\n").unwrap();
    for (path, size) in files {
        let p = wt.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, vec![b'x'; *size]).unwrap();
    }
    env.record(repo, &["exit", "issue-61", "--rc", "143"]);
    wt
}

/// The paths of the tree of `rev`.
fn tree(env: &TestEnv, repo: &Path, rev: &str) -> Vec<String> {
    env.git(repo, &["ls-tree", "-r", "--name-only", rev])
        .lines()
        .map(str::to_string)
        .collect()
}

fn origin_tip(env: &TestEnv, branch: &str) -> String {
    let origin = env.root().join("origin.git");
    env.git(&origin, &["rev-parse", branch])
}

/// Two files (one nested deep) refused in the generic wording, then in GitHub's: both
/// left out of the WIP commit, kept on disk byte for byte, named; the rest pushed.
#[test]
fn files_a_remote_refuses_for_size_are_taken_out_of_our_wip_commit_and_kept() {
    for wording in [Wording::Generic, Wording::GitHub] {
        let env = TestEnv::new();
        let repo = refusing_origin(&env, wording);
        let wt = dead_worker_with(
            &env,
            &repo,
            &[("bin/manager", 6_000), ("out/deep/lib.so", 7_000)],
        );
        let (code, doc) = json(&env, &repo, &["recover", "issue-61"]);
        assert_eq!(code, 0, "{doc:#}");
        let r = result_of(&doc, "issue-61");
        assert_eq!(r["result"], "held", "{doc:#}");
        let reason = r["reason"].as_str().unwrap();
        assert!(
            reason.ends_with(
                "(1 file); push held: files the remote refused for their size left out (kept on disk): bin/manager, out/deep/lib.so"
            ),
            "{reason}"
        );
        assert_eq!(tree(&env, &repo, "issue-61"), vec!["README.md", "fix.go"]);
        assert_eq!(
            origin_tip(&env, "issue-61"),
            env.git(&repo, &["rev-parse", "issue-61"])
        );
        assert_eq!(
            std::fs::read(wt.join("bin/manager")).unwrap(),
            vec![b'x'; 6_000]
        );
        assert_eq!(
            std::fs::read(wt.join("out/deep/lib.so")).unwrap(),
            vec![b'x'; 7_000]
        );
        // Untracked again, the worktree's index agreeing with the new tip.
        assert_eq!(
            env.git(&wt, &["status", "--porcelain", "--untracked-files=all"]),
            "?? bin/manager\n?? out/deep/lib.so"
        );
        assert_eq!(
            env.git(&repo, &["log", "-1", "--format=%s%n%b", "issue-61"]),
            "wip: recode snapshot (1 file)\nRecode-Wip: true"
        );
        // The ledger names them; the next tick resumes instead of committing them again.
        let log = env.run(&repo, &["log", "--json"]);
        assert!(
            log.contains(r#""left_out":["bin/manager","out/deep/lib.so"]"#),
            "{log}"
        );
        let (_, st) = json(&env, &repo, &["status", "--offline"]);
        let w = &st["workers"][0];
        assert_eq!(
            (w["state"].as_str(), w["action"].as_str()),
            (Some("half-done"), Some("resume")),
            "{st:#}"
        );
    }
}

/// A later WIP commit of the same worker leaves the refused files out again (no second
/// refusal needed): the file is named as still left out, and never enters the branch.
#[test]
fn a_file_once_refused_stays_out_of_later_wip_commits() {
    let env = TestEnv::new();
    let repo = refusing_origin(&env, Wording::Generic);
    let wt = dead_worker_with(&env, &repo, &[("bin/manager", 6_000)]);
    json(&env, &repo, &["recover", "issue-61"]);
    env.record(&wt, &["spawn", "issue-61"]);
    std::fs::write(wt.join("more.go"), "more\n").unwrap();
    env.record(&repo, &["exit", "issue-61", "--rc", "143"]);
    let (code, doc) = json(&env, &repo, &["recover", "issue-61"]);
    assert_eq!(code, 0, "{doc:#}");
    let r = result_of(&doc, "issue-61");
    assert_eq!(r["result"], "held", "{doc:#}");
    // The push is held, naming the files still left out.
    assert!(
        r["reason"].as_str().unwrap().ends_with(
            "push held: files an earlier WIP commit left out, still left out (kept on disk): bin/manager"
        ),
        "{doc:#}"
    );
    assert_eq!(
        tree(&env, &repo, "issue-61"),
        vec!["README.md", "fix.go", "more.go"]
    );
    assert_eq!(std::fs::read(wt.join("bin/manager")).unwrap().len(), 6_000);
    let log = env.run(&repo, &["log", "--json"]);
    assert_eq!(
        log.matches(r#""left_out":["bin/manager"]"#).count(),
        2,
        "{log}"
    );
}

/// GitLab names blobs, not paths: the blob id is mapped back to the path our commit added.
/// When the refused file was all the WIP commit held, the branch goes back to where it was.
#[test]
fn a_gitlab_refusal_naming_blob_ids_and_a_commit_of_nothing_else() {
    let env = TestEnv::new();
    let repo = refusing_origin(&env, Wording::GitLabBlobs);
    let before = env.git(&repo, &["rev-parse", "main"]);
    let wt = env.add_worktree(&repo, "issue-61", "wt61");
    env.record(&wt, &["spawn", "issue-61"]);
    std::fs::create_dir_all(wt.join("target/release")).unwrap();
    std::fs::write(wt.join("target/release/app"), vec![b'y'; 9_000]).unwrap();
    env.record(&repo, &["exit", "issue-61", "--rc", "143"]);
    let (code, doc) = json(&env, &repo, &["recover", "issue-61"]);
    assert_eq!(code, 0, "{doc:#}");
    let r = result_of(&doc, "issue-61");
    assert_eq!(r["result"], "held", "{doc:#}");
    assert_eq!(
        r["reason"],
        format!(
            "WIP commit undone, nothing else in it (branch at {}); push held: files the remote refused for their size left out (kept on disk): target/release/app",
            &before[..12]
        ),
        "{doc:#}"
    );
    assert_eq!(env.git(&repo, &["rev-parse", "issue-61"]), before);
    assert_eq!(
        std::fs::read(wt.join("target/release/app")).unwrap(),
        vec![b'y'; 9_000]
    );
    assert_eq!(
        env.git(&wt, &["status", "--porcelain", "--untracked-files=all"]),
        "?? target/release/app"
    );
}

/// A refusal that is not about size rewrites nothing: the WIP commit keeps every file and
/// the step fails with the remote's words.
#[test]
fn a_refusal_not_about_size_rewrites_nothing() {
    let env = TestEnv::new();
    let repo = refusing_origin(&env, Wording::NotSize);
    dead_worker_with(&env, &repo, &[("bin/manager", 6_000)]);
    let (code, doc) = json(&env, &repo, &["recover", "issue-61"]);
    assert_eq!(code, 1, "{doc:#}");
    let r = result_of(&doc, "issue-61");
    assert_eq!(r["result"], "failed", "{doc:#}");
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .contains("pushes of bin/manager are not allowed here"),
        "{doc:#}"
    );
    assert_eq!(
        tree(&env, &repo, "issue-61"),
        vec!["README.md", "bin/manager", "fix.go"]
    );
}
