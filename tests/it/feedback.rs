//! Pull request feedback, conditional requests and the listing's cost (SPEC "Pull request
//! feedback", "Forge") through the library's GitHub client against the loopback fake:
//! never the network. Each "run" is a fresh client sharing the ETag cache file, as two
//! invocations of the binary would.

use std::path::Path;

use git_recode::app::parts::forge::{
    self, Ask, ChangeRequest, Checks, FailingCheck, Feedback, Forge, GitHub, Pr, PrState, Review,
    View,
};

use crate::fake_github::FakeGitHub;

fn client(gh: &FakeGitHub, cache: Option<&Path>) -> GitHub {
    let c = GitHub::new(&gh.url, "test-token".into(), "acme".into(), "widget".into());
    match cache {
        Some(p) => c.with_cache(p.to_path_buf()),
        None => c,
    }
}

fn branches(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn known(view: View) -> std::collections::BTreeMap<String, Pr> {
    match view {
        View::Known(map) => map,
        other => panic!("the forge did not answer: {other:?}"),
    }
}

/// (checks, review) of a branch's pull request.
fn verdict(
    map: &std::collections::BTreeMap<String, Pr>,
    b: &str,
) -> (Option<Checks>, Option<Review>) {
    let p = &map[b];
    (p.checks, p.review)
}

#[test]
fn feedback_is_read_for_the_open_pull_requests_of_the_branches_asked() {
    let gh = FakeGitHub::start();
    let failing = gh.add_pr("acme", "widget", "issue-1-failing", "open");
    let status = gh.add_pr("acme", "widget", "issue-2-status", "open");
    let pending = gh.add_pr("acme", "widget", "issue-3-pending", "open");
    let approved = gh.add_pr("acme", "widget", "issue-4-approved", "open");
    let changes = gh.add_pr("acme", "widget", "issue-5-changes", "open");
    let reapproved = gh.add_pr("acme", "widget", "issue-6-reapproved", "open");
    let merged = gh.add_pr("acme", "widget", "issue-7-merged", "merged");
    let other = gh.add_pr("acme", "widget", "issue-8-not-asked", "open");

    gh.set_check(
        &gh.sha(failing),
        "lint",
        "completed",
        Some("success"),
        None,
        None,
    );
    gh.set_check(
        &gh.sha(failing),
        "test",
        "completed",
        Some("failure"),
        Some("2 tests failed"),
        Some("parser::tests::empty panicked"),
    );
    gh.set_check(
        &gh.sha(status),
        "lint",
        "completed",
        Some("success"),
        None,
        None,
    );
    gh.set_status(&gh.sha(status), "ci/legacy", "error", Some("runner lost"));
    gh.set_check(
        &gh.sha(pending),
        "lint",
        "completed",
        Some("success"),
        None,
        None,
    );
    gh.set_check(&gh.sha(pending), "test", "in_progress", None, None, None);
    gh.set_check(
        &gh.sha(approved),
        "test",
        "completed",
        Some("success"),
        None,
        None,
    );
    gh.set_status(&gh.sha(approved), "ci/legacy", "success", None);
    gh.add_review(approved, "ana", "APPROVED", "lgtm", &[]);
    gh.add_review(
        changes,
        "bo",
        "COMMENTED",
        "a first look",
        &[("README.md", Some(1), "old")],
    );
    gh.add_review(
        changes,
        "ana",
        "CHANGES_REQUESTED",
        "please handle empty input",
        &[
            ("src/parse.rs", Some(42), "this panics on \"\""),
            ("src/lib.rs", None, "docs"),
        ],
    );
    gh.add_review(
        reapproved,
        "ana",
        "CHANGES_REQUESTED",
        "no",
        &[("a.rs", Some(3), "x")],
    );
    gh.add_review(reapproved, "ana", "APPROVED", "now yes", &[]);
    gh.set_check(
        &gh.sha(merged),
        "test",
        "completed",
        Some("failure"),
        None,
        None,
    );
    gh.set_check(
        &gh.sha(other),
        "test",
        "completed",
        Some("failure"),
        None,
        None,
    );

    let asked = branches(&[
        "issue-1-failing",
        "issue-2-status",
        "issue-3-pending",
        "issue-4-approved",
        "issue-5-changes",
        "issue-6-reapproved",
        "issue-7-merged",
        "issue-9-no-pr",
    ]);
    let c = client(&gh, None);
    let (view, warnings) = forge::view_of(
        &c,
        &Ask {
            feedback_for: &asked,
            ..Ask::default()
        },
    );
    assert_eq!(warnings, Vec::<String>::new());
    let map = known(view);
    assert_eq!(
        verdict(&map, "issue-1-failing"),
        (Some(Checks::Failing), None)
    );
    assert_eq!(
        map["issue-1-failing"].feedback,
        Feedback {
            failing_checks: vec![FailingCheck {
                name: "test".into(),
                conclusion: "failure".into(),
                url: Some("https://github.com/acme/widget/runs/2".into()),
                title: Some("2 tests failed".into()),
                summary: Some("parser::tests::empty panicked".into()),
            }],
            changes: vec![],
        }
    );
    assert_eq!(
        verdict(&map, "issue-2-status"),
        (Some(Checks::Failing), None)
    );
    assert_eq!(
        map["issue-2-status"].feedback.failing_checks,
        vec![FailingCheck {
            name: "ci/legacy".into(),
            conclusion: "error".into(),
            url: Some("https://ci.example/status/ci/legacy".into()),
            title: None,
            summary: Some("runner lost".into()),
        }]
    );
    assert_eq!(
        verdict(&map, "issue-3-pending"),
        (Some(Checks::Pending), None)
    );
    assert_eq!(
        verdict(&map, "issue-4-approved"),
        (Some(Checks::Passing), Some(Review::Approved))
    );
    assert_eq!(
        verdict(&map, "issue-5-changes"),
        (None, Some(Review::ChangesRequested))
    );
    assert_eq!(
        map["issue-5-changes"].feedback.changes,
        vec![ChangeRequest {
            reviewer: "ana".into(),
            body: "please handle empty input".into(),
            comments: vec![
                (
                    "src/parse.rs".into(),
                    Some(42),
                    "this panics on \"\"".into()
                ),
                ("src/lib.rs".into(), None, "docs".into()),
            ],
        }]
    );
    assert_eq!(
        verdict(&map, "issue-6-reapproved"),
        (None, Some(Review::Approved))
    );
    // Not open, or not asked: no feedback read.
    assert_eq!(map["issue-7-merged"].state, PrState::Merged);
    assert_eq!(verdict(&map, "issue-7-merged"), (None, None));
    assert_eq!(verdict(&map, "issue-8-not-asked"), (None, None));
    assert_eq!(map.len(), 8);

    // One listing; 3 requests per open pull request asked; the review comments only where
    // changes are requested.
    let reqs = gh.requests();
    assert_eq!(reqs.len(), 1 + 6 * 3 + 1, "{reqs:#?}");
    assert_eq!(
        reqs[0],
        "GET /repos/acme/widget/pulls?state=all&sort=created&direction=desc&per_page=100 auth"
    );
    let sha = gh.sha(failing);
    assert_eq!(
        reqs[1..4],
        [
            format!("GET /repos/acme/widget/commits/{sha}/check-runs?per_page=100 auth"),
            format!("GET /repos/acme/widget/commits/{sha}/status?per_page=100 auth"),
            format!("GET /repos/acme/widget/pulls/{failing}/reviews?per_page=100 auth"),
        ]
    );
    let comment_reads: Vec<&String> = reqs.iter().filter(|r| r.contains("/comments")).collect();
    assert_eq!(
        comment_reads,
        vec![&format!(
            "GET /repos/acme/widget/pulls/{changes}/comments?per_page=100 auth"
        )]
    );
    for n in [merged, other] {
        assert!(
            !reqs
                .iter()
                .any(|r| r.contains(&gh.sha(n)) || r.contains(&format!("/pulls/{n}/"))),
            "#{n} was asked about: {reqs:#?}"
        );
    }
}

#[test]
fn check_runs_and_reviews_are_read_on_every_page() {
    let gh = FakeGitHub::start();
    gh.set_page_size(2);
    let n = gh.add_pr("acme", "widget", "issue-1-many", "open");
    for i in 0..4 {
        gh.set_check(
            &gh.sha(n),
            &format!("ok-{i}"),
            "completed",
            Some("success"),
            None,
            None,
        );
    }
    // The failing run is on the third page.
    gh.set_check(
        &gh.sha(n),
        "late",
        "completed",
        Some("cancelled"),
        None,
        None,
    );
    for who in ["a", "b", "c"] {
        gh.add_review(n, who, "APPROVED", "", &[]);
    }
    gh.add_review(n, "d", "CHANGES_REQUESTED", "wait", &[]);
    let c = client(&gh, None);
    let (checks, review, feedback) = c.feedback(n, &gh.sha(n)).unwrap();
    assert_eq!(
        (checks, review),
        (Some(Checks::Failing), Some(Review::ChangesRequested))
    );
    assert_eq!(feedback.failing_checks.len(), 1);
    assert_eq!(feedback.failing_checks[0].name, "late");
    assert_eq!(feedback.changes[0].reviewer, "d");
    // check-runs: 3 pages; status: 1; reviews: 2 pages; comments: 1.
    assert_eq!(gh.requests().len(), 7, "{:#?}", gh.requests());
}

#[test]
fn an_unchanged_answer_is_a_free_304_on_the_next_run() {
    let gh = FakeGitHub::start();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("recode").join("etags.json");
    let a = gh.add_pr("acme", "widget", "issue-1-a", "open");
    let b = gh.add_pr("acme", "widget", "issue-2-b", "open");
    gh.set_check(&gh.sha(a), "test", "completed", Some("success"), None, None);
    gh.set_check(&gh.sha(b), "test", "in_progress", None, None, None);
    let asked = branches(&["issue-1-a", "issue-2-b"]);
    let ask = Ask {
        feedback_for: &asked,
        ..Ask::default()
    };
    let run = || {
        let c = client(&gh, Some(&cache));
        let (view, warnings) = forge::view_of(&c, &ask);
        assert_eq!(warnings, Vec::<String>::new());
        known(view)
    };

    // Cold: 1 listing + 2 × 3 feedback reads, all paid for; the cache is written.
    let first = run();
    assert_eq!((gh.requests().len(), gh.rate_limited()), (7, 7));
    assert!(cache.is_file());
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cache).unwrap()).unwrap();
    assert_eq!(kept.as_object().unwrap().len(), 7);
    assert!(
        !std::fs::read_to_string(&cache)
            .unwrap()
            .contains("test-token")
    );

    // Warm, nothing changed: the same answers, every request a 304.
    gh.clear_requests();
    assert_eq!(run(), first);
    assert_eq!(
        (gh.requests().len(), gh.not_modified(), gh.rate_limited()),
        (7, 7, 0)
    );

    // One check finishes: only that read is paid for, and the verdict follows.
    gh.clear_requests();
    gh.set_check(
        &gh.sha(b),
        "test",
        "completed",
        Some("timed_out"),
        None,
        None,
    );
    let third = run();
    assert_eq!(
        (gh.requests().len(), gh.not_modified(), gh.rate_limited()),
        (7, 6, 1)
    );
    assert_eq!(verdict(&third, "issue-2-b"), (Some(Checks::Failing), None));
    assert_eq!(verdict(&third, "issue-1-a"), (Some(Checks::Passing), None));
}

#[test]
fn the_listing_cost_does_not_grow_with_the_history() {
    // 10,000 old pull requests, then 20 workers' (open, opened after the oldest worker's
    // first ledger event).
    let gh = FakeGitHub::start();
    for i in 0..10_000u64 {
        gh.add_pr_at(
            "acme",
            "widget",
            &format!("old-{i}"),
            if i % 3 == 0 { "closed" } else { "merged" },
            &format!(
                "2025-06-{:02}T{:02}:{:02}:00Z",
                1 + i / 1440,
                (i / 60) % 24,
                i % 60
            ),
        );
    }
    let workers: Vec<String> = (1..=20).map(|i| format!("issue-{i}-worker")).collect();
    for (i, b) in workers.iter().enumerate() {
        gh.add_pr_at(
            "acme",
            "widget",
            b,
            "open",
            &format!("2026-11-19T10:{i:02}:00Z"),
        );
    }
    let since: jiff::Timestamp = "2026-11-19T09:00:00Z".parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("etags.json");
    let listing = |reqs: &[String]| reqs.iter().filter(|r| r.contains("/pulls?")).count();

    // The listing alone (no feedback): one page, cold and warm.
    let ask = Ask {
        since: Some(since),
        ..Ask::default()
    };
    let (view, _) = forge::view_of(&client(&gh, Some(&cache)), &ask);
    let map = known(view);
    for b in &workers {
        assert_eq!(map[b].state, PrState::Open, "{b}");
    }
    assert_eq!((gh.requests().len(), gh.rate_limited()), (1, 1));
    gh.clear_requests();
    let (view, _) = forge::view_of(&client(&gh, Some(&cache)), &ask);
    assert_eq!(known(view), map);
    assert_eq!(
        (gh.requests().len(), gh.not_modified(), gh.rate_limited()),
        (1, 1, 0)
    );

    // With every worker's feedback: cold, 1 + 20 × 3 requests; warm, the same number,
    // every one a 304.
    let ask = Ask {
        since: Some(since),
        feedback_for: &workers,
        ..Ask::default()
    };
    gh.clear_requests();
    forge::view_of(&client(&gh, Some(&cache)), &ask);
    assert_eq!(listing(&gh.requests()), 1);
    assert_eq!((gh.requests().len(), gh.rate_limited()), (61, 60));
    gh.clear_requests();
    forge::view_of(&client(&gh, Some(&cache)), &ask);
    assert_eq!(listing(&gh.requests()), 1);
    assert_eq!(
        (gh.requests().len(), gh.not_modified(), gh.rate_limited()),
        (61, 61, 0)
    );

    // Without a cutoff every page is read: 101 of them.
    gh.clear_requests();
    let (view, _) = forge::view_of(&client(&gh, None), &Ask::default());
    assert_eq!(known(view).len(), 10_020);
    assert_eq!(gh.requests().len(), 101);
}

#[test]
fn feedback_failing_leaves_it_unknown_with_one_warning() {
    let gh = FakeGitHub::start();
    let a = gh.add_pr("acme", "widget", "issue-1-a", "open");
    let b = gh.add_pr("acme", "widget", "issue-2-b", "open");
    gh.set_check(&gh.sha(a), "test", "completed", Some("failure"), None, None);
    let item = |n: u64, branch: &str| {
        serde_json::json!({"number": n, "state": "open", "merged_at": null,
            "html_url": format!("https://github.com/acme/widget/pull/{n}"),
            "created_at": "2026-11-01T00:00:00Z",
            "head": {"label": format!("acme:{branch}"), "ref": branch, "sha": gh.sha(n),
                     "repo": {"full_name": "acme/widget"}}})
    };
    // The listing answers; the first check-runs read is refused (a token without the
    // checks permission): a 403 that is not a rate limit.
    gh.fail_next(
        200,
        &[],
        &serde_json::json!([item(b, "issue-2-b"), item(a, "issue-1-a")]).to_string(),
    );
    gh.fail_next(
        403,
        &[],
        r#"{"message":"Resource not accessible by personal access token","status":"403"}"#,
    );
    let asked = branches(&["issue-1-a", "issue-2-b"]);
    let (view, warnings) = forge::view_of(
        &client(&gh, None),
        &Ask {
            feedback_for: &asked,
            ..Ask::default()
        },
    );
    let map = known(view);
    // Unknown, not passing: nothing is resumed on a guess; the rest is not asked.
    assert_eq!(verdict(&map, "issue-1-a"), (None, None));
    assert_eq!(verdict(&map, "issue-2-b"), (None, None));
    assert_eq!(
        warnings,
        vec![format!(
            "cannot read the checks and reviews of pull request #{a}; feedback is unknown in \
             this run: GitHub answered 403 to the check runs: Resource not accessible by \
             personal access token"
        )]
    );
    // Not retried, and nothing more asked.
    assert_eq!(gh.requests().len(), 2);
}

#[test]
fn a_harness_sets_checks_and_reviews_through_the_admin_endpoints() {
    let gh = FakeGitHub::start();
    let n = gh.add_pr("acme", "widget", "issue-3-smoke", "open");
    let post = |what: &str, body: serde_json::Value| {
        let mut res = ureq::post(format!("{}/_admin/{what}", gh.url))
            .content_type("application/json")
            .send(body.to_string().as_bytes())
            .unwrap();
        assert_eq!(res.status().as_u16(), 201);
        res.body_mut().read_to_string().unwrap()
    };
    let base = serde_json::json!({"owner": "acme", "repo": "widget", "branch": "issue-3-smoke"});
    let with = |extra: serde_json::Value| {
        let mut v = base.clone();
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    };
    post(
        "check",
        with(serde_json::json!({"name": "test", "conclusion": "failure", "title": "red"})),
    );
    post(
        "review",
        with(
            serde_json::json!({"login": "ana", "state": "CHANGES_REQUESTED", "body": "fix it",
            "comments": [{"path": "src/a.rs", "line": 2, "body": "here"}]}),
        ),
    );
    // Admin calls are not recorded.
    assert_eq!(gh.requests(), Vec::<String>::new());
    let (checks, review, feedback) = client(&gh, None).feedback(n, &gh.sha(n)).unwrap();
    assert_eq!(
        (checks, review),
        (Some(Checks::Failing), Some(Review::ChangesRequested))
    );
    assert_eq!(feedback.failing_checks[0].title.as_deref(), Some("red"));
    assert_eq!(
        feedback.changes[0].comments,
        vec![("src/a.rs".to_string(), Some(2), "here".to_string())]
    );
    let stats: serde_json::Value = serde_json::from_str(
        &ureq::get(format!("{}/_admin/stats", gh.url))
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        stats,
        serde_json::json!({"requests": 4, "not_modified": 0, "rate_limited": 4})
    );
}
