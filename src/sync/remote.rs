//! The network steps of `sync`: `ls-remote`, the fetch into tracking refs and the push
//! with leases, each a lost race (`Ok(false)`) or an error.

use std::collections::BTreeMap;

use gix::ObjectId;

use super::merge::set_tracking;
use super::{Pair, PushSpec, SyncError, TRIES};
use crate::config::Config;
use crate::git;

/// The remote's value of each of `refs` (`git ls-remote`).
pub(super) fn ls_remote(
    dir: &std::path::Path,
    remote: &str,
    refs: &[&str],
    cfg: &Config,
) -> Result<BTreeMap<String, ObjectId>, SyncError> {
    let out = git::Git::new(dir, cfg.command_timeout)
        .args(["ls-remote", remote])
        .args(refs)
        .network(cfg.network_timeout, &cfg.ssh)
        .output()?;
    Ok(String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| {
            let (id, name) = l.split_once('\t')?;
            Some((name.to_string(), ObjectId::from_hex(id.as_bytes()).ok()?))
        })
        .collect())
}

/// Fetch what the remote has of `pairs` into their tracking refs (never over the local
/// ones). `Ok(false)` when another sync in this clone held a tracking ref locked: a lost
/// race worth retrying.
pub(super) fn fetch_tracking(
    dir: &std::path::Path,
    cfg: &Config,
    remote: &str,
    pairs: &[Pair],
    remote_values: &BTreeMap<String, ObjectId>,
    extra: &[String],
    attempt: u32,
) -> Result<bool, SyncError> {
    let specs: Vec<String> = pairs
        .iter()
        .filter(|(l, _, _)| remote_values.contains_key(l))
        .map(|(l, t, _)| format!("+{l}:{t}"))
        .chain(extra.iter().cloned())
        .collect();
    if specs.is_empty() {
        return Ok(true);
    }
    let mut args = vec!["fetch", "--quiet", "--no-write-fetch-head", remote];
    args.extend(specs.iter().map(String::as_str));
    let git::Captured { ok, stdout, stderr } = git::Git::new(dir, cfg.command_timeout)
        .args(&args)
        .network(cfg.network_timeout, &cfg.ssh)
        .capture()?;
    if ok {
        return Ok(true);
    }
    // Another sync in this clone updating the same tracking ref: a lost race.
    if attempt < TRIES && stderr.contains("cannot lock ref") {
        return Ok(false);
    }
    Err(SyncError::Git(git::GitError::Failed {
        args: args.join(" "),
        stderr: format!("{stdout}{stderr}").trim().to_string(),
    }))
}

/// Push `pushes` in one `git push` with their leases; on success move their tracking refs.
/// `Ok(false)` on a lost race worth retrying (a lease that no longer holds, a ref locked).
pub(super) fn push(
    repo: &gix::Repository,
    dir: &std::path::Path,
    cfg: &Config,
    remote: &str,
    pushes: &[PushSpec],
    attempt: u32,
) -> Result<bool, SyncError> {
    let mut args: Vec<&str> = vec!["push", "--quiet", "--porcelain"];
    args.extend(pushes.iter().map(|p| p.lease.as_str()));
    args.push(remote);
    args.extend(pushes.iter().map(|p| p.spec.as_str()));
    let git::Captured { ok, stdout, stderr } = git::Git::new(dir, cfg.command_timeout)
        .args(&args)
        .network(cfg.network_timeout, &cfg.ssh)
        .capture()?;
    if ok {
        for p in pushes {
            if let Some(t) = &p.tracking {
                set_tracking(repo, t, p.merged);
            }
        }
        return Ok(true);
    }
    // `--porcelain` reports each ref's verdict on stdout: a lease that no longer holds
    // or a ref another pusher holds locked is a lost race; anything else is an error.
    let verdict = format!("{stdout}\n{stderr}");
    let lost_race = [
        "stale info",
        "fetch first",
        "non-fast-forward",
        "cannot lock ref",
        "failed to update ref",
    ]
    .iter()
    .any(|k| verdict.contains(k));
    if !lost_race || attempt == TRIES {
        return Err(SyncError::Git(git::GitError::Failed {
            args: args.join(" "),
            stderr: verdict.trim().to_string(),
        }));
    }
    Ok(false)
}
