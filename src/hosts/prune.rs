//! `sync` removes the claims whose started attempt has ended (SPEC 1.3 "Several machines,
//! by the observer's clock": the remote holds at most one claim per live worker), judged
//! on the ledger as just merged with the remote's. Each removal is a push with a lease on
//! the claim's value (a claim replaced meanwhile stays). Best effort: a failed removal is
//! retried by the next `sync` of any host.

use std::collections::BTreeMap;

use gix::ObjectId;

use super::claim;
use crate::config::Config;

/// Remove from `remote` (and here) the claims listed in `remote_values` whose attempt has
/// ended in this host's ledger; forget local copies of claims the remote no longer has.
/// Returns the user's line (none when nothing was removed); a claim that cannot be read is
/// named in `warnings` and left alone.
pub(crate) fn prune_claims(
    repo: &gix::Repository,
    cfg: &Config,
    remote: &str,
    remote_values: &BTreeMap<String, ObjectId>,
    warnings: &mut Vec<String>,
) -> Option<String> {
    forget_local(repo, remote_values);
    let refs = crate::ledger::notes_refs(repo, &cfg.notes_ref);
    let mut gone = Vec::new();
    for (name, id) in remote_values
        .iter()
        .filter(|(n, _)| claim::is_claim_name(n))
    {
        if crate::repo::tip(repo, name) != Some(*id) {
            continue; // not fetched (a failed fetch): the next sync judges it
        }
        let doc = match claim::read(repo, *id) {
            Ok(d) => d,
            Err(e) => {
                warnings.push(super::untrusted_warning(name, &e));
                continue;
            }
        };
        let task = cfg.key_of(&doc.branch);
        let Ok((ledger, _)) = crate::ledger::read_task(repo, &refs, &task) else {
            continue;
        };
        let events: Vec<_> = ledger.events().cloned().collect();
        if claim::ended(&doc, &events) {
            gone.push((name.clone(), *id));
        }
    }
    if gone.is_empty() {
        return None;
    }
    let mut args = vec!["push".to_string(), "--quiet".into(), "--porcelain".into()];
    args.extend(
        gone.iter()
            .map(|(n, id)| format!("--force-with-lease={n}:{id}")),
    );
    args.push(remote.to_string());
    args.extend(gone.iter().map(|(n, _)| format!(":{n}")));
    let out = crate::git::Git::new(".", cfg.command_timeout)
        .args(&args)
        .network(cfg.network_timeout, &cfg.ssh)
        .capture();
    if !out.as_ref().is_ok_and(|o| o.ok) {
        tracing::debug!("removing ended claims failed; the next sync retries");
        return None;
    }
    for (n, id) in &gone {
        delete_local(repo, n, *id);
    }
    Some(format!(
        "{}*: removed {} ended claim{}",
        claim::CLAIMS_PREFIX,
        gone.len(),
        if gone.len() == 1 { "" } else { "s" }
    ))
}

/// Delete the local copy `name` when it still points at `id`.
fn delete_local(repo: &gix::Repository, name: &str, id: ObjectId) {
    let edit = crate::refs::Edit {
        name,
        expect: crate::refs::Expect::Is(id),
        new: None,
        message: "recode: claim ended",
    };
    let _ = crate::refs::swap(repo, &edit);
}

/// Forget local claim copies the remote no longer lists (the remote is the claims' home;
/// a local copy is only what the last look fetched).
fn forget_local(repo: &gix::Repository, remote_values: &BTreeMap<String, ObjectId>) {
    let Ok(listed) = crate::refs::list(repo, claim::CLAIMS_PREFIX) else {
        return;
    };
    let stale: Vec<(String, ObjectId)> = listed
        .into_iter()
        .filter_map(|r| match r.target {
            crate::refs::Target::Id(id) if !remote_values.contains_key(&r.name) => {
                Some((r.name, id))
            }
            _ => None,
        })
        .collect();
    for (n, id) in stale {
        delete_local(repo, &n, id);
    }
}
