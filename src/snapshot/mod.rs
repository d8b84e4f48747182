//! Gather what git and the ledger say about every worker into [`Snapshot`]s for the
//! pure classifier. This is the only place that reads the repository for `status`.
//!
//! Workers (SPEC "worker branch"): local branches matching `recode.branchPattern`, plus
//! branches with ledger events (which may exist only on the remote, or nowhere).

mod ask;
pub(crate) mod elsewhere;
mod pickup;
mod reads;
mod worker;
pub(crate) use ask::forge_view;
pub(crate) use pickup::persist as pick_up_milestones;
pub(crate) use reads::{ignored_paths, summarize};

use std::collections::BTreeMap;

use gix::ObjectId;
use jiff::Timestamp;

use crate::config::Config;
use crate::ledger::{self, Ledger, LedgerError};
use crate::model::Body;
use crate::model::Snapshot;
use crate::repo::{self, RepoError};
use crate::worktree::{self, Worktree};

/// Errors gathering snapshots.
#[derive(Debug, thiserror::Error)]
pub enum GatherError {
    /// Reading the repository failed.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// Reading the ledger failed.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

impl GatherError {
    /// What the user can do about it, from the cause.
    pub fn hint(&self) -> Option<String> {
        match self {
            GatherError::Repo(e) => e.hint(),
            GatherError::Ledger(e) => e.hint(),
        }
    }
}

/// Which workers to gather.
#[derive(Clone, Debug, Default)]
pub(crate) struct Options {
    /// Include tasks whose branch exists nowhere (`status --all`).
    pub all: bool,
    /// Only this branch (`classify <branch>`); it is gathered even when it is not a worker by name.
    pub only_branch: Option<String>,
    /// What the forge said in this run.
    pub forge: crate::forge::View,
    /// Show progress on stderr (a terminal, not a machine mode).
    pub progress: bool,
    /// Read every worktree, also those of workers whose recorded pid is alive (`status
    /// --deep`, `classify`, and `recover`'s re-check). Without it such a worktree is not
    /// read at all (no status, no ignored listing): its worker is `running`, action
    /// `wait`, whatever it holds (SPEC worker object, `dirty`).
    pub deep: bool,
    /// Ask the file watcher (`recode.watcher`) what changed in each worktree since the
    /// last tick instead of reading it whole (`status`, `recover`'s plan; issue 38). Never
    /// for a re-check before an irreversible step, which reads whole.
    pub watch: bool,
}

/// The result of a census: one snapshot per worker, in task order.
#[derive(Debug)]
pub(crate) struct Census {
    /// Snapshots, sorted by task (numbers numerically), then branch.
    pub snapshots: Vec<Snapshot>,
    /// Problems worth a line on stderr (bad ledger lines, unreadable worktrees).
    pub warnings: Vec<String>,
}

/// The notes refs whose union is the ledger: the local one, then fetched copies
/// (`refs/recode/remotes/*/notes`, written by `sync`).
pub(crate) fn notes_refs(repo: &gix::Repository, cfg: &Config) -> Vec<String> {
    crate::ledger::notes_refs(repo, &cfg.notes_ref)
}

pub(crate) use crate::ledger::task_order;

/// The `cwd` of the newest attempt that recorded one.
fn ledger_cwd(l: &Ledger) -> Option<String> {
    l.events().rev().find_map(|e| match &e.body {
        Body::Spawn { cwd, .. } => Some(cwd.clone()),
        _ => None,
    })
}

/// Local branches: name → tip.
pub(crate) type Branches = BTreeMap<String, ObjectId>;

/// The local branches (name → tip) and the worker branches (branch → task): local
/// branches matching `recode.branchPattern`, plus the newest branch each ledger names;
/// never the base branch `base`.
///
/// Errors: [`GatherError::Repo`] when the refs cannot be read.
pub(crate) fn worker_branches(
    repo: &gix::Repository,
    cfg: &Config,
    ledgers: &ledger::Ledgers,
    base: &str,
) -> Result<(Branches, BTreeMap<String, String>), GatherError> {
    let mut local: BTreeMap<String, ObjectId> = BTreeMap::new();
    for r in crate::refs::list(repo, "refs/heads/").map_err(repo::git)? {
        if let Some(id) = crate::refs::peeled(repo, &r) {
            let name = r.name.trim_start_matches("refs/heads/").to_string();
            local.insert(name, id);
        }
    }
    let workers =
        crate::workers::worker_branches(local.keys().map(String::as_str), cfg, ledgers, base);
    Ok((local, workers))
}

/// Who the workers of one run are, worked out once (SPEC "worker branch"): the ledgers
/// read (every one, or for one branch only its task's), the local branches, the worker
/// branches (branch → task) and the worktrees. Both the forge's question
/// ([`forge_view`]) and the gather ([`gather_from`]) read it, so a run reads and parses
/// the ledger once.
#[derive(Debug)]
pub(crate) struct Roster {
    /// The ledgers read.
    pub ledgers: ledger::Ledgers,
    /// The base branch.
    pub base: String,
    /// Local branches: name → tip.
    pub local: Branches,
    /// The workers to gather: branch → task (only `only_branch` when one was named;
    /// none when that is the base branch).
    pub workers: BTreeMap<String, String>,
    /// Every worktree.
    pub worktrees: Vec<Worktree>,
}

/// The [`Roster`] of a run about every worker, or only `only_branch`.
///
/// Errors: [`GatherError`] when refs, worktrees or the ledger cannot be read.
pub(crate) fn roster(
    repo: &gix::Repository,
    cfg: &Config,
    only_branch: Option<&str>,
) -> Result<Roster, GatherError> {
    let ledgers = read_ledgers(repo, cfg, only_branch)?;
    let worktrees = worktree::list(repo)?;
    let base = repo::base_name(repo, cfg);
    let (local, workers) = which_workers(repo, cfg, &ledgers, &base, only_branch)?;
    Ok(Roster {
        ledgers,
        base,
        local,
        workers,
        worktrees,
    })
}

/// The gather of every worker from a [`Roster`] already worked out for `opts.only_branch` (when the run
/// asked the forge with it first).
///
/// Errors: as [`gather_from`].
#[tracing::instrument(level = "debug", skip_all)]
pub(crate) fn gather_from(
    repo: &gix::Repository,
    cfg: &Config,
    now: Timestamp,
    opts: &Options,
    roster: Roster,
) -> Result<Census, GatherError> {
    let Roster {
        mut ledgers,
        base,
        local,
        mut workers,
        worktrees,
    } = roster;
    let mut warnings = ledgers.warnings.clone();
    let mut seen = crate::hosts::Seen::load(repo);
    let (beats, beat_warnings) = crate::hosts::read_heartbeats(repo, &mut seen, now);
    warnings.extend(beat_warnings);
    let base_tips = repo::base_tips(repo, cfg, &base);
    let detached = detached_worktrees(
        (repo, cfg),
        &ledgers,
        &worktrees,
        &local,
        &base,
        opts,
        &mut workers,
    );
    let mut ctx = worker::Ctx {
        repo,
        cfg,
        now,
        opts,
        base: &base,
        base_tips: &base_tips,
        local: &local,
        worktrees: &worktrees,
        detached: &detached,
        me: crate::hosts::me(repo, cfg.command_timeout),
        seen: std::cell::RefCell::new(seen),
        all_ref_tips: None,
        journal: crate::hook::journal::read(repo),
        beats,
        stash: elsewhere::stash_entries(repo),
        noun: crate::forge::noun(repo, cfg),
    };
    let mut snapshots = Vec::new();
    let mut status_jobs: Vec<reads::Job> = Vec::new();
    let mut events_of = EventsOf::new(&mut ledgers, &workers);
    for (branch, task) in &workers {
        let events = events_of.take(task);
        if let Some((snap, job)) = ctx.snapshot(branch, task, events)? {
            if let Some((path, admin, candidate)) = job {
                status_jobs.push((snapshots.len(), path, admin, candidate));
            }
            snapshots.push(snap);
        }
    }
    ctx.seen.borrow().save();
    let watcher = opts
        .watch
        .then(|| crate::worktree::watch::Watcher::new(cfg.watcher, cfg.command_timeout))
        .flatten();
    reads::read_worktrees(
        &mut snapshots,
        &status_jobs,
        (cfg, watcher.as_ref()),
        opts.progress,
        &mut warnings,
    );
    ask_blockers(repo, cfg, opts, &mut snapshots, &mut warnings);
    snapshots.sort_by(|a, b| task_order(&a.task, &b.task).then_with(|| a.branch.cmp(&b.branch)));
    Ok(Census {
        snapshots,
        warnings,
    })
}

/// The local branches and the workers to gather (branch → task): every worker, or only
/// `only_branch` (none when it is the base branch).
fn which_workers(
    repo: &gix::Repository,
    cfg: &Config,
    ledgers: &ledger::Ledgers,
    base: &str,
    only_branch: Option<&str>,
) -> Result<(Branches, BTreeMap<String, String>), GatherError> {
    let (local, mut workers) = worker_branches(repo, cfg, ledgers, base)?;
    if let Some(only) = only_branch {
        let task = workers
            .get(only)
            .cloned()
            .unwrap_or_else(|| cfg.key_of(only));
        workers = if only == base {
            BTreeMap::new()
        } else {
            BTreeMap::from([(only.to_string(), task)])
        };
    }
    Ok((local, workers))
}

/// Detached worktrees: by the task whose newest attempt ran in them (`owner`), else by the
/// branch their HEAD reflog says they left (`branch`).
#[derive(Default)]
pub(super) struct Detached<'a> {
    /// By task.
    pub(super) owner: BTreeMap<String, &'a Worktree>,
    /// By branch left.
    pub(super) branch: BTreeMap<String, &'a Worktree>,
}

/// Detached worktrees belong to the task whose newest attempt ran in them, else to the
/// branch their HEAD reflog says they left (SPEC special cases); such a branch becomes a
/// worker when it matches the pattern (not for a one-branch gather).
fn detached_worktrees<'a>(
    (repo, cfg): (&gix::Repository, &Config),
    ledgers: &ledger::Ledgers,
    worktrees: &'a [Worktree],
    local: &Branches,
    base: &str,
    opts: &Options,
    workers: &mut BTreeMap<String, String>,
) -> Detached<'a> {
    let mut out = Detached::default();
    for wt in worktrees.iter().filter(|w| w.detached) {
        let path = wt.path.to_string_lossy().to_string();
        let mut owned = false;
        for (task, l) in &ledgers.by_task {
            if ledger_cwd(l).as_deref() == Some(path.as_str()) {
                out.owner.insert(task.clone(), wt);
                owned = true;
            }
        }
        if !owned && let Some(b) = worktree::left_branch(repo, &wt.git_dir, local) {
            if opts.only_branch.is_none()
                && b != base
                && let Some(t) = cfg.task_of(&b)
            {
                workers.entry(b.clone()).or_insert(t);
            }
            out.branch.insert(b, wt);
        }
    }
    out
}

/// Hands each worker its task's ledger events: they move into the snapshot of the last
/// branch of its task (a copy only for a task with several branches), so the ledger is
/// held once.
struct EventsOf<'l> {
    ledgers: &'l mut ledger::Ledgers,
    branches_of: BTreeMap<String, usize>,
}

impl<'l> EventsOf<'l> {
    /// Count the branches of each task among `workers`.
    fn new(ledgers: &'l mut ledger::Ledgers, workers: &BTreeMap<String, String>) -> Self {
        let mut branches_of: BTreeMap<String, usize> = BTreeMap::new();
        for t in workers.values() {
            *branches_of.entry(t.clone()).or_default() += 1;
        }
        EventsOf {
            ledgers,
            branches_of,
        }
    }

    /// The events of `task` for its next branch (moved out for its last one).
    fn take(&mut self, task: &str) -> Vec<crate::model::Event> {
        let left = self.branches_of.get_mut(task).map_or(0, |n| {
            *n -= 1;
            *n
        });
        if left == 0 {
            self.ledgers
                .by_task
                .remove(task)
                .map(|l| l.entries.into_iter().map(|e| e.event).collect())
        } else {
            self.ledgers
                .by_task
                .get(task)
                .map(|l| l.events().cloned().collect())
        }
        .unwrap_or_default()
    }
}

/// A blocked worker waits until its blocker issue is closed: ask the forge about those
/// (only when the forge was asked in this run); a failed question is a warning.
fn ask_blockers(
    repo: &gix::Repository,
    cfg: &Config,
    opts: &Options,
    snapshots: &mut [Snapshot],
    warnings: &mut Vec<String>,
) {
    if !matches!(opts.forge, crate::forge::View::Known(_)) {
        return;
    }
    let forge = crate::forge::open(repo, cfg).ok().flatten();
    for s in snapshots.iter_mut() {
        let blocker = crate::model::replay::replay(&s.events).blocked;
        if let (Some(gh), Some(n)) = (
            &forge,
            blocker.as_deref().and_then(crate::forge::blocker_issue),
        ) {
            match gh.issue_closed(n) {
                Ok(closed) => s.blocker_closed = closed,
                Err(e) => warnings.push(format!(
                    "cannot ask about blocker #{n} of task {}: {e}",
                    s.task
                )),
            }
        }
    }
}

/// The ledgers a gather needs: every one for a census; for one branch (`classify`,
/// `recover`'s re-check) only its task's (the task of a branch is its key by
/// `recode.branchPattern`, as `record` wrote it), so a re-check costs one note, not the
/// whole ledger.
fn read_ledgers(
    repo: &gix::Repository,
    cfg: &Config,
    only_branch: Option<&str>,
) -> Result<ledger::Ledgers, LedgerError> {
    let refs = notes_refs(repo, cfg);
    let Some(branch) = only_branch else {
        return ledger::read_all(repo, &refs);
    };
    let task = cfg.key_of(branch);
    let (l, warnings) = ledger::read_task(repo, &refs, &task)?;
    let mut out = ledger::Ledgers {
        warnings,
        ..Default::default()
    };
    if !l.entries.is_empty() {
        out.by_task.insert(task, l);
    }
    Ok(out)
}

/// Gather the one worker on `branch` (even when it is not a worker by name), with the
/// warnings met. `None` when the branch is nowhere: no local or remote branch, no worktree,
/// no ledger.
///
/// Errors: as [`gather_from`].
pub(crate) fn gather_one(
    repo: &gix::Repository,
    cfg: &Config,
    now: Timestamp,
    branch: &str,
    forge: crate::forge::View,
) -> Result<(Option<Snapshot>, Vec<String>), GatherError> {
    let roster = roster(repo, cfg, Some(branch))?;
    gather_one_from(repo, cfg, now, branch, forge, roster)
}

/// [`gather_one`] from the [`Roster`] of `branch` already worked out.
///
/// Errors: as [`gather_from`].
pub(crate) fn gather_one_from(
    repo: &gix::Repository,
    cfg: &Config,
    now: Timestamp,
    branch: &str,
    forge: crate::forge::View,
    roster: Roster,
) -> Result<(Option<Snapshot>, Vec<String>), GatherError> {
    let census = gather_from(
        repo,
        cfg,
        now,
        &Options {
            all: true,
            only_branch: Some(branch.to_string()),
            forge,
            progress: false,
            deep: true,
            watch: false,
        },
        roster,
    )?;
    let snap = census
        .snapshots
        .into_iter()
        .find(|s| s.branch == branch)
        .filter(|s| s.head.is_some() || s.worktree.is_some() || !s.events.is_empty());
    Ok((snap, census.warnings))
}
