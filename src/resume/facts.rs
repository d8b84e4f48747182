//! The facts a resume prompt is built from: read from the repository and the ledger
//! (never from memory), also `resume --json`'s `facts`.

use std::path::Path;

use crate::config::Config;
use crate::model::Body;
use crate::model::{Snapshot, Worker};
use crate::{git, hook, repo};

use super::{ResumeError, feedback};
use crate::wire::{CommitFact, Gate, LeftOutFact, ResumeFacts as Facts, TakeoverFacts};

/// The takeover this resume would be: the worker's newest attempt ran on another host
/// (SPEC 1.2 "Several machines"); the directory of that host's newest `spawn` on the branch.
pub(crate) fn takeover_facts(snap: &Snapshot) -> Option<TakeoverFacts> {
    let o = snap.hosts.other.as_ref()?;
    let path = snap.events.iter().rev().find_map(|e| match &e.body {
        Body::Spawn { host, cwd, .. }
            if *host == o.host && e.branch.as_deref().is_none_or(|b| b == snap.branch) =>
        {
            Some(cwd.clone())
        }
        _ => None,
    });
    Some(TakeoverFacts {
        from_host: o.host.clone(),
        path,
        last_seen: crate::clock::format_secs(o.last_seen()),
    })
}

/// Gather the facts for `w` from the repository and its ledger.
///
/// Errors: [`ResumeError::Repo`], [`ResumeError::Git`] when git cannot be read.
pub(crate) fn facts(
    repo: &gix::Repository,
    cfg: &Config,
    snap: &Snapshot,
    w: &Worker,
) -> Result<Facts, ResumeError> {
    let base_tips = repo::base_tips(repo, cfg, &w.base);
    let head = w.head;
    let commits = match head {
        Some(h) => commit_facts(repo, h, &base_tips)?,
        None => Vec::new(),
    };
    let diffstat = match (head, base_tips.first()) {
        (Some(h), Some(b)) if !commits.is_empty() => diffstat(repo, cfg, *b, h)?,
        _ => String::new(),
    };
    let uncommitted = uncommitted(snap, cfg)?;
    let gate = w
        .head
        .and_then(|h| crate::model::replay::gate_on(&snap.events, h))
        .map(|p| if p { Gate::Passed } else { Gate::Failed });
    let (last_rc, last_message) = last_exit(snap);
    let remote_ref = repo::remote_tracking(repo, cfg, &w.branch);
    let attempt = crate::model::replay::next_attempt(&snap.events);
    Ok(Facts {
        task: w.task.clone(),
        branch: w.branch.clone(),
        base: w.base.clone(),
        branch_exists: snap.branch_local,
        remote_branch: snap
            .branch_remote
            .then(|| remote_ref.trim_start_matches("refs/remotes/").to_string()),
        ahead: w.ahead,
        behind: w.behind,
        commits,
        diffstat,
        uncommitted,
        worktree: w.worktree.clone(),
        gate,
        last_outcome: w.last_outcome,
        last_rc,
        last_message,
        phase: w.phase.clone(),
        attempt,
        max_attempts: w.max_attempts,
        left_out: left_out(snap, cfg),
        stashes: snap.stashes.clone(),
        reset_away: snap.reset_away.clone(),
        pull_request: feedback::facts(w.pr.as_ref()),
        takeover: takeover_facts(snap),
        task_prompt: task_prompt(snap),
    })
}

/// The newest `wip` event's `left_out` paths (`crate::model::replay::left_out_last`) that are still in
/// the worker's worktree, each with its kind read from disk; empty without a worktree.
fn left_out(snap: &Snapshot, cfg: &Config) -> Vec<LeftOutFact> {
    let Some(f) = snap.worktree.as_ref().filter(|f| !f.missing) else {
        return Vec::new();
    };
    let dir = Path::new(&f.path);
    crate::model::replay::left_out_last(&snap.events, &snap.branch)
        .into_iter()
        .filter_map(|path| {
            let at = dir.join(&path);
            let meta = std::fs::symlink_metadata(&at).ok()?;
            let (kind, bytes) = if at.join(".git").exists() {
                let staged = git::read(dir, cfg.command_timeout, &["ls-files", "-s", "--", &path])
                    .unwrap_or_default();
                let gitlink = String::from_utf8_lossy(&staged).starts_with("160000 ");
                (if gitlink { "submodule" } else { "repository" }, None)
            } else if meta.is_file() {
                ("file", Some(meta.len()))
            } else {
                ("other", None)
            };
            Some(LeftOutFact { path, kind, bytes })
        })
        .collect()
}

/// The commits from the base tips to `head`, oldest first, with their subject, phase
/// trailer and WIP mark.
///
/// Errors: [`ResumeError::Repo`] when the history cannot be walked.
fn commit_facts(
    repo: &gix::Repository,
    head: gix::ObjectId,
    base_tips: &[gix::ObjectId],
) -> Result<Vec<CommitFact>, ResumeError> {
    let mut commits = Vec::new();
    for (id, _) in repo::commits_between(repo, head, base_tips)? {
        let msg = repo
            .find_commit(id)
            .ok()
            .and_then(|c| c.message_raw().ok().map(|m| m.to_string()))
            .unwrap_or_default();
        commits.push(CommitFact {
            id,
            subject: msg.lines().next().unwrap_or("").to_string(),
            phase: hook::phase_of(&msg),
            wip: hook::is_wip(&msg),
        });
    }
    commits.reverse();
    Ok(commits)
}

/// `git diff --stat <base>...<head>`, trailing whitespace trimmed.
///
/// Errors: [`ResumeError::Git`].
fn diffstat(
    repo: &gix::Repository,
    cfg: &Config,
    base: gix::ObjectId,
    head: gix::ObjectId,
) -> Result<String, ResumeError> {
    let range = format!("{base}...{head}");
    Ok(String::from_utf8_lossy(&git::read(
        repo.git_dir(),
        cfg.command_timeout,
        // No command of the repository's config: no external diff, no textconv.
        &["diff", "--no-ext-diff", "--no-textconv", "--stat", &range],
    )?)
    .trim_end()
    .to_string())
}

/// `git status --short --untracked-files=all` lines of the worker's worktree (none when
/// it has none or it is missing).
///
/// Errors: [`ResumeError::Git`].
fn uncommitted(snap: &Snapshot, cfg: &Config) -> Result<Vec<String>, ResumeError> {
    let Some(f) = snap.worktree.as_ref().filter(|f| !f.missing) else {
        return Ok(Vec::new());
    };
    let out = git::read(
        Path::new(&f.path),
        cfg.command_timeout,
        &["status", "--short", "--untracked-files=all"],
    )?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .map(str::to_string)
        .collect())
}

/// The task's prompt recorded by the newest `spawn` of the task that kept one (any of its
/// branches: a retry on a new slug is the same task).
fn task_prompt(snap: &Snapshot) -> Option<String> {
    snap.events.iter().rev().find_map(|e| match &e.body {
        Body::Spawn {
            prompt: Some(p), ..
        } if !p.trim().is_empty() => Some(p.clone()),
        _ => None,
    })
}

/// The exit code and final message of the last recorded exit, if any.
fn last_exit(snap: &Snapshot) -> (Option<i32>, Option<String>) {
    let r = snap.replayed();
    match r.last_exit.map(|i| &snap.events[i].body) {
        Some(Body::Exit { rc, message, .. }) => (Some(*rc), message.clone()),
        _ => (None, None),
    }
}
