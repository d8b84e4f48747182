//! GitLab (SPEC 1.2 "Forges": GitLab) end to end: `recode.forge gitlab`, `GITLAB_TOKEN`,
//! `RECODE_FORGE_API` at the loopback stand-in (`fixtures/fake_gitlab.rs`), the real
//! binary. The project path is sent once-encoded; the token in `PRIVATE-TOKEN`.

use serde_json::{Value, json};

use crate::fake_gitlab;
use crate::forge::{find, sap};
use crate::forge_other::{self as other, Other};

const P: &str = "/api/v4/projects/acme%2Fwidget";

fn gl() -> Other {
    Other::new("gitlab", fake_gitlab::start())
}

fn list() -> String {
    format!("GET {P}/merge_requests?state=all&order_by=created_at&sort=desc&per_page=100 auth")
}

/// The feedback reads of merge request `n` at `sha` with no pipeline and nobody
/// requesting changes: pipelines, reviewers, approvals.
fn fed(n: u64, sha: &str) -> Vec<String> {
    vec![
        format!("GET {P}/pipelines?sha={sha}&per_page=100 auth"),
        format!("GET {P}/merge_requests/{n}/reviewers auth"),
        format!("GET {P}/merge_requests/{n}/approvals auth"),
    ]
}

#[test]
fn a_publishable_worker_opens_one_merge_request_then_is_published_open() {
    let o = gl();
    let (published, status) = other::publish_then_published(&o);
    assert_eq!(
        published,
        vec![list(), format!("POST {P}/merge_requests auth")]
    );
    let sha = o.srv.sha(1);
    assert_eq!(status, [vec![list()], fed(1, &sha)].concat());
    other::token_stays_out(&o);
}

#[test]
fn a_409_uses_the_merge_request_that_exists() {
    let o = gl();
    let reqs = other::conflict_uses_the_existing_one(&o);
    assert_eq!(
        reqs,
        vec![
            list(),
            format!("POST {P}/merge_requests auth"),
            format!(
                "GET {P}/merge_requests?source_branch=issue-4-ready&state=all&per_page=100 auth"
            ),
        ]
    );
}

#[test]
fn merged_deletes_and_closed_needs_a_human() {
    other::merged_deletes(&gl());
}

#[test]
fn verify_is_phantom_without_a_merge_request_and_holds_with_one() {
    let o = gl();
    other::verify_phantom_then_holds(&o);
    let reqs = o.srv.requests();
    assert_eq!(
        reqs.last().unwrap(),
        &format!("GET {P}/merge_requests?source_branch=issue-7-claims&state=all&per_page=100 auth")
    );
}

#[test]
fn without_gitlab_token_status_warns_once_and_nothing_is_guessed() {
    other::no_token_warns_once(&gl(), "GITLAB_TOKEN");
}

#[test]
fn a_failing_pipeline_and_requested_changes_resume_with_the_evidence() {
    let o = gl();
    let fenced = other::feedback_resumes_fenced(
        &o,
        |sha| {
            o.srv
                .set_check(sha, "rspec", "failed", Some("3 examples failed"));
            o.srv.set_check(sha, "lint", "success", None);
            // A job allowed to fail is not a failing check.
            o.srv.set_check_allowed_to_fail(sha, "audit", "failed");
        },
        |n| {
            o.srv.add_review(
                n,
                "ana",
                "requested_changes",
                "Name the error cases.",
                &[("src/a.rs", Some(3), "what if the input is empty?")],
            );
        },
    );
    assert!(
        fenced.contains("| Summary:\n| 3 examples failed"),
        "{fenced}"
    );
    assert!(!fenced.contains("audit"), "{fenced}");
    assert!(!fenced.contains("added 1 commit"), "system notes: {fenced}");
}

#[test]
fn checks_follow_the_head_sha_not_the_stale_head_pipeline() {
    let o = gl();
    let n = o.published("issue-1-moved");
    // The first head's pipeline failed; the branch moved on and its new head has none
    // yet: GitLab's head_pipeline still names the failed one.
    let old = o.srv.sha(n);
    o.srv.set_check(&old, "rspec", "failed", None);
    let (_, workers) = o.status();
    assert_eq!(find(&workers, "issue-1-moved")["pr"]["checks"], "failing");
    let wt = o.env.root().join("wt").join("issue-1-moved");
    std::fs::write(wt.join("fix.txt"), "fix\n").unwrap();
    o.env.git(&wt, &["add", "fix.txt"]);
    o.env.git(&wt, &["commit", "-q", "-m", "fix"]);
    let tip = o.env.git(&wt, &["rev-parse", "HEAD"]);
    o.srv.set_head(n, &tip);
    o.srv.clear_requests();
    let (_, workers) = o.status();
    let w = find(&workers, "issue-1-moved");
    assert_eq!(
        sap(w),
        (
            "published",
            "none",
            o.pr(n, "open", Value::Null, Value::Null),
            false
        )
    );
    assert!(
        o.srv
            .requests()
            .contains(&format!("GET {P}/pipelines?sha={tip}&per_page=100 auth"))
    );
    // A running pipeline is pending; a passing one with an approval is approved.
    o.srv.set_check(&tip, "rspec", "running", None);
    let (_, workers) = o.status();
    assert_eq!(find(&workers, "issue-1-moved")["pr"]["checks"], "pending");
    o.srv.set_check(&tip, "rspec", "success", None);
    o.srv.add_review(n, "bo", "approved", "", &[]);
    let (_, workers) = o.status();
    assert_eq!(
        find(&workers, "issue-1-moved")["pr"],
        o.pr(n, "open", json!("passing"), json!("approved"))
    );
}

#[test]
fn rate_limits_are_honoured_and_unchanged_answers_are_304() {
    let o = gl();
    let n = o.published("issue-1-open");
    // A 429 with Retry-After, then one without any header (GitLab may send none).
    o.srv
        .fail_next(429, &[("retry-after", "0")], r#"{"message":"Retry later"}"#);
    o.srv.fail_next(429, &[], "Retry later");
    o.srv.clear_requests();
    let (run, workers) = o.status();
    assert_eq!(run.stderr, "");
    assert_eq!(
        find(&workers, "issue-1-open")["pr"],
        o.pr(n, "open", Value::Null, Value::Null)
    );
    assert_eq!(&o.srv.answered()[..3], &[429, 429, 200]);
    // The next run sends If-None-Match: every read is a 304.
    o.srv.clear_requests();
    let (_, workers) = o.status();
    assert_eq!(find(&workers, "issue-1-open")["pr"]["number"], n);
    assert_eq!(o.srv.answered(), vec![304; 4]);
}

#[test]
fn a_permission_error_is_a_failed_forge_and_deletes_wait() {
    let o = gl();
    o.worker("issue-3-empty", 0, 1);
    o.srv.fail_next(403, &[], r#"{"message":"403 Forbidden"}"#);
    let (run, workers) = o.status();
    assert_eq!(run.warnings().len(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("GitLab answered 403 to the merge request listing: 403 Forbidden"),
        "{}",
        run.stderr
    );
    assert_eq!(
        sap(find(&workers, "issue-3-empty")),
        ("empty", "wait", Value::Null, false)
    );
}

#[test]
fn a_closed_blocker_issue_unblocks() {
    let reqs = other::blocker_waits_for_the_issue(&gl());
    assert!(
        reqs.contains(&format!("GET {P}/issues/12 auth")),
        "{reqs:#?}"
    );
}
