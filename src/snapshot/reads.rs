//! Reading worktrees for a gather: `git status` and the ignored files of each, in
//! parallel across worktrees (each thread opens its own handle).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::config::{self, Config};
use crate::model::Snapshot;
use crate::repo::RepoError;
use crate::worktree;
use crate::worktree::watch::Watcher;

/// One worktree to read: the index of its snapshot, its path, and whether its ignored
/// files are listed (when its status is clean).
/// Its admin directory (the worktree's own git dir) binds every read (SPEC 1.3).
pub(super) type Job = (usize, PathBuf, PathBuf, bool);

/// Read the worktrees of `jobs` into their snapshots' facts: dirty counts, newest mtime,
/// secrets and ignored files; what cannot be read is `unreadable`, with a warning.
pub(super) fn read_worktrees(
    snapshots: &mut [Snapshot],
    jobs: &[Job],
    (cfg, watcher): (&Config, Option<&Watcher>),
    show_progress: bool,
    warnings: &mut Vec<String>,
) {
    let progress =
        crate::progress::Progress::new(jobs.len() as u64, "reading worktrees", show_progress);
    let results = run_status_jobs(jobs, (cfg.command_timeout, watcher), &progress);
    progress.finish();
    for ((idx, path, _, _), res) in jobs.iter().zip(results) {
        let f = snapshots[*idx]
            .worktree
            .as_mut()
            .expect("status jobs are only queued for worktrees");
        match res {
            Ok((st, ignored)) => {
                f.dirty = Some(st.dirty);
                f.newest_mtime = st.newest_mtime;
                f.hidden = st.hidden;
                match ignored {
                    Some(Ok(all)) => {
                        f.secrets = all
                            .iter()
                            .filter(|p| config::matches_secret(&cfg.secrets, p))
                            .cloned()
                            .collect();
                        f.ignored = summarize(&all);
                    }
                    Some(Err(e)) => {
                        f.unreadable = Some(format!("its ignored files cannot be listed: {e}"));
                        warnings.push(format!(
                            "cannot list the ignored files of {}: {e}",
                            path.display()
                        ));
                    }
                    None => {}
                }
            }
            Err(e) => {
                f.unreadable = Some(format!("its status cannot be read: {e}"));
                warnings.push(format!("cannot read the worktree {}: {e}", path.display()));
            }
        }
    }
}

/// What one worktree's job found: its status, and its ignored paths when asked and clean.
type JobResult = Result<
    (
        worktree::Status,
        Option<Result<Vec<String>, crate::git::GitError>>,
    ),
    RepoError,
>;

/// One worktree's job: its status (through `watcher` when there is one), and its ignored
/// paths when asked and clean (a git run killed past `timeout`, `recode.commandTimeout`).
fn read_job(
    (_, path, admin, scan_ignored): &Job,
    (timeout, watcher): (std::time::Duration, Option<&Watcher>),
) -> JobResult {
    let status = match watcher {
        Some(w) => worktree::status_watched(path, admin, w),
        None => worktree::status(path, admin),
    };
    status.map(|st| {
        // No ignored entry in the walk: nothing for `ls-files` to list.
        let ignored = (*scan_ignored && st.dirty.is_clean()).then(|| {
            if st.any_ignored {
                ignored_paths(path, admin, timeout)
            } else {
                Ok(Vec::new())
            }
        });
        (st, ignored)
    })
}

/// Run the worktree jobs on up to 8 std scoped threads (one per core), each taking the
/// next job as it frees up (worktrees differ in cost) and handing back what it read when
/// it joins; results come back in job order. The jobs of a thread that panicked read as
/// unreadable (never as clean).
fn run_status_jobs(
    jobs: &[Job],
    how: (std::time::Duration, Option<&Watcher>),
    progress: &crate::progress::Progress,
) -> Vec<JobResult> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8)
        .min(jobs.len().max(1));
    let next = AtomicUsize::new(0);
    let mut results: Vec<Option<JobResult>> = jobs.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        let readers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut read = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else {
                            return read;
                        };
                        read.push((i, read_job(job, how)));
                        progress.inc();
                    }
                })
            })
            .collect();
        for reader in readers {
            for (i, r) in reader.join().unwrap_or_default() {
                results[i] = Some(r);
            }
        }
    });
    results
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| {
                Err(RepoError::Git(
                    "reading the worktree status failed (a thread panicked)".into(),
                ))
            })
        })
        .collect()
}

/// Every ignored file in the worktree at `path` (what `git worktree remove` deletes
/// without a word), read-only: `git --no-optional-locks ls-files --others --ignored
/// --exclude-standard` (which honours `info/exclude` and `core.excludesFile` as git does).
///
/// Errors: [`crate::git::GitError`] when the listing fails: what cannot be read is not
/// clean (SPEC special cases), so the caller never deletes on that reading. The listing is
/// killed past `timeout` (`recode.commandTimeout`).
pub(crate) fn ignored_paths(
    path: &Path,
    admin: &Path,
    timeout: std::time::Duration,
) -> Result<Vec<String>, crate::git::GitError> {
    let out = crate::git::Git::bound_read(path, admin, timeout)
        .args([
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
        ])
        .output()?;
    Ok(out
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).to_string())
        .collect())
}

/// Ignored paths summarized by their first component (`target/`, `.env`), for messages.
pub(crate) fn summarize(paths: &[String]) -> Vec<String> {
    let set: BTreeSet<String> = paths
        .iter()
        .map(|p| match p.split_once('/') {
            Some((dir, _)) => format!("{dir}/"),
            None => p.clone(),
        })
        .collect();
    set.into_iter().collect()
}
