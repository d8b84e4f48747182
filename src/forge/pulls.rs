//! GitHub's pull request as its REST API returns it (only the fields used), and its
//! conversion to the classifier's [`Pr`].

use serde::Deserialize;

use super::client::Opened;
use crate::model::{Pr, PrState};

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
    /// When it was opened (RFC 3339); the listing's order and cutoff.
    #[serde(default)]
    pub created_at: Option<String>,
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
    /// The repository the head lives in: `null` once a fork is deleted (SPEC 1.3: only a
    /// request whose head repository is this one is the branch's).
    #[serde(default)]
    pub repo: Option<HeadRepo>,
}

/// `head.repo` of a pull request (only `full_name`).
#[derive(Deserialize, Clone, Debug)]
pub struct HeadRepo {
    /// `OWNER/REPO`.
    #[serde(default)]
    pub full_name: String,
}

impl PullRequest {
    /// The classifier's view of it (no feedback yet).
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
            head: self.head.sha.as_deref().and_then(crate::model::commit_id),
            merging: false,
            checks: None,
            review: None,
            feedback: Default::default(),
        }
    }
}

impl Opened for PullRequest {
    fn created_at(&self) -> Option<&str> {
        self.created_at.as_deref()
    }
}

/// Prefer an open pull request, else the highest number.
pub(super) fn pick<'a>(prs: impl Iterator<Item = &'a PullRequest>) -> Option<&'a PullRequest> {
    prs.max_by_key(|p| (p.state == "open" && p.merged_at.is_none(), p.number))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::Timestamp;

    #[test]
    fn list_items_parse_from_the_documented_shape() {
        let text = include_str!("../../tests/data/github/pulls-list.json");
        let prs: Vec<PullRequest> = serde_json::from_str(text).unwrap();
        assert_eq!(prs[0].to_pr().state, PrState::Open);
        assert_eq!(prs[1].to_pr().state, PrState::Merged);
        assert_eq!(prs[0].head.ref_name, "feat/issue-107-bake-path");
        let cutoff: Timestamp = "2026-07-10T00:00:00Z".parse().unwrap();
        assert!(!prs[0].created_before(cutoff));
        assert!(prs[1].created_before(cutoff));
    }

    /// `head.sha` is parsed once here: a full hex id becomes the `Pr`'s head; anything
    /// else (abbreviated, garbled) is an unknown head, never a panic.
    #[test]
    fn the_head_sha_is_a_commit_id_or_unknown() {
        let text = include_str!("../../tests/data/github/pulls-list.json");
        let mut prs: Vec<PullRequest> = serde_json::from_str(text).unwrap();
        assert_eq!(
            prs[0].to_pr().head.map(|h| h.to_string()).as_deref(),
            prs[0].head.sha.as_deref()
        );
        for bad in ["a1b2c3d", "", "zz".repeat(20).as_str(), "é"] {
            prs[0].head.sha = Some(bad.to_string());
            assert_eq!(prs[0].to_pr().head, None, "{bad:?}");
        }
    }
}
