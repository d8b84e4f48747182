//! Gitea/Forgejo (SPEC 1.2 "Forges": Gitea/Forgejo) end to end: `recode.forge gitea`,
//! `GITEA_TOKEN` (or `FORGEJO_TOKEN`), `RECODE_FORGE_API` at the loopback stand-in
//! (`fixtures/fake_gitea.rs`), the real binary. The token rides as `Authorization: token`.

use serde_json::{Value, json};

use crate::fake_gitea;
use crate::forge::{TOKEN, find, sap};
use crate::forge_other::{self as other, Other};

const R: &str = "/api/v1/repos/acme/widget";

fn gt() -> Other {
    Other::new("gitea", fake_gitea::start())
}

/// Page `page` of the listing.
fn list(page: u32) -> String {
    if page == 1 {
        format!("GET {R}/pulls?state=all&limit=50 auth")
    } else {
        format!("GET {R}/pulls?state=all&limit=50&page={page} auth")
    }
}

/// The feedback reads of pull request `n` at `sha` with nobody requesting changes.
fn fed(n: u64, sha: &str) -> Vec<String> {
    vec![
        format!("GET {R}/commits/{sha}/status auth"),
        format!("GET {R}/pulls/{n}/reviews?limit=50 auth"),
    ]
}

#[test]
fn a_publishable_worker_opens_one_pull_request_then_is_published_open() {
    let o = gt();
    let (published, status) = other::publish_then_published(&o);
    assert_eq!(published, vec![list(1), format!("POST {R}/pulls auth")]);
    let sha = o.srv.sha(1);
    assert_eq!(status, [vec![list(1)], fed(1, &sha)].concat());
    other::token_stays_out(&o);
}

#[test]
fn a_409_uses_the_pull_request_that_exists() {
    let o = gt();
    let reqs = other::conflict_uses_the_existing_one(&o);
    // No head filter on Gitea: the lookup is the listing again.
    assert_eq!(reqs, vec![list(1), format!("POST {R}/pulls auth"), list(1)]);
}

#[test]
fn merged_is_the_flag_and_deletes() {
    other::merged_deletes(&gt());
}

#[test]
fn verify_is_phantom_without_a_pull_request_and_holds_with_one() {
    other::verify_phantom_then_holds(&gt());
}

#[test]
fn without_gitea_token_status_warns_once_and_nothing_is_guessed() {
    other::no_token_warns_once(&gt(), "GITEA_TOKEN");
}

#[test]
fn forgejo_token_works_too() {
    let o = gt();
    let n = o.published("issue-1-open");
    o.srv.clear_requests();
    let r = o.run_env(false, &[("FORGEJO_TOKEN", TOKEN)], &["status", "--json"]);
    assert_eq!((r.code, r.stderr.as_str()), (Some(0), ""));
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        doc["workers"][0]["pr"],
        o.pr(n, "open", Value::Null, Value::Null)
    );
    assert!(o.srv.requests().iter().all(|r| r.ends_with(" auth")));
}

#[test]
fn failing_statuses_and_requested_changes_resume_with_the_evidence() {
    let o = gt();
    let fenced = other::feedback_resumes_fenced(
        &o,
        |sha| {
            o.srv
                .set_check(sha, "rspec", "failure", Some("3 examples failed"));
            // `warning` does not fail the checks.
            o.srv.set_check(sha, "lint", "warning", Some("style"));
        },
        |n| {
            o.srv.add_review(
                n,
                "ana",
                "REQUEST_CHANGES",
                "Name the error cases.",
                &[("src/a.rs", Some(3), "what if the input is empty?")],
            );
        },
    );
    assert!(
        fenced.contains("| Summary:\n| 3 examples failed"),
        "{fenced}"
    );
    assert!(!fenced.contains("Failing check: lint"), "{fenced}");
}

#[test]
fn dismissed_reviews_and_review_requests_decide_nothing() {
    let o = gt();
    let n = o.published("issue-1-reviewed");
    let id = o
        .srv
        .add_review(n, "ana", "REQUEST_CHANGES", "no", &[("a.rs", Some(1), "x")]);
    let (_, workers) = o.status();
    assert_eq!(
        find(&workers, "issue-1-reviewed")["pr"]["review"],
        "changes_requested"
    );
    o.srv.dismiss(n, id);
    let (_, workers) = o.status();
    assert_eq!(
        sap(find(&workers, "issue-1-reviewed")),
        (
            "published",
            "none",
            o.pr(n, "open", Value::Null, Value::Null),
            false
        )
    );
    o.srv.add_review(n, "bo", "APPROVED", "ok", &[]);
    o.srv.set_check(&o.srv.sha(n), "ci", "success", None);
    let (_, workers) = o.status();
    assert_eq!(
        find(&workers, "issue-1-reviewed")["pr"],
        o.pr(n, "open", json!("passing"), json!("approved"))
    );
}

#[test]
fn the_listing_pages_to_the_end_and_matches_the_head_on_the_client() {
    let o = gt();
    // 120 requests of other branches first, the worker's oldest: it is on the last page.
    let n = o.published("issue-9-old");
    for i in 0..120 {
        o.srv
            .add_pr("acme", "widget", &format!("other-{i}"), "closed");
    }
    o.srv.clear_requests();
    let (_, workers) = o.status();
    assert_eq!(
        find(&workers, "issue-9-old")["pr"],
        o.pr(n, "open", Value::Null, Value::Null)
    );
    let reqs = o.srv.requests();
    assert_eq!(&reqs[..3], &[list(1), list(2), list(3)]);
    assert_eq!(reqs.len(), 3 + 2);
}

#[test]
fn a_closed_blocker_issue_unblocks() {
    let reqs = other::blocker_waits_for_the_issue(&gt());
    assert!(
        reqs.contains(&format!("GET {R}/issues/12 auth")),
        "{reqs:#?}"
    );
}
