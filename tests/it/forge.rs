//! The forge (SPEC "Forge", "Commands": status, recover, verify; "Classification":
//! published, phantom) against the loopback GitHub stand-in: real git, real binary, never
//! the network.
//!
//! Every repository here has `origin` = `https://github.com/acme/widget.git`, rewritten
//! for git itself (`url.<bare>.insteadOf`) to a local bare repository, so pushes land on
//! disk while the forge sees a GitHub remote. The binary gets `GH_TOKEN=test-token`,
//! `RECODE_GITHUB_API=<fake>` and `RECODE_FORGE_MAX_WAIT=1`; every run is checked for the
//! token in its output.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{NOW_EPOCH, TestEnv};
use crate::fake_github::FakeGitHub;
use serde_json::{Value, json};

pub(crate) const TOKEN: &str = "test-token";
const ORIGIN: &str = "https://github.com/acme/widget.git";
pub(crate) const LIST: &str =
    "GET /repos/acme/widget/pulls?state=all&sort=created&direction=desc&per_page=100 auth";

/// One finished run of the binary.
pub(crate) struct Run {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) code: Option<i32>,
}

impl Run {
    pub(crate) fn warnings(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with("warning: "))
            .collect()
    }
}

/// A repository with a GitHub `origin` pushed to a local bare repository, and a fake forge.
pub(crate) struct Fx {
    pub(crate) env: TestEnv,
    pub(crate) gh: FakeGitHub,
    pub(crate) repo: PathBuf,
    pub(crate) bare: PathBuf,
    /// The forge's API base URL (the fake's), its variable and its token's variable.
    api: (String, &'static str, &'static str),
}

impl Fx {
    pub(crate) fn new() -> Fx {
        let gh = FakeGitHub::start();
        let api = (gh.url.clone(), "RECODE_GITHUB_API", "GH_TOKEN");
        Fx::with_forge(gh, ORIGIN, api)
    }

    /// A repository whose `origin` is `origin` (pushed to a local bare repository), the
    /// binary pointed at `api` (base URL, its variable, the token's variable).
    pub(crate) fn with_forge(
        gh: FakeGitHub,
        origin: &str,
        api: (String, &'static str, &'static str),
    ) -> Fx {
        let env = TestEnv::new();
        let repo = env.repo("repo");
        let bare = env.root().join("widget.git");
        env.git(
            &env.root(),
            &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
        );
        env.git(&repo, &["remote", "add", "origin", origin]);
        env.git(
            &repo,
            &[
                "config",
                &format!("url.{}.insteadOf", bare.display()),
                origin,
            ],
        );
        env.git(&repo, &["push", "-q", "origin", "main"]);
        Fx {
            env,
            gh,
            repo,
            bare,
            api,
        }
    }

    /// The binary in `dir`, pointed at the fake, with the token unless `token` is false.
    pub(crate) fn cmd(&self, dir: &Path, token: bool) -> Command {
        let mut c = self.env.cmd(dir);
        c.env(self.api.1, &self.api.0)
            .env("RECODE_FORGE_MAX_WAIT", "1");
        if token {
            c.env(self.api.2, TOKEN);
        }
        c
    }

    /// Run in the main worktree; the token never shows in stdout or stderr.
    pub(crate) fn run_with(&self, token: bool, args: &[&str]) -> Run {
        self.run_env(token, &[], args)
    }

    /// As [`Fx::run_with`], with extra environment variables.
    pub(crate) fn run_env(&self, token: bool, vars: &[(&str, &str)], args: &[&str]) -> Run {
        let mut cmd = self.cmd(&self.repo, token);
        cmd.envs(vars.iter().copied());
        let out = cmd.args(args).output().unwrap();
        let run = Run {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.status.code(),
        };
        assert!(
            !run.stdout.contains(TOKEN) && !run.stderr.contains(TOKEN),
            "the token leaked from {args:?}:\n{}\n--- stderr ---\n{}",
            run.stdout,
            run.stderr
        );
        run
    }

    pub(crate) fn run(&self, args: &[&str]) -> Run {
        self.run_with(true, args)
    }

    /// Run with the token, assert exit 0, return stdout.
    pub(crate) fn ok(&self, args: &[&str]) -> String {
        let r = self.run(args);
        assert_eq!(r.code, Some(0), "{args:?} failed:\n{}", r.stderr);
        r.stdout
    }

    /// A worker: branch `branch` in a linked worktree off `main` with `commits` commits,
    /// a recorded spawn and an exit with `rc` (so its liveness is `exited`).
    pub(crate) fn worker(&self, branch: &str, commits: usize, rc: i32) -> PathBuf {
        let wt = self.env.root().join("wt").join(branch);
        self.env.git(
            &self.repo,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                branch,
                wt.to_str().unwrap(),
                "main",
            ],
        );
        for i in 0..commits {
            let f = format!("work-{i}.txt");
            std::fs::write(wt.join(&f), format!("{branch} {i}\n")).unwrap();
            self.env.git(&wt, &["add", &f]);
            self.env
                .git(&wt, &["commit", "-q", "-m", &format!("{branch}: step {i}")]);
        }
        self.ok(&["record", "spawn", branch, "--agent", "claude"]);
        self.ok(&["record", "exit", branch, "--rc", &rc.to_string()]);
        wt
    }

    /// `status --json` with the token: the run and its workers.
    pub(crate) fn status(&self) -> (Run, Vec<Value>) {
        self.status_with(true, &[])
    }

    pub(crate) fn status_with(&self, token: bool, extra: &[&str]) -> (Run, Vec<Value>) {
        let mut args = vec!["status", "--json"];
        args.extend_from_slice(extra);
        let r = self.run_with(token, &args);
        assert_eq!(r.code, Some(0), "status failed:\n{}", r.stderr);
        let doc: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(doc["schema"], 1);
        let workers = doc["workers"].as_array().unwrap().clone();
        (r, workers)
    }

    /// The ledger of `branch` (`log <branch> --json`).
    pub(crate) fn log(&self, branch: &str) -> Vec<Value> {
        self.ok(&["log", branch, "--json"])
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    pub(crate) fn kinds(&self, branch: &str) -> Vec<String> {
        self.log(branch)
            .iter()
            .map(|e| e["kind"].as_str().unwrap().to_string())
            .collect()
    }

    /// `git rev-parse --verify -q <rev>` in `dir`; None when it does not resolve.
    pub(crate) fn rev(&self, dir: &Path, rev: &str) -> Option<String> {
        let out = Command::new("git")
            .args(["rev-parse", "--verify", "-q", rev])
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    pub(crate) fn pr_json(&self, n: u64, state: &str) -> Value {
        json!({"number": n, "state": state, "url": format!("https://github.com/acme/widget/pull/{n}"),
               "checks": null, "review": null})
    }

    /// The 3 feedback reads of open pull request `n` (SPEC "Forge": check runs, combined
    /// status, reviews), in the order a run makes them.
    pub(crate) fn fed(&self, n: u64) -> Vec<String> {
        let sha = self.gh.sha(n);
        vec![
            format!("GET /repos/acme/widget/commits/{sha}/check-runs?per_page=100 auth"),
            format!("GET /repos/acme/widget/commits/{sha}/status?per_page=100 auth"),
            format!("GET /repos/acme/widget/pulls/{n}/reviews?per_page=100 auth"),
        ]
    }

    /// One listing, then the feedback reads of the open pull requests `open`.
    pub(crate) fn listed(&self, open: &[u64]) -> Vec<String> {
        let mut out = vec![LIST.to_string()];
        for n in open {
            out.extend(self.fed(*n));
        }
        out
    }

    /// `verify --json`'s `pr`: number, state and url only.
    pub(crate) fn verify_pr_json(&self, n: u64, state: &str) -> Value {
        json!({"number": n, "state": state, "url": format!("https://github.com/acme/widget/pull/{n}")})
    }
}

pub(crate) fn find<'a>(workers: &'a [Value], branch: &str) -> &'a Value {
    workers
        .iter()
        .find(|w| w["branch"] == branch)
        .unwrap_or_else(|| panic!("no worker {branch} in {workers:#?}"))
}

/// (state, action, pr, phantom) of a worker.
pub(crate) fn sap(w: &Value) -> (&str, &str, Value, bool) {
    (
        w["state"].as_str().unwrap(),
        w["action"].as_str().unwrap(),
        w["pr"].clone(),
        w["phantom"].as_bool().unwrap(),
    )
}

// ---------------------------------------------------------------- status and the forge

#[test]
fn status_shows_open_merged_and_closed_pull_requests_from_one_listing() {
    let fx = Fx::new();
    let open_wt = fx.worker("issue-1-open", 1, 0);
    let merged_wt = fx.worker("issue-2-merged", 2, 0);
    fx.worker("issue-3-closed", 1, 0);
    fx.worker("issue-4-none", 1, 1);
    let open = fx.gh.add_pr("acme", "widget", "issue-1-open", "open");
    let merged = fx.gh.add_pr("acme", "widget", "issue-2-merged", "merged");
    // SPEC 1.3: a merged request is the worker's only with its head at the tip.
    fx.gh
        .set_head(open, &fx.env.git(&open_wt, &["rev-parse", "HEAD"]));
    fx.gh
        .set_head(merged, &fx.env.git(&merged_wt, &["rev-parse", "HEAD"]));
    let closed = fx.gh.add_pr("acme", "widget", "issue-3-closed", "closed");
    // Another repository's pull request for a namesake branch is not ours.
    fx.gh.add_pr("forker", "widget", "issue-4-none", "open");

    let (run, workers) = fx.status();
    assert_eq!(run.stderr, "");
    assert_eq!(workers.len(), 4);
    assert_eq!(
        sap(find(&workers, "issue-1-open")),
        ("published", "none", fx.pr_json(open, "open"), false)
    );
    assert_eq!(
        sap(find(&workers, "issue-2-merged")),
        ("published", "delete", fx.pr_json(merged, "merged"), false)
    );
    assert_eq!(
        sap(find(&workers, "issue-3-closed")),
        (
            "needs-human",
            "escalate",
            fx.pr_json(closed, "closed"),
            false
        )
    );
    assert_eq!(
        sap(find(&workers, "issue-4-none")),
        ("half-done", "resume", Value::Null, false)
    );
    // One listing for four workers, with the token; no per-branch lookups; the feedback
    // of the one open pull request.
    assert_eq!(fx.gh.requests(), fx.listed(&[open]));

    // A state change on the forge shows on the next run.
    fx.gh.set_state(open, "merged");
    let (_, workers) = fx.status();
    assert_eq!(
        sap(find(&workers, "issue-1-open")),
        ("published", "delete", fx.pr_json(open, "merged"), false)
    );
    assert_eq!(fx.gh.requests().len(), 5);

    // classify asks the same one listing (the closed pull request gets no feedback read).
    let c: Value = serde_json::from_str(&fx.ok(&["classify", "issue-3-closed", "--json"])).unwrap();
    assert_eq!(c["schema"], 1);
    assert_eq!(
        sap(&c),
        (
            "needs-human",
            "escalate",
            fx.pr_json(closed, "closed"),
            false
        )
    );
    assert_eq!(
        fx.gh.requests(),
        [fx.listed(&[open]), vec![LIST.to_string(); 2]].concat()
    );
}

#[test]
fn a_fork_pull_request_for_the_same_branch_name_is_ignored() {
    let fx = Fx::new();
    fx.worker("issue-5-fork", 1, 0);
    // A listing of acme/widget holding a pull request from a fork whose branch has the
    // worker's name (head.label is forker:issue-5-fork), as GitHub returns it.
    let listing = json!([{
        "url": format!("{}/repos/acme/widget/pulls/9", fx.gh.url),
        "id": 1_900_000_009u64,
        "html_url": "https://github.com/acme/widget/pull/9",
        "number": 9,
        "state": "open",
        "locked": false,
        "title": "From a fork",
        "user": {"login": "forker", "id": 4004, "type": "User"},
        "body": null,
        "created_at": "2026-11-01T09:00:00Z",
        "updated_at": "2026-11-01T09:00:00Z",
        "closed_at": null,
        "merged_at": null,
        "merge_commit_sha": null,
        "draft": false,
        "head": {
            "label": "forker:issue-5-fork",
            "ref": "issue-5-fork",
            "sha": "1234567890abcdef1234567890abcdef12345678",
            "user": {"login": "forker", "id": 4004, "type": "User"},
            "repo": {"id": 5005, "name": "widget", "full_name": "forker/widget", "fork": true}
        },
        "base": {
            "label": "acme:main",
            "ref": "main",
            "sha": "0f9e8d7c6b5a49382716051a2b3c4d5e6f708192",
            "repo": {"id": 3003, "name": "widget", "full_name": "acme/widget", "fork": false}
        }
    }]);
    fx.gh.fail_next(200, &[], &listing.to_string());
    let (run, workers) = fx.status();
    assert_eq!(run.stderr, "");
    // Not published; and the success claim has no pull request of ours: phantom.
    assert_eq!(
        sap(find(&workers, "issue-5-fork")),
        ("half-done", "resume", Value::Null, true)
    );
    assert_eq!(fx.gh.requests(), vec![LIST.to_string()]);
}

#[test]
fn pagination_finds_every_pull_request_in_one_listing() {
    let fx = Fx::new();
    fx.gh.set_page_size(2);
    let mut numbers = Vec::new();
    for i in 1..=5 {
        let b = format!("issue-{i}-paged");
        fx.worker(&b, 1, 0);
        numbers.push((b.clone(), fx.gh.add_pr("acme", "widget", &b, "open")));
    }
    let (run, workers) = fx.status();
    assert_eq!(run.stderr, "");
    assert_eq!(workers.len(), 5);
    for (b, n) in &numbers {
        assert_eq!(
            sap(find(&workers, b)),
            ("published", "none", fx.pr_json(*n, "open"), false),
            "{b}"
        );
    }
    // Three pages of one listing (5 items, 2 a page), following the link header; then
    // the feedback of the five open pull requests (in branch order).
    let mut want = vec![
        LIST.to_string(),
        "GET /repos/acme/widget/pulls?state=all&sort=created&direction=desc&per_page=100&page=2 auth".to_string(),
        "GET /repos/acme/widget/pulls?state=all&sort=created&direction=desc&per_page=100&page=3 auth".to_string(),
    ];
    for (_, n) in &numbers {
        want.extend(fx.fed(*n));
    }
    assert_eq!(fx.gh.requests(), want);
}

// ---------------------------------------------------------------- phantom and verify

#[test]
fn a_success_claim_without_a_pull_request_is_phantom_once() {
    let fx = Fx::new();
    fx.worker("issue-7-claims", 1, 0);

    let (_, workers) = fx.status();
    let w = find(&workers, "issue-7-claims");
    assert_eq!(w["last_outcome"], "success");
    assert_eq!(
        sap(w),
        ("half-done", "resume", Value::Null, true),
        "the debris is classified as usual"
    );

    // recover ledgers it once, however many times it runs.
    for _ in 0..2 {
        let r = fx.run(&["recover", "--all", "--json"]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let doc: Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(doc["results"][0]["branch"], "issue-7-claims");
        assert_eq!(doc["results"][0]["action"], "resume");
        assert_eq!(doc["results"][0]["result"], "skipped");
    }
    assert_eq!(fx.kinds("issue-7-claims"), vec!["spawn", "exit", "phantom"]);
    let ph = &fx.log("issue-7-claims")[2];
    assert_eq!(ph["task"], "7");
    assert_eq!(ph["branch"], "issue-7-claims");
    assert!(!ph["reason"].as_str().unwrap().is_empty());

    // verify says phantom, exits 0, and does not ledger it a second time.
    let r = fx.run(&["verify", "issue-7-claims"]);
    assert_eq!((r.stdout.as_str(), r.code), ("phantom\n", Some(0)));
    assert_eq!(fx.kinds("issue-7-claims"), vec!["spawn", "exit", "phantom"]);

    // Without a token the forge is unknown: nothing is phantom on a guess.
    let r = fx.run_with(false, &["verify", "issue-7-claims"]);
    assert_eq!((r.stdout.as_str(), r.code), ("unknown\n", Some(0)));
    let (_, workers) = fx.status_with(false, &[]);
    assert_eq!(
        sap(find(&workers, "issue-7-claims")),
        ("half-done", "resume", Value::Null, false)
    );
    // --offline: the same.
    let (_, workers) = fx.status_with(true, &["--offline"]);
    assert!(
        !find(&workers, "issue-7-claims")["phantom"]
            .as_bool()
            .unwrap()
    );

    // Once the pull request exists the claim holds.
    let n = fx.gh.add_pr("acme", "widget", "issue-7-claims", "open");
    let r = fx.run(&["verify", "issue-7-claims"]);
    assert_eq!((r.stdout.as_str(), r.code), ("holds\n", Some(0)));
    let r = fx.run(&["verify", "issue-7-claims", "--json"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["verdict"], "holds");
    assert_eq!(v["pr"], fx.verify_pr_json(n, "open"));
    let (_, workers) = fx.status();
    assert_eq!(
        sap(find(&workers, "issue-7-claims")),
        ("published", "none", fx.pr_json(n, "open"), false)
    );
    // No request was made without the token; verify looks the branch up with its owner.
    let reqs = fx.gh.requests();
    assert!(reqs.iter().all(|r| r.ends_with(" auth")), "{reqs:#?}");
    assert!(
        reqs.contains(
            &"GET /repos/acme/widget/pulls?state=all&head=acme%3Aissue-7-claims auth".to_string()
        ),
        "{reqs:#?}"
    );
}

#[test]
fn verify_on_a_fresh_phantom_ledgers_it_once() {
    let fx = Fx::new();
    fx.worker("issue-8-verify", 1, 0);
    for _ in 0..2 {
        let r = fx.run(&["verify", "issue-8-verify"]);
        assert_eq!((r.stdout.as_str(), r.code), ("phantom\n", Some(0)));
    }
    assert_eq!(fx.kinds("issue-8-verify"), vec!["spawn", "exit", "phantom"]);
    // recover afterwards does not add another.
    assert_eq!(fx.run(&["recover", "--all"]).code, Some(0));
    assert_eq!(fx.kinds("issue-8-verify"), vec!["spawn", "exit", "phantom"]);
}

// ---------------------------------------------------------------- publish via recover

/// A publishable worker: two commits ahead, clean, a recorded passing gate on its head.
/// Its exit is a failure (rc 1), so no success claim makes it phantom. Returns its tip.
pub(crate) fn publishable(fx: &Fx, branch: &str) -> String {
    let wt = fx.worker(branch, 2, 1);
    fx.ok(&["record", "gate", branch, "--passed"]);
    let (_, workers) = fx.status_with(false, &[]);
    let w = find(&workers, branch);
    assert_eq!(
        (&w["state"], &w["action"]),
        (&json!("publishable"), &json!("publish"))
    );
    fx.env.git(&wt, &["rev-parse", "HEAD"])
}

#[test]
fn recover_publishes_pushes_and_opens_the_pull_request() {
    let fx = Fx::new();
    let tip = publishable(&fx, "issue-4-ready");

    let r = fx.run(&["recover", "issue-4-ready", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.stderr, "");
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        doc,
        json!({"schema": 1, "results": [{
            "task": "4",
            "branch": "issue-4-ready",
            "action": "publish",
            "result": "done",
            "reason": "pushed and opened pull request #1 https://github.com/acme/widget/pull/1",
        }]})
    );
    // Pushed to the bare repository behind origin, with the same tip.
    assert_eq!(
        fx.rev(&fx.bare, "refs/heads/issue-4-ready").as_deref(),
        Some(tip.as_str())
    );
    // One pull request, head the branch, base main.
    let prs = fx.gh.prs();
    assert_eq!(prs.len(), 1);
    assert_eq!(
        (
            prs[0].number,
            prs[0].owner.as_str(),
            prs[0].repo.as_str(),
            prs[0].head.as_str(),
            prs[0].base.as_str(),
            prs[0].state.as_str()
        ),
        (1, "acme", "widget", "issue-4-ready", "main", "open")
    );
    assert_eq!(
        fx.gh.requests(),
        vec![
            LIST.to_string(),
            "POST /repos/acme/widget/pulls auth".to_string()
        ]
    );
    // Ledgered.
    let log = fx.log("issue-4-ready");
    let kinds: Vec<&str> = log.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        vec!["spawn", "exit", "gate", "classified", "published"]
    );
    let p = &log[4];
    assert_eq!(p["pr"], 1);
    assert_eq!(p["url"], "https://github.com/acme/widget/pull/1");
    assert_eq!(p["head"], tip.as_str());
    assert_eq!(p["branch"], "issue-4-ready");

    // Now published; a second recover changes nothing.
    let (_, workers) = fx.status();
    assert_eq!(
        sap(find(&workers, "issue-4-ready")),
        ("published", "none", fx.pr_json(1, "open"), false)
    );
    let r = fx.run(&["recover", "--all", "--json"]);
    assert_eq!(r.code, Some(0));
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["results"][0]["result"], "skipped");
    assert_eq!(fx.gh.prs().len(), 1);
}

#[test]
fn recover_reruns_the_gate_and_a_failure_publishes_nothing() {
    let fx = Fx::new();
    let tip = publishable(&fx, "issue-4-ready");
    fx.env.git(&fx.repo, &["config", "recode.gate", "false"]);

    let r = fx.run(&["recover", "issue-4-ready", "--json"]);
    assert_eq!(r.code, Some(0), "a failed gate is a result: {}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let res = &doc["results"][0];
    assert_eq!(res["action"], "publish");
    assert_eq!(res["result"], "failed");
    assert_eq!(fx.rev(&fx.bare, "refs/heads/issue-4-ready"), None);
    assert!(fx.gh.prs().is_empty());
    assert_eq!(fx.gh.requests(), vec![LIST.to_string()]);
    let log = fx.log("issue-4-ready");
    let gates: Vec<&Value> = log.iter().filter(|e| e["kind"] == "gate").collect();
    assert_eq!(gates.len(), 2, "{log:#?}");
    assert_eq!(gates[1]["passed"], false);
    assert_eq!(gates[1]["by"], "recover");
    assert_eq!(gates[1]["command"], "false");
    assert_eq!(gates[1]["head"], tip.as_str());
    assert!(!log.iter().any(|e| e["kind"] == "published"));
    // The failed gate on the head cancels the recorded pass.
    let (_, workers) = fx.status();
    assert_eq!(
        sap(find(&workers, "issue-4-ready")),
        ("half-done", "resume", Value::Null, false)
    );
}

#[test]
fn recover_without_a_token_pushes_and_holds() {
    let fx = Fx::new();
    let tip = publishable(&fx, "issue-4-ready");

    let r = fx.run_with(false, &["recover", "issue-4-ready", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let res = &doc["results"][0];
    assert_eq!(res["action"], "publish");
    assert_eq!(res["result"], "held");
    assert!(
        res["reason"].as_str().unwrap().contains("GH_TOKEN"),
        "a clear message: {res}"
    );
    assert_eq!(
        fx.rev(&fx.bare, "refs/heads/issue-4-ready").as_deref(),
        Some(tip.as_str())
    );
    assert!(fx.gh.requests().is_empty());
    assert!(fx.gh.prs().is_empty());
    assert!(!fx.kinds("issue-4-ready").contains(&"published".to_string()));
}

#[test]
fn recover_uses_the_existing_pull_request_on_422() {
    let fx = Fx::new();
    publishable(&fx, "issue-4-ready");
    // The listing does not show it yet (opened meanwhile): the POST gets a 422.
    fx.gh.fail_next(200, &[], "[]");
    let n = fx.gh.add_pr("acme", "widget", "issue-4-ready", "open");
    let r = fx.run(&["recover", "issue-4-ready", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["results"][0]["result"], "done");
    assert_eq!(fx.gh.prs().len(), 1);
    let log = fx.log("issue-4-ready");
    let p = log.iter().find(|e| e["kind"] == "published").unwrap();
    assert_eq!(p["pr"], n);
    assert_eq!(
        fx.gh.requests(),
        vec![
            LIST.to_string(),
            "POST /repos/acme/widget/pulls auth".to_string(),
            "GET /repos/acme/widget/pulls?state=all&head=acme%3Aissue-4-ready auth".to_string(),
        ]
    );
}

// ---------------------------------------------------------------- forge errors

#[test]
fn server_errors_are_retried() {
    let fx = Fx::new();
    fx.worker("issue-1-open", 1, 0);
    let n = fx.gh.add_pr("acme", "widget", "issue-1-open", "open");
    for _ in 0..3 {
        fx.gh.fail_next(500, &[], r#"{"message":"Server Error"}"#);
    }
    let (run, workers) = fx.status();
    assert_eq!(run.stderr, "");
    assert_eq!(
        sap(find(&workers, "issue-1-open")),
        ("published", "none", fx.pr_json(n, "open"), false)
    );
    assert_eq!(
        fx.gh.requests(),
        [vec![LIST.to_string(); 3], fx.listed(&[n])].concat()
    );
}

#[test]
fn server_errors_beyond_the_retries_are_a_warning() {
    let fx = Fx::new();
    fx.worker("issue-1-open", 1, 0);
    fx.gh.add_pr("acme", "widget", "issue-1-open", "open");
    for _ in 0..4 {
        fx.gh.fail_next(502, &[], r#"{"message":"Bad Gateway"}"#);
    }
    let (run, workers) = fx.status();
    assert_eq!(run.warnings().len(), 1, "{}", run.stderr);
    assert_eq!(
        sap(find(&workers, "issue-1-open")),
        ("half-done", "resume", Value::Null, false)
    );
    assert_eq!(fx.gh.requests(), vec![LIST.to_string(); 4]);
}

#[test]
fn an_auth_failure_warns_and_deletes_wait() {
    let fx = Fx::new();
    let wt = fx.worker("issue-1-empty", 0, 1);
    fx.worker("issue-2-claims", 1, 0);
    let (_, workers) = fx.status();
    assert_eq!(
        sap(find(&workers, "issue-1-empty")),
        ("empty", "delete", Value::Null, false)
    );

    let bad = r#"{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest","status":"401"}"#;
    fx.gh.fail_next(401, &[], bad);
    let (run, workers) = fx.status();
    let warnings = run.warnings();
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert!(warnings[0].contains("401"), "{}", warnings[0]);
    let w = find(&workers, "issue-1-empty");
    assert_eq!(
        sap(w),
        ("empty", "wait", Value::Null, false),
        "the forge was asked and failed: the delete waits"
    );
    // Unknown, not phantom.
    assert!(
        !find(&workers, "issue-2-claims")["phantom"]
            .as_bool()
            .unwrap()
    );
    // A 401 is not retried.
    assert_eq!(fx.gh.requests(), vec![LIST.to_string(); 2]);

    // recover in the same situation leaves the worktree alone.
    fx.gh.fail_next(401, &[], bad);
    let r = fx.run(&["recover", "--all", "--json"]);
    assert_eq!(r.warnings().len(), 1, "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let res = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["branch"] == "issue-1-empty")
        .unwrap();
    assert_eq!(
        (&res["action"], &res["result"]),
        (&json!("wait"), &json!("skipped"))
    );
    assert!(wt.join("README.md").exists());
    assert!(fx.rev(&fx.repo, "refs/heads/issue-1-empty").is_some());
    assert!(!fx.kinds("issue-2-claims").contains(&"phantom".to_string()));

    // verify with a failing forge: unknown, exit 0.
    fx.gh.fail_next(401, &[], bad);
    let r = fx.run(&["verify", "issue-2-claims"]);
    assert_eq!((r.stdout.as_str(), r.code), ("unknown\n", Some(0)));
    assert_eq!(r.warnings().len(), 1, "{}", r.stderr);
}

#[test]
fn a_rate_limit_whose_reset_has_passed_is_retried() {
    let fx = Fx::new();
    fx.worker("issue-1-open", 1, 0);
    let n = fx.gh.add_pr("acme", "widget", "issue-1-open", "open");
    let reset = (NOW_EPOCH - 60).to_string();
    fx.gh.fail_next(
        403,
        &[
            ("x-ratelimit-limit", "5000"),
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", &reset),
        ],
        r#"{"message":"API rate limit exceeded for user ID 1.","documentation_url":"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"}"#,
    );
    let started = std::time::Instant::now();
    let (run, workers) = fx.status();
    assert!(started.elapsed() < std::time::Duration::from_secs(3));
    assert_eq!(run.stderr, "");
    assert_eq!(
        sap(find(&workers, "issue-1-open")),
        ("published", "none", fx.pr_json(n, "open"), false)
    );
    assert_eq!(
        fx.gh.requests(),
        [vec![LIST.to_string()], fx.listed(&[n])].concat()
    );
}

#[test]
fn the_token_never_shows_even_with_trace_logging() {
    let fx = Fx::new();
    publishable(&fx, "issue-4-ready");
    fx.worker("issue-1-open", 1, 0);
    fx.gh.add_pr("acme", "widget", "issue-1-open", "open");
    fx.gh.fail_next(500, &[], r#"{"message":"Server Error"}"#);
    // run_with asserts the token is in neither stdout nor stderr.
    let r = fx.run(&["-vv", "status", "--json"]);
    assert_eq!(r.code, Some(0));
    assert!(!r.stderr.is_empty(), "-vv logs to stderr");
    fx.gh
        .fail_next(401, &[], r#"{"message":"Bad credentials"}"#);
    let r = fx.run(&["-vv", "status"]);
    assert_eq!(r.code, Some(0));
    let r = fx.run(&["-vv", "recover", "--all"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    for args in [
        &["-vv", "verify", "issue-1-open"][..],
        &["-vv", "verify", "issue-4-ready", "--json"],
        &["-vv", "classify", "issue-4-ready", "--json"],
        &["-vv", "log", "--json"],
    ] {
        let r = fx.run(args);
        assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
    }
    // Nor in the ledger, nor anywhere in the repository's config.
    let notes = fx.env.git(&fx.repo, &["log", "-p", "refs/notes/recode"]);
    assert!(!notes.is_empty() && !notes.contains(TOKEN));
    let config = std::fs::read_to_string(fx.repo.join(".git/config")).unwrap();
    assert!(!config.contains(TOKEN));
    // The token was sent: every request carried it.
    assert!(fx.gh.requests().iter().all(|r| r.ends_with(" auth")));
}

// ---------------------------------------------------------------- not GitHub

#[test]
fn a_remote_that_is_not_github_warns_once() {
    let fx = Fx::new();
    fx.env.git(
        &fx.repo,
        &["remote", "set-url", "origin", fx.bare.to_str().unwrap()],
    );
    fx.worker("issue-1-open", 1, 0);
    fx.worker("issue-2-other", 1, 1);
    let (run, workers) = fx.status();
    let warnings = run.warnings();
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        warnings[0].contains(fx.bare.to_str().unwrap()),
        "names the URL: {}",
        warnings[0]
    );
    assert_eq!(workers.len(), 2);
    for w in &workers {
        assert_eq!(w["pr"], Value::Null);
        assert_eq!(w["phantom"], false);
    }
    assert!(fx.gh.requests().is_empty());
    // And verify: unknown, exit 0.
    let r = fx.run(&["verify", "issue-1-open"]);
    assert_eq!((r.stdout.as_str(), r.code), ("unknown\n", Some(0)));
}

#[test]

fn a_remote_that_is_not_github_is_no_forge_and_deletes_proceed() {
    // SPEC: "When the forge was asked and failed in this run, a delete waits" — a remote
    // that is not on GitHub is no forge: nothing is asked, so the delete stands.
    let fx = Fx::new();
    fx.env.git(
        &fx.repo,
        &["remote", "set-url", "origin", fx.bare.to_str().unwrap()],
    );
    fx.worker("issue-1-empty", 0, 1);
    let (_, workers) = fx.status();
    assert_eq!(
        sap(find(&workers, "issue-1-empty")),
        ("empty", "delete", Value::Null, false)
    );
}

// ---------------------------------------------------------------- merged: recover deletes

#[test]
fn recover_removes_a_merged_worker_and_keeps_unpushed_commits() {
    let fx = Fx::new();
    let pushed = fx.worker("issue-1-pushed", 1, 0);
    let tip = fx.env.git(&pushed, &["rev-parse", "HEAD"]);
    fx.env
        .git(&pushed, &["push", "-q", "-u", "origin", "issue-1-pushed"]);
    let local = fx.worker("issue-2-local", 1, 0);
    let local_tip = fx.env.git(&local, &["rev-parse", "HEAD"]);
    let a = fx.gh.add_pr("acme", "widget", "issue-1-pushed", "merged");
    let b = fx.gh.add_pr("acme", "widget", "issue-2-local", "merged");
    fx.gh.set_head(a, &tip);
    fx.gh.set_head(b, &local_tip);
    let (_, workers) = fx.status();
    assert_eq!(
        sap(find(&workers, "issue-1-pushed")),
        ("published", "delete", fx.pr_json(a, "merged"), false)
    );
    assert_eq!(
        sap(find(&workers, "issue-2-local")),
        ("published", "delete", fx.pr_json(b, "merged"), false)
    );

    let r = fx.run(&["recover", "--all", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    for res in doc["results"].as_array().unwrap() {
        assert_eq!(
            (&res["action"], &res["result"]),
            (&json!("delete"), &json!("done")),
            "{res}"
        );
    }
    // Both worktrees go; the pushed branch goes (its commits stay on the remote-tracking
    // branch); the other branch stays, its commits being nowhere else.
    assert!(!pushed.exists() && !local.exists());
    assert_eq!(fx.rev(&fx.repo, "refs/heads/issue-1-pushed"), None);
    assert_eq!(
        fx.rev(&fx.bare, "refs/heads/issue-1-pushed").as_deref(),
        Some(tip.as_str())
    );
    assert_eq!(
        fx.rev(&fx.repo, "refs/heads/issue-2-local").as_deref(),
        Some(local_tip.as_str())
    );
    let kinds = fx.kinds("issue-1-pushed");
    assert_eq!(kinds, vec!["spawn", "exit", "classified", "deleted"]);
    let deleted = &fx.log("issue-1-pushed")[3];
    assert_eq!(deleted["head"], tip.as_str());
    assert_eq!(deleted["worktree"], pushed.to_str().unwrap());
    // One listing for the whole run.
    assert_eq!(fx.gh.requests(), vec![LIST.to_string(); 2]);
}

/// SPEC `published` row (field case `merged-branch-kept-redeleted.sh` under 1.3): a commit
/// made after the merged request's head, never pushed, is new work: the worker is
/// classified as if it had no request, the reason names the request, and no `recover`
/// run deletes or ledgers `deleted`: the branch and its worktree keep the new commit.
#[test]
fn a_commit_after_the_merged_request_is_new_work_never_deleted() {
    let fx = Fx::new();
    let wt = fx.worker("issue-17", 1, 0);
    let merged = fx.env.git(&wt, &["rev-parse", "HEAD"]);
    fx.env.git(&wt, &["push", "-q", "-u", "origin", "issue-17"]);
    let n = fx.gh.add_pr("acme", "widget", "issue-17", "merged");
    fx.gh.set_head(n, &merged);
    std::fs::write(wt.join("late.txt"), "late\n").unwrap();
    fx.env.git(&wt, &["add", "late.txt"]);
    fx.env.git(
        &wt,
        &["commit", "-q", "-m", "after the merge, never pushed"],
    );
    let late = fx.env.git(&wt, &["rev-parse", "HEAD"]);
    let (_, workers) = fx.status();
    let w = find(&workers, "issue-17");
    assert_eq!(
        (&w["state"], &w["action"], &w["reason"]),
        (
            &json!("half-done"),
            &json!("resume"),
            &json!(format!(
                "2 commits ahead; no gate result for the head; 1 commit after pull request #{n} (merged): new work"
            ))
        )
    );
    for _ in 0..3 {
        let r = fx.run(&["recover", "--all", "--json"]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
    }
    assert!(!fx.kinds("issue-17").contains(&"deleted".to_string()));
    assert_eq!(
        fx.rev(&fx.repo, "refs/heads/issue-17").as_deref(),
        Some(late.as_str())
    );
    assert!(wt.join("late.txt").exists());
}

// ---------------------------------------------------------------- token and host variants

#[test]
fn github_token_and_gh_host_select_the_forge() {
    let fx = Fx::new();
    fx.worker("issue-1-open", 1, 0);
    let n = fx.gh.add_pr("acme", "widget", "issue-1-open", "open");
    // GITHUB_TOKEN when GH_TOKEN is unset.
    let r = fx.run_env(false, &[("GITHUB_TOKEN", TOKEN)], &["status", "--json"]);
    assert_eq!((r.code, r.stderr.as_str()), (Some(0), ""));
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["workers"][0]["pr"], fx.pr_json(n, "open"));
    assert_eq!(fx.gh.requests(), fx.listed(&[n]));

    // GH_HOST: a github.com remote stays on GitHub (SPEC 1.2: github.com or GH_HOST).
    let r = fx.run_env(
        true,
        &[("GH_HOST", "ghe.example.invalid")],
        &["status", "--json"],
    );
    assert_eq!((r.code, r.stderr.as_str()), (Some(0), ""));
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["workers"][0]["pr"], fx.pr_json(n, "open"));
    assert_eq!(fx.gh.requests().len(), 8);

    // ...and a remote on the Enterprise host is.
    fx.env.git(
        &fx.repo,
        &[
            "remote",
            "set-url",
            "origin",
            "git@ghe.example.invalid:acme/widget.git",
        ],
    );
    let r = fx.run_env(
        true,
        &[("GH_HOST", "ghe.example.invalid")],
        &["status", "--json"],
    );
    assert_eq!((r.code, r.stderr.as_str()), (Some(0), ""));
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["workers"][0]["pr"], fx.pr_json(n, "open"));
    assert_eq!(
        fx.gh.requests(),
        [fx.listed(&[n]), fx.listed(&[n]), fx.listed(&[n])].concat()
    );
}

#[test]
fn rust_log_trace_does_not_leak_the_token() {
    let fx = Fx::new();
    publishable(&fx, "issue-4-ready");
    fx.gh.fail_next(500, &[], r#"{"message":"Server Error"}"#);
    // run_env asserts the token is in neither stdout nor stderr.
    let r = fx.run_env(true, &[("RUST_LOG", "trace")], &["recover", "--all"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(!r.stderr.is_empty());
    assert_eq!(fx.gh.prs().len(), 1);
}

#[test]
fn verify_checks_head_ref_and_owner_of_the_lookup_answer() {
    let fx = Fx::new();
    fx.worker("issue-5-fork", 1, 0);
    // GitHub answers the head= lookup with a fork's pull request of the same branch name
    // (as it may when the owner prefix is ignored): not ours, so still phantom.
    let listing = json!([{
        "number": 9,
        "state": "open",
        "merged_at": null,
        "html_url": "https://github.com/acme/widget/pull/9",
        "head": {"label": "forker:issue-5-fork", "ref": "issue-5-fork"},
        "base": {"label": "acme:main", "ref": "main"}
    }, {
        "number": 10,
        "state": "open",
        "merged_at": null,
        "html_url": "https://github.com/acme/widget/pull/10",
        "head": {"label": "acme:issue-5-forked", "ref": "issue-5-forked"},
        "base": {"label": "acme:main", "ref": "main"}
    }]);
    fx.gh.fail_next(200, &[], &listing.to_string());
    let r = fx.run(&["verify", "issue-5-fork"]);
    assert_eq!((r.stdout.as_str(), r.code), ("phantom\n", Some(0)));
    assert_eq!(
        fx.gh.requests(),
        vec!["GET /repos/acme/widget/pulls?state=all&head=acme%3Aissue-5-fork auth".to_string()]
    );
}

// ---------------------------------------------------------------- recover and the forge's answers

#[test]
fn a_forge_error_opening_the_pull_request_is_an_error() {
    let fx = Fx::new();
    let tip = publishable(&fx, "issue-4-ready");
    // The listing answers; the POST is refused (not "already exists").
    fx.gh.fail_next(200, &[], "[]");
    fx.gh.fail_next(
        422,
        &[],
        r#"{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"No commits between main and issue-4-ready"}],"status":"422"}"#,
    );
    let r = fx.run(&["recover", "issue-4-ready", "--json"]);
    assert_eq!(
        r.code,
        Some(1),
        "SPEC: a forge error is an error\n{}",
        r.stdout
    );
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["results"][0]["result"], "failed");
    assert!(
        doc["results"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("422"),
        "{}",
        doc["results"][0]["reason"]
    );
    // The push happened before; nothing was ledgered as published.
    assert_eq!(
        fx.rev(&fx.bare, "refs/heads/issue-4-ready").as_deref(),
        Some(tip.as_str())
    );
    assert!(!fx.kinds("issue-4-ready").contains(&"published".to_string()));
    assert!(fx.gh.prs().is_empty());
}

#[test]
fn a_pull_request_closed_unmerged_is_never_reopened() {
    let fx = Fx::new();
    publishable(&fx, "issue-4-ready");
    let n = fx.gh.add_pr("acme", "widget", "issue-4-ready", "closed");
    let r = fx.run(&["recover", "--all", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let res = &doc["results"][0];
    assert_eq!(
        (&res["action"], &res["result"]),
        (&json!("escalate"), &json!("done"))
    );
    assert_eq!(fx.rev(&fx.bare, "refs/heads/issue-4-ready"), None);
    assert_eq!(fx.gh.prs().len(), 1);
    assert_eq!(fx.gh.prs()[0].state, "closed");
    assert_eq!(fx.gh.requests(), vec![LIST.to_string()]);
    // Escalated once, however often recover runs.
    assert_eq!(fx.run(&["recover", "--all"]).code, Some(0));
    let log = fx.log("issue-4-ready");
    assert_eq!(log.iter().filter(|e| e["kind"] == "escalated").count(), 1);
    let (_, workers) = fx.status();
    assert_eq!(
        sap(find(&workers, "issue-4-ready")),
        ("needs-human", "escalate", fx.pr_json(n, "closed"), false)
    );
}

#[test]
fn a_wip_push_is_held_on_a_branch_with_an_open_pull_request() {
    let fx = Fx::new();
    let wt = fx.worker("issue-2-dirty", 1, 1);
    fx.env
        .git(&wt, &["push", "-q", "-u", "origin", "issue-2-dirty"]);
    let remote_tip = fx.env.git(&wt, &["rev-parse", "HEAD"]);
    std::fs::write(wt.join("half.txt"), "half a parser\n").unwrap();
    let n = fx.gh.add_pr("acme", "widget", "issue-2-dirty", "open");
    let (_, workers) = fx.status();
    let w = find(&workers, "issue-2-dirty");
    // Dirty: not published, though the pull request is known.
    assert_eq!(
        sap(w),
        ("half-done", "wip-commit", fx.pr_json(n, "open"), false)
    );

    let r = fx.run(&["recover", "--all", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let res = &doc["results"][0];
    assert_eq!(
        (&res["action"], &res["result"]),
        (&json!("wip-commit"), &json!("held"))
    );
    assert!(
        res["reason"].as_str().unwrap().contains(&format!("#{n}")),
        "{}",
        res["reason"]
    );
    // Committed locally, not pushed.
    assert_ne!(fx.env.git(&wt, &["rev-parse", "HEAD"]), remote_tip);
    assert_eq!(
        fx.rev(&fx.bare, "refs/heads/issue-2-dirty").as_deref(),
        Some(remote_tip.as_str())
    );
    let log = fx.log("issue-2-dirty");
    let wip = log.iter().find(|e| e["kind"] == "wip").unwrap();
    assert_eq!(wip["pushed"], false);
    assert!(wip["held"].as_str().unwrap().contains(&format!("#{n}")));
}

/// SPEC 1.3 "Pushing": without a forge, a WIP push onto the branch on the remote goes when
/// what is there is an ancestor of what is pushed (a fast-forward loses nothing there).
#[test]
fn without_a_forge_a_wip_push_that_fast_forwards_the_remote_branch_goes() {
    let fx = Fx::new();
    let wt = fx.worker("issue-2-dirty", 1, 1);
    fx.env
        .git(&wt, &["push", "-q", "-u", "origin", "issue-2-dirty"]);
    std::fs::write(wt.join("half.txt"), "half a parser\n").unwrap();
    let r = fx.run_with(false, &["recover", "--all", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["results"][0]["result"], "done", "{doc}");
    let tip = fx.env.git(&wt, &["rev-parse", "HEAD"]);
    assert_eq!(
        fx.rev(&fx.bare, "refs/heads/issue-2-dirty").as_deref(),
        Some(tip.as_str())
    );
    assert!(fx.gh.requests().is_empty());
}

#[test]
fn a_wip_push_goes_when_the_forge_knows_no_open_pull_request() {
    let fx = Fx::new();
    let wt = fx.worker("issue-2-dirty", 1, 1);
    fx.env
        .git(&wt, &["push", "-q", "-u", "origin", "issue-2-dirty"]);
    std::fs::write(wt.join("half.txt"), "half a parser\n").unwrap();
    let r = fx.run(&["recover", "--all", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["results"][0]["result"], "done");
    let head = fx.env.git(&wt, &["rev-parse", "HEAD"]);
    assert_eq!(
        fx.rev(&fx.bare, "refs/heads/issue-2-dirty").as_deref(),
        Some(head.as_str())
    );
}

#[test]

fn a_token_in_a_non_github_remote_url_is_not_echoed() {
    // SPEC safety rule 6: tokens never appear in output. A CI checkout often carries the
    // same token in its remote URL; the "not GitHub" warning must not print it.
    let fx = Fx::new();
    fx.env.git(
        &fx.repo,
        &[
            "remote",
            "set-url",
            "origin",
            &format!("https://oauth2:{TOKEN}@gitlab.example.invalid/acme/widget.git"),
        ],
    );
    fx.worker("issue-1-open", 1, 0);
    // run_with asserts the token is in neither stdout nor stderr.
    let (run, _) = fx.status();
    assert_eq!(run.warnings().len(), 1, "{}", run.stderr);
    let r = fx.run(&["verify", "issue-1-open"]);
    assert_eq!((r.stdout.as_str(), r.code), ("unknown\n", Some(0)));
}

#[test]
fn a_token_in_a_github_remote_url_is_not_echoed() {
    let fx = Fx::new();
    let url = format!("https://x-access-token:{TOKEN}@github.com/acme/widget.git");
    fx.env.git(&fx.repo, &["remote", "set-url", "origin", &url]);
    fx.env.git(
        &fx.repo,
        &[
            "config",
            &format!("url.{}.insteadOf", fx.bare.display()),
            &url,
        ],
    );
    publishable(&fx, "issue-4-ready");
    // run_with asserts the token is in neither stdout nor stderr.
    let r = fx.run(&["-vv", "recover", "--all", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["results"][0]["result"], "done");
    assert_eq!(fx.gh.prs().len(), 1);
    let r = fx.run(&["-vv", "status"]);
    assert_eq!(r.code, Some(0));
    let r = fx.run(&["log", "--json"]);
    assert_eq!(r.code, Some(0));
}

#[test]

fn a_failed_listing_never_reopens_a_closed_pull_request() {
    // SPEC: a PR closed without merging means needs-human, "never reopen it by publishing
    // again"; when the forge fails it is unknown, and nothing is decided on a guess.
    let fx = Fx::new();
    let tip = publishable(&fx, "issue-4-ready");
    fx.env
        .git(&fx.repo, &["push", "-q", "origin", "issue-4-ready"]);
    fx.gh.add_pr("acme", "widget", "issue-4-ready", "closed");
    fx.gh
        .fail_next(401, &[], r#"{"message":"Bad credentials"}"#);
    let r = fx.run(&["recover", "--all", "--json"]);
    assert_eq!(r.warnings().len(), 1, "{}", r.stderr);
    assert_eq!(
        fx.gh.prs().len(),
        1,
        "a second pull request was opened: {}\n{:?}",
        r.stdout,
        fx.gh.requests()
    );
    assert!(!fx.kinds("issue-4-ready").contains(&"published".to_string()));
    assert_eq!(
        fx.rev(&fx.bare, "refs/heads/issue-4-ready").as_deref(),
        Some(tip.as_str())
    );
}

#[test]

fn a_publish_to_a_non_github_remote_says_why_it_is_held() {
    let fx = Fx::new();
    fx.env.git(
        &fx.repo,
        &["remote", "set-url", "origin", fx.bare.to_str().unwrap()],
    );
    publishable(&fx, "issue-4-ready");
    let r = fx.run(&["recover", "--all", "--json"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let res = &doc["results"][0];
    assert_eq!(res["result"], "held");
    let reason = res["reason"].as_str().unwrap();
    assert!(
        !reason.contains("no GH_TOKEN"),
        "the token is set; the remote is what is not GitHub: {reason}"
    );
    assert!(fx.gh.requests().is_empty());
}

#[test]
fn a_blocked_worker_waits_until_the_forge_reports_its_blocker_closed() {
    let fx = Fx::new();
    let wt = fx.env.root().join("wt").join("issue-9-blocked");
    fx.env.git(
        &fx.repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-9-blocked",
            wt.to_str().unwrap(),
            "main",
        ],
    );
    std::fs::write(wt.join("started.txt"), "x\n").unwrap();
    fx.ok(&["record", "spawn", "issue-9-blocked"]);
    fx.ok(&[
        "record",
        "exit",
        "issue-9-blocked",
        "--rc",
        "0",
        "--blocker",
        "#12",
    ]);
    fx.gh.set_issue(12, "open");
    let (_, workers) = fx.status();
    let w = find(&workers, "issue-9-blocked");
    assert_eq!(
        (w["action"].as_str(), w["reason"].as_str()),
        (
            Some("wait"),
            Some("blocked on #12 until `git recode record unblock`")
        )
    );
    fx.gh.set_issue(12, "closed");
    let (_, workers) = fx.status();
    assert_eq!(
        find(&workers, "issue-9-blocked")["action"],
        "wip-commit",
        "the forge says #12 is closed"
    );
    assert!(
        fx.gh
            .requests()
            .iter()
            .any(|r| r == "GET /repos/acme/widget/issues/12 auth")
    );
}

#[test]
fn a_second_status_asks_conditionally_and_costs_no_rate_limit() {
    let fx = Fx::new();
    let wt = fx.worker("issue-1-open", 1, 0);
    let n = fx.gh.add_pr("acme", "widget", "issue-1-open", "open");
    let (run, workers) = fx.status();
    assert_eq!(run.stderr, "");
    assert_eq!(find(&workers, "issue-1-open")["pr"], fx.pr_json(n, "open"));
    // The ETags live under the common git dir, shared by every worktree.
    let cache = fx.repo.join(".git").join("recode").join("etags.json");
    assert!(cache.is_file());
    assert!(!std::fs::read_to_string(&cache).unwrap().contains(TOKEN));
    // From a linked worktree: the same cache, an unchanged listing, a free 304.
    let out = fx
        .cmd(&wt, true)
        .args(["status", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["workers"][0]["pr"], fx.pr_json(n, "open"));
    assert_eq!(
        fx.gh.requests(),
        [fx.listed(&[n]), fx.listed(&[n])].concat()
    );
    assert_eq!(
        fx.gh.answered(),
        vec![200, 200, 200, 200, 304, 304, 304, 304]
    );
    assert_eq!(fx.gh.rate_limited(), 4);
    // A change on the forge is a new answer.
    fx.gh.set_state(n, "merged");
    let (_, workers) = fx.status();
    assert_eq!(
        find(&workers, "issue-1-open")["pr"],
        fx.pr_json(n, "merged")
    );
    // Merged: the listing changed, and a merged pull request gets no feedback read.
    assert_eq!(
        fx.gh.answered(),
        vec![200, 200, 200, 200, 304, 304, 304, 304, 200]
    );
}

/// SPEC exit codes: a forge error during `recover` is an error (exit 1), after what could
/// be done safely was done: the WIP commit is made, the delete waits for a forge that
/// answers.
#[test]
fn a_forge_failure_during_recover_exits_1_after_the_safe_steps() {
    let fx = Fx::new();
    let empty = fx.worker("issue-1-empty", 0, 1);
    let dirty = fx.worker("issue-2-dirty", 1, 1);
    std::fs::write(dirty.join("notes.txt"), "uncommitted\n").unwrap();
    for _ in 0..4 {
        fx.gh.fail_next(500, &[], r#"{"message":"Server Error"}"#);
    }
    let r = fx.run_env(
        true,
        &[("RECODE_FORGE_MAX_WAIT", "0")],
        &["recover", "--all", "--json"],
    );
    assert_eq!(
        r.code,
        Some(1),
        "SPEC: a forge error is an error\n{}",
        r.stderr
    );
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let results: Vec<(&str, &str, &str)> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["branch"].as_str().unwrap(),
                x["action"].as_str().unwrap(),
                x["result"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        results,
        vec![
            ("issue-1-empty", "wait", "skipped"),
            ("issue-2-dirty", "wip-commit", "done"),
        ]
    );
    assert_eq!(r.warnings().len(), 1, "{}", r.stderr);
    assert!(r.warnings()[0].contains("500"), "{}", r.stderr);
    assert!(
        r.stderr.lines().any(|l| l.starts_with("error: ")),
        "{}",
        r.stderr
    );
    assert!(empty.join("README.md").exists());
    assert_eq!(fx.env.git(&dirty, &["status", "--porcelain"]), "");
    assert_eq!(fx.gh.requests(), vec![LIST.to_string(); 4]);
}
