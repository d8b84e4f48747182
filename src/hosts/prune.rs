//! `sync` removes the claims whose started attempt has ended (SPEC 1.3 "Several machines,
//! by the observer's clock": the remote holds at most one claim per live worker), judged
//! on the ledger as just merged with the remote's, and this host's own claims whose
//! `resume` died before its ledger append (its process gone, its attempt in no ledger
//! here): a claimer that lives on would otherwise hold them by its moving heartbeat for
//! ever. Each removal is a push with a lease on the claim's value (a claim replaced
//! meanwhile stays). Best effort: a failed removal is retried by the next `sync`.

use std::collections::BTreeMap;

use gix::ObjectId;

use super::claim;
use crate::config::Config;

/// Why a claim goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Gone {
    /// The attempt it started has ended.
    Ended,
    /// This host's `resume` that made it died before ledgering its attempt.
    Abandoned,
}

/// Whether the claim `doc` goes, judged on this host's ledger: its attempt ended, or it
/// is this host's (`me`) and its `resume` died before its append. The process is probed
/// before the ledger is read: a `resume` that appended and then ended had appended by then.
fn judge(
    repo: &gix::Repository,
    cfg: &Config,
    refs: &[String],
    doc: &claim::ClaimDoc,
    me: &str,
) -> Option<Gone> {
    let died = claim::claimer_died(doc, me);
    let task = cfg.key_of(&doc.branch);
    let (ledger, _) = crate::ledger::read_task(repo, refs, &task).ok()?;
    let events: Vec<_> = ledger.events().cloned().collect();
    if claim::ended(doc, &events) {
        Some(Gone::Ended)
    } else if died && claim::started(doc, &events).is_none() {
        Some(Gone::Abandoned)
    } else {
        None
    }
}

/// Remove from `remote` (and here) the claims listed in `remote_values` whose attempt has
/// ended in this host's ledger, and this host's own whose `resume` died before its append;
/// forget local copies of claims the remote no longer has. Returns the user's line (none
/// when nothing was removed); a claim that cannot be read is named in `warnings` and left
/// alone.
pub(crate) fn prune_claims(
    repo: &gix::Repository,
    cfg: &Config,
    remote: &str,
    remote_values: &BTreeMap<String, ObjectId>,
    warnings: &mut Vec<String>,
) -> Option<String> {
    forget_local(repo, remote_values);
    let refs = crate::ledger::notes_refs(repo, &cfg.notes_ref);
    let me = super::me(repo, cfg.command_timeout).id;
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
        if let Some(why) = judge(repo, cfg, &refs, &doc, &me) {
            gone.push((name.clone(), *id, why));
        }
    }
    if gone.is_empty() {
        return None;
    }
    let mut args = vec!["push".to_string(), "--quiet".into(), "--porcelain".into()];
    args.extend(
        gone.iter()
            .map(|(n, id, _)| format!("--force-with-lease={n}:{id}")),
    );
    args.push(remote.to_string());
    args.extend(gone.iter().map(|(n, _, _)| format!(":{n}")));
    let out = crate::git::Git::new(".", cfg.command_timeout)
        .args(&args)
        .network(cfg.network_timeout, &cfg.ssh)
        .capture();
    if !out.as_ref().is_ok_and(|o| o.ok) {
        tracing::debug!("removing ended claims failed; the next sync retries");
        return None;
    }
    for (n, id, _) in &gone {
        delete_local(repo, n, *id);
    }
    Some(removed_line(&gone))
}

/// The user's line for the claims removed.
fn removed_line(gone: &[(String, ObjectId, Gone)]) -> String {
    let count = |g: Gone| gone.iter().filter(|(_, _, w)| *w == g).count();
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let (ended, abandoned) = (count(Gone::Ended), count(Gone::Abandoned));
    let mut parts = Vec::new();
    if ended > 0 {
        parts.push(format!("{ended} ended claim{}", plural(ended)));
    }
    if abandoned > 0 {
        parts.push(format!(
            "{abandoned} claim{} of this host's whose resume died before its ledger append",
            plural(abandoned)
        ));
    }
    format!("{}*: removed {}", claim::CLAIMS_PREFIX, parts.join(" and "))
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
