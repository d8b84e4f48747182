//! The Gitea/Forgejo REST v1 client behind [`super::Forge`] (SPEC 1.2 "Forges":
//! Gitea/Forgejo; research `ecosystem.md` B.2). A pull request's `state` is `open` or
//! `closed`, and `merged: true` makes it merged.
//!
//! - The token rides in `Authorization: token …`; never printed, logged or ledgered.
//! - Listing: `GET /repos/{o}/{r}/pulls?state=all&limit=50&page=N`, every page (the list
//!   takes no head filter and Gitea clamps pages to 50): the branch's pull request is
//!   matched on `head.ref` and the head repository (`head.repo.full_name`, else
//!   `head.repo_id` = `base.repo_id`) on the client. One listing a run serves every
//!   branch, and finding one branch's pull request is the same listing.
//! - Open: `POST /repos/{o}/{r}/pulls` (`head`, `base`, `title`, `body`); a 409 ("pull
//!   request already exists") finds that one.
//! - Checks: `GET /repos/{o}/{r}/commits/{sha}/status` (each entry's field is `status`,
//!   not `state`; `warning` and `skipped` do not fail). No Checks API.
//! - Reviews: `GET …/pulls/{n}/reviews` (`REQUEST_CHANGES`; `dismissed` ones and
//!   `REQUEST_REVIEW` entries, which are review requests, are skipped), and for a review
//!   requesting changes its inline comments (`…/reviews/{id}/comments`).
//! - Gitea sends no ETag on its API and has no rate-limit headers; the shared request
//!   loop ([`super::client`]) retries 5xx and 429 all the same.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Deserialize;

use super::client::{Client, Limits, opened_or_existing};
use super::feedback::{self, CombinedStatus, ReviewComment, ReviewItem, Status, User};
use super::{Forge, ForgeError};
use crate::model::{Checks, Feedback, Pr, PrState, Review};

/// Items per page (Gitea's clamp).
const LIMIT: &str = "50";

/// A pull request as Gitea answers it (only the fields used).
#[derive(Deserialize, Clone, Debug)]
pub(crate) struct GiteaPull {
    /// Its index.
    pub number: u64,
    /// `open` or `closed` (a merged one is `closed` with `merged`).
    pub state: String,
    /// Merged.
    #[serde(default)]
    pub merged: bool,
    /// Its page.
    pub html_url: String,
    /// The head.
    pub head: Branch,
    /// The base.
    #[serde(default)]
    pub base: Option<Branch>,
}

/// `head`/`base` of a pull request.
#[derive(Deserialize, Clone, Debug, Default)]
pub(crate) struct Branch {
    /// The branch name.
    #[serde(rename = "ref", default)]
    pub ref_name: String,
    /// The commit.
    #[serde(default)]
    pub sha: Option<String>,
    /// The repository's id.
    #[serde(default)]
    pub repo_id: Option<u64>,
    /// The repository (`full_name`).
    #[serde(default)]
    pub repo: Option<Repo>,
}

/// A repository (only `full_name`).
#[derive(Deserialize, Clone, Debug, Default)]
pub(crate) struct Repo {
    /// `owner/name`.
    #[serde(default)]
    pub full_name: String,
}

impl GiteaPull {
    /// Whether its head lives in `full` (`owner/name`), this repository (SPEC 1.3): by
    /// `head.repo.full_name`, else by `head.repo_id` equal to `base.repo_id`. A deleted
    /// fork (`head.repo: null`, no matching id) or a fork never is.
    pub(crate) fn is_from(&self, full: &str) -> bool {
        match (&self.head.repo, self.head.repo_id, &self.base) {
            (Some(r), _, _) if !r.full_name.is_empty() => r.full_name.eq_ignore_ascii_case(full),
            (None, Some(h), Some(b)) => h != 0 && Some(h) == b.repo_id,
            _ => false,
        }
    }

    /// The classifier's view of it (no feedback yet).
    pub(crate) fn to_pr(&self) -> Pr {
        Pr {
            number: self.number,
            state: if self.merged {
                PrState::Merged
            } else if self.state == "open" {
                PrState::Open
            } else {
                PrState::Closed
            },
            url: self.html_url.clone(),
            head: self.head.sha.as_deref().and_then(crate::model::commit_id),
            merging: false,
            checks: None,
            review: None,
            feedback: Default::default(),
        }
    }
}

#[derive(Deserialize, Debug, Default)]
struct GiteaCombined {
    #[serde(default)]
    state: String,
    #[serde(default)]
    statuses: Vec<GiteaStatus>,
}

#[derive(Deserialize, Debug, Default)]
struct GiteaStatus {
    #[serde(default)]
    status: String,
    #[serde(default)]
    context: String,
    #[serde(default)]
    target_url: Option<String>,
    #[serde(default)]
    description: Option<String>,
}

#[derive(Deserialize, Debug, Default)]
struct GiteaReview {
    #[serde(default)]
    id: u64,
    #[serde(default)]
    user: Option<User>,
    #[serde(default)]
    state: String,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    dismissed: bool,
    #[serde(default)]
    submitted_at: Option<String>,
}

#[derive(Deserialize, Debug, Default)]
struct GiteaComment {
    #[serde(default)]
    body: String,
    #[serde(default)]
    path: String,
    #[serde(default)]
    position: Option<u64>,
    #[serde(default)]
    original_position: Option<u64>,
}

/// A Gitea or Forgejo repository to ask.
pub(crate) struct Gitea {
    http: Client,
    /// Repository owner.
    pub owner: String,
    /// Repository name.
    pub repo: String,
}

impl std::fmt::Debug for Gitea {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Gitea({}/{} at {})",
            self.owner, self.repo, self.http.api
        )
    }
}

/// The API base URL of a Gitea/Forgejo host: `https://HOST/api/v1`.
pub(super) fn api_base(host: &str) -> String {
    format!("https://{host}/api/v1")
}

impl Gitea {
    /// A client for `owner/repo` at `api` with `token`, within `limits`.
    pub(crate) fn new(
        api: &str,
        token: String,
        owner: String,
        repo: String,
        limits: Limits,
    ) -> Gitea {
        Gitea {
            http: Client::new(
                "Gitea",
                api,
                ("Authorization", format!("token {token}")),
                vec![("Accept", "application/json")],
                limits,
            ),
            owner,
            repo,
        }
    }

    fn url(&self, tail: &str) -> String {
        format!(
            "{}/repos/{}/{}/{tail}",
            self.http.api, self.owner, self.repo
        )
    }

    /// Every pull request of the repository's own branches (every page).
    ///
    /// Errors: [`ForgeError`].
    pub(crate) fn list(&self) -> Result<Vec<GiteaPull>, ForgeError> {
        let all = self.http.all::<GiteaPull>(
            &self.url("pulls"),
            &[("state", "all"), ("limit", LIMIT)],
            "the pull request listing",
        )?;
        let full = format!("{}/{}", self.owner, self.repo);
        Ok(all.into_iter().filter(|p| p.is_from(&full)).collect())
    }

    /// Each branch's pull request: open first, else the highest number.
    pub(crate) fn by_branch(pulls: &[GiteaPull]) -> BTreeMap<String, Pr> {
        let mut by: BTreeMap<String, &GiteaPull> = BTreeMap::new();
        for p in pulls {
            let key = |p: &GiteaPull| (p.state == "open" && !p.merged, p.number);
            match by.get(&p.head.ref_name) {
                Some(old) if key(old) >= key(p) => {}
                _ => {
                    by.insert(p.head.ref_name.clone(), p);
                }
            }
        }
        by.into_iter().map(|(b, p)| (b, p.to_pr())).collect()
    }

    fn reviews(&self, n: u64) -> Result<(Vec<ReviewItem>, Vec<ReviewComment>), ForgeError> {
        let raw = self.http.all::<GiteaReview>(
            &self.url(&format!("pulls/{n}/reviews")),
            &[("limit", LIMIT)],
            "the reviews",
        )?;
        let items: Vec<ReviewItem> = raw.into_iter().filter_map(review_item).collect();
        let mut comments = Vec::new();
        if feedback::changes_requested(&items) {
            for r in items.iter().filter(|r| r.state == "CHANGES_REQUESTED") {
                let cs = self.http.all::<GiteaComment>(
                    &self.url(&format!("pulls/{n}/reviews/{}/comments", r.id)),
                    &[],
                    "the review comments",
                )?;
                comments.extend(cs.into_iter().map(|c| ReviewComment {
                    pull_request_review_id: Some(r.id),
                    path: c.path,
                    line: c.position.filter(|l| *l > 0),
                    original_line: c.original_position.filter(|l| *l > 0),
                    body: c.body,
                }));
            }
        }
        Ok((items, comments))
    }
}

/// A Gitea review in GitHub's terms for [`feedback::verdict`]: `REQUEST_CHANGES` →
/// `CHANGES_REQUESTED`, `COMMENT` → `COMMENTED`, a dismissed one → `DISMISSED`;
/// `REQUEST_REVIEW` (a request, not a review) and `PENDING` drafts are dropped.
fn review_item(r: GiteaReview) -> Option<ReviewItem> {
    let state = if r.dismissed {
        "DISMISSED"
    } else {
        match r.state.as_str() {
            "APPROVED" => "APPROVED",
            "REQUEST_CHANGES" => "CHANGES_REQUESTED",
            "COMMENT" => "COMMENTED",
            _ => return None,
        }
    };
    Some(ReviewItem {
        id: r.id,
        user: r.user,
        state: state.into(),
        body: r.body,
        submitted_at: r.submitted_at,
    })
}

impl Forge for Gitea {
    fn pulls(&self, _since: Option<Timestamp>) -> Result<BTreeMap<String, Pr>, ForgeError> {
        Ok(Gitea::by_branch(&self.list()?))
    }

    fn pull_for(&self, branch: &str) -> Result<Option<Pr>, ForgeError> {
        Ok(self.pulls(None)?.remove(branch))
    }

    fn open_pull(
        &self,
        branch: &str,
        base: &str,
        title: &str,
        body: &str,
    ) -> Result<Pr, ForgeError> {
        let what = "opening the pull request";
        let payload =
            serde_json::json!({"head": branch, "base": base, "title": title, "body": body});
        opened_or_existing(
            self.http
                .call("POST", &self.url("pulls"), &[], Some(&payload), what),
            |a| Ok(self.http.parse::<GiteaPull>(&a.text, what)?.to_pr()),
            || self.pull_for(branch),
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
        let c: GiteaCombined = self.http.get(
            &self.url(&format!("commits/{head_sha}/status")),
            &[],
            "the combined status",
        )?;
        let combined = CombinedStatus {
            state: c.state,
            statuses: c
                .statuses
                .into_iter()
                .map(|s| Status {
                    state: s.status,
                    context: s.context,
                    target_url: s.target_url,
                    description: s.description,
                })
                .collect(),
        };
        let (reviews, comments) = self.reviews(pr_number)?;
        Ok(feedback::verdict(&[], Some(&combined), &reviews, &comments))
    }

    fn flush(&self) -> Vec<String> {
        self.http.save_cache()
    }
}

impl Drop for Gitea {
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
    fn merged_is_the_flag_not_the_state() {
        let p: GiteaPull = serde_json::from_value(serde_json::json!({
            "number": 3, "state": "closed", "merged": true,
            "html_url": "https://codeberg.org/acme/widget/pulls/3",
            "head": {"ref": "issue-1-x", "sha": "abc", "repo_id": 9, "repo": {"full_name": "acme/widget"}},
            "base": {"ref": "main", "repo_id": 9}
        }))
        .unwrap();
        assert_eq!(p.to_pr().state, PrState::Merged);
        assert!(p.is_from("acme/widget"));
        assert!(!p.is_from("someone/widget"));
    }

    #[test]
    fn a_deleted_forks_pull_request_is_never_ours() {
        let p: GiteaPull = serde_json::from_value(serde_json::json!({
            "number": 5, "state": "closed", "merged": true,
            "html_url": "https://gitea.example/acme/widget/pulls/5",
            "head": {"ref": "issue-19", "sha": "abc", "repo": null},
            "base": {"ref": "main", "repo_id": 9, "repo": {"full_name": "acme/widget"}}
        }))
        .unwrap();
        assert!(!p.is_from("acme/widget"));
    }

    #[test]
    fn review_requests_and_dismissed_reviews_decide_nothing() {
        let r = |state: &str, dismissed: bool| GiteaReview {
            id: 1,
            user: Some(User {
                login: "ana".into(),
            }),
            state: state.into(),
            body: None,
            dismissed,
            submitted_at: Some("2026-11-10T00:00:00Z".into()),
        };
        assert!(review_item(r("REQUEST_REVIEW", false)).is_none());
        assert!(review_item(r("PENDING", false)).is_none());
        assert_eq!(
            review_item(r("REQUEST_CHANGES", true)).unwrap().state,
            "DISMISSED"
        );
        assert_eq!(
            review_item(r("REQUEST_CHANGES", false)).unwrap().state,
            "CHANGES_REQUESTED"
        );
    }
}
