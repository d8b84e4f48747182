//! The repository-wide recover lock: `<common git dir>/recode-recover.lock`, an advisory
//! `flock` held for the whole run, so two recovers never act on the same worker at once.
//! The file also names its holder (pid, host, start time) for the message a second
//! recover prints. The kernel releases the lock when its holder exits or is killed, so a
//! lock is never stale: no takeover is needed, and nothing is removed.
//!
//! Also the stale locks of other writers (SPEC 1.2 "The loop settles"): their age
//! ([`age_secs`]), the move aside ([`move_aside`]), and what a command carries about them
//! ([`Settle`]: `recode.staleLockAfter` and the [`Moves`] sink its steps report to; no
//! process-wide state).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{clock, process};

/// File name in the common git dir.
pub(crate) const LOCK_FILE: &str = "recode-recover.lock";

/// What the lock file says about its holder.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub(crate) struct Holder {
    /// Holder's pid.
    pub pid: u32,
    /// Its host.
    pub host: String,
    /// When it took the lock (RFC 3339).
    pub since: String,
}

/// Errors taking the lock.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another live recover holds it.
    #[error("another `git recode recover` ({holder}) holds {path}")]
    Held {
        /// Who, as far as the file says.
        holder: String,
        /// The lock file.
        path: String,
    },
    /// The lock file could not be opened or written.
    #[error("cannot use the lock {path}: {source}")]
    Io {
        /// The lock file.
        path: String,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
}

/// A held lock; released when dropped (or when the process dies).
#[derive(Debug)]
pub(crate) struct Lock {
    _file: File,
}

/// Take the lock in `common_dir`, without waiting.
///
/// Errors: [`LockError::Held`] when another process holds it, [`LockError::Io`].
pub(crate) fn acquire(common_dir: &Path, now: jiff::Timestamp) -> Result<Lock, LockError> {
    let path = common_dir.join(LOCK_FILE);
    let io = |source| LockError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            let holder = serde_json::from_str::<Holder>(&text)
                .map(|h| format!("pid {} on {}, since {}", h.pid, h.host, h.since))
                .unwrap_or_else(|_| "a process that is starting".into());
            return Err(LockError::Held {
                holder,
                path: path.display().to_string(),
            });
        }
        Err(TryLockError::Error(e)) => return Err(io(e)),
    }
    let me = Holder {
        pid: std::process::id(),
        host: process::hostname(),
        since: clock::format(now),
    };
    file.set_len(0).map_err(io)?;
    file.rewind().map_err(io)?;
    file.write_all(serde_json::to_string(&me).unwrap_or_default().as_bytes())
        .map_err(io)?;
    Ok(Lock { _file: file })
}

/// A lock file git-recode moved aside because it was stale (SPEC 1.2 "The loop settles":
/// moved to `<path>.stale-<unix seconds>`, never deleted; an `unlocked` event and a
/// warning name it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MovedLock {
    /// The lock's path, as found.
    pub path: String,
    /// Where it went.
    pub to: String,
    /// Its age when moved, in seconds (from its mtime, by the real clock).
    pub age: u64,
}

impl MovedLock {
    /// The warning that names it.
    pub(crate) fn warning(&self) -> String {
        format!(
            "moved aside the stale lock {} ({} s old, left by a killed process) to {}",
            self.path, self.age, self.to
        )
    }
}

/// Age after which a lock on git-recode's own refs (`<notesRef>.lock`, and every ref under
/// `refs/recode/`: anchors, heartbeats, claims, the tracking refs `sync` fetches into) is
/// stale, in seconds: a writer holds it for milliseconds.
pub(crate) const OWN_REF_STALE_SECS: u64 = 30;

/// Move aside every lock file under `<common_dir>/refs/recode/` at least
/// [`OWN_REF_STALE_SECS`] old (left by a killed git-recode or by a killed `git fetch` of
/// its `sync`; SPEC 1.2 "The loop settles": no human unwedges a loop), each reported to
/// `moves`; returns how many. Moved locks (`.stale-` in their name) are not moved again;
/// at most 4096 directory entries are looked at. Nothing to do on reftable (no loose refs).
pub(crate) fn settle_own_refs(common_dir: &Path, moves: &Moves) -> usize {
    let mut dirs = vec![common_dir.join("refs").join("recode")];
    let (mut seen, mut moved) = (0usize, 0usize);
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > 4096 {
                return moved;
            }
            let (path, name) = (e.path(), e.file_name().to_string_lossy().into_owned());
            match e.file_type() {
                Ok(t) if t.is_dir() => dirs.push(path),
                Ok(t) if t.is_file() && name.ends_with(".lock") && !name.contains(".stale-") => {
                    let stale = age_secs(&path).is_some_and(|a| a >= OWN_REF_STALE_SECS);
                    if stale && move_aside(&path, moves).is_ok() {
                        moved += 1;
                    }
                }
                _ => {}
            }
        }
    }
    moved
}

/// The age of the lock file at `path` in seconds, by its mtime and the real clock (locks
/// are real files: `RECODE_NOW` does not age them); `None` when there is no regular file
/// there.
pub(crate) fn age_secs(path: &Path) -> Option<u64> {
    let m = std::fs::symlink_metadata(path).ok()?;
    if !m.is_file() {
        return None;
    }
    let modified = m.modified().ok()?;
    Some(
        std::time::SystemTime::now()
            .duration_since(modified)
            .map(|d| d.as_secs())
            .unwrap_or(0),
    )
}

/// How a command treats the stale locks in its way, and where it reports those it moves
/// aside (SPEC 1.2 "The loop settles"): `recode.staleLockAfter` and the command's
/// [`Moves`]. The configuration builds it (`Config::locks`); every step that may move a
/// lock takes it as a parameter.
#[derive(Debug, Clone)]
pub(crate) struct Settle {
    /// `recode.staleLockAfter`: the age (whole seconds, at least 1 s) past which a lock in a
    /// worker's worktree or the repository's `packed-refs.lock` is stale.
    pub stale_after: std::time::Duration,
    /// Where moves are reported.
    pub moves: Moves,
}

impl Settle {
    /// `stale_after` (at least 1 s), with a fresh [`Moves`].
    pub(crate) fn new(stale_after: std::time::Duration) -> Settle {
        Settle {
            stale_after: stale_after.max(std::time::Duration::from_secs(1)),
            moves: Moves::default(),
        }
    }
}

/// The stale locks one command moved aside: every move, for the warnings the command
/// prints at its end ([`Moves::take`]), and the moves whose `unlocked` event is still owed
/// ([`Moves::owe`]: the next ledger append writes them). A handle: its clones share the
/// same lists, so one command hands it to each step and reads it once at its end.
#[derive(Debug, Clone, Default)]
pub(crate) struct Moves(std::sync::Arc<std::sync::Mutex<MoveLists>>);

#[derive(Debug, Default)]
struct MoveLists {
    moved: Vec<MovedLock>,
    owed: Vec<MovedLock>,
}

impl Moves {
    fn with<T>(&self, f: impl FnOnce(&mut MoveLists) -> T) -> T {
        // A step that panicked while holding the lists left them whole: use them.
        let mut lists = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut lists)
    }

    /// Report a move, for the command's warnings.
    pub(crate) fn record(&self, moved: &MovedLock) {
        self.with(|l| l.moved.push(moved.clone()));
    }

    /// The moves reported since the last call, in order (each named in one warning).
    pub(crate) fn take(&self) -> Vec<MovedLock> {
        self.with(|l| std::mem::take(&mut l.moved))
    }

    /// Remember that `moved` still needs its `unlocked` event (a lock moved aside before
    /// any event of the command was appended: the next ledger append writes it).
    pub(crate) fn owe(&self, moved: MovedLock) {
        self.with(|l| l.owed.push(moved));
    }

    /// The moves whose `unlocked` events are still owed ([`Moves::owe`]), now the
    /// caller's to ledger.
    pub(crate) fn take_owed(&self) -> Vec<MovedLock> {
        self.with(|l| std::mem::take(&mut l.owed))
    }
}

/// Move the stale lock at `path` aside to `<path>.stale-<unix seconds>` (a rename: nothing
/// is deleted; `-2`, `-3`… appended when that name is taken), and report the move to
/// `moves` (for the command's warning).
///
/// Errors: the rename failed (`std::io::Error`), e.g. the lock vanished meanwhile.
pub(crate) fn move_aside(path: &Path, moves: &Moves) -> std::io::Result<MovedLock> {
    let age = age_secs(path).unwrap_or(0);
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    // Under `refs/` a moved lock must not read as a ref (`git rev-list --all` fails on an
    // empty one): it keeps a `.lock` ending there, which git and gix skip.
    let in_refs = path.components().any(|c| c.as_os_str() == "refs");
    let tail = if in_refs { ".lock" } else { "" };
    let base = format!("{}.stale-{secs}", path.display());
    let mut to = std::path::PathBuf::from(format!("{base}{tail}"));
    let mut n = 2;
    while to.exists() {
        to = std::path::PathBuf::from(format!("{base}-{n}{tail}"));
        n += 1;
    }
    std::fs::rename(path, &to)?;
    let moved = MovedLock {
        path: path.display().to_string(),
        to: to.display().to_string(),
        age,
    };
    moves.record(&moved);
    Ok(moved)
}
