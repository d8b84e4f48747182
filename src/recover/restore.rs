//! Before anything else, a `recover` run recreates each worker branch that was deleted
//! under its worktree (the worktree's HEAD names a branch that no longer exists: an
//! unborn HEAD) at the newest commit of that worktree's HEAD reflog, ledgered as a
//! `restored` event (`branch`, `head`). Without a reflog nothing is written: the worker
//! is `needs-human` (SPEC 1.2 "Never lose work: more states"). A WIP commit on an unborn
//! HEAD would be a root commit the base does not share, and the agent's commits would
//! stay reachable only from that reflog.

use super::RecoverError;
use crate::config::Config;
use crate::ledger;
use crate::model::{Body, Event};
use crate::{snapshot, worktree};

/// Recreate every unborn worker branch that a worktree's HEAD reflog can restore; one
/// line per branch restored (for stderr). A branch is a worker's when it matches
/// `recode.branchPattern` or its task has a ledger. A branch created meanwhile by
/// someone else is left alone (the ref must not exist: compare-and-swap).
///
/// Errors: [`RecoverError`] when the worktrees or the ledger cannot be read or written.
pub(super) fn unborn_branches(
    repo: &gix::Repository,
    cfg: &Config,
    now: jiff::Timestamp,
) -> Result<Vec<String>, RecoverError> {
    let mut lines = Vec::new();
    let worktrees = worktree::list(repo).map_err(snapshot::GatherError::from)?;
    for wt in worktrees.iter().filter(|w| w.unborn) {
        let (Some(branch), Some(head)) = (wt.branch.as_deref(), wt.head) else {
            continue;
        };
        let task = cfg.key_of(branch);
        let refs = snapshot::notes_refs(repo, cfg);
        let has_ledger = !ledger::read_task(repo, &refs, &task)?.0.entries.is_empty();
        if cfg.task_of(branch).is_none() && !has_ledger {
            continue;
        }
        if create_branch(repo, branch, head).is_err() {
            continue; // it exists again (someone recreated it): nothing to restore
        }
        let path = wt.path.to_string_lossy().to_string();
        let e = Event::new(
            crate::clock::now()?.max(now),
            &task,
            Some(branch),
            Body::Restored {
                worktree: Some(path.clone()),
            },
        )
        .with_head(Some(head));
        ledger::append(repo, cfg, e)?;
        lines.push(format!(
            "restored {branch} at {} from the HEAD reflog of {path} (it had been deleted under its worktree)",
            head.to_hex_with_len(12)
        ));
    }
    Ok(lines)
}

/// Create `refs/heads/<branch>` at `id`, only if it does not exist.
fn create_branch(repo: &gix::Repository, branch: &str, id: gix::ObjectId) -> Result<(), String> {
    let name = format!("refs/heads/{branch}");
    let edit = crate::refs::Edit {
        name: &name,
        expect: crate::refs::Expect::Absent,
        new: Some(id),
        message: "recode: restored from the worktree's HEAD reflog",
    };
    crate::refs::swap(repo, &edit)
        .map_err(|e| e.to_string())?
        .then_some(())
        .ok_or_else(|| format!("{name} was created meanwhile"))
}
