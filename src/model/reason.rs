//! Why a worker got its action, as a typed value: the state-table row that matched
//! ([`Row`]) and the overrides that changed the action after it ([`Override`]), in order.
//! Rendered to one sentence only at the boundary ([`std::fmt::Display`]: the `reason`
//! field of `--json`, the table, `recover`'s results). Tests match on the values.

use std::fmt;

use jiff::Timestamp;

use super::{Dirty, Operation, PrState};
use crate::clock;

mod elsewhere;
mod overrides;

/// `1 commit`, `2 commits`: a count and a noun, plural when the count is not 1.
pub(crate) fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// What the forge calls a request to merge a branch, for sentences (SPEC 1.3: "reasons
/// use the forge's own words"): GitLab's merge request `!N`, GitHub's and Gitea's pull
/// request `#N`. Only human sentences change; JSON field names (`pr`) stay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RequestNoun {
    /// GitHub, Gitea/Forgejo, or no forge: "pull request #N".
    #[default]
    PullRequest,
    /// GitLab: "merge request !N".
    MergeRequest,
}

impl RequestNoun {
    /// `pull request` or `merge request`.
    pub fn name(self) -> &'static str {
        match self {
            RequestNoun::PullRequest => "pull request",
            RequestNoun::MergeRequest => "merge request",
        }
    }

    /// Request `number` as the forge writes it: `pull request #3`, `merge request !3`.
    pub fn numbered(self, number: u64) -> String {
        match self {
            RequestNoun::PullRequest => format!("pull request #{number}"),
            RequestNoun::MergeRequest => format!("merge request !{number}"),
        }
    }
}

impl fmt::Display for RequestNoun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the gate said about exactly the head (`half-done` rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateSeen {
    /// A `gate` event with `pass: true` on the head.
    Passed,
    /// A `gate` event with `pass: false` on the head.
    Failed,
    /// No gate result for the head.
    None,
}

/// The state-table row that matched (SPEC "Classification", first match wins), with the
/// facts its sentence names.
// Each field is the fact of the same name in the variant's sentence.
#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Row {
    /// `needs-human`, `escalate` (carried out by `recover` as a save to the side branch,
    /// never an `escalated` event, which would stand for the whole task on every host):
    /// another host took the worker over after this host's own attempt (SPEC 1.2
    /// "Several machines", the comeback).
    TakenOver {
        by: String,
        here: String,
        at: Timestamp,
        branch: String,
        side_branch: String,
    },
    /// `needs-human`: the worktree's `.git` leads to `leads_to`, not to `admin`, the
    /// admin directory this repository lists for it (a fresh `git init`, another
    /// repository): never read nor committed into (SPEC 1.3 "Committing").
    Foreign {
        path: String,
        leads_to: String,
        admin: String,
    },
    /// `needs-human`, `escalate`: `path` holds a checkout of `branch` whose registration
    /// is gone (its `.git` names `names`): `recover` registers it again, keeping its
    /// content, before anything else (SPEC 1.3); escalated only when that fails.
    Deregistered {
        path: String,
        names: String,
        branch: String,
    },
    /// `needs-human`: an operation (rebase, merge, am, …) is in progress in the worktree.
    Operation { op: Operation, path: String },
    /// `needs-human`: conflicted files.
    Conflicted { files: u32, path: String },
    /// `needs-human`: a detached HEAD holds commits no ref contains.
    DetachedUnreachable {
        path: String,
        commits: u32,
        task: String,
    },
    /// `needs-human`: the worktree cannot be read (a truncated or corrupt index, a
    /// half-removed directory): what cannot be read is not clean, never `empty` (SPEC 1.1,
    /// 1.2); `why`: what failed.
    Unreadable { path: String, why: String },
    /// `needs-human`: the worktree's HEAD names a branch that no longer exists and its
    /// HEAD reflog holds no commit to recreate it at (SPEC 1.2).
    UnbornNoReflog { path: String, branch: String },
    /// `published`, `none`: merged, and nothing is left to remove.
    MergedNothingLeft {
        pr: u64,
        branch: String,
        unique: u32,
        base: String,
    },
    /// `published`, `none`: open, checks passing or pending, no change requested.
    PrOpen { pr: u64, pending: bool },
    /// `published`, `resume` (or `needs-human` at the cap): failing checks or requested
    /// changes. `checks`: the failing checks' names (`Some(empty)` when unnamed);
    /// `reviewers`: who requested changes; `capped`: `(attempts, maxAttempts)`.
    PrFeedback {
        pr: u64,
        checks: Option<Vec<String>>,
        reviewers: Option<Vec<String>>,
        capped: Option<(u32, u32)>,
    },
    /// `published`, `delete`: merged.
    Merged { pr: u64 },
    /// `published`, `wait`: open and being merged (GitLab's `locked`: SPEC 1.3).
    Merging { pr: u64 },
    /// `needs-human`: counted attempts at the cap without a passing gate on the head.
    Capped { attempts: u32, max: u32 },
    /// `needs-human`: the last outcome needs a human (`rc N: first line`).
    LastNeedsHuman { exit: String },
    /// `needs-human`: `count` transient exits in a row with no new commit reached
    /// `recode.maxTransient` (SPEC 1.3); `exit` is the last one's `rc N: first line`.
    TransientBound { count: u32, exit: String },
    /// `needs-human`: a standing escalation.
    Escalated { reason: String },
    /// `needs-human`: the pull request was closed without merging.
    PrClosed { pr: u64 },
    /// `needs-human`, `none`: a shallow history where the branch and `base` have no merge
    /// base, clean: ahead/behind unknown, never `empty`, never deleted (SPEC 1.2).
    Shallow { base: String },
    /// `orphaned`: no worktree, no ledger; `ahead` commits (0: unknown provenance).
    Orphaned { ahead: u32 },
    /// `empty`: the branch exists nowhere.
    Nowhere,
    /// `empty`, `delete`: nothing ahead of the base; `worktree`: `Some(ignored entries)`
    /// when a clean worktree goes with it.
    NothingAhead {
        base: String,
        worktree: Option<Vec<String>>,
    },
    /// `publishable`: ahead, clean, gate passed on the head.
    Publishable { ahead: u32, claimed: bool },
    /// `publishable`, `none`: pushed at `head` where no forge can open a pull request
    /// (SPEC 1.2 "The loop settles"); the sentence names its first 12 hex digits.
    PushedByHand { head: gix::ObjectId },
    /// `empty`, `none`: only a remote branch remains, nothing ahead: nothing to remove
    /// (SPEC 1.2 "The loop settles").
    NothingToRemove { branch: String, base: String },
    /// `half-done`, `resume`: the only uncommitted content is what the last WIP commit
    /// left out (SPEC 1.2 "The loop settles").
    LeftOutOnly { paths: Vec<String> },
    /// `half-done`, `resume`: nothing ahead, the worktree clean, but stash entries made on
    /// the branch (`entries`), or commits its reflog alone holds (`reset`: reset away), hold
    /// work (SPEC 1.3 "Empty needs proof"), newest first.
    Stashed {
        branch: String,
        entries: Vec<String>,
        reset: Vec<String>,
    },
    /// `half-done`, `wip-commit`: uncommitted files; `hidden`: those an index flag hides
    /// from `git status` (`path (assume-unchanged)`).
    Uncommitted {
        dirty: Dirty,
        gate: GateSeen,
        hidden: Vec<String>,
    },
    /// `half-done`, `resume`: commits ahead; `missing`: the worktree directory is gone.
    Ahead {
        ahead: u32,
        missing: bool,
        gate: GateSeen,
    },
}

/// Why a worker is `running` (SPEC "liveness"; 1.2 "parked on a limit"): the fact its
/// liveness was decided on, so the reason never names one that is not the cause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunningBy {
    /// Its recorded pid is alive on this host with its recorded start.
    PidAlive,
    /// Activity within `recode.stallAfter`.
    Activity,
    /// Its newest output waits on a limit until this time (and `recode.stallAfter`
    /// after it has not passed).
    Parked {
        /// The limit's reset.
        until: Timestamp,
    },
}

/// Why a worktree is never removed ([`Override::NeverRemoved`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kept {
    /// The main worktree.
    Main,
    /// Locked, with its reason (empty when locked without one).
    Locked(String),
    /// It holds submodules (`git worktree remove` refuses).
    Submodules,
}

/// An override that replaced the table's action (SPEC: the sentences after the table),
/// in the order `classify::overrides` applies them.
// Each field is the fact of the same name in the variant's sentence.
#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Override {
    /// The main, a locked or a submodule worktree is never removed (`none`).
    NeverRemoved(Kept),
    /// The main worktree is never WIP-committed (`resume` in place).
    MainNotCommitted,
    /// What cannot be read is not clean (`none`).
    Unreadable { path: String, why: String },
    /// A detached worktree is never published, WIP-committed or removed (`none`);
    /// `what`: the action refused.
    Detached {
        path: String,
        branch: String,
        refused: super::Action,
    },
    /// A shallow history without a merge base of the branch and its base: never deleted
    /// (`none`; SPEC 1.2).
    ShallowNeverDeleted,
    /// A registered worktree whose directory is missing is never removed (`none`).
    MissingDirectory { path: String },
    /// A registered worktree whose directory is missing cannot be resumed (`resume`
    /// refuses it): `escalate` instead of a `resume` that fails every tick (SPEC 1.2 "The
    /// loop settles").
    MissingNotResumed { path: String },
    /// Ignored files matching `recode.secrets` keep the worktree (`none`).
    SecretsKept { files: Vec<String> },
    /// The forge failed in this run: a delete or publish waits.
    ForgeFailed { refused: super::Action },
    /// A transient limit: wait until `retry_after`.
    Transient { retry_after: Timestamp },
    /// Blocked on an issue until `record unblock`.
    Blocked { on: String },
    /// The worker is running, for the reason its liveness was decided on ([`RunningBy`]).
    Running { by: RunningBy },
    /// SPEC 1.3 "The loop as people run it": the worker's pid is alive (start token
    /// matching) but it showed no activity for `idle` seconds (`recode.hungAfter`; or
    /// parked on a limit that reset at `until` and silent for `recode.stallAfter` since):
    /// `kill` — `recover` ends its process group and ledgers its exit, the next tick
    /// resumes it. No second agent is started beside it, nothing is committed under it.
    Hung { idle: i64, until: Option<Timestamp> },
    /// No attempt recorded, but activity `idle` seconds ago.
    UnrecordedActivity { idle: i64 },
    /// The newest attempt ran on another host that is not silent: never acted on here
    /// (`wait`, SPEC 1.2 "Several machines").
    OtherHost { host: String, why: HostWait },
}

/// Why a worker of another host waits here ([`Override::OtherHost`]); ages in seconds.
#[allow(missing_docs)] // each field is named in its variant's sentence
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostWait {
    /// Its heartbeat, `age` old, says the worker is alive.
    Alive { age: jiff::SignedDuration },
    /// Its attempt started `age` ago, within `recode.stallAfter`.
    Young { age: jiff::SignedDuration },
    /// Its heartbeat, `age` old, does not say it is alive: that host's loop handles it.
    HostHandles { age: jiff::SignedDuration },
    /// No heartbeat says anything; the host was last heard of `age` ago, under
    /// `recode.hostTimeout` (`timeout`).
    NotSilent {
        age: jiff::SignedDuration,
        timeout: jiff::SignedDuration,
    },
    /// Silent for `age`, past `recode.hostTimeout`: only a takeover (`resume`) acts on the
    /// worker here; `refused` (a publish, delete or WIP commit) is that host's (`none`).
    Silent {
        age: jiff::SignedDuration,
        refused: super::Action,
    },
}

impl Override {
    /// Whether the sentence adds to the one before it (`…; why`) rather than replacing it.
    fn adds(&self) -> bool {
        matches!(
            self,
            Override::NeverRemoved(_) | Override::MainNotCommitted | Override::Detached { .. }
        )
    }

    /// Whether the sentence already says the worktree directory is missing.
    fn says_missing(&self) -> bool {
        matches!(
            self,
            Override::MissingDirectory { .. } | Override::MissingNotResumed { .. }
        )
    }
}

/// New work after the worker's request (SPEC `published` row): its head holds `beyond`
/// commits past request `pr`'s head, so the worker is classified as if it had no request,
/// and the reason names the request (`; 1 commit after pull request #3 (merged): new work`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AfterRequest {
    /// The request's number.
    pub pr: u64,
    /// Its state: open or merged (a closed one has its own row, `PrClosed`).
    pub state: PrState,
    /// Commits on the worker's head past the request's head (at least 1).
    pub beyond: u32,
}

/// The whole reason: the row, then each override in order; `missing`: the worktree path
/// when its directory is missing (said once, at the end, unless already said); `after`:
/// the request the worker's new work follows (said last).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reason {
    /// The state-table row.
    pub row: Row,
    /// The overrides applied, in order.
    pub overrides: Vec<Override>,
    /// The missing worktree directory, if any.
    pub missing: Option<String>,
    /// The request whose head the worker's head has moved past, if any.
    pub after: Option<AfterRequest>,
    /// What the forge calls its requests, for the sentence (from the snapshot).
    pub noun: RequestNoun,
}

impl Reason {
    /// A reason from the table alone.
    pub fn row(row: Row) -> Reason {
        Reason {
            row,
            overrides: Vec::new(),
            missing: None,
            after: None,
            noun: RequestNoun::default(),
        }
    }

    /// The override that decided the action last, if any.
    pub fn last_override(&self) -> Option<&Override> {
        self.overrides.last()
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = self.row.said(self.noun).to_string();
        for o in &self.overrides {
            s = if o.adds() {
                format!("{s}; {o}")
            } else {
                o.to_string()
            };
        }
        let said = self.overrides.iter().any(Override::says_missing)
            || matches!(
                (&self.row, self.overrides.iter().rev().find(|o| !o.adds())),
                (Row::Ahead { missing: true, .. }, None)
            );
        if let Some(path) = self.missing.as_ref().filter(|_| !said) {
            s.push_str(&format!("; worktree directory {path} is missing"));
        }
        if let Some(a) = self.after {
            s.push_str(&format!(
                "; {} after {} ({}): new work",
                plural(u64::from(a.beyond), "commit"),
                self.noun.numbered(a.pr),
                <&str>::from(a.state)
            ));
        }
        f.write_str(&s)
    }
}

impl fmt::Display for GateSeen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GateSeen::Passed => "gate passed on the head",
            GateSeen::Failed => "gate failed on the head",
            GateSeen::None => "no gate result for the head",
        })
    }
}

impl Row {
    /// The row's sentence in the forge's words ([`RequestNoun`]); its `Display` is the
    /// sentence with "pull request".
    pub fn said(&self, noun: RequestNoun) -> impl fmt::Display + '_ {
        Said(self, noun)
    }
}

/// A row's sentence in the forge's words ([`Row::said`]).
struct Said<'a>(&'a Row, RequestNoun);

impl fmt::Display for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Said(self, RequestNoun::default()).fmt(f)
    }
}

impl fmt::Display for Said<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = |k: u32, what: &str| plural(u64::from(k), what);
        let Said(row, noun) = *self;
        let req = |pr: &u64| noun.numbered(*pr);
        match row {
            Row::Foreign {
                path,
                leads_to,
                admin,
            } => write!(
                f,
                "the worktree {path} no longer leads to this repository: its .git leads to {leads_to}, while this repository lists {admin} for it; nothing is read or committed there (put its `.git` file back, `gitdir: {admin}`, or move that repository away)"
            ),
            Row::Deregistered {
                path,
                names,
                branch,
            } => write!(
                f,
                "{path} holds a checkout of {branch} whose worktree registration is gone (its .git names {names}): `git recode recover {branch}` registers it again, keeping its content"
            ),
            Row::Operation { op, path } => write!(f, "a {op} is in progress in {path}"),
            Row::Conflicted { files, path } => {
                write!(f, "{} in {path}", n(*files, "conflicted file"))
            }
            Row::TakenOver {
                by,
                here,
                at,
                branch,
                side_branch,
            } => write!(
                f,
                "taken over by host {by} at {} while this host {here} was silent: nothing here is pushed onto {branch}; `git recode recover {branch}` saves this host's work on {side_branch}; compare it with {branch}, then remove this worktree",
                clock::format_secs(*at)
            ),
            Row::DetachedUnreachable {
                path,
                commits,
                task,
            } => write!(
                f,
                "detached HEAD in {path} holds {} no ref contains; keep them with `git -C {path} branch recode-keep-{task} HEAD`",
                n(*commits, "commit")
            ),
            Row::Unreadable { path, why } => write!(
                f,
                "the worktree {path} cannot be read ({why}): it is not clean, and nothing is deleted, published or WIP-committed on that reading; repair it (`git -C {path} status` shows what git says)"
            ),
            Row::UnbornNoReflog { path, branch } => write!(
                f,
                "the worktree {path} is on {branch}, which no longer exists, and its HEAD reflog holds no commit to recreate it at; find the work (`git -C {path} status`, `git fsck --lost-found`) and recreate the branch"
            ),
            Row::MergedNothingLeft {
                pr,
                branch,
                unique,
                base,
            } => write!(
                f,
                "{} is merged; nothing left to remove: {branch} kept, {unique} of its commits in neither {base} nor its remote-tracking branch",
                req(pr)
            ),
            Row::PrOpen { pr, pending } => {
                write!(
                    f,
                    "{} is open{}",
                    req(pr),
                    if *pending { "; checks pending" } else { "" }
                )
            }
            Row::PrFeedback {
                pr,
                checks,
                reviewers,
                capped,
            } => {
                let mut why = Vec::new();
                match checks {
                    Some(c) if c.is_empty() => why.push("its checks fail".to_string()),
                    Some(c) => why.push(format!("checks fail: {}", c.join(", "))),
                    None => {}
                }
                match reviewers {
                    Some(r) if r.is_empty() => why.push("changes are requested".to_string()),
                    Some(r) => why.push(format!("changes requested by {}", r.join(", "))),
                    None => {}
                }
                write!(f, "{}: {}", req(pr), why.join("; "))?;
                if let Some((attempts, max)) = capped {
                    write!(
                        f,
                        "; {attempts} counted attempts reached recode.maxAttempts ({max})"
                    )?;
                }
                Ok(())
            }
            Row::Merged { pr } => write!(f, "{} is merged", req(pr)),
            Row::Merging { pr } => write!(
                f,
                "{} is being merged (locked): waits, nothing is pushed onto it",
                req(pr)
            ),
            Row::Stashed { .. } => elsewhere::write(f, row),
            Row::Capped { attempts, max } => write!(
                f,
                "{attempts} counted attempts reached recode.maxAttempts ({max}) without a passing gate on the head"
            ),
            Row::LastNeedsHuman { exit } => write!(f, "the last attempt needs a human ({exit})"),
            Row::TransientBound { count, exit } => write!(
                f,
                "transient for {count} attempts: {exit} (recode.maxTransient, no new commit)"
            ),
            Row::Escalated { reason } => {
                write!(f, "escalated: {reason} (until `git recode record clear`)")
            }
            Row::PrClosed { pr } => write!(
                f,
                "{} was closed without merging: a human closed it",
                req(pr)
            ),
            Row::Shallow { base } => write!(
                f,
                "the history is shallow: the branch and {base} have no merge base in it, so ahead/behind are unknown; never deleted (`git fetch --unshallow`)"
            ),
            Row::Orphaned { ahead: 0 } => {
                f.write_str("no worktree and no ledger: unknown provenance, never deleted")
            }
            Row::Orphaned { ahead } => write!(
                f,
                "no worktree and no ledger; {} ahead: resume, never delete",
                n(*ahead, "commit")
            ),
            Row::Nowhere => f.write_str("the branch exists nowhere"),
            Row::NothingAhead { base, worktree } => {
                write!(f, "no commits ahead of {base}")?;
                match worktree {
                    Some(ignored) if !ignored.is_empty() => write!(
                        f,
                        "; worktree clean (its ignored files go with it: {})",
                        ignored.join(", ")
                    ),
                    Some(_) => f.write_str("; worktree clean"),
                    None => Ok(()),
                }
            }
            Row::PushedByHand { head } => {
                write!(
                    f,
                    "pushed {}; open the {noun} by hand",
                    head.to_hex_with_len(12)
                )
            }
            Row::NothingToRemove { branch, base } => write!(
                f,
                "no commits ahead of {base}, no worktree, no local branch: nothing left to remove (the remote branch {branch} is kept)"
            ),
            Row::LeftOutOnly { paths } => write!(
                f,
                "only content a WIP commit leaves out is uncommitted ({}): resume, so the agent decides about it",
                paths.join(", ")
            ),
            Row::Publishable {
                ahead,
                claimed: false,
            } => {
                write!(
                    f,
                    "{} ahead, clean, gate passed on the head",
                    n(*ahead, "commit")
                )
            }
            // SPEC 1.3: with recode.gate unset, the agent's own milestone is all there is.
            Row::Publishable {
                ahead,
                claimed: true,
            } => write!(
                f,
                "{} ahead, clean; the gate's pass is the agent's own claim (a tests-green milestone on the head): recode.gate is unset, so nothing independent checks it",
                n(*ahead, "commit")
            ),
            Row::Uncommitted {
                dirty: d,
                gate,
                hidden,
            } => {
                write!(
                    f,
                    "{} ({} staged, {} unstaged, {} untracked); ",
                    n(d.total(), "uncommitted file"),
                    d.staged,
                    d.unstaged,
                    d.untracked
                )?;
                if !hidden.is_empty() {
                    write!(
                        f,
                        "hidden from git status by an index flag: {}; ",
                        hidden.join(", ")
                    )?;
                }
                write!(f, "{gate}")
            }
            Row::Ahead {
                ahead,
                missing,
                gate,
            } => write!(
                f,
                "{} ahead; {}{gate}",
                n(*ahead, "commit"),
                if *missing {
                    "worktree directory is missing; "
                } else {
                    ""
                }
            ),
        }
    }
}
