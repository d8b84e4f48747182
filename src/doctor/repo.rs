//! The `locks`, `clone` and `maintenance` checks: what in the repository itself can
//! stop or surprise a loop.

use std::path::PathBuf;

use super::{Check, Level, check, ok};
use crate::config;

/// Lock files older than their limit, with their age in seconds: git-recode's own ref
/// locks (`<notesRef>.lock`, any lock under `refs/recode/`) after 30 s, any other lock of
/// the repository (`index.lock`, `HEAD.lock`, `packed-refs.lock`, a ref's `.lock`) or of
/// a worktree after `stale_after_secs` (`recode.staleLockAfter`). A simple age check by
/// mtime: the one place `doctor` decides what is stale (SPEC 1.2 "Stale locks").
pub(crate) fn stale_locks(
    repo: &gix::Repository,
    notes_ref: &str,
    stale_after_secs: i64,
    now: jiff::Timestamp,
) -> Vec<(PathBuf, i64)> {
    let common = repo.common_dir().to_path_buf();
    let own: Vec<PathBuf> = [notes_ref, config::ANCHORS_REF]
        .iter()
        .map(|r| common.join(format!("{r}.lock")))
        .collect();
    let mut candidates: Vec<PathBuf> = Vec::new();
    let mut dirs = vec![common.clone()];
    if let Ok(list) = crate::worktree::list(repo) {
        dirs.extend(list.into_iter().map(|w| w.git_dir));
    }
    dirs.sort();
    dirs.dedup();
    for d in &dirs {
        for name in ["index.lock", "HEAD.lock", "packed-refs.lock", "config.lock"] {
            candidates.push(d.join(name));
        }
        candidates.push(d.join("reftable").join("tables.list.lock"));
    }
    let mut stack = vec![common.join("refs")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "lock") {
                candidates.push(p);
            }
        }
    }
    candidates.sort();
    candidates.dedup();
    candidates
        .into_iter()
        .filter_map(|p| {
            let mtime = crate::worktree::mtime(&p)?;
            let age = (now - mtime).get_seconds();
            let limit = if own.contains(&p) || p.starts_with(common.join("refs/recode")) {
                30
            } else {
                stale_after_secs
            };
            (age > limit).then_some((p, age))
        })
        .collect()
}

/// Stale lock files ([`stale_locks`]).
pub(super) fn locks(
    repo: &gix::Repository,
    notes_ref: &str,
    stale_after: i64,
    now: jiff::Timestamp,
) -> Check {
    let stale = stale_locks(repo, notes_ref, stale_after, now);
    if stale.is_empty() {
        return ok("locks", "no stale lock files".into());
    }
    let list: Vec<String> = stale
        .iter()
        .map(|(p, age)| format!("{} ({} old)", p.display(), crate::clock::human_secs(*age)))
        .collect();
    let first = &stale[0].0;
    check(
        "locks",
        Level::Fail,
        format!("stale lock files: {}", list.join(", ")),
        Some(format!(
            "if no git process is running there, move each aside: mv '{}' '{}.stale'",
            first.display(),
            first.display()
        )),
    )
}

/// A shallow clone (ahead/behind may be unknown) or a partial one (objects fetched on
/// demand, so reads may need the network).
pub(super) fn clone_kind(repo: &gix::Repository, remote: &str) -> Check {
    let partial = config::string(repo, "extensions.partialClone").is_some()
        || config::string(repo, &format!("remote.{remote}.promisor"))
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    if repo.is_shallow().unwrap_or(false) {
        check(
            "clone",
            Level::Warn,
            "the repository is shallow: workers whose merge base is cut off have unknown ahead/behind and are never deleted".into(),
            Some("git fetch --unshallow".into()),
        )
    } else if partial {
        check(
            "clone",
            Level::Warn,
            "the repository is a partial clone: reading a worker may fetch objects over the network".into(),
            Some(format!("git fetch --refetch {remote} (after git config --unset remote.{remote}.partialclonefilter)")),
        )
    } else {
        ok("clone", "a full clone".into())
    }
}

/// What could prune a worker's worktree record: `git gc` (run by automatic maintenance)
/// prunes the records of worktrees whose directory is missing after
/// `gc.worktreePruneExpire` (default 3 months); a worker on an unmounted volume loses its
/// registration.
pub(super) fn maintenance(repo: &gix::Repository) -> Check {
    let expire = config::string(repo, "gc.worktreePruneExpire");
    let background = config::string(repo, "maintenance.strategy").is_some()
        || config::string(repo, "maintenance.auto").is_some_and(|v| v.trim() != "false");
    match expire.as_deref().map(str::trim) {
        Some("never") => ok("maintenance", "gc.worktreePruneExpire is never: git gc keeps every worktree record".into()),
        Some(v) => check(
            "maintenance",
            Level::Warn,
            format!("gc.worktreePruneExpire is {v}: git gc prunes the record of a worktree whose directory is missing for that long"),
            Some("git config gc.worktreePruneExpire never".into()),
        ),
        None if background => check(
            "maintenance",
            Level::Warn,
            "background maintenance is enabled: its gc prunes records of worktrees missing for 3 months".into(),
            Some("git config gc.worktreePruneExpire never".into()),
        ),
        None => ok(
            "maintenance",
            "git gc prunes only records of worktrees missing for 3 months (git's default); git-recode's own runs never gc".into(),
        ),
    }
}
