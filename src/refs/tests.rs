//! The ref store on real repositories of both formats: the same answers, the same
//! compare-and-swap.

use std::path::Path;
use std::process::Command;

use super::reftable::{classify, porcelain_records};
use super::*;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The ref formats this git makes: `files`, and `reftable` from git 2.45 (an older git
/// skips it, saying so).
fn formats() -> Vec<&'static str> {
    let tmp = tempfile::tempdir().unwrap();
    let made = Command::new("git")
        .args(["init", "-q", "--ref-format=reftable"])
        .arg(tmp.path())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .is_ok_and(|o| o.status.success());
    if !made {
        eprintln!("this git makes no reftable repository (git 2.45 or newer does): skipped");
    }
    let mut out = vec!["files"];
    out.extend(made.then_some("reftable"));
    out
}

/// A repository of `format` (`files`, `reftable`) with one commit on `main`, a branch
/// `issue-1` checked out in a linked worktree, and `origin/HEAD` naming `origin/main`.
fn repo_of(root: &Path, format: &str) -> (gix::Repository, ObjectId) {
    let dir = root.join(format);
    git(
        root,
        &[
            "init",
            "-q",
            "-b",
            "main",
            // (`--ref-format` itself is git 2.45's: files is the default.)
            if format == "reftable" {
                "--ref-format=reftable"
            } else {
                "-q"
            },
            dir.to_str().unwrap(),
        ],
    );
    git(&dir, &["commit", "-q", "--allow-empty", "-m", "one"]);
    let head = git(&dir, &["rev-parse", "HEAD"]);
    git(&dir, &["update-ref", "refs/remotes/origin/main", &head]);
    git(
        &dir,
        &[
            "symbolic-ref",
            "refs/remotes/origin/HEAD",
            "refs/remotes/origin/main",
        ],
    );
    let wt = root.join(format!("{format}-wt"));
    git(
        &dir,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-1",
            wt.to_str().unwrap(),
        ],
    );
    let repo = gix::open(&dir).unwrap();
    (repo, ObjectId::from_hex(head.as_bytes()).unwrap())
}

#[test]
fn both_formats_read_the_same_refs_and_heads() {
    let tmp = tempfile::tempdir().unwrap();
    for format in formats() {
        let (repo, head) = repo_of(tmp.path(), format);
        assert_eq!(is_reftable(&repo), format == "reftable");
        let names: Vec<String> = list(&repo, "refs/")
            .unwrap()
            .into_iter()
            .map(|r| r.name)
            .collect();
        assert_eq!(
            names,
            [
                "refs/heads/issue-1",
                "refs/heads/main",
                "refs/remotes/origin/HEAD",
                "refs/remotes/origin/main"
            ],
            "{format}"
        );
        assert_eq!(
            find(&repo, "refs/remotes/origin/HEAD").unwrap(),
            Some(Target::Symbolic("refs/remotes/origin/main".into())),
            "{format}"
        );
        assert_eq!(id(&repo, "refs/remotes/origin/HEAD").unwrap(), Some(head));
        assert_eq!(id(&repo, "refs/heads/nothing").unwrap(), None);
        assert_eq!(
            head_of(&repo),
            Some(Head::Branch {
                name: "refs/heads/main".into(),
                id: Some(head)
            }),
            "{format}"
        );
        let wt = gix::open(tmp.path().join(format!("{format}-wt"))).unwrap();
        assert_eq!(
            head_of(&wt),
            Some(Head::Branch {
                name: "refs/heads/issue-1".into(),
                id: Some(head)
            }),
            "{format}"
        );
        assert_eq!(
            head_tree(&wt).unwrap(),
            ObjectId::empty_tree(repo.object_hash())
        );
        // A remote HEAD naming a branch gone on the server is still read as what it names.
        git(
            repo.workdir().unwrap(),
            &[
                "symbolic-ref",
                "refs/remotes/origin/HEAD",
                "refs/remotes/origin/gone",
            ],
        );
        assert_eq!(
            find(&repo, "refs/remotes/origin/HEAD").unwrap(),
            Some(Target::Symbolic("refs/remotes/origin/gone".into())),
            "{format}"
        );
        assert_eq!(id(&repo, "refs/remotes/origin/HEAD").ok().flatten(), None);
    }
}

fn head_of(repo: &gix::Repository) -> Option<Head> {
    head(repo)
}

#[test]
fn both_formats_swap_by_compare_and_swap_only() {
    let tmp = tempfile::tempdir().unwrap();
    for format in formats() {
        let (repo, head) = repo_of(tmp.path(), format);
        let other = repo.write_blob(b"other").unwrap().detach();
        let edit = |expect, new| Edit {
            name: "refs/notes/test",
            expect,
            new,
            message: "test",
        };
        assert!(swap(&repo, &edit(Expect::Absent, Some(head))).unwrap());
        // A second creation loses: the ref exists (files: with this very value, `Ok(false)`).
        match swap(&repo, &edit(Expect::Absent, Some(other))) {
            Ok(done) => assert!(!done && format == "files", "{format}"),
            Err(e) => assert!(e.moved || format == "files", "{format}: {e}"),
        }
        assert_eq!(
            id(&repo, "refs/notes/test").unwrap(),
            Some(head),
            "{format}"
        );
        // An old value that is not the ref's loses and changes nothing.
        let lost = swap(&repo, &edit(Expect::Is(other), Some(other))).unwrap_err();
        assert!(format == "files" || lost.moved, "{format}: {lost}");
        assert_eq!(
            id(&repo, "refs/notes/test").unwrap(),
            Some(head),
            "{format}"
        );
        assert!(swap(&repo, &edit(Expect::Is(head), Some(other))).unwrap());
        assert_eq!(
            id(&repo, "refs/notes/test").unwrap(),
            Some(other),
            "{format}"
        );
        // A delete expecting the old value loses; with the current value it deletes.
        assert!(
            swap(&repo, &edit(Expect::Is(head), None)).is_err(),
            "{format}"
        );
        assert!(swap(&repo, &edit(Expect::Is(other), None)).unwrap());
        assert_eq!(find(&repo, "refs/notes/test").unwrap(), None, "{format}");
        assert!(swap(&repo, &edit(Expect::Any, Some(head))).unwrap());
        assert!(swap(&repo, &edit(Expect::Any, Some(other))).unwrap());
        assert_eq!(
            id(&repo, "refs/notes/test").unwrap(),
            Some(other),
            "{format}"
        );
    }
}

#[test]
fn a_reftable_listing_is_read_again_after_any_write() {
    if !formats().contains(&"reftable") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (repo, head) = repo_of(tmp.path(), "reftable");
    assert_eq!(id(&repo, "refs/heads/late").unwrap(), None);
    // Written by git, not through the store: the stack changed, the listing follows.
    git(
        repo.workdir().unwrap(),
        &["branch", "late", &head.to_string()],
    );
    assert_eq!(id(&repo, "refs/heads/late").unwrap(), Some(head));
    let wt = gix::open(tmp.path().join("reftable-wt")).unwrap();
    git(wt.workdir().unwrap(), &["checkout", "-q", "--detach"]);
    assert_eq!(head_of(&wt), Some(Head::Detached(head)));
    let log = head_log(&repo, wt.git_dir());
    assert_eq!(log[0].new, head);
    assert!(
        log[0]
            .message
            .starts_with("checkout: moving from issue-1 to "),
        "{log:?}"
    );
}

#[test]
fn git_refusals_are_read_as_moved_or_held() {
    assert_eq!(
        classify(
            "fatal: update_ref failed for ref 'refs/x': cannot lock ref 'refs/x': reference already exists"
        ),
        (true, false)
    );
    assert_eq!(
        classify("fatal: cannot lock ref 'refs/x': is at 1111 but expected 2222"),
        (true, false)
    );
    assert_eq!(
        classify("error: cannot lock ref 'refs/y': unable to resolve reference 'refs/y'"),
        (true, false)
    );
    assert_eq!(
        classify("fatal: update_ref failed for ref 'refs/x': cannot lock references"),
        (false, true)
    );
    assert_eq!(classify("fatal: permission denied"), (false, false));
}

#[test]
fn worktree_list_records_are_read_with_their_heads() {
    let id = "1".repeat(40);
    let out = format!(
        "worktree /r\0HEAD {id}\0branch refs/heads/main\0\0worktree /w1\0HEAD {}\0branch refs/heads/gone\0\0worktree /w2\0HEAD {id}\0detached\0locked\0\0worktree /b\0bare\0\0",
        "0".repeat(40)
    );
    let records = porcelain_records(out.as_bytes());
    let heads: Vec<(&str, Option<String>)> = records
        .iter()
        .map(|r| (r.path.as_str(), r.head.as_ref().map(|h| format!("{h:?}"))))
        .collect();
    assert_eq!(
        heads,
        [
            ("/r", Some("Branch(\"refs/heads/main\")".into())),
            ("/w1", Some("Branch(\"refs/heads/gone\")".into())),
            ("/w2", Some(format!("Detached(Sha1({id}))"))),
            ("/b", None),
        ]
    );
}

#[test]
fn a_reftable_worktree_reads_its_status_like_git() {
    if !formats().contains(&"reftable") {
        return;
    }
    // gix's status platform reads HEAD (for `.gitmodules`), which a reftable HEAD cannot
    // give it: the worktree's status goes around it, with HEAD read here.
    let tmp = tempfile::tempdir().unwrap();
    let (_repo, _) = repo_of(tmp.path(), "reftable");
    let wt = tmp.path().join("reftable-wt");
    let admin = tmp.path().join("reftable/.git/worktrees/reftable-wt");
    std::fs::write(wt.join("a"), "a").unwrap();
    git(&wt, &["add", "a"]);
    git(&wt, &["commit", "-qm", "a"]);
    std::fs::write(wt.join("a"), "b").unwrap();
    std::fs::write(wt.join("s"), "s").unwrap();
    git(&wt, &["add", "s"]);
    std::fs::write(wt.join("u"), "u").unwrap();
    let dirty = crate::worktree::status(&wt, &admin).unwrap().dirty;
    assert_eq!(
        (
            dirty.staged,
            dirty.unstaged,
            dirty.untracked,
            dirty.conflicted
        ),
        (1, 1, 1, 0)
    );
    // What git says (its first line's leading space trimmed by the helper).
    assert_eq!(git(&wt, &["status", "--porcelain"]), "M a\nA  s\n?? u");
}
