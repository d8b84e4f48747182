//! What one run asks the forge (SPEC "Forge"): the branches of the workers shown, whose
//! open pull requests get their feedback read, and the listing's cutoff, the oldest first
//! ledger event among them.

use jiff::Timestamp;

use super::Roster;
use crate::config::Config;
use crate::forge::{Ask, Forge, View, view_of};
use crate::repo;

/// What one run asks the forge (SPEC "Forge"): the worker branches that get feedback read
/// (only those with an open pull request are asked), and the listing's cutoff — the
/// oldest first ledger event among them (a worker without ledger events sets no cutoff of
/// its own: its provenance is unknown, and its pull request, if older, may be left out).
/// `only_branch`: that worker alone (`classify`, `resume`); `all`: also the tasks whose
/// branch exists nowhere (`status --all`), which are otherwise not shown and not asked.
///
/// The workers and ledgers come from the run's `roster` (no second read of the ledger).
pub(crate) fn forge_ask(
    repo: &gix::Repository,
    cfg: &Config,
    roster: &Roster,
    only_branch: Option<&str>,
    all: bool,
) -> (Option<Timestamp>, Vec<String>) {
    let mut since: Option<Timestamp> = None;
    let mut branches = Vec::new();
    for (branch, task) in &roster.workers {
        let exists = roster.local.contains_key(branch)
            || roster
                .worktrees
                .iter()
                .any(|w| w.branch.as_deref() == Some(branch.as_str()))
            || repo::tip(repo, &repo::remote_tracking(repo, cfg, branch)).is_some();
        if !exists && !all && only_branch.is_none() {
            continue;
        }
        if let Some(first) = roster
            .ledgers
            .by_task
            .get(task)
            .and_then(|l| l.entries.first())
        {
            since = Some(since.map_or(first.ts, |s| s.min(first.ts)));
        }
        branches.push(branch.clone());
    }
    (since, branches)
}

/// The forge's view for one run (SPEC "Forge"): one listing cut off at the oldest first
/// ledger event of the workers shown, and feedback for their open pull requests
/// ([`forge_ask`]); [`View::Unknown`] without a forge. Returns the warnings
/// for stderr.
///
pub(crate) fn forge_view(
    repo: &gix::Repository,
    cfg: &Config,
    forge: Option<&dyn Forge>,
    roster: &Roster,
    only_branch: Option<&str>,
    all: bool,
) -> (View, Vec<String>) {
    let Some(f) = forge else {
        return (View::Unknown, Vec::new());
    };
    let (since, branches) = forge_ask(repo, cfg, roster, only_branch, all);
    view_of(
        f,
        &Ask {
            offline: false,
            since,
            feedback_for: &branches,
        },
    )
}
