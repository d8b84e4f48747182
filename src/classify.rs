//! The classifier: a pure function from a [`Snapshot`] (what git, the ledger and the
//! forge said about one worker) to a [`Worker`] (liveness, state, action, reason).
//!
//! Every rule here is a row of the SPEC's "Classification" tables; the unit tests below
//! walk each row without a repository.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::clock;
use crate::ledger::{Body, Event};
use crate::outcome::Outcome;
use crate::render::plural;

/// Whether an agent is at work (SPEC `liveness`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Liveness {
    /// Last attempt has no exit, and a live pid or recent activity.
    Running,
    /// Last attempt has no exit, no live pid and no activity for `recode.stallAfter`.
    Stalled,
    /// Last attempt has an exit after it.
    Exited,
    /// No attempt in the ledger.
    Unknown,
}

/// What the debris is (SPEC `state`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// A human must look.
    NeedsHuman,
    /// A pull request is open or merged and the worktree is clean.
    Published,
    /// A branch with no worktree and no ledger: never deleted.
    Orphaned,
    /// No commits ahead and a clean (or no) worktree.
    Empty,
    /// Commits ahead, clean, with a passing gate on the head.
    Publishable,
    /// Anything else.
    HalfDone,
}

/// What a loop should do (SPEC `action`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Hand to a human.
    Escalate,
    /// Nothing to do.
    None,
    /// Remove the worktree and the branch.
    Delete,
    /// Gate, push and open a pull request.
    Publish,
    /// Commit everything as a WIP snapshot.
    WipCommit,
    /// Start a successor attempt.
    Resume,
    /// Leave it alone for now.
    Wait,
}

/// An in-progress git operation in a worktree (SPEC `operation`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Operation {
    /// `git rebase` (also `git am`, which uses the same machinery).
    Rebase,
    /// `git merge`.
    Merge,
    /// `git cherry-pick`.
    CherryPick,
    /// `git revert`.
    Revert,
    /// `git bisect`.
    Bisect,
}

macro_rules! spec_names {
    ($($t:ident { $($v:ident => $s:literal),* $(,)? })*) => {$(
        impl $t {
            /// The SPEC's name for this value.
            pub fn as_str(self) -> &'static str {
                match self { $($t::$v => $s),* }
            }
        }
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )*};
}
spec_names! {
    Liveness { Running => "running", Stalled => "stalled", Exited => "exited", Unknown => "unknown" }
    State {
        NeedsHuman => "needs-human", Published => "published", Orphaned => "orphaned",
        Empty => "empty", Publishable => "publishable", HalfDone => "half-done",
    }
    Action {
        Escalate => "escalate", None => "none", Delete => "delete", Publish => "publish",
        WipCommit => "wip-commit", Resume => "resume", Wait => "wait",
    }
    Operation {
        Rebase => "rebase", Merge => "merge", CherryPick => "cherry-pick", Revert => "revert",
        Bisect => "bisect",
    }
}

/// Dirty counts of a worktree, in files.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dirty {
    /// Files whose index entry differs from HEAD.
    pub staged: u32,
    /// Tracked files whose worktree content differs from the index.
    pub unstaged: u32,
    /// Files neither tracked nor ignored.
    pub untracked: u32,
    /// Unmerged paths.
    pub conflicted: u32,
}

impl Dirty {
    /// No staged, unstaged, untracked or conflicted file.
    pub fn is_clean(&self) -> bool {
        self.staged == 0 && self.unstaged == 0 && self.untracked == 0 && self.conflicted == 0
    }
    /// Total files in all four counts.
    pub fn total(&self) -> u32 {
        self.staged + self.unstaged + self.untracked + self.conflicted
    }
}

/// A pull request's state on the forge.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PrState {
    /// Open.
    Open,
    /// Closed without merging.
    Closed,
    /// Merged.
    Merged,
}

/// A pull request for the worker's branch.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Pr {
    /// Its number.
    pub number: u64,
    /// Open, closed or merged.
    pub state: PrState,
    /// Its page (GitHub's `html_url`).
    pub url: String,
}

/// What the forge said about the branch in this run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Forge {
    /// Not asked (`--offline`, no token), or it failed: nothing is decided on a guess.
    Unknown,
    /// It answered: the branch's pull request, if any.
    Known(Option<Pr>),
}

/// What is known about a worker's worktree.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorktreeFacts {
    /// Absolute path.
    pub path: String,
    /// The registered directory does not exist (maybe an unmounted volume).
    pub missing: bool,
    /// Dirty counts; `None` when unreadable or missing.
    pub dirty: Option<Dirty>,
    /// In-progress operation.
    pub operation: Option<Operation>,
    /// HEAD is detached (not during a rebase, whose branch is known).
    pub detached: bool,
    /// Detached HEAD holds commits that no ref contains.
    pub unreachable_commits: u32,
    /// Newest mtime of changed and untracked files and of the index.
    pub newest_mtime: Option<Timestamp>,
    /// Ignored files matching `recode.secrets` (only looked for when a delete is planned).
    pub secrets: Vec<String>,
    /// Every ignored file or directory that would go with the worktree (same condition).
    pub ignored: Vec<String>,
    /// It is the main worktree (the user's own checkout): never removed nor WIP-committed.
    pub is_main: bool,
    /// `git worktree lock` reason (empty when locked without one).
    pub locked: Option<String>,
    /// It holds initialized submodules, which `git worktree remove` refuses to remove.
    pub has_submodules: bool,
}

/// Everything the classifier needs about one worker. Gathered by [`crate::snapshot`].
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// Task key.
    pub task: String,
    /// Branch name (short).
    pub branch: String,
    /// Base branch name.
    pub base: String,
    /// The commit the worker is at: worktree HEAD, else local tip, else remote-tracking tip.
    pub head: Option<String>,
    /// The branch exists locally.
    pub branch_local: bool,
    /// The branch's remote-tracking ref exists.
    pub branch_remote: bool,
    /// Commits on `head` in neither the local base nor its remote-tracking branch.
    pub ahead: u32,
    /// Commits on the base not in `head`.
    pub behind: u32,
    /// Commits on the remote-tracking branch not in the base; `None` without one.
    pub remote_ahead: Option<u32>,
    /// The worker's worktree, if any.
    pub worktree: Option<WorktreeFacts>,
    /// Newest committer time of commits ahead that are not git-recode WIP commits.
    pub newest_commit: Option<Timestamp>,
    /// The task's ledger, in ledger order.
    pub events: Vec<Event>,
    /// Result of probing the last attempt's pid on this host (`None`: not probeable).
    pub pid_alive: Option<bool>,
    /// The agent transcript's mtime, where one is known.
    pub transcript_mtime: Option<Timestamp>,
    /// What the forge said.
    pub forge: Forge,
    /// The forge was asked in this run and failed.
    pub forge_failed: bool,
    /// The forge reports the issue a `blocked` outcome names as closed.
    pub blocker_closed: bool,
    /// The clock.
    pub now: Timestamp,
    /// `recode.stallAfter`, in seconds.
    pub stall_after_secs: i64,
    /// `recode.maxAttempts`.
    pub max_attempts: u32,
}

/// The decision for one worker: the SPEC's worker object plus the evidence behind it.
#[derive(Clone, Debug, PartialEq)]
pub struct Worker {
    /// Task key.
    pub task: String,
    /// Branch.
    pub branch: String,
    /// Worktree path.
    pub worktree: Option<String>,
    /// Commit id.
    pub head: Option<String>,
    /// Base branch.
    pub base: String,
    /// Commits ahead of the base.
    pub ahead: u32,
    /// Commits behind the base.
    pub behind: u32,
    /// Commits on the remote-tracking branch not in the base.
    pub remote_ahead: Option<u32>,
    /// Dirty counts.
    pub dirty: Option<Dirty>,
    /// In-progress operation.
    pub operation: Option<Operation>,
    /// Liveness.
    pub liveness: Liveness,
    /// State.
    pub state: State,
    /// Action.
    pub action: Action,
    /// One sentence of evidence for the action.
    pub reason: String,
    /// Counted attempts.
    pub attempts: u32,
    /// `recode.maxAttempts`.
    pub max_attempts: u32,
    /// Last outcome after the last `cleared`.
    pub last_outcome: Option<Outcome>,
    /// Newest milestone phase.
    pub phase: Option<String>,
    /// Newest agent session id.
    pub session_id: Option<String>,
    /// Newest activity.
    pub last_activity: Option<Timestamp>,
    /// Seconds since `last_activity` (never negative).
    pub idle_seconds: Option<i64>,
    /// When a transient limit resets.
    pub retry_after: Option<Timestamp>,
    /// The branch's pull request.
    pub pr: Option<Pr>,
    /// The last success claim has no pull request.
    pub phantom: bool,
    /// Every fact the decision used, one sentence each (for `classify`).
    pub evidence: Vec<String>,
}

/// What replaying a ledger yields (SPEC: state is derived by replaying events).
#[derive(Clone, Debug, Default)]
pub struct Replay {
    /// Counted attempts after the last `cleared`.
    pub attempts: u32,
    /// Index (into the events) of the newest attempt (`spawn`, `resume`, or an exit with no attempt open).
    pub last_attempt: Option<usize>,
    /// The newest attempt has an exit after it.
    pub last_attempt_exited: bool,
    /// The newest exit after the last `cleared`.
    pub last_exit: Option<usize>,
    /// Its outcome.
    pub last_outcome: Option<Outcome>,
    /// Its `retry_after` when transient.
    pub retry_after: Option<Timestamp>,
    /// A standing escalation's reason (an `escalated` after the last `cleared`).
    pub escalated: Option<String>,
    /// A `blocked` outcome with no `unblocked` after it.
    pub blocked: Option<String>,
    /// Newest milestone phase.
    pub phase: Option<String>,
    /// Newest session id.
    pub session_id: Option<String>,
    /// Newest worker signal (spawn, resume, exit, milestone, recorded gate).
    pub last_worker_event: Option<Timestamp>,
    /// Newest event git-recode itself wrote.
    pub last_own_action: Option<Timestamp>,
}

fn ts_of(e: &Event) -> Option<Timestamp> {
    clock::parse(&e.ts).ok()
}

/// Replay `events` (in ledger order).
pub fn replay(events: &[Event]) -> Replay {
    let mut r = Replay::default();
    let cleared = events
        .iter()
        .rposition(|e| matches!(e.body, Body::Cleared { .. }));
    let mut open_attempt = false;
    let mut counted_open: Option<bool> = None; // current attempt after cleared, outcome not yet known
    for (i, e) in events.iter().enumerate() {
        let after_clear = cleared.is_none_or(|c| i > c);
        let ts = ts_of(e);
        if e.body.is_worker_activity() {
            r.last_worker_event = r.last_worker_event.max(ts);
        }
        if e.body.is_own_action() {
            r.last_own_action = r.last_own_action.max(ts);
        }
        match &e.body {
            Body::Spawn { session_id, .. } | Body::Resume { session_id, .. } => {
                if let Some(true) = counted_open.take() {
                    r.attempts += 1;
                }
                r.last_attempt = Some(i);
                r.last_attempt_exited = false;
                open_attempt = true;
                if after_clear {
                    counted_open = Some(true);
                }
                if session_id.is_some() {
                    r.session_id = session_id.clone();
                }
            }
            Body::Exit {
                outcome,
                retry_after,
                blocker,
                session_id,
                ..
            } => {
                if !open_attempt {
                    // An exit with no attempt open: the loop never recorded the spawn.
                    r.last_attempt = Some(i);
                    if after_clear {
                        counted_open = Some(true);
                    }
                }
                open_attempt = false;
                r.last_attempt_exited = true;
                if session_id.is_some() {
                    r.session_id = session_id.clone();
                }
                if after_clear {
                    if counted_open.take().is_some()
                        && !matches!(outcome, Outcome::Transient | Outcome::Blocked)
                    {
                        r.attempts += 1;
                    }
                    r.last_exit = Some(i);
                    r.last_outcome = Some(*outcome);
                    r.retry_after = if *outcome == Outcome::Transient {
                        retry_after.as_deref().and_then(|t| clock::parse(t).ok())
                    } else {
                        None
                    };
                    r.blocked = (*outcome == Outcome::Blocked)
                        .then(|| blocker.clone().unwrap_or_else(|| "a blocker".into()));
                }
            }
            Body::Unblocked => r.blocked = None,
            Body::Escalated { reason } if after_clear => r.escalated = Some(reason.clone()),
            Body::Milestone { phase, .. } => r.phase = Some(phase.clone()),
            _ => {}
        }
    }
    if let Some(true) = counted_open {
        r.attempts += 1; // an attempt with no exit (killed, stalled) counts
    }
    r
}

/// The newest gate verdict for exactly `head`: a `gate` event or a `tests-green`
/// milestone on it is a pass; a later failed gate on the same head cancels it.
pub fn gate_on(events: &[Event], head: &str) -> Option<bool> {
    events
        .iter()
        .filter(|e| e.head.as_deref() == Some(head))
        .filter_map(|e| match &e.body {
            Body::Gate { passed, .. } => Some(*passed),
            Body::Milestone { phase, .. } if phase == "tests-green" => Some(true),
            _ => None,
        })
        .next_back()
}

/// Classify one worker. Pure: the same snapshot always gives the same answer.
pub fn classify(s: &Snapshot) -> Worker {
    let mut r = replay(&s.events);
    if s.blocker_closed {
        r.blocked = None; // SPEC: blocked until `record unblock` or the forge reports the blocker closed
    }
    let mut ev: Vec<String> = Vec::new();

    // --- activity -------------------------------------------------------------------
    let wt = s.worktree.as_ref();
    let own = r.last_own_action;
    let file_activity = wt
        .and_then(|w| w.newest_mtime)
        .filter(|m| own.is_none_or(|o| *m > o));
    let transcript = s.transcript_mtime.filter(|m| own.is_none_or(|o| *m > o));
    let signals = [
        r.last_worker_event,
        s.newest_commit,
        file_activity,
        transcript,
    ];
    let last_activity = signals.iter().flatten().max().copied();
    let idle = last_activity.map(|t| (s.now.as_second() - t.as_second()).max(0));
    let fresh_activity = idle.is_some_and(|i| i < s.stall_after_secs);
    if let (Some(t), Some(i)) = (last_activity, idle) {
        ev.push(format!(
            "last activity {} ({} ago; stalled after {})",
            clock::format_secs(t),
            clock::human_secs(i),
            clock::human_secs(s.stall_after_secs)
        ));
    } else {
        ev.push("no activity recorded".into());
    }

    // --- liveness -------------------------------------------------------------------
    let attempt_desc = r.last_attempt.map(|i| {
        let e = &s.events[i];
        match &e.body {
            Body::Spawn { attempt, .. } | Body::Resume { attempt, .. } => {
                format!("attempt {attempt} ({} at {})", e.body.kind(), e.ts)
            }
            _ => format!("an exit at {} with no recorded start", e.ts),
        }
    });
    let liveness = match (&attempt_desc, r.last_attempt_exited) {
        (None, _) => {
            ev.push("liveness unknown: no attempt in the ledger".into());
            Liveness::Unknown
        }
        (Some(a), true) => {
            ev.push(format!("exited: the newest {a} has an exit after it"));
            Liveness::Exited
        }
        (Some(a), false) => {
            if s.pid_alive == Some(true) {
                ev.push(format!(
                    "running: the newest {a} has no exit and its pid is alive"
                ));
                Liveness::Running
            } else if fresh_activity {
                ev.push(format!(
                    "running: the newest {a} has no exit and activity is recent"
                ));
                Liveness::Running
            } else {
                let pid = match s.pid_alive {
                    Some(false) => "its pid is gone",
                    _ => "no pid probeable here",
                };
                ev.push(format!(
                    "stalled: the newest {a} has no exit, no activity for {}, {pid}",
                    clock::human_secs(s.stall_after_secs)
                ));
                Liveness::Stalled
            }
        }
    };

    // --- state ----------------------------------------------------------------------
    let dirty = wt.and_then(|w| if w.missing { None } else { w.dirty });
    let is_dirty = dirty.is_some_and(|d| !d.is_clean());
    let clean = !is_dirty;
    if let Some(d) = dirty {
        ev.push(format!(
            "worktree: {} staged, {} unstaged, {} untracked, {} conflicted",
            d.staged, d.unstaged, d.untracked, d.conflicted
        ));
    }
    ev.push(format!(
        "{} ahead, {} behind {}{}",
        s.ahead,
        s.behind,
        s.base,
        s.remote_ahead
            .map(|n| format!("; remote-tracking branch {n} ahead"))
            .unwrap_or_default()
    ));
    let pr = match &s.forge {
        Forge::Known(pr) => pr.clone(),
        Forge::Unknown => None,
    };
    let last_exit = r.last_exit.map(|i| &s.events[i]);
    let phantom = matches!(s.forge, Forge::Known(None)) && r.last_outcome == Some(Outcome::Success);
    if matches!(s.forge, Forge::Unknown) {
        ev.push("forge unknown: nothing is published or phantom on a guess".into());
    }

    let (state, mut action, mut reason) = decide(s, &r, wt, dirty, clean, pr.as_ref(), last_exit);
    ev.push(format!("state {state}: {reason}"));

    // --- overrides, in order --------------------------------------------------------
    if action == Action::Delete
        && let Some(w) = wt.filter(|w| !w.missing)
    {
        let keep = if w.is_main {
            Some("it is the main worktree: git-recode never removes it".to_string())
        } else if let Some(r) = &w.locked {
            Some(if r.is_empty() {
                "the worktree is locked: never removed".to_string()
            } else {
                format!("the worktree is locked ({r}): never removed")
            })
        } else if w.has_submodules {
            Some(
                "the worktree holds submodules, which git worktree remove refuses: never removed"
                    .to_string(),
            )
        } else {
            None
        };
        if let Some(why) = keep {
            action = Action::None;
            reason = format!("{reason}; {why}");
            ev.push(reason.clone());
        }
    }
    if action == Action::WipCommit && wt.is_some_and(|w| w.is_main) {
        action = Action::Resume;
        reason = format!(
            "{reason}; in the main worktree, which git-recode never commits: resume in place"
        );
        ev.push(reason.clone());
    }
    if action == Action::Delete {
        if let Some(w) = wt.filter(|w| w.missing) {
            action = Action::None;
            reason = format!(
                "worktree directory {} is missing (maybe an unmounted volume): never removed",
                w.path
            );
            ev.push(reason.clone());
        } else if let Some(w) = wt.filter(|w| !w.secrets.is_empty()) {
            action = Action::None;
            reason = format!(
                "worktree holds ignored secret files ({}): never removed",
                w.secrets.join(", ")
            );
            ev.push(reason.clone());
        } else if s.forge_failed {
            action = Action::Wait;
            reason =
                "the forge failed in this run: a delete waits for a run in which it answers".into();
            ev.push(reason.clone());
        }
    }
    if action == Action::Publish && s.forge_failed {
        // A pull request a human closed must never be reopened: publishing waits for a
        // run in which the forge answers.
        action = Action::Wait;
        reason =
            "the forge failed in this run: publishing waits for a run in which it answers".into();
        ev.push(reason.clone());
    }
    if action != Action::Escalate && action != Action::Wait {
        if let (Some(Outcome::Transient), Some(t)) = (r.last_outcome, r.retry_after)
            && t > s.now
        {
            action = Action::Wait;
            reason = format!("transient limit: retry after {}", clock::format_secs(t));
            ev.push(reason.clone());
        }
        if let Some(b) = &r.blocked {
            action = Action::Wait;
            reason = format!("blocked on {b} until `git recode record unblock`");
            ev.push(reason.clone());
        }
    }
    if liveness == Liveness::Running {
        action = Action::Wait;
        reason = format!("worker is running ({})", ev_liveness_cause(s.pid_alive));
        ev.push(format!("action wait: {reason}"));
    } else if liveness == Liveness::Unknown && fresh_activity {
        action = Action::Wait;
        reason = format!(
            "no attempt recorded but activity {} ago: an unrecorded agent may be at work",
            clock::human_secs(idle.unwrap_or(0))
        );
        ev.push(format!("action wait: {reason}"));
    }

    if let Some(w) = wt.filter(|w| w.missing)
        && !reason.contains("missing")
    {
        reason = format!("{reason}; worktree directory {} is missing", w.path);
    }

    Worker {
        task: s.task.clone(),
        branch: s.branch.clone(),
        worktree: wt.map(|w| w.path.clone()),
        head: s.head.clone(),
        base: s.base.clone(),
        ahead: s.ahead,
        behind: s.behind,
        remote_ahead: s.remote_ahead,
        dirty,
        operation: wt.and_then(|w| w.operation),
        liveness,
        state,
        action,
        reason,
        attempts: r.attempts,
        max_attempts: s.max_attempts,
        last_outcome: r.last_outcome,
        phase: r.phase.clone(),
        session_id: r.session_id.clone(),
        last_activity,
        idle_seconds: idle,
        retry_after: r.retry_after,
        pr,
        phantom,
        evidence: ev,
    }
}

fn ev_liveness_cause(pid_alive: Option<bool>) -> &'static str {
    if pid_alive == Some(true) {
        "its pid is alive"
    } else {
        "recent activity"
    }
}

/// The state table, first match wins; returns the state, its action and the reason.
#[allow(clippy::too_many_arguments)]
fn decide(
    s: &Snapshot,
    r: &Replay,
    wt: Option<&WorktreeFacts>,
    dirty: Option<Dirty>,
    clean: bool,
    pr: Option<&Pr>,
    last_exit: Option<&Event>,
) -> (State, Action, String) {
    use Action as A;
    use State as S;
    // 1. An operation in progress, conflicts, or a detached HEAD holding unreachable commits.
    if let Some(w) = wt {
        if let Some(op) = w.operation {
            return (
                S::NeedsHuman,
                A::Escalate,
                format!("a {op} is in progress in {}", w.path),
            );
        }
        if let Some(d) = dirty.filter(|d| d.conflicted > 0) {
            return (
                S::NeedsHuman,
                A::Escalate,
                format!(
                    "{} in {}",
                    plural(u64::from(d.conflicted), "conflicted file"),
                    w.path
                ),
            );
        }
        if w.detached && w.unreachable_commits > 0 {
            return (
                S::NeedsHuman,
                A::Escalate,
                format!(
                    "detached HEAD in {} holds {} no ref contains; keep them with `git -C {} branch recode-keep-{} HEAD`",
                    w.path,
                    plural(u64::from(w.unreachable_commits), "commit"),
                    w.path,
                    s.task
                ),
            );
        }
    }
    // 2. Published: a pull request open or merged, and the worktree clean.
    if let Some(pr) = pr {
        if clean && pr.state == PrState::Open {
            return (
                S::Published,
                A::None,
                format!("pull request #{} is open", pr.number),
            );
        }
        if clean && pr.state == PrState::Merged {
            return (
                S::Published,
                A::Delete,
                format!("pull request #{} is merged", pr.number),
            );
        }
    }
    // 3. Needs a human: capped, a needs-human outcome, a standing escalation, a closed PR.
    if r.attempts >= s.max_attempts && r.last_outcome != Some(Outcome::Success) {
        return (
            S::NeedsHuman,
            A::Escalate,
            format!(
                "{} counted attempts reached recode.maxAttempts ({}) without success",
                r.attempts, s.max_attempts
            ),
        );
    }
    if r.last_outcome == Some(Outcome::NeedsHuman) {
        let why = last_exit
            .and_then(|e| match &e.body {
                Body::Exit { rc, message, .. } => Some(match message {
                    Some(m) => format!("rc {rc}: {}", first_line(m)),
                    None => format!("rc {rc}"),
                }),
                _ => None,
            })
            .unwrap_or_default();
        return (
            S::NeedsHuman,
            A::Escalate,
            format!("the last attempt needs a human ({why})"),
        );
    }
    if let Some(reason) = &r.escalated {
        return (
            S::NeedsHuman,
            A::Escalate,
            format!("escalated: {reason} (until `git recode record clear`)"),
        );
    }
    if let Some(pr) = pr.filter(|p| p.state == PrState::Closed) {
        return (
            S::NeedsHuman,
            A::Escalate,
            format!(
                "pull request #{} was closed without merging: a human closed it",
                pr.number
            ),
        );
    }
    // 4. Orphaned: a branch with no worktree and no ledger events.
    if wt.is_none() && s.events.is_empty() && s.branch_local {
        return if s.ahead > 0 {
            (
                S::Orphaned,
                A::Resume,
                format!(
                    "no worktree and no ledger; {} ahead: resume, never delete",
                    plural(u64::from(s.ahead), "commit")
                ),
            )
        } else {
            (
                S::Orphaned,
                A::None,
                "no worktree and no ledger: unknown provenance, never deleted".into(),
            )
        };
    }
    // 5. Empty: nothing ahead (branch nor remote) and clean.
    let remote_ahead = s.remote_ahead.unwrap_or(0);
    if s.ahead == 0 && remote_ahead == 0 && clean {
        if !s.branch_local && !s.branch_remote && wt.is_none() {
            return (S::Empty, A::None, "the branch exists nowhere".into());
        }
        let where_ = match wt {
            Some(w) if !w.ignored.is_empty() => {
                format!(
                    "; worktree clean (its ignored files go with it: {})",
                    w.ignored.join(", ")
                )
            }
            Some(_) => "; worktree clean".to_string(),
            None => String::new(),
        };
        return (
            S::Empty,
            A::Delete,
            format!("no commits ahead of {}{where_}", s.base),
        );
    }
    // 6. Publishable: ahead, clean, a passing gate on exactly the head.
    let gate = s.head.as_deref().and_then(|h| gate_on(&s.events, h));
    if (s.ahead > 0 || remote_ahead > 0) && clean && gate == Some(true) {
        return (
            S::Publishable,
            A::Publish,
            format!(
                "{} ahead, clean, gate passed on the head",
                plural(u64::from(s.ahead.max(remote_ahead)), "commit")
            ),
        );
    }
    // 7. Half-done.
    let gate_txt = match gate {
        Some(true) => "gate passed on the head",
        Some(false) => "gate failed on the head",
        None => "no gate result for the head",
    };
    if let Some(d) = dirty.filter(|d| !d.is_clean()) {
        (
            S::HalfDone,
            A::WipCommit,
            format!(
                "{} ({} staged, {} unstaged, {} untracked); {gate_txt}",
                plural(u64::from(d.total()), "uncommitted file"),
                d.staged,
                d.unstaged,
                d.untracked
            ),
        )
    } else if wt.is_some_and(|w| w.missing) {
        (
            S::HalfDone,
            A::Resume,
            format!(
                "{} ahead; worktree directory is missing; {gate_txt}",
                plural(u64::from(s.ahead.max(remote_ahead)), "commit")
            ),
        )
    } else {
        (
            S::HalfDone,
            A::Resume,
            format!(
                "{} ahead; {gate_txt}",
                plural(u64::from(s.ahead.max(remote_ahead)), "commit")
            ),
        )
    }
}

fn first_line(m: &str) -> String {
    let l = m
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if l.chars().count() > 120 {
        format!("{}…", l.chars().take(120).collect::<String>())
    } else {
        l.to_string()
    }
}

#[cfg(test)]
mod tests;
