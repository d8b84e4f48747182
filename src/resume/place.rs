//! Where a resumed agent runs: the worker's worktree, or one added for it.

use std::path::Path;

use crate::model::Snapshot;

use super::{ResumeError, sh_quote};

/// Where a resumed agent runs (SPEC `resume`: always an existing directory with the
/// worker's branch checked out).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// The worker's worktree (or the recorded `cwd` inside it), which exists.
    Existing(String),
    /// No worktree: one was added here with `git worktree add`.
    Added(String),
    /// No worktree, on a dry run: one would be added at `path`; `add` is the shell command
    /// that adds it (`git -C <common dir> worktree add …`, quoted), which the handed-out
    /// command runs first.
    WouldAdd {
        /// Where.
        path: String,
        /// The `git worktree add` command line.
        add: String,
    },
}

/// Where the worker resumes; adds a worktree under `recode.worktreeDir` when it has none
/// (not when `dry_run`).
///
/// Errors: [`ResumeError::MissingWorktree`] (exit 1, with the `git worktree repair` hint),
/// [`ResumeError::Add`].
pub(crate) fn place(
    repo: &gix::Repository,
    cfg: &crate::config::Config,
    snap: &Snapshot,
    dry_run: bool,
) -> Result<Place, ResumeError> {
    if let Some(w) = &snap.worktree {
        if w.missing {
            return Err(ResumeError::MissingWorktree {
                branch: snap.branch.clone(),
                path: w.path.clone(),
            });
        }
        return Ok(Place::Existing(w.path.clone()));
    }
    let path = crate::worktree::default_path(repo, cfg.worktree_dir.as_deref(), &snap.branch);
    let args = add_args(repo, cfg, snap, &path);
    if dry_run {
        // The command handed out adds the worktree itself, so it runs as shown.
        let mut add = vec![
            "git".to_string(),
            "-C".into(),
            repo.common_dir().display().to_string(),
        ];
        add.extend(args);
        let add = add
            .iter()
            .map(|a| sh_quote(a))
            .collect::<Vec<_>>()
            .join(" ");
        return Ok(Place::WouldAdd { path, add });
    }
    let added = crate::git::Git::new(repo.common_dir(), cfg.command_timeout)
        .args(&args)
        .output();
    // SPEC 1.2: a failing hook of the user's (post-checkout) never makes a completed step
    // look failed: judged by its result, the worktree on the branch.
    match added {
        Err(_)
            if crate::git::branch_checked_out(
                Path::new(&path),
                &snap.branch,
                cfg.command_timeout,
            ) => {}
        Err(source) => {
            return Err(ResumeError::Add {
                branch: snap.branch.clone(),
                path: path.clone(),
                source,
            });
        }
        Ok(_) => {}
    }
    Ok(Place::Added(path))
}

/// The `git worktree add` arguments for the worker at `path`: its local branch, else a new
/// branch tracking its remote one, else a new branch from the base.
fn add_args(
    repo: &gix::Repository,
    cfg: &crate::config::Config,
    snap: &Snapshot,
    path: &str,
) -> Vec<String> {
    let mut args: Vec<String> = vec!["worktree".into(), "add".into(), "--quiet".into()];
    if snap.branch_local {
        args.extend([path.to_string(), snap.branch.clone()]);
    } else if snap.branch_remote {
        let upstream = crate::repo::remote_tracking(repo, cfg, &snap.branch);
        let upstream = upstream.trim_start_matches("refs/remotes/").to_string();
        args.extend([
            "--track".into(),
            "-b".into(),
            snap.branch.clone(),
            path.to_string(),
            upstream,
        ]);
    } else {
        args.extend([
            "-b".into(),
            snap.branch.clone(),
            path.to_string(),
            snap.base.clone(),
        ]);
    }
    args
}
