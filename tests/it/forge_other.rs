//! The fixture for forges beyond GitHub (SPEC 1.2 "Forges"): a repository whose `origin`
//! is on a self-hosted GitLab or Gitea host (`recode.forge gitlab|gitea`), rewritten for
//! git to a local bare repository, the binary pointed at the loopback stand-in with
//! `RECODE_FORGE_API` and the forge's token variable; every run is checked for the token
//! in its output (the [`Fx`] of `forge.rs`). The scenarios shared by both forges are here;
//! `forge_gitlab.rs` and `forge_gitea.rs` run them with each forge's expectations.

use std::ops::Deref;

use serde_json::{Value, json};

use crate::fake_forge::FakeForge;
use crate::fake_github::FakeGitHub;
use crate::forge::{Fx, TOKEN, find, publishable, sap};

/// One forge's fixture: the repository ([`Fx`]) and the stand-in.
pub(crate) struct Other {
    pub(crate) fx: Fx,
    pub(crate) srv: FakeForge,
    /// `gitlab` or `gitea`.
    pub(crate) kind: &'static str,
}

impl Deref for Other {
    type Target = Fx;
    fn deref(&self) -> &Fx {
        &self.fx
    }
}

impl Other {
    /// `kind` (`gitlab` or `gitea`) served by `srv`: origin `https://<kind>.example/acme/widget.git`.
    pub(crate) fn new(kind: &'static str, srv: FakeForge) -> Other {
        let token_var = if kind == "gitlab" {
            "GITLAB_TOKEN"
        } else {
            "GITEA_TOKEN"
        };
        let origin = format!("https://{kind}.example/acme/widget.git");
        let api = (srv.url.clone(), "RECODE_FORGE_API", token_var);
        // The GitHub stand-in is never asked here: any request to it fails the test.
        let fx = Fx::with_forge(FakeGitHub::start(), &origin, api);
        fx.env.git(&fx.repo, &["config", "recode.forge", kind]);
        Other { fx, srv, kind }
    }

    /// The page of request `n` on this forge.
    pub(crate) fn url(&self, n: u64) -> String {
        match self.kind {
            "gitlab" => format!("https://gitlab.example/acme/widget/-/merge_requests/{n}"),
            _ => format!("https://gitea.example/acme/widget/pulls/{n}"),
        }
    }

    /// Request `n` as the forge's reasons name it: `merge request !n` on GitLab, `pull
    /// request #n` on Gitea (SPEC 1.3: the forge's own words).
    pub(crate) fn req(&self, n: u64) -> String {
        match self.kind {
            "gitlab" => format!("merge request !{n}"),
            _ => format!("pull request #{n}"),
        }
    }

    /// `pr` of a worker: number, state, url, checks, review.
    pub(crate) fn pr(&self, n: u64, state: &str, checks: Value, review: Value) -> Value {
        json!({"number": n, "state": state, "url": self.url(n), "checks": checks, "review": review})
    }

    /// A worker (one commit, exited rc 0) whose request is open on the forge at its tip.
    pub(crate) fn published(&self, branch: &str) -> u64 {
        let wt = self.worker(branch, 1, 0);
        let tip = self.env.git(&wt, &["rev-parse", "HEAD"]);
        let n = self.srv.add_pr("acme", "widget", branch, "open");
        self.srv.set_head(n, &tip);
        n
    }

    /// The GitHub stand-in got nothing.
    pub(crate) fn github_untouched(&self) {
        assert_eq!(self.gh.requests(), Vec::<String>::new());
    }
}

/// A publishable worker is pushed and one request opened; then it is `published`, `open`.
/// Returns the requests of the publish run and of the status run after it.
pub(crate) fn publish_then_published(o: &Other) -> (Vec<String>, Vec<String>) {
    let tip = publishable(o, "issue-4-ready");
    o.srv.clear_requests();
    let r = o.run(&["recover", "issue-4-ready", "--json"]);
    assert_eq!((r.code, r.stderr.as_str()), (Some(0), ""), "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        doc["results"][0],
        json!({"task": "4", "branch": "issue-4-ready", "action": "publish", "result": "done",
               "reason": format!("pushed and opened {} {}", o.req(1), o.url(1))})
    );
    assert_eq!(
        o.rev(&o.bare, "refs/heads/issue-4-ready").as_deref(),
        Some(tip.as_str())
    );
    let prs = o.srv.prs();
    assert_eq!(prs.len(), 1);
    assert_eq!(
        (
            prs[0].project.as_str(),
            prs[0].head.as_str(),
            prs[0].base.as_str(),
            prs[0].state.as_str()
        ),
        ("acme/widget", "issue-4-ready", "main", "open")
    );
    let published = o.srv.requests();
    let log = o.log("issue-4-ready");
    let p = log.iter().find(|e| e["kind"] == "published").unwrap();
    assert_eq!((&p["pr"], &p["url"]), (&json!(1), &json!(o.url(1))));
    // The forge saw the push: the request's head is the tip.
    o.srv.set_head(1, &tip);
    o.srv.clear_requests();
    let (run, workers) = o.status();
    assert_eq!(run.stderr, "");
    assert_eq!(
        sap(find(&workers, "issue-4-ready")),
        (
            "published",
            "none",
            o.pr(1, "open", Value::Null, Value::Null),
            false
        )
    );
    let status = o.srv.requests();
    // A second recover opens nothing more.
    assert_eq!(o.run(&["recover", "--all"]).code, Some(0));
    assert_eq!(o.srv.prs().len(), 1);
    o.github_untouched();
    (published, status)
}

/// The listing misses the request (opened meanwhile): the create answers 409 and the
/// existing one is used. Returns the requests.
pub(crate) fn conflict_uses_the_existing_one(o: &Other) -> Vec<String> {
    publishable(o, "issue-4-ready");
    o.srv.fail_next(200, &[], "[]");
    let n = o.srv.add_pr("acme", "widget", "issue-4-ready", "open");
    o.srv.clear_requests();
    let r = o.run(&["recover", "issue-4-ready", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["results"][0]["result"], "done", "{doc}");
    assert_eq!(o.srv.prs().len(), 1);
    let log = o.log("issue-4-ready");
    let p = log.iter().find(|e| e["kind"] == "published").unwrap();
    assert_eq!(p["pr"], n);
    o.srv.requests()
}

/// A merged request: `published`/`delete`; recover removes the worktree and the branch
/// (its commits are on the remote), and ledgers `deleted`.
pub(crate) fn merged_deletes(o: &Other) {
    let wt = o.worker("issue-1-done", 1, 0);
    let tip = o.env.git(&wt, &["rev-parse", "HEAD"]);
    o.env
        .git(&wt, &["push", "-q", "-u", "origin", "issue-1-done"]);
    let n = o.srv.add_pr("acme", "widget", "issue-1-done", "merged");
    o.srv.set_head(n, &tip);
    let closed = o.published("issue-2-closed");
    o.srv.set_state(closed, "closed");
    let (_, workers) = o.status();
    assert_eq!(
        sap(find(&workers, "issue-1-done")),
        (
            "published",
            "delete",
            o.pr(n, "merged", Value::Null, Value::Null),
            false
        )
    );
    // Closed without merging: a human closed it, never reopened.
    assert_eq!(
        sap(find(&workers, "issue-2-closed")),
        (
            "needs-human",
            "escalate",
            o.pr(closed, "closed", Value::Null, Value::Null),
            false
        )
    );
    let r = o.run(&["recover", "issue-1-done", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["results"][0]["result"], "done", "{doc}");
    assert!(!wt.exists());
    assert_eq!(o.rev(&o.repo, "refs/heads/issue-1-done"), None);
    assert_eq!(
        o.rev(&o.bare, "refs/heads/issue-1-done").as_deref(),
        Some(tip.as_str())
    );
    assert_eq!(o.kinds("issue-1-done").last().unwrap(), "deleted");
    assert_eq!(o.srv.prs().len(), 2, "nothing opened");
}

/// `verify`: phantom (ledgered once) without a request, holds with one; unknown without
/// the token, nothing asked.
pub(crate) fn verify_phantom_then_holds(o: &Other) {
    o.worker("issue-7-claims", 1, 0);
    for _ in 0..2 {
        let r = o.run(&["verify", "issue-7-claims"]);
        assert_eq!((r.stdout.as_str(), r.code), ("phantom\n", Some(0)));
    }
    assert_eq!(o.kinds("issue-7-claims"), vec!["spawn", "exit", "phantom"]);
    o.srv.clear_requests();
    let r = o.run_with(false, &["verify", "issue-7-claims"]);
    assert_eq!((r.stdout.as_str(), r.code), ("unknown\n", Some(0)));
    assert!(o.srv.requests().is_empty());
    let n = o.srv.add_pr("acme", "widget", "issue-7-claims", "open");
    let r = o.run(&["verify", "issue-7-claims", "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v,
        json!({"schema": 1, "branch": "issue-7-claims", "task": "7", "verdict": "holds",
               "pr": {"number": n, "state": "open", "url": o.url(n)}})
    );
    o.github_untouched();
}

/// Without the forge's token: `status` warns once naming the variable, nothing is asked,
/// nothing is phantom or published; `publish` pushes and says which token is missing.
pub(crate) fn no_token_warns_once(o: &Other, var: &str) {
    let tip = publishable(o, "issue-4-ready");
    o.worker("issue-5-claims", 1, 0);
    o.srv.add_pr("acme", "widget", "issue-5-claims", "open");
    o.srv.clear_requests();
    let (run, workers) = o.status_with(false, &[]);
    assert_eq!(run.warnings().len(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!("no {var}")),
        "names the variable: {}",
        run.stderr
    );
    assert_eq!(
        sap(find(&workers, "issue-5-claims")),
        ("half-done", "resume", Value::Null, false)
    );
    let r = o.run_with(false, &["recover", "issue-4-ready", "--json"]);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let res = &doc["results"][0];
    assert_eq!(res["result"], "held", "{doc}");
    assert!(res["reason"].as_str().unwrap().contains(var), "{res}");
    assert_eq!(
        o.rev(&o.bare, "refs/heads/issue-4-ready").as_deref(),
        Some(tip.as_str())
    );
    assert!(o.srv.requests().is_empty());
    assert_eq!(o.srv.prs().len(), 1);
    // With the token, no warning.
    let (run, _) = o.status();
    assert_eq!(run.stderr, "");
}

/// Requested changes and failing checks resume with the evidence fenced in the prompt;
/// at the cap they need a human. `set_failing(sha)` makes the head's checks fail with a
/// check named `rspec` whose summary is `3 examples failed`; `request_changes(n)` makes
/// `ana` request changes with body `Name the error cases.` and an inline comment on
/// `src/a.rs` line 3.
pub(crate) fn feedback_resumes_fenced(
    o: &Other,
    set_failing: impl Fn(&str),
    request_changes: impl Fn(u64),
) -> String {
    let n = o.published("issue-7-fix");
    o.ok(&["record", "spawn", "issue-7-fix", "--session-id", "s-7"]);
    o.ok(&["record", "exit", "issue-7-fix", "--rc", "0"]);
    set_failing(&o.srv.sha(n));
    request_changes(n);
    let (run, workers) = o.status();
    assert_eq!(run.stderr, "");
    let w = find(&workers, "issue-7-fix");
    assert_eq!(
        sap(w),
        (
            "published",
            "resume",
            o.pr(n, "open", json!("failing"), json!("changes_requested")),
            false
        )
    );
    let prompt = o.env.root().join("prompt.md");
    let r = o.run(&[
        "resume",
        "issue-7-fix",
        "--output",
        prompt.to_str().unwrap(),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let text = std::fs::read_to_string(&prompt).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let begin = lines
        .iter()
        .position(|l| *l == git_recode::app::parts::prompt::FEEDBACK_BEGIN)
        .unwrap();
    let end = lines
        .iter()
        .rposition(|l| *l == git_recode::app::parts::prompt::FEEDBACK_END)
        .unwrap();
    let fenced = &lines[begin + 1..end];
    assert!(fenced.iter().all(|l| l.starts_with("| ")), "{fenced:#?}");
    for want in [
        "| Failing check: rspec",
        "| Changes requested by ana:",
        "| Name the error cases.",
        "| Inline comment on src/a.rs line 3:",
        "| what if the input is empty?",
    ] {
        assert!(fenced.contains(&want), "{want} in {fenced:#?}");
    }
    // Ledgered as a counted attempt; at the cap the next verdict is needs-human.
    assert_eq!(o.log("issue-7-fix").last().unwrap()["kind"], "resume");
    o.ok(&["record", "exit", "issue-7-fix", "--rc", "0"]);
    let (_, workers) = o.status();
    let w = find(&workers, "issue-7-fix");
    assert_eq!(
        (&w["state"], &w["action"]),
        (&json!("needs-human"), &json!("escalate"))
    );
    o.github_untouched();
    fenced.join("\n")
}

/// The token never leaves in anything the binary printed or ledgered.
pub(crate) fn token_stays_out(o: &Other) {
    let notes = o.env.git(&o.repo, &["log", "-p", "refs/notes/recode"]);
    assert!(!notes.contains(TOKEN));
}

/// A worker blocked on issue #12 waits while the forge says it is open and goes on once
/// it is closed. Returns the requests.
pub(crate) fn blocker_waits_for_the_issue(o: &Other) -> Vec<String> {
    let wt = o.env.root().join("wt").join("issue-9-blocked");
    let wt_s = wt.to_str().unwrap();
    o.env.git(
        &o.repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-9-blocked",
            wt_s,
            "main",
        ],
    );
    std::fs::write(wt.join("started.txt"), "x\n").unwrap();
    o.ok(&["record", "spawn", "issue-9-blocked"]);
    o.ok(&[
        "record",
        "exit",
        "issue-9-blocked",
        "--rc",
        "0",
        "--blocker",
        "#12",
    ]);
    o.srv.set_issue(12, "open");
    let (_, workers) = o.status();
    assert_eq!(find(&workers, "issue-9-blocked")["action"], "wait");
    o.srv.set_issue(12, "closed");
    o.srv.clear_requests();
    let (_, workers) = o.status();
    assert_eq!(find(&workers, "issue-9-blocked")["action"], "wip-commit");
    o.srv.requests()
}
