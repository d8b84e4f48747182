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
use std::fs;
use std::ops::Range;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use gix::bstr::{BStr, BString, ByteSlice, ByteVec};
use gix::index::entry::{Flags, Mode, Stat, stat};

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
        repo,
        index,
        symlinks: caps.symlink,
        executable_bit: caps.executable_bit,
        stat: repo.stat_options().ok()?,
        excludes: None,
        rela: BString::default(),
        out: Walk::default(),
    };
    w.dir(workdir, 0..index.entries().len());
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
    repo: &'r gix::Repository,
    index: &'r gix::index::State,
    symlinks: bool,
    executable_bit: bool,
    stat: stat::Options,
    /// Built on the first untracked name (a clean worktree never reads an exclude file).
    excludes: Option<Option<gix::AttributeStack<'r>>>,
    /// The directory being walked, repository-relative, with a trailing `/` (empty at the top).
    rela: BString,
    out: Walk,
}

/// One name in a directory, read by `readdir`.
struct Dirent {
    name: Vec<u8>,
    entry: fs::DirEntry,
    tracked: bool,
}

impl Walker<'_> {
    /// Walk the directory `abs` (repository-relative `self.rela`) whose index entries are
    /// `range` (every entry under it: entries sharing a prefix are contiguous in the index).
    fn dir(&mut self, abs: &Path, range: Range<usize>) {
        let Some(mut names) = read_dir(abs) else {
            self.out.unproven += range.len();
            self.out.needs_dirwalk = true;
            return;
        };
        let entries = self.index.entries();
        let base = self.rela.len();
        let mut i = range.start;
        while i < range.end {
            let path = entries[i].path(self.index);
            let rest = &path[base..];
            let slash = rest.find_byte(b'/');
            let name = &rest[..slash.unwrap_or(rest.len())];
            // The entries of this child: a file's stages, or everything under a directory.
            let mut j = i + 1;
            while j < range.end && self.same_child(entries[j].path(self.index), base, name, slash) {
                j += 1;
            }
            let found = names.binary_search_by(|d| d.name.as_slice().cmp(name)).ok();
            if let Some(k) = found {
                names[k].tracked = true;
            }
            match (slash, found) {
                (_, None) => self.out.unproven += j - i, // removed: gix reports it
                (Some(_), Some(k)) => {
                    let is_dir = names[k].entry.file_type().is_ok_and(|t| t.is_dir());
                    if is_dir {
                        let len = self.rela.len();
                        self.rela.push_str(name);
                        self.rela.push(b'/');
                        self.dir(&abs.join(std::ffi::OsStr::from_bytes(name)), i..j);
                        self.rela.truncate(len);
                    } else {
                        // A tracked directory replaced by a file or a symlink: its entries
                        // are removed, the new name is untracked.
                        self.out.unproven += j - i;
                        self.out.needs_dirwalk = true;
                    }
                }
                (None, Some(k)) => self.file(i..j, &names[k].entry),
            }
            i = j;
        }
        for d in names.iter().filter(|d| !d.tracked) {
            self.untracked(d);
        }
    }

    /// `path` belongs to the same child `name` of the directory at `base` as the entry
    /// before it: the next stage of the file, or an entry under the directory.
    fn same_child(&self, path: &BStr, base: usize, name: &[u8], slash: Option<usize>) -> bool {
        let rest = &path[base..];
        match slash {
            None => rest == name,
            Some(_) => rest.starts_with(name) && rest.get(name.len()) == Some(&b'/'),
        }
    }

    /// Prove the index entry at `range` (a file, symlink or gitlink; several stages when
    /// conflicted) unchanged against its directory entry, as gix's status would.
    fn file(&mut self, range: Range<usize>, dirent: &fs::DirEntry) {
        let e = &self.index.entries()[range.start];
        let special = range.len() > 1
            || e.stage_raw() != 0
            || e.mode == Mode::COMMIT
            || e.flags.contains(Flags::INTENT_TO_ADD);
        // Relative to the directory's descriptor, not following symlinks (`fstatat`).
        let md = match (special, dirent.metadata()) {
            (false, Ok(md)) => md,
            _ => {
                self.out.unproven += range.len();
                return;
            }
        };
        let ft = md.file_type();
        if ft.is_dir() {
            // A file replaced by a directory: removed, and the directory is untracked.
            self.out.unproven += 1;
            self.out.needs_dirwalk = true;
            return;
        }
        let executable = ft.is_file() && md.mode() & 0o100 != 0;
        let mode_changed = e
            .mode
            .change_to_match_fs_with_values(
                ft.is_file(),
                false,
                ft.is_symlink(),
                executable,
                self.symlinks,
                self.executable_bit,
            )
            .is_some();
        let now = stat_of(&md);
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

    /// A name of the directory that is not in the index: ignored, an untracked file, or
    /// something for gix's walk.
    fn untracked(&mut self, d: &Dirent) {
        if d.name == b".git" {
            // The worktree's own `.git` at the top; anywhere else a nested repository.
            self.out.needs_dirwalk |= !self.rela.is_empty();
            return;
        }
        let Ok(ft) = d.entry.file_type() else {
            self.out.needs_dirwalk = true;
            return;
        };
        let mode = if ft.is_dir() {
            Mode::DIR
        } else if ft.is_symlink() {
            Mode::SYMLINK
        } else if ft.is_file() {
            Mode::FILE
        } else {
            self.out.needs_dirwalk = true; // a fifo, a socket, a device
            return;
        };
        let mut rela = self.rela.clone();
        rela.push_str(&d.name);
        match self.excluded(rela.as_bstr(), mode) {
            Some(true) => self.out.any_ignored = true,
            // An untracked directory (its files counted one by one, a nested repository,
            // an empty one) is the walk's to classify; so is a name under an excluded
            // directory that is tracked.
            Some(false) if mode != Mode::DIR && !self.dir_excluded() => {
                self.out.untracked.insert(rela);
            }
            _ => self.out.needs_dirwalk = true,
        }
    }

    /// Whether any directory leading to `self.rela` is excluded (git does not list the
    /// untracked files of an ignored directory, even one holding tracked files).
    fn dir_excluded(&mut self) -> bool {
        let dir = self.rela.clone();
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

    /// `rela` matches the exclude rules (`.gitignore` files, `info/exclude`,
    /// `core.excludesFile`); `None` when they cannot be read.
    fn excluded(&mut self, rela: &BStr, mode: Mode) -> Option<bool> {
        let (repo, index) = (self.repo, self.index);
        let stack = self
            .excludes
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

/// The names of the directory `abs`, sorted bytewise; `None` when it cannot be read.
fn read_dir(abs: &Path) -> Option<Vec<Dirent>> {
    let mut names = Vec::new();
    for entry in fs::read_dir(abs).ok()? {
        let entry = entry.ok()?;
        names.push(Dirent {
            name: entry.file_name().as_bytes().to_vec(),
            entry,
            tracked: false,
        });
    }
    names.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    Some(names)
}

/// The index's stat data of a file's metadata, as `gix_index::entry::Stat::from_fs` makes
/// it (ctime is the inode's change time; fields truncated to 32 bits as git does).
fn stat_of(md: &fs::Metadata) -> Stat {
    let time = |secs: i64, nsecs: i64| {
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
        mtime: time(md.mtime(), md.mtime_nsec()),
        ctime: time(md.ctime(), md.ctime_nsec()),
        dev: md.dev() as u32,
        ino: md.ino() as u32,
        uid: md.uid(),
        gid: md.gid(),
        size: md.size() as u32,
    }
}
