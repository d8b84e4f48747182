//! One worker's snapshot: its tips, commit counts, ledger facts and worktree facts.

use std::collections::BTreeSet;
use std::path::PathBuf;

use gix::ObjectId;
use jiff::Timestamp;

use super::{Branches, Detached, GatherError, Options, elsewhere};
use crate::config::Config;
use crate::hosts;
use crate::model::Body;
use crate::model::{HostFacts, OtherHost, Snapshot, TakenOver, WorktreeFacts};
use crate::process;
use crate::repo;
use crate::worktree::{self, Worktree};

/// What every worker's snapshot is built from, read once per gather.
pub(super) struct Ctx<'a> {
    pub(super) repo: &'a gix::Repository,
    pub(super) cfg: &'a Config,
    pub(super) now: Timestamp,
    pub(super) opts: &'a Options,
    pub(super) base: &'a str,
    pub(super) base_tips: &'a [ObjectId],
    pub(super) local: &'a Branches,
    pub(super) worktrees: &'a [Worktree],
    pub(super) detached: &'a Detached<'a>,
    /// This host (SPEC 1.3: its id; the hostname only a label).
    pub(super) me: hosts::Me,
    /// When this host first saw each other host's heartbeat and attempt (its own clock).
    pub(super) seen: std::cell::RefCell<hosts::Seen>,
    /// Tips of every ref, read at the first detached worktree that needs them.
    pub(super) all_ref_tips: Option<Vec<ObjectId>>,
    /// The milestone journal ([`crate::hook::journal::read`]), read once per gather.
    pub(super) journal: Vec<crate::model::Event>,
    /// Every host's heartbeat, by ref component ([`hosts::read_heartbeats`]).
    pub(super) beats: std::collections::BTreeMap<String, hosts::Heartbeat>,
    /// The repository's stash entries, newest first ([`elsewhere::stash_entries`]).
    pub(super) stash: Vec<elsewhere::StashEntry>,
    /// What the remote's forge calls its requests ([`crate::forge::noun`]).
    pub(super) noun: crate::model::reason::RequestNoun,
}

/// A worktree to read: its path, its admin directory, and whether its ignored files are
/// listed (when clean).
type ToRead = (PathBuf, PathBuf, bool);

/// Commit counts of one worker against the base, its remote branch and its pull request.
struct Counts {
    behind: u32,
    remote_ahead: Option<u32>,
    branch_unique: u32,
    beyond_pr: u32,
    pr_head: crate::model::PrHead,
}

impl<'a> Ctx<'a> {
    /// The snapshot of the worker on `branch` (task `task`, its ledger `events`), with its
    /// worktree status job (path, whether ignored files are listed) when it is to be read;
    /// `None` when the branch exists nowhere and is not asked for.
    pub(super) fn snapshot(
        &mut self,
        branch: &str,
        task: &str,
        mut events: Vec<crate::model::Event>,
    ) -> Result<Option<(Snapshot, Option<ToRead>)>, GatherError> {
        let (repo, cfg, opts) = (self.repo, self.cfg, self.opts);
        let wt = self.worktree_of(branch, task);
        let local_tip = self.local.get(branch).copied();
        let remote_tip = repo::tip(repo, &repo::remote_tracking(repo, cfg, branch));
        let head = head_of(wt, local_tip, remote_tip);
        if head.is_none() && wt.is_none() && !opts.all && opts.only_branch.is_none() {
            return Ok(None); // exists nowhere: listed only with --all
        }
        let ahead_commits = match head {
            Some(h) => repo::commits_between(repo, h, self.base_tips)?,
            None => Vec::new(),
        };
        self.pick_up_milestones((task, branch), wt.is_some(), &ahead_commits, &mut events)?;
        let counts = self.counts(branch, head, local_tip, remote_tip)?;
        let replayed = crate::model::replay::replay_for(&events, branch);
        let (transcript_mtime, parked_until) = agent_output(&events, &replayed);
        let host_facts = self.host_facts(branch, &events, wt, counts.branch_unique);
        let pid_alive = self.pid_alive(&host_facts, &events, &replayed);
        let newest_commit = repo::newest_worker_commit(repo, &ahead_commits, self.now);
        let signals = [replayed.last_worker_event, newest_commit, transcript_mtime];
        let skip_read = self.unread(&replayed, signals, pid_alive);
        let (facts, job) = match wt {
            Some(w) => {
                let candidate =
                    self.delete_candidate(branch, ahead_commits.is_empty(), counts.remote_ahead);
                let (f, job) = self.worktree_facts(w, skip_read, candidate)?;
                (Some(f), job)
            }
            None => (None, None),
        };
        let snap = Snapshot {
            replay_cache: std::sync::OnceLock::from(replayed),
            task: task.to_string(),
            branch: branch.to_string(),
            base: self.base.to_string(),
            head,
            branch_local: local_tip.is_some(),
            branch_remote: remote_tip.is_some(),
            ahead: ahead_commits.len() as u32,
            behind: counts.behind,
            shallow: repo::shallow_cut(repo, &ahead_commits),
            remote_ahead: counts.remote_ahead,
            branch_unique: counts.branch_unique,
            beyond_pr: counts.beyond_pr,
            pr_head: counts.pr_head,
            stashes: self.stashes_of(branch),
            reset_away: match ahead_commits.is_empty() && counts.remote_ahead.unwrap_or(0) == 0 {
                true => elsewhere::reset_away(repo, branch, head, self.base_tips),
                false => Vec::new(),
            },
            deregistered: match wt {
                Some(_) => None,
                None => self.deregistered_of(branch, &events),
            },
            worktree: facts,
            newest_commit,
            events,
            pid_alive,
            transcript_mtime,
            parked_until,
            forge: opts.forge.for_branch(branch),
            noun: self.noun,
            blocker_closed: false,
            now: self.now,
            stall_after: cfg.stall_after,
            hung_after: cfg.hung_after,
            gate_configured: cfg.gate.is_some(),
            max_attempts: cfg.max_attempts,
            max_transient: cfg.max_transient,
            hosts: host_facts,
        };
        Ok(Some((snap, job)))
    }

    /// Merge into `events` the milestones not ledgered yet, from the journal and the
    /// trailers of `ahead_commits`; not on a branch of unknown provenance (no worktree, no
    /// ledger, no journal line: orphaned stays orphaned).
    ///
    /// Errors: [`GatherError`] when the commits cannot be read.
    fn pick_up_milestones(
        &self,
        (task, branch): (&str, &str),
        has_worktree: bool,
        ahead_commits: &[(ObjectId, i64)],
        events: &mut Vec<crate::model::Event>,
    ) -> Result<(), GatherError> {
        let journaled = || {
            self.journal
                .iter()
                .any(|e| e.task == task && e.branch.as_deref() == Some(branch))
        };
        if has_worktree || !events.is_empty() || journaled() {
            let found = crate::hook::pickup::unledgered_with(
                self.repo,
                &self.journal,
                task,
                branch,
                ahead_commits,
                events,
            )?;
            crate::hook::pickup::merge(events, found);
        }
        Ok(())
    }

    /// Whether the worker's pid is alive. Another host's pid is probed here only when it
    /// was recorded on this machine (a clone of its own), and only its being alive counts;
    /// else that host's heartbeat, while seen within `recode.hostTimeout`, says whether it
    /// is alive (SPEC 1.3). `None`: unknown.
    fn pid_alive(
        &self,
        host_facts: &HostFacts,
        events: &[crate::model::Event],
        replayed: &crate::model::replay::Replay,
    ) -> Option<bool> {
        match &host_facts.other {
            Some(o) => match probe_pid(events, replayed, |h, by_id| self.me.same_machine(h, by_id))
            {
                Some(true) => Some(true),
                _ => o.alive.filter(|_| {
                    o.beat_at
                        .is_some_and(|b| o.beat_age(self.now, b) < o.timeout)
                }),
            },
            None => probe_pid(events, replayed, |h, by_id| self.me.is_named(h, by_id)),
        }
    }

    /// Whether a live agent's worktree is left unread: it is `running`, action `wait`,
    /// whatever it holds, unless asked (`--deep`) or every other signal (`signals`: the
    /// newest worker event, commit, output) is older than `recode.hungAfter`: then only its
    /// worktree can show it is not hung (SPEC 1.3).
    fn unread(
        &self,
        replayed: &crate::model::replay::Replay,
        signals: [Option<Timestamp>; 3],
        pid_alive: Option<bool>,
    ) -> bool {
        let quiet =
            signals.into_iter().flatten().max().is_none_or(|t| {
                self.now.as_second() - t.as_second() >= self.cfg.hung_after.as_secs()
            });
        !self.opts.deep
            && !quiet
            && pid_alive == Some(true)
            && (!replayed.last_attempt_exited || replayed.exit_unnamed)
    }

    /// The stash entries made on `branch` (SPEC 1.3), described, newest first.
    fn stashes_of(&self, branch: &str) -> Vec<String> {
        elsewhere::stashes_on(&self.stash, branch)
    }

    /// A checkout of `branch` whose registration is gone (SPEC 1.3), for a worker with no
    /// worktree.
    fn deregistered_of(
        &self,
        branch: &str,
        events: &[crate::model::Event],
    ) -> Option<crate::model::Deregistered> {
        let (path, names) = elsewhere::deregistered(
            self.repo,
            self.cfg.worktree_dir.as_deref(),
            self.worktrees,
            branch,
            events,
        )?;
        Some(crate::model::Deregistered {
            path: path.to_string_lossy().to_string(),
            names: names.to_string_lossy().to_string(),
        })
    }

    /// Whose the worker is (SPEC 1.2 "Several machines"): the host of its newest attempt
    /// when another, with that host's heartbeat; and, when this host still holds work on
    /// the branch (a worktree, or commits on no other ref), a takeover by another host
    /// newer than this host's own attempt.
    fn host_facts(
        &self,
        branch: &str,
        events: &[crate::model::Event],
        wt: Option<&Worktree>,
        branch_unique: u32,
    ) -> HostFacts {
        let me = &self.me;
        let holds_work = wt.is_some_and(|w| !w.missing) || branch_unique > 0;
        let taken_over = hosts::taken_from(events, branch, me)
            .filter(|_| holds_work)
            .map(|(i, by)| TakenOver {
                by,
                here: me.id.clone(),
                at: events[i].ts,
                side_branch: hosts::side_branch(branch, &me.id),
            });
        let newest = hosts::newest_attempt(events, branch);
        let attempt_host = newest.as_ref().map(|(_, h)| h.clone());
        let mine = hosts::newest_is_mine(events, branch, me);
        let other = newest.filter(|_| !mine).map(|(i, host)| {
            let beat = self.beats.get(&hosts::ref_component(&host));
            // SPEC 1.3: what ages is when this host first saw the attempt, never its
            // writer's `ts`.
            let value = format!("{} {}", host.replace(['\t', '\n'], " "), events[i].ts);
            let attempt_at = self
                .seen
                .borrow_mut()
                .sight(&format!("attempt {branch}"), &value, self.now, 0)
                .first;
            OtherHost {
                attempt_at,
                beat_at: beat.and_then(|b| b.seen.map(|s| s.first)),
                alive: beat.map(|b| b.workers.get(branch).copied().unwrap_or(false)),
                timeout: self.cfg.host_timeout,
                label: beat.and_then(|b| b.label.clone()),
                host,
            }
        });
        HostFacts {
            attempt_host,
            other,
            taken_over,
        }
    }

    /// The worktree of the worker: the one on its branch, else a detached one it owns.
    fn worktree_of(&self, branch: &str, task: &str) -> Option<&'a Worktree> {
        self.worktrees
            .iter()
            .find(|w| w.branch.as_deref() == Some(branch))
            .or_else(|| self.detached.owner.get(task).copied())
            .or_else(|| self.detached.branch.get(branch).copied())
    }

    /// Behind the base, the remote branch ahead of the base, the local branch's commits on
    /// no other branch, and the commits beyond the pull request's head.
    fn counts(
        &self,
        branch: &str,
        head: Option<ObjectId>,
        local_tip: Option<ObjectId>,
        remote_tip: Option<ObjectId>,
    ) -> Result<Counts, GatherError> {
        let repo = self.repo;
        let behind = match head {
            Some(h) => self
                .base_tips
                .first()
                .map(|b| repo::count_between(repo, *b, &[h]))
                .transpose()?
                .unwrap_or(0),
            None => 0,
        };
        let remote_ahead = match remote_tip {
            Some(r) => Some(repo::count_between(repo, r, self.base_tips)?),
            None => None,
        };
        let branch_unique = match local_tip {
            Some(t) => {
                let mut keep = self.base_tips.to_vec();
                keep.extend(remote_tip);
                repo::count_between(repo, t, &keep)?
            }
            None => 0,
        };
        // Commits beyond the pull request's head are new work (SPEC `published` row).
        let pr_head = match self.opts.forge.pr_of(branch) {
            Some(Some(p)) => p.head,
            _ => None,
        };
        let (beyond_pr, pr_head) = pr_relation(repo, head, pr_head)?;
        Ok(Counts {
            behind,
            remote_ahead,
            branch_unique,
            beyond_pr,
            pr_head,
        })
    }

    /// Whether a delete could be planned for this worker's worktree, so its ignored files
    /// matter: nothing ahead, or a merged pull request (a squash or rebase merge, whose
    /// commits the base never contains).
    fn delete_candidate(&self, branch: &str, none_ahead: bool, remote_ahead: Option<u32>) -> bool {
        let merged = matches!(
            self.opts.forge.pr_of(branch),
            Some(Some(p)) if p.state == crate::model::PrState::Merged
        );
        merged || (none_ahead && remote_ahead.unwrap_or(0) == 0)
    }

    /// The facts of worktree `w` known without reading its files, and its status job
    /// (path, list ignored files) unless it is missing or not to be read.
    fn worktree_facts(
        &mut self,
        w: &Worktree,
        skip_read: bool,
        candidate: bool,
    ) -> Result<(WorktreeFacts, Option<ToRead>), GatherError> {
        let mut f = WorktreeFacts {
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
            unborn: w.unborn,
            restore_to: w.head.filter(|_| w.unborn),
            admin: w.git_dir.to_string_lossy().to_string(),
            foreign: w.foreign.as_ref().map(|p| p.to_string_lossy().to_string()),
            hidden: Vec::new(),
        };
        if w.detached
            && !w.missing
            && let Some(h) = w.head
        {
            let repo = self.repo;
            let tips = self.all_ref_tips.get_or_insert_with(|| all_tips(repo));
            f.unreachable_commits = repo::count_between(repo, h, tips)?;
        }
        // Ignored files are listed in the same thread, after the status, when it is clean.
        // A worktree whose `.git` leads elsewhere is not read through it (SPEC 1.3).
        let job = (!w.missing && !skip_read && w.foreign.is_none())
            .then(|| (w.path.clone(), w.git_dir.clone(), candidate));
        Ok((f, job))
    }
}

/// How the pull request's head `pr` stands to the worker's `head` (SPEC 1.3 "Merged needs
/// proof"), and the commits on `head` beyond it (new work; 0 unless [`PrHead::Behind`]).
/// A head this repository does not hold is unknown: nothing is proven by it.
///
/// Errors: [`GatherError`] when the history cannot be walked.
///
/// [`PrHead::Behind`]: crate::model::PrHead::Behind
fn pr_relation(
    repo: &gix::Repository,
    head: Option<ObjectId>,
    pr: Option<ObjectId>,
) -> Result<(u32, crate::model::PrHead), GatherError> {
    use crate::model::PrHead;
    let (Some(h), Some(p)) = (head, pr) else {
        return Ok((0, PrHead::Unknown));
    };
    if h == p {
        return Ok((0, PrHead::Tip));
    }
    // (An id of another object format than the repository's, a forge's 40-hex `sha` in a
    // SHA-256 repository, is held by no repository here: never looked up.)
    if p.kind() != repo.object_hash() || repo.find_object(p).is_err() {
        return Ok((0, PrHead::Unknown));
    }
    let beyond = repo::count_between(repo, h, &[p])?;
    if beyond == 0 {
        return Ok((0, PrHead::Contains));
    }
    Ok(match repo::count_between(repo, p, &[h])? {
        0 => (beyond, PrHead::Behind(beyond)),
        _ => (beyond, PrHead::Unrelated),
    })
}

/// The head a worker is classified from: its worktree's HEAD (not a detached one: ahead
/// is never counted from a detached HEAD, SPEC special cases), else its local branch's
/// tip, else its remote-tracking branch's, else a detached worktree's HEAD.
fn head_of(
    wt: Option<&Worktree>,
    local_tip: Option<ObjectId>,
    remote_tip: Option<ObjectId>,
) -> Option<ObjectId> {
    wt.filter(|w| !w.missing && !w.detached)
        .and_then(|w| w.head)
        .or(local_tip)
        .or(remote_tip)
        .or_else(|| wt.filter(|w| !w.missing).and_then(|w| w.head))
}

/// The agent's newest output time (its session's transcript or the spawn's output file,
/// whichever is newer) and, for an open attempt whose newest output reads as a limit, when
/// that limit resets (SPEC 1.2: it is parked).
fn agent_output(
    events: &[crate::model::Event],
    replayed: &crate::model::replay::Replay,
) -> (Option<Timestamp>, Option<Timestamp>) {
    let transcript = replayed
        .session_id
        .as_deref()
        .and_then(crate::agent::transcript);
    let output = spawn_output(events).map(std::path::PathBuf::from);
    let transcript_mtime = transcript
        .and_then(worktree::mtime)
        .max(output.as_deref().and_then(worktree::mtime));
    let parked_until = (!replayed.last_attempt_exited && replayed.last_attempt.is_some())
        .then(|| {
            output
                .as_deref()
                .and_then(crate::agent::parked::parked_until)
                .or_else(|| transcript.and_then(crate::agent::parked::parked_until))
        })
        .flatten();
    (transcript_mtime, parked_until)
}

/// Probe the pid of the last attempt when it is a `spawn` recorded with one (SPEC
/// `spawn`: alive only with the recorded start token) by a host `here` says this machine
/// can probe; `None` when not probeable here.
fn probe_pid(
    events: &[crate::model::Event],
    replayed: &crate::model::replay::Replay,
    here: impl Fn(&str, bool) -> bool,
) -> Option<bool> {
    replayed.last_attempt.and_then(|i| match &events[i].body {
        Body::Spawn {
            host,
            label,
            pid: Some(pid),
            pid_start,
            ..
        } if here(host, label.is_some()) => {
            process::is_alive(host, *pid, pid_start.as_deref(), host)
        }
        _ => None,
    })
}

/// The `--output` file of the newest `spawn` that names one.
fn spawn_output(events: &[crate::model::Event]) -> Option<&str> {
    events.iter().rev().find_map(|e| match &e.body {
        Body::Spawn { output, .. } => Some(output.as_deref()),
        _ => None,
    })?
}

/// Tips of every ref (branches, remote-tracking branches, tags), to find commits no ref contains.
fn all_tips(repo: &gix::Repository) -> Vec<ObjectId> {
    let mut out = BTreeSet::new();
    for r in crate::refs::list(repo, "refs/").unwrap_or_default() {
        if r.name.starts_with("refs/notes/") || r.name.starts_with("refs/recode/") {
            continue;
        }
        if let Some(id) = crate::refs::peeled(repo, &r) {
            out.insert(id);
        }
    }
    out.into_iter().collect()
}
