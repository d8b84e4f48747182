//! The forge (SPEC "Forge", "Pull request feedback"): a seam ([`Forge`]) and its one
//! implementation, GitHub's REST API over HTTPS ([`GitHub`], `ureq`).
//!
//! - Token from `GH_TOKEN`, else `GITHUB_TOKEN`; without one the forge is unknown.
//!   The token is sent as a header and never printed, logged or ledgered.
//! - Base URL: `RECODE_GITHUB_API` (tests), else `https://$GH_HOST/api/v3` (Enterprise),
//!   else `https://api.github.com`.
//! - Owner and repo come from the remote URL (any form git takes, parsed by `gix::url`).
//! - One listing of pull requests per run ([`view_with`]), newest first and cut off at the
//!   caller's `since`; feedback (checks, reviews) only for the open pull requests of the
//!   branches asked; conditional GETs with ETags kept under the common git dir
//!   ([`etag`]), so an unchanged answer (304) costs no rate limit.

use std::collections::BTreeMap;

use jiff::Timestamp;

use crate::model::{Checks, Feedback, Pr, PrState, Review};

pub mod etag;
pub mod feedback;
mod github;
mod http;
mod pulls;

pub use github::{API_ENV, CUTOFF_SLACK_SECS, GitHub};
pub use pulls::{Head, PullRequest};

/// Errors talking to the forge.
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    /// The remote is not on the GitHub host.
    #[error("the remote URL '{url}' is not a GitHub repository on {host}")]
    NotGitHub {
        /// The URL (credentials removed).
        url: String,
        /// The expected host.
        host: String,
    },
    /// The request could not be made or answered.
    #[error("cannot reach the GitHub API at {api}: {why}")]
    Transport {
        /// Base URL.
        api: String,
        /// What went wrong.
        why: String,
    },
    /// GitHub answered with an error status.
    #[error("GitHub answered {status} to {what}: {message}")]
    Status {
        /// HTTP status.
        status: u16,
        /// What was asked.
        what: String,
        /// GitHub's `message`.
        message: String,
    },
}

/// A forge: where pull requests, their checks and reviews, and issues live. Every method
/// is one or a few requests; errors are [`ForgeError`]. Implemented by [`GitHub`]; tests of
/// the callers can implement it with canned answers.
pub trait Forge: std::fmt::Debug {
    /// The pull request per branch from one listing (this repository's own, not forks'):
    /// an open one first, else the newest. Pull requests opened before `since` (less a
    /// day of slack for skewed clocks) may be left out; `None` lists them all. No
    /// feedback is filled in (`checks`, `review` are `None`).
    fn pulls(&self, since: Option<Timestamp>) -> Result<BTreeMap<String, Pr>, ForgeError>;

    /// The pull request of one branch, if any (open first, else the newest).
    fn pull_for(&self, branch: &str) -> Result<Option<Pr>, ForgeError>;

    /// Open a pull request from `branch` into `base`; when one is already open, that one.
    fn open_pull(
        &self,
        branch: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> Result<Pr, ForgeError>;

    /// Whether issue `number` is closed (a missing issue is an error).
    fn issue_closed(&self, number: u64) -> Result<bool, ForgeError>;

    /// The verdict on open pull request `pr_number` whose head is `head_sha` (SPEC "Pull
    /// request feedback"): its checks, its review, and the failing checks and requested
    /// changes behind them (untrusted text, each cut to
    /// [`feedback::MAX_TEXT`] characters).
    fn feedback(
        &self,
        pr_number: u64,
        head_sha: &str,
    ) -> Result<(Option<Checks>, Option<Review>, Feedback), ForgeError>;

    /// Keep what lasts between runs (the ETag cache); a warning when it cannot. Also done
    /// when the forge is dropped, where a warning only reaches the log.
    fn flush(&self) -> Option<String> {
        None
    }
}

/// The host GitHub lives on: `GH_HOST`, else `github.com`.
pub fn host() -> String {
    std::env::var("GH_HOST")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "github.com".into())
}

/// The token: `GH_TOKEN`, else `GITHUB_TOKEN`.
pub fn token() -> Option<String> {
    ["GH_TOKEN", "GITHUB_TOKEN"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()))
}

/// A URL with any `user:password@` removed, for messages (tokens ride in remote URLs).
pub fn redact_url(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            match authority.rsplit_once('@') {
                Some((_, host)) => format!("{scheme}://***@{host}/{path}"),
                None => url.to_string(),
            }
        }
        None => url.to_string(),
    }
}

/// Owner and repository name from a remote URL on `host`, in any form git takes
/// (`https://HOST/o/r(.git)`, `ssh://git@HOST(:port)/o/r(.git)`, `git@HOST:o/r(.git)`),
/// parsed by `gix::url`. `None` for another host, a local path, or a path that is not
/// `OWNER/REPO`.
pub fn parse_remote(url: &str, host: &str) -> Option<(String, String)> {
    let url = gix::url::parse(url.trim()).ok()?;
    if !url.host()?.eq_ignore_ascii_case(host) {
        return None;
    }
    let path = std::str::from_utf8(url.path.as_ref()).ok()?;
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    let mut parts = path.split('/');
    let (owner, repo) = (parts.next()?, parts.next()?);
    if parts.next().is_some() || owner.is_empty() || repo.is_empty() {
        return None;
    }
    Some((owner.to_string(), repo.to_string()))
}

/// The issue number a `--blocker` names in this repository: `#12`, `12`,
/// `OWNER/REPO#12` or `https://HOST/OWNER/REPO/issues/12`.
pub fn blocker_issue(blocker: &str) -> Option<u64> {
    let b = blocker.trim();
    let tail = b
        .rsplit_once("/issues/")
        .map(|(_, n)| n)
        .or_else(|| b.rsplit_once('#').map(|(_, n)| n))
        .unwrap_or(b);
    tail.trim_end_matches('/').parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_urls() {
        let want = Some(("acme".to_string(), "widget".to_string()));
        for url in [
            "https://github.com/acme/widget.git",
            "https://github.com/acme/widget",
            "https://user@github.com/acme/widget/",
            "ssh://git@github.com/acme/widget.git",
            "ssh://git@github.com:22/acme/widget.git",
            "git@github.com:acme/widget.git",
            "github.com:acme/widget",
        ] {
            assert_eq!(parse_remote(url, "github.com"), want, "{url}");
        }
        for url in [
            "https://gitlab.com/acme/widget.git",
            "/srv/git/widget.git",
            "../origin.git",
            "https://github.com/acme",
            "https://github.com/acme/widget/extra",
            "file:///tmp/x.git",
        ] {
            assert_eq!(parse_remote(url, "github.com"), None, "{url}");
        }
        assert_eq!(
            parse_remote("git@ghe.corp:team/svc.git", "ghe.corp"),
            Some(("team".into(), "svc".into()))
        );
    }

    #[test]
    fn urls_lose_their_credentials_in_messages() {
        assert_eq!(
            redact_url("https://oauth2:tok@gitlab.example/acme/w.git"),
            "https://***@gitlab.example/acme/w.git"
        );
        assert_eq!(
            redact_url("git@github.com:acme/w.git"),
            "git@github.com:acme/w.git"
        );
        assert_eq!(redact_url("/srv/w.git"), "/srv/w.git");
    }

    #[test]
    fn blocker_issue_numbers() {
        for (b, n) in [
            ("#12", Some(12)),
            ("12", Some(12)),
            ("acme/widget#12", Some(12)),
            ("https://github.com/acme/widget/issues/12", Some(12)),
            ("the API", None),
        ] {
            assert_eq!(blocker_issue(b), n, "{b}");
        }
    }
}

/// What the forge said in this run (the one view type, kept in [`crate::model`]).
pub use crate::model::ForgeView as View;

/// The raw URL of remote `name` (`remote.<name>.url`), if configured.
pub fn remote_url(repo: &gix::Repository, name: &str) -> Option<String> {
    repo.config_snapshot()
        .string(format!("remote.{name}.url").as_str())
        .map(|v| v.to_string())
}

/// Where the ETag cache of a repository lives: `<common-dir>/recode/etags.json`.
pub fn etag_path(repo: &gix::Repository) -> std::path::PathBuf {
    repo.common_dir().join("recode").join("etags.json")
}

/// The GitHub client for the repository's remote `remote` (`recode.remote`), keeping its
/// ETags under the common git dir: `Ok(None)` when there is no token or no such remote.
///
/// Errors: [`ForgeError::NotGitHub`] when a token is set but the remote is elsewhere.
pub fn for_repo(repo: &gix::Repository, remote: &str) -> Result<Option<GitHub>, ForgeError> {
    if token().is_none() {
        return Ok(None);
    }
    match remote_url(repo, remote) {
        Some(url) => Ok(GitHub::from_env(&url)?.map(|gh| gh.with_cache(etag_path(repo)))),
        None => Ok(None),
    }
}

/// [`for_repo`] behind the [`Forge`] seam.
///
/// Errors: as [`for_repo`].
pub fn open(repo: &gix::Repository, remote: &str) -> Result<Option<Box<dyn Forge>>, ForgeError> {
    Ok(for_repo(repo, remote)?.map(|gh| Box::new(gh) as Box<dyn Forge>))
}

/// What to ask the forge in one run ([`view_with`]).
#[derive(Clone, Debug, Default)]
pub struct Ask<'a> {
    /// Ask nothing: the forge is unknown (`--offline`).
    pub offline: bool,
    /// The oldest worker's first ledger event: pull requests opened before it (less
    /// [`CUTOFF_SLACK_SECS`]) are not paged through. `None`: every page.
    pub since: Option<Timestamp>,
    /// The branches whose open pull request gets its feedback read (`checks`, `review`,
    /// `feedback`): the workers' branches. Others keep `None`.
    pub feedback_for: &'a [String],
}

/// The forge to ask in one run: `None` when `offline`, without a token or a remote, or
/// when the remote is not on GitHub (then with one warning for stderr: there is no forge
/// to ask, so nothing failed and nothing waits on it).
pub fn open_run(
    repo: &gix::Repository,
    remote: &str,
    offline: bool,
) -> (Option<Box<dyn Forge>>, Vec<String>) {
    if offline {
        return (None, Vec::new());
    }
    match open(repo, remote) {
        Ok(f) => (f, Vec::new()),
        Err(e) => (None, vec![format!("no forge: {e}")]),
    }
}

/// The forge's view for one run: one listing of pull requests (newest first, cut off at
/// `ask.since`), then the feedback of the open pull requests of `ask.feedback_for`
/// (3 conditional requests each, 4 with requested changes). Returns the view and the
/// warnings for stderr:
/// - no forge ([`open_run`]) is [`View::Unknown`] (one warning when the remote is not
///   on GitHub);
/// - the listing failing makes the view [`View::Failed`] (one warning);
/// - feedback failing leaves that pull request's and the remaining ones' `checks` and
///   `review` `None` (unknown: nothing is resumed on a guess), with one warning;
/// - the ETag cache failing to be written is one warning.
pub fn view_with(repo: &gix::Repository, remote: &str, ask: &Ask) -> (View, Vec<String>) {
    let (forge, mut warnings) = open_run(repo, remote, ask.offline);
    let (view, more) = view_opt(forge.as_deref(), ask);
    warnings.extend(more);
    (view, warnings)
}

/// [`view_of`] when there is a forge, else [`View::Unknown`] with no warning.
pub fn view_opt(forge: Option<&dyn Forge>, ask: &Ask) -> (View, Vec<String>) {
    match forge {
        Some(f) => view_of(f, ask),
        None => (View::Unknown, Vec::new()),
    }
}

/// [`view_with`] on a given forge (no repository needed; `ask.offline` is not looked at).
#[tracing::instrument(level = "debug", skip_all, fields(since = ?ask.since, feedback_for = ask.feedback_for.len()))]
pub fn view_of(forge: &dyn Forge, ask: &Ask) -> (View, Vec<String>) {
    let mut warnings = Vec::new();
    let view = match forge.pulls(ask.since) {
        Ok(mut prs) => {
            for branch in ask.feedback_for {
                let Some(pr) = prs.get_mut(branch) else {
                    continue;
                };
                let Some(sha) = pr.head.clone().filter(|_| pr.state == PrState::Open) else {
                    continue;
                };
                match forge.feedback(pr.number, &sha) {
                    Ok((checks, review, feedback)) => {
                        pr.checks = checks;
                        pr.review = review;
                        pr.feedback = feedback;
                    }
                    Err(e) => {
                        warnings.push(format!(
                            "cannot read the checks and reviews of pull request #{}; \
                             feedback is unknown in this run: {e}",
                            pr.number
                        ));
                        break;
                    }
                }
            }
            View::Known(prs)
        }
        Err(e) => {
            warnings.push(format!(
                "the forge failed, pull requests are unknown in this run: {e}"
            ));
            View::Failed
        }
    };
    warnings.extend(forge.flush());
    (view, warnings)
}
