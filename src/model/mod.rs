//! The types every layer shares: what a worker is (liveness, state, action, operation,
//! dirt, pull request), what was gathered about it ([`Snapshot`]) and what was decided
//! ([`Worker`]). Serialized names are exactly the SPEC's ("Classification", "The worker
//! object"), and the ledger's events ([`event`]). This module depends on nothing else
//! in the crate but [`crate::outcome::Outcome`] and [`crate::clock`], so every layer can
//! import it.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

pub(crate) mod event;
pub(crate) use event::{Body, Event, GateBy};

mod names;
pub(crate) mod reason;
pub(crate) mod replay;
use crate::outcome::Outcome;

/// A commit id read from text at the edge (`git` output, forge JSON, a command-line
/// argument): 40 hex digits (SHA-1) or 64 (SHA-256), surrounding whitespace ignored;
/// `None` for anything else (an abbreviated id, an empty or garbled string), which
/// callers treat as unknown or report as an error. Never panics.
pub(crate) fn commit_id(text: &str) -> Option<gix::ObjectId> {
    gix::ObjectId::from_hex(text.trim().as_bytes()).ok()
}

/// Whether an agent is at work (SPEC `liveness`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, strum::IntoStaticStr)]
#[cfg_attr(test, derive(strum::EnumIter))]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
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
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, strum::IntoStaticStr)]
#[cfg_attr(test, derive(strum::EnumIter))]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
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
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, strum::IntoStaticStr)]
#[cfg_attr(test, derive(strum::EnumIter))]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
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
    /// SPEC 1.3: end a hung agent's process (its start token re-checked) and ledger its
    /// exit; the next tick decides the rest (`recover` carries it out).
    Kill,
}

/// An in-progress git operation in a worktree (SPEC `operation`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, strum::IntoStaticStr)]
#[cfg_attr(test, derive(strum::EnumIter))]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Operation {
    /// `git rebase`.
    Rebase,
    /// `git am` (applying a mailbox; `rebase-apply/applying` marks it).
    Am,
    /// `git merge`.
    Merge,
    /// `git cherry-pick`.
    CherryPick,
    /// `git revert`.
    Revert,
    /// `git bisect`.
    Bisect,
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
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, strum::IntoStaticStr)]
#[cfg_attr(test, derive(strum::EnumIter))]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
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
    /// The commit the pull request's head pointed at when the forge answered (`head.sha`);
    /// commits on the branch beyond it are new work (SPEC `published` row).
    #[serde(skip)]
    pub head: Option<gix::ObjectId>,
    /// Open and being merged (GitLab's `locked`: a merge train, a merge job running): the
    /// worker waits, and nothing is pushed onto it (SPEC 1.3). `state` is `open`.
    #[serde(skip)]
    pub merging: bool,
    /// The verdict of the head's checks (SPEC "Pull request feedback"); `None`: no checks,
    /// or not asked (not open).
    pub checks: Option<Checks>,
    /// The reviewers' verdict; `None`: no review decides.
    pub review: Option<Review>,
    /// The evidence behind a failing `checks` or `changes_requested` `review`, for the
    /// resume prompt (untrusted text).
    #[serde(skip)]
    pub feedback: Feedback,
}

/// The checks on a pull request's head (SPEC `pr.checks`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, strum::IntoStaticStr)]
#[cfg_attr(test, derive(strum::EnumIter))]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Checks {
    /// No check failed and none is pending.
    Passing,
    /// A check run concluded `failure`, `timed_out`, `cancelled` or `action_required`, or
    /// the combined status is `failure` or `error`.
    Failing,
    /// None failed and some are queued or in progress.
    Pending,
}

/// The reviewers' verdict on a pull request (SPEC `pr.review`).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, strum::IntoStaticStr)]
#[cfg_attr(test, derive(strum::EnumIter))]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Review {
    /// The latest reviews approve and none requests changes.
    Approved,
    /// Some reviewer's latest review requests changes.
    ChangesRequested,
}

/// What the forge said against a pull request: failing checks and requested changes,
/// all of it untrusted text for the resume prompt.
#[derive(Serialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct Feedback {
    /// Failing check runs and statuses.
    pub failing_checks: Vec<FailingCheck>,
    /// Reviews requesting changes (the latest per reviewer), with their inline comments.
    pub changes: Vec<ChangeRequest>,
}

/// One failing check run or commit status.
#[derive(Serialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct FailingCheck {
    /// Its name (check run `name`, status `context`).
    pub name: String,
    /// Its conclusion (`failure`, `timed_out`, …) or status state (`failure`, `error`).
    pub conclusion: String,
    /// Its page (`html_url`, `details_url` or `target_url`).
    pub url: Option<String>,
    /// `output.title` (check runs).
    pub title: Option<String>,
    /// `output.summary` (check runs), or a status's `description`.
    pub summary: Option<String>,
}

/// One review that requests changes.
#[derive(Serialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct ChangeRequest {
    /// The reviewer's login.
    pub reviewer: String,
    /// The review body.
    pub body: String,
    /// Inline comments: path, line (when GitHub gives one), body.
    pub comments: Vec<(String, Option<u64>, String)>,
}

/// What the forge said in this run, for every branch at once (one listing per run).
/// The only forge type the classifier sees (SPEC "Forge": unknown means nothing is
/// decided on a guess).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ForgeView {
    /// Not asked (`--offline`, no token, no remote, not GitHub).
    #[default]
    Unknown,
    /// Asked, and it failed: unknown, and deletes and publishes wait.
    Failed,
    /// The pull request per branch (branches without one are absent).
    Known(BTreeMap<String, Pr>),
}

impl ForgeView {
    /// What the forge said about one branch: `None` when it was not asked or failed,
    /// `Some(None)` when it answered and the branch has no pull request.
    pub fn pr_of(&self, branch: &str) -> Option<Option<&Pr>> {
        match self {
            ForgeView::Known(map) => Some(map.get(branch)),
            _ => None,
        }
    }
}

/// What the forge said about one worker's branch in this run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Forge {
    /// Not asked (`--offline`, no token, not GitHub): nothing is decided on a guess.
    Unknown,
    /// Asked in this run, and it failed: unknown, and a delete or publish waits.
    Failed,
    /// It answered: the branch's pull request, if any.
    Known(Option<Pr>),
}

impl ForgeView {
    /// The view narrowed to one branch.
    pub fn for_branch(&self, branch: &str) -> Forge {
        match self {
            ForgeView::Unknown => Forge::Unknown,
            ForgeView::Failed => Forge::Failed,
            ForgeView::Known(map) => Forge::Known(map.get(branch).cloned()),
        }
    }
}

/// What is known about a worker's worktree.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct WorktreeFacts {
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
    /// Why the worktree could not be read (status, or its ignored files): what cannot be
    /// read is not clean, so it is never deleted, published or WIP-committed on this reading.
    pub unreadable: Option<String>,
    /// Not read at all (no status, no ignored listing) because the worker's recorded pid
    /// is alive and `--deep` was not given: `dirty` is `None`, and the worker waits.
    pub not_read: bool,
    /// It holds initialized submodules, which `git worktree remove` refuses to remove.
    pub has_submodules: bool,
    /// HEAD names a branch that does not exist (SPEC 1.2: `recover` first recreates it at
    /// `restore_to`; without one the worker is `needs-human`).
    pub unborn: bool,
    /// The newest commit of the worktree's HEAD reflog, for an unborn HEAD.
    pub restore_to: Option<gix::ObjectId>,
    /// The worktree's own git dir, as this repository lists it (`.git` for the main one,
    /// `<common dir>/worktrees/<id>` for a linked one): every git run for the worktree is
    /// bound to it (SPEC 1.3 "Committing").
    pub admin: String,
    /// Where the worktree's `.git` leads when that is not [`WorktreeFacts::admin`] (a fresh
    /// `git init`, another repository): `needs-human`, never read nor committed into.
    pub foreign: Option<String>,
    /// Changed paths that an index flag hides from `git status` (`assume-unchanged`,
    /// `skip-worktree` with the file on disk), each with its flag: counted in `dirty`
    /// and named in the reason (SPEC 1.3 "Empty needs proof").
    pub hidden: Vec<String>,
}

/// Everything the classifier needs about one worker. Gathered by [`crate::snapshot`].
#[derive(Clone, Debug)]
pub(crate) struct Snapshot {
    /// Task key.
    pub task: String,
    /// Branch name (short).
    pub branch: String,
    /// Base branch name.
    pub base: String,
    /// The commit the worker is at: worktree HEAD, else local tip, else remote-tracking tip.
    pub head: Option<gix::ObjectId>,
    /// The branch exists locally.
    pub branch_local: bool,
    /// The branch's remote-tracking ref exists.
    pub branch_remote: bool,
    /// Commits on `head` in neither the local base nor its remote-tracking branch.
    pub ahead: u32,
    /// Commits on the base not in `head`.
    pub behind: u32,
    /// A shallow repository where `head` and the base have no merge base in the available
    /// history (the walk from `head` reached the shallow boundary): `ahead` and `behind`
    /// are then only what the available history shows (SPEC 1.2 "Never lose work: more
    /// states": null in the worker, never `empty`, never deleted).
    pub shallow: bool,
    /// Commits on the remote-tracking branch not in the base; `None` without one.
    pub remote_ahead: Option<u32>,
    /// Commits of the local branch that neither the base nor the remote-tracking branch
    /// contains (they would become unreachable if the branch went).
    pub branch_unique: u32,
    /// Commits on `head` beyond the pull request's head (new work after it; 0 when
    /// unknown or none).
    pub beyond_pr: u32,
    /// How the pull request's head stands to `head` (SPEC 1.3 "Merged needs proof").
    pub pr_head: PrHead,
    /// Stash entries made on the branch (`stash@{N} (On <branch>: …)`), newest first: work
    /// no worktree status shows (SPEC 1.3: never `empty` while one exists).
    pub stashes: Vec<String>,
    /// Commits the branch's reflog holds that neither its head nor its base reaches
    /// (`issue-5@{2} (1a2b3c4d5e6f add parser)`), newest first; read only when nothing is
    /// ahead (SPEC 1.3: never `empty` while one exists).
    pub reset_away: Vec<String>,
    /// A directory that holds a checkout of this branch whose worktree registration is
    /// gone (SPEC 1.3): `recover` registers it again, keeping its content.
    pub deregistered: Option<Deregistered>,
    /// The worker's worktree, if any.
    pub worktree: Option<WorktreeFacts>,
    /// Newest committer time of commits ahead that are not git-recode WIP commits.
    pub newest_commit: Option<Timestamp>,
    /// The task's ledger, in ledger order.
    pub events: Vec<Event>,
    /// Result of probing the last attempt's pid on this host (`None`: not probeable).
    pub pid_alive: Option<bool>,
    /// The agent transcript's mtime, where one is known (or of the `record spawn
    /// --output` file, when newer).
    pub transcript_mtime: Option<Timestamp>,
    /// The open attempt's newest output line reads as a limit: when it resets (SPEC
    /// 1.2 "parked on a limit"; [`crate::agent::parked::parked_until`]).
    pub parked_until: Option<Timestamp>,
    /// What the forge said about the branch.
    pub forge: Forge,
    /// What the forge calls its requests, for the reason's sentence (merge request on
    /// GitLab, SPEC 1.3).
    pub noun: reason::RequestNoun,
    /// The forge reports the issue a `blocked` outcome names as closed.
    pub blocker_closed: bool,
    /// The clock.
    pub now: Timestamp,
    /// `recode.stallAfter`.
    pub stall_after: jiff::SignedDuration,
    /// `recode.hungAfter`: a live pid idle this long is hung (SPEC 1.3).
    pub hung_after: jiff::SignedDuration,
    /// `recode.gate` is set (else a `tests-green` milestone is the agent's own claim).
    pub gate_configured: bool,
    /// `recode.maxAttempts`.
    pub max_attempts: u32,
    /// `recode.maxTransient` (SPEC 1.3).
    pub max_transient: u32,
    /// Which host the worker belongs to (SPEC 1.2 "Several machines").
    pub hosts: HostFacts,
    /// The replayed ledger facts of this branch ([`Snapshot::replayed`]), worked out once a
    /// run: the gather fills it, else the first reader.
    pub replay_cache: std::sync::OnceLock<replay::Replay>,
}

impl Snapshot {
    /// The ledger facts of this worker's branch (`replay_for(events, branch)`), replayed once
    /// however many readers ask (the classifier, `resume`'s facts and launch, `recover`).
    pub(crate) fn replayed(&self) -> &replay::Replay {
        self.replay_cache
            .get_or_init(|| replay::replay_for(&self.events, &self.branch))
    }
}

/// How a pull request's head stands to the worker's head (SPEC 1.3 "Merged needs proof":
/// only a head that is the tip, or contains it, proves a merged request is the worker's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum PrHead {
    /// No pull request, or its head is unknown here (not given, not in this repository).
    #[default]
    Unknown,
    /// The head is the worker's head.
    Tip,
    /// The head contains the worker's head (more was pushed onto the request).
    Contains,
    /// The worker's head holds this many commits beyond the request's head (new work).
    Behind(u32),
    /// Neither contains the other: another line of work that reused the branch name.
    Unrelated,
}

impl PrHead {
    /// The head is the tip or contains it: proof for a merged request.
    pub(crate) fn proves(self) -> bool {
        matches!(self, PrHead::Tip | PrHead::Contains)
    }
}

/// A checkout of a worker's branch whose worktree registration is gone (SPEC 1.3): its
/// directory (holding a `.git` file that names this repository's worktrees) and the
/// admin directory that file names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Deregistered {
    /// The directory.
    pub path: String,
    /// The admin directory its `.git` names (gone, or another worktree's).
    pub names: String,
}

/// What the gather found about the worker's host (SPEC 1.2 "Several machines"): whose
/// it is, what its host's heartbeat says, and whether this host's work was taken over.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct HostFacts {
    /// The host of the newest attempt on the branch (this one or another); `None`
    /// without an attempt.
    pub attempt_host: Option<String>,
    /// The newest attempt ran on another host.
    pub other: Option<OtherHost>,
    /// This host's work on the branch was taken over by another host (the comeback).
    pub taken_over: Option<TakenOver>,
}

/// The other host a worker belongs to, and what is known of it here.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct OtherHost {
    /// The host's id, as its attempt recorded it.
    pub host: String,
    /// Its label (hostname), as its heartbeat names it.
    pub label: Option<String>,
    /// When this host first saw its newest attempt on the branch (this host's clock).
    pub attempt_at: Timestamp,
    /// When this host first saw its heartbeat at its current value (this host's clock;
    /// `None`: no heartbeat fetched from it). SPEC 1.3: never the heartbeat's `ts`.
    pub beat_at: Option<Timestamp>,
    /// What the heartbeat says of this branch: alive or not (`None`: not listed).
    pub alive: Option<bool>,
    /// `recode.hostTimeout`.
    pub timeout: jiff::SignedDuration,
}

impl OtherHost {
    /// When the host was last heard of: its heartbeat, else its newest attempt here.
    pub(crate) fn last_seen(&self) -> Timestamp {
        self.beat_at
            .map_or(self.attempt_at, |b| b.max(self.attempt_at))
    }

    /// From `beat` to `now`, in whole seconds (a heartbeat from the future counts as
    /// written now).
    pub(crate) fn beat_age(&self, now: Timestamp, beat: Timestamp) -> jiff::SignedDuration {
        jiff::SignedDuration::from_secs((now.as_second() - beat.as_second()).max(0))
    }

    /// Whether the host has been silent for `recode.hostTimeout` at `now` (its workers may
    /// then be taken over here).
    pub(crate) fn silent(&self, now: Timestamp) -> bool {
        self.beat_age(now, self.last_seen()) >= self.timeout
    }
}

/// A takeover of this host's work by another host (SPEC 1.2: back on the old host,
/// nothing is pushed onto the branch; the WIP goes to `side_branch`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TakenOver {
    /// The host that took the worker over.
    pub by: String,
    /// This host.
    pub here: String,
    /// When.
    pub at: Timestamp,
    /// `recode/takeover/<branch>/<host>`.
    pub side_branch: String,
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
    pub head: Option<gix::ObjectId>,
    /// Base branch.
    pub base: String,
    /// Commits ahead of the base; `None` when unknown (a shallow history without a merge
    /// base: [`Snapshot::shallow`]).
    pub ahead: Option<u32>,
    /// Commits behind the base; `None` when unknown, as `ahead`.
    pub behind: Option<u32>,
    /// Commits on the remote-tracking branch not in the base.
    pub remote_ahead: Option<u32>,
    /// Dirty counts.
    pub dirty: Option<Dirty>,
    /// The worktree was not read because the worker's pid is alive (`dirty` is then
    /// `None`; `status --deep` reads it).
    pub dirty_not_read: bool,
    /// In-progress operation.
    pub operation: Option<Operation>,
    /// Liveness.
    pub liveness: Liveness,
    /// State.
    pub state: State,
    /// Action.
    pub action: Action,
    /// Why this action: the table row and the overrides, typed; `to_string()` gives the
    /// SPEC's one-sentence `reason`.
    pub reason: reason::Reason,
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
    /// Ignored files and directories that would go with the worktree on a delete (summarized).
    pub ignored: Vec<String>,
    /// The newest ledger event of the worker when it is stamped after `now` (a skewed clock
    /// on the machine that wrote it, or a ledger synced from one): ignored as activity, and
    /// `status` warns once (SPEC 1.1 "Outcomes"). Not part of the JSON contract.
    pub future_event: Option<Timestamp>,
    /// Every fact the decision used, one sentence each (for `classify`).
    pub evidence: Vec<String>,
    /// The host of the newest attempt (SPEC 1.2 "Several machines"), `None` without one.
    pub host: Option<String>,
    /// That host is another than this one: the worker is listed with its host.
    pub other_host: bool,
}

/// A host as shown: `label (id)` when a label (its hostname) is known and differs from its
/// id (`recode.hostId`), else the id (SPEC 1.3 "Several machines, by the observer's clock").
pub(crate) fn host_shown(id: &str, label: Option<&str>) -> String {
    match label.filter(|l| !l.is_empty() && *l != id) {
        Some(l) => format!("{l} ({id})"),
        None => id.to_string(),
    }
}
