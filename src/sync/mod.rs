//! `sync`: the ledger travels through the remote. Fetch the remote's notes and anchors
//! into remote-tracking refs (never straight over the local ones), merge them with the
//! local ledger by sorted union of lines per note (what `git notes merge -s
//! cat_sort_uniq` gives), then push with compare-and-swap (`--force-with-lease` on the
//! value merged), retrying on a lost race.

mod hosts;
mod merge;
mod remote;
mod setup;

pub(crate) use setup::setup;

use std::collections::BTreeMap;

use gix::ObjectId;

use crate::config::{ANCHORS_REF, Config};
use crate::git;
use crate::retry::Try;

/// Lost races retried before giving up.
const TRIES: u32 = 20;

/// The pause before a retry: 20 ms more each time, at most 200 ms, plus up to 49 ms of
/// jitter so that racing syncs fall out of step.
const PAUSE: crate::retry::Pause = crate::retry::Pause {
    first: std::time::Duration::from_millis(20),
    growth: crate::retry::Growth::Linear,
    cap: std::time::Duration::from_millis(200),
    jitter: std::time::Duration::from_millis(50),
};

/// Where a remote's notes are fetched to: `refs/recode/remotes/<remote>/notes`.
pub(crate) fn tracking_notes(remote: &str) -> String {
    format!("refs/recode/remotes/{remote}/notes")
}

/// Where a remote's anchors are fetched to: `refs/recode/remotes/<remote>/anchors`.
pub(crate) fn tracking_anchors(remote: &str) -> String {
    format!("refs/recode/remotes/{remote}/anchors")
}

/// What a sync did, per ref.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Report {
    /// Lines like `refs/notes/recode: merged 3 notes, pushed` for the user.
    pub lines: Vec<String>,
    /// Refs on the remote that are not what git-recode writes, each named once and
    /// ignored (SPEC 1.3: refs on the remote are untrusted), with how to remove them.
    pub warnings: Vec<String>,
}

fn tip(repo: &gix::Repository, name: &str) -> Option<ObjectId> {
    crate::repo::tip(repo, name)
}

fn other(e: impl std::fmt::Display) -> SyncError {
    SyncError::Objects(e.to_string())
}

/// Errors of `sync`.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// fetch, push or ls-remote failed for another reason than a lost race.
    #[error(transparent)]
    Git(#[from] git::GitError),
    /// Reading or writing the notes objects failed.
    #[error("cannot merge the ledgers: {0}")]
    Objects(String),
    /// Reading the repository failed.
    #[error(transparent)]
    Repo(#[from] crate::repo::RepoError),
    /// Reading the ledger failed.
    #[error(transparent)]
    Ledger(#[from] crate::ledger::LedgerError),
    /// Every try lost a race against other pushers.
    #[error("gave up after {tries} lost races pushing the ledger to {remote}")]
    LostRaces {
        /// Tries made.
        tries: u32,
        /// The remote.
        remote: String,
    },
}

/// The refs `sync` carries: `(local ref, remote-tracking ref, is a notes ref)`.
type Pair = (String, String, bool);

/// One ref's push: its lease, its refspec, and the tracking ref to move to `merged`
/// once pushed.
struct PushSpec {
    lease: String,
    spec: String,
    /// The tracking ref to move once pushed (none for this host's heartbeat, which has no
    /// tracking copy).
    tracking: Option<String>,
    merged: ObjectId,
}

/// Fetch, merge and push the ledger (`recode.notesRef`) and anchors with `remote`.
///
/// Errors: [`SyncError::Git`] when fetch or push fail for another reason than a lost race;
/// [`SyncError::LostRaces`] after `TRIES` lost races.
pub(crate) fn sync(
    repo: &gix::Repository,
    cfg: &Config,
    remote: &str,
    now: jiff::Timestamp,
) -> Result<Report, SyncError> {
    let round = Round {
        repo,
        cfg,
        remote,
        now,
        // Run git where the user is, as plain git would (relative remote URLs resolve
        // from there).
        dir: std::path::PathBuf::from("."),
        pairs: [
            (cfg.notes_ref.clone(), tracking_notes(remote), true),
            (ANCHORS_REF.to_string(), tracking_anchors(remote), false),
        ],
        own_beat: crate::hosts::heartbeat_ref(&crate::hosts::me(repo, cfg.command_timeout).id),
    };
    // A lock a killed run (or its killed `git fetch`) left on a ref of ours would fail
    // every sync: moved aside once stale, and named.
    crate::lock::settle_own_refs(repo.common_dir(), &cfg.locks.moves);
    let policy = crate::retry::Policy {
        pause: PAUSE,
        limit: crate::retry::Limit::Tries(TRIES),
    };
    crate::retry::retry(policy, |attempt| round.once(attempt))
}

/// What every try of a [`sync`] works with.
struct Round<'a> {
    repo: &'a gix::Repository,
    cfg: &'a Config,
    remote: &'a str,
    now: jiff::Timestamp,
    /// Where git runs.
    dir: std::path::PathBuf,
    /// The notes ref and the anchors, each with its tracking ref.
    pairs: [Pair; 2],
    /// This host's heartbeat ref.
    own_beat: String,
}

impl Round<'_> {
    fn lost(&self) -> SyncError {
        SyncError::LostRaces {
            tries: TRIES,
            remote: self.remote.to_string(),
        }
    }

    /// One try: list the remote's refs, fetch them into tracking refs, merge, push.
    fn once(&self, attempt: u32) -> Try<Report, SyncError> {
        let (repo, cfg, remote) = (self.repo, self.cfg, self.remote);
        let beats_glob = format!("{}*", crate::hosts::HOSTS_PREFIX);
        let claims_glob = format!("{}*", crate::hosts::claim::CLAIMS_PREFIX);
        let mut names: Vec<&str> = self.pairs.iter().map(|(l, _, _)| l.as_str()).collect();
        names.push(&beats_glob);
        // The prefix itself, a ref in the way of every heartbeat ([`hosts::host_refs`]).
        names.push(crate::hosts::HOSTS_PREFIX.trim_end_matches('/'));
        names.push(&claims_glob);
        let remote_values = match remote::ls_remote(&self.dir, remote, &names, cfg) {
            Ok(v) => v,
            Err(e) => return Try::Fail(e),
        };
        let beats = hosts::host_refs(repo, &remote_values, &self.own_beat);
        match self.fetch(&remote_values, &beats, attempt) {
            Ok(true) => {}
            Ok(false) => return Try::Lost(self.lost()),
            Err(e) => return Try::Fail(e),
        }
        let merge::Merged {
            mut lines,
            mut pushes,
        } = match merge::merge_all(repo, &self.pairs, &remote_values, self.now) {
            Ok(Some(m)) => m,
            // A local writer won: start over at once.
            Ok(None) => return Try::LostWait(std::time::Duration::ZERO, self.lost()),
            Err(e) => return Try::Fail(e),
        };
        lines.extend(beats.lines.iter().cloned());
        pushes.extend(beats.push);
        let done = |mut lines: Vec<String>| {
            let mut warnings = beats.warnings.clone();
            lines.extend(crate::hosts::prune::prune_claims(
                repo,
                cfg,
                remote,
                &remote_values,
                &mut warnings,
            ));
            Try::Done(Report { lines, warnings })
        };
        if pushes.is_empty() {
            return done(lines);
        }
        match remote::push(repo, &self.dir, cfg, remote, &pushes, attempt) {
            Ok(true) => done(lines),
            Ok(false) => {
                tracing::debug!(attempt, "sync push lost a race; retrying");
                Try::Lost(self.lost())
            }
            Err(e) => Try::Fail(e),
        }
    }

    /// Fetch the remote's ledger refs, the other hosts' heartbeats and the claims that
    /// differ into their tracking refs (`Ok(false)`: a lost race), then read the fetched
    /// heartbeats.
    fn fetch(
        &self,
        remote_values: &BTreeMap<String, ObjectId>,
        beats: &hosts::HostRefs,
        attempt: u32,
    ) -> Result<bool, SyncError> {
        let mut extra = beats.fetch.clone();
        extra.extend(hosts::claims_to_fetch(self.repo, remote_values));
        let fetched = remote::fetch_tracking(
            &self.dir,
            self.cfg,
            self.remote,
            &self.pairs,
            remote_values,
            &extra,
            attempt,
        )?;
        if fetched && !beats.fetch.is_empty() {
            // SPEC 1.3: a heartbeat's silence starts when this host first sees its value.
            let mut seen = crate::hosts::Seen::load(self.repo);
            let _ = crate::hosts::read_heartbeats(self.repo, &mut seen, self.now);
            seen.save();
        }
        Ok(fetched)
    }
}
