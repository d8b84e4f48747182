//! SPEC 1.3 "Several machines, by the observer's clock" and "The milestone journal", with
//! real separate hosts ([`Fleet`]): silence measured on the observer's clock, a stable
//! host id whatever the hostname, claims with a lease, refs on the remote as untrusted
//! input, and milestones that travel with `sync`.

use std::path::Path;

use crate::hosts::{Agent, Fleet, MIN, StdinText, a_starts_issue_1, at, claim_ref, refused_resume};

/// RFC 3339 of `NOW_EPOCH + secs` shifted by `skew` seconds (another host's clock).
fn skewed(secs: i64, skew: i64) -> String {
    at(secs + skew)
}

/// `doctor --json`'s checks named `name`: `(level, message, fix)`.
fn doctor(
    f: &Fleet,
    host: &str,
    dir: &Path,
    now: &str,
    name: &str,
) -> Vec<(String, String, String)> {
    let out = f.on(host, dir, now, &["doctor", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"] == name)
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or("").to_string();
            (s("level"), s("message"), s("fix"))
        })
        .collect()
}

/// The handed case's kind: hostB's clock runs 3 h fast, or 6 h slow: a heartbeat it saw
/// change a moment ago is alive whatever its `ts`; B waits and its resume is refused
/// (exit 3). Only B's own clock ages it: 2 h after B first saw it, B takes over.
#[test]
fn a_skewed_clock_never_takes_over_a_live_worker_and_doctor_names_it() {
    for skew in [3 * 3600, -6 * 3600] {
        let f = Fleet::new();
        let (a, b) = (f.clone("a"), f.clone("b"));
        let agent = Agent::start();
        a_starts_issue_1(&f, &a, &agent);
        f.ok("hostA", &a, &at(MIN), &["recover", "--all"]);
        f.ok("hostA", &a, &at(MIN), &["sync"]);
        f.env.git(&b, &["fetch", "-q", "origin"]);
        f.ok("hostB", &b, &skewed(2 * MIN, skew), &["sync"]);
        let w = f.worker("hostB", &b, &skewed(2 * MIN, skew), "issue-1");
        assert_eq!(
            (w["action"].as_str(), w["reason"].as_str()),
            (
                Some("wait"),
                Some(
                    "worker of host hostA: its heartbeat 0s ago says it is alive; never acted on here"
                )
            ),
            "skew {skew}: {w}"
        );
        let prompt = f.env.root().join("p.md");
        refused_resume(&f, "hostB", &b, &skewed(3 * MIN, skew), &prompt);
        assert!(!f.kinds(&b, "issue-1").contains(&"takeover".to_string()));
        // A wrote its heartbeat at 1m of its clock; B first saw it at 2m of its own.
        // (Behind: a clock behind, or a heartbeat that old; a heartbeat ahead can only be a clock.)
        let said = if skew > 0 {
            "host hostA's heartbeat was 3h older than this host's clock when first seen: its clock is behind, or the heartbeat was that old (the host stopped since)"
        } else {
            "host hostA's clock was 5h ahead of this host's when its heartbeat was first seen"
        };
        assert_eq!(
            doctor(&f, "hostB", &b, &skewed(3 * MIN, skew), "hosts"),
            vec![(
                "warn".to_string(),
                said.to_string(),
                "sync that host's clock (e.g. `timedatectl set-ntp true` there), or this one's if it is the wrong one; silence is measured on each host's own clock, so a skew never takes over a live worker".to_string()
            )]
        );
        // A falls silent (its agent dies with it): 2 h of B's clock after B first saw its
        // heartbeat, B takes the worker over.
        drop(agent);
        let w = f.worker("hostB", &b, &skewed(121 * MIN, skew), "issue-1");
        assert_eq!(w["action"], "wait", "1h59m after B first saw it: {w}");
        let w = f.worker("hostB", &b, &skewed(123 * MIN, skew), "issue-1");
        assert_eq!(w["action"], "resume", "{w}");
    }
}

/// The handed case's kind: a hostname that changes (`.local` → `.lan`) is the same host
/// (`recode.hostId`): its live agent is probed here, `running`, and a resume is refused.
#[test]
fn a_hostname_that_changes_is_the_same_host_and_its_live_agent_is_never_resumed_beside_it() {
    let f = Fleet::new();
    let a = f.clone("a");
    let agent = Agent::start();
    // The clone's id is the first name it ran under; the hostname then changes.
    let wt = f.env.root().join("a-issue-1");
    f.env.git(
        &a,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-1",
            wt.to_str().unwrap(),
        ],
    );
    f.ok(
        "laptop.local",
        &a,
        &at(0),
        &["record", "spawn", "issue-1", "--pid", &agent.pid()],
    );
    let id = f.env.git(&a, &["config", "recode.hostId"]);
    // Idle for 3 h yet alive: not hung within this test (`recode.hungAfter` is its own test).
    f.env.git(&a, &["config", "recode.hungAfter", "1000d"]);
    f.ok("laptop.local", &a, &at(MIN), &["recover", "--all"]);
    let later = at(180 * MIN);
    let w = f.worker("laptop.lan", &a, &later, "issue-1");
    assert_eq!(
        (
            w["liveness"].as_str(),
            w["action"].as_str(),
            w["host"].as_str()
        ),
        (Some("running"), Some("wait"), Some(id.as_str())),
        "{w}"
    );
    let prompt = f.env.root().join("p.md");
    let why = refused_resume(&f, "laptop.lan", &a, &later, &prompt);
    assert!(why.contains("issue-1"), "{why}");
    assert!(
        !f.kinds(&a, "issue-1")
            .iter()
            .any(|k| k == "takeover" || k == "resume")
    );
    // One heartbeat ref, the id's; the hostname is its label.
    f.ok("laptop.lan", &a, &at(181 * MIN), &["recover", "--all"]);
    let refs = f.env.git(
        &a,
        &["for-each-ref", "--format=%(refname)", "refs/recode/hosts"],
    );
    assert_eq!(refs, format!("refs/recode/hosts/{id}"));
    let beat = f.env.git(&a, &["show", &format!("{refs}:heartbeat.json")]);
    assert!(
        beat.starts_with(&format!(r#"{{"host":"{id}","label":"laptop.lan","ts":"#)),
        "{beat}"
    );
}

/// A generated id: `<12 hex>-<8 hex>`, stable, different for two clones of one machine.
#[test]
fn a_generated_host_id_is_stable_per_clone_and_two_clones_differ() {
    let f = Fleet::new();
    let (a, b) = (f.clone("a"), f.clone("b"));
    for d in [&a, &b] {
        f.env.ok(d, &["recover", "--all"]);
    }
    let ida = f.env.git(&a, &["config", "recode.hostId"]);
    let idb = f.env.git(&b, &["config", "recode.hostId"]);
    let shape = regex::Regex::new("^[0-9a-f]{12}-[0-9a-f]{8}$").unwrap();
    assert!(shape.is_match(&ida) && shape.is_match(&idb), "{ida} {idb}");
    assert_ne!(ida, idb);
    assert_eq!(ida[..12], idb[..12], "one machine");
    f.env.ok(&a, &["recover", "--all"]);
    assert_eq!(f.env.git(&a, &["config", "recode.hostId"]), ida);
}

/// A clone copied with its config (`cp -a`) carries its original's generated id: `doctor`
/// names it in the copy (two hosts must never share one), and not in the original.
#[test]
fn doctor_names_a_generated_host_id_carried_into_a_copied_clone() {
    let f = Fleet::new();
    let a = f.clone("a");
    f.env.ok(&a, &["recover", "--all"]);
    let id = f.env.git(&a, &["config", "recode.hostId"]);
    let copy = f.env.root().join("copy");
    let cp = std::process::Command::new("cp")
        .args(["-a", a.to_str().unwrap(), copy.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(cp.success());
    let hosts = |dir: &Path| {
        let out = f.env.output(dir, &["doctor", "--json"]);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["check"] == "hosts")
            .map(|c| {
                (
                    c["level"].as_str().unwrap().to_string(),
                    c["message"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    let original = hosts(&a);
    assert_eq!(original.len(), 1, "{original:?}");
    assert_eq!(original[0].0, "ok");
    let copied = hosts(&copy);
    assert_eq!(copied.len(), 1, "{copied:?}");
    assert_eq!(copied[0].0, "warn");
    assert!(
        copied[0].1.starts_with(&format!(
            "recode.hostId {id} was generated for another clone or machine (this one's would be "
        )),
        "{copied:?}"
    );
}

/// Two ids that sanitize alike (`hostB.` and `hostB`) are two hosts with two refs.
#[test]
fn two_host_ids_that_sanitize_alike_never_share_a_heartbeat() {
    let f = Fleet::new();
    let (a, b) = (f.clone("a"), f.clone("b"));
    f.ok("hostB", &a, &at(0), &["recover", "--all"]);
    f.ok("hostB.", &b, &at(0), &["recover", "--all"]);
    f.ok("hostB", &a, &at(0), &["sync"]);
    f.ok("hostB.", &b, &at(0), &["sync"]);
    let refs = f.env.git(
        &f.bare,
        &["for-each-ref", "--format=%(refname)", "refs/recode/hosts"],
    );
    let refs: Vec<&str> = refs.lines().collect();
    assert_eq!(refs.len(), 2, "{refs:?}");
    assert_eq!(refs[0], "refs/recode/hosts/hostB");
    assert!(refs[1].starts_with("refs/recode/hosts/hostB-"), "{refs:?}");
}

/// Hostile or broken refs on the remote: each named once, ignored, never a wedge; `doctor`
/// says how to remove it. A 2 MiB heartbeat is never read whole.
#[test]
fn refs_on_the_remote_are_untrusted_named_once_and_ignored() {
    let f = Fleet::new();
    let (a, b) = (f.clone("a"), f.clone("b"));
    let agent = Agent::start();
    a_starts_issue_1(&f, &a, &agent);
    f.ok("hostA", &a, &at(MIN), &["recover", "--all"]);
    f.ok("hostA", &a, &at(MIN), &["sync"]);
    f.ok("hostB", &b, &at(MIN), &["recover", "--all"]);
    f.ok("hostB", &b, &at(MIN), &["sync"]);
    let bare = &f.bare;
    let head = f.env.git(bare, &["rev-parse", "main"]);
    f.env.git(bare, &["tag", "-a", "-m", "x", "t1", &head]);
    let tag = f.env.git(bare, &["rev-parse", "t1"]);
    f.env
        .git(bare, &["update-ref", "refs/recode/hosts/evil", &tag]);
    f.env
        .git(bare, &["update-ref", "-d", "refs/recode/hosts/hostB"]);
    f.env
        .git(bare, &["update-ref", "refs/recode/hosts/hostB/x", &head]);
    f.env
        .git(bare, &["update-ref", "refs/recode/claims", &head]);
    let big = f.env.root().join("big.json");
    std::fs::write(&big, vec![b' '; 2 << 20]).unwrap();
    let blob = f
        .env
        .git(bare, &["hash-object", "-w", big.to_str().unwrap()]);
    let tree = f
        .env
        .git_cmd(bare)
        .args(["mktree"])
        .stdin_text(&format!("100644 blob {blob}\theartbeat.json\n"));
    let commit = f.env.git(bare, &["commit-tree", &tree, "-m", "huge"]);
    f.env
        .git(bare, &["update-ref", "refs/recode/hosts/huge", &commit]);
    let out = f.on("hostB", &b, &at(2 * MIN), &["sync"]);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let r = "refs/recode/hosts/evil";
    assert_eq!(err.matches(&format!("ignoring {r}:")).count(), 1, "{err}");
    assert!(err.contains(&format!("git push origin :{r}")), "{err}");
    // A ref below B's own heartbeat name would keep B's heartbeat off the remote (and
    // B's live workers would be taken over): B's namespace, removed in the same push.
    assert_eq!(
        err.matches("removing refs/recode/hosts/hostB/x from the remote: a ref in the way of this host's heartbeat")
            .count(),
        1,
        "{err}"
    );
    let beats = f.env.git(
        bare,
        &["for-each-ref", "--format=%(refname)", "refs/recode/hosts/"],
    );
    assert_eq!(
        beats.lines().collect::<Vec<_>>(),
        [
            "refs/recode/hosts/evil",
            "refs/recode/hosts/hostA",
            "refs/recode/hosts/hostB",
            "refs/recode/hosts/huge"
        ]
    );
    assert_eq!(
        f.env.git(bare, &["rev-parse", "refs/recode/hosts/hostB"]),
        f.env.git(&b, &["rev-parse", "refs/recode/hosts/hostB"])
    );
    // The huge one is fetched (it may be a host's) but never read whole.
    let out = f.on("hostB", &b, &at(2 * MIN), &["status", "--offline"]);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("ignoring refs/recode/hosts/huge: a heartbeat of 2097152 bytes")
            .count(),
        1,
        "{err}"
    );
    let refs = doctor(&f, "hostB", &b, &at(2 * MIN), "refs");
    assert_eq!(
        refs,
        vec![(
            "warn".to_string(),
            "ignoring refs/recode/hosts/huge: a heartbeat of 2097152 bytes (at most 1048576 are read)".to_string(),
            "`git push origin :refs/recode/hosts/huge` and `git update-ref -d refs/recode/hosts/huge`".to_string()
        )]
    );
    // B still ticks.
    f.ok("hostB", &b, &at(3 * MIN), &["recover", "--all"]);
    // A takeover with `refs/recode/claims` in the way: named, and the ledger decides.
    drop(agent);
    f.ok("hostB", &b, &at(130 * MIN), &["sync"]);
    f.env.git(&b, &["fetch", "-q", "origin"]);
    f.worker("hostB", &b, &at(130 * MIN), "issue-1");
    let out = f.on(
        "hostB",
        &b,
        &at(250 * MIN),
        &["resume", "issue-1", "--output", "/dev/null"],
    );
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("ignoring refs/recode/claims: a ref in the way of every claim"),
        "{out:?}"
    );
}

/// A ref named `refs/recode/hosts` itself on the remote (pushed by a broken or hostile host)
/// is in the way of every heartbeat, and of every ledger in the same push: the first
/// `sync` removes it, with a lease, says so, and pushes its ledger and heartbeat.
#[test]
fn a_ref_in_the_way_of_every_heartbeat_is_removed_not_a_wedge() {
    let f = Fleet::new();
    let a = f.clone("a");
    let head = f.env.git(&f.bare, &["rev-parse", "main"]);
    f.env
        .git(&f.bare, &["update-ref", "refs/recode/hosts", &head]);
    let agent = Agent::start();
    a_starts_issue_1(&f, &a, &agent);
    f.ok("hostA", &a, &at(MIN), &["recover", "--all"]);
    let out = f.on("hostA", &a, &at(MIN), &["sync"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "warning: removing refs/recode/hosts from the remote: a ref in the way of every host's heartbeat\n"
    );
    let refs = f.env.git(
        &f.bare,
        &[
            "for-each-ref",
            "--format=%(refname)",
            "refs/recode/",
            "refs/notes/",
        ],
    );
    assert_eq!(
        refs.lines().collect::<Vec<_>>(),
        [
            "refs/notes/recode",
            "refs/recode/anchors",
            "refs/recode/hosts/hostA"
        ]
    );
}

/// A host killed between its claim and its ledger append leaves a claim; past
/// `recode.hostTimeout` of its observed silence another host replaces it; a claim whose
/// attempt ended is removed by the next `sync`. A garbage claim is named and replaced.
#[test]
fn a_claim_has_a_lease_and_ends_with_its_attempt() {
    let f = Fleet::new();
    let (a, b, c) = (f.clone("a"), f.clone("b"), f.clone("c"));
    let agent = Agent::start();
    a_starts_issue_1(&f, &a, &agent);
    f.ok("hostA", &a, &at(MIN), &["recover", "--all"]);
    f.ok("hostA", &a, &at(MIN), &["sync"]);
    drop(agent);
    for (h, d) in [("hostB", &b), ("hostC", &c)] {
        f.ok(h, d, &at(2 * MIN), &["recover", "--all"]);
        f.ok(h, d, &at(2 * MIN), &["sync"]);
        f.env.git(d, &["fetch", "-q", "origin"]);
        f.worker(h, d, &at(2 * MIN), "issue-1");
    }
    // A is silent past recode.hostTimeout by B's clock: B claims A's attempt and is
    // killed before its append (the failpoint between the two): its claim on the remote, no takeover ledgered anywhere.
    let name = claim_ref("issue-1");
    let prompt_b = f.env.root().join("pb.md");
    f.killed_resume("hostB", &b, &at(125 * MIN), "issue-1", &prompt_b);
    let doc = f.env.git(&f.bare, &["cat-file", "-p", &name]);
    assert!(doc.contains("\"host\":\"hostB\""), "{doc}");
    let ledger = f.env.git(&b, &["log", "-p", "refs/notes/recode"]);
    assert!(!ledger.contains("takeover"), "{ledger}");
    let prompt = f.env.root().join("p.md");
    let late = at(130 * MIN);
    f.ok("hostC", &c, &late, &["sync"]);
    assert!(refused_resume(&f, "hostC", &c, &late, &prompt).contains("by another host first"));
    // B stays silent: 2 h after C first saw its claim (and B's heartbeat), C replaces it.
    let later = at(251 * MIN);
    f.ok("hostC", &c, &later, &["sync"]);
    f.ok(
        "hostC",
        &c,
        &later,
        &["resume", "issue-1", "--output", prompt.to_str().unwrap()],
    );
    let doc = f.env.git(&f.bare, &["cat-file", "-p", &name]);
    assert!(doc.contains("\"host\":\"hostC\""), "{doc}");
    // C's attempt ends: the next sync of any host removes the claim.
    f.ok(
        "hostC",
        &c,
        &at(252 * MIN),
        &["record", "exit", "issue-1", "--rc", "1"],
    );
    f.ok("hostC", &c, &at(252 * MIN), &["sync"]);
    f.ok("hostA", &a, &at(253 * MIN), &["sync"]);
    assert_eq!(f.remote_ref(&name), None, "removed");
    // A garbage claim is named once and replaced: here well-formed JSON naming no attempt
    // time, by a claimer never heard of (else it would hold for a lease); bytes that are
    // no JSON take the same path.
    let junk = f
        .env
        .git_cmd(&f.bare)
        .args(["hash-object", "-w", "--stdin"])
        .stdin_text(r#"{"branch":"issue-1","from_host":"zz","attempt_ts":"x","host":"ghost"}"#);
    f.env.git(&f.bare, &["update-ref", &name, &junk]);
    let out = f.on(
        "hostC",
        &c,
        &at(260 * MIN),
        &["resume", "issue-1", "--output", prompt.to_str().unwrap()],
    );
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches(&format!("ignoring {name}: not a claim"))
            .count(),
        1,
        "{err}"
    );
}

/// SPEC 1.3 "The milestone journal": after `sync`, a fresh clone of the remote shows with
/// plain git every milestone committed before, exactly once.
#[test]
fn milestones_committed_before_a_sync_reach_a_fresh_clone_exactly_once() {
    let f = Fleet::new();
    let a = f.clone("a");
    f.env.ok(&a, &["hook", "install"]);
    f.env.git(&a, &["checkout", "-q", "-b", "issue-7"]);
    for (i, phase) in ["scoped", "implemented"].iter().enumerate() {
        let msg = format!("step {i}\n\nRecode-Phase: {phase}\n");
        crate::hookenv::commit(&f.env, &a, &format!("f{i}"), "x\n", &msg, &[]);
    }
    assert!(
        a.join(".git/recode/milestones.journal").exists(),
        "journaled by the hook"
    );
    f.env.ok(&a, &["sync"]);
    f.env.ok(&a, &["sync"]);
    let fresh = f.env.root().join("fresh");
    f.env.git(
        &f.env.root(),
        &[
            "clone",
            "-q",
            f.bare.to_str().unwrap(),
            fresh.to_str().unwrap(),
        ],
    );
    f.env.git(
        &fresh,
        &[
            "fetch",
            "-q",
            "origin",
            "refs/notes/recode:refs/notes/recode",
        ],
    );
    let anchor = f.env.anchor(&fresh, "7");
    let note = f
        .env
        .git(&fresh, &["notes", "--ref=recode", "show", &anchor]);
    for phase in ["scoped", "implemented"] {
        assert_eq!(
            note.matches(&format!("\"phase\":\"{phase}\"")).count(),
            1,
            "{note}"
        );
    }
}
