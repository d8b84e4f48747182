//! What a push must never carry, and the push itself (SPEC `recover`: never onto a branch
//! with an open pull request, never a commit that adds a file matching
//! `recode.secrets`; `recode.networkTimeout` bounds it).

use std::collections::BTreeSet;
use std::path::Path;

use gix::ObjectId;

use super::{Run, leftout};
use crate::git::{self, GitError};
use crate::model::{ForgeView, PrState, Worker};
use crate::{config, forge, repo};

/// Why a WIP push must not happen (`None`: push it).
///
/// Errors: [`GitError`] when the commits to push cannot be read.
pub(super) fn wip_hold(r: &Run, w: &Worker, dir: &Path) -> Result<Option<String>, GitError> {
    if !r.cfg.push_wip {
        return Ok(Some("recode.pushWip is false".into()));
    }
    if forge::remote_url(r.repo, &r.cfg.remote).is_none() {
        return Ok(Some(format!("no remote '{}'", r.cfg.remote)));
    }
    if let (ForgeView::Known(_), Some(pr)) = (&r.forge_view, &w.pr)
        && pr.state == PrState::Open
    {
        return Ok(Some(format!(
            "{} is open on {}{}",
            w.reason.noun.numbered(pr.number),
            w.branch,
            if pr.merging { ", being merged" } else { "" }
        )));
    }
    // SPEC 1.3 "Pushing": the target is refs/heads/<branch> on recode.remote, never the
    // branch's upstream; held only when that ref exists and is not in what is pushed.
    // A remote that cannot be asked is left to the push itself, which fails the same
    // way and is reported as the error it is (a push never forces: nothing is lost).
    let branch_ref = format!("refs/heads/{}", w.branch);
    let claim_ref = crate::hosts::claim::claim_ref(&w.branch);
    let listed = remote_refs(r, &[&branch_ref, &claim_ref]);
    // SPEC 1.3 claims: another host's claim on the branch holds it (a takeover this
    // host's ledger does not show yet).
    if let Ok(refs) = &listed
        && let Some(why) = super::takeover::claim_hold(r, w, refs.get(&claim_ref).copied())
    {
        return Ok(Some(why));
    }
    if let Ok(refs) = &listed
        && let Some(there) = refs.get(&branch_ref).copied()
        && !pushes_onto(r, &w.branch, there)
    {
        return Ok(Some(format!(
            "{} exists on the remote '{}' at {}, which is not in what would be pushed (it may have an open pull request, or another's work)",
            w.branch,
            r.cfg.remote,
            there.to_hex_with_len(12)
        )));
    }
    secrets_hold(r, w, dir)
}

/// Where each of `names` is on `recode.remote` now (one `git ls-remote`, within
/// `recode.networkTimeout`); a name the remote lacks is absent.
///
/// Errors: [`GitError`] when the remote cannot be asked.
fn remote_refs(
    r: &Run,
    names: &[&str],
) -> Result<std::collections::BTreeMap<String, ObjectId>, GitError> {
    let out = git::Git::new(r.repo.common_dir(), r.cfg.command_timeout)
        .args(["ls-remote", "--", &r.cfg.remote])
        .args(names)
        .network(r.cfg.network_timeout, &r.cfg.ssh)
        .output()?;
    let text = String::from_utf8_lossy(&out);
    Ok(text
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .filter(|(_, name)| names.contains(name))
        .filter_map(|(id, name)| {
            let id = ObjectId::from_hex(id.trim().as_bytes()).ok()?;
            Some((name.to_string(), id))
        })
        .collect())
}

/// Why pushing `w.branch` onto the remote must not happen because another host claimed it
/// ([`super::takeover::claim_hold`]); `None` also when the remote cannot be asked (the
/// push then fails the same way).
pub(super) fn claim_hold(r: &Run, w: &Worker) -> Option<String> {
    let claim_ref = crate::hosts::claim::claim_ref(&w.branch);
    let refs = remote_refs(r, &[&claim_ref]).ok()?;
    super::takeover::claim_hold(r, w, refs.get(&claim_ref).copied())
}

/// Whether the remote's `there` is an ancestor of (or is) the local branch: a push of it
/// is a fast-forward that loses nothing there. A commit this repository lacks is not.
fn pushes_onto(r: &Run, branch: &str, there: ObjectId) -> bool {
    let Some(here) = repo::tip(r.repo, &format!("refs/heads/{branch}")) else {
        return false;
    };
    here == there
        || (r.repo.find_object(there).is_ok()
            && repo::count_between(r.repo, there, &[here]).is_ok_and(|n| n == 0))
}

/// Why pushing `w.branch` must not happen because of secrets: a path matching
/// `recode.secrets` that any commit the push would send brings in — added, renamed or
/// copied into place, or brought by a merge from either side (each commit is diffed
/// against every parent, renames off, so a rename or copy shows as the path it creates).
/// The commits are those reachable from the branch and not from its remote-tracking
/// branch or, when there is none, the base. Applies to WIP and publish pushes alike.
///
/// Then (SPEC 1.2 submodules) a gitlink that those commits set to a commit the
/// submodule's remote lacks ([`gitlink_hold`]).
///
/// Errors: [`GitError`] when the log cannot be read.
pub(super) fn secrets_hold(r: &Run, w: &Worker, dir: &Path) -> Result<Option<String>, GitError> {
    let excludes = push_excludes(r, w);
    let added = git::Git::read(r.repo.common_dir(), r.cfg.command_timeout)
        .args([
            "log",
            "--format=",
            "--name-only",
            "--no-renames",
            "--diff-merges=separate",
            "--diff-filter=A",
            "-z",
        ])
        .arg(format!("refs/heads/{}", w.branch))
        .args(excludes.iter().map(|t| format!("^{t}")))
        .arg("--")
        .output()?;
    let secrets: BTreeSet<String> = added
        .split(|b| *b == 0 || *b == b'\n')
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).to_string())
        .filter(|p| config::matches_secret(&r.cfg.secrets, p))
        .collect();
    if !secrets.is_empty() {
        return Ok(Some(format!(
            "the push would carry files matching recode.secrets: {}",
            secrets.into_iter().collect::<Vec<_>>().join(", ")
        )));
    }
    gitlink_hold(w, dir, &excludes, r.cfg.command_timeout)
}

/// What the remote already has of the branch: `<remote>/<branch>` (never the upstream,
/// which may be another branch: SPEC 1.3), else the base.
fn push_excludes(r: &Run, w: &Worker) -> Vec<ObjectId> {
    match repo::tip(
        r.repo,
        &format!("refs/remotes/{}/{}", r.cfg.remote, w.branch),
    ) {
        Some(t) => vec![t],
        None => repo::base_tips(r.repo, r.cfg, &w.base),
    }
}

/// Why a push must not carry the gitlinks its commits set (SPEC 1.2 submodules): a
/// gitlink to a commit that the submodule checked out in the worktree at `dir` lacks, or
/// that none of its remote-tracking refs contains (no other clone could check it out).
/// A submodule not checked out here cannot be asked, and holds nothing.
///
/// Each git run is killed past `timeout` (`recode.commandTimeout`).
///
/// Errors: [`GitError`] when the log cannot be read.
fn gitlink_hold(
    w: &Worker,
    dir: &Path,
    excludes: &[ObjectId],
    timeout: std::time::Duration,
) -> Result<Option<String>, GitError> {
    let raw = git::Git::read(dir, timeout)
        .args([
            "log",
            "--format=",
            "--raw",
            "--no-abbrev",
            "--no-renames",
            "-z",
        ])
        .arg(format!("refs/heads/{}", w.branch))
        .args(excludes.iter().map(|t| format!("^{t}")))
        .arg("--")
        .output()?;
    // `-z --raw`: `:old new oldid newid status\0path\0`, one pair of fields a change.
    let mut fields = raw.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut bad = BTreeSet::new();
    while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
        let meta = String::from_utf8_lossy(meta);
        let parts: Vec<&str> = meta.trim_start_matches(['\n', ':']).split(' ').collect();
        if parts.len() < 4 || parts[1] != "160000" {
            continue;
        }
        let path = String::from_utf8_lossy(path).to_string();
        let sub = dir.join(&path);
        if sub.join(".git").exists() && !leftout::on_submodule_remote(&sub, parts[3], timeout) {
            bad.insert(path);
        }
    }
    Ok((!bad.is_empty()).then(|| {
        format!(
            "the push would carry gitlinks to submodule commits their remote lacks: {}",
            bad.into_iter().collect::<Vec<_>>().join(", ")
        )
    }))
}

/// Push `branch` to `refs/heads/<branch>` on `recode.remote` (never its upstream: SPEC
/// 1.3), within `recode.networkTimeout`; run from the common dir, so no worktree's `.git`
/// is followed.
///
/// Errors: [`GitError`] (rejected, timed out).
pub(super) fn push(r: &Run, _dir: &Path, branch: &str) -> Result<(), GitError> {
    let spec = format!("refs/heads/{branch}:refs/heads/{branch}");
    git::Git::new(r.repo.common_dir(), r.cfg.command_timeout)
        .args(["push", "--porcelain", "--quiet", &r.cfg.remote, &spec])
        .network(r.cfg.network_timeout, &r.cfg.ssh)
        .output()?;
    Ok(())
}
