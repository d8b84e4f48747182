//! Generators of the SPEC 1.3 states ("Proof before every irreversible step") for the
//! never-lose harness, each with its variants:
//!
//! - work only a stash holds: the agent's changes (tracked, untracked) stashed on the
//!   branch with or without a message, nothing ahead;
//! - a foreign `.git`: the worktree's `.git` file gone and `git init` run in it (with or
//!   without a commit of its own), or the `.git` file pointing at another repository;
//! - hidden changes: an edit under `assume-unchanged` or `skip-worktree`, and (a fault of
//!   the whole trial) a stale `core.fsmonitor` that reports nothing changed, with the
//!   untracked cache on;
//! - requests not the worker's own in the forge stand-in: merged, closed or open pull
//!   requests with the worker's branch name from a fork or a deleted fork, their head at
//!   the worker's tip.
//!
//! What each adds to the invariants is in [`Hiding`], checked by [`Hiding::check`].

use std::path::{Path, PathBuf};

use super::{Rng, Trial};
use crate::common::TestEnv;

/// What the SPEC 1.3 states add to the invariants.
#[derive(Default)]
pub(super) struct Hiding {
    /// Workers that must keep their worktree and branch (stash-only work, a fork's
    /// request, a foreign `.git`): (worktree, branch).
    pub kept: Vec<(PathBuf, String)>,
    /// Foreign repositories in worktrees: (worktree, its `rev-list --all` before): nothing
    /// is ever committed there.
    pub foreign: Vec<(PathBuf, String)>,
    /// Hidden edits: (worktree, path, content, branch): on disk, or in the branch.
    pub hidden: Vec<(PathBuf, String, String, String)>,
}

impl Trial {
    /// A worker's work stashed on its branch (after its commits, if any).
    pub(super) fn stash_only(&mut self, rng: &mut Rng, wt: &Path, branch: &str, i: u64) {
        std::fs::write(wt.join("README.md"), format!("stashed edit {i}\n")).unwrap();
        std::fs::write(wt.join(format!("stashed{i}.txt")), "stashed new\n").unwrap();
        if rng.chance(50) {
            self.git(wt, &["stash", "push", "-u", "-q", "-m", "check baseline"]);
        } else {
            self.git(wt, &["stash", "push", "-u", "-q"]);
        }
        self.hiding
            .kept
            .push((wt.to_path_buf(), branch.to_string()));
    }

    /// The worktree's `.git` leads elsewhere: `git init` in it, or a `.git` file naming
    /// another repository.
    pub(super) fn foreign_git(&mut self, rng: &mut Rng, wt: &Path, branch: &str, i: u64) {
        std::fs::write(wt.join(format!("f{i}.txt")), "uncommitted\n").unwrap();
        std::fs::remove_file(wt.join(".git")).unwrap();
        if rng.chance(70) {
            self.git(wt, &["init", "-q", "-b", "main", "."]);
            if rng.chance(30) {
                self.git(wt, &["add", "README.md"]);
                self.git(wt, &["commit", "-q", "-m", "the agent's own root"]);
            }
        } else {
            // Another repository's git dir (not bare: the harness's own git runs in it).
            let other = self.env.root().join(format!("other{i}"));
            let other_s = other.to_str().unwrap().to_string();
            self.git(&self.env.root(), &["init", "-q", "-b", "main", &other_s]);
            std::fs::write(wt.join(".git"), format!("gitdir: {other_s}/.git\n")).unwrap();
        }
        let all = all_commits(&self.env, wt);
        self.hiding.foreign.push((wt.to_path_buf(), all));
        self.hiding
            .kept
            .push((wt.to_path_buf(), branch.to_string()));
    }

    /// An edit an index flag hides from `git status`.
    pub(super) fn hidden_edit(&mut self, rng: &mut Rng, wt: &Path, branch: &str, i: u64) {
        let flag = if rng.chance(60) {
            "--assume-unchanged"
        } else {
            "--skip-worktree"
        };
        self.git(wt, &["update-index", flag, "README.md"]);
        let text = format!("hidden edit {i}\n");
        std::fs::write(wt.join("README.md"), &text).unwrap();
        self.hiding.hidden.push((
            wt.to_path_buf(),
            "README.md".into(),
            text,
            branch.to_string(),
        ));
    }

    /// Requests with the worker's branch name from a fork or a deleted fork, at its tip.
    pub(super) fn fork_requests(&mut self, rng: &mut Rng, wt: &Path, branch: &str) {
        let tip = self.git(wt, &["rev-parse", "HEAD"]);
        for _ in 0..1 + rng.below(2) {
            let fork = rng.chance(50).then_some("someone/widget");
            let state = *rng.pick(&["merged", "merged", "closed", "open"]);
            let n = self.gh.add_fork_pr("acme", &self.slug, fork, branch, state);
            self.gh.set_head(n, &tip);
        }
        self.hiding
            .kept
            .push((wt.to_path_buf(), branch.to_string()));
    }

    /// The trial's fault: a stale file-system monitor (it reports nothing changed) and the
    /// untracked cache, set after every worktree was made.
    pub(super) fn stale_monitor(&self) {
        let hook = self.env.root().join("fsmonitor-hook");
        std::fs::write(&hook, "#!/bin/sh\nprintf 'tok-1\\0'\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        self.git(
            &self.repo,
            &["config", "core.fsmonitor", hook.to_str().unwrap()],
        );
        self.git(&self.repo, &["config", "core.untrackedCache", "true"]);
    }
}

/// Every commit of the repository at `dir` (`rev-list --all`; empty when it has none or
/// cannot be read).
fn all_commits(env: &TestEnv, dir: &Path) -> String {
    let out = env
        .git_cmd(dir)
        .args(["rev-list", "--all"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

impl Hiding {
    /// The invariants after a run (`when` names it).
    pub(super) fn check(&self, env: &TestEnv, repo: &Path, when: &str) -> Vec<String> {
        let mut v = Vec::new();
        for (wt, branch) in &self.kept {
            let ref_ok = env
                .git_cmd(repo)
                .args([
                    "rev-parse",
                    "-q",
                    "--verify",
                    &format!("refs/heads/{branch}"),
                ])
                .output()
                .unwrap()
                .status
                .success();
            if !wt.is_dir() || !ref_ok {
                v.push(format!(
                    "{when}: {branch} had proof of nothing finished, yet its worktree or branch went"
                ));
            }
        }
        for (wt, before) in &self.foreign {
            if all_commits(env, wt) != *before {
                v.push(format!(
                    "{when}: a commit was made in the foreign repository in {}",
                    wt.display()
                ));
            }
        }
        for (wt, path, text, branch) in &self.hidden {
            let on_disk = std::fs::read_to_string(wt.join(path)).is_ok_and(|t| t == *text);
            let spec = format!("{branch}:{path}");
            let out = env.git_cmd(repo).args(["show", &spec]).output().unwrap();
            let committed = String::from_utf8_lossy(&out.stdout) == *text;
            if !on_disk && !committed {
                v.push(format!(
                    "{when}: the hidden edit of {path} in {} is lost",
                    wt.display()
                ));
            }
        }
        v
    }
}

/// Copy a directory tree (files keep their permissions).
pub(super) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().unwrap().is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}
