//! `doctor`'s checks of the hosts sharing the repository (SPEC 1.3 "Several machines, by
//! the observer's clock"): another host whose clock was more than 5 minutes from this
//! host's when its heartbeat was first seen, and refs under `refs/recode/` that are not
//! what git-recode writes (each named, with how to remove it).

use super::{Check, Level};
use crate::hosts;

/// The skew past which `doctor` names another host's clock: 5 minutes.
pub(super) const MAX_SKEW_SECS: i64 = 5 * 60;

/// The `hosts` check: one `warn` per other host whose heartbeat's `ts` was more than
/// [`MAX_SKEW_SECS`] from this host's clock when first seen, else one `ok`.
pub(super) fn clocks(
    repo: &gix::Repository,
    now: jiff::Timestamp,
    timeout: std::time::Duration,
) -> Vec<Check> {
    let me = hosts::me(repo, timeout);
    let mut seen = hosts::Seen::load(repo);
    let (beats, _) = hosts::read_heartbeats(repo, &mut seen, now);
    seen.save();
    let mut out: Vec<Check> = beats
        .values()
        .filter(|b| b.host != me.id)
        .filter_map(|b| {
            let skew = b.seen?.skew;
            (skew.abs() > MAX_SKEW_SECS).then(|| Check {
                check: "hosts",
                level: Level::Warn,
                // A heartbeat from the future is a clock ahead; one from the past may be
                // a clock behind or a heartbeat that old (its host stopped since).
                message: if skew > 0 {
                    format!(
                        "host {}'s clock was {} ahead of this host's when its heartbeat was first seen",
                        hosts::id::shown(&b.host, b.label.as_deref()),
                        crate::clock::human_secs(skew)
                    )
                } else {
                    format!(
                        "host {}'s heartbeat was {} older than this host's clock when first seen: its clock is behind, or the heartbeat was that old (the host stopped since)",
                        hosts::id::shown(&b.host, b.label.as_deref()),
                        crate::clock::human_secs(-skew)
                    )
                },
                fix: Some(
                    "sync that host's clock (e.g. `timedatectl set-ntp true` there), or this one's if it is the wrong one; silence is measured on each host's own clock, so a skew never takes over a live worker"
                        .to_string(),
                ),
            })
        })
        .collect();
    out.extend(copied_id(repo, &me.id));
    if out.is_empty() {
        out.push(Check {
            check: "hosts",
            level: Level::Ok,
            message: format!(
                "this host is {}; {} other host{} heard of, no clock more than 5m off",
                me.shown(),
                beats.values().filter(|b| b.host != me.id).count(),
                if beats.values().filter(|b| b.host != me.id).count() == 1 {
                    ""
                } else {
                    "s"
                }
            ),
            fix: None,
        });
    }
    out
}

/// The `refs` check: every ref under `refs/recode/hosts/` or `refs/recode/claims/` here
/// that cannot be read as what git-recode writes (a tag, a nested name, a huge or garbled
/// blob): one `warn` each, with the commands that remove it.
pub(super) fn untrusted_refs(repo: &gix::Repository, now: jiff::Timestamp) -> Vec<Check> {
    let mut seen = hosts::Seen::load(repo);
    let (_, mut warnings) = hosts::read_heartbeats(repo, &mut seen, now);
    if let Ok(listed) = crate::refs::list(repo, "refs/recode/claims") {
        for r in listed {
            let name = r.name;
            let why = match r.target {
                _ if !hosts::claim::is_claim_name(&name) => Some("not a claim ref".to_string()),
                crate::refs::Target::Id(id) => hosts::claim::read(repo, id).err(),
                crate::refs::Target::Symbolic(_) => Some("a symbolic ref".to_string()),
            };
            if let Some(why) = why {
                warnings.push(hosts::untrusted_warning(&name, &why));
            }
        }
    }
    warnings
        .into_iter()
        .map(|w| Check {
            check: "refs",
            level: Level::Warn,
            fix: w
                .split_once("; remove it with ")
                .map(|(_, f)| f.to_string()),
            message: w
                .split_once("; remove it with ")
                .map_or(w.clone(), |(m, _)| m.to_string()),
        })
        .collect()
}

/// A generated `recode.hostId` that is not the one generated for this clone on this
/// machine: the clone was copied (`cp -a`, a backup restored, a VM image) and may share
/// its original's identity, which two hosts must never do; or it was moved, which is fine.
fn copied_id(repo: &gix::Repository, id: &str) -> Option<Check> {
    let here = hosts::id::generate(repo.common_dir());
    (hosts::id::is_generated(id) && id != here).then(|| Check {
        check: "hosts",
        level: Level::Warn,
        message: format!(
            "recode.hostId {id} was generated for another clone or machine (this one's would be {here}): a copy shares its original's identity, and two hosts must never share one"
        ),
        fix: Some(
            "if this clone is a copy and none of its workers runs: `git config --unset recode.hostId` (a new id is generated); if it was moved, nothing to do"
                .to_string(),
        ),
    })
}
