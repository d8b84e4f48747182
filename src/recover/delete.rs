//! `delete`: remove an empty or merged worker's worktree (`git worktree remove`, never
//! forced) and its branch, compare-and-swap on the old tip (SPEC safety rule 1). The
//! branch goes only when its commits stay reachable from the base or its remote-tracking
//! branch; the `deleted` event holds the tip, and the step says how to undo.

use std::path::Path;

use gix::ObjectId;

use super::removal::{self, Removal};
use super::{Outcome, RecoverError, Run, Step, failed, failpoint, guard, short, step};
use crate::model::Body;
use crate::model::{Action, PrState, State, Worker};
use crate::{repo, snapshot};

/// Carry out one `delete`.
///
/// Errors: [`RecoverError`] when the ledger cannot be written; a refused removal or a
/// branch that moved is a `failed` step.
pub(super) fn run(r: &Run, w: &Worker) -> Result<Step, RecoverError> {
    let (now_w, snap) = match guard::recheck(r, w, Action::Delete)? {
        Ok(v) => v,
        Err(s) => return Ok(s),
    };
    let merged = now_w.state == State::Published
        && now_w
            .pr
            .as_ref()
            .is_some_and(|p| p.state == PrState::Merged);
    let wt = snap.worktree.as_ref().filter(|f| !f.is_main);
    let local_tip = repo::tip(r.repo, &format!("refs/heads/{}", w.branch));
    let keep_branch = match local_tip {
        None => None,
        Some(tip) => kept_because(r, w, tip).map_err(snapshot::GatherError::from)?,
    };
    if !merged && let Some(why) = keep_branch {
        return Ok(failed(w, why, false));
    }
    // Listed again at the moment of deletion: what `git worktree remove` takes with it.
    let ignored = match wt.map(|f| {
        snapshot::ignored_paths(
            Path::new(&f.path),
            Path::new(&f.admin),
            r.cfg.command_timeout,
        )
    }) {
        Some(Ok(paths)) => snapshot::summarize(&paths),
        Some(Err(e)) => {
            // What cannot be read is not clean (SPEC special cases).
            return Ok(failed(
                w,
                format!("cannot list the worktree's ignored files, so it is not removed: {e}"),
                false,
            ));
        }
        None => Vec::new(),
    };
    r.classified(&now_w)?;
    let mut done = Vec::new();
    if let Some(f) = wt
        && let Some(refused) = remove_worktree(r, (w, &now_w), &f.path, &ignored, &mut done)?
    {
        return Ok(refused);
    }
    // Ledgered once something is gone (never for a refused removal), and before the
    // branch goes: the event holds the tip to restore it from.
    r.append(
        w,
        local_tip,
        Body::Deleted {
            worktree: wt.map(|f| f.path.clone()),
            ignored: ignored.clone(),
        },
    )?;
    match (local_tip, keep_branch) {
        (Some(tip), None) => {
            failpoint("delete-branch");
            if let Err(e) = delete_branch(r.repo, &w.branch, tip) {
                return Ok(failed(w, e, false));
            }
            done.push(undo_line(&w.branch, tip));
        }
        (_, Some(why)) => done.push(why),
        (None, None) => {}
    }
    Ok(step(w, Outcome::Done, done.join("; ")))
}

/// Remove the worktree at `path` (with its `ignored` files, summarized) the way `git
/// worktree remove` does, and add what was done to `done`. Returns the `failed` step
/// when the removal was refused (counted, three in a row escalate) or moved back.
///
/// Errors: [`RecoverError`] when the ledger cannot be written.
fn remove_worktree(
    r: &Run,
    (w, now_w): (&Worker, &Worker),
    path: &str,
    ignored: &[String],
    done: &mut Vec<String>,
) -> Result<Option<Step>, RecoverError> {
    failpoint("delete-worktree");
    match removal::remove(r.repo, Path::new(path), ignored, r.cfg.command_timeout) {
        Ok(Removal::Removed) => {}
        Ok(Removal::MovedBack(why)) => {
            return Ok(Some(failed(
                w,
                format!("not removed: {why}; it was moved back"),
                false,
            )));
        }
        Err(e) => {
            let refused = format!("git worktree remove refused: {e}");
            return r.step_failed(now_w, refused, false).map(Some);
        }
    }
    done.push(format!("removed worktree {path}"));
    if !ignored.is_empty() {
        done.push(format!("with its ignored files {}", ignored.join(", ")));
    }
    Ok(None)
}

/// `deleted <branch> (was <short tip>; undo: git branch <branch> <tip>)`.
fn undo_line(branch: &str, tip: ObjectId) -> String {
    let hex = tip.to_hex().to_string();
    format!(
        "deleted {branch} (was {}; undo: git branch {branch} {hex})",
        short(tip),
    )
}

/// Why the branch must stay: commits that neither the base nor the remote-tracking
/// branch contains would become unreachable. `None`: it can go.
fn kept_because(r: &Run, w: &Worker, tip: ObjectId) -> Result<Option<String>, repo::RepoError> {
    let mut keep = repo::base_tips(r.repo, r.cfg, &w.base);
    if let Some(t) = repo::tip(r.repo, &repo::remote_tracking(r.repo, r.cfg, &w.branch)) {
        keep.push(t);
    }
    let unique = repo::count_between(r.repo, tip, &keep)?;
    Ok((unique > 0).then(|| {
        format!(
            "{} of {} in neither {} nor its remote-tracking branch: branch kept",
            crate::render::plural(u64::from(unique), "commit"),
            w.branch,
            w.base
        )
    }))
}

/// Delete `refs/heads/<branch>` only if it still points at `tip` (compare-and-swap,
/// [`crate::refs::swap`]).
fn delete_branch(repo: &gix::Repository, branch: &str, tip: ObjectId) -> Result<(), String> {
    let name = format!("refs/heads/{branch}");
    let edit = crate::refs::Edit {
        name: &name,
        expect: crate::refs::Expect::Is(tip),
        new: None,
        message: "recode: delete",
    };
    crate::refs::swap(repo, &edit)
        .map(|_| ())
        .map_err(|e| format!("{branch} moved or could not be deleted (nothing was lost): {e}"))
}
