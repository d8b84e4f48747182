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

pub(crate) mod bind;
mod delta;
mod plain;
mod proof;
pub(crate) mod watch;

pub use delta::reading;
pub(crate) use delta::status_watched;

/// One registered worktree.
#[derive(Clone, Debug)]
pub(crate) struct Worktree {
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
    /// Where its `.git` leads when that is not `git_dir` (SPEC 1.3: a fresh `git init`,
    /// another repository): nothing reads or commits through it ([`bind::foreign`]).
    pub foreign: Option<PathBuf>,
}

/// Dirty counts plus the newest mtime of the changed files and the index.
#[derive(Clone, Debug, Default)]
pub(crate) struct Status {
    /// The counts.
    pub dirty: Dirty,
    /// Newest mtime of changed and untracked files and of the index.
    pub newest_mtime: Option<Timestamp>,
    /// The status walk met an ignored file or directory. When false, the worktree holds
    /// no ignored file at all (the walk classifies every entry it does not recurse into
    /// against the same exclude rules `git ls-files --others --ignored
    /// --exclude-standard` uses), so its ignored files need no listing of their own.
    pub any_ignored: bool,
    /// Changed paths that an index flag hides from `git status`, with the flag
    /// (`README.md (assume-unchanged)`); they are counted in `dirty` (SPEC 1.3: a status no
    /// index flag, monitor or cache can hide).
    pub hidden: Vec<String>,
}

/// List every worktree of `repo` (main first, when there is one).
///
/// Errors: [`RepoError::Git`] when the worktree registry cannot be read.
pub(crate) fn list(repo: &gix::Repository) -> Result<Vec<Worktree>, RepoError> {
    let mut out = Vec::new();
    let common = repo.common_dir().to_path_buf();
    let main_git_dir = common.clone();
    // The main worktree: the common dir's parent, unless the repository is bare.
    let main = repo.main_repo().map_err(git)?;
    if let Some(wt) = main.workdir() {
        let path = absolute(wt);
        out.push(read_one(repo, Some(&main), path, main_git_dir, true, None));
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
        // Its own repository (HEAD, state, reflog are per worktree); one that cannot be
        // opened (HEAD unreadable) reads as no HEAD and no operation.
        let own = proxy.into_repo_with_possibly_inaccessible_worktree().ok();
        out.push(read_one(repo, own.as_ref(), path, git_dir, false, locked));
    }
    Ok(out)
}

/// `p` made absolute (against the current directory, [`std::path::absolute`]) and
/// canonicalized when it exists.
pub(crate) fn absolute(p: &Path) -> PathBuf {
    let p = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    p.canonicalize().unwrap_or(p)
}

/// One worktree's facts, read through its own repository `own` (gix: `head()`, `state()`,
/// the HEAD reflog); refs are resolved in `repo`.
fn read_one(
    repo: &gix::Repository,
    own: Option<&gix::Repository>,
    path: PathBuf,
    git_dir: PathBuf,
    is_main: bool,
    locked: Option<String>,
) -> Worktree {
    let missing = !path.is_dir();
    // HEAD and state come from the admin directory (`own` is opened from it), never
    // through the worktree's `.git`, which may lead elsewhere.
    let foreign = (!missing).then(|| bind::foreign(&path, &git_dir)).flatten();
    let operation = own.and_then(operation);
    let (mut branch, mut head, mut detached, mut unborn) = (None, None, false, false);
    match own.and_then(crate::refs::head) {
        Some(crate::refs::Head::Branch { name, id: Some(id) }) => {
            branch = name.strip_prefix("refs/heads/").map(str::to_string);
            head = Some(id);
        }
        Some(crate::refs::Head::Branch { name, id: None }) => {
            branch = name.strip_prefix("refs/heads/").map(str::to_string);
            if branch.is_some() && !missing {
                unborn = true;
                head = reflog_head(repo, &git_dir);
            }
        }
        Some(crate::refs::Head::Detached(id)) => {
            head = Some(id);
            detached = true;
        }
        None => {}
    }
    if detached
        && operation == Some(Operation::Rebase)
        && let Some(name) = rebase_head_name(&git_dir)
    {
        // During a rebase HEAD is detached: the branch is the one the rebase started from.
        branch = name.strip_prefix("refs/heads/").map(str::to_string);
        detached = false;
        // The work is the branch as the rebase found it; HEAD is a scratch state.
        head = crate::repo::tip(repo, &name).or(head);
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
        foreign,
    }
}

/// The branch a rebase in the worktree whose own git dir is `git_dir` started from: the
/// `head-name` git keeps in `rebase-merge/` or `rebase-apply/`, when it names a branch
/// (`refs/heads/…`; a rebase of a detached HEAD has none). gix reads this file only
/// privately, hence by hand here.
pub(crate) fn rebase_head_name(git_dir: &Path) -> Option<String> {
    ["rebase-merge", "rebase-apply"].iter().find_map(|d| {
        let name = std::fs::read_to_string(git_dir.join(d).join("head-name")).ok()?;
        let name = name.trim();
        name.starts_with("refs/heads/").then(|| name.to_string())
    })
}

/// The newest commit of the HEAD reflog in `git_dir` (a worktree's own git dir; the ref
/// store's [`crate::refs::head_log`]) that is still in the object store; `None` without
/// a reflog or with no such commit.
pub(crate) fn reflog_head(repo: &gix::Repository, git_dir: &Path) -> Option<ObjectId> {
    crate::refs::head_log(repo, git_dir)
        .into_iter()
        .find_map(|line| {
            let id = line.new;
            (!id.is_null() && repo.find_commit(id).is_ok()).then_some(id)
        })
}

/// The operation in progress in a worktree (its own repository `own`), from gix's
/// `Repository::state()` (modelled on git's `wt_status_get_state`).
pub(crate) fn operation(own: &gix::Repository) -> Option<Operation> {
    use gix::state::InProgress as P;
    Some(match crate::refs::in_progress(own)? {
        // `git am` uses rebase-apply and marks it with `applying`.
        P::ApplyMailbox => Operation::Am,
        P::ApplyMailboxRebase | P::Rebase | P::RebaseInteractive => Operation::Rebase,
        P::Merge => Operation::Merge,
        P::CherryPick | P::CherryPickSequence => Operation::CherryPick,
        P::Revert | P::RevertSequence => Operation::Revert,
        P::Bisect => Operation::Bisect,
    })
}

/// Open the worktree at `path` itself: the caller's `GIT_*` variables (`GIT_WORK_TREE`,
/// `GIT_INDEX_FILE`, …, set when git-recode runs from a hook or a script) are ignored, as
/// safety rule 0 has them scrubbed from every git run: they name the caller's worktree,
/// and read here they made another worker's clean worktree look dirty, or a dirty one
/// clean (found by the never-lose harness).
///
/// Errors: [`RepoError::Git`] when it cannot be opened.
fn open_here(path: &Path) -> Result<gix::Repository, RepoError> {
    let mut permissions = gix::open::Permissions::default();
    permissions.env.git_prefix = gix::sec::Permission::Deny;
    gix::open_opts(path, gix::open::Options::default().permissions(permissions)).map_err(git)
}

/// `repo` with no filter driver (`filter.<driver>.clean`, `smudge`, `process`): the
/// sections are dropped from its configuration in memory, so gix's status compares a file
/// whose stat changed by its bytes (and `core.autocrlf`/`eol`) and never starts a command
/// the repository's configuration names (SPEC 1.2 "Untrusted input stays out": `status` and
/// `classify` run no filter). A file a clean filter would have turned back into its blob
/// then counts as changed: dirt, never taken as clean.
///
/// Errors: [`RepoError::Git`] when the configuration cannot be taken back in.
fn without_filter_drivers(repo: &mut gix::Repository) -> Result<(), RepoError> {
    let mut cfg = repo.config_snapshot_mut();
    let ids: Vec<_> = cfg
        .sections_and_ids_by_name("filter")
        .map(|it| it.map(|(_, id)| id).collect())
        .unwrap_or_default();
    for id in ids {
        cfg.remove_section_by_id(id);
    }
    cfg.commit().map_err(git)?;
    Ok(())
}

/// Dirty counts of the worktree at `path` (staged, unstaged, untracked, conflicted files),
/// computed with gix without writing anything (no `index.lock`, no index refresh), and
/// trusting no index flag, monitor or cache (SPEC 1.3): `assume-unchanged` entries and
/// `skip-worktree` entries whose file is on disk are compared like any other, a file-system
/// monitor's "valid" marks are ignored, and no untracked cache is read; no filter driver
/// runs (`without_filter_drivers`). The whole reading: [`status_watched`] reads through
/// the file watcher.
///
/// Errors: [`RepoError::Git`] when the worktree or its index cannot be read, or when its
/// `.git` leads anywhere but `admin`, the admin directory this repository lists for it.
pub(crate) fn status(path: &Path, admin: &Path) -> Result<Status, RepoError> {
    let repo = open_bound(path, admin)?;
    let c = changed(&repo)?;
    Ok(status_of(&repo, path, &c))
}

/// The worktree at `path` opened for a status (no filter driver), after checking that its
/// `.git` leads to `admin`.
///
/// Errors: [`RepoError::Git`] when it cannot be opened or leads elsewhere.
fn open_bound(path: &Path, admin: &Path) -> Result<gix::Repository, RepoError> {
    if let Some(other) = bind::foreign(path, admin) {
        return Err(RepoError::Git(
            format!(
                "its .git leads to {}, not to {}",
                other.display(),
                admin.display()
            )
            .into(),
        ));
    }
    let mut repo = open_here(path)?;
    without_filter_drivers(&mut repo)?;
    Ok(repo)
}

/// The [`Status`] of the changed paths `c` of the worktree of `repo` (at `path`): counts,
/// the newest mtime of the changed files and the index, hidden changes.
fn status_of(repo: &gix::Repository, path: &Path, c: &Changed) -> Status {
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
    Status {
        dirty: Dirty {
            staged: n(&c.staged),
            unstaged: n(&c.unstaged),
            untracked: n(&c.untracked),
            conflicted: n(&c.conflicted),
        },
        newest_mtime: newest,
        any_ignored: c.any_ignored,
        hidden: c.hidden_changes(),
    }
}

/// The changed paths of a worktree by kind, as `git status` counts them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Changed {
    staged: BTreeSet<gix::bstr::BString>,
    unstaged: BTreeSet<gix::bstr::BString>,
    untracked: BTreeSet<gix::bstr::BString>,
    conflicted: BTreeSet<gix::bstr::BString>,
    /// An ignored entry was met by the walk.
    any_ignored: bool,
    /// Entries whose index flag would hide them from `git status`, with the flag's name.
    flagged: Vec<(gix::bstr::BString, &'static str)>,
}

impl Changed {
    /// The flagged entries that changed: `path (flag)`.
    fn hidden_changes(&self) -> Vec<String> {
        self.flagged
            .iter()
            .filter(|(p, _)| self.unstaged.contains(p) || self.conflicted.contains(p))
            .map(|(p, flag)| format!("{p} ({flag})"))
            .collect()
    }

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
    let mut index = own_index(repo)?;
    // git's shortcut: when the index's cache-tree root is valid and equals HEAD's tree,
    // nothing is staged, and the HEAD-to-index diff can be skipped.
    let head_tree = crate::refs::head_tree(repo).map_err(git)?;
    let nothing_staged = index
        .tree()
        .is_some_and(|t| t.num_entries.is_some() && t.id == head_tree);
    let mut c = Changed {
        flagged: unflag(repo, &mut index),
        ..Changed::default()
    };
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
    gix_status(repo, index, (dirwalk, nothing_staged, head_tree), &mut c)?;
    for p in &c.conflicted {
        c.staged.remove(p);
        c.unstaged.remove(p);
    }
    Ok(c)
}

/// Our own copy of `repo`'s index (the walk's marks are made on it, never written): read
/// afresh rather than cloned from the repository's shared one; empty when there is none.
///
/// Errors: [`RepoError`] when the index cannot be read.
fn own_index(repo: &gix::Repository) -> Result<gix::index::File, RepoError> {
    match repo.open_index() {
        Ok(index) => Ok(index),
        Err(_) if !repo.index_path().exists() => {
            Ok((**repo.index_or_empty().map_err(git)?).clone())
        }
        Err(e) => Err(git(e)),
    }
}

/// For a sparse `index` (`index.sparse`: directory entries gix's tree-to-index diff cannot
/// read), the staged paths by `git diff --cached` bound to the worktree, into `c`; true
/// when it was asked. Bounded by the default `recode.commandTimeout`.
///
/// Errors: [`RepoError`] when git fails.
fn staged_by_git(
    repo: &gix::Repository,
    index: &gix::index::File,
    c: &mut Changed,
) -> Result<bool, RepoError> {
    if !index.is_sparse() {
        return Ok(false);
    }
    let dir = repo.workdir().unwrap_or(repo.git_dir());
    let timeout = crate::config::DEFAULT_COMMAND_TIMEOUT;
    let out = crate::git::Git::bound_read(dir, repo.git_dir(), timeout)
        .args(["diff", "--cached", "--name-only", "--no-renames", "-z"])
        .output()
        .map_err(git)?;
    for p in out.split(|b| *b == 0).filter(|p| !p.is_empty()) {
        c.staged.insert(p.into());
    }
    Ok(true)
}

/// gix's status over `index` (its proven entries marked up to date) into `c`: the
/// index-to-worktree changes, with its directory walk for untracked files only when
/// `dirwalk`, and the HEAD-to-index changes (staged, against `head_tree`, HEAD's tree as
/// the ref store read it) unless `nothing_staged`. On reftable, an index without
/// submodules takes [`plain::status`] (gix's platform would read HEAD itself).
///
/// Errors: [`RepoError`] when gix's status fails.
fn gix_status(
    repo: &gix::Repository,
    index: gix::index::File,
    (dirwalk, nothing_staged, head_tree): (bool, bool, ObjectId),
    c: &mut Changed,
) -> Result<(), RepoError> {
    // gix's tree-to-index diff cannot read a sparse index's directory entries: git's can.
    let nothing_staged = nothing_staged || staged_by_git(repo, &index, c)?;
    let dirwalk_options = repo.dirwalk_options().map_err(git)?;
    let submodule = |e: &gix::index::Entry| e.mode == gix::index::entry::Mode::COMMIT;
    if crate::refs::is_reftable(repo) && !index.entries().iter().any(submodule) {
        let walk = dirwalk.then(|| {
            let mut walk = dirwalk_options.emit_untracked(gix::dir::walk::EmissionMode::Matching);
            walk.set_emit_ignored(Some(gix::dir::walk::EmissionMode::Matching));
            walk
        });
        return plain::status(repo, &index, (walk, nothing_staged, head_tree), c);
    }
    let platform = repo
        .status(gix::progress::Discard)
        .map_err(git)?
        .head_tree(head_tree)
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
    let reftable = crate::refs::is_reftable(repo);
    let kept = |item: &gix::status::index_worktree::Item| {
        !(reftable && plain::clean_submodule(repo, item))
    };
    if nothing_staged {
        for item in platform
            .into_index_worktree_iter(no_patterns)
            .map_err(git)?
        {
            let item = item.map_err(git)?;
            if kept(&item) {
                c.worktree_item(item);
            }
        }
    } else {
        for item in platform.into_iter(no_patterns).map_err(git)? {
            match item.map_err(git)? {
                gix::status::Item::TreeIndex(change) => {
                    c.staged.insert(change.location().to_owned());
                }
                gix::status::Item::IndexWorktree(item) if kept(&item) => c.worktree_item(item),
                gix::status::Item::IndexWorktree(_) => {}
            }
        }
    }
    Ok(())
}

/// Clear, in our own copy of the index (never written), the flags that make git skip an
/// entry's worktree file: `assume-unchanged`, a file-system monitor's "valid" mark, and
/// `skip-worktree` where the file is on disk (a sparse checkout's absent files stay
/// skipped). Returns the entries whose `assume-unchanged` or `skip-worktree` was cleared.
fn unflag(
    repo: &gix::Repository,
    index: &mut gix::index::File,
) -> Vec<(gix::bstr::BString, &'static str)> {
    use gix::index::entry::Flags;
    let workdir = repo.workdir().map(Path::to_path_buf);
    let (entries, backing) = index.entries_mut_and_pathbacking();
    let mut flagged = Vec::new();
    for e in entries.iter_mut() {
        e.flags.remove(Flags::FSMONITOR_VALID);
        if !e
            .flags
            .intersects(Flags::ASSUME_VALID | Flags::SKIP_WORKTREE)
        {
            continue;
        }
        let path = e.path_in(backing).to_owned();
        if e.flags.contains(Flags::ASSUME_VALID) {
            e.flags.remove(Flags::ASSUME_VALID);
            flagged.push((path.clone(), "assume-unchanged"));
        }
        if e.flags.contains(Flags::SKIP_WORKTREE) {
            let on_disk = workdir.as_ref().is_some_and(|w| {
                gix::path::from_bstr(path.as_bstr())
                    .is_ok_and(|p| std::fs::symlink_metadata(w.join(p)).is_ok())
            });
            if on_disk {
                e.flags.remove(Flags::SKIP_WORKTREE);
                flagged.push((path, "skip-worktree"));
            }
        }
    }
    flagged
}

/// Where a worktree for `branch` is added: under `recode.worktreeDir` (relative to the
/// main worktree), else beside the main worktree in `<name>.worktrees/`; the directory is
/// the branch name with anything but `[A-Za-z0-9._-]` turned into `-`.
pub(crate) fn default_path(
    repo: &gix::Repository,
    worktree_dir: Option<&str>,
    branch: &str,
) -> String {
    let root = match worktree_dir {
        Some(d) => main_dir(repo).join(d),
        None => {
            let main = main_dir(repo);
            let name = main
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_else(|| "repo".into());
            main.parent()
                .map(|p| p.join(format!("{name}.worktrees")))
                .unwrap_or_else(|| main.join(".worktrees"))
        }
    };
    let mut dir_name = crate::fence::component(branch);
    if dir_name.is_empty() {
        dir_name = "worker".into();
    }
    root.join(dir_name).display().to_string()
}

/// The main worktree's directory (the common dir's parent for a non-bare repository).
pub(crate) fn main_dir(repo: &gix::Repository) -> std::path::PathBuf {
    let common = repo.common_dir();
    let common = common
        .canonicalize()
        .unwrap_or_else(|_| common.to_path_buf());
    if common.file_name().is_some_and(|n| n == ".git") {
        common.parent().map(Path::to_path_buf).unwrap_or(common)
    } else {
        common
    }
}

/// The mtime of `p` (not following symlinks), if it exists.
pub(crate) fn mtime(p: &Path) -> Option<Timestamp> {
    let m = std::fs::symlink_metadata(p).ok()?.modified().ok()?;
    Timestamp::try_from(m).ok()
}

/// The branch a detached worktree left, from its HEAD reflog (SPEC special cases): the
/// newest `checkout: moving from <branch> to …`, or the branch whose tip HEAD was on
/// when a rebase started (`rebase (start)` / `rebase -i (start)`: its old id). `tips` are
/// the local branches and their tips. `None` when the reflog names neither.
pub(crate) fn left_branch(
    repo: &gix::Repository,
    git_dir: &Path,
    tips: &std::collections::BTreeMap<String, ObjectId>,
) -> Option<String> {
    for line in crate::refs::head_log(repo, git_dir) {
        let message = line.message.as_str();
        if let Some(rest) = message.strip_prefix("checkout: moving from ") {
            if let Some((from, _)) = rest.split_once(" to ")
                && tips.contains_key(from)
            {
                return Some(from.to_string());
            }
        } else if message.starts_with("rebase") && message.contains("(start)") {
            let old = line.previous;
            if let Some((b, _)) = tips.iter().find(|(_, t)| **t == old) {
                return Some(b.clone());
            }
        }
    }
    None
}
