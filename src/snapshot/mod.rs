//! Gather what git and the ledger say about every worker into [`Snapshot`]s for the
//! pure classifier. This is the only place that reads the repository for `status`.
//!
//! Workers (SPEC "worker branch"): local branches matching `recode.branchPattern`, plus
//! branches with ledger events (which may exist only on the remote, or nowhere).

mod ask;
mod pickup;
pub use ask::{forge_ask, forge_view};
pub use pickup::persist as pick_up_milestones;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use gix::ObjectId;
use jiff::Timestamp;

use crate::config::{self, Config};
use crate::ledger::{self, Body, Ledger, LedgerError};
use crate::model::{Snapshot, WorktreeFacts};
use crate::process;
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

/// Which workers to gather.
#[derive(Clone, Debug, Default)]
pub struct Options {
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
}

/// The result of a census: one snapshot per worker, in task order.
#[derive(Debug)]
pub struct Census {
    /// The base branch.
    pub base: String,
    /// Snapshots, sorted by task (numbers numerically), then branch.
    pub snapshots: Vec<Snapshot>,
    /// Problems worth a line on stderr (bad ledger lines, unreadable worktrees).
    pub warnings: Vec<String>,
}

/// The notes refs whose union is the ledger: the local one, then fetched copies
/// (`refs/recode/remotes/*/notes`, written by `sync`).
pub fn notes_refs(repo: &gix::Repository, cfg: &Config) -> Vec<String> {
    let mut refs = vec![cfg.notes_ref.clone()];
    if let Ok(platform) = repo.references()
        && let Ok(iter) = platform.prefixed("refs/recode/remotes/")
    {
        for r in iter.flatten() {
            let name = r.name().as_bstr().to_string();
            if name.ends_with("/notes") {
                refs.push(name);
            }
        }
    }
    refs
}

pub use crate::ledger::task_order;

/// The newest branch named in a ledger.
fn ledger_branch(l: &Ledger) -> Option<String> {
    l.events().rev().find_map(|e| e.branch.clone())
}

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
    let platform = repo.references().map_err(repo::git)?;
    for r in platform.local_branches().map_err(repo::git)?.flatten() {
        let name = r.name().shorten().to_string();
        let mut r = r;
        if let Ok(id) = r.peel_to_id() {
            local.insert(name, id.detach());
        }
    }
    let mut workers: BTreeMap<String, String> = BTreeMap::new();
    for b in local.keys() {
        if let Some(t) = cfg.task_of(b) {
            workers.insert(b.clone(), t);
        }
    }
    for (task, l) in &ledgers.by_task {
        let b = ledger_branch(l).unwrap_or_else(|| task.clone());
        workers.entry(b).or_insert_with(|| task.clone());
    }
    // The base branch is where work merges: never a worker, whatever the pattern or ledger.
    workers.remove(base);
    Ok((local, workers))
}

/// Gather a snapshot of every worker.
///
/// Errors: [`GatherError`] when refs, objects or the ledger cannot be read. An
/// unreadable worktree is not an error: its `dirty` is null and a warning says why.
#[tracing::instrument(level = "debug", skip_all)]
pub fn gather(
    repo: &gix::Repository,
    cfg: &Config,
    now: Timestamp,
    opts: &Options,
) -> Result<Census, GatherError> {
    let mut ledgers = read_ledgers(repo, cfg, opts.only_branch.as_deref())?;
    let mut warnings = ledgers.warnings.clone();
    let worktrees = worktree::list(repo)?;
    let base = repo::base_name(repo, cfg);
    let base_tips = repo::base_tips(repo, cfg, &base);

    let (local, mut workers) = worker_branches(repo, cfg, &ledgers, &base)?;
    if let Some(only) = &opts.only_branch {
        let task = workers
            .get(only)
            .cloned()
            .unwrap_or_else(|| cfg.key_of(only));
        workers = if *only == base {
            BTreeMap::new()
        } else {
            BTreeMap::from([(only.clone(), task)])
        };
    }

    // Detached worktrees belong to the task whose newest attempt ran in them, else to the
    // branch their HEAD reflog says they left (SPEC special cases).
    let mut detached_owner: BTreeMap<String, &Worktree> = BTreeMap::new();
    let mut detached_branch: BTreeMap<String, &Worktree> = BTreeMap::new();
    for wt in worktrees.iter().filter(|w| w.detached) {
        let path = wt.path.to_string_lossy().to_string();
        let mut owned = false;
        for (task, l) in &ledgers.by_task {
            if ledger_cwd(l).as_deref() == Some(path.as_str()) {
                detached_owner.insert(task.clone(), wt);
                owned = true;
            }
        }
        if !owned && let Some(b) = worktree::left_branch(&wt.git_dir, &local) {
            if opts.only_branch.is_none()
                && b != base
                && let Some(t) = cfg.task_of(&b)
            {
                workers.entry(b.clone()).or_insert(t);
            }
            detached_branch.insert(b, wt);
        }
    }

    let this_host = process::hostname();
    let mut snapshots = Vec::new();
    let mut status_jobs: Vec<(usize, std::path::PathBuf, bool)> = Vec::new();
    let mut all_ref_tips: Option<Vec<ObjectId>> = None;
    // Each ledger's events move into the snapshot of the last branch of its task (a copy
    // only for a task with several branches): the ledger is held once.
    let mut branches_of: BTreeMap<&str, usize> = BTreeMap::new();
    for t in workers.values() {
        *branches_of.entry(t.as_str()).or_default() += 1;
    }
    for (branch, task) in &workers {
        let left = branches_of.get_mut(task.as_str()).map_or(0, |n| {
            *n -= 1;
            *n
        });
        let events: Vec<ledger::Event> = if left == 0 {
            ledgers
                .by_task
                .remove(task)
                .map(|l| l.entries.into_iter().map(|e| e.event).collect())
        } else {
            ledgers
                .by_task
                .get(task)
                .map(|l| l.events().cloned().collect())
        }
        .unwrap_or_default();
        let wt = worktrees
            .iter()
            .find(|w| w.branch.as_deref() == Some(branch.as_str()))
            .or_else(|| detached_owner.get(task).copied())
            .or_else(|| detached_branch.get(branch).copied());
        let local_tip = local.get(branch).copied();
        let remote_ref = repo::remote_tracking(repo, cfg, branch);
        let remote_tip = repo::tip(repo, &remote_ref);
        // A detached worker is classified from its branch tip: ahead is never counted
        // from the detached HEAD (SPEC special cases).
        let head = wt
            .filter(|w| !w.missing && !w.detached)
            .and_then(|w| w.head)
            .or(local_tip)
            .or(remote_tip)
            .or_else(|| wt.filter(|w| !w.missing).and_then(|w| w.head));
        if head.is_none() && wt.is_none() && !opts.all && opts.only_branch.is_none() {
            continue; // exists nowhere: listed only with --all
        }
        let ahead_commits = match head {
            Some(h) => repo::commits_between(repo, h, &base_tips)?,
            None => Vec::new(),
        };
        // Milestones the hook could not write, shown from their commits' trailers; not on
        // a branch of unknown provenance (no worktree, no ledger: orphaned stays orphaned).
        let mut events = events;
        if wt.is_some() || !events.is_empty() {
            let found = crate::hook::pickup::unledgered_in(repo, &ahead_commits, &events)?;
            let found = crate::hook::pickup::events_for(task, branch, found);
            crate::hook::pickup::merge(&mut events, found);
        }
        let behind = match head {
            Some(h) => base_tips
                .first()
                .map(|b| repo::count_between(repo, *b, &[h]))
                .transpose()?
                .unwrap_or(0),
            None => 0,
        };
        let remote_ahead = match remote_tip {
            Some(r) => Some(repo::count_between(repo, r, &base_tips)?),
            None => None,
        };
        let branch_unique = match local_tip {
            Some(t) => {
                let mut keep = base_tips.clone();
                keep.extend(remote_tip);
                repo::count_between(repo, t, &keep)?
            }
            None => 0,
        };
        // Commits beyond the pull request's head are new work (SPEC `published` row).
        let pr_head = match opts.forge.pr_of(branch) {
            Some(Some(p)) => p
                .head
                .as_deref()
                .and_then(|h| ObjectId::from_hex(h.as_bytes()).ok()),
            _ => None,
        };
        let beyond_pr = match (head, pr_head) {
            (Some(h), Some(p)) if h != p && repo.find_object(p).is_ok() => {
                repo::count_between(repo, h, &[p])?
            }
            _ => 0,
        };
        let replayed = ledger::replay(&events);
        let transcript_mtime = replayed
            .session_id
            .as_deref()
            .and_then(crate::agent::transcript)
            .and_then(worktree::mtime);
        let pid_alive = probe_pid(&events, &replayed, &this_host);
        // A live agent's worktree is not read unless asked (`--deep`): it is `running`,
        // action `wait`, whatever it holds.
        let skip_read = !opts.deep && pid_alive == Some(true) && !replayed.last_attempt_exited;
        let mut facts = wt.map(|w| WorktreeFacts {
            path: w.path.to_string_lossy().to_string(),
            missing: w.missing,
            dirty: None,
            operation: w.operation,
            detached: w.detached,
            unreachable_commits: 0,
            newest_mtime: None,
            secrets: Vec::new(),
            ignored: Vec::new(),
            is_main: w.is_main,
            locked: w.locked.clone(),
            unreadable: None,
            not_read: skip_read && !w.missing,
            has_submodules: w.git_dir.join("modules").is_dir()
                || w.path.join(".gitmodules").is_file(),
        });
        if let (Some(f), Some(w)) = (facts.as_mut(), wt) {
            if w.detached
                && !w.missing
                && let Some(h) = w.head
            {
                let tips = all_ref_tips.get_or_insert_with(|| all_tips(repo));
                f.unreachable_commits = repo::count_between(repo, h, tips)?;
            }
            if !w.missing && !skip_read {
                // Ignored files matter only where a delete could be planned (nothing ahead);
                // they are listed in the same thread, after the status, when it is clean.
                // A merged pull request may be a squash or rebase merge, whose commits the
                // base never contains: its worktree is a delete candidate too.
                let merged = matches!(
                    opts.forge.pr_of(branch),
                    Some(Some(p)) if p.state == crate::model::PrState::Merged
                );
                let candidate =
                    merged || (ahead_commits.is_empty() && remote_ahead.unwrap_or(0) == 0);
                status_jobs.push((snapshots.len(), w.path.clone(), candidate));
            }
        }
        snapshots.push(Snapshot {
            task: task.clone(),
            branch: branch.clone(),
            base: base.clone(),
            head: head.map(|h| h.to_hex().to_string()),
            branch_local: local_tip.is_some(),
            branch_remote: remote_tip.is_some(),
            ahead: ahead_commits.len() as u32,
            behind,
            remote_ahead,
            branch_unique,
            beyond_pr,
            worktree: facts,
            newest_commit: repo::newest_worker_commit(repo, &ahead_commits),
            events,
            pid_alive,
            transcript_mtime,
            forge: opts.forge.for_branch(branch),
            blocker_closed: false,
            now,
            stall_after_secs: cfg.stall_after_secs,
            max_attempts: cfg.max_attempts,
        });
    }

    // Dirty counts, in parallel across worktrees (each thread opens its own handle).
    let progress = crate::progress::Progress::new(
        status_jobs.len() as u64,
        "reading worktrees",
        opts.progress,
    );
    let results = run_status_jobs(&status_jobs, &progress);
    progress.finish();
    for ((idx, path, _), res) in status_jobs.iter().zip(results) {
        let f = snapshots[*idx]
            .worktree
            .as_mut()
            .expect("status jobs are only queued for worktrees");
        match res {
            Ok((st, ignored)) => {
                f.dirty = Some(st.dirty);
                f.newest_mtime = st.newest_mtime;
                match ignored {
                    Some(Ok(all)) => {
                        f.secrets = all
                            .iter()
                            .filter(|p| config::matches_secret(&cfg.secrets, p))
                            .cloned()
                            .collect();
                        f.ignored = summarize(&all);
                    }
                    Some(Err(e)) => {
                        f.unreadable = Some(format!("its ignored files cannot be listed: {e}"));
                        warnings.push(format!(
                            "cannot list the ignored files of {}: {e}",
                            path.display()
                        ));
                    }
                    None => {}
                }
            }
            Err(e) => {
                f.unreadable = Some(format!("its status cannot be read: {e}"));
                warnings.push(format!("cannot read the worktree {}: {e}", path.display()));
            }
        }
    }

    // A blocked worker waits until its blocker issue is closed: ask the forge about those.
    if matches!(opts.forge, crate::forge::View::Known(_)) {
        let forge = crate::forge::open(repo, &cfg.remote).ok().flatten();
        for s in snapshots.iter_mut() {
            let blocker = ledger::replay(&s.events).blocked;
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

    snapshots.sort_by(|a, b| task_order(&a.task, &b.task).then_with(|| a.branch.cmp(&b.branch)));
    Ok(Census {
        base,
        snapshots,
        warnings,
    })
}

/// What one worktree's job found: its status, and its ignored paths when asked and clean.
type JobResult = Result<
    (
        worktree::Status,
        Option<Result<Vec<String>, crate::git::GitError>>,
    ),
    RepoError,
>;

/// Run the worktree jobs on every core, each thread taking the next job as it frees up
/// (worktrees differ in cost); results come back in job order.
fn run_status_jobs(
    jobs: &[(usize, std::path::PathBuf, bool)],
    progress: &crate::progress::Progress,
) -> Vec<JobResult> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8)
        .min(jobs.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<JobResult>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((_, path, scan_ignored)) = jobs.get(i) else {
                        break;
                    };
                    let r = worktree::status(path).map(|st| {
                        let ignored =
                            (*scan_ignored && st.dirty.is_clean()).then(|| ignored_paths(path));
                        (st, ignored)
                    });
                    progress.inc();
                    if let Ok(mut slot) = results[i].lock() {
                        *slot = Some(r);
                    }
                }
            });
        }
    });
    results
        .into_iter()
        .map(|m| {
            m.into_inner().ok().flatten().unwrap_or_else(|| {
                Err(RepoError::Git(
                    "reading the worktree status failed (a thread panicked)".into(),
                ))
            })
        })
        .collect()
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

/// Probe the pid of the last attempt when it is a `spawn` recorded with one (SPEC
/// `spawn`: alive only with the recorded start token, on this host); `None` when not
/// probeable here.
fn probe_pid(events: &[ledger::Event], replayed: &ledger::Replay, this_host: &str) -> Option<bool> {
    replayed.last_attempt.and_then(|i| match &events[i].body {
        Body::Spawn {
            host,
            pid: Some(pid),
            pid_start,
            ..
        } => process::is_alive(host, *pid, pid_start.as_deref(), this_host),
        _ => None,
    })
}

/// Tips of every ref (branches, remote-tracking branches, tags), to find commits no ref contains.
fn all_tips(repo: &gix::Repository) -> Vec<ObjectId> {
    let mut out = BTreeSet::new();
    if let Ok(p) = repo.references()
        && let Ok(iter) = p.all()
    {
        for mut r in iter.flatten() {
            let name = r.name().as_bstr().to_string();
            if name.starts_with("refs/notes/") || name.starts_with("refs/recode/") {
                continue;
            }
            if let Ok(id) = r.peel_to_id() {
                out.insert(id.detach());
            }
        }
    }
    out.into_iter().collect()
}

/// Gather the one worker on `branch` (even when it is not a worker by name), with the
/// warnings met. `None` when the branch is nowhere: no local or remote branch, no worktree,
/// no ledger.
///
/// Errors: as [`gather`].
pub fn gather_one(
    repo: &gix::Repository,
    cfg: &Config,
    now: Timestamp,
    branch: &str,
    forge: crate::forge::View,
) -> Result<(Option<Snapshot>, Vec<String>), GatherError> {
    let census = gather(
        repo,
        cfg,
        now,
        &Options {
            all: true,
            only_branch: Some(branch.to_string()),
            forge,
            progress: false,
            deep: true,
        },
    )?;
    let snap = census
        .snapshots
        .into_iter()
        .find(|s| s.branch == branch)
        .filter(|s| s.head.is_some() || s.worktree.is_some() || !s.events.is_empty());
    Ok((snap, census.warnings))
}

/// Every ignored file in the worktree at `path` (what `git worktree remove` deletes
/// without a word), read-only: `git --no-optional-locks ls-files --others --ignored
/// --exclude-standard` (which honours `info/exclude` and `core.excludesFile` as git does).
///
/// Errors: [`crate::git::GitError`] when the listing fails: what cannot be read is not
/// clean (SPEC special cases), so the caller never deletes on that reading.
pub fn ignored_paths(path: &Path) -> Result<Vec<String>, crate::git::GitError> {
    let out = crate::git::read(
        path,
        &[
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
        ],
    )?;
    Ok(out
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).to_string())
        .collect())
}

/// Ignored paths summarized by their first component (`target/`, `.env`), for messages.
pub fn summarize(paths: &[String]) -> Vec<String> {
    let set: BTreeSet<String> = paths
        .iter()
        .map(|p| match p.split_once('/') {
            Some((dir, _)) => format!("{dir}/"),
            None => p.clone(),
        })
        .collect();
    set.into_iter().collect()
}
