//! Milestones not in the ledger yet are shown at once and not lost (SPEC "milestone",
//! `hook`). The hook appends each milestone to the journal
//! ([`super::journal`]), and a commit whose hook failed, or whose worktree never reaches
//! the hook, still carries its `Recode-Phase:` trailer. Reads (`status`, `classify`,
//! `log`) show the journal's milestones and the trailers' that the ledger lacks, deduped
//! by `(head, phase)`, the journal's line preferred (its exact time and session id); the
//! next ledger write (`record …`, `resume`, `recover`) folds the journal into the ledger,
//! then ledgers the trailers' rest. Only a branch's commits ahead of the base are looked
//! at, newest first and at most [`SCAN_LIMIT`] of them, so a status stays cheap.
//!
//! A milestone picked up this way is stamped with the commit's committer time (second
//! precision), the moment the hook would have written it. `status` does not attribute
//! milestones to a branch with no worktree and no ledger (it stays `orphaned`).

use gix::ObjectId;

use crate::config::Config;
use crate::ledger::Ledgers;
use crate::model::{Body, Event};
use crate::repo::{self, RepoError};

/// Most commits ahead of the base looked at per branch (the newest ones).
pub(crate) const SCAN_LIMIT: usize = 256;

/// Milestone commits among `ahead` (commits ahead of the base, newest first, as
/// [`repo::commits_between`] gives them; only the first [`SCAN_LIMIT`] are read) with no
/// `milestone` event among `events` for that `(head, phase)`. Returns `(commit, phase,
/// committer time in seconds)`, oldest first.
///
/// Errors: [`RepoError::Git`] when a commit cannot be read.
pub(crate) fn unledgered_in<'a>(
    repo: &gix::Repository,
    ahead: &[(ObjectId, i64)],
    events: impl IntoIterator<Item = &'a Event>,
) -> Result<Vec<(ObjectId, String, i64)>, RepoError> {
    let seen: std::collections::BTreeSet<(ObjectId, &str)> =
        events.into_iter().filter_map(super::journal::key).collect();
    let mut out = Vec::new();
    for (id, time) in ahead.iter().take(SCAN_LIMIT).rev() {
        let commit = repo.find_commit(*id).map_err(repo::git)?;
        let message = commit.message_raw().map_err(repo::git)?;
        // Cheap test first: most commits carry no trailer at all.
        let bytes: &[u8] = message.as_ref();
        let needle = super::PHASE_TRAILER.as_bytes();
        if !bytes
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
        {
            continue;
        }
        if let Some(phase) = super::phase_of(&message.to_string())
            && !seen.contains(&(*id, phase.as_str()))
        {
            out.push((*id, phase, *time));
        }
    }
    Ok(out)
}

/// The journal's milestones of `branch` of task `task` (from `journal`, in journal order)
/// that `events` (the task's ledger) lacks, each `(head, phase)` once (its first line).
pub(crate) fn journaled(
    journal: &[Event],
    task: &str,
    branch: &str,
    events: &[Event],
) -> Vec<Event> {
    let mut seen: std::collections::BTreeSet<(ObjectId, &str)> =
        events.iter().filter_map(super::journal::key).collect();
    let mut out = Vec::new();
    for e in journal {
        if e.task != task || e.branch.as_deref() != Some(branch) {
            continue;
        }
        if let Some(k) = super::journal::key(e)
            && seen.insert(k)
        {
            out.push(e.clone());
        }
    }
    out
}

/// The milestones of `branch` of task `task` to show beyond `events` (the task's ledger):
/// the journal's ([`journaled`]), then those of the commits `ahead` (newest first, as
/// [`unledgered_in`] takes them) whose trailer neither the ledger nor the journal holds.
///
/// Errors: [`RepoError::Git`] when a commit cannot be read.
pub(crate) fn unledgered_with(
    repo: &gix::Repository,
    journal: &[Event],
    task: &str,
    branch: &str,
    ahead: &[(ObjectId, i64)],
    events: &[Event],
) -> Result<Vec<Event>, RepoError> {
    let mut out = journaled(journal, task, branch, events);
    let found = unledgered_in(repo, ahead, events.iter().chain(out.iter()))?;
    out.extend(events_for(task, branch, found));
    Ok(out)
}

/// The `milestone` events for `found` (from [`unledgered_in`]) on `branch` of `task`,
/// stamped with each commit's committer time; `seq` is 0 until appended.
pub(crate) fn events_for(
    task: &str,
    branch: &str,
    found: Vec<(ObjectId, String, i64)>,
) -> Vec<Event> {
    found
        .into_iter()
        .map(|(id, phase, secs)| {
            Event::new(
                crate::clock::from_secs(secs),
                task,
                Some(branch),
                Body::Milestone {
                    phase,
                    session_id: None,
                },
            )
            .with_head(Some(id))
        })
        .collect()
}

/// Put `extra` into `events` (in ledger order) by `ts`, after the events with the same `ts`.
pub(crate) fn merge(events: &mut Vec<Event>, extra: Vec<Event>) {
    let key = |e: &Event| e.ts;
    for e in extra {
        let k = key(&e);
        let at = events
            .iter()
            .rposition(|x| key(x) <= k)
            .map_or(0, |i| i + 1);
        events.insert(at, e);
    }
}

/// The milestones of `branch` that `events` (its task's ledger) lacks, as events for task
/// `task`: the journal's (read here: [`super::journal::read`]), then those `branch` (a
/// local branch) carries in trailers that neither holds ([`unledgered_with`]). No
/// trailers for the base branch.
///
/// Errors: [`RepoError`] when the branch's commits cannot be walked or read.
pub(crate) fn pending(
    repo: &gix::Repository,
    cfg: &Config,
    branch: &str,
    task: &str,
    events: &[Event],
) -> Result<Vec<Event>, RepoError> {
    pending_with(repo, cfg, &super::journal::read(repo), branch, task, events)
}

/// [`pending`] with the journal already read (`journal`).
///
/// Errors: as [`pending`].
pub(crate) fn pending_with(
    repo: &gix::Repository,
    cfg: &Config,
    journal: &[Event],
    branch: &str,
    task: &str,
    events: &[Event],
) -> Result<Vec<Event>, RepoError> {
    let base = repo::base_name(repo, cfg);
    let tip = repo::tip(repo, &format!("refs/heads/{branch}")).filter(|_| branch != base);
    let ahead = match tip {
        Some(tip) => {
            repo::newest_between(repo, tip, &repo::base_tips(repo, cfg, &base), SCAN_LIMIT)?
        }
        None => Vec::new(),
    };
    unledgered_with(repo, journal, task, branch, &ahead, events)
}

/// Local branches that are workers, with their task ([`crate::workers::worker_branches`]
/// among the local branches: matching `recode.branchPattern`, or named by one of
/// `ledgers`; never the base branch).
///
/// Errors: [`RepoError`] when the refs cannot be read.
pub(crate) fn local_worker_branches(
    repo: &gix::Repository,
    cfg: &Config,
    ledgers: &Ledgers,
) -> Result<Vec<(String, String)>, RepoError> {
    let local = local_branches(repo)?;
    let base = repo::base_name(repo, cfg);
    let workers =
        crate::workers::worker_branches(local.iter().map(String::as_str), cfg, ledgers, &base);
    Ok(workers
        .into_iter()
        .filter(|(b, _)| local.contains(b))
        .collect())
}

/// The short names of the local branches (`refs/heads/*`).
///
/// Errors: [`RepoError`] when the refs cannot be read.
fn local_branches(repo: &gix::Repository) -> Result<std::collections::BTreeSet<String>, RepoError> {
    Ok(crate::refs::list(repo, "refs/heads/")
        .map_err(repo::git)?
        .into_iter()
        .map(|r| r.name.trim_start_matches("refs/heads/").to_string())
        .collect())
}

/// Whether a local branch other than the base exists: without one no branch can be a
/// worker's, and the ledgers need not be read to find the workers' branches (a `sync` in
/// a clone that runs no worker stays cheap however long the ledger is).
///
/// Errors: [`RepoError`] when the refs cannot be read.
pub(crate) fn any_branch_but_base(repo: &gix::Repository, cfg: &Config) -> Result<bool, RepoError> {
    let base = repo::base_name(repo, cfg);
    Ok(local_branches(repo)?.iter().any(|b| *b != base))
}

/// Pending milestones of every local worker branch (matching `recode.branchPattern`, or
/// named by a ledger), for `log` of all tasks and `recover --all`.
///
/// Errors: [`RepoError`] when refs or commits cannot be read.
pub(crate) fn pending_all(
    repo: &gix::Repository,
    cfg: &Config,
    ledgers: &Ledgers,
) -> Result<Vec<Event>, RepoError> {
    let journal = super::journal::read(repo);
    let mut out = Vec::new();
    for (branch, task) in local_worker_branches(repo, cfg, ledgers)? {
        let events: Vec<Event> = ledgers
            .by_task
            .get(&task)
            .map(|l| l.events().cloned().collect())
            .unwrap_or_default();
        out.extend(pending_with(repo, cfg, &journal, &branch, &task, &events)?);
    }
    Ok(out)
}

/// The one-line warning `status` prints when the hook is reached somewhere but not from
/// some of `worktrees` (the workers' worktree directories): commits there do not run the
/// hook, so their milestones reach the ledger only late, from their trailers. `None` when
/// every one of them reaches the hook, or when no worktree does (the hook is not in use).
pub(crate) fn unreached_warning(
    repo: &gix::Repository,
    worktrees: &[&std::path::Path],
) -> Option<String> {
    let all = super::reach(repo);
    if !all.iter().any(|r| r.reaches) {
        return None;
    }
    let wanted: Vec<std::path::PathBuf> = worktrees
        .iter()
        .map(|p| super::walk::normalize(p))
        .collect();
    let lost: Vec<String> = all
        .iter()
        .filter(|r| !r.reaches && wanted.contains(&r.path))
        .map(|r| format!("{}: {}", r.path.display(), r.why.as_deref().unwrap_or("")))
        .collect();
    let (first, more) = match lost.as_slice() {
        [] => return None,
        [one] => (one.clone(), String::new()),
        [one, rest @ ..] => (one.clone(), format!(" (and {} more)", rest.len())),
    };
    Some(format!(
        "commits in {} do not reach the milestone hook ({first}){more}: their milestones are ledgered late, from their trailers; see `git recode hook status`",
        crate::render::plural(lost.len() as u64, "worker worktree"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ts: &str, phase: &str) -> Event {
        let mut e = Event::new(
            jiff::Timestamp::UNIX_EPOCH,
            "7",
            Some("issue-7"),
            Body::Milestone {
                phase: phase.into(),
                session_id: None,
            },
        );
        e.ts = crate::clock::parse(ts).unwrap();
        e
    }

    #[test]
    fn merge_puts_each_event_after_those_not_newer() {
        let mut events = vec![
            at("2026-11-18T10:00:00.000Z", "a"),
            at("2026-11-18T12:00:00.000Z", "c"),
        ];
        merge(
            &mut events,
            vec![
                at("2026-11-18T09:00:00.000Z", "first"),
                at("2026-11-18T12:00:00.000Z", "same"),
                at("2026-11-18T11:00:00.000Z", "b"),
            ],
        );
        let phases: Vec<String> = events
            .iter()
            .map(|e| match &e.body {
                Body::Milestone { phase, .. } => phase.clone(),
                _ => String::new(),
            })
            .collect();
        assert_eq!(phases, ["first", "a", "b", "c", "same"]);
    }
}
