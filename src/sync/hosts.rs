//! The heartbeat and claim refs `sync` carries (SPEC 1.2 "Several machines"): each
//! host's own, never merged; refs on the remote that are not ours are named and ignored.

use std::collections::{BTreeMap, BTreeSet};

use gix::ObjectId;

use super::{PushSpec, tip};

/// What `sync` does with the heartbeat refs (SPEC 1.2 "Several machines").
pub(super) struct HostRefs {
    /// Refspecs fetching the other hosts' heartbeats that differ from the local copies.
    pub(super) fetch: Vec<String>,
    /// The push of this host's own heartbeat, when the remote's differs, after the
    /// removals of refs in its way (names below it: this host's own namespace).
    pub(super) push: Vec<PushSpec>,
    /// The user's lines.
    pub(super) lines: Vec<String>,
    /// Heartbeat refs ignored (not a host's heartbeat, or in the way of this host's).
    pub(super) warnings: Vec<String>,
}

/// Refspecs fetching the remote's claims (one hex component under the prefix) that differ
/// from the local copies, so `sync` can judge them ([`crate::hosts::prune`]).
pub(super) fn claims_to_fetch(
    repo: &gix::Repository,
    remote_values: &BTreeMap<String, ObjectId>,
) -> Vec<String> {
    remote_values
        .iter()
        .filter(|(n, id)| crate::hosts::claim::is_claim_name(n) && tip(repo, n) != Some(**id))
        .map(|(n, _)| format!("+{n}:{n}"))
        .collect()
}

/// The removals, with a lease on each value, of the refs on the remote in the way of a
/// heartbeat, each named in `warnings`: `refs/recode/hosts` itself (in the way of every
/// host's heartbeat and, in the same push, of every ledger) and any ref below `own`.
/// Neither is anyone's heartbeat nor holds anyone's work.
fn in_the_way(
    remote_values: &BTreeMap<String, ObjectId>,
    own: &str,
    warnings: &mut Vec<String>,
) -> Vec<PushSpec> {
    let all = crate::hosts::HOSTS_PREFIX.trim_end_matches('/');
    let below = format!("{own}/");
    remote_values
        .iter()
        .filter(|(n, _)| n.as_str() == all || (n.starts_with(&below) && !n.ends_with("^{}")))
        .map(|(name, id)| {
            let whose = if name == all {
                "every host's"
            } else {
                "this host's"
            };
            warnings.push(format!(
                "removing {name} from the remote: a ref in the way of {whose} heartbeat"
            ));
            PushSpec {
                lease: format!("--force-with-lease={name}:{id}"),
                spec: format!(":{name}"),
                tracking: None,
                merged: *id,
            }
        })
        .collect()
}

/// The heartbeat refs (`refs/recode/hosts/*`, listed in `remote_values`): every other
/// host's is fetched straight into the same name when it differs (each host writes only
/// its own, so nothing merges); this host's own (`own`) is never taken from the remote,
/// and is pushed, with a lease on the remote's value, when it differs. A ref below `own`
/// (`<own>/x`, a directory/file conflict a broken or hostile host pushed) would keep it
/// from the remote, and the other hosts would take this host's live workers over: it is
/// in this host's own namespace, holds no one's work, and is removed in the same push,
/// with a lease on its value (SPEC 1.3: never a wedge).
pub(super) fn host_refs(
    repo: &gix::Repository,
    remote_values: &BTreeMap<String, ObjectId>,
    own: &str,
) -> HostRefs {
    let mut fetch = Vec::new();
    let mut warnings = Vec::new();
    let prefix = crate::hosts::HOSTS_PREFIX;
    // SPEC 1.3: refs on the remote are untrusted. A tag (listed peeled, `^{}`), a nested
    // name, or a name that is no valid ref is named once and never fetched.
    let tags: BTreeSet<&str> = remote_values
        .keys()
        .filter_map(|n| n.strip_suffix("^{}"))
        .collect();
    let in_way = in_the_way(remote_values, own, &mut warnings);
    for (name, id) in remote_values
        .iter()
        .filter(|(n, _)| n.starts_with(prefix) && n.as_str() != own && !n.ends_with("^{}"))
    {
        let component = &name[prefix.len()..];
        let why = if tags.contains(name.as_str()) {
            Some("an annotated tag, not a heartbeat commit")
        } else if name.starts_with(&format!("{own}/")) {
            continue; // removed ([`in_the_way`])
        } else if component.contains('/') {
            Some("a nested name, not a host's heartbeat")
        } else if gix::refs::FullName::try_from(name.as_str()).is_err() {
            Some("not a valid ref name")
        } else {
            None
        };
        match why {
            Some(why) => warnings.push(crate::hosts::untrusted_warning(name, why)),
            None if tip(repo, name) != Some(*id) => fetch.push(format!("+{name}:{name}")),
            None => {}
        }
    }
    let mut lines = Vec::new();
    if !fetch.is_empty() {
        lines.push(format!(
            "{}*: fetched {} heartbeat{}",
            crate::hosts::HOSTS_PREFIX,
            fetch.len(),
            if fetch.len() == 1 { "" } else { "s" }
        ));
    }
    let theirs = remote_values.get(own).copied();
    let beat = tip(repo, own)
        .filter(|mine| Some(*mine) != theirs || !in_way.is_empty())
        .map(|mine| {
            lines.push(format!("{own}: pushed"));
            PushSpec {
                lease: format!(
                    "--force-with-lease={own}:{}",
                    theirs.map(|t| t.to_hex().to_string()).unwrap_or_default()
                ),
                spec: format!("{mine}:{own}"),
                tracking: None,
                merged: mine,
            }
        });
    let mut push = in_way;
    push.extend(beat);
    HostRefs {
        fetch,
        push,
        lines,
        warnings,
    }
}
