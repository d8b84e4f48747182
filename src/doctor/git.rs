//! The `git` check: the git binary's version and the repository's formats.

use super::{Check, Level, check, ok};

/// The git binary's version (at least [`crate::git::MIN_VERSION`]) and the repository's
/// formats (the ones opening it accepted: SHA-1, files refs).
pub(super) fn git_version(repo: &gix::Repository) -> Check {
    let version = crate::git::read(repo.git_dir(), &["version"])
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
