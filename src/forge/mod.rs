//! The forge (SPEC "Forge", "Pull request feedback", 1.2 "Forges"): a seam ([`Forge`])
//! and its clients — GitHub ([`GitHub`]), GitLab ([`GitLab`]), Gitea/Forgejo ([`Gitea`]) —
//! over one HTTP request loop (`client.rs`, `ureq`); `recode.forge none` (or no known
//! host) is no forge at all.
//!
//! - Which forge: `recode.forge`, `auto` by the remote's host ([`select`]).
//! - Tokens, hosts, the API override, timeouts: read once into
//!   [`crate::config::ForgeOptions`] and passed in; without the forge's token it is unknown.
//!   A token is sent as a header and never printed, logged or ledgered.
//! - Base URL: `RECODE_FORGE_API` (or `RECODE_GITHUB_API`) for whichever forge, else from
//!   the remote's host (`https://api.github.com`, `https://HOST/api/v3`,
//!   `https://HOST/api/v4`, `https://HOST/api/v1`).
//! - One listing of pull requests per run ([`view_of`]), newest first and cut off at the
//!   caller's `since` where the forge sorts (GitHub, GitLab; Gitea pages to the end);
//!   feedback (checks, reviews) only for the open pull requests of the branches asked;
//!   conditional GETs with ETags kept under the common git dir ([`etag`]), so an
//!   unchanged answer (304) costs no rate limit.

use std::collections::BTreeMap;

use jiff::Timestamp;

use crate::config::Config;
use crate::model::{Checks, Feedback, Pr, PrState, Review};

mod client;
pub(crate) mod etag;
pub(crate) mod feedback;
mod gitea;
mod github;
mod gitlab;
mod http;
mod origin;
mod pulls;
pub(crate) mod select;
pub(crate) mod verify;

pub(crate) use client::Limits;
pub(crate) use gitea::Gitea;
pub(crate) use github::CUTOFF_SLACK_SECS;
pub use github::GitHub;
pub(crate) use gitlab::GitLab;
pub(crate) use select::Kind;

/// Errors talking to the forge.
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    /// The remote URL names no project the forge can address: a local path, no host, or
    /// a path that is not `OWNER/REPO` (GitLab: `GROUP/…/PROJECT`). The message says what
    /// to set; it names no default host (SPEC 1.3 "Self-hosted forges").
    #[error(
        "the remote URL '{url}' names no {forge} {noun} (a URL like https://{shape}.git is needed): \
         point recode.remote at a remote whose URL names it (`git remote set-url <remote> <url>`), \
         or `git config recode.forge none`"
    )]
    NoProject {
        /// The URL (credentials removed).
        url: String,
        /// The forge (`GitHub`, `GitLab`, `Gitea`).
        forge: &'static str,
        /// `project` (GitLab) or `repository`.
        noun: &'static str,
        /// The path a URL on this forge has: `HOST/GROUP/PROJECT` or `HOST/OWNER/REPO`.
        shape: &'static str,
    },
    /// The request could not be made or answered.
    #[error("cannot reach the {forge} API at {api}: {why}")]
    Transport {
        /// The forge (`GitHub`, `GitLab`, `Gitea`).
        forge: &'static str,
        /// Base URL.
        api: String,
        /// What went wrong.
        why: String,
    },
    /// The forge answered with an error status.
    #[error("{forge} answered {status} to {what}: {message}")]
    Status {
        /// The forge (`GitHub`, `GitLab`, `Gitea`).
        forge: &'static str,
        /// HTTP status.
        status: u16,
        /// What was asked.
        what: String,
        /// The forge's `message` (never the body as it came).
        message: String,
    },
}

/// A forge: where pull (merge) requests, their checks and reviews, and issues live. Every
/// method is one or a few requests; errors are [`ForgeError`]. Its types are the
/// classifier's ([`Pr`], [`Checks`], [`Review`], [`Feedback`]), never a forge's own.
/// Implemented by [`GitHub`], [`GitLab`] and [`Gitea`]; tests of the callers can implement
/// it with canned answers (as `verify.rs`'s do).
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

    /// Keep what lasts between runs (the ETag cache) and hand over the run's warnings (a
    /// pagination link to another origin, refused), with one when the cache cannot be
    /// written. Also done when the forge is dropped, where warnings only reach the log.
    fn flush(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A URL with any `user:password@` removed, for messages (tokens ride in remote URLs).
pub(crate) fn redact_url(url: &str) -> String {
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

/// The host and the repository path (no leading or trailing `/`, no `.git`) of a remote
/// URL in any form git takes (`https://HOST/p(.git)`, `ssh://git@HOST(:port)/p(.git)`,
/// `git@HOST:p(.git)`), parsed by `gix::url`. `None` for a local path or an empty path.
pub(crate) fn remote_parts(url: &str) -> Option<(String, String)> {
    let url = gix::url::parse(url.trim()).ok()?;
    let host = url.host()?.to_ascii_lowercase();
    let path = std::str::from_utf8(url.path.as_ref()).ok()?;
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    (!path.is_empty() && !path.split('/').any(str::is_empty)).then(|| (host, path.to_string()))
}

/// Owner and repository name from a remote URL on `host` ([`remote_parts`]). `None` for
/// another host, a local path, or a path that is not `OWNER/REPO` (the tests' reading of
/// [`remote_parts`] for GitHub-shaped remotes).
#[cfg(test)]
fn parse_remote(url: &str, host: &str) -> Option<(String, String)> {
    let (h, path) = remote_parts(url)?;
    if !h.eq_ignore_ascii_case(host) {
        return None;
    }
    let (owner, repo) = path.split_once('/')?;
    (!repo.contains('/')).then(|| (owner.to_string(), repo.to_string()))
}

/// The issue number a `--blocker` names in this repository: `#12`, `12`,
/// `OWNER/REPO#12` or `https://HOST/OWNER/REPO/issues/12`.
pub(crate) fn blocker_issue(blocker: &str) -> Option<u64> {
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
pub(crate) fn remote_url(repo: &gix::Repository, name: &str) -> Option<String> {
    repo.config_snapshot()
        .string(format!("remote.{name}.url").as_str())
        .map(|v| v.to_string())
}

/// Where the ETag cache of a repository lives: `<common-dir>/recode/etags.json`.
pub(crate) fn etag_path(repo: &gix::Repository) -> std::path::PathBuf {
    repo.common_dir().join("recode").join("etags.json")
}

/// The forge of the repository's remote `cfg.remote` as `cfg.forge` says
/// (`select::client`), with its ETags under the common git dir: `Ok(None)` when there
/// is no such remote, the forge is `none`, or its token is not set (unknown).
///
/// Errors: [`ForgeError::NoProject`] when the remote URL names no repository there.
pub(crate) fn open(
    repo: &gix::Repository,
    cfg: &Config,
) -> Result<Option<Box<dyn Forge>>, ForgeError> {
    match remote_url(repo, &cfg.remote) {
        Some(url) => select::client(&cfg.forge, &url, Some(etag_path(repo))),
        None => Ok(None),
    }
}

/// The forge to ask in one run: `None` when `offline`, without a token or a remote, or
/// when the remote is on no forge; with the warnings for stderr: the remote names no
/// repository on the forge chosen, or a token is set but `auto` found no forge for the
/// remote's host (there is no forge to ask, so nothing failed and nothing waits on it).
pub(crate) fn open_run(
    repo: &gix::Repository,
    cfg: &Config,
    offline: bool,
) -> (Option<Box<dyn Forge>>, Vec<String>) {
    if offline {
        return (None, Vec::new());
    }
    let url = remote_url(repo, &cfg.remote);
    match open(repo, cfg) {
        Ok(None) => (
            None,
            url.and_then(|u| select::no_forge_hint(&cfg.forge, &u))
                .into_iter()
                .collect(),
        ),
        Ok(f) => (f, Vec::new()),
        Err(e) => (None, vec![format!("no forge: {e}")]),
    }
}

/// What the forge of the repository's remote `cfg.remote` calls its requests (SPEC 1.3:
/// merge request on GitLab; pull request on GitHub, Gitea, and with no forge).
pub(crate) fn noun(repo: &gix::Repository, cfg: &Config) -> crate::model::reason::RequestNoun {
    remote_url(repo, &cfg.remote)
        .and_then(|u| select::kind_of(&cfg.forge, &u))
        .map(Kind::noun)
        .unwrap_or_default()
}

/// The warning `status` gives once when the remote is on a forge whose token is not set:
/// pull requests are unknown, and which variable to set. `None` otherwise.
pub(crate) fn missing_token(repo: &gix::Repository, cfg: &Config) -> Option<String> {
    select::missing_token(&cfg.forge, &remote_url(repo, &cfg.remote)?)
}

/// Why a pushed branch gets no pull request from us (for `publish`'s message): no token
/// (naming the forge's variables), `recode.forge` none, or no forge for the remote.
pub(crate) fn why_none(repo: &gix::Repository, cfg: &Config) -> String {
    let url = remote_url(repo, &cfg.remote).unwrap_or_default();
    select::why_none(&cfg.forge, &url, &cfg.remote)
}

/// What to ask the forge in one run ([`view_of`]).
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

/// The forge's view for one run: one listing of pull requests (newest first, cut off at
/// `ask.since`), then the feedback of the open pull requests of `ask.feedback_for`
/// (3 conditional requests each, 4 with requested changes). Returns the view and the
/// warnings for stderr:
/// - the listing failing makes the view [`View::Failed`] (one warning);
/// - feedback failing leaves that pull request's and the remaining ones' `checks` and
///   `review` `None` (unknown: nothing is resumed on a guess), with one warning;
/// - the ETag cache failing to be written is one warning.
///
/// No repository needed; `ask.offline` is not looked at (no forge: [`View::Unknown`],
/// decided by the caller).
#[tracing::instrument(level = "debug", skip_all, fields(since = ?ask.since, feedback_for = ask.feedback_for.len()))]
pub fn view_of(forge: &dyn Forge, ask: &Ask) -> (View, Vec<String>) {
    let mut warnings = Vec::new();
    let view = match forge.pulls(ask.since) {
        Ok(mut prs) => {
            for branch in ask.feedback_for {
                let Some(pr) = prs.get_mut(branch) else {
                    continue;
                };
                let Some(sha) = pr.head.filter(|_| pr.state == PrState::Open) else {
                    continue;
                };
                match forge.feedback(pr.number, &sha.to_string()) {
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
