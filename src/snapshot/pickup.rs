//! The pickup at the start of a command that writes the ledger: milestones the hook could
//! not write, read back from their commits' trailers ([`crate::hook::pickup`]) and
//! ledgered (SPEC `milestone`: nothing the hook could not write is lost).

use super::GatherError;
use crate::config::Config;
use crate::hook::pickup;
use std::collections::BTreeMap;

use crate::ledger::{self, Body, Event};

/// Ledger the milestones `branches` carry in trailers that their ledgers lack (the
/// pickup at the start of a command that writes the ledger). Returns how many were
/// appended. With `branches` empty, every worker branch. Each task's milestones are one
/// append, and whether each is still unledgered ([`ledger::milestone_ledgered`]) is
/// decided again inside its compare-and-swap: a post-commit hook racing this pickup
/// never gets its milestone ledgered twice.
///
/// Errors: [`GatherError`] when the ledger or the branches cannot be read, or an append
/// fails.
pub fn persist(
    repo: &gix::Repository,
    cfg: &Config,
    branches: &[String],
) -> Result<usize, GatherError> {
    let refs = super::notes_refs(repo, cfg);
    let found = if branches.is_empty() {
        pickup::pending_all(repo, cfg, &ledger::read_all(repo, &refs)?)?
    } else {
        let mut found = Vec::new();
        for b in branches {
            let task = cfg.key_of(b);
            let (l, _) = ledger::read_task(repo, &refs, &task)?;
            let events: Vec<Event> = l.events().cloned().collect();
            found.extend(pickup::pending(repo, cfg, b, &task, &events)?);
        }
        found
    };
    let mut by_task: BTreeMap<String, Vec<Event>> = BTreeMap::new();
    for e in found {
        by_task.entry(e.task.clone()).or_default().push(e);
    }
    let mut n = 0;
    for (task, found) in by_task {
        let now = found[0].ts;
        let stored = ledger::append_with(repo, &cfg.notes_ref, &task, now, |events| {
            found
                .iter()
                .filter(|e| {
                    !milestone_of(e).is_some_and(|(h, p)| ledger::milestone_ledgered(events, h, p))
                })
                .cloned()
                .collect()
        })?;
        n += stored.len();
    }
    Ok(n)
}

/// The `(head, phase)` of a milestone event.
fn milestone_of(e: &Event) -> Option<(&str, &str)> {
    match (&e.body, &e.head) {
        (Body::Milestone { phase, .. }, Some(head)) => Some((head.as_str(), phase.as_str())),
        _ => None,
    }
}
