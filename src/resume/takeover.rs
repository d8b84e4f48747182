//! Taking over a worker of a silent host (SPEC 1.2 "Several machines"): before the
//! takeover, the ledger is synced with the remote (the silent host may have come back,
//! or a third host may have taken it first) and the worker's branch fetched, so the new
//! worktree starts from what was pushed; after it, the ledger is pushed at once so the
//! other hosts see the `takeover` on their next tick. Between the two, the takeover is
//! claimed on the remote ([`claim`]): one ref per attempt taken over, created only where
//! it does not exist (git's push lease with an empty expected value, checked by the
//! remote under its ref lock), so of several hosts that all see the same host silent,
//! exactly one takes its worker over.

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
        .network(cfg.network_timeout_secs, &cfg.ssh)
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

/// Where the claims live on the remote: `refs/recode/claims/<hex>`, one ref per attempt
/// taken over (the hex is the id of the blob `<branch>\0<from_host>\0<attempt ts>`).
pub const CLAIMS_PREFIX: &str = "refs/recode/claims/";

/// Whether this host won the claim on the worker's takeover.
#[derive(Debug, PartialEq)]
pub enum Claim {
    /// No remote: the local ledger's compare-and-swap decides alone.
    NoRemote,
    /// The claim ref is this host's (created now, or by an earlier try of this host).
    Won,
    /// Another host's claim holds the ref: the takeover is not ours.
    Lost,
}

/// Claim the takeover of `branch` from `from_host`'s attempt started at `attempt_ts`
/// (RFC 3339, as ledgered) on `recode.remote`: push a blob naming this host (`here`) to
/// the claim ref with `--force-with-lease=<ref>:` (must not exist). The blob is the same
/// for the same claimer, so a retry after a kill finds its own claim `up to date`.
///
/// Errors: [`ResumeError::TakeoverSync`] when the push fails for another reason than a
/// claim already there (the takeover is then refused: this host cannot know).
pub fn claim(
    repo: &gix::Repository,
    cfg: &Config,
    branch: &str,
    from_host: &str,
    attempt_ts: &str,
    here: &str,
) -> Result<Claim, ResumeError> {
    let remote = cfg.remote.as_str();
    if !has_remote(cfg, remote) {
        return Ok(Claim::NoRemote);
    }
    let refused = |why: String| ResumeError::TakeoverSync {
        branch: branch.to_string(),
        remote: remote.to_string(),
        why,
    };
    let key = format!("{branch}\0{from_host}\0{attempt_ts}");
    let hash = |bytes: &[u8]| {
        gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, bytes)
            .map_err(|e| refused(e.to_string()))
    };
    let name = format!("{CLAIMS_PREFIX}{}", hash(key.as_bytes())?);
    let body = format!(
        "{{\"branch\":{},\"from_host\":{},\"attempt_ts\":{},\"host\":{}}}\n",
        serde_json::Value::from(branch),
        serde_json::Value::from(from_host),
        serde_json::Value::from(attempt_ts),
        serde_json::Value::from(here)
    );
    let blob = repo
        .write_blob(body.as_bytes())
        .map_err(|e| refused(e.to_string()))?
        .detach();
    let out = git::Git::new(".")
        .args([
            "push".to_string(),
            "--quiet".to_string(),
            "--porcelain".to_string(),
            format!("--force-with-lease={name}:"),
            remote.to_string(),
            format!("{blob}:{name}"),
        ])
        .network(cfg.network_timeout_secs, &cfg.ssh)
        .capture()?;
    if out.ok {
        return Ok(Claim::Won);
    }
    let verdict = format!("{}\n{}", out.stdout, out.stderr);
    if verdict.contains("[rejected]") || verdict.contains("stale info") {
        tracing::debug!(%name, "takeover claim held by another host");
        return Ok(Claim::Lost);
    }
    Err(refused(
        crate::process::last_line(out.stderr.as_bytes())
            .unwrap_or_else(|| "git push failed".into()),
    ))
}
