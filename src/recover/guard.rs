//! The one guard every action passes: re-gather and re-classify the worker at the moment
//! of acting, and go on only when the action is still the one planned (SPEC safety rule
//! 1: "a delete re-checks emptiness at the moment of deletion"; rule 3: never touch a
//! worker that is now running or has an operation in progress).

use super::{Outcome, RecoverError, Run, Step, failed, step};
use crate::model::{Action, Snapshot, Worker};

/// The worker as it is now, when its action is still `expected`; else the step to
/// report instead (skipped with the new verdict, or failed when it vanished).
///
/// Errors: [`RecoverError`] when the repository or the ledger cannot be read.
pub(super) fn recheck(
    r: &Run,
    w: &Worker,
    expected: Action,
) -> Result<Result<(Worker, Snapshot), Step>, RecoverError> {
    let Some((now_w, snap)) = r.recheck(&w.branch)? else {
        return Ok(Err(failed(
            w,
            format!("the worker vanished before the {expected}"),
            false,
        )));
    };
    // Never act on a reading that skipped the worktree (a live pid, without `--deep`):
    // the re-check reads every worktree, so this holds by construction; kept as a guard.
    if snap.worktree.as_ref().is_some_and(|f| f.not_read) {
        return Ok(Err(step(
            w,
            Outcome::Skipped,
            "re-checked: the worktree was not read (its pid is alive)",
        )));
    }
    // SPEC 1.2: a WIP commit is never a root commit the base does not share (an unborn
    // HEAD left unrestored, e.g. a branch not matching the pattern).
    if let Some(f) = snap.worktree.as_ref().filter(|f| f.unborn)
        && expected == Action::WipCommit
    {
        return Ok(Err(failed(
            w,
            format!(
                "the worktree {} is on {}, which does not exist: a WIP commit there would be a root commit",
                f.path, w.branch
            ),
            false,
        )));
    }
    if now_w.action != expected {
        return Ok(Err(step(
            w,
            Outcome::Skipped,
            format!(
                "re-checked: now {} / {}: {}",
                now_w.state, now_w.action, now_w.reason
            ),
        )));
    }
    Ok(Ok((now_w, snap)))
}
