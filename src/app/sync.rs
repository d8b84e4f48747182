//! `sync [<remote>]`: the ledger through the remote.

use super::Session;
use crate::error::Error;

/// `sync --setup`: the refspecs added so plain `git fetch`/`git push` carry the ledger
/// (empty: already set up). Refuses an invalid `recode.secrets` first.
///
/// Errors: [`Error::NoRemote`]; configuration errors.
pub fn setup(s: &Session, remote: Option<String>) -> Result<Vec<String>, Error> {
    let remote = checked_remote(s, remote)?;
    Ok(crate::sync::setup(&s.cfg, &remote)?)
}

/// `sync`: fold the milestone journal (and milestones only in commit trailers) into the
/// ledger (SPEC 1.3 "The milestone journal"), then fetch, union-merge and push. Returns
/// one line per ref for the user (it may name another host's ref: untrusted text).
///
/// Errors: [`Error::NoRemote`]; as [`crate::sync::sync`].
pub fn sync(s: &Session, remote: Option<String>) -> Result<Vec<String>, Error> {
    let remote = checked_remote(s, remote)?;
    s.pick_up(&[]);
    let report = crate::sync::sync(&s.repo, &s.cfg, &remote, s.now)?;
    s.warn(report.warnings);
    Ok(report.lines)
}

/// The remote to use (`recode.remote` when none is named), after the secrets check
/// (SPEC 1.2: an invalid recode.secrets stops every command that pushes).
fn checked_remote(s: &Session, remote: Option<String>) -> Result<String, Error> {
    s.cfg.check_secrets()?;
    let remote = remote.unwrap_or_else(|| s.cfg.remote.clone());
    if crate::forge::remote_url(&s.repo, &remote).is_none() {
        return Err(Error::NoRemote { remote });
    }
    Ok(remote)
}
