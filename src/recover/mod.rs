//! `recover`: carry out the mechanical actions — `delete`, `wip-commit`, `publish`,
//! `escalate` — ledgering every step (SPEC "Commands", "Safety rules").
//!
//! Layout: this file plans the run and dispatches; `guard.rs` re-checks a worker at the
//! moment of acting (one guard for every action); one file per action (`delete.rs`,
//! `wip.rs`, `publish.rs`); `push.rs` holds what a push must never carry.
//!
//! Safety, in order: nothing reachable or uncommitted is lost (a delete re-checks the
//! worker at the moment of acting, removes a worktree the way `git worktree remove` does
//! without force, and deletes the branch with its expected old tip); a running worker or
//! a worktree with an operation in progress is never touched; only the named worktree is
//! acted on (no `git worktree prune`); a step that fails on three consecutive runs for
//! the same head escalates (SPEC safety rule 0).
//!
//! Library code never prints: warnings come back in [`Report::warnings`].

mod delete;
mod guard;
mod hung;
mod leftout;
mod publish;
mod push;
mod refused;
mod removal;
mod reregister;
mod restore;
mod takeover;
mod wip;

use serde::Serialize;

use crate::config::Config;
use crate::forge::{self, Forge};
use crate::ledger;
use crate::model::{Action, ForgeView, Snapshot, Worker};
use crate::model::{Body, Event};
use crate::snapshot::{self, Options};
use crate::{classify, render};

/// A test-only kill point at a recover step (see [`crate::failpoint`]).
fn failpoint(step: &str) {
    crate::failpoint::hit(step);
}

/// Errors that stop a whole `recover` run (a failure on one worker is a `failed` step).
#[derive(Debug, thiserror::Error)]
pub enum RecoverError {
    /// Another `recover` holds the lock.
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
    /// Reading the repository or the ledger failed.
    #[error(transparent)]
    Gather(#[from] snapshot::GatherError),
    /// Writing the ledger failed.
    #[error(transparent)]
    Ledger(#[from] ledger::LedgerError),
    /// The clock could not be read.
    #[error(transparent)]
    Clock(#[from] crate::clock::ClockError),
    /// A branch named on the command line is not a worker.
    #[error("no worker or branch named '{branch}'")]
    UnknownBranch {
        /// The name given.
        branch: String,
    },
}

impl RecoverError {
    /// What the user can do about it (shown under the error), when there is something.
    pub fn hint(&self) -> Option<String> {
        match self {
            RecoverError::Lock(_) => {
                Some("another git recode recover is running; wait for it, or run again".into())
            }
            RecoverError::UnknownBranch { .. } => {
                Some("`git recode status --all` lists every worker; check the branch name".into())
            }
            RecoverError::Gather(e) => e.hint(),
            RecoverError::Ledger(e) => e.hint(),
            RecoverError::Clock(e) => e.hint(),
        }
    }
}

/// The result of one worker (SPEC: `done`, `held`, `skipped`, `failed`).
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Carried out.
    Done,
    /// Partly done and held back, with the reason (e.g. a WIP commit made but its push held).
    Held,
    /// Not something recover carries out (`wait`, `resume`, `none`), or a dry run.
    Skipped,
    /// Could not be done.
    Failed,
}

/// One worker's line in the report.
#[derive(Serialize, Clone, Debug)]
pub struct Step {
    /// Task key.
    pub task: String,
    /// Branch.
    pub branch: String,
    /// The action.
    pub action: Action,
    /// What became of it.
    pub result: Outcome,
    /// Why, in one sentence.
    pub reason: String,
    /// This failure is an error for the exit code (a rejected push, a forge error).
    #[serde(skip)]
    pub error: bool,
}

impl From<&Step> for crate::wire::RecoverResultJson {
    fn from(s: &Step) -> Self {
        crate::wire::RecoverResultJson {
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

/// What to recover.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Branches named; empty with `all`.
    pub branches: Vec<String>,
    /// Every worker.
    pub all: bool,
    /// Print the plan, change nothing.
    pub dry_run: bool,
    /// Show progress on stderr (not in `--json`).
    pub progress: bool,
}

/// What a run did.
#[derive(Debug)]
pub(crate) struct Report {
    /// One step per worker considered.
    pub steps: Vec<Step>,
    /// The forge was asked and failed (the exit code is then 1).
    pub forge_error: Option<String>,
    /// Lines for stderr (unreadable worktrees, bad ledger lines, a forge that is not GitHub).
    pub warnings: Vec<String>,
}

impl Report {}

/// What every action needs: the repository, its configuration, the clock and the forge.
struct Run<'a> {
    repo: &'a gix::Repository,
    cfg: &'a Config,
    now: jiff::Timestamp,
    /// The forge (`None`: no token, no remote, not GitHub).
    forge: Option<Box<dyn Forge>>,
    forge_view: ForgeView,
    /// The registered worktrees (for their own git dirs, where their locks are).
    worktrees: Vec<crate::worktree::Worktree>,
}

impl Run<'_> {
    fn append(
        &self,
        w: &Worker,
        head: Option<gix::ObjectId>,
        body: Body,
    ) -> Result<(), RecoverError> {
        self.append_if(w, head, |_| Some(body.clone()))?;
        Ok(())
    }

    /// Ledger the body `decide` returns from the task's ledger as it stands inside the
    /// compare-and-swap (`None`: a once-only rule says it is there already). Returns
    /// whether it was appended.
    fn append_if(
        &self,
        w: &Worker,
        head: Option<gix::ObjectId>,
        mut decide: impl FnMut(&[Event]) -> Option<Body>,
    ) -> Result<bool, RecoverError> {
        // Stamped when written, after the step it records: files the step touched (the
        // index after a WIP commit) are then no newer than it, so not taken for activity.
        let ts = crate::clock::now()?.max(self.now);
        let stored = ledger::append_with(self.repo, self.cfg, &w.task, ts, |events| {
            decide(events)
                .map(|body| Event::new(ts, &w.task, Some(&w.branch), body).with_head(head))
                .into_iter()
                .collect()
        })?;
        Ok(!stored.is_empty())
    }

    /// Re-gather and re-classify one worker now (the moment of acting).
    fn recheck(&self, branch: &str) -> Result<Option<(Worker, Snapshot)>, RecoverError> {
        let (snap, _) = snapshot::gather_one(
            self.repo,
            self.cfg,
            self.now,
            branch,
            self.forge_view.clone(),
        )?;
        Ok(snap.map(|s| (classify::classify(&s), s)))
    }

    /// Ledger the classification a step acts on.
    fn classified(&self, w: &Worker) -> Result<(), RecoverError> {
        self.classified_with(w, None)
    }

    /// Ledger the classification, with the error of a failed step when there is one.
    /// Without an error it is written only when the state, action or reason differs from
    /// the last one written for the branch (SPEC 1.2 "The loop settles": a settled worker
    /// adds no ledger line per tick); a failed step is always written (three in a row
    /// escalate).
    fn classified_with(&self, w: &Worker, error: Option<String>) -> Result<(), RecoverError> {
        let reason = w.reason.to_string();
        // "Differs from the last one written" is decided inside the compare-and-swap.
        self.append_if(w, w.head, |events| {
            let same = crate::model::replay::last_classified(events, &w.branch)
                == Some((w.state.as_str(), w.action.as_str(), reason.as_str()));
            (error.is_some() || !same).then(|| Body::Classified {
                state: w.state,
                action: w.action,
                reason: reason.clone(),
                error: error.clone(),
            })
        })?;
        Ok(())
    }

    /// A mechanical step failed: ledger the error; the third failure in a row of the same
    /// step on the same head escalates the worker with it (SPEC safety rule 0).
    fn step_failed(&self, w: &Worker, error: String, is_error: bool) -> Result<Step, RecoverError> {
        let (error, _) = self.count_failure(w, error)?;
        Ok(failed(w, error, is_error))
    }

    /// A step held back by what only a human or the agent can change (a push that would
    /// carry a secret or a gitlink to a commit the submodule's remote lacks): the result
    /// is `held`, and it counts as a failure: the third in a row on the same head
    /// escalates (SPEC 1.2 "The loop settles": no action carried out every tick).
    fn step_held(&self, w: &Worker, why: String) -> Result<Step, RecoverError> {
        let (why, _) = self.count_failure(w, why)?;
        Ok(step(w, Outcome::Held, why))
    }

    /// Ledger a failed (or held) step and escalate on the [`ESCALATE_AFTER`]th in a row
    /// on this head; returns the reason to report (naming the escalation) and whether it
    /// escalated.
    fn count_failure(&self, w: &Worker, error: String) -> Result<(String, bool), RecoverError> {
        self.classified_with(w, Some(error.clone()))?;
        let mut streak = 0;
        let escalated = self.append_if(w, w.head, |events| {
            streak = crate::model::replay::failure_streak(events, w.action, w.head);
            (streak >= ESCALATE_AFTER
                && crate::model::replay::standing_escalation(events).is_none())
            .then(|| Body::Escalated {
                reason: format!(
                    "{} failed on {streak} consecutive runs on the same head: {error}",
                    w.action
                ),
            })
        })?;
        if escalated {
            return Ok((
                format!("{error}; failed {streak} times in a row on this head: escalated"),
                true,
            ));
        }
        Ok((error, false))
    }
}

/// Consecutive failures of one step on one head that escalate (SPEC safety rule 0).
pub(crate) const ESCALATE_AFTER: u32 = 3;

fn step(w: &Worker, result: Outcome, reason: impl Into<String>) -> Step {
    Step {
        task: w.task.clone(),
        branch: w.branch.clone(),
        action: w.action,
        result,
        reason: reason.into(),
        error: false,
    }
}

fn failed(w: &Worker, reason: impl Into<String>, error: bool) -> Step {
    Step {
        error,
        ..step(w, Outcome::Failed, reason)
    }
}

/// The repairs a run makes before anything else (not on a dry run): a stale
/// `packed-refs.lock` (a reftable's `tables.list.lock`: [`crate::refs::shared_lock`]),
/// which blocks every ref write whatever the worker, is moved aside
/// (its `unlocked` event goes with the run's first append); a removal a killed run left
/// half done is finished or restored; branches deleted under their worktrees come back
/// (SPEC 1.2). Returns the lines to warn with.
///
/// Errors: [`RecoverError`] from restoring the branches.
fn repair_first(
    repo: &gix::Repository,
    cfg: &Config,
    now: jiff::Timestamp,
) -> Result<Vec<String>, RecoverError> {
    let packed = crate::locks::settle_worker(&[crate::refs::shared_lock(repo)], &cfg.locks);
    if let crate::locks::Verdict::Clear(moved) = packed {
        moved.into_iter().for_each(|m| cfg.locks.moves.owe(m));
    }
    let mut lines = removal::finish_interrupted(repo, cfg.command_timeout);
    lines.extend(restore::unborn_branches(repo, cfg, now)?);
    Ok(lines)
}

/// Read the run's world with `forge`: the forge's view of the roster and a census of
/// every worker (shallow: every action re-checks with a full reading first, guard.rs).
/// Returns the actions' context, the census, and the forge's problems joined (`None`
/// when it had none); every problem is also added to `warnings`.
///
/// Errors: [`RecoverError::Gather`].
fn read<'a>(
    (repo, cfg, now): (&'a gix::Repository, &'a Config, jiff::Timestamp),
    req: &Request,
    forge: Option<Box<dyn Forge>>,
    warnings: &mut Vec<String>,
) -> Result<(Run<'a>, snapshot::Census, Option<String>), RecoverError> {
    let roster = snapshot::roster(repo, cfg, None)?;
    let (forge_view, more) =
        snapshot::forge_view(repo, cfg, forge.as_deref(), &roster, None, false);
    let warning = (!more.is_empty()).then(|| more.join("; "));
    warnings.extend(more);
    let r = Run {
        repo,
        cfg,
        now,
        forge,
        forge_view: forge_view.clone(),
        worktrees: crate::worktree::list(repo).unwrap_or_default(),
    };
    let census = snapshot::gather_from(
        repo,
        cfg,
        now,
        &Options {
            all: false,
            only_branch: None,
            forge: forge_view,
            progress: req.progress,
            // The plan may skip a live worker's worktree (it waits); every action
            // re-checks with a full reading first (guard.rs).
            deep: false,
            // Only the plan: the re-check before acting reads whole.
            watch: true,
        },
        roster,
    )?;
    warnings.extend(census.warnings.iter().cloned());
    Ok((r, census, warning))
}

/// The workers `req` names (all of them with `req.all`).
///
/// Errors: [`RecoverError::UnknownBranch`] for a named branch that is no worker.
fn chosen(mut workers: Vec<Worker>, req: &Request) -> Result<Vec<Worker>, RecoverError> {
    if req.all {
        return Ok(workers);
    }
    if let Some(b) = req
        .branches
        .iter()
        .find(|b| !workers.iter().any(|w| &w.branch == *b))
    {
        return Err(RecoverError::UnknownBranch { branch: b.clone() });
    }
    workers.retain(|w| req.branches.contains(&w.branch));
    Ok(workers)
}

/// One step per worker: what it would do on a dry run, else what [`act`] did (an error
/// on one worker is its `failed` step).
fn act_all(r: &Run, workers: &[Worker], req: &Request) -> Vec<Step> {
    let progress = crate::progress::Progress::new(
        workers.len() as u64,
        "recovering",
        req.progress && !req.dry_run,
    );
    let mut steps = Vec::new();
    for w in workers {
        progress.inc();
        steps.push(if req.dry_run {
            step(
                w,
                Outcome::Skipped,
                format!("dry run: would {}", render::explain(w)),
            )
        } else {
            act(r, w).unwrap_or_else(|e| failed(w, e.to_string(), true))
        });
    }
    progress.finish();
    steps
}

/// Plan or carry out recovery; returns one step per worker considered.
///
/// Errors: [`RecoverError`] for lock, repository or ledger failures, which stop the run;
/// a failure on one worker is a `failed` step, and the run goes on.
#[tracing::instrument(level = "debug", skip_all)]
pub(crate) fn run(
    repo: &gix::Repository,
    cfg: &Config,
    now: jiff::Timestamp,
    req: &Request,
) -> Result<Report, RecoverError> {
    let _lock = if req.dry_run {
        None
    } else {
        Some(crate::lock::acquire(repo.common_dir(), now)?)
    };
    let restored = if req.dry_run {
        Vec::new()
    } else {
        repair_first(repo, cfg, now)?
    };
    let (forge, mut warnings) = forge::open_run(repo, cfg, false);
    warnings.extend(restored);
    let (r, census, warning) = read((repo, cfg, now), req, forge, &mut warnings)?;
    let forge_failed = matches!(r.forge_view, ForgeView::Failed);
    let workers: Vec<Worker> = census.snapshots.iter().map(classify::classify).collect();
    let me = crate::hosts::me(repo, cfg.command_timeout);
    let beat = heartbeat_workers(&census.snapshots, &workers, &me);
    let workers = chosen(workers, req)?;
    let steps = act_all(&r, &workers, req);
    if !req.dry_run {
        // SPEC 1.2 "Several machines": every run rewrites this host's heartbeat (only when
        // it changed or is older than recode.stallAfter / 2).
        let refresh = jiff::SignedDuration::from_secs((cfg.stall_after.as_secs() / 2).max(1));
        // A stale lock on it (a killed run's) is moved aside and the write tried again: a
        // heartbeat that cannot move reads as a silent host, whose live workers are taken.
        let write = |beat| crate::hosts::write_heartbeat(repo, &me, now, beat, refresh);
        let written = write(beat.clone()).or_else(|e| {
            match crate::lock::settle_own_refs(repo.common_dir(), &cfg.locks.moves) {
                0 => Err(e),
                _ => write(beat),
            }
        });
        if let Err(e) = written {
            let held = repo
                .common_dir()
                .join(format!("{}.lock", crate::hosts::heartbeat_ref(&me.id)));
            warnings.push(match crate::lock::age_secs(&held) {
                Some(age) => format!(
                    "{e} ({} is held, {age} s old: moved aside once {} s old)",
                    held.display(),
                    crate::lock::OWN_REF_STALE_SECS
                ),
                None => e.to_string(),
            });
        }
    }
    Ok(Report {
        steps,
        // SPEC: a forge error is an error, after what could be done safely was done.
        forge_error: warning.filter(|_| forge_failed && !req.dry_run),
        warnings,
    })
}

/// The heartbeat's workers (SPEC 1.2 "Several machines"): those whose newest attempt
/// ran on this host, with the pid of that host's newest `spawn` on the branch and
/// whether the worker is running.
fn heartbeat_workers(
    snaps: &[Snapshot],
    workers: &[Worker],
    me: &crate::hosts::Me,
) -> Vec<crate::hosts::BeatWorker> {
    snaps
        .iter()
        .zip(workers)
        .filter(|(s, _)| crate::hosts::newest_is_mine(&s.events, &s.branch, me))
        .map(|(s, w)| {
            let pid = s.events.iter().rev().find_map(|e| match &e.body {
                Body::Spawn {
                    pid, host, label, ..
                } if e.branch.as_deref().is_none_or(|b| b == s.branch)
                    && me.is_named(host, label.is_some()) =>
                {
                    Some(*pid)
                }
                _ => None,
            });
            (
                s.branch.clone(),
                crate::hosts::BeatEntry {
                    pid: pid.flatten(),
                    alive: w.liveness == crate::model::Liveness::Running,
                },
            )
        })
        .collect()
}

fn act(r: &Run, w: &Worker) -> Result<Step, RecoverError> {
    if let Some(why) = unreadable(w) {
        return unreadable_step(r, w, why);
    }
    if matches!(
        w.action,
        Action::Delete | Action::WipCommit | Action::Publish
    ) && let Some(s) = settle_locks(r, w)?
    {
        return Ok(s);
    }
    // A success claim the forge cannot back is ledgered once as `phantom`.
    if w.phantom {
        r.append_if(w, w.head, |events| {
            (!crate::model::replay::phantom_since_last_exit(events)).then(|| Body::Phantom {
                reason: crate::model::replay::PHANTOM_REASON.into(),
            })
        })?;
    }
    // SPEC 1.2 "Several machines": the comeback saves to the side branch, never escalates
    // the task (the host that took it over runs it).
    if matches!(w.reason.row, crate::model::reason::Row::TakenOver { .. }) {
        return takeover::run(r, w);
    }
    // SPEC 1.3: a checkout whose registration is gone is registered again, its content
    // kept; escalated only when that keeps failing.
    if let crate::model::reason::Row::Deregistered { path, names, .. } = &w.reason.row {
        return reregister::run(r, w, path, names);
    }
    match w.action {
        Action::Wait | Action::Resume | Action::None => {
            Ok(step(w, Outcome::Skipped, w.reason.to_string()))
        }
        Action::Escalate => escalate(r, w),
        Action::Delete => delete::run(r, w),
        Action::WipCommit => wip::run(r, w),
        Action::Publish => publish::run(r, w),
        Action::Kill => hung::run(r, w),
    }
}

/// Why the worker's worktree could not be read, when that is what held its action back.
fn unreadable(w: &Worker) -> Option<String> {
    match w.reason.last_override() {
        Some(crate::model::reason::Override::Unreadable { path, why }) => {
            Some(format!("cannot read the worktree {path}: {why}"))
        }
        _ => None,
    }
}

/// SPEC 1.2 "The loop settles": a worktree that cannot be read on three consecutive
/// `recover` runs (for the same head) is `needs-human`: each run ledgers the failure; the
/// third escalates with it.
fn unreadable_step(r: &Run, w: &Worker, why: String) -> Result<Step, RecoverError> {
    r.classified_with(w, Some(why.clone()))?;
    // Escalate-once, decided inside the compare-and-swap.
    let mut reason = String::new();
    let escalated = r.append_if(w, w.head, |events| {
        let streak = crate::model::replay::failure_streak(events, w.action, w.head);
        reason = format!("{why} (on {streak} consecutive recover runs)");
        (streak >= ESCALATE_AFTER && crate::model::replay::standing_escalation(events).is_none())
            .then(|| Body::Escalated {
                reason: reason.clone(),
            })
    })?;
    if escalated {
        return Ok(failed(w, format!("{reason}: escalated"), false));
    }
    Ok(failed(w, why, false))
}

/// SPEC 1.2 "The loop settles": before a mechanical step on a worker (never a running
/// one: its action would be `wait`), move its stale locks aside and ledger `unlocked` for
/// each; a lock that is not yet stale makes the step wait (`skipped`, not a failure).
fn settle_locks(r: &Run, w: &Worker) -> Result<Option<Step>, RecoverError> {
    let wt = w.worktree.as_deref().and_then(|p| {
        r.worktrees
            .iter()
            .find(|t| t.path == std::path::Path::new(p))
    });
    let locks = crate::locks::worker_locks(
        r.repo.common_dir(),
        wt.map(|t| t.git_dir.as_path()),
        wt.is_some_and(|t| t.is_main),
        &w.branch,
    );
    let verdict = crate::locks::settle_worker(&locks, &r.cfg.locks);
    if let Some(why) = verdict.wait_reason() {
        return Ok(Some(step(w, Outcome::Skipped, why)));
    }
    if let crate::locks::Verdict::Clear(moved) = verdict {
        for m in moved {
            r.unlocked(w, m)?;
        }
    }
    Ok(None)
}

impl Run<'_> {
    /// Ledger that a stale lock in `w`'s way was moved aside.
    fn unlocked(&self, w: &Worker, m: crate::lock::MovedLock) -> Result<(), RecoverError> {
        self.append(
            w,
            w.head,
            Body::Unlocked {
                path: m.path,
                age: m.age,
            },
        )
    }
}

fn escalate(r: &Run, w: &Worker) -> Result<Step, RecoverError> {
    let mut earlier = None;
    r.append_if(w, w.head, |events| {
        earlier = crate::model::replay::standing_escalation(events);
        earlier.is_none().then(|| Body::Escalated {
            reason: w.reason.to_string(),
        })
    })?;
    Ok(match earlier {
        Some(reason) => step(w, Outcome::Done, format!("escalated earlier: {reason}")),
        None => step(w, Outcome::Done, format!("escalated: {}", w.reason)),
    })
}

fn short(id: gix::ObjectId) -> String {
    id.to_hex_with_len(12).to_string()
}
