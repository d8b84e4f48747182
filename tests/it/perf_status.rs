//! `status`'s one-walk proof of clean (src/worktree/proof.rs) against `git status` on odd
//! trees: every worktree's `dirty` counts must equal git's own (SPEC "The worker object"),
//! whichever of our walk or gix's status decided each entry.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::TestEnv;

/// git's counts in `wt` (staged, unstaged, untracked, conflicted), read without refreshing
/// the index (so our run and git's see the same index).
fn git_counts(env: &TestEnv, wt: &Path) -> [u64; 4] {
    let mut d = [0; 4];
    let out = env.git(
        wt,
        &[
            "--no-optional-locks",
            "status",
            "--porcelain=v2",
            "--untracked-files=all",
        ],
    );
    for l in out.lines() {
        let xy = l.split(' ').nth(1).unwrap_or("");
        match l.chars().next() {
            Some('1') | Some('2') => {
                d[0] += u64::from(!xy.starts_with('.'));
                d[1] += u64::from(!xy.ends_with('.'));
            }
            Some('?') => d[2] += 1,
            Some('u') => d[3] += 1,
            _ => {}
        }
    }
    d
}

/// `git recode status --json`'s counts by worker branch, and its debug log.
fn our_counts(env: &TestEnv, repo: &Path) -> (Vec<(String, [u64; 4])>, String) {
    let out = env
        .cmd(repo)
        .env("RUST_LOG", "git_recode::worktree=debug")
        .args(["status", "--json", "--offline"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let counts = v["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            let d = &w["dirty"];
            let n = ["staged", "unstaged", "untracked", "conflicted"]
                .map(|k| d[k].as_u64().unwrap_or_else(|| panic!("{w}")));
            (w["branch"].as_str().unwrap().to_string(), n)
        })
        .collect();
    (counts, String::from_utf8_lossy(&out.stderr).to_string())
}

/// A repository whose base has nested directories, files whose names extend a
/// directory's, an executable, a symlink, and a tracked file inside an ignored directory
/// (14 entries).
fn base_repo(env: &TestEnv) -> PathBuf {
    let repo = env.repo("r");
    let w = |p: &str, s: &str| {
        let f = repo.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, s).unwrap();
    };
    w("src/a.rs", "aaa\n");
    w("src/b.rs", "bbb\n");
    w("src/deep/c.rs", "ccc\n");
    w("src/deep/er/d.rs", "ddd\n");
    w("src/a.b", "dot sorts before slash\n");
    // A file whose name extends a directory's with a byte below `/`: the index sorts it
    // before the directory's entries (`deep-x` < `deep.rs` < `deep/…`).
    w("src/deep.rs", "after deep-x, before deep/\n");
    w("src/deep-x", "first\n");
    w("run.sh", "#!/bin/sh\n");
    w("empty", "");
    w(".gitignore", "*.log\n!keep.log\nbuild/\n");
    w("build/tracked.txt", "forced\n");
    w("Name", "upper\n");
    std::os::unix::fs::symlink("src/a.rs", repo.join("link")).unwrap();
    env.git(&repo, &["add", "."]);
    env.git(&repo, &["add", "-f", "build/tracked.txt"]);
    env.git(&repo, &["update-index", "--chmod=+x", "run.sh"]);
    env.git(&repo, &["commit", "-q", "-m", "base"]);
    repo
}

/// A worktree for `branch` whose files are older than its index (no entry racily clean,
/// as in a worktree left a while ago), so our walk can prove them unchanged.
fn settled_worktree(env: &TestEnv, repo: &Path, branch: &str) -> PathBuf {
    let wt = env.root().join(format!("wt-{branch}"));
    env.git(
        repo,
        &["worktree", "add", "-q", "-b", branch, wt.to_str().unwrap()],
    );
    let st = Command::new("find")
        .arg(&wt)
        .args(["-path", "*/.git", "-prune", "-o"])
        .args(["-exec", "touch", "-h", "-d", "@1790000000", "{}", "+"])
        .status()
        .unwrap();
    assert!(st.success());
    env.git(&wt, &["update-index", "-q", "--really-refresh"]);
    wt
}

fn write(p: PathBuf, s: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, s).unwrap();
}

/// Every odd tree in its own worktree, read in one `status` run: counts equal git's.
#[test]
fn dirty_counts_equal_git_status_on_odd_trees() {
    let env = TestEnv::new();
    let repo = base_repo(&env);
    env.git(&repo, &["config", "core.ignorecase", "false"]);
    type Make = Box<dyn Fn(&Path)>;
    let cases: Vec<(&str, Make)> = vec![
        ("issue-1-clean", Box::new(|_| {})),
        (
            "issue-2-modified",
            Box::new(|wt| write(wt.join("src/deep/c.rs"), "CCC\n")),
        ),
        (
            "issue-3-exec-bit",
            Box::new(|wt| {
                use std::os::unix::fs::PermissionsExt;
                let p = wt.join("run.sh");
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
            }),
        ),
        (
            "issue-4-file-became-dir",
            Box::new(|wt| {
                std::fs::remove_file(wt.join("src/b.rs")).unwrap();
                write(wt.join("src/b.rs/inside.txt"), "x\n");
            }),
        ),
        (
            "issue-5-dir-became-file",
            Box::new(|wt| {
                std::fs::remove_dir_all(wt.join("src/deep")).unwrap();
                write(wt.join("src/deep"), "now a file\n");
            }),
        ),
        (
            "issue-6-symlinks",
            Box::new(|wt| {
                std::fs::remove_file(wt.join("link")).unwrap();
                std::os::unix::fs::symlink("src/b.rs", wt.join("link")).unwrap();
                std::os::unix::fs::symlink("src", wt.join("src-link")).unwrap();
            }),
        ),
        (
            "issue-7-untracked",
            Box::new(|wt| {
                write(wt.join("src/deep/new.rs"), "n\n");
                write(wt.join("top.txt"), "t\n");
                write(wt.join("newdir/x/y.txt"), "y\n");
                write(wt.join("newdir/z.txt"), "z\n");
                std::fs::create_dir_all(wt.join("emptydir/sub")).unwrap();
                write(wt.join("name"), "lower case twin of Name\n");
            }),
        ),
        (
            "issue-8-ignored",
            Box::new(|wt| {
                write(wt.join("a.log"), "ignored\n");
                write(wt.join("src/deep/b.log"), "ignored\n");
                write(wt.join("keep.log"), "negated: untracked\n");
                write(
                    wt.join("build/new.txt"),
                    "in an ignored dir holding a tracked file\n",
                );
                write(wt.join("target/out/bin"), "ignored by info/exclude\n");
            }),
        ),
        (
            "issue-9-nested-repo",
            Box::new(|wt| {
                let st = Command::new("git")
                    .args(["init", "-q"])
                    .arg(wt.join("src/vendored"))
                    .status()
                    .unwrap();
                assert!(st.success());
                write(wt.join("src/vendored/f.txt"), "f\n");
            }),
        ),
        (
            "issue-10-removed",
            Box::new(|wt| {
                std::fs::remove_file(wt.join("src/a.b")).unwrap();
                std::fs::remove_file(wt.join("empty")).unwrap();
            }),
        ),
        (
            "issue-11-same-size-touched",
            // Same size, new content, new mtime: stat differs, content decides.
            Box::new(|wt| write(wt.join("src/a.rs"), "AAA\n")),
        ),
        (
            "issue-12-rewritten-same-content",
            // Rewritten with the same bytes: stat differs, content equal: clean, as git says.
            Box::new(|wt| write(wt.join("src/deep/er/d.rs"), "ddd\n")),
        ),
    ];
    std::fs::write(repo.join(".git/info/exclude"), "target/\n").unwrap();
    let mut wts = Vec::new();
    for (branch, make) in &cases {
        let wt = settled_worktree(&env, &repo, branch);
        make(&wt);
        wts.push((branch.to_string(), wt));
    }
    // Staged work (the cache-tree no longer matches HEAD), a conflict, an intent-to-add.
    let staged = settled_worktree(&env, &repo, "issue-13-staged");
    write(staged.join("src/a.rs"), "staged\n");
    env.git(&staged, &["add", "src/a.rs"]);
    env.git(&staged, &["rm", "-q", "src/b.rs"]);
    wts.push(("issue-13-staged".into(), staged));
    let conflict = settled_worktree(&env, &repo, "issue-14-conflict");
    write(conflict.join("src/a.rs"), "ours\n");
    env.git(&conflict, &["commit", "-qam", "ours"]);
    env.git(&repo, &["branch", "theirs", "main"]);
    let theirs = env.root().join("wt-theirs");
    env.git(
        &repo,
        &["worktree", "add", "-q", theirs.to_str().unwrap(), "theirs"],
    );
    write(theirs.join("src/a.rs"), "theirs\n");
    env.git(&theirs, &["commit", "-qam", "theirs"]);
    let merge = env
        .git_cmd(&conflict)
        .args(["merge", "-q", "theirs"])
        .output()
        .unwrap();
    assert!(!merge.status.success(), "the merge conflicts");
    wts.push(("issue-14-conflict".into(), conflict));
    let ita = settled_worktree(&env, &repo, "issue-15-intent-to-add");
    write(ita.join("later.txt"), "later\n");
    env.git(&ita, &["add", "-N", "later.txt"]);
    wts.push(("issue-15-intent-to-add".into(), ita));

    let (ours, log) = our_counts(&env, &repo);
    for (branch, wt) in &wts {
        let theirs = git_counts(&env, wt);
        let mine = ours
            .iter()
            .find(|(b, _)| b == branch)
            .unwrap_or_else(|| panic!("{branch} missing from {ours:?}"))
            .1;
        assert_eq!(mine, theirs, "{branch}: ours vs git status");
    }
    let expected: [(&str, [u64; 4]); 15] = [
        ("issue-1-clean", [0, 0, 0, 0]),
        ("issue-2-modified", [0, 1, 0, 0]),
        ("issue-3-exec-bit", [0, 1, 0, 0]),
        ("issue-4-file-became-dir", [0, 1, 1, 0]),
        ("issue-5-dir-became-file", [0, 2, 1, 0]),
        ("issue-6-symlinks", [0, 1, 1, 0]),
        ("issue-7-untracked", [0, 0, 5, 0]),
        ("issue-8-ignored", [0, 0, 1, 0]),
        ("issue-9-nested-repo", [0, 0, 1, 0]),
        ("issue-10-removed", [0, 2, 0, 0]),
        ("issue-11-same-size-touched", [0, 1, 0, 0]),
        ("issue-12-rewritten-same-content", [0, 0, 0, 0]),
        ("issue-13-staged", [2, 0, 0, 0]),
        ("issue-14-conflict", [0, 0, 0, 1]),
        ("issue-15-intent-to-add", [0, 1, 0, 0]),
    ];
    for (branch, counts) in expected {
        let mine = ours.iter().find(|(b, _)| b == branch).unwrap().1;
        assert_eq!(mine, counts, "{branch}");
    }
    // The clean worktree was decided by our walk alone: no gix status ran for it.
    let clean = env.root().join("wt-issue-1-clean");
    assert!(
        log.contains(&format!(
            "status of {}: proven by one walk (14 entries)",
            clean.display()
        )),
        "{log}"
    );
}

/// Set the mtime of `p` (not following a symlink) to `epoch` seconds.
fn touch(p: &Path, epoch: u64) {
    let st = Command::new("touch")
        .args(["-h", "-d", &format!("@{epoch}")])
        .arg(p)
        .status()
        .unwrap();
    assert!(st.success());
}

/// Stat options git honours, a racily clean file, a sparse checkout and a submodule:
/// counts equal git's.
#[test]
fn dirty_counts_equal_git_status_under_stat_options_sparse_and_submodules() {
    let env = TestEnv::new();
    let repo = base_repo(&env);
    for (k, v) in [
        ("core.checkStat", "minimal"),
        ("core.trustctime", "false"),
        ("core.fileMode", "false"),
        ("status.showUntrackedFiles", "no"),
    ] {
        env.git(&repo, &["config", k, v]);
    }
    // Racily clean: the entry's mtime is not before the index's, and the file was
    // rewritten with the same size and mtime, so only its content tells (git's racy-git).
    let racy = settled_worktree(&env, &repo, "issue-1-racy");
    let future = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    touch(&racy.join("src/a.rs"), future);
    env.git(&racy, &["update-index", "-q", "--really-refresh"]);
    write(racy.join("src/a.rs"), "AAA\n");
    touch(&racy.join("src/a.rs"), future);
    // Stat data equal but old (not racy): git trusts it, and so do we.
    let lying = settled_worktree(&env, &repo, "issue-2-stat-equal");
    write(lying.join("src/b.rs"), "BBB\n");
    touch(&lying.join("src/b.rs"), 1_790_000_000);
    // core.fileMode=false: an executable bit lost is no change; untracked still counted
    // whatever status.showUntrackedFiles says (an untracked file hidden could be deleted).
    let mode = settled_worktree(&env, &repo, "issue-3-filemode-off");
    {
        use std::os::unix::fs::PermissionsExt;
        let p = mode.join("run.sh");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    write(mode.join("src/untracked.rs"), "u\n");
    // A sparse checkout: entries outside it are skip-worktree and absent.
    let sparse = settled_worktree(&env, &repo, "issue-4-sparse");
    env.git(
        &sparse,
        &["sparse-checkout", "set", "--no-cone", "/src/deep/"],
    );
    write(sparse.join("src/deep/new.rs"), "n\n");
    // A submodule (a gitlink named in `.gitmodules`) with a modified file.
    let sub = settled_worktree(&env, &repo, "issue-5-submodule");
    let inner = sub.join("vendor/lib");
    write(inner.join("lib.rs"), "lib\n");
    env.git(&inner, &["init", "-q", "-b", "main"]);
    env.git(&inner, &["add", "."]);
    env.git(&inner, &["commit", "-q", "-m", "lib"]);
    write(
        sub.join(".gitmodules"),
        "[submodule \"vendor/lib\"]\n\tpath = vendor/lib\n\turl = ./vendor/lib\n",
    );
    env.git(&sub, &["add", ".gitmodules", "vendor/lib"]);
    env.git(&sub, &["commit", "-q", "-m", "add lib"]);
    write(inner.join("lib.rs"), "changed\n");

    let (ours, log) = our_counts(&env, &repo);
    let expected: [(&str, &Path, [u64; 4]); 5] = [
        ("issue-1-racy", &racy, [0, 1, 0, 0]),
        ("issue-2-stat-equal", &lying, [0, 0, 0, 0]),
        ("issue-3-filemode-off", &mode, [0, 0, 1, 0]),
        ("issue-4-sparse", &sparse, [0, 0, 1, 0]),
        ("issue-5-submodule", &sub, [0, 1, 0, 0]),
    ];
    for (branch, wt, counts) in expected {
        let mine = ours
            .iter()
            .find(|(b, _)| b == branch)
            .unwrap_or_else(|| panic!("{branch} missing from {ours:?}"))
            .1;
        assert_eq!(mine, git_counts(&env, wt), "{branch}: ours vs git status");
        assert_eq!(mine, counts, "{branch}");
    }
    // The racy entry was left to gix's content compare, not proven by its stat data.
    assert!(
        log.contains(&format!(
            "status of {}: 13 entries proven by one walk, 1 left to gix",
            racy.display()
        )),
        "{log}"
    );
}
