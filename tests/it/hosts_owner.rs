//! Whose a worker is, and who may resume it (SPEC 1.3 "Several machines, by the observer's
//! clock"), with real separate hosts ([`Fleet`]): a claim left by a `resume` killed on a
//! host that lives on blocks nobody (its own `sync` removes it once the process is gone,
//! never while it runs), and a host's identity is its `recode.hostId`, never its hostname.

use std::path::Path;

use crate::hosts::{Agent, Fleet, MIN, StdinText, a_starts_issue_1, at, claim_ref, refused_resume};

/// The start token of `pid` (field 22 of `/proc/<pid>/stat`), as git-recode records it.
fn start_token(pid: &str) -> String {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    rest.split_whitespace().nth(19).unwrap().to_string()
}

/// The remote's claim `name` rewritten with `pid` and `token` as its claiming process.
fn claim_with_pid(f: &Fleet, name: &str, pid: &str, token: &str) -> String {
    let text = f.env.git(&f.bare, &["cat-file", "-p", name]);
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["pid"] = serde_json::json!(pid.parse::<u32>().unwrap());
    doc["pid_start"] = serde_json::json!(token);
    let id = f
        .env
        .git_cmd(&f.bare)
        .args(["hash-object", "-w", "--stdin"])
        .stdin_text(&format!("{doc}\n"));
    f.env.git(&f.bare, &["update-ref", name, &id]);
    id
}

/// One tick of a host's loop: `recover --all`, `sync`, `git fetch`.
fn tick(f: &Fleet, host: &str, dir: &Path, now: &str) -> String {
    f.ok(host, dir, now, &["recover", "--all"]);
    let out = f.ok(host, dir, now, &["sync"]);
    f.env.git(dir, &["fetch", "-q", "origin"]);
    out
}

/// The handed case's kind: B takes A's stalled worker over and is killed between its claim
/// and its ledger append; B lives on (its heartbeat moves), A comes back. A's resume is
/// refused while B's claim stands; B's next `sync` removes its own claim once the `resume`
/// that made it is gone (never while a process with its pid and start token runs), and A
/// resumes its own worker, B waiting. Before, the claim held for ever: nobody resumed.
#[test]
fn a_claim_left_by_a_resume_killed_on_a_live_host_is_removed_by_its_own_sync() {
    let f = Fleet::new();
    let (a, b) = (f.clone("a"), f.clone("b"));
    let agent = Agent::start();
    a_starts_issue_1(&f, &a, &agent);
    tick(&f, "hostA", &a, &at(MIN));
    drop(agent);
    tick(&f, "hostB", &b, &at(2 * MIN));
    f.worker("hostB", &b, &at(2 * MIN), "issue-1");
    tick(&f, "hostB", &b, &at(125 * MIN));
    let prompt = f.env.root().join("p.md");
    f.killed_resume("hostB", &b, &at(125 * MIN), "issue-1", &prompt);
    let name = claim_ref("issue-1");
    let left = f.remote_ref(&name).expect("B's claim");
    // A is back: its own stalled worker, but B's claim holds it.
    tick(&f, "hostA", &a, &at(130 * MIN));
    let w = f.worker("hostA", &a, &at(130 * MIN), "issue-1");
    assert_eq!(w["action"], "resume", "{w}");
    assert!(refused_resume(&f, "hostA", &a, &at(130 * MIN), &prompt).contains("first"));
    // A claim whose process still runs (between its claim and its append) is kept.
    let runs = Agent::start();
    let live = claim_with_pid(&f, &name, &runs.pid(), &start_token(&runs.pid()));
    let out = tick(&f, "hostB", &b, &at(131 * MIN));
    assert_eq!(f.remote_ref(&name), Some(live), "{out}");
    // The killed resume's own claim goes with B's next sync (the lease never would: B's
    // heartbeat moves), and A resumes its worker.
    f.env.git(&f.bare, &["update-ref", &name, &left]);
    let out = tick(&f, "hostB", &b, &at(132 * MIN));
    assert!(
        out.contains("removed 1 claim of this host's whose resume died before its ledger append"),
        "{out}"
    );
    assert_eq!(f.remote_ref(&name), None, "{out}");
    tick(&f, "hostA", &a, &at(133 * MIN));
    f.ok(
        "hostA",
        &a,
        &at(133 * MIN),
        &["resume", "issue-1", "--output", prompt.to_str().unwrap()],
    );
    tick(&f, "hostA", &a, &at(133 * MIN));
    tick(&f, "hostB", &b, &at(134 * MIN));
    let w = f.worker("hostB", &b, &at(134 * MIN), "issue-1");
    assert_eq!(
        (w["action"].as_str(), w["host"].as_str()),
        (Some("wait"), Some("hostA")),
        "{w}"
    );
    refused_resume(&f, "hostB", &b, &at(134 * MIN), &prompt);
    let kinds = f.kinds(&b, "issue-1");
    assert!(!kinds.contains(&"takeover".to_string()), "{kinds:?}");
    assert_eq!(
        kinds.iter().filter(|k| *k == "resume").count(),
        1,
        "{kinds:?}"
    );
}

/// The handed case's kind: B names itself `ubuntu` (`recode.hostId`, as docs/hosts.md
/// suggests), A keeps its generated id and its hostname is `ubuntu`. B's worker is B's on
/// A: its pid never probed on A, its live heartbeat makes it `wait`, and A's resume is
/// refused. Before, A took `host=ubuntu` for itself (a 1.2 hostname match), found no such
/// pid, and resumed B's live worker: two agents.
#[test]
fn a_readable_host_id_equal_to_this_hostname_is_another_host() {
    let f = Fleet::new();
    let (a, b) = (f.clone("a"), f.clone("b"));
    f.env.git(&b, &["config", "recode.hostId", "ubuntu"]);
    let wt = f.env.root().join("b-issue-1");
    f.env.git(
        &b,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-1",
            wt.to_str().unwrap(),
        ],
    );
    std::fs::write(wt.join("p.txt"), "part\n").unwrap();
    f.env.git(&wt, &["add", "p.txt"]);
    f.env.git(&wt, &["commit", "-q", "-m", "part one"]);
    f.env.git(&wt, &["push", "-q", "-u", "origin", "issue-1"]);
    let agent = Agent::start();
    let spawn = ["record", "spawn", "issue-1", "--agent", "claude"];
    let pid = agent.pid();
    let args: Vec<&str> = spawn.into_iter().chain(["--pid", &pid]).collect();
    f.ok("build-b", &b, &at(0), &args);
    tick(&f, "build-b", &b, &at(MIN));
    drop(agent); // B's pid is no process on machine A
    // A's first run generates its id (never `ubuntu`, its hostname).
    let first = f
        .cmd_as("ubuntu", &a, &at(2 * MIN), &["sync"])
        .output()
        .unwrap();
    assert!(first.status.success(), "{first:?}");
    let id = f.env.git(&a, &["config", "recode.hostId"]);
    assert_ne!(id, "ubuntu");
    f.env.git(&a, &["fetch", "-q", "origin"]);
    let later = at(40 * MIN);
    let w = f.worker("ubuntu", &a, &later, "issue-1");
    assert_eq!(
        (w["action"].as_str(), w["host"].as_str()),
        (Some("wait"), Some("ubuntu")),
        "{w}"
    );
    assert_eq!(
        w["reason"],
        "worker of host build-b (ubuntu): its heartbeat 38m ago says it is alive; never acted on here"
    );
    let prompt = f.env.root().join("p.md");
    refused_resume(&f, "ubuntu", &a, &later, &prompt);
    let kinds = f.kinds(&a, "issue-1");
    assert!(
        !kinds.iter().any(|k| k == "resume" || k == "takeover"),
        "{kinds:?}"
    );
}
