//! Pull request feedback (SPEC "Pull request feedback"): the verdict of a pull request's
//! head checks and of its reviews, from GitHub's answers, as pure functions.
//!
//! Inputs are GitHub REST shapes (API version 2022-11-28), only the fields used:
//! - `GET /repos/{o}/{r}/commits/{sha}/check-runs` → `{"check_runs": [CheckRun…]}`;
//! - `GET /repos/{o}/{r}/commits/{sha}/status` → [`CombinedStatus`];
//! - `GET /repos/{o}/{r}/pulls/{n}/reviews` → `[ReviewItem…]`, oldest first;
//! - `GET /repos/{o}/{r}/pulls/{n}/comments` → `[ReviewComment…]`.
//!
//! Every text taken from them (summaries, bodies) is untrusted and cut to [`MAX_TEXT`]
//! characters.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::model::{ChangeRequest, Checks, FailingCheck, Feedback, Review};

/// The longest summary, description or body kept, in characters (longer ones end in `…`).
pub(crate) const MAX_TEXT: usize = 2000;

/// One check run (`check_runs[]`).
#[derive(Deserialize, Clone, Debug, Default)]
pub(crate) struct CheckRun {
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// `queued`, `in_progress`, `completed`, `waiting`, `requested` or `pending`.
    #[serde(default)]
    pub status: String,
    /// Set once completed: `success`, `failure`, `neutral`, `cancelled`, `skipped`,
    /// `timed_out`, `action_required`, `stale`.
    #[serde(default)]
    pub conclusion: Option<String>,
    /// Its page on GitHub.
    #[serde(default)]
    pub html_url: Option<String>,
    /// The integrator's page.
    #[serde(default)]
    pub details_url: Option<String>,
    /// `output.title` and `output.summary`.
    #[serde(default)]
    pub output: Option<CheckOutput>,
}

/// `check_runs[].output`.
#[derive(Deserialize, Clone, Debug, Default)]
pub(crate) struct CheckOutput {
    /// Title.
    #[serde(default)]
    pub title: Option<String>,
    /// Summary (Markdown).
    #[serde(default)]
    pub summary: Option<String>,
}

/// The check-runs answer (one page).
#[derive(Deserialize, Clone, Debug, Default)]
pub(crate) struct CheckRuns {
    /// The runs on this page.
    #[serde(default)]
    pub check_runs: Vec<CheckRun>,
}

/// The combined commit status.
#[derive(Deserialize, Clone, Debug, Default)]
pub(crate) struct CombinedStatus {
    /// `failure`, `pending` or `success` (`pending` also when there is no status at all).
    #[serde(default)]
    pub state: String,
    /// The latest status per context.
    #[serde(default)]
    pub statuses: Vec<Status>,
}

/// One commit status (`statuses[]`).
#[derive(Deserialize, Clone, Debug, Default)]
pub(crate) struct Status {
    /// `error`, `failure`, `pending` or `success`.
    #[serde(default)]
    pub state: String,
    /// Its name.
    #[serde(default)]
    pub context: String,
    /// Its page.
    #[serde(default)]
    pub target_url: Option<String>,
    /// One line from the integrator.
    #[serde(default)]
    pub description: Option<String>,
}

/// A `user` object (only `login`).
#[derive(Deserialize, Clone, Debug, Default)]
pub(crate) struct User {
    /// The login.
    #[serde(default)]
    pub login: String,
}

/// One pull request review.
#[derive(Deserialize, Clone, Debug, Default)]
pub(crate) struct ReviewItem {
    /// Review id (what `pull_request_review_id` refers to).
    #[serde(default)]
    pub id: u64,
    /// The reviewer (null for a deleted account).
    #[serde(default)]
    pub user: Option<User>,
    /// `APPROVED`, `CHANGES_REQUESTED`, `COMMENTED`, `DISMISSED` or `PENDING`.
    #[serde(default)]
    pub state: String,
    /// The review's text.
    #[serde(default)]
    pub body: Option<String>,
    /// RFC 3339; absent on a pending review.
    #[serde(default)]
    pub submitted_at: Option<String>,
}

/// One inline review comment.
#[derive(Deserialize, Clone, Debug, Default)]
pub(crate) struct ReviewComment {
    /// The review it belongs to.
    #[serde(default)]
    pub pull_request_review_id: Option<u64>,
    /// The file.
    #[serde(default)]
    pub path: String,
    /// The line in the diff's current version (null when outdated).
    #[serde(default)]
    pub line: Option<u64>,
    /// The line when the comment was made.
    #[serde(default)]
    pub original_line: Option<u64>,
    /// The comment.
    #[serde(default)]
    pub body: String,
}

/// `text` cut to [`MAX_TEXT`] characters (with `…` when cut).
pub(crate) fn truncate(text: &str) -> String {
    match text.char_indices().nth(MAX_TEXT) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// A check-run conclusion that fails the checks.
fn failing_conclusion(c: &str) -> bool {
    matches!(c, "failure" | "timed_out" | "cancelled" | "action_required")
}

/// The checks verdict of one head: `Failing` when any run concluded `failure`,
/// `timed_out`, `cancelled` or `action_required`, or the combined status is `failure` or
/// `error` (or one of its statuses is); `Pending` when none failed and a run is not
/// completed or the combined status is `pending` with statuses present; `Passing`
/// otherwise; `None` with no check run and no status at all. Returns the failing ones too.
pub(crate) fn checks_verdict(
    runs: &[CheckRun],
    status: Option<&CombinedStatus>,
) -> (Option<Checks>, Vec<FailingCheck>) {
    let statuses = status.map(|s| s.statuses.as_slice()).unwrap_or_default();
    if runs.is_empty() && statuses.is_empty() {
        return (None, Vec::new());
    }
    let mut failing: Vec<FailingCheck> = runs
        .iter()
        .filter_map(|r| {
            let c = r.conclusion.as_deref()?;
            failing_conclusion(c).then(|| FailingCheck {
                name: r.name.clone(),
                conclusion: c.to_string(),
                url: r.html_url.clone().or_else(|| r.details_url.clone()),
                title: r
                    .output
                    .as_ref()
                    .and_then(|o| o.title.as_deref())
                    .map(truncate),
                summary: r
                    .output
                    .as_ref()
                    .and_then(|o| o.summary.as_deref())
                    .map(truncate),
            })
        })
        .collect();
    failing.extend(
        statuses
            .iter()
            .filter(|s| matches!(s.state.as_str(), "failure" | "error"))
            .map(|s| FailingCheck {
                name: s.context.clone(),
                conclusion: s.state.clone(),
                url: s.target_url.clone(),
                title: None,
                summary: s.description.as_deref().map(truncate),
            }),
    );
    let combined = status.map(|s| s.state.as_str()).unwrap_or("");
    let verdict = if !failing.is_empty()
        || (!statuses.is_empty() && matches!(combined, "failure" | "error"))
    {
        Checks::Failing
    } else if runs
        .iter()
        .any(|r| r.conclusion.is_none() && r.status != "completed")
        || (!statuses.is_empty() && combined == "pending")
    {
        Checks::Pending
    } else {
        Checks::Passing
    };
    (Some(verdict), failing)
}

/// Whether the review verdict needs the inline comments (some reviewer's latest review
/// requests changes); see [`review_verdict`].
pub(crate) fn changes_requested(reviews: &[ReviewItem]) -> bool {
    latest_per_reviewer(reviews)
        .values()
        .any(|r| r.state == "CHANGES_REQUESTED")
}

/// Each reviewer's deciding review: the latest `APPROVED`, `CHANGES_REQUESTED` or
/// `DISMISSED` one (a later `COMMENTED` does not override; `PENDING` drafts are not
/// submitted). Reviews are taken in `submitted_at` order, GitHub's order on ties.
fn latest_per_reviewer(reviews: &[ReviewItem]) -> BTreeMap<String, &ReviewItem> {
    let mut ordered: Vec<&ReviewItem> = reviews
        .iter()
        .filter(|r| r.submitted_at.is_some())
        .collect();
    ordered.sort_by(|a, b| a.submitted_at.cmp(&b.submitted_at));
    let mut latest = BTreeMap::new();
    for r in ordered {
        if matches!(
            r.state.as_str(),
            "APPROVED" | "CHANGES_REQUESTED" | "DISMISSED"
        ) {
            let login = r.user.as_ref().map(|u| u.login.clone()).unwrap_or_default();
            latest.insert(login, r);
        }
    }
    latest
}

/// The reviews verdict: `ChangesRequested` when any reviewer's latest deciding review
/// requests changes, `Approved` when the latest ones approve and none requests changes,
/// else `None` (a dismissed review decides nothing). Returns each change request with
/// its body and the inline comments of that reviewer's reviews from the request on
/// (path, `line` else `original_line`, body).
pub(crate) fn review_verdict(
    reviews: &[ReviewItem],
    comments: &[ReviewComment],
) -> (Option<Review>, Vec<ChangeRequest>) {
    let latest = latest_per_reviewer(reviews);
    let changes: Vec<ChangeRequest> = latest
        .iter()
        .filter(|(_, r)| r.state == "CHANGES_REQUESTED")
        .map(|(login, req)| {
            let ids: Vec<u64> = reviews
                .iter()
                .filter(|r| {
                    r.user
                        .as_ref()
                        .map(|u| u.login.as_str())
                        .unwrap_or_default()
                        == login
                        && r.submitted_at >= req.submitted_at
                })
                .map(|r| r.id)
                .collect();
            ChangeRequest {
                reviewer: login.clone(),
                body: truncate(req.body.as_deref().unwrap_or("")),
                comments: comments
                    .iter()
                    .filter(|c| c.pull_request_review_id.is_some_and(|id| ids.contains(&id)))
                    .map(|c| {
                        (
                            c.path.clone(),
                            c.line.or(c.original_line),
                            truncate(&c.body),
                        )
                    })
                    .collect(),
            }
        })
        .collect();
    let verdict = if !changes.is_empty() {
        Some(Review::ChangesRequested)
    } else if latest.values().any(|r| r.state == "APPROVED") {
        Some(Review::Approved)
    } else {
        None
    };
    (verdict, changes)
}

/// The whole verdict on one pull request: checks, review, and the feedback behind them.
pub(crate) fn verdict(
    runs: &[CheckRun],
    status: Option<&CombinedStatus>,
    reviews: &[ReviewItem],
    comments: &[ReviewComment],
) -> (Option<Checks>, Option<Review>, Feedback) {
    let (checks, failing_checks) = checks_verdict(runs, status);
    let (review, changes) = review_verdict(reviews, comments);
    (
        checks,
        review,
        Feedback {
            failing_checks,
            changes,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn runs(v: serde_json::Value) -> Vec<CheckRun> {
        serde_json::from_value::<CheckRuns>(v).unwrap().check_runs
    }

    fn run(name: &str, status: &str, conclusion: Option<&str>) -> serde_json::Value {
        json!({"id": 1, "name": name, "status": status, "conclusion": conclusion,
               "html_url": format!("https://github.com/acme/widget/runs/{name}"),
               "details_url": "https://ci.example/1",
               "output": {"title": format!("{name} title"), "summary": format!("{name} summary")}})
    }

    fn combined(state: &str, statuses: serde_json::Value) -> CombinedStatus {
        serde_json::from_value(json!({"state": state, "statuses": statuses, "total_count": 0}))
            .unwrap()
    }

    fn reviews(v: serde_json::Value) -> Vec<ReviewItem> {
        serde_json::from_value(v).unwrap()
    }

    fn review(id: u64, login: &str, state: &str, at: &str, body: &str) -> serde_json::Value {
        json!({"id": id, "user": {"login": login}, "state": state, "body": body,
               "submitted_at": at, "commit_id": "abc"})
    }

    #[test]
    fn a_failing_check_run_fails_the_checks() {
        let r = runs(json!({"total_count": 2, "check_runs": [
            run("lint", "completed", Some("success")),
            run("test", "completed", Some("timed_out")),
        ]}));
        let (v, failing) = checks_verdict(&r, Some(&combined("pending", json!([]))));
        assert_eq!(v, Some(Checks::Failing));
        assert_eq!(
            failing,
            vec![FailingCheck {
                name: "test".into(),
                conclusion: "timed_out".into(),
                url: Some("https://github.com/acme/widget/runs/test".into()),
                title: Some("test title".into()),
                summary: Some("test summary".into()),
            }]
        );
        for c in ["failure", "cancelled", "action_required"] {
            let r = runs(json!({"check_runs": [run("t", "completed", Some(c))]}));
            assert_eq!(checks_verdict(&r, None).0, Some(Checks::Failing), "{c}");
        }
    }

    #[test]
    fn a_failing_combined_status_fails_the_checks() {
        let s = combined(
            "failure",
            json!([{"state": "success", "context": "ci/a", "target_url": null, "description": null},
                   {"state": "error", "context": "ci/b", "target_url": "https://ci.example/b", "description": "boom"}]),
        );
        let (v, failing) = checks_verdict(&[], Some(&s));
        assert_eq!(v, Some(Checks::Failing));
        assert_eq!(
            failing,
            vec![FailingCheck {
                name: "ci/b".into(),
                conclusion: "error".into(),
                url: Some("https://ci.example/b".into()),
                title: None,
                summary: Some("boom".into()),
            }]
        );
    }

    #[test]
    fn pending_passing_and_no_checks() {
        let r = runs(json!({"check_runs": [
            run("lint", "completed", Some("success")),
            run("test", "in_progress", None),
        ]}));
        assert_eq!(checks_verdict(&r, None), (Some(Checks::Pending), vec![]));
        let s = combined("pending", json!([{"state": "pending", "context": "ci/a"}]));
        assert_eq!(
            checks_verdict(&[], Some(&s)),
            (Some(Checks::Pending), vec![])
        );
        let r = runs(json!({"check_runs": [
            run("lint", "completed", Some("success")),
            run("docs", "completed", Some("skipped")),
            run("x", "completed", Some("neutral")),
        ]}));
        // Combined `pending` with no statuses is GitHub's "nothing reported": not pending.
        assert_eq!(
            checks_verdict(&r, Some(&combined("pending", json!([])))),
            (Some(Checks::Passing), vec![])
        );
        assert_eq!(
            checks_verdict(&[], Some(&combined("pending", json!([])))),
            (None, vec![])
        );
        assert_eq!(checks_verdict(&[], None), (None, vec![]));
    }

    #[test]
    fn changes_requested_with_inline_comments() {
        let rv = reviews(json!([
            review(10, "ana", "COMMENTED", "2026-11-01T10:00:00Z", "first look"),
            review(
                11,
                "ana",
                "CHANGES_REQUESTED",
                "2026-11-01T11:00:00Z",
                "please fix the parser"
            ),
            review(12, "bo", "APPROVED", "2026-11-01T12:00:00Z", "lgtm"),
            // A later comment does not lift the request.
            review(13, "ana", "COMMENTED", "2026-11-01T13:00:00Z", "also this"),
        ]));
        assert!(changes_requested(&rv));
        let comments: Vec<ReviewComment> = serde_json::from_value(json!([
            {"pull_request_review_id": 10, "path": "a.rs", "line": 1, "original_line": 1, "body": "old"},
            {"pull_request_review_id": 11, "path": "src/parse.rs", "line": null, "original_line": 42, "body": "off by one"},
            {"pull_request_review_id": 13, "path": "src/lib.rs", "line": 7, "original_line": 6, "body": "typo"},
            {"pull_request_review_id": 12, "path": "b.rs", "line": 3, "body": "nice"},
        ]))
        .unwrap();
        let (v, changes) = review_verdict(&rv, &comments);
        assert_eq!(v, Some(Review::ChangesRequested));
        assert_eq!(
            changes,
            vec![ChangeRequest {
                reviewer: "ana".into(),
                body: "please fix the parser".into(),
                comments: vec![
                    ("src/parse.rs".into(), Some(42), "off by one".into()),
                    ("src/lib.rs".into(), Some(7), "typo".into()),
                ],
            }]
        );
    }

    #[test]
    fn approved_after_changes_requested_by_the_same_reviewer() {
        let rv = reviews(json!([
            review(1, "ana", "CHANGES_REQUESTED", "2026-11-01T10:00:00Z", "no"),
            review(2, "ana", "APPROVED", "2026-11-01T11:00:00Z", "now yes"),
            review(3, "bo", "COMMENTED", "2026-11-01T12:00:00Z", "hm"),
        ]));
        assert!(!changes_requested(&rv));
        assert_eq!(review_verdict(&rv, &[]), (Some(Review::Approved), vec![]));
    }

    #[test]
    fn dismissed_comments_only_and_pending_reviews_decide_nothing() {
        let rv = reviews(json!([
            review(1, "ana", "DISMISSED", "2026-11-01T10:00:00Z", "no"),
            review(2, "bo", "COMMENTED", "2026-11-01T11:00:00Z", "hm"),
            {"id": 3, "user": {"login": "cy"}, "state": "PENDING", "body": "draft"},
        ]));
        assert_eq!(review_verdict(&rv, &[]), (None, vec![]));
        assert_eq!(review_verdict(&[], &[]), (None, vec![]));
    }

    #[test]
    fn long_texts_are_cut() {
        let long = "é".repeat(MAX_TEXT + 5);
        let cut = truncate(&long);
        assert_eq!(cut.chars().count(), MAX_TEXT + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(truncate("short"), "short");
    }
}

#[cfg(test)]
mod shapes {
    //! The documented answer shapes in `tests/data/github/`.
    use super::*;

    #[test]
    fn the_documented_shapes_give_the_documented_verdict() {
        let runs: CheckRuns =
            serde_json::from_str(include_str!("../../tests/data/github/check-runs.json")).unwrap();
        let status: CombinedStatus =
            serde_json::from_str(include_str!("../../tests/data/github/commit-status.json"))
                .unwrap();
        let reviews: Vec<ReviewItem> =
            serde_json::from_str(include_str!("../../tests/data/github/pull-reviews.json"))
                .unwrap();
        let comments: Vec<ReviewComment> = serde_json::from_str(include_str!(
            "../../tests/data/github/pull-review-comments.json"
        ))
        .unwrap();
        let (checks, review, feedback) =
            verdict(&runs.check_runs, Some(&status), &reviews, &comments);
        assert_eq!(
            (checks, review),
            (Some(Checks::Failing), Some(Review::ChangesRequested))
        );
        assert_eq!(
            feedback,
            Feedback {
                failing_checks: vec![
                    FailingCheck {
                        name: "test (ubuntu-latest)".into(),
                        conclusion: "failure".into(),
                        url: Some("https://github.com/acme/widget/runs/4001".into()),
                        title: Some("2 failing tests".into()),
                        summary: Some("test parser::tests::empty_input ... FAILED".into()),
                    },
                    FailingCheck {
                        name: "ci/legacy".into(),
                        conclusion: "error".into(),
                        url: Some("https://ci.example.com/acme/widget/builds/991".into()),
                        title: None,
                        summary: Some("The build could not start".into()),
                    },
                ],
                changes: vec![ChangeRequest {
                    reviewer: "octo-reviewer".into(),
                    body: "Please handle empty input before parsing.".into(),
                    comments: vec![
                        (
                            "src/parse.rs".into(),
                            Some(14),
                            "This unwrap panics on an empty string.".into()
                        ),
                        (
                            "src/lib.rs".into(),
                            Some(3),
                            "Outdated: the doc comment still says it never fails.".into()
                        ),
                    ],
                }],
            }
        );
    }
}
