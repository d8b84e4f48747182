//! The pickup at the start of a command that writes the ledger: milestones the hook could
//! not write, read back from their commits' trailers ([`crate::hook::pickup`]) and
//! ledgered (SPEC `milestone`: nothing the hook could not write is lost).

use super::GatherError;
use crate::config::Config;
use crate::hook::pickup;
use crate::ledger::{self, Event};

/// Ledger the milestones `branches` carry in trailers that their ledgers lack (the
/// pickup at the start of a command that writes the ledger). Returns how many were
/// appended. With `branches` empty, every worker branch.
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
    let n = found.len();
    for e in found {
        ledger::append(repo, &cfg.notes_ref, e)?;
    }
    Ok(n)
}
