//! The JSON wire format: the stable contract of `--json` (SPEC "The worker object").
//!
//! These structs are kept apart from the internal ones so that the contract changes
//! only on purpose, and only additively. Every field is always present; unknown values
//! are `null`. Documents carry `"schema": 1`.

use serde::{Deserialize, Serialize};

use crate::clock;
use crate::model::{Dirty, Worker};

mod resume;
pub(crate) use resume::{
    CommitFact, Gate, LeftOutFact, PrFacts, ResumeDoc, ResumeFacts, TakeoverFacts,
};

/// Version of every JSON document git-recode prints.
pub(crate) const SCHEMA: u32 = 1;

/// `dirty`: counts in files.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub(crate) struct DirtyJson {
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
pub(crate) struct PrJson {
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
pub(crate) struct WorkerJson {
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
    /// Commits ahead of the base, or null when unknown (a shallow history with no merge
    /// base of the branch and the base: SPEC 1.2).
    pub ahead: Option<u32>,
    /// Commits behind the base, or null as `ahead`.
    pub behind: Option<u32>,
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
    /// The host of the newest attempt (`spawn`/`resume` `host`), or null without one
    /// (SPEC 1.2 "Several machines"; additive).
    pub host: Option<String>,
}

impl From<&Worker> for WorkerJson {
    fn from(w: &Worker) -> Self {
        WorkerJson {
            task: w.task.clone(),
            branch: w.branch.clone(),
            worktree: w.worktree.clone(),
            head: w.head.map(|h| h.to_string()),
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
            host: w.host.clone(),
        }
    }
}

/// `status --json`: `{"schema": 1, "workers": [...]}`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(crate) struct StatusDoc {
    /// Always [`SCHEMA`].
    pub schema: u32,
    /// Every worker, in task order.
    pub workers: Vec<WorkerJson>,
}

/// `classify --json`: the worker object with `schema` and the `evidence` behind it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(crate) struct ClassifyDoc {
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
pub(crate) struct RecoverResultJson {
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

/// `recover --json`: `{"schema": 1, "results": [...]}`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub(crate) struct RecoverDoc {
    /// Always [`SCHEMA`].
    pub schema: u32,
    /// One item per worker considered.
    pub results: Vec<RecoverResultJson>,
}

// ---------------------------------------------------------------------------------------
// `report --json` (SPEC Commands: `git recode report`): loop health from the ledger alone.
// Built by `crate::report`; the text and the HTML page render this same document.
// ---------------------------------------------------------------------------------------

/// `report --json`: `{"schema": 1, "now", "since", "queue", "waiting", "tasks", "ticks",
/// "days", "hosts"}`. Times are RFC 3339 UTC with seconds.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ReportDoc {
    /// Always [`SCHEMA`].
    pub schema: u32,
    /// The report's clock (`RECODE_NOW`, else the system clock).
    #[serde(with = "crate::clock::secs")]
    pub now: jiff::Timestamp,
    /// Start of the window (`--since`); null: the whole ledger. The queue and the waiting
    /// list always come from the whole ledger (they are the state now, not history).
    #[serde(with = "crate::clock::secs_opt")]
    pub since: Option<jiff::Timestamp>,
    /// Workers that need a human, oldest first.
    pub queue: Vec<QueueItemJson>,
    /// Workers waiting on a reset (`transient`) or a blocker (`blocked`), soonest first.
    pub waiting: Vec<WaitingJson>,
    /// Each task's history in the window, in task order.
    pub tasks: Vec<TaskHistoryJson>,
    /// The `recover` runs seen in the window.
    pub ticks: TicksJson,
    /// Outcomes of the exits in the window, one item per UTC day, oldest first.
    pub days: Vec<DayJson>,
    /// Every host named by an attempt, in name order.
    pub hosts: Vec<HostJson>,
}

/// One worker that needs a human: why, and what lifts it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct QueueItemJson {
    /// Task key.
    pub task: String,
    /// The worker branch.
    pub branch: String,
    /// Host of its newest attempt, or null.
    pub host: Option<String>,
    /// When the event that put it here was written.
    #[serde(with = "crate::clock::secs")]
    pub since: jiff::Timestamp,
    /// `escalated`, `needs-human` (the last outcome), `capped` (attempts reached
    /// `recode.maxAttempts`), `classified` (`recover` classified it `needs-human`) or
    /// `open-request` (pushed where no forge can open its request: a human opens it).
    pub cause: String,
    /// One sentence: why it needs a human.
    pub why: String,
    /// What lifts it, in order: what to fix (a worktree, a pull request), then the exact
    /// command (`git recode record clear <branch>`).
    pub lift: Vec<String>,
    /// The worktree of its newest attempt (`spawn` `cwd`), or null.
    pub worktree: Option<String>,
    /// Its pull request's page (the newest `published` event), or null.
    pub pr_url: Option<String>,
}

/// One worker waiting on a reset or a blocker.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct WaitingJson {
    /// Task key.
    pub task: String,
    /// The worker branch.
    pub branch: String,
    /// Host of its newest attempt, or null.
    pub host: Option<String>,
    /// `reset` (a transient limit) or `blocker`.
    pub on: String,
    /// When the wait ends (`retry_after`); null for a blocker or an unknown reset.
    #[serde(with = "crate::clock::secs_opt")]
    pub until: Option<jiff::Timestamp>,
    /// The blocker (`exit` `blocker`), or null.
    pub blocker: Option<String>,
    /// When the exit that started the wait was written.
    #[serde(with = "crate::clock::secs")]
    pub since: jiff::Timestamp,
    /// What lifts it early: for a blocker `git recode record unblock <branch>`; else null.
    pub lift: Option<String>,
}

/// One task's history.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TaskHistoryJson {
    /// Task key.
    pub task: String,
    /// Every branch its events name, in the order first named.
    pub branches: Vec<String>,
    /// Every host its attempts ran on, in the order first seen.
    pub hosts: Vec<String>,
    /// Attempts whose span meets the window, oldest first.
    pub attempts: Vec<AttemptJson>,
    /// Other events in the window (milestones, WIP commits, publishes, deletes, escalations,
    /// gates, clears, unblocks, phantoms), oldest first.
    pub marks: Vec<MarkJson>,
}

/// One attempt: a `spawn` or `resume` to its `exit` (an exit with no start recorded is an
/// attempt of zero length).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct AttemptJson {
    /// The attempt's number as recorded (`attempt` of the spawn/resume), or its ordinal.
    pub attempt: u32,
    /// `spawn`, `resume` or `exit` (no start recorded).
    pub started_by: String,
    /// The worker branch, or null (an old event without one).
    pub branch: Option<String>,
    /// The host it ran on (spawn `host`), or null.
    pub host: Option<String>,
    /// The agent (spawn `agent`), or null.
    pub agent: Option<String>,
    /// Start.
    #[serde(with = "crate::clock::secs")]
    pub start: jiff::Timestamp,
    /// End (its exit), or null while none is recorded.
    #[serde(with = "crate::clock::secs_opt")]
    pub end: Option<jiff::Timestamp>,
    /// The exit's outcome, or null (no exit: running, stalled or killed).
    pub outcome: Option<String>,
    /// The exit's rc, or null.
    pub rc: Option<i32>,
    /// The first line of the exit's message (at most 120 characters), or null.
    pub message: Option<String>,
}

/// One event on a task's timeline that is not an attempt's start or end.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct MarkJson {
    /// When.
    #[serde(with = "crate::clock::secs")]
    pub ts: jiff::Timestamp,
    /// The event kind (`milestone`, `wip`, `published`, `deleted`, `escalated`, `gate`,
    /// `cleared`, `unblocked`, `phantom`).
    pub kind: String,
    /// The branch, or null.
    pub branch: Option<String>,
    /// One short phrase (`phase scoped`, `2 files, pushed`, `#12`, the reason).
    pub detail: String,
}

/// The ticks: `recover` runs, inferred from the events it writes (`classified`, `wip`,
/// `published`, `deleted`, `escalated`, `phantom`, `gate` by recover): events less than
/// 60 seconds apart are one run.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TicksJson {
    /// Runs in the window, oldest first.
    pub runs: Vec<TickJson>,
    /// The usual period: the median time between consecutive runs' starts, in seconds;
    /// null with fewer than two runs.
    pub period_seconds: Option<i64>,
    /// Gaps: times between runs longer than twice the period (and the time since the last
    /// run, when longer), oldest first.
    pub gaps: Vec<GapJson>,
}

/// One `recover` run.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TickJson {
    /// Its first event.
    #[serde(with = "crate::clock::secs")]
    pub start: jiff::Timestamp,
    /// Its last event.
    #[serde(with = "crate::clock::secs")]
    pub end: jiff::Timestamp,
    /// Events it wrote.
    pub events: u32,
    /// Tasks it wrote about.
    pub tasks: u32,
}

/// A time the loop was down longer than its usual period.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct GapJson {
    /// The last run before the gap.
    #[serde(with = "crate::clock::secs")]
    pub from: jiff::Timestamp,
    /// The first run after it; null: still down at the report's `now`.
    #[serde(with = "crate::clock::secs_opt")]
    pub to: Option<jiff::Timestamp>,
    /// Its length in seconds.
    pub seconds: i64,
}

/// Outcomes of one UTC day's exits.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct DayJson {
    /// `YYYY-MM-DD` (UTC).
    pub date: String,
    /// Exits by outcome: every one of `success`, `failed`, `transient`, `needs-human`,
    /// `blocked` is present.
    pub outcomes: std::collections::BTreeMap<String, u32>,
}

/// One host.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct HostJson {
    /// Host name (as `spawn` recorded it).
    pub host: String,
    /// Workers whose newest attempt ran there.
    pub workers: u32,
    /// Attempts that ran there (whole ledger).
    pub attempts: u32,
    /// Its newest attempt's start.
    #[serde(with = "crate::clock::secs_opt")]
    pub last_attempt: Option<jiff::Timestamp>,
    /// Its heartbeat (`refs/recode/hosts/<host>`), or null when the ref does not exist.
    pub heartbeat: Option<HeartbeatJson>,
}

/// A host's last heartbeat (SPEC 1.2 "Several machines").
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct HeartbeatJson {
    /// Its `ts`.
    /// (As the host wrote it: another host's claim, kept as text.)
    pub ts: String,
    /// Workers it lists.
    pub workers: u32,
    /// Of those, the ones it says are alive.
    pub alive: u32,
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
    pub manager: Option<&'static str>,
    /// A commit there runs the milestone hook.
    pub reaches: bool,
    /// How (when it does).
    pub via: Option<&'a str>,
    /// Why not (when it does not).
    pub why: Option<&'a str>,
    /// The worktree the command ran in.
    pub current: bool,
}

/// `pr` of `verify --json`: the branch's pull request (or merge request) on any forge.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct VerifyPrJson {
    /// Its number (GitLab: `iid`).
    pub number: u64,
    /// `open`, `closed` or `merged`.
    pub state: String,
    /// Its page.
    pub url: String,
}

/// `verify --json`: `{"schema": 1, "branch", "task", "verdict", "pr"}`; `verdict` is
/// `holds`, `phantom` or `unknown`, `pr` null when the forge has none (or was not asked).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct VerifyDoc {
    /// [`SCHEMA`].
    pub schema: u32,
    /// The branch asked about.
    pub branch: String,
    /// Its task.
    pub task: String,
    /// `holds`, `phantom` or `unknown`.
    pub verdict: String,
    /// The branch's pull request, or null.
    pub pr: Option<VerifyPrJson>,
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
