//! What a WIP commit leaves out, and why (the `wip` event's `left_out`; SPEC 1.1 nested
//! repositories, SPEC 1.2 "Never lose work: more states"):
//!
//! - an untracked nested repository (its commits are on no remote; a gitlink to them
//!   would be a dangling pointer);
//! - an untracked file larger than `recode.wipMaxFileSize` (a remote's file-size limit
//!   would refuse every later push of the branch); it stays on disk;
//! - a registered submodule whose own worktree has changes, or whose checked-out commit
//!   no remote-tracking ref of the submodule contains (the gitlink would point at a
//!   commit no remote can serve);
//! - an untracked file the remote refused for its size (`refused.rs`), and on later WIP
//!   steps every untracked file an earlier WIP step of the branch left out (`kept`): left
//!   out once, it stays left out until the agent commits, ignores or removes it (SPEC 1.2
//!   "The loop settles": never `wip-commit` again for the same content).
//!
//! Each stays in the worktree, so the worktree is not clean and is never removed while
//! it holds them.

use std::path::Path;
use std::time::Duration;

use crate::git::{self, GitError};

/// The paths a WIP commit leaves out, by kind (each repository-relative, `/`-separated).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct LeftOut {
    /// Untracked nested repositories.
    pub nested: Vec<String>,
    /// Untracked files over the size limit, with their size in bytes.
    pub oversize: Vec<(String, u64)>,
    /// Registered submodules holding work no remote has, with why.
    pub submodules: Vec<(String, &'static str)>,
    /// Untracked files the remote refused for their size in this step (`refused.rs`).
    pub refused: Vec<String>,
    /// Untracked files an earlier WIP step of the branch left out (the newest `wip`
    /// event's `left_out`), not found again by another rule.
    pub kept: Vec<String>,
}

impl LeftOut {
    /// Look for every kind in the worktree at `dir`; `max_size` is
    /// `recode.wipMaxFileSize` in bytes; `before` is what the branch's newest WIP step
    /// left out (`crate::model::replay::left_out_last`); each git run is killed past `timeout`
    /// (`recode.commandTimeout`).
    ///
    /// Errors: [`GitError`] when a listing fails (what cannot be read is not clean: the
    /// caller does not commit on that reading).
    pub(super) fn find(
        dir: &Path,
        max_size: u64,
        before: &[String],
        timeout: Duration,
    ) -> Result<LeftOut, GitError> {
        // No untracked cache: a stale one would hide a file (SPEC 1.3).
        let untracked = git::Git::read(dir, timeout)
            .args(git::UNCACHED)
            .args(["ls-files", "-z", "--others", "--exclude-standard"])
            .output()?;
        let mut out = LeftOut::default();
        for p in untracked
            .split(|b| *b == 0)
            .filter_map(|p| std::str::from_utf8(p).ok())
            .filter(|p| !p.is_empty())
        {
            if let Some(d) = p.strip_suffix('/') {
                if dir.join(d).join(".git").exists() {
                    out.nested.push(d.to_string());
                }
                continue;
            }
            if let Ok(m) = std::fs::symlink_metadata(dir.join(p))
                && m.is_file()
                && m.len() > max_size
            {
                out.oversize.push((p.to_string(), m.len()));
            } else if before.iter().any(|b| b == p) {
                out.kept.push(p.to_string());
            }
        }
        out.submodules = submodules_holding_work(dir, timeout)?;
        Ok(out)
    }

    /// Every path left out, for the `wip` event and the `add -A` exclusions.
    pub(super) fn paths(&self) -> Vec<String> {
        self.nested
            .iter()
            .cloned()
            .chain(self.oversize.iter().map(|(p, _)| p.clone()))
            .chain(self.submodules.iter().map(|(p, _)| p.clone()))
            .chain(self.refused.iter().cloned())
            .chain(self.kept.iter().cloned())
            .collect()
    }

    /// One clause per kind, e.g. `nested repositories left out (their commits are on no
    /// remote): vendor/x; files over recode.wipMaxFileSize left out (kept on disk):
    /// bin/manager (5.7M)`; `None` when nothing is left out.
    pub(super) fn describe(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.nested.is_empty() {
            parts.push(format!(
                "nested repositories left out (their commits are on no remote): {}",
                self.nested.join(", ")
            ));
        }
        if !self.oversize.is_empty() {
            let files: Vec<String> = self
                .oversize
                .iter()
                .map(|(p, n)| format!("{p} ({})", human_size(*n)))
                .collect();
            parts.push(format!(
                "files over recode.wipMaxFileSize left out (kept on disk): {}",
                files.join(", ")
            ));
        }
        if !self.submodules.is_empty() {
            let subs: Vec<String> = self
                .submodules
                .iter()
                .map(|(p, why)| format!("{p} ({why})"))
                .collect();
            parts.push(format!(
                "submodules left out (their work is on no remote): {}",
                subs.join(", ")
            ));
        }
        if !self.refused.is_empty() {
            parts.push(format!(
                "files the remote refused for their size left out (kept on disk): {}",
                self.refused.join(", ")
            ));
        }
        if !self.kept.is_empty() {
            parts.push(format!(
                "files an earlier WIP commit left out, still left out (kept on disk): {}",
                self.kept.join(", ")
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// `5.7M`, `12k`, `900B`: a size for a message.
fn human_size(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1}G", n as f64 / f64::from(1u32 << 30)),
        n if n >= 1 << 20 => format!("{:.1}M", n as f64 / f64::from(1u32 << 20)),
        n if n >= 1 << 10 => format!("{}k", n >> 10),
        n => format!("{n}B"),
    }
}

/// The registered submodules (gitlinks in the index) of the worktree at `dir` that are
/// checked out and hold work no remote has: changes in their own worktree, or a HEAD no
/// remote-tracking ref of theirs contains.
///
/// Errors: [`GitError`] when the index cannot be listed.
pub(crate) fn submodules_holding_work(
    dir: &Path,
    timeout: Duration,
) -> Result<Vec<(String, &'static str)>, GitError> {
    let mut out = Vec::new();
    for path in gitlinks(dir, timeout)? {
        let sub = dir.join(&path);
        if !sub.join(".git").exists() {
            continue; // not checked out: nothing of its own here
        }
        let dirty = git::read(
            &sub,
            timeout,
            &[
                "status",
                "--porcelain",
                "--untracked-files=all",
                "--ignore-submodules=none",
            ],
        )
        .map(|o| !o.is_empty())
        .unwrap_or(true);
        if dirty {
            out.push((path, "uncommitted changes"));
        } else if local_only(&sub, timeout) {
            out.push((path, "commits on no remote"));
        }
    }
    Ok(out)
}

/// The gitlink paths of the index of the worktree at `dir` (`ls-files -s`, mode 160000).
fn gitlinks(dir: &Path, timeout: Duration) -> Result<Vec<String>, GitError> {
    let out = git::read(dir, timeout, &["ls-files", "-s", "-z"])?;
    Ok(out
        .split(|b| *b == 0)
        .filter_map(|e| std::str::from_utf8(e).ok())
        .filter(|e| e.starts_with("160000 "))
        .filter_map(|e| e.split_once('\t').map(|(_, p)| p.to_string()))
        .collect())
}

/// The submodule checked out at `sub` has a HEAD that none of its remote-tracking refs
/// contains (or that cannot be read: not clean).
fn local_only(sub: &Path, timeout: Duration) -> bool {
    git::read(
        sub,
        timeout,
        &["rev-list", "-n", "1", "HEAD", "--not", "--remotes"],
    )
    .map(|o| !o.is_empty())
    .unwrap_or(true)
}

/// Whether commit `id` is in the submodule checked out at `sub` and contained in one of
/// its remote-tracking refs (what the submodule's remote can serve, as far as known here).
pub(crate) fn on_submodule_remote(sub: &Path, id: &str, timeout: Duration) -> bool {
    git::read(
        sub,
        timeout,
        &["rev-list", "-n", "1", id, "--not", "--remotes"],
    )
    .is_ok_and(|o| o.is_empty())
}
