//! Requests that are not the worker's own, on every forge (SPEC 1.3 "Merged needs proof"):
//! a randomized test over the GitHub, GitLab and Gitea stand-ins serving, beside a worker's
//! own request (if any), requests with the same branch name from forks, from deleted forks
//! (`head.repo: null`, GitLab's source project gone), reopened ones, locked ones (GitLab:
//! being merged), own ones whose head is unknown here or another line of work. After one
//! `recover --all`, a worker is deleted exactly when its own picked request (open first,
//! else the newest) is merged with its head at the tip, and escalated as closed by a human
//! exactly when that request is closed and its head is not another line of work.
//!
//! `RECODE_FORGE_TRIALS` (default 3) and `RECODE_FORGE_SEED` (default 1) set the seeds; a
//! seed reproduces its trial.

use std::path::PathBuf;

use crate::common::env_u64;
use crate::fake_gitea;
use crate::fake_gitlab;
use crate::forge::Fx;
use crate::forge_other::Other;
use crate::neverlose::Rng;

/// One forge's fixture.
enum Site {
    GitHub(Fx),
    Other(Other),
}

impl Site {
    fn fx(&self) -> &Fx {
        match self {
            Site::GitHub(fx) => fx,
            Site::Other(o) => &o.fx,
        }
    }

    /// A request into acme/widget from `branch` in `from` (`Some(None)`: a deleted fork;
    /// `None`: acme/widget itself) at `sha`, in `state`.
    fn add(&self, branch: &str, from: Option<Option<&str>>, state: &str, sha: &str) -> u64 {
        let n = match (self, from) {
            (Site::GitHub(fx), None) => fx.gh.add_pr("acme", "widget", branch, state),
            (Site::GitHub(fx), Some(f)) => fx.gh.add_fork_pr("acme", "widget", f, branch, state),
            (Site::Other(o), None) => o.srv.add_pr("acme", "widget", branch, state),
            (Site::Other(o), Some(f)) => o.srv.add_fork_pr("acme", "widget", f, branch, state),
        };
        match self {
            Site::GitHub(fx) => fx.gh.set_head(n, sha),
            Site::Other(o) => o.srv.set_head(n, sha),
        }
        n
    }
}

/// What was served for one worker: its own requests (number, state, head is the tip,
/// head is another line of work).
#[derive(Debug, Default)]
struct Served {
    own: Vec<(u64, &'static str, bool, bool)>,
    others: Vec<String>,
}

impl Served {
    /// The worker's own request as the forge clients pick it: open (locked too) first,
    /// else the highest number.
    fn picked(&self) -> Option<&(u64, &'static str, bool, bool)> {
        self.own
            .iter()
            .max_by_key(|(n, s, _, _)| (matches!(*s, "open" | "locked"), *n))
    }
}

/// One trial; returns its violations.
fn trial(seed: u64) -> Vec<String> {
    let mut rng = Rng::new(seed);
    let site = match rng.below(3) {
        0 => Site::GitHub(Fx::new()),
        1 => Site::Other(Other::new("gitlab", fake_gitlab::start())),
        _ => Site::Other(Other::new("gitea", fake_gitea::start())),
    };
    let fx = site.fx();
    let gitlab = matches!(&site, Site::Other(o) if o.kind == "gitlab");
    // A commit this repository holds that is no worker's line of work.
    let tree = fx.env.git(&fx.repo, &["rev-parse", "main^{tree}"]);
    let unrelated = fx.env.git(
        &fx.repo,
        &[
            "commit-tree",
            &tree,
            "-p",
            "main",
            "-m",
            "another line of work",
        ],
    );
    let fake = "0f1e2d3c4b5a69788796a5b4c3d2e1f001234567";
    let mut workers: Vec<(String, PathBuf, String, Served)> = Vec::new();
    for i in 1..=2 + rng.below(3) {
        let branch = format!("issue-{i}-w");
        let wt = fx.worker(&branch, 1 + rng.below(2) as usize, 1);
        if rng.chance(50) {
            fx.ok(&["record", "gate", &branch, "--passed"]);
        }
        if rng.chance(50) {
            fx.env.git(&wt, &["push", "-q", "-u", "origin", &branch]);
        }
        let tip = fx.env.git(&wt, &["rev-parse", "HEAD"]);
        let mut served = Served::default();
        for _ in 0..1 + rng.below(4) {
            let state = *rng.pick(&["open", "closed", "merged"]);
            let sha = if rng.chance(60) { tip.as_str() } else { fake };
            match rng.below(8) {
                0..=2 => {
                    site.add(&branch, Some(Some("someone/widget")), state, sha);
                    served.others.push(format!("fork {state}"));
                }
                3..=4 => {
                    site.add(&branch, Some(None), state, sha);
                    served.others.push(format!("deleted fork {state}"));
                }
                5 if rng.chance(40) => {
                    // Own, another line of work (a branch name reused).
                    let n = site.add(&branch, None, state, &unrelated);
                    served.own.push((n, state, false, true));
                }
                5 | 6 => {
                    let n = site.add(&branch, None, state, sha);
                    served.own.push((n, state, sha == tip, false));
                }
                _ => {
                    // Own, reopened (closed, then open again), or locked on GitLab.
                    let n = site.add(&branch, None, "closed", sha);
                    let now = if gitlab && rng.chance(50) {
                        "locked"
                    } else {
                        "open"
                    };
                    match &site {
                        Site::GitHub(fx) => fx.gh.set_state(n, now),
                        Site::Other(o) => o.srv.set_state(n, now),
                    }
                    served.own.push((n, now, sha == tip, false));
                }
            }
        }
        workers.push((branch, wt, tip, served));
    }
    let r = fx.run(&["recover", "--all", "--json"]);
    let mut v = Vec::new();
    if !matches!(r.code, Some(0 | 1)) || r.stderr.contains("panicked") {
        v.push(format!("recover exit {:?}: {}", r.code, r.stderr));
    }
    for (branch, wt, _tip, served) in &workers {
        let picked = served.picked();
        let may_delete = picked.is_some_and(|(_, s, at_tip, _)| *s == "merged" && *at_tip);
        let may_escalate = picked.is_some_and(|(_, s, _, other)| *s == "closed" && !*other);
        let deleted = !wt.exists();
        let escalated = fx.log(branch).iter().any(|e| e["kind"] == "escalated");
        if deleted != may_delete {
            v.push(format!(
                "{branch}: deleted {deleted}, its own request allows it {may_delete} ({served:?})"
            ));
        }
        if escalated != may_escalate {
            v.push(format!(
                "{branch}: escalated {escalated}, its own request allows it {may_escalate} ({served:?})"
            ));
        }
    }
    v
}

#[test]
fn randomized_requests_not_the_workers_own_never_delete_nor_escalate_it() {
    let trials = env_u64("RECODE_FORGE_TRIALS", 3);
    let first = env_u64("RECODE_FORGE_SEED", 1);
    let mut failed = Vec::new();
    for seed in first..first + trials {
        let v = trial(seed);
        if !v.is_empty() {
            eprintln!(
                "forge proof violation, seed {seed} (RECODE_FORGE_SEED={seed} RECODE_FORGE_TRIALS=1):\n  {}",
                v.join("\n  ")
            );
            failed.push(seed);
        }
    }
    assert!(failed.is_empty(), "violations at seeds {failed:?}");
}
