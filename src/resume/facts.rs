//! The facts a resume prompt is built from: read from the repository and the ledger
//! (never from memory), also `resume --json`'s `facts`.

use std::path::Path;

use serde::Serialize;

use crate::config::Config;
use crate::ledger;
use crate::ledger::Body;
use crate::model::{Snapshot, Worker};
use crate::{git, hook, repo};

use super::{ResumeError, feedback};

/// One commit since the base.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct CommitFact {
    /// Commit id (40 hex digits in `resume --json`).
    #[serde(serialize_with = "crate::model::event::wire_head::one")]
    pub id: gix::ObjectId,
    /// First line of the message.
    pub subject: String,
    /// Its `Recode-Phase:` trailer.
    pub phase: Option<String>,
    /// A git-recode WIP snapshot (`Recode-Wip: true`).
    pub wip: bool,
}

/// The facts a prompt is built from (also `resume --json`'s `facts`).
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Facts {
    /// Task key.
    pub task: String,
    /// Branch.
    pub branch: String,
    /// Base branch.
    pub base: String,
    /// The branch exists locally.
    pub branch_exists: bool,
    /// The remote-tracking branch, when it exists.
    pub remote_branch: Option<String>,
    /// Commits ahead of the base; null when unknown (a shallow history without a merge base).
    pub ahead: Option<u32>,
    /// Commits behind the base; null when unknown.
    pub behind: Option<u32>,
    /// Commits since the base, oldest first.
    pub commits: Vec<CommitFact>,
    /// `git diff --stat <base>...<head>`.
    pub diffstat: String,
    /// `git status --short` of the worktree (empty when clean or absent).
    pub uncommitted: Vec<String>,
    /// The worktree.
    pub worktree: Option<String>,
    /// The newest gate result for exactly the head: `passed` or `failed`.
    pub gate: Option<String>,
    /// The previous attempt's outcome.
    pub last_outcome: Option<String>,
    /// Its exit code.
    pub last_rc: Option<i32>,
    /// Its final message.
    pub last_message: Option<String>,
    /// Newest milestone.
    pub phase: Option<String>,
    /// The attempt this resume starts.
    pub attempt: u32,
    /// `recode.maxAttempts`.
    pub max_attempts: u32,
    /// What the branch's newest WIP step left out and is still in the worktree (SPEC 1.2
    /// "Never lose work: more states": the resume prompt names it), in the ledger's order.
    pub left_out: Vec<LeftOutFact>,
    /// Stash entries made on the branch, newest first (`stash@{N} (<message>)`: the message
    /// is untrusted text): work no status shows (SPEC 1.3).
    pub stashes: Vec<String>,
    /// The open pull request whose failing checks or requested changes this resume
    /// answers (SPEC "Pull request feedback"); null otherwise.
    pub pull_request: Option<feedback::PrFacts>,
    /// The worker's newest attempt ran on another host, silent for `recode.hostTimeout`:
    /// this resume takes it over (SPEC 1.2 "Several machines"). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub takeover: Option<TakeoverFacts>,
    /// The task's own prompt, as the loop gave it to the newest attempt that recorded one
    /// (`record spawn --prompt-file`, its first 16 KiB): untrusted, fenced under "The
    /// task" (SPEC 1.3). Absent when no spawn recorded one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_prompt: Option<String>,
}

/// Where the work was before a takeover (SPEC 1.2: the prompt says where the work was and
/// that uncommitted work may remain there).
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct TakeoverFacts {
    /// The silent host.
    pub from_host: String,
    /// The directory its newest attempt ran in there, when recorded.
    pub path: Option<String>,
    /// When that host was last heard of (RFC 3339).
    pub last_seen: String,
}

/// The takeover this resume would be: the worker's newest attempt ran on another host
/// (SPEC 1.2 "Several machines"); the directory of that host's newest `spawn` on the branch.
pub fn takeover_facts(snap: &Snapshot) -> Option<TakeoverFacts> {
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
pub fn facts(
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
        (Some(h), Some(b)) if !commits.is_empty() => diffstat(repo, *b, h)?,
        _ => String::new(),
    };
    let uncommitted = uncommitted(snap)?;
    let gate = w
        .head
        .and_then(|h| ledger::gate_on(&snap.events, h))
        .map(|p| if p { "passed" } else { "failed" }.to_string());
    let (last_rc, last_message) = last_exit(snap);
    let remote_ref = repo::remote_tracking(repo, cfg, &w.branch);
    let attempt = ledger::next_attempt(&snap.events);
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
        last_outcome: w.last_outcome.map(|o| o.as_str().to_string()),
        last_rc,
        last_message,
        phase: w.phase.clone(),
        attempt,
        max_attempts: w.max_attempts,
        left_out: left_out(snap),
        stashes: snap.stashes.clone(),
        pull_request: feedback::facts(w.pr.as_ref()),
        takeover: takeover_facts(snap),
        task_prompt: task_prompt(snap),
    })
}

/// One path a WIP commit left out, as it is on disk now.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct LeftOutFact {
    /// Repository-relative, `/`-separated.
    pub path: String,
    /// `submodule` (a registered gitlink holding work its remote lacks), `repository` (an
    /// untracked nested repository), `file` (an untracked file, too large for a WIP
    /// commit or refused by the remote), or `other`.
    pub kind: &'static str,
    /// The file's size in bytes (`file` only).
    pub bytes: Option<u64>,
}

/// The newest `wip` event's `left_out` paths (`ledger::left_out_last`) that are still in
/// the worker's worktree, each with its kind read from disk; empty without a worktree.
fn left_out(snap: &Snapshot) -> Vec<LeftOutFact> {
    let Some(f) = snap.worktree.as_ref().filter(|f| !f.missing) else {
        return Vec::new();
    };
    let dir = Path::new(&f.path);
    ledger::left_out_last(&snap.events, &snap.branch)
        .into_iter()
        .filter_map(|path| {
            let at = dir.join(&path);
            let meta = std::fs::symlink_metadata(&at).ok()?;
            let (kind, bytes) = if at.join(".git").exists() {
                let staged = git::read(dir, &["ls-files", "-s", "--", &path]).unwrap_or_default();
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
    base: gix::ObjectId,
    head: gix::ObjectId,
) -> Result<String, ResumeError> {
    let range = format!("{base}...{head}");
    Ok(String::from_utf8_lossy(&git::read(
        repo.git_dir(),
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
fn uncommitted(snap: &Snapshot) -> Result<Vec<String>, ResumeError> {
    let Some(f) = snap.worktree.as_ref().filter(|f| !f.missing) else {
        return Ok(Vec::new());
    };
    let out = git::read(
        Path::new(&f.path),
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
    let r = ledger::replay_for(&snap.events, &snap.branch);
    match r.last_exit.map(|i| &snap.events[i].body) {
        Some(Body::Exit { rc, message, .. }) => (Some(*rc), message.clone()),
        _ => (None, None),
    }
}
