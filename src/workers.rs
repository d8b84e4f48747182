//! Which branches are workers (SPEC "worker branch"), worked out in this one place for
//! every reader (the gather's roster, the milestone pickup, `log`): a local branch that
//! matches `recode.branchPattern` (its task the pattern's), or the branch a ledger names
//! (the newest `branch` among its events; a ledger naming none: its task key), never the
//! base branch, where work merges.

use std::collections::BTreeMap;

use crate::config::Config;
use crate::ledger::{Ledger, Ledgers};

/// The newest branch `ledger` names: the `branch` of its newest event that has one.
pub(crate) fn ledger_branch(ledger: &Ledger) -> Option<String> {
    ledger.events().rev().find_map(|e| e.branch.clone())
}

/// The worker branches, branch → task: those of `local` (local branch names) matching
/// `cfg`'s pattern, then the branch each of `ledgers` names (a branch matching the
/// pattern keeps the pattern's task); without `base`. The named branches need not exist
/// locally (a deleted worker branch with a ledger is still a worker).
pub(crate) fn worker_branches<'a>(
    local: impl IntoIterator<Item = &'a str>,
    cfg: &Config,
    ledgers: &Ledgers,
    base: &str,
) -> BTreeMap<String, String> {
    let mut workers: BTreeMap<String, String> = local
        .into_iter()
        .filter_map(|b| cfg.task_of(b).map(|t| (b.to_string(), t)))
        .collect();
    for (task, l) in &ledgers.by_task {
        let b = ledger_branch(l).unwrap_or_else(|| task.clone());
        workers.entry(b).or_insert_with(|| task.clone());
    }
    workers.remove(base);
    workers
}
