//! The GitLab REST v4 client behind [`super::Forge`] (SPEC 1.2 "Forges": GitLab; research
//! `ecosystem.md` B.1). A merge request is the worker's `pr`: `number` is its `iid`, `url`
//! its `web_url`, `state` `opened` → open, `merged` → merged, `closed` → closed, and
//! `locked` → open and being merged (a merge train, a merge job: SPEC 1.3, the worker waits).
//!
//! - The project is its full path (subgroups included), percent-encoded once as `:id`.
//! - The token rides in `PRIVATE-TOKEN`; never printed, logged or ledgered.
//! - Listing: `GET /projects/:id/merge_requests?state=all&order_by=created_at&sort=desc`,
//!   100 a page, cut off at the caller's `since` like GitHub's; one branch:
//!   `?source_branch=B&state=all`. Merge requests from forks (`source_project_id` ≠
//!   `target_project_id`, or either missing: a deleted fork) are not the branch's.
//! - Open: `POST /projects/:id/merge_requests` (`source_branch`, `target_branch`, `title`,
//!   `description`); a 409 ("Another open merge request already exists") finds that one.
//! - Checks: the pipelines of the merge request's head `sha` (`GET /projects/:id/pipelines?sha=`,
//!   the newest whose `sha` is the head: `head_pipeline` can be stale), then, when it
//!   failed or stopped at a manual job, its jobs (`…/pipelines/:pid/jobs`): a failed job
//!   without `allow_failure` is a failing check.
//! - Review: `GET …/merge_requests/:iid/reviewers` (`state` `requested_changes` or
//!   `approved`; the MR object's `reviewers[].state` is the account's, not the review's),
//!   then `…/approvals` (`approved_by`) when nobody requests changes, else
//!   `…/discussions` for the text: each requesting reviewer's unresolved notes (a
//!   `DiffNote`'s `position.new_path`/`new_line` is its place).
//! - Rate limits (`RateLimit-*`, `Retry-After`, 429) and conditional requests (weak
//!   ETags) go through [`super::client`].

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Deserialize;

use super::client::{Client, Limits, Opened, opened_or_existing, opened_since};
use super::feedback::truncate;
use super::{Forge, ForgeError};
use crate::model::{ChangeRequest, Checks, FailingCheck, Feedback, Pr, PrState, Review};

/// Items per page (GitLab's maximum).
const PER_PAGE: &str = "100";

/// A merge request as GitLab answers it (only the fields used).
#[derive(Deserialize, Clone, Debug)]
pub(crate) struct MergeRequest {
    /// The project-scoped number every MR route takes.
    pub iid: u64,
    /// `opened`, `closed`, `locked` or `merged`.
    pub state: String,
    /// The source branch's head commit.
    #[serde(default)]
    pub sha: Option<String>,
    /// The source branch.
    pub source_branch: String,
    /// Where the source branch lives (a fork's differs from the target's).
    #[serde(default)]
    pub source_project_id: Option<u64>,
    /// The project it merges into.
    #[serde(default)]
    pub target_project_id: Option<u64>,
    /// Its page.
    pub web_url: String,
    /// RFC 3339.
    #[serde(default)]
    pub created_at: Option<String>,
}

impl MergeRequest {
    /// The classifier's view of it (no feedback yet).
    pub(crate) fn to_pr(&self) -> Pr {
        Pr {
            number: self.iid,
            state: match self.state.as_str() {
                "opened" | "locked" => PrState::Open,
                "merged" => PrState::Merged,
                _ => PrState::Closed,
            },
            url: self.web_url.clone(),
            head: self.sha.as_deref().and_then(crate::model::commit_id),
            merging: self.state == "locked",
            checks: None,
            review: None,
            feedback: Default::default(),
        }
    }

    /// This project's own merge request (SPEC 1.3): the source project is the target one.
    /// A fork's, or one whose source project is unknown (deleted), never is.
    fn ours(&self) -> bool {
        matches!(
            (self.source_project_id, self.target_project_id),
            (Some(s), Some(t)) if s == t
        )
    }
}

impl Opened for MergeRequest {
    fn created_at(&self) -> Option<&str> {
        self.created_at.as_deref()
    }
}

/// Prefer an open merge request, else the highest `iid`.
fn pick<'a>(mrs: impl Iterator<Item = &'a MergeRequest>) -> Option<&'a MergeRequest> {
    mrs.max_by_key(|m| (matches!(m.state.as_str(), "opened" | "locked"), m.iid))
}

#[derive(Deserialize, Debug)]
struct Pipeline {
    id: u64,
    #[serde(default)]
    sha: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    web_url: Option<String>,
}

#[derive(Deserialize, Debug)]
struct Job {
    #[serde(default)]
    name: String,
    #[serde(default)]
    stage: Option<String>,
    #[serde(default)]
    status: String,
    #[serde(default)]
    web_url: Option<String>,
    #[serde(default)]
    allow_failure: bool,
    #[serde(default)]
    failure_reason: Option<String>,
}

#[derive(Deserialize, Debug, Default)]
struct User {
    #[serde(default)]
    username: String,
}

#[derive(Deserialize, Debug)]
struct Reviewer {
    #[serde(default)]
    user: User,
    #[serde(default)]
    state: String,
}

#[derive(Deserialize, Debug, Default)]
struct Approvals {
    #[serde(default)]
    approved_by: Vec<serde_json::Value>,
}

#[derive(Deserialize, Debug)]
struct Discussion {
    #[serde(default)]
    notes: Vec<Note>,
}

#[derive(Deserialize, Debug)]
struct Note {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    body: String,
    #[serde(default)]
    author: User,
    #[serde(default)]
    system: bool,
    #[serde(default)]
    resolved: Option<bool>,
    #[serde(default)]
    position: Option<Position>,
}

#[derive(Deserialize, Debug)]
struct Position {
    #[serde(default)]
    new_path: Option<String>,
    #[serde(default)]
    old_path: Option<String>,
    #[serde(default)]
    new_line: Option<u64>,
    #[serde(default)]
    old_line: Option<u64>,
}

/// A GitLab project to ask.
pub(crate) struct GitLab {
    http: Client,
    /// The project's full path (`group/subgroup/project`).
    pub project: String,
}

impl std::fmt::Debug for GitLab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GitLab({} at {})", self.project, self.http.api)
    }
}

/// The API base URL of a GitLab host: `https://HOST/api/v4`.
pub(super) fn api_base(host: &str) -> String {
    format!("https://{host}/api/v4")
}

impl GitLab {
    /// A client for `project` (its full path) at `api` with `token`, within `limits`.
    pub(crate) fn new(api: &str, token: String, project: String, limits: Limits) -> GitLab {
        GitLab {
            http: Client::new("GitLab", api, ("PRIVATE-TOKEN", token), Vec::new(), limits),
            project,
        }
    }

    /// Keep ETags between runs in `path`.
    pub(crate) fn with_cache(mut self, path: std::path::PathBuf) -> GitLab {
        self.http.set_cache(path);
        self
    }

    fn url(&self, tail: &str) -> String {
        let id = self.project.replace('%', "%25").replace('/', "%2F");
        format!("{}/projects/{id}/{tail}", self.http.api)
    }

    /// The merge requests, newest first, until a page ends before `since` less a day.
    ///
    /// Errors: [`ForgeError`].
    pub(crate) fn list(&self, since: Option<Timestamp>) -> Result<Vec<MergeRequest>, ForgeError> {
        let pages = self.http.pages::<Vec<MergeRequest>>(
            &self.url("merge_requests"),
            &[
                ("state", "all"),
                ("order_by", "created_at"),
                ("sort", "desc"),
                ("per_page", PER_PAGE),
            ],
            "the merge request listing",
            opened_since(since),
        )?;
        Ok(pages.into_iter().flatten().filter(|m| m.ours()).collect())
    }

    /// The merge request of `branch` (`?source_branch=B&state=all`; open first).
    ///
    /// Errors: [`ForgeError`].
    pub(crate) fn find(&self, branch: &str) -> Result<Option<MergeRequest>, ForgeError> {
        let mrs: Vec<MergeRequest> = self.http.get(
            &self.url("merge_requests"),
            &[
                ("source_branch", branch),
                ("state", "all"),
                ("per_page", PER_PAGE),
            ],
            "the merge request lookup",
        )?;
        Ok(pick(mrs.iter().filter(|m| m.ours() && m.source_branch == branch)).cloned())
    }

    /// The checks verdict of `sha`: its newest pipeline, and that pipeline's failing jobs.
    fn checks(&self, sha: &str) -> Result<(Option<Checks>, Vec<FailingCheck>), ForgeError> {
        let pipelines: Vec<Pipeline> = self.http.get(
            &self.url("pipelines"),
            &[("sha", sha), ("per_page", PER_PAGE)],
            "the pipelines",
        )?;
        let Some(p) = pipelines
            .iter()
            .filter(|p| p.sha == sha)
            .max_by_key(|p| p.id)
        else {
            return Ok((None, Vec::new()));
        };
        match p.status.as_str() {
            "success" | "skipped" => return Ok((Some(Checks::Passing), Vec::new())),
            // A failed job can hide behind `manual`: read the jobs.
            "failed" | "canceled" | "manual" => {}
            _ => return Ok((Some(Checks::Pending), Vec::new())),
        }
        let jobs = self.http.all::<Job>(
            &self.url(&format!("pipelines/{}/jobs", p.id)),
            &[("per_page", PER_PAGE)],
            "the pipeline's jobs",
        )?;
        let mut failing: Vec<FailingCheck> = jobs
            .iter()
            .filter(|j| !j.allow_failure && matches!(j.status.as_str(), "failed" | "canceled"))
            .map(|j| FailingCheck {
                name: j.name.clone(),
                conclusion: j.status.clone(),
                url: j.web_url.clone(),
                title: j.stage.as_ref().map(|s| truncate(&format!("stage {s}"))),
                summary: j.failure_reason.as_deref().map(truncate),
            })
            .collect();
        if failing.is_empty() && p.status != "manual" {
            failing.push(FailingCheck {
                name: format!("pipeline #{}", p.id),
                conclusion: p.status.clone(),
                url: p.web_url.clone(),
                title: None,
                summary: None,
            });
        }
        let checks = if failing.is_empty() {
            Checks::Passing
        } else {
            Checks::Failing
        };
        Ok((Some(checks), failing))
    }

    /// The review verdict of merge request `iid` and its requested changes.
    fn review(&self, iid: u64) -> Result<(Option<Review>, Vec<ChangeRequest>), ForgeError> {
        let mr = format!("merge_requests/{iid}");
        let reviewers = self.http.all::<Reviewer>(
            &self.url(&format!("{mr}/reviewers")),
            &[],
            "the reviewers",
        )?;
        let requesting: Vec<&str> = reviewers
            .iter()
            .filter(|r| r.state == "requested_changes")
            .map(|r| r.user.username.as_str())
            .collect();
        if requesting.is_empty() {
            let approvals: Approvals =
                self.http
                    .get(&self.url(&format!("{mr}/approvals")), &[], "the approvals")?;
            let approved = !approvals.approved_by.is_empty()
                || reviewers.iter().any(|r| r.state == "approved");
            return Ok((approved.then_some(Review::Approved), Vec::new()));
        }
        let discussions = self.http.all::<Discussion>(
            &self.url(&format!("{mr}/discussions")),
            &[("per_page", PER_PAGE)],
            "the discussions",
        )?;
        let changes = requesting
            .iter()
            .map(|login| change_request(login, &discussions))
            .collect();
        Ok((Some(Review::ChangesRequested), changes))
    }
}

/// What `login` asks in the unresolved discussions: general notes make the body (one
/// paragraph each), diff notes the inline comments (`position`'s path and line).
fn change_request(login: &str, discussions: &[Discussion]) -> ChangeRequest {
    let mut body = Vec::new();
    let mut comments = Vec::new();
    for n in discussions.iter().flat_map(|d| &d.notes) {
        if n.system || n.resolved == Some(true) || n.author.username != login {
            continue;
        }
        match (&n.position, n.kind.as_deref()) {
            (Some(p), Some("DiffNote")) => comments.push((
                p.new_path
                    .clone()
                    .or(p.old_path.clone())
                    .unwrap_or_default(),
                p.new_line.or(p.old_line),
                truncate(&n.body),
            )),
            _ => body.push(n.body.as_str()),
        }
    }
    ChangeRequest {
        reviewer: login.to_string(),
        body: truncate(&body.join("\n\n")),
        comments,
    }
}

impl Forge for GitLab {
    fn pulls(&self, since: Option<Timestamp>) -> Result<BTreeMap<String, Pr>, ForgeError> {
        let mrs = self.list(since)?;
        let mut by: BTreeMap<String, Vec<&MergeRequest>> = BTreeMap::new();
        for m in &mrs {
            by.entry(m.source_branch.clone()).or_default().push(m);
        }
        Ok(by
            .into_iter()
            .filter_map(|(b, ms)| pick(ms.into_iter()).map(|m| (b, m.to_pr())))
            .collect())
    }

    fn pull_for(&self, branch: &str) -> Result<Option<Pr>, ForgeError> {
        Ok(self.find(branch)?.map(|m| m.to_pr()))
    }

    fn open_pull(
        &self,
        branch: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> Result<Pr, ForgeError> {
        let what = "opening the merge request";
        let payload = serde_json::json!({"source_branch": branch, "target_branch": base,
                                         "title": title, "description": body});
        opened_or_existing(
            self.http.call(
                "POST",
                &self.url("merge_requests"),
                &[],
                Some(&payload),
                what,
            ),
            |a| Ok(self.http.parse::<MergeRequest>(&a.text, what)?.to_pr()),
            || Ok(self.find(branch)?.map(|m| m.to_pr())),
        )
    }

    fn issue_closed(&self, number: u64) -> Result<bool, ForgeError> {
        self.http
            .issue_closed(&self.url(&format!("issues/{number}")))
    }

    fn feedback(
        &self,
        pr_number: u64,
        head_sha: &str,
    ) -> Result<(Option<Checks>, Option<Review>, Feedback), ForgeError> {
        let (checks, failing_checks) = self.checks(head_sha)?;
        let (review, changes) = self.review(pr_number)?;
        Ok((
            checks,
            review,
            Feedback {
                failing_checks,
                changes,
            },
        ))
    }

    fn flush(&self) -> Vec<String> {
        self.http.save_cache()
    }
}

impl Drop for GitLab {
    fn drop(&mut self) {
        for w in self.http.save_cache() {
            tracing::warn!("{w}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_map_to_the_spec() {
        let mr = |state: &str| MergeRequest {
            iid: 4,
            state: state.into(),
            sha: Some("abc".into()),
            source_branch: "issue-1-x".into(),
            source_project_id: Some(7),
            target_project_id: Some(7),
            web_url: "https://gitlab.com/acme/widget/-/merge_requests/4".into(),
            created_at: None,
        };
        assert_eq!(mr("opened").to_pr().state, PrState::Open);
        assert_eq!(mr("merged").to_pr().state, PrState::Merged);
        assert_eq!(mr("closed").to_pr().state, PrState::Closed);
        assert_eq!(mr("locked").to_pr().state, PrState::Open);
        assert!(mr("locked").to_pr().merging);
        assert!(!mr("opened").to_pr().merging);
        assert_eq!(mr("opened").to_pr().number, 4);
    }

    #[test]
    fn the_project_path_is_encoded_once() {
        let gl = GitLab::new(
            "http://x/api/v4",
            "t".into(),
            "grp/sub/proj".into(),
            Limits::default(),
        );
        assert_eq!(
            gl.url("merge_requests"),
            "http://x/api/v4/projects/grp%2Fsub%2Fproj/merge_requests"
        );
    }
}
