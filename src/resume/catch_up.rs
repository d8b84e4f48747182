//! Before a takeover starts its agent: this host's local branch brought up to what was
//! pushed (SPEC 1.2 "Several machines": a takeover starts from the pushed branch).
//!
//! A host can hold a local branch (and a worktree) of another host's worker from before:
//! a resume that lost its claim, or was killed, after it added the worktree. The branch
//! then stands where the remote's was at that moment; the worker's host pushed on since.
//! Resumed as it is, the new agent would start on the old tip, and its push would be
//! rejected as a non-fast-forward. So, after [`super::takeover::before`] fetched the
//! branch: a local branch behind `<remote>/<branch>` is fast-forwarded — in its worktree
//! with `git merge --ff-only` (which refuses rather than overwrite a change, an untracked
//! file, or an ignored one), without one by a compare-and-swap of the ref — and a local
//! branch holding commits the remote lacks is never moved: the takeover is refused.

use std::path::Path;

use gix::ObjectId;

use crate::config::Config;
use crate::fence::shown;
use crate::model::{Snapshot, WorktreeFacts};

use super::ResumeError;

/// How a takeover's local branch stands to what was pushed.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum CatchUp {
    /// Nothing to do: no local branch, nothing fetched, or already at the pushed tip.
    Current,
    /// Fast-forwarded to the pushed tip (the snapshot is stale: gather it again).
    Moved,
    /// Refused (exit 3): the branch was left as it was.
    Refused {
        /// What was refused and why.
        why: String,
        /// What to do next.
        hint: String,
    },
}

/// Bring the local branch of `snap`'s worker up to `refs/remotes/<recode.remote>/<branch>`
/// (what [`super::takeover::before`] fetched) before a takeover starts its agent. Only a
/// fast-forward: a branch holding commits the remote lacks, or a worktree the fast-forward
/// would overwrite, is refused, untouched.
///
/// Errors: [`ResumeError::Repo`] when the refs cannot be read or written (not a lost
/// race) or the commits cannot be walked.
pub(crate) fn catch_up(
    repo: &gix::Repository,
    cfg: &Config,
    snap: &Snapshot,
) -> Result<CatchUp, ResumeError> {
    let branch = snap.branch.as_str();
    let pushed_name = format!("refs/remotes/{}/{branch}", cfg.remote);
    let (Some(local), Some(pushed)) = (
        read(repo, &format!("refs/heads/{branch}"))?,
        read(repo, &pushed_name)?,
    ) else {
        return Ok(CatchUp::Current);
    };
    if local == pushed {
        return Ok(CatchUp::Current);
    }
    let upstream = format!("{}/{branch}", cfg.remote);
    let (b, up) = (shown(branch), shown(&upstream));
    let unique = crate::repo::count_between(repo, local, &[pushed])?;
    if unique > 0 {
        let s = if unique == 1 { "" } else { "s" };
        return Ok(refused(
            branch,
            format!(
                "the local branch {b} holds {unique} commit{s} {up} lacks, and a takeover starts from what was pushed (never moving a branch off work only this host has)"
            ),
            format!(
                "compare them (`git log {up}..{b}`): merge {up} into {b} and push it, or keep them on another branch and reset {b} to {up}; then resume again"
            ),
        ));
    }
    if snap.deregistered.is_some() {
        return Ok(refused(
            branch,
            format!(
                "{b} is behind {up} and a checkout of it is no longer registered as a worktree"
            ),
            format!("run `git recode recover {b}` to register it again, then resume again"),
        ));
    }
    match &snap.worktree {
        None => swap(repo, branch, (local, pushed), &upstream),
        // `place` refuses it, naming the repair (nothing to fast-forward there).
        Some(w) if w.missing => Ok(CatchUp::Current),
        Some(w) => merge(repo, cfg, w, (branch, &upstream), pushed),
    }
}

/// The id `name` leads to, if it exists.
///
/// Errors: [`ResumeError::Repo`] when the refs cannot be read.
fn read(repo: &gix::Repository, name: &str) -> Result<Option<ObjectId>, ResumeError> {
    crate::refs::id(repo, name).map_err(|e| ResumeError::Repo(crate::repo::git(e)))
}

/// The refusal of a takeover of `branch`: `why`, and what to do next.
fn refused(branch: &str, why: String, hint: String) -> CatchUp {
    CatchUp::Refused {
        why: format!(
            "cannot take {} over: {why}: nothing ledgered",
            shown(branch)
        ),
        hint,
    }
}

/// Fast-forward the worktree `w` of `branch` to `pushed` (`upstream`, shown): `git merge
/// --ff-only`, which refuses rather than overwrite a change, an untracked file or an
/// ignored one (`--no-overwrite-ignore`), and never stashes. Judged by its result: the
/// branch at `pushed`.
///
/// Errors: [`ResumeError::Repo`] when the branch cannot be read after it.
fn merge(
    repo: &gix::Repository,
    cfg: &Config,
    w: &WorktreeFacts,
    (branch, upstream): (&str, &str),
    pushed: ObjectId,
) -> Result<CatchUp, ResumeError> {
    let (b, up, path) = (shown(branch), shown(upstream), shown(&w.path));
    let on_branch = crate::git::branch_checked_out(Path::new(&w.path), branch, cfg.command_timeout);
    if w.detached || w.operation.is_some() || w.foreign.is_some() || !on_branch {
        return Ok(refused(
            branch,
            format!(
                "its worktree {path} is behind {up} and not plainly on {b} (detached, or an operation in progress)"
            ),
            "finish or abort what is under way there, then resume again".into(),
        ));
    }
    let merged = crate::git::Git::bound(&w.path, &w.admin, cfg.command_timeout)
        .args([
            "merge",
            "--ff-only",
            "--no-autostash",
            "--no-overwrite-ignore",
        ])
        .args(["--quiet", "--no-stat"])
        .arg(pushed.to_string())
        .output();
    if read(repo, &format!("refs/heads/{branch}"))? == Some(pushed) {
        // Done (also when a post-merge hook of the user's failed after it).
        return Ok(CatchUp::Moved);
    }
    Ok(match merged {
        Ok(_) => refused(
            branch,
            format!("{b} moved while its worktree {path} was fast-forwarded to {up}"),
            "resume again".into(),
        ),
        Err(e) => refused(
            branch,
            format!(
                "cannot fast-forward its worktree {path} to {up} ({})",
                shown(&git_says(&e))
            ),
            format!(
                "nothing in {path} was touched: commit what it holds, or move it aside, then resume again"
            ),
        ),
    })
}

/// No worktree: move `refs/heads/<branch>` from `local` to `pushed` by compare-and-swap
/// (a branch that moved meanwhile is left as it is, and the takeover refused).
///
/// Errors: [`ResumeError::Repo`] when the ref cannot be written (not a lost race).
fn swap(
    repo: &gix::Repository,
    branch: &str,
    (local, pushed): (ObjectId, ObjectId),
    upstream: &str,
) -> Result<CatchUp, ResumeError> {
    let name = format!("refs/heads/{branch}");
    let message = format!("recode: takeover: fast-forward to {upstream}");
    let edit = crate::refs::Edit {
        name: &name,
        expect: crate::refs::Expect::Is(local),
        new: Some(pushed),
        message: &message,
    };
    match crate::refs::swap(repo, &edit) {
        Ok(true) => Ok(CatchUp::Moved),
        Ok(false) => Ok(moved_meanwhile(branch, upstream)),
        Err(e) if e.lost() => Ok(moved_meanwhile(branch, upstream)),
        Err(e) => Err(ResumeError::Repo(crate::repo::git(e))),
    }
}

/// The refusal of a compare-and-swap of the branch that lost a race.
fn moved_meanwhile(branch: &str, upstream: &str) -> CatchUp {
    refused(
        branch,
        format!(
            "{} moved while it was fast-forwarded to {}",
            shown(branch),
            shown(upstream)
        ),
        "resume again".into(),
    )
}

/// git's words for a failed run, on one line (the closing `Aborting` left out).
fn git_says(e: &crate::git::GitError) -> String {
    match e {
        crate::git::GitError::Failed { stderr, .. } => stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && *l != "Aborting")
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    }
}
