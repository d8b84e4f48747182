//! `sync --setup`: refspecs so plain `git fetch` and `git push` carry the ledger.

use super::{SyncError, tracking_anchors, tracking_notes};
use crate::config::{ANCHORS_REF, Config};
use crate::git;

/// `sync --setup`: make plain `git fetch` bring the remote's ledger into its tracking
/// refs (never over the local ones) and plain `git push` carry the local ledger.
///
/// Errors: [`SyncError::Git`] when `git config` fails.
pub(crate) fn setup(cfg: &Config, remote: &str) -> Result<Vec<String>, SyncError> {
    let dir = std::path::PathBuf::from(".");
    let existing = |key: &str| -> Vec<String> {
        git::read(&dir, cfg.command_timeout, &["config", "--get-all", key])
            .map(|o| {
                String::from_utf8_lossy(&o)
                    .lines()
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let fetch_key = format!("remote.{remote}.fetch");
    let push_key = format!("remote.{remote}.push");
    let mut added = Vec::new();
    let fetches = existing(&fetch_key);
    // Glob refspecs (a `*` that may match nothing) so that plain fetch and push do not
    // fail while a side has no ledger yet.
    for spec in [
        format!("+{}*:{}*", cfg.notes_ref, tracking_notes(remote)),
        format!("+{ANCHORS_REF}*:{}*", tracking_anchors(remote)),
    ] {
        if !fetches.contains(&spec) {
            git::run(
                &dir,
                cfg.command_timeout,
                &["config", "--add", &fetch_key, &spec],
            )?;
            added.push(format!("{fetch_key} {spec}"));
        }
    }
    let pushes = existing(&push_key);
    let mut wanted = Vec::new();
    if pushes.is_empty() {
        // A push refspec replaces git's default of pushing the current branch: keep it.
        wanted.push("HEAD".to_string());
    }
    wanted.push(format!("{0}*:{0}*", cfg.notes_ref));
    wanted.push(format!("{ANCHORS_REF}*:{ANCHORS_REF}*"));
    for spec in wanted {
        if !pushes.contains(&spec) {
            git::run(
                &dir,
                cfg.command_timeout,
                &["config", "--add", &push_key, &spec],
            )?;
            added.push(format!("{push_key} {spec}"));
        }
    }
    Ok(added)
}
