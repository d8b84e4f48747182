//! Removing a worktree so that no write is lost and no kill leaves a state the next run
//! would WIP-commit (SPEC 1.2 "Never lose work: more states"):
//!
//! 1. a marker `recode-removing` (the original path) goes into the worktree's own git
//!    dir (`.git/worktrees/<id>/`);
//! 2. `git worktree move` renames the directory aside within its parent (one `rename`, so
//!    the same filesystem): from then on a writer using the old path finds nothing to
//!    write into;
//! 3. the moved directory is read again (status and ignored files): a file that appeared
//!    since the guard's re-check moves it back, untouched;
//! 4. `git worktree remove` (never forced; git checks cleanliness once more).
//!
//! A run killed anywhere in between leaves the marker: [`finish_interrupted`], at the
//! start of the next `recover`, finishes a removal whose remains are only the clean
//! worktree minus deleted tracked files, and otherwise restores it (deleted tracked files
//! checked out again from the index, moved back): never a WIP commit of the deletions,
//! never a worktree that cannot be read.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::failpoint;
use crate::git;
use crate::worktree;

/// The marker file in a worktree's own git dir while it is being removed.
const MARKER: &str = "recode-removing";

/// How a removal ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Removal {
    /// The worktree is gone.
    Removed,
    /// It turned dirty while being removed and was moved back; why.
    MovedBack(String),
}

/// Remove the worktree at `path` (clean on the guard's re-check; `ignored`: the ignored
/// paths then listed, which may go with it); each git run killed past `timeout`
/// (`recode.commandTimeout`).
///
/// Errors: a message when git refuses or the directory cannot be moved (nothing lost:
/// the worktree is where it was, or moved back).
pub(super) fn remove(
    repo: &gix::Repository,
    path: &Path,
    ignored: &[String],
    timeout: Duration,
) -> Result<Removal, String> {
    let admin = admin_dir(path, timeout)?;
    let aside = aside_path(path);
    std::fs::write(admin.join(MARKER), path.to_string_lossy().as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", admin.join(MARKER).display()))?;
    if let Err(e) = move_worktree(repo, path, &aside, timeout) {
        let _ = std::fs::remove_file(admin.join(MARKER));
        return Err(e);
    }
    failpoint("delete-moved");
    if let Some(why) = turned_dirty(&aside, &admin, ignored, timeout) {
        move_back(repo, &aside, path, &admin, timeout);
        return Ok(Removal::MovedBack(why));
    }
    inside_removal_failpoints(&aside);
    // git's own cleanliness check runs `status` in it: no monitor, no cache (SPEC 1.3).
    git::Git::new(repo.common_dir(), timeout)
        .args(git::UNCACHED)
        .args([
            "-c",
            "status.showUntrackedFiles=normal",
            "worktree",
            "remove",
        ])
        .arg(&aside)
        .output()
        .map_err(|e| {
            move_back(repo, &aside, path, &admin, timeout);
            e.to_string()
        })?;
    Ok(Removal::Removed)
}

/// Test-only (armed as [`crate::failpoint`] says): `delete-inside` kills after deleting part of the moved worktree's files,
/// `delete-gitfile` after deleting its `.git` file and part of its files (the states a
/// kill inside `git worktree remove` leaves).
fn inside_removal_failpoints(aside: &Path) {
    let armed = crate::failpoint::armed().unwrap_or_default();
    if armed != "delete-inside" && armed != "delete-gitfile" {
        return;
    }
    if armed == "delete-gitfile" {
        let _ = std::fs::remove_file(aside.join(".git"));
    }
    if let Ok(entries) = std::fs::read_dir(aside) {
        for (i, e) in entries.flatten().enumerate() {
            if i % 2 == 0 && e.file_name() != ".git" {
                let p = e.path();
                let _ = if p.is_dir() {
                    std::fs::remove_dir_all(&p)
                } else {
                    std::fs::remove_file(&p)
                };
            }
        }
    }
    failpoint(&armed);
}

/// The worktree's own git dir (`.git/worktrees/<id>`).
fn admin_dir(path: &Path, timeout: Duration) -> Result<PathBuf, String> {
    let out = git::read(path, timeout, &["rev-parse", "--absolute-git-dir"])
        .map_err(|e| e.to_string())?;
    Ok(PathBuf::from(String::from_utf8_lossy(&out).trim()))
}

/// `<parent>/.<name>.recode-removing`: beside the worktree, so a rename stays within its
/// filesystem.
fn aside_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "worktree".into());
    path.with_file_name(format!(".{name}.recode-removing"))
}

fn move_worktree(
    repo: &gix::Repository,
    from: &Path,
    to: &Path,
    timeout: Duration,
) -> Result<(), String> {
    git::run(
        repo.common_dir(),
        timeout,
        &[
            "worktree",
            "move",
            &from.to_string_lossy(),
            &to.to_string_lossy(),
        ],
    )
    .map(|_| ())
    .map_err(|e| e.to_string())
}

/// Move the worktree at `aside` back to `path` and drop the marker; when `path` is taken
/// (something was created there meanwhile), it stays aside, registered and readable.
fn move_back(repo: &gix::Repository, aside: &Path, path: &Path, admin: &Path, timeout: Duration) {
    if !path.exists() {
        let _ = move_worktree(repo, aside, path, timeout);
    }
    let _ = std::fs::remove_file(admin.join(MARKER));
}

/// Why the moved worktree is no longer clean (a change, an untracked file, a new ignored
/// file), or `None`. What cannot be read is not clean.
fn turned_dirty(
    aside: &Path,
    admin: &Path,
    ignored: &[String],
    timeout: Duration,
) -> Option<String> {
    match worktree::status(aside, admin) {
        Ok(st) if st.dirty.is_clean() => {}
        Ok(_) => return Some("a file changed in it while it was being removed".into()),
        Err(e) => return Some(format!("its status cannot be read: {e}")),
    }
    match crate::snapshot::ignored_paths(aside, admin, timeout) {
        Ok(now) if crate::snapshot::summarize(&now) == ignored => None,
        Ok(_) => Some("an ignored file appeared in it while it was being removed".into()),
        Err(e) => Some(format!("its ignored files cannot be listed: {e}")),
    }
}

/// Finish or restore every removal a killed run left (a marker in a worktree's git dir);
/// one line for each (for stderr). Each git run is killed past `timeout`
/// (`recode.commandTimeout`).
pub(super) fn finish_interrupted(repo: &gix::Repository, timeout: Duration) -> Vec<String> {
    let Ok(list) = worktree::list(repo) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for wt in list.iter().filter(|w| !w.is_main) {
        let marker = wt.git_dir.join(MARKER);
        let Ok(original) = std::fs::read(&marker) else {
            continue;
        };
        let original = PathBuf::from(String::from_utf8_lossy(&original).to_string());
        lines.push(finish_one(repo, wt, &original, &marker, timeout));
    }
    lines
}

/// Finish or restore one interrupted removal of the worktree `wt` (registered where the
/// killed run left it), first at `original`.
fn finish_one(
    repo: &gix::Repository,
    wt: &worktree::Worktree,
    original: &Path,
    marker: &Path,
    timeout: Duration,
) -> String {
    let here = &wt.path;
    if here == original || worktree::absolute(here) == worktree::absolute(original) {
        // Killed before the move, or inside it after the rename (the registration still
        // names the original path): put the directory back where it is registered.
        let aside = aside_path(original);
        if !original.exists() && aside.is_dir() {
            let _ = std::fs::rename(&aside, original);
        }
        let _ = std::fs::remove_file(marker);
        return format!(
            "an interrupted removal of {} had not started; nothing to do",
            original.display()
        );
    }
    if !here.exists() {
        // Killed after git deleted the directory, before its git dir: finish.
        let _ = std::fs::remove_dir_all(&wt.git_dir);
        return format!("finished the interrupted removal of {}", original.display());
    }
    // The `.git` file may be among what was deleted: put it back so git can read it.
    let gitfile = here.join(".git");
    if !gitfile.exists() {
        let _ = std::fs::write(&gitfile, format!("gitdir: {}\n", wt.git_dir.display()));
    }
    let only_deletions = only_deleted_tracked_files(here, timeout);
    if only_deletions == Some(true) {
        let removed = std::fs::remove_dir_all(here).is_ok();
        if removed {
            let _ = std::fs::remove_dir_all(&wt.git_dir);
            return format!("finished the interrupted removal of {}", original.display());
        }
    }
    // Anything else: restore the deleted tracked files from the index and move it back.
    let _ = restore_deleted(here, timeout);
    move_back(repo, here, original, &wt.git_dir, timeout);
    format!(
        "restored the interrupted removal of {} (it held more than the clean worktree)",
        original.display()
    )
}

/// `Some(true)` when the only changes in the worktree at `dir` are tracked files deleted
/// (what a removal leaves); `None` when it cannot be read.
fn only_deleted_tracked_files(dir: &Path, timeout: Duration) -> Option<bool> {
    let out = git::read(
        dir,
        timeout,
        &[
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--ignored=matching",
            "--no-renames",
        ],
    )
    .ok()?;
    Some(
        out.split(|b| *b == 0)
            .filter(|e| e.len() > 3)
            .all(|e| e.starts_with(b" D ")),
    )
}

/// Check out again, from the index, the tracked files deleted in the worktree at `dir`
/// (never overwriting a file that is there).
fn restore_deleted(dir: &Path, timeout: Duration) -> Result<(), git::GitError> {
    let out = git::read(dir, timeout, &["ls-files", "-z", "--deleted"])?;
    let paths: Vec<String> = out
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).to_string())
        .collect();
    if paths.is_empty() {
        return Ok(());
    }
    git::Git::new(dir, timeout)
        .args(["checkout-index", "-q", "--"])
        .args(paths)
        .output()?;
    Ok(())
}
