//! The ref store: every ref read and every compare-and-swap ref update of git-recode goes
//! through here, whatever the repository's ref format (`extensions.refStorage`).
//!
//! - `files` (git's default): gix reads and writes the loose and packed refs, as before
//!   ([`files`]); nothing else runs.
//! - `reftable` (git 2.45+): git's own plumbing ([`reftable`]): one `git for-each-ref` lists
//!   every ref and one `git worktree list --porcelain -z` every worktree's HEAD, each kept
//!   for the run while the stack it read is unchanged (`reftable/tables.list` holds the
//!   same tables: any write, by anyone, rewrites it), and `git update-ref` with the old
//!   value is the compare-and-swap.
//!
//! Both give the same answers and the same compare-and-swap: a write that expected a
//! value the ref no longer holds fails as [`SwapError`] with `moved`, and a writer's lock
//! standing as `held`; callers retry those (a lost race), nothing else.

use std::path::{Path, PathBuf};

use gix::ObjectId;

mod files;
mod reftable;

/// What a ref holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// An object id (a commit, a tag, a blob: whatever it names).
    Id(ObjectId),
    /// Another ref's full name (`refs/remotes/origin/HEAD` → `refs/remotes/origin/main`).
    Symbolic(String),
}

/// One ref of a listing ([`list`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ref {
    /// Its full name (`refs/heads/issue-7`).
    pub name: String,
    /// What it holds.
    pub target: Target,
}

/// A worktree's HEAD ([`head`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Head {
    /// On a branch: its full name, and its commit (`None`: the branch does not exist, an
    /// unborn HEAD).
    Branch {
        /// `refs/heads/<branch>`.
        name: String,
        /// The branch's tip, peeled; `None` when it does not exist.
        id: Option<ObjectId>,
    },
    /// Detached at a commit.
    Detached(ObjectId),
}

impl Head {
    /// The commit HEAD is at (`None` for an unborn branch).
    pub(crate) fn id(&self) -> Option<ObjectId> {
        match self {
            Head::Branch { id, .. } => *id,
            Head::Detached(id) => Some(*id),
        }
    }

    /// The full name of the branch HEAD is on (`None` when detached).
    pub(crate) fn branch(&self) -> Option<&str> {
        match self {
            Head::Branch { name, .. } => Some(name),
            Head::Detached(_) => None,
        }
    }
}

/// One reflog entry ([`head_log`], [`log`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LogLine {
    /// The value before (the null id when the ref was created; on reftable, the next older
    /// entry's new value).
    pub previous: ObjectId,
    /// The value after.
    pub new: ObjectId,
    /// The reflog message (`checkout: moving from a to b`).
    pub message: String,
}

/// What a compare-and-swap expects the ref to hold before it ([`Edit`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expect {
    /// The ref must not exist.
    Absent,
    /// The ref must hold exactly this id.
    Is(ObjectId),
    /// Whatever it holds (a remote-tracking copy).
    Any,
}

impl Expect {
    /// [`Expect::Is`] the id, or [`Expect::Absent`].
    pub(crate) fn from(old: Option<ObjectId>) -> Expect {
        old.map_or(Expect::Absent, Expect::Is)
    }
}

/// One ref update ([`swap`]).
#[derive(Clone, Debug)]
pub(crate) struct Edit<'a> {
    /// The ref's full name.
    pub name: &'a str,
    /// What it must hold first.
    pub expect: Expect,
    /// Its new value; `None` deletes it.
    pub new: Option<ObjectId>,
    /// The reflog message.
    pub message: &'a str,
}

/// Why a ref could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the refs: {0}")]
pub(crate) struct RefsError(#[source] pub Box<dyn std::error::Error + Send + Sync>);

/// Why a [`swap`] did not happen.
#[derive(Debug, thiserror::Error)]
#[error("{source}")]
pub(crate) struct SwapError {
    /// The ref did not hold what the edit expected (moved, created or deleted meanwhile):
    /// a lost race. Not set when the backend cannot tell (gix's files backend: re-read
    /// the ref to know).
    pub moved: bool,
    /// A writer's lock stood (the ref's lock file, `packed-refs.lock`, the reftable
    /// stack's `tables.list.lock`): a lost race too.
    pub held: bool,
    /// The backend's error (gix's, or git's message).
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

impl SwapError {
    /// Whether it is a lost race worth a retry ([`SwapError::moved`] or [`SwapError::held`]).
    pub(crate) fn lost(&self) -> bool {
        self.moved || self.held
    }
}

/// The lock files a write of a ref may meet ([`locks`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Locks {
    /// The ref's own lock (`<common>/<name>.lock`, files only).
    pub own: Option<PathBuf>,
    /// The lock of every ref at once: `packed-refs.lock` (files), `reftable/tables.list.lock`.
    pub shared: PathBuf,
}

/// Whether `repo` keeps its refs in a reftable (`extensions.refStorage = reftable`).
pub(crate) fn is_reftable(repo: &gix::Repository) -> bool {
    repo.config_snapshot()
        .string("extensions.refStorage")
        .is_some_and(|v| v.eq_ignore_ascii_case(b"reftable"))
}

/// The format `extensions.refStorage` names, lowercased, when it is one this store does
/// not read (neither `files` nor `reftable`).
pub(crate) fn unknown_format(repo: &gix::Repository) -> Option<String> {
    let v = repo
        .config_snapshot()
        .string("extensions.refStorage")?
        .to_string()
        .to_ascii_lowercase();
    (v != "files" && v != "reftable").then_some(v)
}

/// What `name` holds, unresolved; `None` when it does not exist.
///
/// Errors: [`RefsError`] when the refs cannot be read.
pub(crate) fn find(repo: &gix::Repository, name: &str) -> Result<Option<Target>, RefsError> {
    if is_reftable(repo) {
        reftable::find(repo, name)
    } else {
        files::find(repo, name)
    }
}

/// The object `name` leads to: symbolic refs followed, tags peeled; `None` when it does
/// not exist (or leads nowhere).
///
/// Errors: [`RefsError`] when the refs or a tag cannot be read.
pub(crate) fn id(repo: &gix::Repository, name: &str) -> Result<Option<ObjectId>, RefsError> {
    if is_reftable(repo) {
        reftable::id(repo, name)
    } else {
        files::id(repo, name)
    }
}

/// Every ref whose full name starts with `prefix` (`""`: all of them, HEAD not included),
/// sorted by name.
///
/// Errors: [`RefsError`] when the refs cannot be read.
pub(crate) fn list(repo: &gix::Repository, prefix: &str) -> Result<Vec<Ref>, RefsError> {
    if is_reftable(repo) {
        reftable::list(repo, prefix)
    } else {
        files::list(repo, prefix)
    }
}

/// The object a listed ref leads to (as [`id`]); `None` when it leads nowhere.
pub(crate) fn peeled(repo: &gix::Repository, r: &Ref) -> Option<ObjectId> {
    match &r.target {
        Target::Id(id) => peel(repo, *id),
        Target::Symbolic(to) => id(repo, to).ok().flatten(),
    }
}

/// `id` with tags peeled (an annotated tag → what it tags, to the end); `None` when a
/// tag in the chain cannot be read.
pub(crate) fn peel(repo: &gix::Repository, id: ObjectId) -> Option<ObjectId> {
    match repo.find_header(id) {
        Ok(h) if h.kind() == gix::object::Kind::Tag => {
            let object = repo.find_object(id).ok()?;
            Some(object.peel_tags_to_end().ok()?.id)
        }
        _ => Some(id),
    }
}

/// The HEAD of `repo`'s own worktree (its git dir: the main worktree's, or a linked
/// worktree's admin directory); `None` when it cannot be read.
pub(crate) fn head(repo: &gix::Repository) -> Option<Head> {
    if is_reftable(repo) {
        reftable::head(repo)
    } else {
        files::head(repo)
    }
}

/// The tree of the commit HEAD of `repo`'s own worktree is at; the empty tree for an
/// unborn HEAD (what a status compares the index with).
///
/// Errors: [`RefsError`] when HEAD or its commit cannot be read.
pub(crate) fn head_tree(repo: &gix::Repository) -> Result<ObjectId, RefsError> {
    let boxed = |e: Box<dyn std::error::Error + Send + Sync>| RefsError(e);
    if !is_reftable(repo) {
        return Ok(repo
            .head_tree_id_or_empty()
            .map_err(|e| boxed(Box::new(e)))?
            .detach());
    }
    let Some(head) = head(repo) else {
        return Err(boxed("HEAD cannot be read".into()));
    };
    match head.id() {
        None => Ok(ObjectId::empty_tree(repo.object_hash())),
        Some(id) => Ok(repo
            .find_commit(id)
            .map_err(|e| boxed(Box::new(e)))?
            .tree_id()
            .map_err(|e| boxed(Box::new(e)))?
            .detach()),
    }
}

/// The HEAD reflog of the worktree of `repo` whose own git dir is `git_dir` (the main
/// worktree's, or a linked worktree's admin directory), newest first; empty without one.
/// On reftable an unborn HEAD's reflog cannot be read through git (git resolves HEAD
/// first): empty.
pub(crate) fn head_log(repo: &gix::Repository, git_dir: &Path) -> Vec<LogLine> {
    if is_reftable(repo) {
        reftable::log(repo, git_dir, "HEAD")
    } else {
        files::head_log(git_dir)
    }
}

/// The reflog of the shared ref `name` (`refs/stash`), newest first; empty without one.
pub(crate) fn log(repo: &gix::Repository, name: &str) -> Vec<LogLine> {
    if is_reftable(repo) {
        reftable::log(repo, repo.common_dir(), name)
    } else {
        files::log(repo, name)
    }
}

/// The operation in progress in the worktree of `own` (its own repository), as gix's
/// `Repository::state()` reads it from files. On reftable `CHERRY_PICK_HEAD` and
/// `REVERT_HEAD` are refs of the worktree's stack, not files: when gix sees nothing and a
/// `MERGE_MSG` says a conflicted pick or revert may be under way, git is asked (one run,
/// only then).
pub(crate) fn in_progress(own: &gix::Repository) -> Option<gix::state::InProgress> {
    use gix::state::InProgress as P;
    if let Some(state) = own.state() {
        return Some(state);
    }
    let dir = own.git_dir();
    if !is_reftable(own) || !dir.join("MERGE_MSG").is_file() {
        return None;
    }
    let sequence = dir.join("sequencer").join("todo").is_file();
    let exists = |name: &str| reftable::root_ref_exists(dir, name);
    if exists("CHERRY_PICK_HEAD") {
        Some(if sequence {
            P::CherryPickSequence
        } else {
            P::CherryPick
        })
    } else if exists("REVERT_HEAD") {
        Some(if sequence {
            P::RevertSequence
        } else {
            P::Revert
        })
    } else {
        None
    }
}

/// Apply `edit` as a compare-and-swap: the ref moves (or goes) only if it holds what
/// `edit.expect` says. `Ok(true)`: done. `Ok(false)`: the ref was expected absent and was
/// found created meanwhile holding exactly the new value (gix's files backend accepts
/// that as done; here it is a lost race, as on reftable, where it is a [`SwapError`]).
///
/// Errors: [`SwapError`] (`moved`/`held`: a lost race; otherwise the cause).
pub(crate) fn swap(repo: &gix::Repository, edit: &Edit) -> Result<bool, SwapError> {
    if is_reftable(repo) {
        reftable::swap(repo, edit).map(|()| true)
    } else {
        files::swap(repo, edit)
    }
}

/// The lock files a write of `name` may meet.
pub(crate) fn locks(repo: &gix::Repository, name: &str) -> Locks {
    let common = repo.common_dir();
    if is_reftable(repo) {
        Locks {
            own: None,
            shared: common.join("reftable").join("tables.list.lock"),
        }
    } else {
        Locks {
            own: Some(common.join(format!("{name}.lock"))),
            shared: common.join("packed-refs.lock"),
        }
    }
}

/// The lock file that guards every ref of the repository whose common dir is `common`:
/// `packed-refs.lock` (files) or `reftable/tables.list.lock`.
pub(crate) fn shared_lock(repo: &gix::Repository) -> PathBuf {
    locks(repo, "HEAD").shared
}

/// `git` runs of this store are killed past this (a ref read or update takes
/// milliseconds; it is not configurable: the store imports no configuration).
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

/// `p` made absolute and canonical when it exists.
fn canonical(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    abs.canonicalize().unwrap_or(abs)
}

#[cfg(test)]
mod tests;
