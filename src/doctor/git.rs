//! The `git` check: the git binary's version and the repository's formats.

use super::{Check, Level, check, ok};
// Run before the configuration is read (it may not load): the default deadline.
use crate::config::DEFAULT_COMMAND_TIMEOUT;

/// The git binary's version (at least [`crate::git::MIN_VERSION`]) and the repository's
/// formats (the ones opening it accepted: SHA-1, files refs).
pub(super) fn git_version(repo: &gix::Repository) -> Check {
    let version = crate::git::read(repo.git_dir(), DEFAULT_COMMAND_TIMEOUT, &["version"])
        .map(|v| String::from_utf8_lossy(&v).trim().to_string());
    match (version, crate::git::check_version()) {
        (Ok(v), Ok(())) => ok("git", format!("{v}; repository: SHA-1 objects, files refs")),
        (_, Err(e)) | (Err(e), _) => check(
            "git",
            Level::Fail,
            e.to_string(),
            Some("install git 2.31 or newer and put it first on PATH".into()),
        ),
    }
}

/// git finds an author and a committer for a commit in the worktree (`git var`,
/// [`crate::git::missing_identities`]): in a fresh container it does not, and every
/// commit the agent makes fails ("Author identity unknown"). git-recode's own ledger and
/// heartbeat commits carry its own identity, so only a warning (SPEC 1.3).
pub(super) fn identity(repo: &gix::Repository) -> Check {
    let dir = repo.workdir().unwrap_or_else(|| repo.git_dir());
    let missing = crate::git::missing_identities(dir, DEFAULT_COMMAND_TIMEOUT);
    let Some((_, why)) = missing.first() else {
        return ok(
            "identity",
            "git finds an author and a committer for commits here".into(),
        );
    };
    let roles: Vec<&str> = missing
        .iter()
        .map(|(who, _)| match who {
            crate::git::Identity::Author => "author",
            crate::git::Identity::Committer => "committer",
        })
        .collect();
    check(
        "identity",
        Level::Warn,
        format!(
            "git has no {} identity ({why}): the agent's own commits will fail; git-recode's ledger still works (its commits carry the identity {} <{}>)",
            roles.join(" nor "),
            crate::git::OWN_NAME,
            crate::git::OWN_EMAIL
        ),
        Some(
            "git config --global user.name 'Your Name' && git config --global user.email you@example.com (or set GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, GIT_COMMITTER_NAME, GIT_COMMITTER_EMAIL in the loop's environment)".into(),
        ),
    )
}
