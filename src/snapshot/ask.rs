//! What one run asks the forge (SPEC "Forge"): the branches of the workers shown, whose
//! open pull requests get their feedback read, and the listing's cutoff, the oldest first
//! ledger event among them.

use std::collections::BTreeMap;

use jiff::Timestamp;

use super::GatherError;
use crate::config::Config;
use crate::forge::{Ask, Forge, View, view_of};
use crate::{ledger, repo, worktree};

/// What one run asks the forge (SPEC "Forge"): the worker branches that get feedback read
/// (only those with an open pull request are asked), and the listing's cutoff — the
/// oldest first ledger event among them (a worker without ledger events sets no cutoff of
/// its own: its provenance is unknown, and its pull request, if older, may be left out).
/// `only_branch`: that worker alone (`classify`, `resume`); `all`: also the tasks whose
/// branch exists nowhere (`status --all`), which are otherwise not shown and not asked.
///
/// Errors: [`GatherError`] when refs or the ledger cannot be read.
pub fn forge_ask(
    repo: &gix::Repository,
    cfg: &Config,
    only_branch: Option<&str>,
    all: bool,
) -> Result<(Option<Timestamp>, Vec<String>), GatherError> {
    let ledgers = ledger::read_all(repo, &super::notes_refs(repo, cfg))?;
    let base = repo::base_name(repo, cfg);
    let (local, mut workers) = super::worker_branches(repo, cfg, &ledgers, &base)?;
    if let Some(only) = only_branch {
        let task = workers.remove(only).unwrap_or_else(|| cfg.key_of(only));
        workers = BTreeMap::from([(only.to_string(), task)]);
    }
    let worktrees = worktree::list(repo)?;
    let mut since: Option<Timestamp> = None;
    let mut branches = Vec::new();
    for (branch, task) in &workers {
        let exists = local.contains_key(branch)
            || worktrees
                .iter()
                .any(|w| w.branch.as_deref() == Some(branch.as_str()))
            || repo::tip(repo, &repo::remote_tracking(repo, cfg, branch)).is_some();
        if !exists && !all && only_branch.is_none() {
            continue;
        }
        if let Some(first) = ledgers.by_task.get(task).and_then(|l| l.entries.first()) {
            since = Some(since.map_or(first.ts, |s| s.min(first.ts)));
        }
        branches.push(branch.clone());
    }
    Ok((since, branches))
}

/// The forge's view for one run (SPEC "Forge"): one listing cut off at the oldest first
/// ledger event of the workers shown, and feedback for their open pull requests
/// ([`forge_ask`]); [`View::Unknown`] without a forge. Returns the warnings
/// for stderr.
///
/// Errors: as [`forge_ask`].
pub fn forge_view(
    repo: &gix::Repository,
    cfg: &Config,
    forge: Option<&dyn Forge>,
    only_branch: Option<&str>,
    all: bool,
) -> Result<(View, Vec<String>), GatherError> {
    let Some(f) = forge else {
        return Ok((View::Unknown, Vec::new()));
    };
    let (since, branches) = forge_ask(repo, cfg, only_branch, all)?;
    Ok(view_of(
        f,
        &Ask {
            offline: false,
            since,
            feedback_for: &branches,
        },
    ))
}
