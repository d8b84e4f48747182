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

use jiff::Timestamp;

use super::client::{Client, Limits};
use super::feedback::{self, CheckRuns, CombinedStatus, ReviewComment, ReviewItem};
use super::pulls::{PullRequest, pick};
use super::{Forge, ForgeError};
use crate::model::{Checks, Feedback, Pr, Review};

/// Items per page (GitHub's maximum).
const PER_PAGE: &str = "100";
/// Slack under the listing cutoff for clocks that disagree (the ledger's and GitHub's),
/// in seconds: one day.
pub(crate) const CUTOFF_SLACK_SECS: i64 = 24 * 3600;

/// A GitHub repository to ask.
pub struct GitHub {
    http: Client,
    /// Repository owner.
    pub owner: String,
    /// Repository name.
    pub repo: String,
}

impl std::fmt::Debug for GitHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        write!(
            f,
            "GitHub({}/{} at {})",
            self.owner, self.repo, self.http.api
        )
    }
}

/// The API base URL for `host`: `https://api.github.com` for github.com, else
/// `https://HOST/api/v3` (Enterprise); no trailing slash.
pub(super) fn api_base(host: &str) -> String {
    if host == "github.com" {
        "https://api.github.com".into()
    } else {
        format!("https://{host}/api/v3")
    }
}

impl GitHub {
    /// A client for `owner/repo` at API base URL `api` (no trailing slash needed) with
    /// `token`, within the default [`Limits`]; ETags are remembered within this value only.
    pub fn new(api: &str, token: String, owner: String, repo: String) -> GitHub {
        GitHub::with_limits(api, token, owner, repo, Limits::default())
    }

    /// [`GitHub::new`] within `limits`.
    pub fn with_limits(
        api: &str,
        token: String,
        owner: String,
        repo: String,
        limits: Limits,
    ) -> GitHub {
        let http = Client::new(
            "GitHub",
            api,
            ("Authorization", format!("Bearer {token}")),
            vec![
                ("Accept", "application/vnd.github+json"),
                ("X-GitHub-Api-Version", "2022-11-28"),
            ],
            limits,
        );
        GitHub { http, owner, repo }
    }

    /// Keep ETags and bodies in `path` between runs (read now, written by
    /// [`GitHub::save_cache`]).
    pub fn with_cache(mut self, path: std::path::PathBuf) -> GitHub {
        self.http.set_cache(path);
        self
    }

    /// Write the ETag cache if it changed; the run's warnings (a refused pagination link),
    /// and one when the cache cannot be written.
    pub fn save_cache(&self) -> Vec<String> {
        self.http.save_cache()
    }

    fn repo_url(&self, tail: &str) -> String {
        format!(
            "{}/repos/{}/{}/{tail}",
            self.http.api, self.owner, self.repo
        )
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
        let pages = self.http.pages::<Vec<PullRequest>>(
            &self.repo_url("pulls"),
            &[
                ("state", "all"),
                ("sort", "created"),
                ("direction", "desc"),
                ("per_page", PER_PAGE),
            ],
            "the pull request listing",
            super::client::opened_since(since),
        )?;
        Ok(pages.into_iter().flatten().collect())
    }

    /// The pull request for `branch`, if any (`?head=OWNER:BRANCH&state=all`, checked on `head.ref`).
    ///
    /// Errors: [`ForgeError`].
    pub fn find_pull(&self, branch: &str) -> Result<Option<PullRequest>, ForgeError> {
        let head = format!("{}:{branch}", self.owner);
        let answer = self.http.call(
            "GET",
            &self.repo_url("pulls"),
            &[("state", "all"), ("head", &head)],
            None,
            "the pull request lookup",
        )?;
        let prs: Vec<PullRequest> = self.http.parse(&answer.text, "the pull request lookup")?;
        Ok(pick(prs.iter().filter(|p| self.is_ours(p, branch))).cloned())
    }

    /// Whether `pr` is this repository's pull request for `branch` (SPEC 1.3 "Merged needs
    /// proof"): its head branch is `branch` and its head repository is this one — not a
    /// fork's namesake, and not a deleted fork's (`head.repo: null`); a branch name alone
    /// is never proof.
    pub fn is_ours(&self, pr: &PullRequest, branch: &str) -> bool {
        let full = format!("{}/{}", self.owner, self.repo);
        pr.head.ref_name == branch
            && pr
                .head
                .repo
                .as_ref()
                .is_some_and(|r| r.full_name.eq_ignore_ascii_case(&full))
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
        match self.http.call(
            "POST",
            &self.repo_url("pulls"),
            &[],
            Some(&payload),
            "opening the pull request",
        ) {
            Ok(answer) => self.http.parse(&answer.text, "opening the pull request"),
            Err(ForgeError::Status {
                status: 422,
                message,
                ..
            }) if message.contains("already exists") => {
                self.find_pull(branch)?.ok_or_else(|| ForgeError::Status {
                    forge: "GitHub",
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
        self.http
            .issue_closed(&self.repo_url(&format!("issues/{number}")))
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
            .http
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
            let a = self.http.call(
                "GET",
                &self.repo_url(&format!("commits/{sha}/status")),
                &per_page,
                None,
                "the combined status",
            )?;
            self.http.parse(&a.text, "the combined status")?
        };
        let reviews: Vec<ReviewItem> = self
            .http
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
            self.http
                .pages::<Vec<ReviewComment>>(
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

    fn flush(&self) -> Vec<String> {
        self.save_cache()
    }
}

impl Drop for GitHub {
    fn drop(&mut self) {
        // A caller that did not flush still keeps its ETags; the warning, if any, goes to
        // the log only (callers that report warnings flush first).
        for w in self.save_cache() {
            tracing::warn!("{w}");
        }
    }
}
