//! Work of a worker that no worktree status shows (SPEC 1.3 "Empty needs proof"): stash
//! entries made on its branch, and a checkout of its branch whose worktree registration
//! is gone (its directory back, holding a `.git` file for this repository).

use std::path::{Path, PathBuf};

use crate::model::Body;
use crate::worktree::{self, Worktree};

/// One entry of the repository's stash (`refs/stash` and its reflog, shared by every
/// worktree): its place (`stash@{N}`, newest 0) and its message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StashEntry {
    /// `N` of `stash@{N}`.
    pub index: usize,
    /// The reflog message: `WIP on <branch>: <id> <subject>` or `On <branch>: <message>`.
    pub message: String,
    /// The stash commit's own subject, which git writes alike (`git stash create` then
    /// `git stash store -m <own>`, and a rebase's `autostash`, keep it when the reflog
    /// message is another); empty when the commit cannot be read.
    pub subject: String,
}

impl StashEntry {
    /// The branch it was made on, from git's own words (`WIP on B: …`, `On B: …`; a branch
    /// name holds no `:`) in the reflog message, else in the stash commit's subject; `None`
    /// for a detached HEAD (`(no branch)`) or when neither is git's.
    pub(crate) fn branch(&self) -> Option<&str> {
        made_on(&self.message).or_else(|| made_on(&self.subject))
    }

    /// How a reason names it: `stash@{0} (On issue-5: check baseline)`.
    pub(crate) fn describe(&self) -> String {
        format!("stash@{{{}}} ({})", self.index, self.message)
    }
}

/// The branch git's own stash words name (`WIP on B: …`, `On B: …`); `None` for
/// `(no branch)` or words of someone's own.
fn made_on(m: &str) -> Option<&str> {
    let rest = m
        .strip_prefix("WIP on ")
        .or_else(|| m.strip_prefix("On "))?;
    let (branch, _) = rest.split_once(": ")?;
    (branch != "(no branch)").then_some(branch)
}

/// Every stash entry, newest first (read once per gather); none without a stash.
pub(crate) fn stash_entries(repo: &gix::Repository) -> Vec<StashEntry> {
    if !matches!(crate::refs::find(repo, "refs/stash"), Ok(Some(_))) {
        return Vec::new();
    }
    crate::refs::log(repo, "refs/stash")
        .into_iter()
        .enumerate()
        .map(|(index, line)| StashEntry {
            index,
            message: line.message,
            subject: subject_of(repo, line.new),
        })
        .collect()
}

/// The first line of commit `id`'s message; empty when it cannot be read.
fn subject_of(repo: &gix::Repository, id: gix::ObjectId) -> String {
    repo.find_commit(id)
        .ok()
        .and_then(|c| c.message_raw().ok().map(|m| m.to_string()))
        .and_then(|m| m.lines().next().map(str::to_string))
        .unwrap_or_default()
}

/// The stash entries made on `branch`, described for a reason, newest first.
pub(crate) fn stashes_on(entries: &[StashEntry], branch: &str) -> Vec<String> {
    entries
        .iter()
        .filter(|e| e.branch() == Some(branch))
        .map(StashEntry::describe)
        .collect()
}

/// Commits `branch` pointed to (its reflog's values, newest 100 entries) that neither its
/// `head` nor a base tip reaches and whose changes are not at `head`: only the branch's
/// reflog holds them, and deleting the branch deletes its reflog (SPEC 1.3 "Empty needs
/// proof"). Whatever moved the branch off them (`reset`, `update-ref`, `rebase --onto`, a
/// fast-forward after a reset) counts, except an amend, whose commit replaces the one it
/// amends. A dropped commit whose changes since its merge base with `head` are all at
/// `head` (squash-merged, then reset to the base) lives on ([`lives_on`]), and so do its
/// ancestors. Each is described as `issue-5@{1} (1a2b3c4d5e6f add parser)`, newest first.
pub(crate) fn reset_away(
    repo: &gix::Repository,
    branch: &str,
    head: Option<gix::ObjectId>,
    bases: &[gix::ObjectId],
) -> Vec<String> {
    let Some(head) = head else {
        return Vec::new();
    };
    let mut hidden: Vec<gix::ObjectId> = bases.iter().copied().chain([head]).collect();
    let mut out = Vec::new();
    let log = crate::refs::log(repo, &format!("refs/heads/{branch}"));
    for (i, line) in log.iter().enumerate().take(100) {
        let amended = line.message.starts_with("commit (amend)");
        let values = [(line.new, i), (line.previous, i + 1)];
        for (id, n) in values.into_iter().filter(|(_, n)| !(amended && *n > i)) {
            if id.is_null() || hidden.contains(&id) {
                continue;
            }
            let lost = crate::repo::commits_between(repo, id, &hidden).unwrap_or_default();
            if !lost.is_empty() && !lives_on(repo, id, head) {
                let subject = subject_of(repo, id);
                out.push(format!(
                    "{branch}@{{{n}}} ({} {subject})",
                    id.to_hex_with_len(12)
                ));
            }
            hidden.push(id);
        }
    }
    out
}

/// Whether every path `dropped` changed since its merge base with `head` holds at `head`
/// what it holds in `dropped` (a deletion: absent at `head`). False when anything cannot
/// be read: what is not proved to live on is kept.
fn lives_on(repo: &gix::Repository, dropped: gix::ObjectId, head: gix::ObjectId) -> bool {
    let tree = |id: gix::ObjectId| repo.find_commit(id).ok()?.tree().ok();
    let Ok(Some(base)) = repo
        .merge_base(dropped, head)
        .map(|b| b.map(gix::Id::detach))
    else {
        return false;
    };
    let (Some(old), Some(new), Some(at_head)) = (tree(base), tree(dropped), tree(head)) else {
        return false;
    };
    let opts = gix::diff::Options::default().with_rewrites(None);
    let Ok(changes) = repo.diff_tree_to_tree(&old, &new, opts) else {
        return false;
    };
    changes.iter().all(|c| {
        use gix::object::tree::diff::ChangeDetached as C;
        let want = match c {
            C::Deletion { .. } => None,
            _ => Some(c.entry_mode_and_id().1.to_owned()),
        };
        let path = c.location().to_string();
        let have = at_head
            .lookup_entry_by_path(path.as_str())
            .ok()
            .flatten()
            .map(|e| e.object_id());
        want == have
    })
}

/// A checkout of `branch` whose worktree registration is gone: the first of the
/// directories its attempts ran in (`spawn` `cwd`s naming it, newest first, and the
/// directories above them) and the directory `resume` would add its worktree at, that is
/// no registered worktree and holds a `.git` file naming an admin directory of this
/// repository that is gone or another's ([`worktree::bind::deregistered`]). Returns the
/// directory and the admin directory its `.git` names.
pub(crate) fn deregistered(
    repo: &gix::Repository,
    worktree_dir: Option<&str>,
    registered: &[Worktree],
    branch: &str,
    events: &[crate::model::Event],
) -> Option<(PathBuf, PathBuf)> {
    let common = worktree::absolute(repo.common_dir());
    let mut candidates: Vec<PathBuf> = events
        .iter()
        .rev()
        .filter(|e| e.branch.as_deref() == Some(branch))
        .filter_map(|e| match &e.body {
            Body::Spawn { cwd, .. } => Some(PathBuf::from(cwd)),
            _ => None,
        })
        .flat_map(|cwd| cwd.ancestors().map(Path::to_path_buf).collect::<Vec<_>>())
        .collect();
    candidates.push(PathBuf::from(worktree::default_path(
        repo,
        worktree_dir,
        branch,
    )));
    let taken = |p: &Path| {
        let p = worktree::absolute(p);
        registered.iter().any(|w| w.path == p) || p == worktree::main_dir(repo)
    };
    candidates
        .into_iter()
        .filter(|d| d.join(".git").exists() && !taken(d))
        .find_map(|d| {
            let names = worktree::bind::deregistered(&common, &d)?;
            Some((worktree::absolute(&d), names))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stash_entry_names_the_branch_it_was_made_on() {
        let e = |m: &str| StashEntry {
            index: 0,
            message: m.into(),
            subject: String::new(),
        };
        assert_eq!(e("On issue-5: check baseline").branch(), Some("issue-5"));
        assert_eq!(
            e("WIP on feat/issue-7-x: 1a2b3c4 add parser").branch(),
            Some("feat/issue-7-x")
        );
        assert_eq!(e("WIP on (no branch): 1a2b3c4 x").branch(), None);
        assert_eq!(e("my own message").branch(), None);
        // `git stash store -m <own>` and a rebase's `autostash`: the commit's own subject.
        let stored = |m: &str, subject: &str| StashEntry {
            subject: subject.into(),
            ..e(m)
        };
        assert_eq!(
            stored("autostash", "On issue-5: autostash").branch(),
            Some("issue-5")
        );
        assert_eq!(
            stored("saved by hand", "WIP on feat/issue-7: 1a2b3c4 x").branch(),
            Some("feat/issue-7")
        );
        assert_eq!(stored("x", "WIP on (no branch): 1a2b3c4 x").branch(), None);
        assert_eq!(
            e("On issue-5: a: b").describe(),
            "stash@{0} (On issue-5: a: b)"
        );
    }
}
