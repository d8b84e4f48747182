//! The pickup at the start of a command that writes the ledger (SPEC `milestone`: no
//! milestone is lost, none is ledgered twice): first the milestone journal the
//! hook appends to ([`crate::hook::journal`]) is folded into the ledger ([`fold`]), then
//! the milestones still only in commits' trailers ([`crate::hook::pickup`]) are ledgered.

use super::GatherError;
use crate::config::Config;
use crate::hook::{journal, pickup};
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::ledger::{self, LedgerError};
use crate::model::Event;

/// Why a pickup failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PickupError {
    /// The ledger or the branches could not be read, or an append failed.
    #[error(transparent)]
    Gather(#[from] GatherError),
    /// A journal file could not be renamed, read or deleted.
    #[error("cannot {what} the milestone journal {}: {source}", path.display())]
    Journal {
        /// What was being done (`rename aside`, `read`, `delete`).
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl From<LedgerError> for PickupError {
    fn from(e: LedgerError) -> PickupError {
        PickupError::Gather(e.into())
    }
}

/// Ledger the milestones not in the ledger yet: the journal's (`fold`), then those
/// `branches` carry in trailers that their ledgers lack (with `branches` empty, every
/// worker branch). Returns how many were appended. Each task's milestones are one append,
/// and whether each is still unledgered ([`crate::model::replay::milestone_ledgered`]) is decided again
/// inside its compare-and-swap: a pickup racing another never ledgers a milestone twice.
/// When the fold fails, no trailer is ledgered (the journal's line, with its exact time
/// and session id, is preferred at the next pickup).
///
/// Errors: `PickupError` when the journal, the ledger or the branches cannot be read,
/// or an append fails.
pub(crate) fn persist(
    repo: &gix::Repository,
    cfg: &Config,
    branches: &[String],
) -> Result<usize, PickupError> {
    let mut n = fold(repo, cfg)?;
    let refs = super::notes_refs(repo, cfg);
    let found = if branches.is_empty() {
        if pickup::any_branch_but_base(repo, cfg).map_err(GatherError::from)? {
            pickup::pending_all(repo, cfg, &ledger::read_all(repo, &refs)?)
                .map_err(GatherError::from)?
        } else {
            Vec::new()
        }
    } else {
        let journal = journal::read(repo);
        let mut found = Vec::new();
        for b in branches {
            let task = cfg.key_of(b);
            let (l, _) = ledger::read_task(repo, &refs, &task)?;
            let events: Vec<Event> = l.events().cloned().collect();
            found.extend(
                pickup::pending_with(repo, cfg, &journal, b, &task, &events)
                    .map_err(GatherError::from)?,
            );
        }
        found
    };
    n += append_milestones(repo, cfg, found)?;
    Ok(n)
}

/// Fold the milestone journal into the ledger; returns how many milestones were appended.
///
/// 1. The live journal is renamed aside to a unique name (atomic: a hook appending after
///    the rename starts a new live journal) and held open.
/// 2. It is read, with every other `milestones*.journal*` file (the leftovers of a fold
///    killed midway), and its entries are appended per task, each `(head, phase)` once,
///    decided inside the compare-and-swap ([`crate::model::replay::milestone_ledgered`]).
/// 3. The renamed file is read once more (a hook that opened the live journal before the
///    rename may have written after the first read) and those entries appended too.
/// 4. The folded files are deleted.
///
/// A kill at any point loses nothing: before step 4 every file is still on disk, read by
/// every reader and by the next fold, and the dedupe makes a repeated fold append
/// nothing. A hook line that lands in the renamed file after step 3 is lost from the
/// journal, but not as a milestone: it is still in the commit's `Recode-Phase:` trailer,
/// which readers show and the trailer pickup ledgers (committer time, no session id).
///
/// Errors: [`PickupError::Journal`] when a file cannot be renamed, read or deleted;
/// [`PickupError::Gather`] when an append fails (the files are then kept).
pub(super) fn fold(repo: &gix::Repository, cfg: &Config) -> Result<usize, PickupError> {
    let dir = journal::dir(repo);
    let io = |what, path: &std::path::Path| {
        let path = path.to_path_buf();
        move |source| PickupError::Journal { what, path, source }
    };
    let mut taken =
        journal::Taken::take(&dir).map_err(io("rename aside", &dir.join(journal::LIVE)))?;
    journal::failpoint("journal-renamed");
    let leftovers: Vec<PathBuf> = journal::files(&dir)
        .into_iter()
        .filter(|p| {
            p.file_name() != Some(std::ffi::OsStr::new(journal::LIVE))
                && Some(p) != taken.as_ref().map(|t| &t.path)
        })
        .collect();
    let mut entries = Vec::new();
    for p in &leftovers {
        match std::fs::read(p) {
            Ok(bytes) => entries.extend(journal::parse(&String::from_utf8_lossy(&bytes))),
            // Another fold folded and deleted it meanwhile.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io("read", p)(e)),
        }
    }
    if let Some(t) = &mut taken {
        entries.extend(t.more().map_err(io("read", &t.path))?);
    }
    let mut n = append_milestones(repo, cfg, entries)?;
    if let Some(t) = &mut taken {
        let late = t.more().map_err(io("read", &t.path))?;
        n += append_milestones(repo, cfg, late)?;
    }
    journal::failpoint("journal-folded");
    for p in leftovers.iter().chain(taken.as_ref().map(|t| &t.path)) {
        match std::fs::remove_file(p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io("delete", p)(e)),
            _ => {}
        }
    }
    Ok(n)
}

/// Append the milestone events `found` to their tasks' ledgers in `recode.notesRef`: one
/// append per task, keeping (inside the compare-and-swap) each `(head, phase)` that
/// neither the ledger nor an earlier event of `found` holds. Returns how many were
/// appended.
///
/// Errors: [`LedgerError`] when an append fails.
fn append_milestones(
    repo: &gix::Repository,
    cfg: &Config,
    found: Vec<Event>,
) -> Result<usize, LedgerError> {
    let mut by_task: BTreeMap<String, Vec<Event>> = BTreeMap::new();
    for e in found {
        by_task.entry(e.task.clone()).or_default().push(e);
    }
    let mut n = 0;
    for (task, found) in by_task {
        let now = found[0].ts;
        let stored = ledger::append_with(repo, cfg, &task, now, |events| {
            let mut seen = std::collections::BTreeSet::new();
            found
                .iter()
                .filter(|e| {
                    journal::key(e).is_some_and(|(h, p)| {
                        !crate::model::replay::milestone_ledgered(events, h, p)
                            && seen.insert((h, p))
                    })
                })
                .cloned()
                .collect()
        })?;
        n += stored.len();
    }
    Ok(n)
}
