//! Taking over a worker of a silent host (SPEC 1.2 "Several machines"): before the
//! takeover, the ledger is synced with the remote (the silent host may have come back,
//! or a third host may have taken it first) and the worker's branch fetched, so the new
//! worktree starts from what was pushed; after it, the ledger is pushed at once so the
//! other hosts see the `takeover` on their next tick.

use std::path::Path;

use crate::config::Config;
use crate::git;

use super::ResumeError;

/// Whether `remote` is configured in this repository.
fn has_remote(cfg: &Config, remote: &str) -> bool {
    git::read(
        Path::new("."),
        &["config", "--get", &format!("remote.{remote}.url")],
    )
    .is_ok_and(|o| !o.is_empty())
        && !cfg.remote.is_empty()
}

/// Before a takeover of `branch`: sync the ledger with `recode.remote` and fetch the
/// branch into its remote-tracking ref (a branch the remote lacks is no error: there is
/// nothing pushed to start from). Nothing to do without a remote.
///
/// Errors: [`ResumeError::TakeoverSync`] when the sync fails (the takeover is then
/// refused: this host cannot know whether the old host came back).
pub fn before(
    repo: &gix::Repository,
    cfg: &Config,
    now: jiff::Timestamp,
    branch: &str,
) -> Result<(), ResumeError> {
    let remote = cfg.remote.as_str();
    if !has_remote(cfg, remote) {
        return Ok(());
    }
    crate::sync::sync(repo, cfg, remote, now).map_err(|e| ResumeError::TakeoverSync {
        branch: branch.to_string(),
        remote: remote.to_string(),
        why: e.to_string(),
    })?;
    let spec = format!("+refs/heads/{branch}:refs/remotes/{remote}/{branch}");
    let fetched = git::Git::new(".")
        .args(["fetch", "--quiet", "--no-write-fetch-head", remote, &spec])
        .network(cfg.network_timeout_secs)
        .capture()?;
    if !fetched.ok {
        tracing::debug!(stderr = %fetched.stderr, "takeover: the remote has no {branch}");
    }
    Ok(())
}

/// After the takeover was ledgered: push the ledger (best effort: a warning when it
/// fails; the next `sync` carries it).
pub fn after(repo: &gix::Repository, cfg: &Config, now: jiff::Timestamp) -> Option<String> {
    let remote = cfg.remote.as_str();
    if !has_remote(cfg, remote) {
        return None;
    }
    crate::sync::sync(repo, cfg, remote, now).err().map(|e| {
        format!("the takeover is ledgered here but not pushed yet ({e}): run `git recode sync`")
    })
}
