//! The GitHub REST client (API version 2022-11-28) behind [`super::Forge`].
//!
//! - Every request carries the token as a bearer header; the token is never printed,
//!   logged or ledgered (`Debug` leaves it out).
//! - Time-outs (30 s a request); up to 3 retries with backoff on 5xx, transport errors
//!   and rate limits, honouring `retry-after` and `x-ratelimit-reset` (each wait capped
//!   at `RECODE_FORGE_MAX_WAIT` seconds, default 20). A 403 that is not a rate limit is
//!   a permission error and is not retried.
//! - GETs are conditional when an ETag is known ([`super::etag`]): a `304` reuses the
//!   kept body and costs no rate limit.
//! - The listing asks newest first (`sort=created&direction=desc`) and stops paging past
//!   the caller's cutoff, so its cost does not grow with the repository's history.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use jiff::Timestamp;

use super::etag::{Cache, Entry};
use super::feedback::{self, CheckRuns, CombinedStatus, ReviewComment, ReviewItem};
use super::http::{self, Heads, RETRIES, backoff};
use super::pulls::{PullRequest, pick};
use super::{Forge, ForgeError};
use crate::model::{Checks, Feedback, Pr, Review};

/// Environment variable overriding the API base URL (tests point it at a loopback server).
pub const API_ENV: &str = "RECODE_GITHUB_API";
/// Items per page (GitHub's maximum).
const PER_PAGE: &str = "100";
/// Most pages followed in one paginated read (a guard against a looping `link`).
const MAX_PAGES: usize = 1000;
/// Slack under the listing cutoff for clocks that disagree (the ledger's and GitHub's),
/// in seconds: one day.
pub const CUTOFF_SLACK_SECS: i64 = 24 * 3600;

/// A GitHub repository to ask.
pub struct GitHub {
    agent: ureq::Agent,
    api: String,
    token: String,
    /// Repository owner.
    pub owner: String,
    /// Repository name.
    pub repo: String,
    cache: Mutex<Cache>,
}

impl std::fmt::Debug for GitHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        write!(f, "GitHub({}/{} at {})", self.owner, self.repo, self.api)
    }
}

fn now_secs() -> i64 {
    crate::clock::now().map(|t| t.as_second()).unwrap_or(0)
}

/// The API base URL for `host`: `RECODE_GITHUB_API`, else `https://api.github.com` for
/// github.com, else `https://HOST/api/v3` (Enterprise); no trailing slash.
pub fn api_base(host: &str) -> String {
    std::env::var(API_ENV)
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
        .to_string()
}

/// The ETag cache's key of a request: its URL, then `?k=v&…` of its query (unencoded).
fn cache_key(url: &str, query: &[(&str, &str)]) -> String {
    if query.is_empty() {
        url.to_string()
    } else {
        let q: Vec<String> = query.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{url}?{}", q.join("&"))
    }
}

/// What one request got back.
struct Answer {
    link: Option<String>,
    text: String,
}

impl GitHub {
    /// The forge for a remote URL, when a token is set. `Ok(None)`: no token (the forge is
    /// unknown). Conditional requests are remembered within this value only; see
    /// [`GitHub::with_cache`].
    ///
    /// Errors: [`ForgeError::NotGitHub`] when the URL is not on the GitHub host.
    pub fn from_env(remote_url: &str) -> Result<Option<GitHub>, ForgeError> {
        let Some(token) = super::token() else {
            return Ok(None);
        };
        let host = super::host();
        let (owner, repo) =
            super::parse_remote(remote_url, &host).ok_or_else(|| ForgeError::NotGitHub {
                url: super::redact_url(remote_url),
                host: host.clone(),
            })?;
        Ok(Some(GitHub::new(&api_base(&host), token, owner, repo)))
    }

    /// A client for `owner/repo` at API base URL `api` (no trailing slash needed) with
    /// `token`, whatever the environment says; ETags are remembered within this value only.
    pub fn new(api: &str, token: String, owner: String, repo: String) -> GitHub {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(30)))
            .http_status_as_error(false)
            .user_agent(concat!("git-recode/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        GitHub {
            agent,
            api: api.trim_end_matches('/').to_string(),
            token,
            owner,
            repo,
            cache: Mutex::new(Cache::in_memory()),
        }
    }

    /// Keep ETags and bodies in `path` between runs (read now, written by
    /// [`GitHub::save_cache`]).
    pub fn with_cache(mut self, path: std::path::PathBuf) -> GitHub {
        self.cache = Mutex::new(Cache::at(path));
        self
    }

    /// Write the ETag cache if it changed; a warning when it cannot be written.
    pub fn save_cache(&self) -> Option<String> {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.save(now_secs())
    }

    fn cached(&self, key: &str) -> Option<Entry> {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.get(key, now_secs())
    }

    fn remember(&self, key: &str, entry: Entry) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.put(key, entry);
    }

    /// One request with retries. `query` is added with ureq's query builder (encoded).
    /// A GET is conditional when an ETag for it is kept; a 304 answers the kept body.
    fn call(
        &self,
        method: &str,
        url: &str,
        query: &[(&str, &str)],
        body: Option<&serde_json::Value>,
        what: &str,
    ) -> Result<Answer, ForgeError> {
        let key = cache_key(url, query);
        let kept = (method == "GET").then(|| self.cached(&key)).flatten();
        let mut attempt = 0;
        loop {
            attempt += 1;
            tracing::debug!(method, url, attempt, "forge request");
            let mut res = match self.send(method, url, query, body, kept.as_ref()) {
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
            let heads = Heads::of(res.headers());
            if status == 304
                && let Some(e) = &kept
            {
                return Ok(Answer {
                    link: heads.link.or_else(|| e.link.clone()),
                    text: e.body.clone(),
                });
            }
            let text = res.body_mut().read_to_string().unwrap_or_default();
            if let Some(wait) = http::retry_wait(status, &heads, &text, attempt, now_secs()) {
                http::sleep(wait);
                continue;
            }
            if status >= 300 {
                return Err(ForgeError::Status {
                    status,
                    what: what.to_string(),
                    message: http::error_message(&text),
                });
            }
            if method == "GET"
                && let Some(etag) = heads.etag
            {
                let entry = Entry {
                    etag,
                    body: text.clone(),
                    link: heads.link.clone(),
                    used: now_secs(),
                };
                self.remember(&key, entry);
            }
            return Ok(Answer {
                link: heads.link,
                text,
            });
        }
    }

    /// Send one try of a request: a POST with its JSON body, else a GET (conditional on
    /// `kept`'s ETag); each with the token, GitHub's media type and the API version.
    fn send(
        &self,
        method: &str,
        url: &str,
        query: &[(&str, &str)],
        body: Option<&serde_json::Value>,
        kept: Option<&Entry>,
    ) -> Result<ureq::http::Response<ureq::Body>, ureq::Error> {
        let auth = format!("Bearer {}", self.token);
        match (method, body) {
            ("POST", Some(b)) => self
                .agent
                .post(url)
                .query_pairs(query.iter().copied())
                .header("Authorization", &auth)
                .header("Accept", "application/vnd.github+json")
                .header("X-GitHub-Api-Version", "2022-11-28")
                .content_type("application/json")
                .send(b.to_string().as_bytes()),
            _ => {
                let mut req = self
                    .agent
                    .get(url)
                    .query_pairs(query.iter().copied())
                    .header("Authorization", &auth)
                    .header("Accept", "application/vnd.github+json")
                    .header("X-GitHub-Api-Version", "2022-11-28");
                if let Some(e) = kept {
                    req = req.header("If-None-Match", &e.etag);
                }
                req.call()
            }
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

    fn repo_url(&self, tail: &str) -> String {
        format!("{}/repos/{}/{}/{tail}", self.api, self.owner, self.repo)
    }

    /// Every page of a paginated GET (following `link: rel="next"`), each parsed as `T`;
    /// `more(page)` says whether to go on after it.
    fn pages<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        query: &[(&str, &str)],
        what: &str,
        mut more: impl FnMut(&T) -> bool,
    ) -> Result<Vec<T>, ForgeError> {
        let mut out = Vec::new();
        let mut answer = self.call("GET", url, query, None, what)?;
        for _ in 0..MAX_PAGES {
            let page: T = self.parse(&answer.text, what)?;
            let go_on = more(&page);
            out.push(page);
            match answer.link.as_deref().and_then(next_link) {
                Some(next) if go_on => answer = self.call("GET", &next, &[], None, what)?,
                _ => break,
            }
        }
        Ok(out)
    }

    /// The repository's pull requests, newest first (`state=all&sort=created&direction=desc`,
    /// 100 a page), following pagination until a page ends with one opened before
    /// `since` less [`CUTOFF_SLACK_SECS`] (every page with `None`). Pull requests older than
    /// the cutoff that came on the pages read are kept.
    ///
    /// Errors: [`ForgeError`].
    pub fn list_pulls_since(
        &self,
        since: Option<Timestamp>,
    ) -> Result<Vec<PullRequest>, ForgeError> {
        let cutoff = since.map(|t| t.as_second() - CUTOFF_SLACK_SECS);
        let cutoff = cutoff.map(crate::clock::from_secs);
        let pages = self.pages::<Vec<PullRequest>>(
            &self.repo_url("pulls"),
            &[
                ("state", "all"),
                ("sort", "created"),
                ("direction", "desc"),
                ("per_page", PER_PAGE),
            ],
            "the pull request listing",
            |page| match (cutoff, page.last()) {
                (Some(c), Some(oldest)) => !oldest.created_before(c),
                _ => true,
            },
        )?;
        Ok(pages.into_iter().flatten().collect())
    }

    /// Every pull request of the repository (`state=all`, every page).
    ///
    /// Errors: [`ForgeError`].
    pub fn list_pulls(&self) -> Result<Vec<PullRequest>, ForgeError> {
        self.list_pulls_since(None)
    }

    /// The pull request for `branch`, if any (`?head=OWNER:BRANCH&state=all`, checked on `head.ref`).
    ///
    /// Errors: [`ForgeError`].
    pub fn find_pull(&self, branch: &str) -> Result<Option<PullRequest>, ForgeError> {
        let head = format!("{}:{branch}", self.owner);
        let answer = self.call(
            "GET",
            &self.repo_url("pulls"),
            &[("state", "all"), ("head", &head)],
            None,
            "the pull request lookup",
        )?;
        let prs: Vec<PullRequest> = self.parse(&answer.text, "the pull request lookup")?;
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
        let payload =
            serde_json::json!({"title": title, "head": branch, "base": base, "body": body});
        match self.call(
            "POST",
            &self.repo_url("pulls"),
            &[],
            Some(&payload),
            "opening the pull request",
        ) {
            Ok(answer) => self.parse(&answer.text, "opening the pull request"),
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
        let answer = self.call(
            "GET",
            &self.repo_url(&format!("issues/{number}")),
            &[],
            None,
            "the blocker issue lookup",
        )?;
        let v: serde_json::Value = self.parse(&answer.text, "the blocker issue lookup")?;
        Ok(v["state"].as_str() == Some("closed"))
    }

    /// The pull request per branch from one listing: open first, else the newest.
    pub fn by_branch(&self, prs: &[PullRequest]) -> BTreeMap<String, Pr> {
        let mut branches: BTreeMap<String, Vec<&PullRequest>> = Default::default();
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

    /// Feedback on pull request `number` whose head is `sha` (SPEC "Pull request
    /// feedback"): the head's check runs (every page) and combined status, the reviews
    /// (every page), and the review comments only when changes are requested. 3 requests,
    /// 4 with requested changes (more past 100 items); 304s are free.
    ///
    /// Errors: [`ForgeError`] from any of the requests.
    pub fn pull_feedback(
        &self,
        number: u64,
        sha: &str,
    ) -> Result<(Option<Checks>, Option<Review>, Feedback), ForgeError> {
        let per_page = [("per_page", PER_PAGE)];
        let runs: Vec<_> = self
            .pages::<CheckRuns>(
                &self.repo_url(&format!("commits/{sha}/check-runs")),
                &per_page,
                "the check runs",
                |_| true,
            )?
            .into_iter()
            .flat_map(|p| p.check_runs)
            .collect();
        let status: CombinedStatus = {
            let a = self.call(
                "GET",
                &self.repo_url(&format!("commits/{sha}/status")),
                &per_page,
                None,
                "the combined status",
            )?;
            self.parse(&a.text, "the combined status")?
        };
        let reviews: Vec<ReviewItem> = self
            .pages::<Vec<ReviewItem>>(
                &self.repo_url(&format!("pulls/{number}/reviews")),
                &per_page,
                "the reviews",
                |_| true,
            )?
            .into_iter()
            .flatten()
            .collect();
        let comments: Vec<ReviewComment> = if feedback::changes_requested(&reviews) {
            self.pages::<Vec<ReviewComment>>(
                &self.repo_url(&format!("pulls/{number}/comments")),
                &per_page,
                "the review comments",
                |_| true,
            )?
            .into_iter()
            .flatten()
            .collect()
        } else {
            Vec::new()
        };
        Ok(feedback::verdict(&runs, Some(&status), &reviews, &comments))
    }
}

impl Forge for GitHub {
    fn pulls(&self, since: Option<Timestamp>) -> Result<BTreeMap<String, Pr>, ForgeError> {
        Ok(self.by_branch(&self.list_pulls_since(since)?))
    }

    fn pull_for(&self, branch: &str) -> Result<Option<Pr>, ForgeError> {
        Ok(self.find_pull(branch)?.map(|p| p.to_pr()))
    }

    fn open_pull(
        &self,
        branch: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> Result<Pr, ForgeError> {
        Ok(self.create_pull(branch, base, title, body)?.to_pr())
    }

    fn issue_closed(&self, number: u64) -> Result<bool, ForgeError> {
        GitHub::issue_closed(self, number)
    }

    fn feedback(
        &self,
        pr_number: u64,
        head_sha: &str,
    ) -> Result<(Option<Checks>, Option<Review>, Feedback), ForgeError> {
        self.pull_feedback(pr_number, head_sha)
    }

    fn flush(&self) -> Option<String> {
        self.save_cache()
    }
}

impl Drop for GitHub {
    fn drop(&mut self) {
        // A caller that did not flush still keeps its ETags; the warning, if any, goes to
        // the log only (callers that report warnings flush first).
        if let Some(w) = self.save_cache() {
            tracing::warn!("{w}");
        }
    }
}

/// The `rel="next"` URL of a `link` header.
pub(crate) fn next_link(link: &str) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_header() {
        let h = r#"<https://api.github.com/repositories/3003/pulls?state=all&per_page=100&page=2>; rel="next", <https://api.github.com/repositories/3003/pulls?state=all&per_page=100&page=4>; rel="last""#;
        assert_eq!(
            next_link(h).as_deref(),
            Some("https://api.github.com/repositories/3003/pulls?state=all&per_page=100&page=2")
        );
        assert_eq!(next_link(r#"<https://x/p?page=4>; rel="last""#), None);
    }
}
