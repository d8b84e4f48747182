//! Opening the repository (from any worktree, with `-C`, honouring `GIT_DIR` as git
//! does), refusing what is not supported, and the ref lookups every command shares:
//! the base, branch tips, upstreams, and commit counting.

use std::path::{Path, PathBuf};

use gix::ObjectId;
use jiff::Timestamp;

use crate::config::Config;

/// Errors opening or reading the repository.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// No git repository at or above the directory.
    #[error("not a git repository (or any parent up to the root): {path}")]
    NotARepo {
        /// Where the search started.
        path: PathBuf,
    },
    /// The repository uses a ref storage format git-recode cannot read (neither `files`
    /// nor `reftable`).
    #[error(
        "the repository at {path} uses the '{format}' ref storage format, which git-recode does not support yet"
    )]
    RefFormat {
        /// The repository's git dir.
        path: PathBuf,
        /// The `extensions.refStorage` value, e.g. `reftable`.
        format: String,
    },
    /// The repository uses an object format this build cannot read (neither `sha1` nor
    /// `sha256`).
    #[error(
        "the repository at {path} uses the '{format}' object format, which git-recode does not support yet"
    )]
    ObjectFormat {
        /// The repository's git dir.
        path: PathBuf,
        /// The `extensions.objectFormat` value, e.g. `sha256`.
        format: String,
    },
    /// The repository exists but could not be opened or read.
    #[error("cannot read the repository: {0}")]
    Git(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl RepoError {
    /// What the user can do about it (shown under the error), when there is something.
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            RepoError::NotARepo { .. } => {
                "run git recode inside a git repository, or point at one with -C <path>".into()
            }
            RepoError::RefFormat { .. } => {
                "use a clone with the files ref format (`git clone --ref-format=files …`)".into()
            }
            RepoError::ObjectFormat { .. } => {
                "git-recode reads SHA-1 and SHA-256 repositories".into()
            }
            RepoError::Git(_) => return None,
        })
    }
}

/// Wrap any gix error as [`RepoError::Git`].
pub(crate) fn git<E: std::error::Error + Send + Sync + 'static>(e: E) -> RepoError {
    RepoError::Git(Box::new(e))
}

/// Open the repository containing `dir` (or the current directory), as git would,
/// honouring `GIT_DIR`/`GIT_WORK_TREE` (hooks run with them set).
///
/// Both ref formats (`files`, `reftable`: [`crate::refs`]) and both object formats
/// (SHA-1, SHA-256) are read.
///
/// Errors: [`RepoError::NotARepo`], [`RepoError::RefFormat`] and
/// [`RepoError::ObjectFormat`] (a format git-recode does not know), [`RepoError::Git`].
pub(crate) fn open(dir: Option<&Path>) -> Result<gix::Repository, RepoError> {
    let start = match dir {
        Some(d) => d.to_path_buf(),
        None => std::env::current_dir().map_err(git)?,
    };
    if !start.exists() {
        return Err(RepoError::NotARepo { path: start });
    }
    let mut repo = match gix::ThreadSafeRepository::discover_with_environment_overrides(&start) {
        Ok(r) => r.to_thread_local(),
        Err(e) => {
            if let Some(found) = find_unknown_format(&start) {
                return Err(found);
            }
            let looks_like_repo = start
                .canonicalize()
                .unwrap_or_else(|_| start.clone())
                .ancestors()
                .any(|d| {
                    d.join(".git").exists()
                        || (d.join("HEAD").is_file() && d.join("objects").is_dir())
                });
            return if looks_like_repo {
                Err(RepoError::Git(e.to_string().into()))
            } else {
                Err(RepoError::NotARepo { path: start })
            };
        }
    };
    if let Some(format) = crate::refs::unknown_format(&repo) {
        return Err(RepoError::RefFormat {
            path: repo.git_dir().to_path_buf(),
            format,
        });
    }
    // The reflog of every ref git-recode moves (ledger, heartbeat, claims, a deleted
    // branch) needs a committer: with none configured, git-recode's own (in memory only;
    // the user's identity, when set, is kept). SPEC 1.3 "Errors a newcomer meets (more)".
    // (An unreadable GIT_COMMITTER_DATE is the commit's own error to report, not this.)
    let _ = repo.committer_or_set_fallback(crate::git::OWN_NAME, crate::git::OWN_EMAIL);
    Ok(repo)
}

/// When discovery fails, look above `start` for a repository whose format this build
/// cannot read (a ref storage format other than `files` and `reftable`, an object format
/// other than SHA-1 and SHA-256) to say why.
fn find_unknown_format(start: &Path) -> Option<RepoError> {
    let start = start.canonicalize().ok()?;
    for dir in start.ancestors() {
        for git_dir in [dir.join(".git"), dir.to_path_buf()] {
            // `extensions.*`, read by gix's config parser (no includes: only the
            // repository's own file says what format it has).
            let Ok(file) = gix::config::File::from_path_no_includes(
                git_dir.join("config"),
                gix::config::Source::Local,
            ) else {
                continue;
            };
            let value = |key: &str| {
                file.string(key)
                    .map(|v| v.to_string().trim().to_ascii_lowercase())
                    .filter(|v| !v.is_empty())
            };
            if let Some(v) =
                value("extensions.refStorage").filter(|v| v != "files" && v != "reftable")
            {
                return Some(RepoError::RefFormat {
                    path: git_dir,
                    format: v,
                });
            }
            if let Some(v) =
                value("extensions.objectFormat").filter(|v| v != "sha1" && v != "sha256")
            {
                return Some(RepoError::ObjectFormat {
                    path: git_dir,
                    format: v,
                });
            }
        }
    }
    None
}

/// Check `recode.base` (`cfg.base`) where it is read: [`crate::config::check_base_of`]
/// over this repository's refs.
///
/// Errors: [`ConfigError::Invalid`](crate::config::ConfigError::Invalid) naming the key.
pub(crate) fn check_base(
    repo: &gix::Repository,
    cfg: &Config,
) -> Result<(), crate::config::ConfigError> {
    check_base_of(repo, cfg.base.as_deref(), &cfg.remote)
}

/// [`check_base`] for the raw values (`doctor` asks it when another key keeps the whole
/// configuration from loading).
///
/// Errors: as [`check_base`].
pub(crate) fn check_base_of(
    repo: &gix::Repository,
    base: Option<&str>,
    remote: &str,
) -> Result<(), crate::config::ConfigError> {
    let exists = |name: &str| matches!(crate::refs::find(repo, name), Ok(Some(_)));
    let any_branch =
        crate::refs::list(repo, "refs/heads/").is_ok_and(|branches| !branches.is_empty());
    crate::config::check_base_of(&exists, any_branch, base, remote)
}

/// The tip of `full_name` (peeled to a commit id), if the ref exists.
pub(crate) fn tip(repo: &gix::Repository, full_name: &str) -> Option<ObjectId> {
    crate::refs::id(repo, full_name).ok().flatten()
}

/// The base branch name: `recode.base`, else the remote's HEAD, else `main`, else
/// `master`, each candidate taken only when it resolves (a local branch or a branch of
/// `recode.remote`): an `origin/HEAD` left pointing at a deleted branch (a rename on the
/// server) is passed over, never used (SPEC 1.3 "Errors a newcomer meets (more)").
/// `main` when nothing resolves (a repository with no branch yet). A set `recode.base`
/// is checked where the configuration is read ([`check_base`]).
pub(crate) fn base_name(repo: &gix::Repository, cfg: &Config) -> String {
    if let Some(b) = &cfg.base {
        return b.clone();
    }
    let resolves = |b: &str| {
        tip(repo, &format!("refs/heads/{b}")).is_some()
            || tip(repo, &format!("refs/remotes/{}/{b}", cfg.remote)).is_some()
    };
    remote_head(repo, &cfg.remote)
        .into_iter()
        .chain(["main".to_string(), "master".to_string()])
        .find(|b| resolves(b))
        .unwrap_or_else(|| "main".to_string())
}

/// The branch `refs/remotes/<remote>/HEAD` names (`main` for `origin/main`), whether or
/// not that branch exists; `None` when the remote has no HEAD ref here or it names no
/// branch of the remote.
pub(crate) fn remote_head(repo: &gix::Repository, remote: &str) -> Option<String> {
    let found = crate::refs::find(repo, &format!("refs/remotes/{remote}/HEAD")).ok()??;
    let crate::refs::Target::Symbolic(target) = found else {
        return None;
    };
    target
        .strip_prefix(&format!("refs/remotes/{remote}/"))
        .map(str::to_string)
}

/// The remote's HEAD when it names a branch that is not there (`refs/remotes/<remote>/HEAD`
/// left dangling by a rename on the server): its full target, for `doctor`'s warning.
pub(crate) fn dangling_remote_head(repo: &gix::Repository, remote: &str) -> Option<String> {
    let b = remote_head(repo, remote)?;
    let full = format!("refs/remotes/{remote}/{b}");
    tip(repo, &full).is_none().then_some(full)
}

/// The tips that make up the base: the local base branch and its remote-tracking branch
/// (SPEC "base": a commit is ahead when neither contains it).
pub(crate) fn base_tips(repo: &gix::Repository, cfg: &Config, base: &str) -> Vec<ObjectId> {
    let mut tips: Vec<ObjectId> = [
        format!("refs/heads/{base}"),
        format!("refs/remotes/{}/{base}", cfg.remote),
    ]
    .iter()
    .filter_map(|n| tip(repo, n))
    .collect();
    tips.dedup();
    tips
}

/// The remote-tracking ref of `branch`: its configured upstream, else `<recode.remote>/<branch>`.
pub(crate) fn remote_tracking(repo: &gix::Repository, cfg: &Config, branch: &str) -> String {
    let snap = repo.config_snapshot();
    let remote = snap
        .string(format!("branch.{branch}.remote").as_str())
        .map(|v| v.to_string());
    let merge = snap
        .string(format!("branch.{branch}.merge").as_str())
        .map(|v| v.to_string());
    if let (Some(remote), Some(merge)) = (remote, merge)
        && remote != "."
        && let Some(short) = merge.strip_prefix("refs/heads/")
    {
        return format!("refs/remotes/{remote}/{short}");
    }
    format!("refs/remotes/{}/{branch}", cfg.remote)
}

/// Whether a shallow repository has no merge base of a branch and its base in the
/// available history, from the walk's commits `ahead` ([`commits_between`] of the head,
/// hiding the base): with a merge base, some commit of the walk has a parent the walk hid
/// (a common ancestor); without one, every parent of the walk's commits is in the walk or
/// beyond the shallow boundary (a commit listed in `shallow`, whose parents are not here).
/// Then `ahead`/`behind` count only what is here (SPEC 1.2 "Never lose work: more
/// states"). `false` in a complete repository and for an empty walk (the head is in the
/// base); `true` when the shallow file or a commit of the walk cannot be read.
pub(crate) fn shallow_cut(repo: &gix::Repository, ahead: &[(ObjectId, i64)]) -> bool {
    let boundary = match repo.shallow_commits() {
        Ok(Some(b)) => b,
        Ok(None) => return false,
        Err(_) => return true,
    };
    if ahead.is_empty() {
        return false;
    }
    let walked: std::collections::HashSet<ObjectId> = ahead.iter().map(|(id, _)| *id).collect();
    for (id, _) in ahead {
        if boundary.contains(id) {
            continue; // its parents are not here
        }
        let Ok(commit) = repo.find_commit(*id) else {
            return true;
        };
        if commit.parent_ids().any(|p| !walked.contains(&p.detach())) {
            return false; // a parent the walk hid: a common ancestor
        }
    }
    true
}

/// Commits reachable from `tip` but from none of `hidden`, newest first, with committer times.
///
/// Errors: [`RepoError::Git`] when the walk cannot read a commit.
pub(crate) fn commits_between(
    repo: &gix::Repository,
    tip: ObjectId,
    hidden: &[ObjectId],
) -> Result<Vec<(ObjectId, i64)>, RepoError> {
    walk_between(repo, tip, hidden, None)
}

/// The newest `limit` commits (by committer time) reachable from `tip` but from none of
/// `hidden`, with committer times: a bounded read of a branch's recent work.
///
/// Errors: [`RepoError::Git`] when the walk cannot read a commit.
pub(crate) fn newest_between(
    repo: &gix::Repository,
    tip: ObjectId,
    hidden: &[ObjectId],
    limit: usize,
) -> Result<Vec<(ObjectId, i64)>, RepoError> {
    walk_between(repo, tip, hidden, Some(limit))
}

/// The walk behind [`commits_between`] (git's default order, all commits) and
/// [`newest_between`] (committer time, newest first, at most `limit`).
fn walk_between(
    repo: &gix::Repository,
    tip: ObjectId,
    hidden: &[ObjectId],
    limit: Option<usize>,
) -> Result<Vec<(ObjectId, i64)>, RepoError> {
    if hidden.contains(&tip) {
        return Ok(Vec::new());
    }
    let mut walk = repo.rev_walk([tip]).with_hidden(hidden.iter().copied());
    if limit.is_some() {
        walk = walk.sorting(gix::revision::walk::Sorting::ByCommitTime(
            gix::traverse::commit::simple::CommitTimeOrder::NewestFirst,
        ));
    }
    let walk = walk.all().map_err(git)?;
    let mut out = Vec::new();
    for info in walk.take(limit.unwrap_or(usize::MAX)) {
        let info = info.map_err(git)?;
        let time = match info.commit_time {
            Some(t) => t,
            None => info
                .object()
                .ok()
                .and_then(|c| c.time().ok())
                .map_or(0, |t| t.seconds),
        };
        out.push((info.id, time));
    }
    Ok(out)
}

/// Count commits reachable from `tip` but from none of `hidden`.
///
/// Errors: as [`commits_between`].
pub(crate) fn count_between(
    repo: &gix::Repository,
    tip: ObjectId,
    hidden: &[ObjectId],
) -> Result<u32, RepoError> {
    if hidden.contains(&tip) {
        return Ok(0);
    }
    let walk = repo
        .rev_walk([tip])
        .with_hidden(hidden.iter().copied())
        .all()
        .map_err(git)?;
    let mut n = 0u32;
    for info in walk {
        info.map_err(git)?;
        n += 1;
    }
    Ok(n)
}

/// Whether commit `id`'s message carries the `Recode-Wip: true` trailer (a git-recode WIP commit).
pub(crate) fn is_wip_commit(repo: &gix::Repository, id: ObjectId) -> bool {
    repo.find_commit(id)
        .ok()
        .and_then(|c| c.message_raw().ok().map(|m| m.to_string()))
        .is_some_and(|m| crate::trailer::is_wip(&m))
}

/// The newest committer time among `commits` that are not WIP commits and not after
/// `now`; when every one is after `now`, the newest (shown as ignored: SPEC "a timestamp
/// from the future is not activity"). A commit dated ahead by another host's clock (a
/// worker taken over from it) never hides this host's newer commits.
pub(crate) fn newest_worker_commit(
    repo: &gix::Repository,
    commits: &[(ObjectId, i64)],
    now: Timestamp,
) -> Option<Timestamp> {
    let mut sorted: Vec<_> = commits.to_vec();
    sorted.sort_by_key(|c| std::cmp::Reverse(c.1));
    let mut worker = sorted.iter().filter(|(id, _)| !is_wip_commit(repo, *id));
    let newest = worker.next()?;
    let past = if newest.1 <= now.as_second() {
        newest
    } else {
        worker
            .find(|(_, t)| *t <= now.as_second())
            .unwrap_or(newest)
    };
    Some(crate::clock::from_secs(past.1))
}

/// The short names of the local branches and of `recode.remote`'s branches that match
/// `recode.branchPattern` (workers by name), sorted, each once.
pub(crate) fn worker_branch_names(repo: &gix::Repository, cfg: &Config) -> Vec<String> {
    let Ok(refs) = crate::refs::list(repo, "refs/") else {
        return Vec::new();
    };
    let remote_prefix = format!("refs/remotes/{}/", cfg.remote);
    let mut names: Vec<String> = refs
        .into_iter()
        .filter_map(|r| {
            let full = r.name;
            full.strip_prefix("refs/heads/")
                .or_else(|| full.strip_prefix(&remote_prefix))
                .map(str::to_string)
        })
        .filter(|b| b != "HEAD" && cfg.task_of(b).is_some())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The worker branches ([`worker_branch_names`]) closest to `name`, closest first, at
/// most 3: the same task key first (`issue-1` → `issue-1-empty`), then by edit distance
/// (at most a third of the name, and 2 at least). For the error of a branch that exists
/// nowhere (SPEC 1.2 "Errors a newcomer meets").
pub(crate) fn closest_workers(repo: &gix::Repository, cfg: &Config, name: &str) -> Vec<String> {
    let key = cfg.task_of(name);
    let limit = (name.chars().count() / 3).max(2);
    let mut ranked: Vec<(bool, usize, String)> = worker_branch_names(repo, cfg)
        .into_iter()
        .filter(|b| b != name)
        .map(|b| {
            let same = key.is_some() && cfg.task_of(&b) == key;
            (!same, strsim::levenshtein(name, &b), b)
        })
        .filter(|(other, d, _)| !*other || *d <= limit)
        .collect();
    ranked.sort();
    ranked.into_iter().take(3).map(|(_, _, b)| b).collect()
}
