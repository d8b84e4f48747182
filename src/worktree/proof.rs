//! One walk of a worktree against its index: the physical floor of a status (one
//! `readdir` per directory, one `lstat` per tracked entry, made relative to the open
//! directory so the kernel resolves one name, not the whole path).
//!
//! The walk proves entries unchanged the way git does (the entry's stat data equals the
//! file's, the file is not racily clean, its mode did not change) and finds the untracked
//! files of tracked directories (names not in the index, checked against the same exclude
//! rules gix's dirwalk uses). It decides nothing it is unsure of: every entry it does not
//! prove stays for gix's exact status (content compared, conflicts, submodules, removals),
//! and whatever a directory walk must classify (an untracked directory, a nested `.git`, a
//! special file, a tracked file replaced by a directory, a tracked directory replaced by a
//! file) sets [`Walk::needs_dirwalk`], so the caller runs gix's walk as before. Counts stay
//! exact (SPEC "The worker object": `dirty` equals `git status --porcelain`).

use std::collections::BTreeSet;
use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd};

use gix::bstr::{BStr, BString, ByteSlice, ByteVec};
use gix::index::entry::{Flags, Mode, Stat, stat};
use rustix::fs::{AtFlags, CWD, Dir, DirEntry, FileType, OFlags};

/// What one walk found.
#[derive(Debug, Default)]
pub(super) struct Walk {
    /// Index positions of the entries proven unchanged (stat data equal, not racy).
    pub proven: Vec<usize>,
    /// Index entries not proven (changed, racy, missing, conflicted, a submodule, an
    /// intent-to-add): gix's index-to-worktree status must look at them.
    pub unproven: usize,
    /// Untracked files found in tracked directories (repository-relative paths), valid
    /// only when `needs_dirwalk` is false.
    pub untracked: BTreeSet<BString>,
    /// An ignored entry was met (valid only when `needs_dirwalk` is false).
    pub any_ignored: bool,
    /// The walk met something only gix's directory walk classifies exactly.
    pub needs_dirwalk: bool,
}

/// Walk the worktree of `repo` against `index`.
///
/// `None` when the walk does not apply and gix's status must do everything: a bare
/// repository, `core.ignoreCase` or `core.precomposeUnicode` (names would need folding),
/// or a sparse index (directory entries).
///
/// Errors: none of its own; what cannot be read (a directory, an entry's `lstat`, the
/// exclude files) is left unproven or to gix's walk, which reports it.
pub(super) fn walk(repo: &gix::Repository, index: &gix::index::State) -> Option<Walk> {
    let workdir = repo.workdir()?;
    let caps = repo.filesystem_options().ok()?;
    if caps.ignore_case || caps.precompose_unicode || index.is_sparse() {
        return None;
    }
    let mut w = Walker {
        index,
        symlinks: caps.symlink,
        executable_bit: caps.executable_bit,
        stat: repo.stat_options().ok()?,
        excludes: Excludes::new(repo, index),
        rela: BString::default(),
        out: Walk::default(),
    };
    // The worktree itself may be reached through a symlink; nothing below it is.
    let top = rustix::fs::openat(
        CWD,
        workdir,
        OPEN | OFlags::RDONLY,
        rustix::fs::Mode::empty(),
    );
    match top.ok().and_then(|fd| Dir::new(fd).ok()) {
        Some(top) => w.dir(top, 0..index.entries().len()),
        None => w.out.needs_dirwalk = true,
    }
    Some(w.out)
}

/// Mark the entries `proven` unchanged as up to date (git's `CE_UPTODATE`, in memory only:
/// never written), so gix's status skips them without an `lstat`.
pub(super) fn mark_proven(index: &mut gix::index::File, proven: &[usize]) {
    let entries = index.entries_mut();
    for &i in proven {
        entries[i].flags.insert(Flags::UPTODATE);
    }
}

struct Walker<'r> {
    index: &'r gix::index::State,
    symlinks: bool,
    executable_bit: bool,
    stat: stat::Options,
    /// Read on the first untracked name.
    excludes: Excludes<'r>,
    /// The directory being walked, repository-relative, with a trailing `/` (empty at the top).
    rela: BString,
    out: Walk,
}

/// One name of a directory as the index has it: a file (its stages) or a directory
/// (every entry under it).
struct Child<'r> {
    name: &'r [u8],
    is_dir: bool,
    entries: Range<usize>,
    /// `readdir` returned the name.
    found: bool,
}

impl<'r> Walker<'r> {
    /// Walk the open directory `dir` (repository-relative `self.rela`) whose index entries
    /// are `range` (every entry under it: entries sharing a prefix are contiguous in the
    /// index).
    fn dir(&mut self, mut dir: Dir, range: Range<usize>) {
        let names = read_dir(&mut dir);
        let (Ok(fd), Some(names)) = (dir.fd(), names) else {
            self.out.unproven += range.len();
            self.out.needs_dirwalk = true;
            return;
        };
        let mut children = self.children(range);
        for d in &names {
            let name = d.file_name().to_bytes();
            let ft = file_type(fd, d);
            let is_dir = ft == FileType::Directory;
            // By the name as the index would hold it, then as the other kind (a file
            // replaced by a directory, or a directory by a file or a symlink).
            let find = |dir: bool| {
                children
                    .binary_search_by(|c| index_order(c.name, c.is_dir, name, dir))
                    .ok()
            };
            let Some(k) = find(is_dir).or_else(|| find(!is_dir)) else {
                self.untracked(name, ft);
                continue;
            };
            let c = &mut children[k];
            c.found = true;
            let entries = c.entries.clone();
            match (c.is_dir, is_dir) {
                (false, _) => self.file(entries, fd, d),
                (true, true) => match open_dir(fd, d.file_name()) {
                    // Opened by its name in its parent, never following a symlink.
                    Some(sub) => {
                        let len = self.rela.len();
                        self.rela.push_str(name);
                        self.rela.push(b'/');
                        self.dir(sub, entries);
                        self.rela.truncate(len);
                    }
                    None => {
                        self.out.unproven += entries.len();
                        self.out.needs_dirwalk = true;
                    }
                },
                (true, false) => {
                    // A tracked directory replaced by a file or a symlink: its entries
                    // are removed, the new name is untracked.
                    self.out.unproven += entries.len();
                    self.out.needs_dirwalk = true;
                }
            }
        }
        for c in children.iter().filter(|c| !c.found) {
            self.out.unproven += c.entries.len(); // removed: gix reports it
        }
    }

    /// The children of the directory `self.rela` from its index entries `range`, in index
    /// order.
    fn children(&self, range: Range<usize>) -> Vec<Child<'r>> {
        let index = self.index;
        let entries = index.entries();
        let base = self.rela.len();
        let mut out = Vec::new();
        let mut i = range.start;
        while i < range.end {
            let rest = &entries[i].path(index)[base..];
            let slash = rest.find_byte(b'/');
            let name = &rest[..slash.unwrap_or(rest.len())];
            let mut j = i + 1;
            while j < range.end && same_child(&entries[j].path(index)[base..], name, slash) {
                j += 1;
            }
            out.push(Child {
                name,
                is_dir: slash.is_some(),
                entries: i..j,
                found: false,
            });
            i = j;
        }
        out
    }

    /// Prove the index entry at `range` (a file, symlink or gitlink; several stages when
    /// conflicted) unchanged against its directory entry, as gix's status would.
    fn file(&mut self, range: Range<usize>, fd: BorrowedFd<'_>, dirent: &DirEntry) {
        let e = &self.index.entries()[range.start];
        let special = range.len() > 1
            || e.stage_raw() != 0
            || e.mode == Mode::COMMIT
            || e.flags.contains(Flags::INTENT_TO_ADD);
        // Relative to the directory's descriptor, not following symlinks (`fstatat`).
        let st = match special {
            false => rustix::fs::statat(fd, dirent.file_name(), AtFlags::SYMLINK_NOFOLLOW),
            true => Err(rustix::io::Errno::INVAL),
        };
        let Ok(st) = st else {
            self.out.unproven += range.len();
            return;
        };
        let ft = FileType::from_raw_mode(st.st_mode as _);
        if ft == FileType::Directory {
            // A file replaced by a directory: removed, and the directory is untracked.
            self.out.unproven += 1;
            self.out.needs_dirwalk = true;
            return;
        }
        let is_file = ft == FileType::RegularFile;
        let executable = is_file && st.st_mode & 0o100 != 0;
        let mode_changed = e
            .mode
            .change_to_match_fs_with_values(
                is_file,
                false,
                ft == FileType::Symlink,
                executable,
                self.symlinks,
                self.executable_bit,
            )
            .is_some();
        let now = stat_of(&st);
        let clean = !mode_changed
            && now.matches(&e.stat, self.stat)
            && (!e.id.is_empty_blob() || e.stat.size == 0)
            && !now.is_racy(self.index.timestamp(), self.stat);
        if clean {
            self.out.proven.push(range.start);
        } else {
            self.out.unproven += 1;
        }
    }

    /// A name of the directory that is not in the index (of type `ft`): ignored, an
    /// untracked file, or something for gix's walk.
    fn untracked(&mut self, name: &[u8], ft: FileType) {
        if name == b".git" {
            // The worktree's own `.git` at the top; anywhere else a nested repository.
            self.out.needs_dirwalk |= !self.rela.is_empty();
            return;
        }
        let mode = match ft {
            FileType::Directory => Mode::DIR,
            FileType::Symlink => Mode::SYMLINK,
            FileType::RegularFile => Mode::FILE,
            _ => {
                self.out.needs_dirwalk = true; // a fifo, a socket, a device, unreadable
                return;
            }
        };
        let mut rela = self.rela.clone();
        rela.push_str(name);
        match self.excludes.excluded(rela.as_bstr(), mode) {
            Some(true) => self.out.any_ignored = true,
            // An untracked directory (its files counted one by one, a nested repository,
            // an empty one) is the walk's to classify; so is a name under an excluded
            // directory that is tracked.
            Some(false) if mode != Mode::DIR && !self.excludes.dir_excluded(&self.rela) => {
                self.out.untracked.insert(rela);
            }
            _ => self.out.needs_dirwalk = true,
        }
    }
}

/// The exclude rules of a worktree (`.gitignore` files, `info/exclude`,
/// `core.excludesFile`), as gix's dirwalk applies them; read on first use (a clean
/// worktree never reads an exclude file).
pub(super) struct Excludes<'r> {
    repo: &'r gix::Repository,
    index: &'r gix::index::State,
    /// `None` until first used; `Some(None)` when the rules cannot be read.
    stack: Option<Option<gix::AttributeStack<'r>>>,
}

impl<'r> Excludes<'r> {
    /// The rules of the worktree of `repo`, whose index is `index`.
    pub(super) fn new(repo: &'r gix::Repository, index: &'r gix::index::State) -> Self {
        Excludes {
            repo,
            index,
            stack: None,
        }
    }

    /// Whether any directory leading to `dir` (repository-relative, ending in `/`, empty
    /// at the top) is excluded (git does not list the untracked files of an ignored
    /// directory, even one holding tracked files); unreadable rules count as excluded.
    pub(super) fn dir_excluded(&mut self, dir: &[u8]) -> bool {
        let mut end = 0;
        while let Some(p) = dir[end..].find_byte(b'/') {
            end += p;
            if self.excluded(dir[..end].as_bstr(), Mode::DIR) != Some(false) {
                return true;
            }
            end += 1;
        }
        false
    }

    /// `rela` (of type `mode`) matches the exclude rules; `None` when they cannot be read.
    pub(super) fn excluded(&mut self, rela: &BStr, mode: Mode) -> Option<bool> {
        let (repo, index) = (self.repo, self.index);
        let stack = self
            .stack
            .get_or_insert_with(|| {
                repo.excludes(
                    index,
                    None,
                    gix::worktree::stack::state::ignore::Source::WorktreeThenIdMappingIfNotSkipped,
                )
                .ok()
            })
            .as_mut()?;
        let platform = stack.at_entry(rela, Some(mode)).ok()?;
        Some(platform.is_excluded())
    }
}

/// `rest` (an index path below the directory) belongs to the child `name` of the entry
/// before it: the next stage of the file (`slash` is `None`), or an entry under the
/// directory.
fn same_child(rest: &[u8], name: &[u8], slash: Option<usize>) -> bool {
    match slash {
        None => rest == name,
        Some(_) => rest.starts_with(name) && rest.get(name.len()) == Some(&b'/'),
    }
}

/// Two names of one directory compared as the index orders its paths: a directory's name
/// as if followed by `/` (so `a.b` sorts before the directory `a`, whose paths are `a/…`).
fn index_order(a: &[u8], a_dir: bool, b: &[u8], b_dir: bool) -> std::cmp::Ordering {
    let n = a.len().min(b.len());
    a[..n].cmp(&b[..n]).then_with(|| {
        // One name is a prefix of the other: the next byte decides, `/` for a directory,
        // none at the end of a file's name (which sorts first).
        let next = |s: &[u8], dir: bool| s.get(n).copied().or(dir.then_some(b'/'));
        next(a, a_dir).cmp(&next(b, b_dir))
    })
}

/// How every directory of the walk is opened.
const OPEN: OFlags = OFlags::DIRECTORY.union(OFlags::CLOEXEC);

/// The directory `name` opened relative to `at` (one name to resolve), never through a
/// symlink; `None` when it cannot be opened.
fn open_dir(at: impl AsFd, name: impl rustix::path::Arg) -> Option<Dir> {
    let flags = OPEN | OFlags::RDONLY | OFlags::NOFOLLOW;
    let fd = rustix::fs::openat(at, name, flags, rustix::fs::Mode::empty()).ok()?;
    Dir::new(fd).ok()
}

/// Every name of `dir` but `.` and `..`, in `readdir`'s order; `None` when it cannot be
/// read to its end.
fn read_dir(dir: &mut Dir) -> Option<Vec<DirEntry>> {
    let mut names = Vec::new();
    while let Some(entry) = dir.read() {
        let entry = entry.ok()?;
        if !matches!(entry.file_name().to_bytes(), b"." | b"..") {
            names.push(entry);
        }
    }
    Some(names)
}

/// The type of a directory entry: `readdir`'s, or an `lstat`'s where the file system
/// does not say (`DT_UNKNOWN`).
fn file_type(fd: BorrowedFd<'_>, entry: &DirEntry) -> FileType {
    match entry.file_type() {
        FileType::Unknown => rustix::fs::statat(fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
            .map_or(FileType::Unknown, |st| {
                FileType::from_raw_mode(st.st_mode as _)
            }),
        known => known,
    }
}

/// The index's stat data of an `lstat`, as `gix_index::entry::Stat::from_fs` makes it
/// (ctime is the inode's change time; fields truncated to 32 bits as git does).
#[allow(clippy::unnecessary_cast)] // the field types differ between targets
fn stat_of(st: &rustix::fs::Stat) -> Stat {
    let time = |secs: i64, nsecs: u64| {
        if secs < 0 {
            stat::Time::default()
        } else {
            stat::Time {
                secs: secs as u32,
                nsecs: nsecs as u32,
            }
        }
    };
    Stat {
        mtime: time(st.st_mtime as i64, st.st_mtime_nsec as u64),
        ctime: time(st.st_ctime as i64, st.st_ctime_nsec as u64),
        dev: st.st_dev as u32,
        ino: st.st_ino as u32,
        uid: st.st_uid as u32,
        gid: st.st_gid as u32,
        size: st.st_size as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::index_order;

    /// Children ordered by `index_order` come in the order git sorts their paths.
    #[test]
    fn index_order_sorts_names_as_the_index_sorts_paths() {
        let children = [
            ("a", true),
            ("a", false),
            ("a-b", false),
            ("a.b", false),
            ("a0", true),
            ("ab", false),
            ("b", true),
        ];
        let mut by_order = children.to_vec();
        by_order.sort_by(|x, y| index_order(x.0.as_bytes(), x.1, y.0.as_bytes(), y.1));
        let mut by_path = children.to_vec();
        // A directory's entries are `name/…`; a file's path is its name.
        by_path.sort_by_key(|(n, dir)| {
            if *dir {
                format!("{n}/x")
            } else {
                n.to_string()
            }
        });
        assert_eq!(by_order, by_path);
    }
}
