//! The forge: GitHub's REST API over HTTPS (`ureq`), per the SPEC's "Forge" section.
//!
//! - Token from `GH_TOKEN`, else `GITHUB_TOKEN`; without one the forge is unknown.
//!   The token is sent as a header and never printed, logged or ledgered.
//! - Base URL: `RECODE_GITHUB_API` (tests), else `https://$GH_HOST/api/v3` (Enterprise),
//!   else `https://api.github.com`.
//! - Owner and repo come from the remote URL (https, ssh and scp-like forms).
//! - Time-outs (30 s a request); up to 3 retries with backoff on 5xx and on rate limits,
//!   honouring `retry-after` and `x-ratelimit-reset` (each wait capped at
//!   `RECODE_FORGE_MAX_WAIT` seconds, default 20).

use std::time::Duration;

use serde::Deserialize;

/// What the forge said in this run (the one view type, kept in [`crate::model`]).
pub use crate::model::ForgeView as View;
use crate::model::{Pr, PrState};

/// Environment variable overriding the API base URL (tests point it at a loopback server).
pub const API_ENV: &str = "RECODE_GITHUB_API";
/// Retries after the first try.
const RETRIES: u32 = 3;

/// Errors talking to the forge.
#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    /// The remote is not on the GitHub host.
    #[error("the remote URL '{url}' is not a GitHub repository on {host}")]
    NotGitHub {
        /// The URL.
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

/// A pull request as GitHub's REST API returns it (only the fields used).
#[derive(Deserialize, Clone, Debug)]
pub struct PullRequest {
    /// Its number.
    pub number: u64,
    /// `open` or `closed`.
    pub state: String,
    /// Set when merged (list items have no `merged` boolean).
    pub merged_at: Option<String>,
    /// The page.
    pub html_url: String,
    /// The head branch.
    pub head: Head,
}

/// `head` of a pull request.
#[derive(Deserialize, Clone, Debug)]
pub struct Head {
    /// `OWNER:BRANCH`.
    #[serde(default)]
    pub label: String,
    /// The branch name.
    #[serde(rename = "ref")]
    pub ref_name: String,
    /// The commit the head points at.
    #[serde(default)]
    pub sha: Option<String>,
}

impl PullRequest {
    /// The classifier's view of it.
    pub fn to_pr(&self) -> Pr {
        let state = if self.merged_at.is_some() {
            PrState::Merged
        } else if self.state == "open" {
            PrState::Open
        } else {
            PrState::Closed
        };
        Pr {
            number: self.number,
            state,
            url: self.html_url.clone(),
            head: self.head.sha.clone(),
            checks: None,
            review: None,
            feedback: Default::default(),
        }
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

/// Owner and repository name from a remote URL on `host`: `https://HOST/o/r(.git)`,
/// `ssh://git@HOST(:port)/o/r(.git)`, `git@HOST:o/r(.git)`.
pub fn parse_remote(url: &str, host: &str) -> Option<(String, String)> {
    let url = url.trim();
    let path = if let Some(rest) = url.split_once("://").map(|(_, r)| r) {
        let (authority, path) = rest.split_once('/')?;
        let hostport = authority.rsplit('@').next()?;
        let h = hostport.split(':').next()?;
        if !h.eq_ignore_ascii_case(host) {
            return None;
        }
        path
    } else {
        // scp-like: [user@]host:path
        let (left, path) = url.split_once(':')?;
        let h = left.rsplit('@').next()?;
        if !h.eq_ignore_ascii_case(host) || path.starts_with('/') && path.starts_with("//") {
            return None;
        }
        path
    };
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    let mut parts = path.split('/');
    let (owner, repo) = (parts.next()?, parts.next()?);
    if parts.next().is_some() || owner.is_empty() || repo.is_empty() {
        return None;
    }
    Some((owner.to_string(), repo.to_string()))
}

/// A GitHub repository to ask.
pub struct GitHub {
    agent: ureq::Agent,
    api: String,
    token: String,
    /// Repository owner.
    pub owner: String,
    /// Repository name.
    pub repo: String,
}

impl std::fmt::Debug for GitHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        write!(f, "GitHub({}/{} at {})", self.owner, self.repo, self.api)
    }
}

fn max_wait() -> Duration {
    let secs = std::env::var("RECODE_FORGE_MAX_WAIT")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(20);
    Duration::from_secs(secs)
}

impl GitHub {
    /// The forge for a remote URL, when a token is set. `Ok(None)`: no token (the forge is unknown).
    ///
    /// Errors: [`ForgeError::NotGitHub`] when the URL is not on the GitHub host.
    pub fn from_env(remote_url: &str) -> Result<Option<GitHub>, ForgeError> {
        let Some(token) = token() else {
            return Ok(None);
        };
        let host = host();
        let (owner, repo) =
            parse_remote(remote_url, &host).ok_or_else(|| ForgeError::NotGitHub {
                url: redact_url(remote_url),
                host: host.clone(),
            })?;
        let api = std::env::var(API_ENV)
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| {
                if host == "github.com" {
                    "https://api.github.com".into()
                } else {
                    format!("https://{host}/api/v3")
                }
            })
            .trim_end_matches('/')
            .to_string();
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(30)))
            .http_status_as_error(false)
            .user_agent(concat!("git-recode/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Ok(Some(GitHub {
            agent,
            api,
            token,
            owner,
            repo,
        }))
    }

    /// One request with retries; returns status, headers we use, and the body.
    fn call(
        &self,
        method: &str,
        url: &str,
        body: Option<&serde_json::Value>,
        what: &str,
    ) -> Result<(u16, Option<String>, String), ForgeError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            tracing::debug!(method, url, attempt, "forge request");
            let auth = format!("Bearer {}", self.token);
            let res = match (method, body) {
                ("POST", Some(b)) => self
                    .agent
                    .post(url)
                    .header("Authorization", &auth)
                    .header("Accept", "application/vnd.github+json")
                    .header("X-GitHub-Api-Version", "2022-11-28")
                    .content_type("application/json")
                    .send(b.to_string().as_bytes()),
                _ => self
                    .agent
                    .get(url)
                    .header("Authorization", &auth)
                    .header("Accept", "application/vnd.github+json")
                    .header("X-GitHub-Api-Version", "2022-11-28")
                    .call(),
            };
            let mut res = match res {
                Ok(r) => r,
                Err(e) => {
                    if attempt <= RETRIES {
                        std::thread::sleep(backoff(attempt));
                        continue;
                    }
                    return Err(ForgeError::Transport {
                        api: self.api.clone(),
                        why: e.to_string(),
                    });
                }
            };
            let status = res.status().as_u16();
            let header = |k: &str| {
                res.headers()
                    .get(k)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            let retry_after = header("retry-after").and_then(|v| v.parse::<u64>().ok());
            let remaining = header("x-ratelimit-remaining");
            let reset = header("x-ratelimit-reset").and_then(|v| v.parse::<i64>().ok());
            let link = header("link");
            let text = res.body_mut().read_to_string().unwrap_or_default();
            let rate_limited = (status == 403 || status == 429)
                && (retry_after.is_some()
                    || remaining.as_deref() == Some("0")
                    || text.to_ascii_lowercase().contains("rate limit"));
            if (status >= 500 || rate_limited) && attempt <= RETRIES {
                let wait = if let Some(s) = retry_after {
                    Duration::from_secs(s)
                } else if let (Some("0"), Some(reset)) = (remaining.as_deref(), reset) {
                    let now = crate::clock::now().map(|t| t.as_second()).unwrap_or(0);
                    Duration::from_secs((reset - now).max(0) as u64)
                } else if rate_limited {
                    Duration::from_secs(60)
                } else {
                    backoff(attempt)
                };
                std::thread::sleep(wait.min(max_wait()));
                continue;
            }
            if status >= 400 {
                let message = serde_json::from_str::<serde_json::Value>(&text)
                    .ok()
                    .map(|v| {
                        let mut m = v["message"].as_str().unwrap_or("").to_string();
                        if let Some(errs) = v["errors"].as_array() {
                            for e in errs {
                                if let Some(em) = e["message"].as_str() {
                                    m.push_str(": ");
                                    m.push_str(em);
                                }
                            }
                        }
                        m
                    })
                    .unwrap_or_else(|| text.chars().take(200).collect());
                return Err(ForgeError::Status {
                    status,
                    what: what.to_string(),
                    message,
                });
            }
            return Ok((status, link, text));
        }
    }

    fn parse<T: serde::de::DeserializeOwned>(
        &self,
        text: &str,
        what: &str,
    ) -> Result<T, ForgeError> {
        serde_json::from_str(text).map_err(|e| ForgeError::Transport {
            api: self.api.clone(),
            why: format!("unexpected answer to {what}: {e}"),
        })
    }

    /// Every pull request of the repository (`state=all`, following pagination).
    ///
    /// Errors: [`ForgeError`].
    pub fn list_pulls(&self) -> Result<Vec<PullRequest>, ForgeError> {
        let mut url = format!(
            "{}/repos/{}/{}/pulls?state=all&per_page=100",
            self.api, self.owner, self.repo
        );
        let mut out = Vec::new();
        for _ in 0..1000 {
            let (_, link, text) = self.call("GET", &url, None, "the pull request listing")?;
            out.extend(self.parse::<Vec<PullRequest>>(&text, "the pull request listing")?);
            match link.as_deref().and_then(next_link) {
                Some(next) => url = next,
                None => break,
            }
        }
        Ok(out)
    }

    /// The pull request for `branch`, if any (`?head=OWNER:BRANCH&state=all`, checked on `head.ref`).
    ///
    /// Errors: [`ForgeError`].
    pub fn find_pull(&self, branch: &str) -> Result<Option<PullRequest>, ForgeError> {
        let url = format!(
            "{}/repos/{}/{}/pulls?state=all&head={}:{}",
            self.api,
            self.owner,
            self.repo,
            encode(&self.owner),
            encode(branch)
        );
        let (_, _, text) = self.call("GET", &url, None, "the pull request lookup")?;
        let prs: Vec<PullRequest> = self.parse(&text, "the pull request lookup")?;
        Ok(pick(prs.iter().filter(|p| self.is_ours(p, branch))).cloned())
    }

    /// Whether `pr` is this repository's pull request for `branch` (not a fork's namesake).
    pub fn is_ours(&self, pr: &PullRequest, branch: &str) -> bool {
        pr.head.ref_name == branch
            && (pr.head.label.is_empty()
                || pr
                    .head
                    .label
                    .eq_ignore_ascii_case(&format!("{}:{branch}", self.owner)))
    }

    /// Open a pull request from `branch` into `base`; a 422 "already exists" finds and returns that one.
    ///
    /// Errors: [`ForgeError`].
    pub fn create_pull(
        &self,
        branch: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> Result<PullRequest, ForgeError> {
        let url = format!("{}/repos/{}/{}/pulls", self.api, self.owner, self.repo);
        let payload =
            serde_json::json!({"title": title, "head": branch, "base": base, "body": body});
        match self.call("POST", &url, Some(&payload), "opening the pull request") {
            Ok((_, _, text)) => self.parse(&text, "opening the pull request"),
            Err(ForgeError::Status {
                status: 422,
                message,
                ..
            }) if message.contains("already exists") => {
                self.find_pull(branch)?.ok_or_else(|| ForgeError::Status {
                    status: 422,
                    what: "opening the pull request".into(),
                    message,
                })
            }
            Err(e) => Err(e),
        }
    }

    /// Whether issue `number` is closed (`GET /repos/{owner}/{repo}/issues/{number}`).
    ///
    /// Errors: [`ForgeError`] (a missing issue is a 404 error).
    pub fn issue_closed(&self, number: u64) -> Result<bool, ForgeError> {
        let url = format!(
            "{}/repos/{}/{}/issues/{number}",
            self.api, self.owner, self.repo
        );
        let (_, _, text) = self.call("GET", &url, None, "the blocker issue lookup")?;
        let v: serde_json::Value = self.parse(&text, "the blocker issue lookup")?;
        Ok(v["state"].as_str() == Some("closed"))
    }

    /// The pull request per branch from one listing: open first, else the newest.
    pub fn by_branch(&self, prs: &[PullRequest]) -> std::collections::BTreeMap<String, Pr> {
        let mut branches: std::collections::BTreeMap<String, Vec<&PullRequest>> =
            Default::default();
        for p in prs {
            if self.is_ours(p, &p.head.ref_name) {
                branches.entry(p.head.ref_name.clone()).or_default().push(p);
            }
        }
        branches
            .into_iter()
            .filter_map(|(b, ps)| pick(ps.into_iter()).map(|p| (b, p.to_pr())))
            .collect()
    }
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

/// Prefer an open pull request, else the highest number.
fn pick<'a>(prs: impl Iterator<Item = &'a PullRequest>) -> Option<&'a PullRequest> {
    prs.max_by_key(|p| (p.state == "open" && p.merged_at.is_none(), p.number))
}

fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(250 * (1 << attempt.min(4)))
}

/// The `rel="next"` URL of a `link` header.
fn next_link(link: &str) -> Option<String> {
    link.split(',').find_map(|part| {
        let (url, rel) = part.split_once(';')?;
        rel.contains("rel=\"next\"").then(|| {
            url.trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_string()
        })
    })
}

/// Percent-encode a query value.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
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

    #[test]
    fn link_header() {
        let h = r#"<https://api.github.com/repositories/3003/pulls?state=all&per_page=100&page=2>; rel="next", <https://api.github.com/repositories/3003/pulls?state=all&per_page=100&page=4>; rel="last""#;
        assert_eq!(
            next_link(h).as_deref(),
            Some("https://api.github.com/repositories/3003/pulls?state=all&per_page=100&page=2")
        );
        assert_eq!(next_link(r#"<https://x/p?page=4>; rel="last""#), None);
    }

    #[test]
    fn list_items_parse_from_the_documented_shape() {
        let text = include_str!("../tests/data/github/pulls-list.json");
        let prs: Vec<PullRequest> = serde_json::from_str(text).unwrap();
        assert_eq!(prs[0].to_pr().state, PrState::Open);
        assert_eq!(prs[1].to_pr().state, PrState::Merged);
        assert_eq!(prs[0].head.ref_name, "feat/issue-107-bake-path");
    }
}

/// The raw URL of remote `name` (`remote.<name>.url`), if configured.
pub fn remote_url(repo: &gix::Repository, name: &str) -> Option<String> {
    repo.config_snapshot()
        .string(format!("remote.{name}.url").as_str())
        .map(|v| v.to_string())
}

/// The forge for the repository's `recode.remote`: `Ok(None)` when there is no token or
/// no such remote.
///
/// Errors: [`ForgeError::NotGitHub`] when a token is set but the remote is elsewhere.
pub fn for_repo(repo: &gix::Repository, remote: &str) -> Result<Option<GitHub>, ForgeError> {
    if token().is_none() {
        return Ok(None);
    }
    match remote_url(repo, remote) {
        Some(url) => GitHub::from_env(&url),
        None => Ok(None),
    }
}

/// Ask the forge once for every pull request (unless `offline`). Failures become
/// [`View::Failed`] plus a warning for stderr.
pub fn view(repo: &gix::Repository, remote: &str, offline: bool) -> (View, Option<String>) {
    if offline {
        return (View::Unknown, None);
    }
    match for_repo(repo, remote) {
        Ok(None) => (View::Unknown, None),
        Ok(Some(gh)) => match gh.list_pulls() {
            Ok(prs) => (View::Known(gh.by_branch(&prs)), None),
            Err(e) => (
                View::Failed,
                Some(format!(
                    "the forge failed, pull requests are unknown in this run: {e}"
                )),
            ),
        },
        // Not GitHub: there is no forge to ask (nothing failed), so nothing waits on it.
        Err(e) => (View::Unknown, Some(format!("no forge: {e}"))),
    }
}
