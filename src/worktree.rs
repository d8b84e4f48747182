//! Worktrees: the main one and every linked one (`git worktree list` semantics,
//! including prunable and locked ones), their HEAD, in-progress operation, and dirty
//! counts. Reading never writes: no `index.lock`, no index refresh.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use gix::ObjectId;
use gix::bstr::ByteSlice;
use jiff::Timestamp;

use crate::model::{Dirty, Operation};
use crate::repo::{RepoError, git};

mod proof;

/// One registered worktree.
#[derive(Clone, Debug)]
pub struct Worktree {
    /// Absolute path of the working directory.
    pub path: PathBuf,
    /// Its own git dir (`.git` for the main one, `.git/worktrees/<id>` for linked ones).
    pub git_dir: PathBuf,
    /// The main worktree.
    pub is_main: bool,
    /// The directory does not exist.
    pub missing: bool,
    /// `git worktree lock` reason (empty string when locked without one).
    pub locked: Option<String>,
    /// The branch checked out (short name), or the branch a rebase started from.
    pub branch: Option<String>,
    /// HEAD's commit.
    pub head: Option<ObjectId>,
    /// HEAD is detached (outside a rebase).
    pub detached: bool,
    /// In-progress operation.
    pub operation: Option<Operation>,
    /// HEAD names a branch that does not exist (deleted under the worktree: an unborn
    /// HEAD); `head` is then the newest commit of the worktree's HEAD reflog, if any
    /// (SPEC 1.2 "Never lose work: more states").
    pub unborn: bool,
}

/// Dirty counts plus the newest mtime of the changed files and the index.
#[derive(Clone, Debug, Default)]
pub struct Status {
    /// The counts.
    pub dirty: Dirty,
    /// Newest mtime of changed and untracked files and of the index.
    pub newest_mtime: Option<Timestamp>,
    /// The status walk met an ignored file or directory. When false, the worktree holds
    /// no ignored file at all (the walk classifies every entry it does not recurse into
    /// against the same exclude rules `git ls-files --others --ignored
    /// --exclude-standard` uses), so its ignored files need no listing of their own.
    pub any_ignored: bool,
}

/// List every worktree of `repo` (main first, when there is one).
///
/// Errors: [`RepoError::Git`] when the worktree registry cannot be read.
pub fn list(repo: &gix::Repository) -> Result<Vec<Worktree>, RepoError> {
    let mut out = Vec::new();
    let common = repo.common_dir().to_path_buf();
    let main_git_dir = common.clone();
    // The main worktree: the common dir's parent, unless the repository is bare.
    let main = repo.main_repo().map_err(git)?;
    if let Some(wt) = main.workdir() {
        out.push(read_one(repo, absolute(wt), main_git_dir, true, None));
    }
    for proxy in repo.worktrees().map_err(git)? {
        let git_dir = proxy.git_dir().to_path_buf();
        let locked = proxy
            .lock_reason()
            .map(|r| r.to_string())
            .or_else(|| proxy.is_locked().then(String::new));
        let path = proxy
            .base()
            .map(|p| absolute(&p))
            .unwrap_or_else(|_| git_dir.clone());
        out.push(read_one(repo, path, git_dir, false, locked));
    }
    Ok(out)
}

/// `p` made absolute (against the current directory) and canonicalized when it exists.
pub fn absolute(p: &Path) -> PathBuf {
    let p = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|c| c.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    p.canonicalize().unwrap_or(p)
}

fn read_one(
    repo: &gix::Repository,
    path: PathBuf,
    git_dir: PathBuf,
    is_main: bool,
    locked: Option<String>,
) -> Worktree {
    let missing = !path.is_dir();
    let head_text = std::fs::read_to_string(git_dir.join("HEAD")).unwrap_or_default();
    let head_text = head_text.trim();
    let operation = operation(&git_dir);
    let (mut branch, mut head, mut detached, mut unborn) = (None, None, false, false);
    if let Some(target) = head_text.strip_prefix("ref:") {
        let target = target.trim();
        branch = target.strip_prefix("refs/heads/").map(str::to_string);
        head = crate::repo::tip(repo, target);
        if head.is_none() && branch.is_some() && !missing {
            unborn = true;
            head = reflog_head(repo, &git_dir);
        }
    } else if let Ok(id) = ObjectId::from_hex(head_text.as_bytes()) {
        head = Some(id);
        detached = true;
    }
    if detached && operation == Some(Operation::Rebase) {
        // During a rebase HEAD is detached: the branch is the one the rebase started from.
        for d in ["rebase-merge", "rebase-apply"] {
            if let Ok(name) = std::fs::read_to_string(git_dir.join(d).join("head-name"))
                && let Some(b) = name.trim().strip_prefix("refs/heads/")
            {
                branch = Some(b.to_string());
                detached = false;
                // The work is the branch as the rebase found it; HEAD is a scratch state.
                head = crate::repo::tip(repo, name.trim()).or(head);
            }
        }
    }
    Worktree {
        path,
        git_dir,
        is_main,
        missing,
        locked,
        branch,
        head,
        detached,
        operation,
        unborn,
    }
}

/// The newest commit of the HEAD reflog in `git_dir` (a worktree's own git dir) that is
/// still in the object store; `None` without a reflog or with no such commit.
pub fn reflog_head(repo: &gix::Repository, git_dir: &Path) -> Option<ObjectId> {
    let text = std::fs::read(git_dir.join("logs").join("HEAD")).ok()?;
    let text = String::from_utf8_lossy(&text);
    text.lines().rev().find_map(|line| {
        let new = line.split(' ').nth(1)?;
        let id = ObjectId::from_hex(new.as_bytes()).ok()?;
        (!id.is_null() && repo.find_commit(id).is_ok()).then_some(id)
    })
}

/// The operation in progress in a worktree's own git dir, as git's `wt_status_get_state`.
pub fn operation(git_dir: &Path) -> Option<Operation> {
    let has = |p: &str| git_dir.join(p).exists();
    if has("rebase-apply/applying") {
        // `git am` uses rebase-apply and marks it with `applying` (git's wt-status.c).
        Some(Operation::Am)
    } else if has("rebase-merge") || has("rebase-apply") {
        Some(Operation::Rebase)
    } else if has("MERGE_HEAD") {
        Some(Operation::Merge)
    } else if has("CHERRY_PICK_HEAD") {
        Some(Operation::CherryPick)
    } else if has("REVERT_HEAD") {
        Some(Operation::Revert)
    } else if has("BISECT_LOG") {
        Some(Operation::Bisect)
    } else {
        None
    }
}

/// Dirty counts of the worktree at `path` (staged, unstaged, untracked, conflicted files),
/// computed with gix without writing anything (no `index.lock`, no index refresh).
///
/// Errors: [`RepoError::Git`] when the worktree or its index cannot be read.
pub fn status(path: &Path) -> Result<Status, RepoError> {
    let repo = gix::open(path).map_err(git)?;
    let c = changed(&repo)?;
    let workdir = repo.workdir().unwrap_or(path).to_path_buf();
    let mut newest = mtime(&repo.index_path());
    for rela in c
        .unstaged
        .iter()
        .chain(c.untracked.iter())
        .chain(c.staged.iter())
    {
        if let Ok(p) = gix::path::from_bstr(rela.as_bstr()) {
            newest = newest.max(mtime(&workdir.join(p)));
        }
    }
    let n = |s: &BTreeSet<gix::bstr::BString>| s.len() as u32;
    Ok(Status {
        dirty: Dirty {
            staged: n(&c.staged),
            unstaged: n(&c.unstaged),
            untracked: n(&c.untracked),
            conflicted: n(&c.conflicted),
        },
        newest_mtime: newest,
        any_ignored: c.any_ignored,
    })
}

/// The changed paths of a worktree by kind, as `git status` counts them.
#[derive(Default)]
struct Changed {
    staged: BTreeSet<gix::bstr::BString>,
    unstaged: BTreeSet<gix::bstr::BString>,
    untracked: BTreeSet<gix::bstr::BString>,
    conflicted: BTreeSet<gix::bstr::BString>,
    /// An ignored entry was met by the walk.
    any_ignored: bool,
}

impl Changed {
    /// Record one index-to-worktree item.
    fn worktree_item(&mut self, item: gix::status::index_worktree::Item) {
        use gix::status::index_worktree::Item as Iw;
        use gix::status::plumbing::index_as_worktree::EntryStatus;
        match item {
            Iw::Modification {
                rela_path, status, ..
            } => match status {
                EntryStatus::Conflict { .. } => {
                    self.conflicted.insert(rela_path);
                }
                EntryStatus::Change(_) | EntryStatus::IntentToAdd => {
                    self.unstaged.insert(rela_path);
                }
                EntryStatus::NeedsUpdate(_) => {}
            },
            Iw::DirectoryContents { entry, .. } => match entry.status {
                gix::dir::entry::Status::Untracked => {
                    self.untracked.insert(entry.rela_path);
                }
                gix::dir::entry::Status::Ignored(_) => self.any_ignored = true,
                _ => {}
            },
            Iw::Rewrite { dirwalk_entry, .. } => {
                self.untracked.insert(dirwalk_entry.rela_path);
            }
        }
    }
}

/// The changed paths of the worktree of `repo`: HEAD-to-index (staged) and
/// index-to-worktree (unstaged, untracked, conflicted; a conflicted path only that).
///
/// One walk of our own ([`proof::walk`]) first proves unchanged entries and lists the
/// untracked files of tracked directories; gix's status then looks only at what the walk
/// did not prove (the proven entries marked up to date), and its directory walk runs only
/// when the walk met something it leaves to gix. A clean worktree costs one `readdir` per
/// directory and one `lstat` per tracked file, and no gix status at all.
fn changed(repo: &gix::Repository) -> Result<Changed, RepoError> {
    // Our own copy (the walk's marks are made on it, never written): read afresh rather
    // than cloned from the repository's shared one.
    let mut index = match repo.open_index() {
        Ok(index) => index,
        Err(_) if !repo.index_path().exists() => (**repo.index_or_empty().map_err(git)?).clone(),
        Err(e) => return Err(git(e)),
    };
    // git's shortcut: when the index's cache-tree root is valid and equals HEAD's tree,
    // nothing is staged, and the HEAD-to-index diff can be skipped.
    let head_tree = repo.head_tree_id_or_empty().map_err(git)?.detach();
    let nothing_staged = index
        .tree()
        .is_some_and(|t| t.num_entries.is_some() && t.id == head_tree);
    let mut c = Changed::default();
    let walk = proof::walk(repo, &index);
    let dirwalk = walk.as_ref().is_none_or(|w| w.needs_dirwalk);
    let shown = repo.workdir().unwrap_or(repo.git_dir()).display();
    if let Some(w) = walk {
        if w.unproven == 0 && nothing_staged && !w.needs_dirwalk {
            tracing::debug!(
                "status of {shown}: proven by one walk ({} entries)",
                w.proven.len()
            );
            c.untracked = w.untracked;
            c.any_ignored = w.any_ignored;
            return Ok(c);
        }
        tracing::debug!(
            "status of {shown}: {} entries proven by one walk, {} left to gix, its directory walk {}",
            w.proven.len(),
            w.unproven,
            if w.needs_dirwalk { "needed" } else { "skipped" }
        );
        proof::mark_proven(&mut index, &w.proven);
        if !w.needs_dirwalk {
            c.untracked = w.untracked;
            c.any_ignored = w.any_ignored;
        }
    }
    let dirwalk_options = repo.dirwalk_options().map_err(git)?;
    let platform = repo
        .status(gix::progress::Discard)
        .map_err(git)?
        .index(gix::worktree::IndexPersistedOrInMemory::InMemory(index))
        .index_worktree_options_mut(|o| {
            // Worktrees are already read in parallel, one per thread: no nested pools.
            o.thread_limit = Some(1);
            // `status.showUntrackedFiles=no` turns gix's walk off: never for us. An
            // untracked file hidden from the count would make the worktree "clean" and let
            // it be deleted with the file (SPEC `empty`, safety rule 1).
            let walk = o.dirwalk_options.get_or_insert(dirwalk_options);
            // Ignored entries are classified by the walk anyway; emitting them (not
            // recursing into ignored directories) tells whether any exist, so a clean
            // worktree with none needs no second walk for its ignored files.
            walk.set_emit_ignored(Some(gix::dir::walk::EmissionMode::Matching));
        })
        .untracked_files(if dirwalk {
            gix::status::UntrackedFiles::Files
        } else {
            // Our walk listed the untracked files already.
            gix::status::UntrackedFiles::None
        })
        // Submodules as configured (git's default: a modified submodule is a change).
        .index_worktree_submodules(gix::status::Submodule::AsConfigured { check_dirty: true });
    let no_patterns = Vec::<gix::bstr::BString>::new();
    if nothing_staged {
        for item in platform
            .into_index_worktree_iter(no_patterns)
            .map_err(git)?
        {
            c.worktree_item(item.map_err(git)?);
        }
    } else {
        for item in platform.into_iter(no_patterns).map_err(git)? {
            match item.map_err(git)? {
                gix::status::Item::TreeIndex(change) => {
                    c.staged.insert(change.location().to_owned());
                }
                gix::status::Item::IndexWorktree(item) => c.worktree_item(item),
            }
        }
    }
    for p in &c.conflicted {
        c.staged.remove(p);
        c.unstaged.remove(p);
    }
    Ok(c)
}

/// The mtime of `p` (not following symlinks), if it exists.
pub fn mtime(p: &Path) -> Option<Timestamp> {
    let m = std::fs::symlink_metadata(p).ok()?.modified().ok()?;
    Timestamp::try_from(m).ok()
}

/// The branch a detached worktree left, from its HEAD reflog (SPEC special cases): the
/// newest `checkout: moving from <branch> to …`, or the branch whose tip HEAD was on
/// when a rebase started (`rebase (start)` / `rebase -i (start)`: its old id). `tips` are
/// the local branches and their tips. `None` when the reflog names neither.
pub fn left_branch(
    git_dir: &Path,
    tips: &std::collections::BTreeMap<String, ObjectId>,
) -> Option<String> {
    let text = std::fs::read(git_dir.join("logs").join("HEAD")).ok()?;
    let text = String::from_utf8_lossy(&text);
    for line in text.lines().rev() {
        let Some((ids, message)) = line.split_once('\t') else {
            continue;
        };
        if let Some(rest) = message.strip_prefix("checkout: moving from ") {
            if let Some((from, _)) = rest.split_once(" to ")
                && tips.contains_key(from)
            {
                return Some(from.to_string());
            }
        } else if message.starts_with("rebase") && message.contains("(start)") {
            let old = ids
                .split(' ')
                .next()
                .and_then(|h| ObjectId::from_hex(h.as_bytes()).ok())?;
            if let Some((b, _)) = tips.iter().find(|(_, t)| **t == old) {
                return Some(b.clone());
            }
        }
    }
    None
}
