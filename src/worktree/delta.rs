//! A worktree's status from the last tick's and what the watcher says changed since
//! (issue 38): the cost follows what changed, not the size of the worktree.
//!
//! Each full reading taken with a watcher stores, beside the worktree's own git dir
//! (`<admin>/recode/watch.json`), the changed paths it found, the watcher's clock taken
//! *before* it read, and a fingerprint of everything else the answer depends on (the index
//! file, HEAD, the exclude files, the configuration git's status reads, the worktree's
//! path, this version). The next tick asks the watcher what changed since that clock and
//! proves only those names; every other path is proven by the stored answer.
//!
//! Correctness never rests on the watcher: a fingerprint that differs, a clock the server
//! does not know (a restart, a deleted watch, an overflow), any error, too many changes,
//! or any name this module does not classify exactly (a new directory that is not ignored,
//! a removed directory, a `.gitignore`, a submodule, a `.git`, a file turned directory, a
//! flagged entry) means a full reading, as without a watcher. Nothing irreversible reads
//! through it: `recover`'s re-check before acting reads whole ([`super::status`]).

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use gix::bstr::{BStr, BString, ByteSlice};
use gix::index::entry::{Flags, Mode};

use super::watch::{Change, Root, Watcher};
use super::{Changed, RepoError, Status, changed, open_bound, own_index, status_of, unflag};

/// More changed names than this since the last tick: read the worktree whole.
const MAX_CHANGES: usize = 20_000;

/// What one reading stored for the next tick.
#[derive(serde::Serialize, serde::Deserialize)]
struct Stored {
    /// [`fingerprint`] when it was read.
    key: String,
    /// Where the watcher watches the worktree.
    root: Root,
    /// The watcher's clock taken before the reading.
    clock: String,
    staged: Vec<String>,
    unstaged: Vec<String>,
    untracked: Vec<String>,
    conflicted: Vec<String>,
    any_ignored: bool,
    /// Flagged entries (`assume-unchanged`, `skip-worktree` on disk) and their flag.
    flagged: Vec<(String, String)>,
}

/// The status of the worktree at `path` (admin directory `admin`), as [`super::status`]
/// reads it, from the last tick's answer and what `watcher` says changed since, or read
/// whole when that cannot be trusted (see the module's comment). A whole reading stores
/// its answer for the next tick when the watcher gave a clock first.
///
/// Errors: as [`super::status`]; a watcher's failure is never one.
pub(crate) fn status_watched(
    path: &Path,
    admin: &Path,
    watcher: &Watcher,
) -> Result<Status, RepoError> {
    let (repo, c, _) = changed_watched(path, admin, watcher)?;
    Ok(status_of(&repo, path, &c))
}

/// The reading of the worktree at `path` (admin directory `admin`) as text, one changed
/// path a line with its kind (`staged`, `unstaged`, `untracked`, `conflicted`), then
/// `any_ignored` and the hidden changes: whole, or through the Watchman server listening
/// on `watchman` (never started here). For tests that hold the two readings side by side;
/// with the text, how it was read: `whole`, `idle` (nothing changed since the last tick)
/// or `delta` (only the changed names proven).
///
/// Errors: the reading's error, as text.
pub fn reading(
    path: &Path,
    admin: &Path,
    watchman: Option<&Path>,
) -> Result<(String, &'static str), String> {
    let (_, c, via) = match watchman {
        Some(sock) => changed_watched(path, admin, &Watcher::at(sock)),
        None => open_bound(path, admin).and_then(|repo| {
            let c = changed(&repo)?;
            Ok((repo, c, "whole"))
        }),
    }
    .map_err(|e| e.to_string())?;
    let mut out = String::new();
    for (kind, set) in [
        ("staged", &c.staged),
        ("unstaged", &c.unstaged),
        ("untracked", &c.untracked),
        ("conflicted", &c.conflicted),
    ] {
        for p in set {
            out.push_str(&format!("{kind} {p}\n"));
        }
    }
    out.push_str(&format!("any_ignored {}\n", c.any_ignored));
    for h in c.hidden_changes() {
        out.push_str(&format!("hidden {h}\n"));
    }
    Ok((out, via))
}

/// The changed paths of the worktree at `path` through `watcher` (see [`status_watched`]),
/// and how they were read (`whole`, `idle`, `delta`).
///
/// Errors: as [`super::status`].
fn changed_watched(
    path: &Path,
    admin: &Path,
    watcher: &Watcher,
) -> Result<(gix::Repository, Changed, &'static str), RepoError> {
    let repo = open_bound(path, admin)?;
    let workdir = repo.workdir().unwrap_or(path).to_path_buf();
    let file = admin.join("recode").join("watch.json");
    let key = fingerprint(&repo, admin);
    if let Some((c, via)) = key.as_deref().and_then(|k| tick(&repo, watcher, &file, k)) {
        return Ok((repo, c, via));
    }
    // The clock first: whatever changes during the reading is reported next time.
    let start = watcher
        .watch(&workdir)
        .and_then(|root| watcher.clock(&root).map(|clock| (root, clock)));
    if let Err(e) = &start {
        tracing::debug!("status of {}: no watcher ({e})", workdir.display());
    }
    let c = changed(&repo)?;
    match (key, start) {
        (Some(key), Ok((root, clock))) if !has_submodule(&repo) => {
            store(&file, &key, root, clock, &c)
        }
        _ => forget(&file),
    }
    Ok((repo, c, "whole"))
}

/// The answer from the stored one and the watcher's changes since its clock; `None` when
/// there is none to trust. Stores the new answer when something changed.
fn tick(
    repo: &gix::Repository,
    watcher: &Watcher,
    file: &Path,
    key: &str,
) -> Option<(Changed, &'static str)> {
    let shown = file.display();
    let stored: Stored = serde_json::from_slice(&std::fs::read(file).ok()?).ok()?;
    if stored.key != key {
        tracing::debug!("{shown}: the index, HEAD or a setting changed: a full reading");
        return None;
    }
    let since = match watcher.since(&stored.root, &stored.clock) {
        Ok(s) if !s.fresh => s,
        Ok(_) => {
            tracing::debug!("{shown}: the watcher does not know the clock: a full reading");
            return None;
        }
        Err(e) => {
            tracing::debug!("{shown}: {e}: a full reading");
            return None;
        }
    };
    let old = stored.changed()?;
    if since.files.is_empty() {
        tracing::debug!("{shown}: nothing changed since the last tick");
        return Some((old, "idle"));
    }
    if since.files.len() > MAX_CHANGES {
        return None;
    }
    let Some(c) = delta(repo, old, &since.files) else {
        tracing::debug!("{shown}: a change only a full reading classifies");
        return None;
    };
    tracing::debug!("{shown}: {} changed names proven", since.files.len());
    store(file, key, stored.root, since.clock, &c);
    Some((c, "delta"))
}

/// `old` (the answer at the stored clock) with every name of `changes` proven again;
/// `None` when a name needs a full reading (see the module's comment).
fn delta(repo: &gix::Repository, mut c: Changed, changes: &[Change]) -> Option<Changed> {
    let mut index = own_index(repo).ok()?;
    let caps = repo.filesystem_options().ok()?;
    if caps.ignore_case || caps.precompose_unicode || index.is_sparse() {
        return None;
    }
    let mut check = BTreeSet::new();
    {
        let mut excludes = super::proof::Excludes::new(repo, &index);
        let workdir = repo.workdir()?;
        for ch in changes {
            match entry_of(&index, ch.name.as_bytes().as_bstr()) {
                Entry::Special => return None,
                Entry::File(i) => {
                    if ch.exists && ch.kind.as_deref() == Some("d") {
                        return None; // a file turned directory
                    }
                    if index.entries()[i].stage_raw() == 0 {
                        c.unstaged.remove(ch.name.as_bytes().as_bstr());
                        check.insert(i);
                    }
                }
                // Its names are reported one by one; one gone or turned file: a full reading.
                Entry::Dir => (ch.exists && ch.kind.as_deref() == Some("d")).then_some(())?,
                Entry::Untracked => untracked(&mut c, &mut excludes, workdir, ch)?,
                Entry::Under(end) => in_ignored(&mut c, &mut excludes, workdir, &ch.name[..end])?,
            }
        }
    }
    c.flagged = unflag(repo, &mut index);
    let mut seen = Changed::default();
    if !check.is_empty() {
        // gix's status over the changed entries alone (each entry's status is its own;
        // no directory walk): the `.gitattributes` entries stay, marked up to date, for
        // the attributes an unchanged-on-disk one gives.
        index.remove_entries(|i, path, e| {
            let keep = path.ends_with(b".gitattributes");
            if keep && !check.contains(&i) {
                e.flags.insert(Flags::UPTODATE);
            }
            !keep && !check.contains(&i)
        });
        // Nothing staged is asked for: HEAD's tree is not compared.
        let unused = gix::ObjectId::empty_tree(repo.object_hash());
        super::gix_status(repo, index, (false, true, unused), &mut seen).ok()?;
    }
    c.unstaged.extend(seen.unstaged);
    c.conflicted.extend(seen.conflicted);
    for p in &c.conflicted {
        c.staged.remove(p);
        c.unstaged.remove(p);
    }
    Some(c)
}

/// What the index holds at a changed name.
enum Entry {
    /// A file or symlink at this index position (a conflict's first stage).
    File(usize),
    /// A directory: entries are under it.
    Dir,
    /// Nothing at it nor under it; every directory above it holds entries.
    Untracked,
    /// Under a directory the index does not hold (its name is the first `.0` bytes), in
    /// directories it holds.
    Under(usize),
    /// Something only a full reading classifies: a `.git`, `.gitignore` or
    /// `.gitattributes` name, a submodule or what is under one, a flagged entry, a name
    /// under a directory the index does not hold.
    Special,
}

/// What the index holds at `name`.
fn entry_of(index: &gix::index::State, name: &BStr) -> Entry {
    let special = [&b".git"[..], b".gitignore", b".gitattributes"];
    if name.is_empty()
        || name
            .split(|b| *b == b'/')
            .any(|part| special.contains(&part))
    {
        return Entry::Special;
    }
    if let Some(range) = index.entry_range(name) {
        let e = &index.entries()[range.start];
        let flagged = e
            .flags
            .intersects(Flags::ASSUME_VALID | Flags::SKIP_WORKTREE)
            || e.flags.contains(Flags::INTENT_TO_ADD);
        return match e.mode == Mode::COMMIT || flagged {
            true => Entry::Special,
            false => Entry::File(range.start),
        };
    }
    if is_dir(index, name) {
        return Entry::Dir;
    }
    // Every directory above must be one the index holds (not a submodule, not new).
    let mut end = 0;
    while let Some(p) = name[end..].find_byte(b'/') {
        end += p;
        let dir = name[..end].as_bstr();
        if index.entry_range(dir).is_some() {
            return Entry::Special;
        }
        if !is_dir(index, dir) {
            return Entry::Under(end);
        }
        end += 1;
    }
    Entry::Untracked
}

/// The index holds entries under the directory `name`.
fn is_dir(index: &gix::index::State, name: &BStr) -> bool {
    let mut prefix = BString::from(name);
    prefix.push(b'/');
    index
        .prefixed_entries_range(prefix.as_bstr())
        .is_some_and(|r| !r.is_empty())
}

/// A changed name the index does not hold, in a directory it holds: untracked, ignored or
/// gone. `None` when only a full reading classifies it (a directory, a name in an ignored
/// directory, a gone name that may have been the last ignored one).
fn untracked(
    c: &mut Changed,
    excludes: &mut super::proof::Excludes<'_>,
    workdir: &Path,
    ch: &Change,
) -> Option<()> {
    let name = ch.name.as_bytes().as_bstr();
    let parent = match name.rfind_byte(b'/') {
        Some(p) => &name[..=p],
        None => &b""[..],
    };
    if excludes.dir_excluded(parent) {
        return None;
    }
    let mode = match ch.kind.as_deref() {
        Some("f") => Mode::FILE,
        Some("l") => Mode::SYMLINK,
        Some("d") => Mode::DIR,
        _ => return None, // a fifo, a socket, unknown
    };
    if !ch.exists {
        c.untracked.remove(name);
        // The gone name may have been the last ignored entry: only a walk says.
        let gone_ignored = c.any_ignored && excludes.excluded(name, mode) != Some(false);
        return (mode != Mode::DIR && !gone_ignored).then_some(());
    }
    // Watchman's type is of when it looked: the name as it is now decides.
    let path = workdir.join(gix::path::from_bstr(name).ok()?);
    let now = std::fs::symlink_metadata(&path).ok()?;
    let mode = match now.file_type() {
        t if t.is_dir() => Mode::DIR,
        t if t.is_symlink() => Mode::SYMLINK,
        t if t.is_file() => Mode::FILE,
        _ => return None,
    };
    match excludes.excluded(name, mode)? {
        true => {
            c.untracked.remove(name);
            c.any_ignored = true;
        }
        // A new directory that is not ignored: its files are counted one by one.
        false if mode == Mode::DIR => return None,
        false => {
            c.untracked.insert(name.to_owned());
        }
    }
    Some(())
}

/// A changed name under `dir`, a directory the index does not hold: when `dir` is
/// ignored and still there, the name changes nothing a status counts (git lists no
/// untracked file in an ignored directory, and `dir` itself is the ignored entry met).
/// `None` otherwise: an untracked directory's files are for a full reading.
fn in_ignored(
    c: &mut Changed,
    excludes: &mut super::proof::Excludes<'_>,
    workdir: &Path,
    dir: &str,
) -> Option<()> {
    let name = dir.as_bytes().as_bstr();
    let parent = match name.rfind_byte(b'/') {
        Some(p) => &name[..=p],
        None => &b""[..],
    };
    let on_disk = std::fs::symlink_metadata(workdir.join(dir)).is_ok_and(|m| m.is_dir());
    let ignored = on_disk
        && !excludes.dir_excluded(parent)
        && excludes.excluded(name, Mode::DIR) == Some(true);
    c.any_ignored |= ignored;
    ignored.then_some(())
}

/// The index of `repo` holds a submodule (or cannot be read): a submodule's commit moves
/// in its own git dir, where no watch on the worktree sees it, so such a worktree is
/// always read whole.
fn has_submodule(repo: &gix::Repository) -> bool {
    repo.index_or_empty().map_or(true, |index| {
        index.entries().iter().any(|e| e.mode == Mode::COMMIT)
    })
}

/// Everything a stored answer depends on besides the worktree's files, as one string;
/// `None` when part of it cannot be read (then nothing is stored).
fn fingerprint(repo: &gix::Repository, admin: &Path) -> Option<String> {
    let mut parts = vec![
        format!("recode {} watch 1", env!("CARGO_PKG_VERSION")),
        repo.workdir()?.display().to_string(),
    ];
    let index = repo.index_path();
    parts.push(stamp(&index));
    parts.push(index_checksum(&index));
    let head = crate::refs::head(repo)?;
    parts.push(format!("{:?} {:?}", head.branch(), head.id()));
    let common = repo.common_dir();
    let mut files: Vec<PathBuf> = vec![
        common.join("info").join("exclude"),
        common.join("info").join("attributes"),
        admin.join("config.worktree"),
    ];
    let cfg = repo.config_snapshot();
    if let Ok(Some(p)) = cfg.trusted_path("core.excludesFile") {
        files.push(p);
    }
    // git's default global exclude and attribute files.
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")));
    if let Some(x) = xdg {
        files.extend([
            x.join("git").join("ignore"),
            x.join("git").join("attributes"),
        ]);
    }
    parts.extend(files.iter().map(|f| stamp(f)));
    // The settings a status reads, wherever they were set.
    for name in ["core", "status", "submodule", "index", "extensions", "diff"] {
        for section in cfg.plumbing().sections_by_name(name).into_iter().flatten() {
            parts.push(section.to_bstring().to_string());
        }
    }
    Some(parts.join("\n"))
}

/// `path`'s identity and change stamps (inode, size, mtime and ctime to the nanosecond),
/// or `-` when it does not exist.
fn stamp(path: &Path) -> String {
    match std::fs::symlink_metadata(path) {
        Ok(m) => format!(
            "{} {} {} {}.{} {}.{}",
            path.display(),
            m.ino(),
            m.len(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec()
        ),
        Err(_) => format!("{} -", path.display()),
    }
}

/// The index file's trailing checksum (its last 32 bytes, hex), empty when unreadable.
fn index_checksum(path: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let mut tail = [0u8; 32];
    let read = std::fs::File::open(path).and_then(|mut f| {
        f.seek(SeekFrom::End(-32))?;
        f.read_exact(&mut tail)
    });
    match read {
        Ok(()) => tail.iter().map(|b| format!("{b:02x}")).collect(),
        Err(_) => String::new(),
    }
}

impl Stored {
    /// The stored answer as changed paths; `None` when a flag name is unknown.
    fn changed(&self) -> Option<Changed> {
        let set = |v: &[String]| v.iter().map(|p| BString::from(p.as_str())).collect();
        let flagged = self
            .flagged
            .iter()
            .map(|(p, f)| {
                let flag = match f.as_str() {
                    "assume-unchanged" => "assume-unchanged",
                    "skip-worktree" => "skip-worktree",
                    _ => return None,
                };
                Some((BString::from(p.as_str()), flag))
            })
            .collect::<Option<_>>()?;
        Some(Changed {
            staged: set(&self.staged),
            unstaged: set(&self.unstaged),
            untracked: set(&self.untracked),
            conflicted: set(&self.conflicted),
            any_ignored: self.any_ignored,
            flagged,
        })
    }
}

/// Store `c` as the answer at `clock` for the next tick (written aside, then renamed:
/// a reader sees the old answer or the new one). A path that is not UTF-8 stores nothing.
fn store(file: &Path, key: &str, root: Root, clock: String, c: &Changed) {
    let list = |s: &BTreeSet<BString>| -> Option<Vec<String>> {
        s.iter()
            .map(|p| p.to_str().ok().map(str::to_string))
            .collect()
    };
    let flagged = c
        .flagged
        .iter()
        .map(|(p, f)| Some((p.to_str().ok()?.to_string(), f.to_string())))
        .collect::<Option<Vec<_>>>();
    let stored = (|| {
        Some(Stored {
            key: key.to_string(),
            root,
            clock,
            staged: list(&c.staged)?,
            unstaged: list(&c.unstaged)?,
            untracked: list(&c.untracked)?,
            conflicted: list(&c.conflicted)?,
            any_ignored: c.any_ignored,
            flagged: flagged?,
        })
    })();
    let Some(bytes) = stored.and_then(|s| serde_json::to_vec(&s).ok()) else {
        forget(file);
        return;
    };
    let tmp = file.with_extension(format!("json.{}.tmp", std::process::id()));
    let written = file
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&tmp, bytes))
        .and_then(|()| std::fs::rename(&tmp, file));
    if let Err(e) = written {
        tracing::debug!("cannot store {}: {e}", file.display());
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Remove a stored answer that can no longer be brought up to date.
fn forget(file: &Path) {
    let _ = std::fs::remove_file(file);
}
