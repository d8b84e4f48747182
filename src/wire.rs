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
            action: s.action.clone(),
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

/// One item of `doctor --json`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct DoctorCheckJson {
    /// The check: `git`, `config`, `hook`, `forge`, `agent`, `accounts`, `locks`, `clone`,
    /// `maintenance`.
    pub check: String,
    /// `ok`, `warn` or `fail`.
    pub level: String,
    /// What was found.
    pub message: String,
    /// What to do (null for `ok`).
    pub fix: Option<String>,
}

impl From<&crate::doctor::Check> for DoctorCheckJson {
    fn from(c: &crate::doctor::Check) -> Self {
        DoctorCheckJson {
            check: c.check.to_string(),
            level: c.level.to_string(),
            message: c.message.clone(),
            fix: c.fix.clone(),
        }
    }
}

/// `doctor --json`: `{"schema": 1, "ok": bool, "checks": [...]}`; `ok` is false when a
/// check failed (exit 1).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct DoctorDoc {
    /// Always [`SCHEMA`].
    pub schema: u32,
    /// No check failed.
    pub ok: bool,
    /// One item per line of the text view, in order.
    pub checks: Vec<DoctorCheckJson>,
}
