//! Stale locks (SPEC 1.2 "The loop settles"): which lock files a SIGKILLed process may
//! leave, when one is stale, and what a step does about it.
//!
//! Rules:
//! - a lock on git-recode's own refs (`<notesRef>.lock`, any lock under `refs/recode/`)
//!   older than [`crate::lock::OWN_REF_STALE_SECS`] (30 s) is stale (a writer holds it for
//!   milliseconds; the ledger's append moves its own aside itself, `ledger/append.rs`;
//!   `sync`, and a heartbeat write that failed, the others: `lock::settle_own_refs`);
//! - a lock in a worker's worktree (`index.lock`, `HEAD.lock` in its own git dir), its
//!   branch's ref lock (`refs/heads/<branch>.lock`) or the repository's `packed-refs.lock`
//!   is stale when older than `recode.staleLockAfter` (default 5 minutes) and the worker
//!   whose worktree or branch it is, is not running (`packed-refs.lock` belongs to no
//!   worker: its age alone decides);
//! - the main worktree's `index.lock` is never stale (the user may be in `git commit`,
//!   with an editor open);
//! - a stale lock is moved aside to `<path>.stale-<unix seconds>` (never deleted,
//!   [`crate::lock::move_aside`]); a lock that is not yet stale makes the step wait.
//!
//! Ages are in seconds, by the lock file's mtime and the real clock.

use std::path::{Path, PathBuf};

pub(crate) use crate::lock::{MovedLock, Settle};

/// What a step on a worker does about the locks in its way ([`settle_worker`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// No lock in the way (stale ones were moved aside: listed, for the `unlocked` events).
    Clear(Vec<MovedLock>),
    /// A lock that is not yet stale: the step waits (it does not count as a failure).
    Wait {
        /// The lock.
        path: PathBuf,
        /// Its age, in seconds.
        age: u64,
        /// When it becomes stale, in seconds of age.
        stale_after: u64,
    },
}

impl Verdict {
    /// The reason of a step that waits on a lock: one sentence naming it.
    pub(crate) fn wait_reason(&self) -> Option<String> {
        match self {
            Verdict::Clear(_) => None,
            Verdict::Wait {
                path,
                age,
                stale_after,
            } => Some(format!(
                "waiting: {} is held ({age} s old; taken as left by a killed process once it is {stale_after} s old)",
                path.display()
            )),
        }
    }
}

/// The lock files that can block a step on a worker: in its worktree's own git dir
/// (`index.lock`, `HEAD.lock`; none for the main worktree's `index.lock`), its branch's
/// ref lock, and the lock of every ref (`packed-refs.lock`; a reftable's
/// `reftable/tables.list.lock`, and a linked worktree's own stack's).
pub(crate) fn worker_locks(
    common_dir: &Path,
    worktree_git_dir: Option<&Path>,
    is_main: bool,
    branch: &str,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(g) = worktree_git_dir {
        if !is_main {
            out.push(g.join("index.lock"));
        }
        out.push(g.join("HEAD.lock"));
        if !is_main {
            out.push(g.join("reftable").join("tables.list.lock"));
        }
    }
    out.push(common_dir.join(format!("refs/heads/{branch}.lock")));
    out.push(common_dir.join("packed-refs.lock"));
    out.push(common_dir.join("reftable").join("tables.list.lock"));
    out.dedup();
    out
}

/// Before a mechanical step on a worker that is not running: move aside each lock of
/// [`worker_locks`] older than `settle.stale_after` (`recode.staleLockAfter`, whole
/// seconds), each move reported to `settle.moves`; a younger one makes the step wait. A
/// lock that vanishes meanwhile is no longer in the way.
pub(crate) fn settle_worker(locks: &[PathBuf], settle: &Settle) -> Verdict {
    let stale_after_secs = settle.stale_after.as_secs();
    let mut moved = Vec::new();
    for path in locks {
        let Some(age) = crate::lock::age_secs(path) else {
            continue;
        };
        if age < stale_after_secs {
            return Verdict::Wait {
                path: path.clone(),
                age,
                stale_after: stale_after_secs,
            };
        }
        match crate::lock::move_aside(path, &settle.moves) {
            Ok(m) => moved.push(m),
            Err(_) if !path.exists() => {}
            Err(_) => {
                return Verdict::Wait {
                    path: path.clone(),
                    age,
                    stale_after: stale_after_secs,
                };
            }
        }
    }
    Verdict::Clear(moved)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aged(path: &Path, secs: u64) {
        std::fs::write(path, b"").unwrap();
        let t = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }

    #[test]
    fn a_young_lock_waits_and_an_old_one_is_moved_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let young = tmp.path().join("index.lock");
        let old = tmp.path().join("HEAD.lock");
        aged(&old, 600);
        aged(&young, 10);
        let settle = Settle::new(std::time::Duration::from_secs(300));
        let v = settle_worker(&[old.clone(), young.clone()], &settle);
        assert_eq!(
            v,
            Verdict::Wait {
                path: young.clone(),
                age: 10,
                stale_after: 300
            }
        );
        assert!(!old.exists(), "the old lock went aside first");
        let aside: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("HEAD.lock.stale-"))
            .collect();
        assert_eq!(aside.len(), 1, "moved, not deleted");
        let reported = settle.moves.take();
        assert_eq!(reported.len(), 1, "the move is reported for the warning");
        assert_eq!(reported[0].path, old.display().to_string());
        std::fs::remove_file(&young).unwrap();
        assert_eq!(settle_worker(&[young], &settle), Verdict::Clear(vec![]));
    }

    #[test]
    fn the_main_worktrees_index_lock_is_never_a_candidate() {
        let locks = worker_locks(Path::new("/r/.git"), Some(Path::new("/r/.git")), true, "b");
        assert!(!locks.contains(&PathBuf::from("/r/.git/index.lock")));
        let locks = worker_locks(
            Path::new("/r/.git"),
            Some(Path::new("/r/.git/worktrees/w")),
            false,
            "b",
        );
        assert_eq!(
            locks,
            vec![
                PathBuf::from("/r/.git/worktrees/w/index.lock"),
                PathBuf::from("/r/.git/worktrees/w/HEAD.lock"),
                PathBuf::from("/r/.git/worktrees/w/reftable/tables.list.lock"),
                PathBuf::from("/r/.git/refs/heads/b.lock"),
                PathBuf::from("/r/.git/packed-refs.lock"),
                PathBuf::from("/r/.git/reftable/tables.list.lock"),
            ]
        );
    }
}
