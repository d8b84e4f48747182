//! The reftable backend, through git's own plumbing (gix reads no reftable).
//!
//! Reads are in bulk and kept for the run: one `git for-each-ref` lists every shared ref
//! and one `git worktree list --porcelain -z` every worktree's HEAD. A listing is used
//! while the stack it was read from is unchanged: `reftable/tables.list` (the main
//! stack; a linked worktree's HEAD lives in `<admin>/reftable/`) names the stack's tables,
//! and every write, by git-recode or anyone, replaces it with other names. So a read after
//! any write lists again, and `status` over 100 worktrees runs two processes, not one a
//! ref. Writes are `git update-ref` with the old value (git's transaction: it verifies the
//! old value under the stack's lock).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gix::ObjectId;

use super::{DEADLINE, Edit, Expect, Head, LogLine, Ref, RefsError, SwapError, Target, canonical};
use crate::git::{Git, GitError};

/// What `tables.list` of the stack in `dir` holds (empty when there is none): the
/// listing's validity stamp.
fn stamp(dir: &Path) -> Vec<u8> {
    std::fs::read(dir.join("reftable").join("tables.list")).unwrap_or_default()
}

fn read_err(e: GitError) -> RefsError {
    RefsError(Box::new(e))
}

/// Every shared ref, as one `for-each-ref` saw it, and the stamp it was read under.
struct Listing {
    stamp: Vec<u8>,
    refs: BTreeMap<String, Target>,
}

/// The listings of this run, by common dir.
static LISTINGS: Mutex<Vec<(PathBuf, Arc<Listing>)>> = Mutex::new(Vec::new());

/// The shared refs of `repo`, listed again only when the stack changed since.
fn listing(repo: &gix::Repository) -> Result<Arc<Listing>, RefsError> {
    let common = canonical(repo.common_dir());
    let before = stamp(&common);
    if let Ok(cache) = LISTINGS.lock()
        && let Some((_, l)) = cache.iter().find(|(d, _)| *d == common)
        && l.stamp == before
    {
        return Ok(Arc::clone(l));
    }
    let out = Git::read(&common, DEADLINE)
        .args([
            "for-each-ref",
            "--format=%(refname)%00%(objectname)%00%(symref)",
        ])
        .output()
        .map_err(read_err)?;
    let mut refs = BTreeMap::new();
    for line in out.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let mut fields = line.split(|b| *b == 0);
        let (Some(name), Some(id), symref) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        let name = String::from_utf8_lossy(name).into_owned();
        let target = match symref.filter(|s| !s.is_empty()) {
            Some(s) => Target::Symbolic(String::from_utf8_lossy(s).into_owned()),
            None => match ObjectId::from_hex(id) {
                Ok(id) => Target::Id(id),
                Err(_) => continue,
            },
        };
        refs.insert(name, target);
    }
    let listing = Arc::new(Listing {
        stamp: before.clone(),
        refs,
    });
    // Kept only when nothing was written during the listing (else read again next time).
    if stamp(&common) == before
        && let Ok(mut cache) = LISTINGS.lock()
    {
        cache.retain(|(d, _)| *d != common);
        cache.push((common, Arc::clone(&listing)));
    }
    Ok(listing)
}

/// [`super::find`] from the run's listing. `for-each-ref` leaves out a symbolic ref whose
/// target is gone: a `…/HEAD` the listing lacks (`refs/remotes/origin/HEAD` left naming a
/// branch renamed on the server) is asked of `git symbolic-ref` (one run; other names are
/// not symbolic by convention, and a missing one costs nothing).
pub(super) fn find(repo: &gix::Repository, name: &str) -> Result<Option<Target>, RefsError> {
    if let Some(t) = listing(repo)?.refs.get(name) {
        return Ok(Some(t.clone()));
    }
    if !name.ends_with("/HEAD") {
        return Ok(None);
    }
    let out = Git::read(repo.common_dir(), DEADLINE)
        .args(["symbolic-ref", "-q", "--no-recurse", name])
        .capture()
        .map_err(read_err)?;
    let target = out.stdout.trim();
    Ok((out.ok && !target.is_empty()).then(|| Target::Symbolic(target.to_string())))
}

/// [`super::id`] from the run's listing: symbolic refs followed (at most 5), tags peeled.
pub(super) fn id(repo: &gix::Repository, name: &str) -> Result<Option<ObjectId>, RefsError> {
    let l = listing(repo)?;
    Ok(resolve(&l, name).and_then(|id| super::peel(repo, id)))
}

/// The id `name` leads to in `l`, symbolic refs followed.
fn resolve(l: &Listing, name: &str) -> Option<ObjectId> {
    let mut name = name.to_string();
    for _ in 0..5 {
        match l.refs.get(&name)? {
            Target::Id(id) => return Some(*id),
            Target::Symbolic(to) => name = to.clone(),
        }
    }
    None
}

/// [`super::list`] from the run's listing.
pub(super) fn list(repo: &gix::Repository, prefix: &str) -> Result<Vec<Ref>, RefsError> {
    let l = listing(repo)?;
    Ok(l.refs
        .range(prefix.to_string()..)
        .take_while(|(n, _)| n.starts_with(prefix))
        .map(|(name, target)| Ref {
            name: name.clone(),
            target: target.clone(),
        })
        .collect())
}

/// A worktree's HEAD as `git worktree list` printed it: the branch's full name, or the
/// commit of a detached HEAD.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum RawHead {
    Branch(String),
    Detached(ObjectId),
}

/// Every worktree's HEAD by admin directory, with the stamp of each one's stack when read.
struct Heads {
    by_admin: HashMap<PathBuf, (Vec<u8>, RawHead)>,
}

/// The HEAD listings of this run, by common dir.
static HEADS: Mutex<Vec<(PathBuf, Arc<Heads>)>> = Mutex::new(Vec::new());

/// [`super::head`]: the worktree's HEAD from the run's `worktree list`, listed again when
/// that worktree's stack (the main stack for the main worktree) changed since.
pub(super) fn head(repo: &gix::Repository) -> Option<Head> {
    let common = canonical(repo.common_dir());
    let admin = canonical(repo.git_dir());
    let now = stamp(&admin);
    let cached = HEADS.lock().ok().and_then(|cache| {
        let (_, heads) = cache.iter().find(|(d, _)| *d == common)?;
        let (s, h) = heads.by_admin.get(&admin)?;
        (*s == now).then(|| h.clone())
    });
    let raw = match cached {
        Some(h) => h,
        None => {
            let heads = list_heads(&common).ok()?;
            let h = heads.by_admin.get(&admin).map(|(_, h)| h.clone());
            if let Ok(mut cache) = HEADS.lock() {
                cache.retain(|(d, _)| *d != common);
                cache.push((common, Arc::new(heads)));
            }
            h?
        }
    };
    Some(match raw {
        RawHead::Detached(id) => Head::Detached(id),
        RawHead::Branch(name) => {
            let id = id(repo, &name).ok().flatten();
            Head::Branch { name, id }
        }
    })
}

/// Every worktree's HEAD: the admin directories and their stamps first, then one
/// `git worktree list --porcelain -z`, each entry matched to its admin directory by path
/// (the main worktree is the first entry; a linked one's path is its admin directory's
/// `gitdir` without `/.git`).
///
/// Errors: git's, when the list cannot be read.
fn list_heads(common: &Path) -> Result<Heads, GitError> {
    let mut admins: Vec<(PathBuf, Vec<u8>, Option<PathBuf>)> =
        vec![(common.to_path_buf(), stamp(common), None)];
    if let Ok(dir) = std::fs::read_dir(common.join("worktrees")) {
        for entry in dir.flatten() {
            let admin = canonical(&entry.path());
            let path = linked_path(&admin);
            admins.push((admin.clone(), stamp(&admin), path));
        }
    }
    let out = Git::read(common, DEADLINE)
        .args(["worktree", "list", "--porcelain", "-z"])
        .output()?;
    let mut by_admin = HashMap::new();
    for (i, record) in porcelain_records(&out).into_iter().enumerate() {
        let Some(head) = record.head else { continue };
        let found = if i == 0 {
            admins.first()
        } else {
            let path = canonical(Path::new(&record.path));
            admins[1..]
                .iter()
                .find(|(_, _, p)| p.as_ref() == Some(&path))
        };
        if let Some((admin, s, _)) = found {
            by_admin.insert(admin.clone(), (s.clone(), head));
        }
    }
    Ok(Heads { by_admin })
}

/// The worktree directory a linked worktree's admin directory names (`gitdir`, without
/// `/.git`; a relative one against the admin directory), canonical when it exists.
fn linked_path(admin: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(admin.join("gitdir")).ok()?;
    let gitdir = admin.join(text.trim_end_matches(['\n', '\r']));
    let dir = if gitdir.file_name().is_some_and(|n| n == ".git") {
        gitdir.parent()?.to_path_buf()
    } else {
        gitdir
    };
    Some(canonical(&dir))
}

/// One worktree of `git worktree list --porcelain -z`.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Record {
    /// The worktree's directory, as git prints it.
    pub(super) path: String,
    /// Its HEAD; `None` for a bare main worktree.
    pub(super) head: Option<RawHead>,
}

/// The records of `git worktree list --porcelain -z`: attributes ended by NUL, a record
/// by an empty one (`worktree <path>`, `HEAD <id>`, `branch <ref>` or `detached`, …).
pub(super) fn porcelain_records(out: &[u8]) -> Vec<Record> {
    let mut records = Vec::new();
    let (mut path, mut id, mut branch) = (None::<String>, None::<ObjectId>, None::<String>);
    for attr in out.split(|b| *b == 0) {
        let text = String::from_utf8_lossy(attr);
        if text.is_empty() {
            if let Some(p) = path.take() {
                let head = match (branch.take(), id.take()) {
                    (Some(b), _) => Some(RawHead::Branch(b)),
                    (None, Some(i)) if !i.is_null() => Some(RawHead::Detached(i)),
                    _ => None,
                };
                records.push(Record { path: p, head });
            }
            (id, branch) = (None, None);
            continue;
        }
        if let Some(p) = text.strip_prefix("worktree ") {
            path = Some(p.to_string());
        } else if let Some(h) = text.strip_prefix("HEAD ") {
            id = ObjectId::from_hex(h.as_bytes()).ok();
        } else if let Some(b) = text.strip_prefix("branch ") {
            branch = Some(b.to_string());
        }
    }
    records
}

/// Whether the root ref `name` (`CHERRY_PICK_HEAD`) exists for the worktree whose own git
/// dir is `git_dir` (`git rev-parse --verify` run there).
pub(super) fn root_ref_exists(git_dir: &Path, name: &str) -> bool {
    Git::read(git_dir, DEADLINE)
        .args(["rev-parse", "--verify", "-q", name])
        .capture()
        .is_ok_and(|c| c.ok)
}

/// [`super::head_log`] (`name` `HEAD`, `git_dir` the worktree's own) and [`super::log`]
/// (`git_dir` the common dir): `git log -g` run in `git_dir`, each entry's previous value
/// the next older entry's new one. Empty when git cannot walk it (no reflog, an unborn
/// HEAD).
pub(super) fn log(repo: &gix::Repository, git_dir: &Path, name: &str) -> Vec<LogLine> {
    let Ok(out) = Git::read(git_dir, DEADLINE)
        .args(["log", "-g", "--format=%H%x00%gs", name, "--"])
        .output()
    else {
        return Vec::new();
    };
    let mut lines: Vec<LogLine> = Vec::new();
    let null = ObjectId::null(repo.object_hash());
    for line in out.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let mut fields = line.splitn(2, |b| *b == 0);
        let (Some(id), message) = (fields.next(), fields.next()) else {
            continue;
        };
        let Ok(new) = ObjectId::from_hex(id) else {
            continue;
        };
        lines.push(LogLine {
            previous: null,
            new,
            message: String::from_utf8_lossy(message.unwrap_or_default()).into_owned(),
        });
    }
    for i in 1..lines.len() {
        lines[i - 1].previous = lines[i].new;
    }
    lines
}

/// [`super::swap`]: `git update-ref --no-deref` with the old value (`-d` to delete).
pub(super) fn swap(repo: &gix::Repository, edit: &Edit) -> Result<(), SwapError> {
    let null = ObjectId::null(repo.object_hash()).to_hex().to_string();
    let old = match edit.expect {
        Expect::Absent => Some(null.clone()),
        Expect::Is(id) => Some(id.to_hex().to_string()),
        Expect::Any => None,
    };
    let mut args = vec![
        "update-ref".to_string(),
        "--no-deref".into(),
        "-m".into(),
        edit.message.to_string(),
    ];
    match edit.new {
        Some(id) => args.extend([edit.name.to_string(), id.to_hex().to_string()]),
        None => args.extend(["-d".to_string(), edit.name.to_string()]),
    }
    args.extend(old);
    let captured = Git::new(repo.common_dir(), DEADLINE)
        .args(&args)
        .capture()
        .map_err(|e| SwapError {
            moved: false,
            held: false,
            source: Box::new(e),
        })?;
    if captured.ok {
        return Ok(());
    }
    let stderr = captured.stderr.trim().to_string();
    let (moved, held) = classify(&stderr);
    Err(SwapError {
        moved,
        held,
        source: stderr.into(),
    })
}

/// Read git's refusal of an update: `(moved, held)`. Moved: the ref did not hold the old
/// value (`is at … but expected …`, `reference already exists`, `reference is missing`,
/// `unable to resolve reference`). Held: the stack's lock stood (`cannot lock references`)
/// or the stack changed under the transaction (`outdated`).
pub(super) fn classify(stderr: &str) -> (bool, bool) {
    let moved = [
        "but expected",
        "already exists",
        "is missing",
        "unable to resolve reference",
    ]
    .iter()
    .any(|w| stderr.contains(w));
    let held = !moved
        && ["cannot lock references", "outdated", "tables.list.lock"]
            .iter()
            .any(|w| stderr.contains(w));
    (moved, held)
}
