//! The JSON wire format: the stable contract of `--json` (SPEC "The worker object").
//!
//! These structs are kept apart from the internal ones so that the contract changes
//! only on purpose, and only additively. Every field is always present; unknown values
//! are `null`. Documents carry `"schema": 1`.

use serde::{Deserialize, Serialize};

use crate::clock;
use crate::model::{Dirty, Worker};

/// Version of every JSON document git-recode prints.
pub const SCHEMA: u32 = 1;

/// `dirty`: counts in files.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct DirtyJson {
    /// Files staged (index differs from HEAD).
    pub staged: u32,
    /// Tracked files changed in the worktree.
    pub unstaged: u32,
    /// Untracked, not ignored files.
    pub untracked: u32,
    /// Unmerged paths.
    pub conflicted: u32,
}

impl From<Dirty> for DirtyJson {
    fn from(d: Dirty) -> Self {
        DirtyJson {
            staged: d.staged,
            unstaged: d.unstaged,
            untracked: d.untracked,
            conflicted: d.conflicted,
        }
    }
}

/// `pr`: the branch's pull request.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct PrJson {
    /// Pull request number.
    pub number: u64,
    /// `open`, `closed` or `merged`.
    pub state: String,
    /// The page (GitHub's `html_url`).
    pub url: String,
    /// The head's checks (SPEC "Pull request feedback"): `passing`, `failing`, `pending`,
    /// or null (no checks, or not asked: only open pull requests of workers are).
    pub checks: Option<String>,
    /// The reviewers' verdict: `approved`, `changes_requested`, or null (none decides).
    pub review: Option<String>,
}

/// One worker (`status --json` items; `classify --json` adds `schema` and `evidence`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct WorkerJson {
    /// Task key.
    pub task: String,
    /// Branch name.
    pub branch: String,
    /// Absolute worktree path, or null.
    pub worktree: Option<String>,
    /// Commit id, or null.
    pub head: Option<String>,
    /// Base branch name.
    pub base: String,
    /// Commits ahead of the base.
    pub ahead: u32,
    /// Commits behind the base.
    pub behind: u32,
    /// Commits on the remote-tracking branch not in the base, or null.
    pub remote_ahead: Option<u32>,
    /// Dirty counts, or null when there is no readable worktree.
    pub dirty: Option<DirtyJson>,
    /// `rebase`, `merge`, `cherry-pick`, `revert`, `bisect`, `am` or null.
    pub operation: Option<String>,
    /// `running`, `stalled`, `exited`, `unknown`.
    pub liveness: String,
    /// `needs-human`, `published`, `orphaned`, `empty`, `publishable`, `half-done`.
    pub state: String,
    /// `escalate`, `none`, `delete`, `publish`, `wip-commit`, `resume`, `wait`.
    pub action: String,
    /// One sentence of evidence.
    pub reason: String,
    /// Counted attempts.
    pub attempts: u32,
    /// `recode.maxAttempts`.
    pub max_attempts: u32,
    /// `success`, `failed`, `transient`, `needs-human`, `blocked` or null.
    pub last_outcome: Option<String>,
    /// Newest milestone phase, or null.
    pub phase: Option<String>,
    /// Newest agent session id, or null.
    pub session_id: Option<String>,
    /// RFC 3339, or null.
    pub last_activity: Option<String>,
    /// Seconds since `last_activity`, or null.
    pub idle_seconds: Option<i64>,
    /// RFC 3339, or null.
    pub retry_after: Option<String>,
    /// The pull request, or null.
    pub pr: Option<PrJson>,
    /// The last success claim has no pull request.
    pub phantom: bool,
}

impl From<&Worker> for WorkerJson {
    fn from(w: &Worker) -> Self {
        WorkerJson {
            task: w.task.clone(),
            branch: w.branch.clone(),
            worktree: w.worktree.clone(),
            head: w.head.clone(),
            base: w.base.clone(),
            ahead: w.ahead,
            behind: w.behind,
            remote_ahead: w.remote_ahead,
            dirty: w.dirty.map(Into::into),
            operation: w.operation.map(|o| o.as_str().to_string()),
            liveness: w.liveness.as_str().into(),
            state: w.state.as_str().into(),
            action: w.action.as_str().into(),
            reason: w.reason.to_string(),
            attempts: w.attempts,
            max_attempts: w.max_attempts,
            last_outcome: w.last_outcome.map(|o| o.as_str().to_string()),
            phase: w.phase.clone(),
            session_id: w.session_id.clone(),
            last_activity: w.last_activity.map(clock::format_secs),
            idle_seconds: w.idle_seconds,
            retry_after: w.retry_after.map(clock::format_secs),
            pr: w.pr.as_ref().map(|p| PrJson {
                number: p.number,
                state: p.state.as_str().to_string(),
                url: p.url.clone(),
                checks: p.checks.map(|c| c.as_str().to_string()),
                review: p.review.map(|r| r.as_str().to_string()),
            }),
            phantom: w.phantom,
        }
    }
}

/// `status --json`: `{"schema": 1, "workers": [...]}`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct StatusDoc {
    /// Always [`SCHEMA`].
    pub schema: u32,
    /// Every worker, in task order.
    pub workers: Vec<WorkerJson>,
}

/// `classify --json`: the worker object with `schema` and the `evidence` behind it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ClassifyDoc {
    /// Always [`SCHEMA`].
    pub schema: u32,
    /// The worker.
    #[serde(flatten)]
    pub worker: WorkerJson,
    /// One sentence per fact the decision used.
    pub evidence: Vec<String>,
}

/// One item of `recover --json`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RecoverResultJson {
    /// Task key.
    pub task: String,
    /// Branch.
    pub branch: String,
    /// The action (`delete`, `publish`, `wip-commit`, `escalate`, `wait`, `resume`, `none`).
    pub action: String,
    /// `done`, `held`, `skipped` or `failed`.
    pub result: String,
    /// One sentence.
    pub reason: String,
}

impl From<&crate::recover::Step> for RecoverResultJson {
    fn from(s: &crate::recover::Step) -> Self {
        RecoverResultJson {
            task: s.task.clone(),
            branch: s.branch.clone(),
            action: s.action.as_str().to_string(),
            result: serde_json::to_value(s.result)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            reason: s.reason.clone(),
        }
    }
}

/// `recover --json`: `{"schema": 1, "results": [...]}`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RecoverDoc {
    /// Always [`SCHEMA`].
    pub schema: u32,
    /// One item per worker considered.
    pub results: Vec<RecoverResultJson>,
}

/// The `resume --json` document (docs/json.md "resume"): the new attempt, how the agent
/// continues (`mode`: `session` or `fresh`, and why), where, the prompt's file and blob
/// id, and the facts the prompt was built from.
#[derive(Serialize, Clone, Debug)]
pub struct ResumeDoc<'a> {
    /// [`SCHEMA`].
    pub schema: u32,
    /// Task key.
    pub task: &'a str,
    /// Branch.
    pub branch: &'a str,
    /// The attempt this resume starts (as ledgered).
    pub attempt: u32,
    /// `session` or `fresh`.
    pub mode: crate::resume::Mode,
    /// Why this mode.
    pub why: &'a str,
    /// The session resumed, if any.
    pub session_id: Option<&'a str>,
    /// The directory the command runs in.
    pub cwd: &'a str,
    /// The POSIX shell command line.
    pub command: &'a str,
    /// Where the prompt was written.
    pub prompt_file: Option<String>,
    /// The prompt's git blob id (SHA-1 hex).
    pub prompt_sha: &'a str,
    /// Nothing was written.
    pub dry_run: bool,
    /// The prompt's facts.
    pub facts: &'a crate::resume::Facts,
}

impl<'a> ResumeDoc<'a> {
    /// The document of a started attempt.
    pub fn new(s: &'a crate::resume::start::Started, dry_run: bool) -> Self {
        ResumeDoc {
            schema: SCHEMA,
            task: &s.facts.task,
            branch: &s.facts.branch,
            attempt: s.facts.attempt,
            mode: s.launch.mode,
            why: &s.launch.why,
            session_id: s.launch.session_id.as_deref(),
            cwd: &s.launch.cwd,
            command: &s.launch.command,
            prompt_file: s.prompt_file.as_ref().map(|p| p.display().to_string()),
            prompt_sha: &s.prompt_sha,
            dry_run,
            facts: &s.facts,
        }
    }
}

/// The `hook status --json` document (docs/json.md "hook status"), one line.
#[derive(Serialize, Clone, Debug)]
pub struct HookStatusDoc<'a> {
    /// [`SCHEMA`].
    pub schema: u32,
    /// Every worktree, the current one marked.
    pub worktrees: Vec<HookReachJson<'a>>,
}

/// One worktree in `hook status --json`.
#[derive(Serialize, Clone, Debug)]
pub struct HookReachJson<'a> {
    /// The worktree's top.
    pub path: String,
    /// The hooks directory git uses there.
    pub hooks_dir: String,
    /// The hook manager holding the hooks, if any.
    pub manager: Option<crate::hook::Manager>,
    /// A commit there runs the milestone hook.
    pub reaches: bool,
    /// How (when it does).
    pub via: Option<&'a str>,
    /// Why not (when it does not).
    pub why: Option<&'a str>,
    /// The worktree the command ran in.
    pub current: bool,
}

impl<'a> HookStatusDoc<'a> {
    /// The document for `all` (from [`crate::hook::reach`]).
    pub fn new(all: &'a [crate::hook::WorktreeReach]) -> Self {
        HookStatusDoc {
            schema: SCHEMA,
            worktrees: all
                .iter()
                .map(|r| HookReachJson {
                    path: r.path.display().to_string(),
                    hooks_dir: r.hooks_dir.display().to_string(),
                    manager: r.manager,
                    reaches: r.reaches,
                    via: r.via.as_deref(),
                    why: r.why.as_deref(),
                    current: r.current,
                })
                .collect(),
        }
    }
}
