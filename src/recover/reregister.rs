//! A checkout of a worker's branch whose worktree registration is gone (a `git worktree
//! prune` while its volume was away, a removal that failed half-way) is registered again,
//! its content kept (SPEC 1.3): a new admin directory under `<common>/worktrees/` on the
//! worker's branch, its index read from the branch (the old one went with the old admin
//! directory), and the checkout's `.git` file naming it. `git worktree add` refuses an
//! existing directory, so the admin directory is written here in git's layout
//! (`gitrepository-layout`: `HEAD`, `commondir`, `gitdir`, `index`).
//!
//! Kill-safe: the admin directory is built aside (`<common>/recode/register/<id>`) and
//! renamed into place last, after the checkout's `.git` names it; a run killed before the
//! rename leaves the checkout deregistered (the next run starts over, the same id), one
//! killed after it leaves it registered. Nothing in the checkout is written but its `.git`.

use std::path::{Path, PathBuf};

use super::{Outcome, RecoverError, Run, Step, step};
use crate::model::Worker;
use crate::{git, repo, worktree};

/// Register `path` again as the worktree of `w.branch` (`names`: the admin directory its
/// `.git` names); a failure counts towards the three that escalate.
///
/// Errors: [`RecoverError`] when the ledger cannot be written.
pub(super) fn run(r: &Run, w: &Worker, path: &str, names: &str) -> Result<Step, RecoverError> {
    r.classified(w)?;
    match register(
        r.repo,
        Path::new(path),
        Path::new(names),
        &w.branch,
        r.cfg.command_timeout,
    ) {
        Ok(admin) => Ok(step(
            w,
            Outcome::Done,
            format!(
                "registered {path} again as the worktree of {} ({}), its content kept",
                w.branch,
                admin.display()
            ),
        )),
        Err(why) => r.step_failed(
            w,
            format!(
                "cannot register {path} again as the worktree of {}: {why}",
                w.branch
            ),
            false,
        ),
    }
}

/// Write the admin directory of `dir` for `branch` and point `dir/.git` at it; returns it.
fn register(
    repo: &gix::Repository,
    dir: &Path,
    names: &Path,
    branch: &str,
    timeout: std::time::Duration,
) -> Result<PathBuf, String> {
    let full = format!("refs/heads/{branch}");
    if repo::tip(repo, &full).is_none() {
        return Err(format!("{branch} does not exist here"));
    }
    let list = worktree::list(repo).map_err(|e| e.to_string())?;
    if let Some(other) = list.iter().find(|w| w.branch.as_deref() == Some(branch)) {
        return Err(format!(
            "{branch} is checked out in {}",
            other.path.display()
        ));
    }
    let common = worktree::absolute(repo.common_dir());
    let worktrees = common.join("worktrees");
    let admin = free_admin(&worktrees, names, dir);
    let id = admin
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    let io =
        |what: &str, p: &Path, e: std::io::Error| format!("cannot {what} {}: {e}", p.display());
    let tmp = common.join("recode").join("register").join(&id);
    if tmp.exists() {
        // Our own, left by a run killed while building it.
        std::fs::remove_dir_all(&tmp).map_err(|e| io("remove", &tmp, e))?;
    }
    std::fs::create_dir_all(&tmp).map_err(|e| io("create", &tmp, e))?;
    let write = |name: &str, text: String| {
        std::fs::write(tmp.join(name), text).map_err(|e| io("write", &tmp.join(name), e))
    };
    write("commondir", format!("{}\n", common.display()))?;
    write("gitdir", format!("{}\n", dir.join(".git").display()))?;
    if crate::refs::is_reftable(repo) {
        // A reftable worktree keeps HEAD in its own stack (git's layout: a stub `HEAD`,
        // `refs/heads` a file saying so, an empty `reftable/` stack), set by git.
        write("HEAD", "ref: refs/heads/.invalid\n".into())?;
        for d in ["refs", "reftable"] {
            std::fs::create_dir_all(tmp.join(d)).map_err(|e| io("create", &tmp.join(d), e))?;
        }
        write(
            "refs/heads",
            "this repository uses the reftable format\n".into(),
        )?;
        write("reftable/tables.list", String::new())?;
        git::Git::bound(dir, &tmp, timeout)
            .args(["symbolic-ref", "HEAD", &full])
            .output()
            .map_err(|e| e.to_string())?;
    } else {
        write("HEAD", format!("ref: {full}\n"))?;
    }
    // The index of the branch's tree; the worktree's files are left as they are.
    git::Git::bound(dir, &tmp, timeout)
        .args(["read-tree", &full])
        .output()
        .map_err(|e| e.to_string())?;
    write("commondir", "../..\n".into())?;
    if worktree::bind::dot_git_target(dir).as_deref() != Some(admin.as_path()) {
        let dot = dir.join(".git");
        let aside = dir.join(".git.recode-register");
        std::fs::write(&aside, format!("gitdir: {}\n", admin.display()))
            .map_err(|e| io("write", &aside, e))?;
        std::fs::rename(&aside, &dot).map_err(|e| io("replace", &dot, e))?;
    }
    std::fs::create_dir_all(&worktrees).map_err(|e| io("create", &worktrees, e))?;
    std::fs::rename(&tmp, &admin).map_err(|e| io("move into place", &admin, e))?;
    Ok(admin)
}

/// The admin directory to use: the one `dir/.git` names when it is free, else a free
/// `<worktrees>/<name>-N` (`<name>` the directory's name, as git names them).
fn free_admin(worktrees: &Path, names: &Path, dir: &Path) -> PathBuf {
    if names.parent() == Some(worktrees) && !names.exists() {
        return names.to_path_buf();
    }
    let base = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "worktree".into());
    (1..)
        .map(|n| worktrees.join(format!("{base}-{n}")))
        .find(|p| !p.exists())
        .expect("some name is free")
}
