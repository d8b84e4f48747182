//! SPEC 1.2 "Several machines", with real separate hosts: every git-recode run of a host
//! runs in a UTS namespace of its own (`unshare --uts`, its hostname written to
//! `/proc/sys/kernel/hostname`, the path git-recode reads), and the clones sync through one
//! bare remote. The clock is pinned per run (`RECODE_NOW`).
//!
//! The issue's scenario: B waits while A is alive and ticking; B takes over only after
//! A's silence; A's comeback pushes to the side branch, never onto the branch; nothing is
//! lost on either side.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{NOW_EPOCH, TestEnv};

/// One minute, in seconds.
pub(crate) const MIN: i64 = 60;

/// RFC 3339 of `NOW_EPOCH + secs`.
pub(crate) fn at(secs: i64) -> String {
    jiff::Timestamp::from_second(NOW_EPOCH + secs)
        .unwrap()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// Several clones of one bare remote, each a host of its own.
pub(crate) struct Fleet {
    pub(crate) env: TestEnv,
    pub(crate) bare: PathBuf,
}

impl Fleet {
    /// A bare remote holding `main` (one commit).
    pub(crate) fn new() -> Fleet {
        Fleet::in_env(TestEnv::new())
    }

    /// A fleet whose repositories keep loose refs whatever `RECODE_TEST_FORMAT` says (its
    /// hash still follows it): for what only loose refs have, a ref's `.lock` file.
    pub(crate) fn with_files_refs() -> Fleet {
        Fleet::in_env(TestEnv::with_files_refs())
    }

    fn in_env(env: TestEnv) -> Fleet {
        let seed = env.repo("seed");
        let bare = env.root().join("remote.git");
        env.git(
            &env.root(),
            &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
        );
        env.git(&seed, &["push", "-q", bare.to_str().unwrap(), "main"]);
        Fleet { env, bare }
    }

    /// The remote refuses every push to `refs/notes/*` (a pre-receive hook) until
    /// [`Fleet::release_notes`]: a ledger push that does not land, claims and branches do.
    pub(crate) fn hold_notes(&self) {
        let hook = self.bare.join("hooks/pre-receive");
        std::fs::write(
            &hook,
            "#!/bin/sh\nwhile read old new ref; do case $ref in refs/notes/*) echo held >&2; exit 1;; esac; done\n",
        )
        .unwrap();
        std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }

    /// Removes [`Fleet::hold_notes`]'s hook.
    pub(crate) fn release_notes(&self) {
        std::fs::remove_file(self.bare.join("hooks/pre-receive")).unwrap();
    }

    /// A clone named `name` (the host's checkout).
    pub(crate) fn clone(&self, name: &str) -> PathBuf {
        let dir = self.env.root().join(name);
        self.env.git(
            &self.env.root(),
            &[
                "clone",
                "-q",
                self.bare.to_str().unwrap(),
                dir.to_str().unwrap(),
            ],
        );
        dir
    }

    /// `git-recode <args>` in `dir` on host `host` at `now` (RFC 3339): the real binary in
    /// a UTS namespace whose hostname is `host` (`unshare` and `sh` exec it: the child's
    /// pid is git-recode's own).
    ///
    /// The clone's `recode.hostId` is set to `host` on its first run (each clone a machine
    /// of its own, its id readable in the tests); a later run under another name is the
    /// same host with a new label (SPEC 1.3: the hostname is only a label).
    pub(crate) fn cmd_on(&self, host: &str, dir: &Path, now: &str, args: &[&str]) -> Command {
        self.name_host(dir, host);
        self.cmd_as(host, dir, now, args)
    }

    /// [`Fleet::cmd_on`] for a clone already given its id (no `git config` run first).
    pub(crate) fn cmd_as(&self, host: &str, dir: &Path, now: &str, args: &[&str]) -> Command {
        let template = self.env.cmd(dir);
        let mut cmd = Command::new("unshare");
        cmd.env_clear();
        for (k, v) in template.get_envs() {
            if let Some(v) = v {
                cmd.env(k, v);
            }
        }
        cmd.env("RECODE_NOW", now)
            .env("RECODE_HOST_NAME", host)
            .current_dir(dir)
            .stdin(std::process::Stdio::null())
            .args([
                "--uts",
                "sh",
                "-c",
                r#"printf %s "$RECODE_HOST_NAME" > /proc/sys/kernel/hostname && unset RECODE_HOST_NAME && exec "$@""#,
                "sh",
            ])
            .arg(template.get_program())
            .args(args);
        cmd
    }

    /// Give the clone `dir` the id `host` unless it has one.
    pub(crate) fn name_host(&self, dir: &Path, host: &str) {
        let has = self
            .env
            .git_cmd(dir)
            .args(["config", "--get", "recode.hostId"])
            .output()
            .unwrap();
        if !has.status.success() {
            self.env.git(dir, &["config", "recode.hostId", host]);
        }
    }

    /// `resume <branch> --output <prompt>` on `host`, SIGKILLed at the failpoint
    /// `resume-claimed` (after its claim, before its ledger append).
    pub(crate) fn killed_resume(
        &self,
        host: &str,
        dir: &Path,
        now: &str,
        branch: &str,
        prompt: &Path,
    ) {
        let killed = self
            .cmd_as(
                host,
                dir,
                now,
                &["resume", branch, "--output", prompt.to_str().unwrap()],
            )
            .env(crate::common::ARM.0, crate::common::ARM.1)
            .env("RECODE_FAILPOINT", "resume-claimed")
            .output()
            .unwrap();
        assert_eq!(killed.status.code(), None, "{killed:?}");
    }

    /// [`Fleet::cmd_on`], run to its end.
    pub(crate) fn on(&self, host: &str, dir: &Path, now: &str, args: &[&str]) -> Output {
        self.cmd_on(host, dir, now, args).output().unwrap()
    }

    /// [`Fleet::on`], asserting exit 0; stdout.
    pub(crate) fn ok(&self, host: &str, dir: &Path, now: &str, args: &[&str]) -> String {
        let out = self.on(host, dir, now, args);
        assert!(
            out.status.success(),
            "{host}: git-recode {args:?} failed ({:?}): {}{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    /// The worker object of `branch` in `status --json --all` on `host`.
    pub(crate) fn worker(
        &self,
        host: &str,
        dir: &Path,
        now: &str,
        branch: &str,
    ) -> serde_json::Value {
        let doc: serde_json::Value = serde_json::from_str(&self.ok(
            host,
            dir,
            now,
            &["status", "--json", "--all", "--offline"],
        ))
        .unwrap();
        doc["workers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["branch"] == branch)
            .cloned()
            .unwrap_or_else(|| panic!("{host}: no worker {branch} in {doc}"))
    }

    /// The remote's value of `name`, if any.
    pub(crate) fn remote_ref(&self, name: &str) -> Option<String> {
        let out = self
            .env
            .git_cmd(&self.bare)
            .args(["rev-parse", "--verify", "-q", name])
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// The kinds of the ledger of task `task` as `dir` sees it (`log --json`).
    pub(crate) fn kinds(&self, dir: &Path, branch: &str) -> Vec<String> {
        self.env
            .ok(dir, &["log", branch, "--json"])
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["kind"].as_str().unwrap().to_string()
            })
            .collect()
    }
}

/// A live process standing in for an agent (killed when dropped).
pub(crate) struct Agent(std::process::Child);

impl Agent {
    pub(crate) fn start() -> Agent {
        Agent(Command::new("sleep").arg("600").spawn().unwrap())
    }
    pub(crate) fn pid(&self) -> String {
        self.0.id().to_string()
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `resume issue-1` on `host`, which must be refused (exit 3): its first stderr line.
pub(crate) fn refused_resume(
    f: &Fleet,
    host: &str,
    dir: &Path,
    now: &str,
    prompt: &Path,
) -> String {
    let out = f.on(
        host,
        dir,
        now,
        &["resume", "issue-1", "--output", prompt.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .next()
        .unwrap()
        .to_string()
}

/// The text of `refs/recode/hosts/<host>`'s heartbeat in `dir`.
fn heartbeat(env: &TestEnv, dir: &Path, host: &str) -> String {
    env.git(
        dir,
        &["show", &format!("refs/recode/hosts/{host}:heartbeat.json")],
    )
}

/// Host A's worker `issue-1`: a worktree with one pushed commit and one unpushed change,
/// its agent alive, spawned at `NOW`.
pub(crate) fn a_starts_issue_1(f: &Fleet, a: &Path, agent: &Agent) -> PathBuf {
    let env = &f.env;
    let wt = env.root().join("a-issue-1");
    env.git(
        a,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-1",
            wt.to_str().unwrap(),
        ],
    );
    std::fs::write(wt.join("feature.txt"), "pushed work\n").unwrap();
    env.git(&wt, &["add", "feature.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "feature: first part"]);
    env.git(&wt, &["push", "-q", "-u", "origin", "issue-1"]);
    f.ok(
        "hostA",
        a,
        &at(0),
        &[
            "record",
            "spawn",
            "issue-1",
            "--pid",
            &agent.pid(),
            "--cwd",
            wt.to_str().unwrap(),
        ],
    );
    wt
}

#[test]
fn recover_writes_this_hosts_heartbeat_only_when_it_changed_or_is_half_stale() {
    let f = Fleet::new();
    let a = f.clone("a");
    let agent = Agent::start();
    a_starts_issue_1(&f, &a, &agent);
    // A recover with nothing to do still writes the heartbeat.
    f.ok("hostA", &a, &at(MIN), &["recover", "--all"]);
    assert_eq!(
        heartbeat(&f.env, &a, "hostA"),
        format!(
            r#"{{"host":"hostA","ts":"{}.000Z","workers":{{"issue-1":{{"pid":{},"alive":true}}}}}}"#,
            at(MIN).trim_end_matches('Z'),
            agent.pid()
        )
    );
    let first = f.env.git(&a, &["rev-parse", "refs/recode/hosts/hostA"]);
    // Unchanged and younger than recode.stallAfter / 2 (15m): not rewritten.
    f.ok("hostA", &a, &at(10 * MIN), &["recover", "--all"]);
    assert_eq!(
        f.env.git(&a, &["rev-parse", "refs/recode/hosts/hostA"]),
        first
    );
    // Half-stale: rewritten, as a parentless commit (no history kept).
    f.ok("hostA", &a, &at(17 * MIN), &["recover", "--all"]);
    let second = f.env.git(&a, &["rev-parse", "refs/recode/hosts/hostA"]);
    assert_ne!(second, first);
    assert_eq!(f.env.git(&a, &["rev-list", "--count", &second]), "1");
    assert!(heartbeat(&f.env, &a, "hostA").contains(&format!(
        r#""ts":"{}.000Z""#,
        at(17 * MIN).trim_end_matches('Z')
    )));
    // Changed (a new worker here): rewritten at once, though young.
    f.env.git(&a, &["branch", "issue-2"]);
    f.ok(
        "hostA",
        &a,
        &at(18 * MIN),
        &["record", "spawn", "issue-2", "--cwd", "."],
    );
    f.ok("hostA", &a, &at(19 * MIN), &["recover", "--all"]);
    let text = heartbeat(&f.env, &a, "hostA");
    assert!(
        text.contains(r#""issue-2":{"pid":null,"alive":true}"#),
        "{text}"
    );
    // The agent died and its activity is older than recode.stallAfter: it says so.
    drop(agent);
    f.ok("hostA", &a, &at(50 * MIN), &["recover", "--all"]);
    assert!(heartbeat(&f.env, &a, "hostA").contains(r#""issue-1":{"pid":"#));
    assert!(heartbeat(&f.env, &a, "hostA").contains(r#""alive":false}"#));
}

#[test]
fn an_odd_hostname_becomes_a_valid_ref_and_a_side_branch_name() {
    let f = Fleet::new();
    let a = f.clone("a");
    f.ok("odd host:1~x", &a, &at(0), &["recover", "--all"]);
    let refs = f.env.git(
        &a,
        &["for-each-ref", "--format=%(refname)", "refs/recode/hosts"],
    );
    // Sanitized, plus a hash of the id: two ids that sanitize alike never share a ref.
    assert_eq!(refs, "refs/recode/hosts/odd-host-1-x-3b753928");
    assert_eq!(
        f.env.git(
            &a,
            &[
                "show",
                "refs/recode/hosts/odd-host-1-x-3b753928:heartbeat.json"
            ]
        ),
        format!(
            r#"{{"host":"odd host:1~x","ts":"{}.000Z","workers":{{}}}}"#,
            at(0).trim_end_matches('Z')
        )
    );
}

#[test]
fn sync_pushes_its_own_heartbeat_fetches_the_others_and_never_swaps_them() {
    let f = Fleet::new();
    let (a, b) = (f.clone("a"), f.clone("b"));
    f.ok("hostA", &a, &at(0), &["recover", "--all"]);
    f.ok("hostB", &b, &at(0), &["recover", "--all"]);
    let a_beat = f.env.git(&a, &["rev-parse", "refs/recode/hosts/hostA"]);
    let b_beat = f.env.git(&b, &["rev-parse", "refs/recode/hosts/hostB"]);
    f.ok("hostA", &a, &at(0), &["sync"]);
    f.ok("hostB", &b, &at(0), &["sync"]);
    assert_eq!(
        f.remote_ref("refs/recode/hosts/hostA"),
        Some(a_beat.clone())
    );
    assert_eq!(
        f.remote_ref("refs/recode/hosts/hostB"),
        Some(b_beat.clone())
    );
    assert_eq!(
        f.env.git(&b, &["rev-parse", "refs/recode/hosts/hostA"]),
        a_beat
    );
    // B's copy of A's heartbeat is edited locally, and the remote's B heartbeat replaced
    // by someone else: B's sync never pushes A's, and never takes its own from the remote.
    f.env
        .git(&b, &["update-ref", "refs/recode/hosts/hostA", &b_beat]);
    f.env
        .git(&f.bare, &["update-ref", "refs/recode/hosts/hostB", &a_beat]);
    f.ok("hostB", &b, &at(MIN), &["sync"]);
    assert_eq!(
        f.remote_ref("refs/recode/hosts/hostA"),
        Some(a_beat.clone())
    );
    assert_eq!(
        f.env.git(&b, &["rev-parse", "refs/recode/hosts/hostA"]),
        a_beat
    );
    assert_eq!(
        f.env.git(&b, &["rev-parse", "refs/recode/hosts/hostB"]),
        b_beat
    );
    assert_eq!(f.remote_ref("refs/recode/hosts/hostB"), Some(b_beat));
    // `report` on A shows both hosts' last heartbeats.
    f.ok("hostA", &a, &at(MIN), &["sync"]);
    let report: serde_json::Value =
        serde_json::from_str(&f.ok("hostA", &a, &at(2 * MIN), &["report", "--json"])).unwrap();
    let hosts: Vec<(String, String)> = report["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["host"].as_str().unwrap().to_string(),
                h["heartbeat"]["ts"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let ts = format!("{}.000Z", at(0).trim_end_matches('Z'));
    assert_eq!(
        hosts,
        vec![("hostA".into(), ts.clone()), ("hostB".into(), ts)]
    );
}

#[test]
fn b_waits_while_a_ticks_takes_over_after_its_silence_and_a_comes_back_to_a_side_branch() {
    let f = Fleet::new();
    let env = &f.env;
    let (a, b) = (f.clone("a"), f.clone("b"));
    let agent = Agent::start();
    let a_wt = a_starts_issue_1(&f, &a, &agent);
    // Uncommitted work on A that was never pushed.
    std::fs::write(a_wt.join("feature.txt"), "pushed work\nunpushed line\n").unwrap();
    std::fs::write(a_wt.join("notes.md"), "untracked notes\n").unwrap();
    f.ok("hostA", &a, &at(MIN), &["recover", "--all"]);
    f.ok("hostA", &a, &at(MIN), &["sync"]);

    // 45 minutes after the spawn, A alive and ticking: B waits, naming A.
    env.git(&b, &["fetch", "-q", "origin"]);
    f.ok("hostB", &b, &at(45 * MIN), &["sync"]);
    let w = f.worker("hostB", &b, &at(45 * MIN), "issue-1");
    assert_eq!(
        (w["liveness"].as_str(), w["action"].as_str()),
        (Some("running"), Some("wait")),
        "{w}"
    );
    assert_eq!(
        w["reason"],
        "worker of host hostA: its heartbeat 0s ago says it is alive; never acted on here"
    );
    assert_eq!(w["host"], "hostA");
    let table = f.ok(
        "hostB",
        &b,
        &at(45 * MIN),
        &["status", "--all", "--offline"],
    );
    let row = table.lines().find(|l| l.contains("issue-1")).unwrap();
    assert!(row.ends_with("on hostA"), "{table}");
    let refused = f.on(
        "hostB",
        &b,
        &at(45 * MIN),
        &["resume", "issue-1", "--output", "/dev/null"],
    );
    assert_eq!(refused.status.code(), Some(3), "{refused:?}");
    // A's agent pushes a second part (B does not fetch it), then commits a third part it
    // never pushes; the uncommitted work stays. A ticks at 1h; B at 1h50m sees A's new
    // heartbeat (SPEC 1.3: its silence starts when B first sees it, at 1h50m) and waits;
    // at 1h59m it still waits (9m).
    std::fs::write(a_wt.join("part2.txt"), "second part\n").unwrap();
    env.git(&a_wt, &["add", "part2.txt"]);
    env.git(&a_wt, &["commit", "-q", "-m", "feature: second part"]);
    env.git(&a_wt, &["push", "-q", "origin", "issue-1"]);
    std::fs::write(a_wt.join("part3.txt"), "third part\n").unwrap();
    env.git(&a_wt, &["add", "part3.txt"]);
    env.git(
        &a_wt,
        &["commit", "-q", "-m", "feature: third part, never pushed"],
    );
    let a_local = env.git(&a_wt, &["rev-parse", "HEAD"]);
    f.ok("hostA", &a, &at(60 * MIN), &["recover", "--all"]);
    f.ok("hostA", &a, &at(60 * MIN), &["sync"]);
    f.ok("hostB", &b, &at(110 * MIN), &["sync"]);
    let w = f.worker("hostB", &b, &at(119 * MIN), "issue-1");
    assert_eq!(w["action"], "wait", "{w}");
    assert_eq!(
        w["reason"],
        "worker of host hostA: its heartbeat 9m ago says it is alive; never acted on here"
    );
    let remote_tip = f.remote_ref("refs/heads/issue-1").unwrap();

    // A is silent from 1h on; B first saw that heartbeat at 1h50m. At 3h51m (2h01m of
    // silence on B's clock) B takes over.
    let late = at(231 * MIN);
    f.ok("hostB", &b, &late, &["sync"]);
    let w = f.worker("hostB", &b, &late, "issue-1");
    assert_eq!(
        (
            w["liveness"].as_str(),
            w["state"].as_str(),
            w["action"].as_str()
        ),
        (Some("stalled"), Some("half-done"), Some("resume")),
        "{w}"
    );
    let prompt = env.root().join("prompt.md");
    f.ok(
        "hostB",
        &b,
        &late,
        &["resume", "issue-1", "--output", prompt.to_str().unwrap()],
    );
    let text = std::fs::read_to_string(&prompt).unwrap();
    assert!(
        text.contains(&format!(
            "- This work was on host `hostA`, in `{}`, which has been silent since {}.",
            a_wt.display(),
            at(110 * MIN)
        )),
        "{text}"
    );
    assert!(
        text.contains("Uncommitted work may remain on `hostA`"),
        "{text}"
    );
    assert_eq!(
        f.kinds(&b, "issue-1")
            .iter()
            .rev()
            .take(2)
            .collect::<Vec<_>>(),
        vec!["resume", "takeover"]
    );
    let log = env.ok(&b, &["log", "issue-1", "--json"]);
    let takeover: serde_json::Value =
        serde_json::from_str(log.lines().find(|l| l.contains("\"takeover\"")).unwrap()).unwrap();
    assert_eq!(
        (takeover["from_host"].as_str(), takeover["host"].as_str()),
        (Some("hostA"), Some("hostB"))
    );
    // The takeover reached the remote at once; B's worktree starts from what A pushed.
    let b_wt = env.root().join("b.worktrees").join("issue-1");
    assert_eq!(env.git(&b_wt, &["rev-parse", "HEAD"]), remote_tip);
    // B's agent at work: B's heartbeat says so.
    f.ok("hostB", &b, &at(232 * MIN), &["recover", "--all"]);
    f.ok("hostB", &b, &at(232 * MIN), &["sync"]);

    // A comes back at 4h: it never pushes onto issue-1; its work goes to the side branch.
    let before = env.work(&a);
    let comeback = at(240 * MIN);
    f.ok("hostA", &a, &comeback, &["sync"]);
    let w = f.worker("hostA", &a, &comeback, "issue-1");
    assert_eq!(
        (w["state"].as_str(), w["action"].as_str()),
        (Some("needs-human"), Some("escalate")),
        "{w}"
    );
    let reason = w["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(&format!(
            "taken over by host hostB at {late} while this host hostA was silent"
        )),
        "{reason}"
    );
    f.ok("hostA", &a, &comeback, &["recover", "issue-1"]);
    assert_eq!(
        f.remote_ref("refs/heads/issue-1"),
        Some(remote_tip.clone()),
        "never pushed onto the branch"
    );
    let side = "recode/takeover/issue-1/hostA";
    let side_tip = f
        .remote_ref(&format!("refs/heads/{side}"))
        .expect("side branch pushed");
    assert_eq!(env.git(&a, &["rev-parse", side]), side_tip);
    assert_eq!(
        env.git(&a, &["show", &format!("{side}:feature.txt")]),
        "pushed work\nunpushed line"
    );
    assert_eq!(
        env.git(&a, &["show", &format!("{side}:notes.md")]),
        "untracked notes"
    );
    assert_eq!(env.git(&a, &["rev-parse", &format!("{side}^")]), a_local);
    assert_eq!(
        env.git(&a, &["show", &format!("{side}:part3.txt")]),
        "third part"
    );
    // A's worktree is untouched (still dirty, index as it was) and nothing was lost.
    assert_eq!(
        env.git(&a_wt, &["status", "--porcelain"]),
        " M feature.txt\n?? notes.md"
    );
    env.assert_nothing_lost(&a, &before);
    assert!(
        !f.kinds(&a, "issue-1").contains(&"escalated".to_string()),
        "no task-wide escalation"
    );
    // Settled: the next comeback tick adds nothing.
    let kinds = f.kinds(&a, "issue-1").len();
    f.ok("hostA", &a, &at(250 * MIN), &["recover", "issue-1"]);
    assert_eq!(f.kinds(&a, "issue-1").len(), kinds);
    // B, after A's comeback synced: its own worker, running, never needs-human.
    f.ok("hostA", &a, &at(250 * MIN), &["sync"]);
    let before_b = env.work(&b);
    f.ok("hostB", &b, &at(251 * MIN), &["sync"]);
    let w = f.worker("hostB", &b, &at(251 * MIN), "issue-1");
    assert_eq!(
        (w["liveness"].as_str(), w["action"].as_str()),
        (Some("running"), Some("wait")),
        "{w}"
    );
    env.assert_nothing_lost(&b, &before_b);
}

#[test]
fn of_two_hosts_that_both_see_a_third_silent_only_the_first_claim_takes_over() {
    let f = Fleet::new();
    let env = &f.env;
    let (a, b, c) = (f.clone("a"), f.clone("b"), f.clone("c"));
    let agent = Agent::start();
    a_starts_issue_1(&f, &a, &agent);
    f.ok("hostA", &a, &at(MIN), &["recover", "--all"]);
    f.ok("hostA", &a, &at(MIN), &["sync"]);
    // B and C first see A's heartbeat and attempt at 2m; A is silent past
    // recode.hostTimeout on their clocks; both see it so.
    for (host, dir) in [("hostB", &b), ("hostC", &c)] {
        f.ok(host, dir, &at(2 * MIN), &["sync"]);
        f.worker(host, dir, &at(2 * MIN), "issue-1");
    }
    let late = at(181 * MIN);
    for (host, dir) in [("hostB", &b), ("hostC", &c)] {
        env.git(dir, &["fetch", "-q", "origin"]);
        f.ok(host, dir, &late, &["sync"]);
        assert_eq!(f.worker(host, dir, &late, "issue-1")["action"], "resume");
    }
    // B's takeover is ledgered but its ledger push does not reach the remote (the race
    // window: C syncs before B's push lands).
    f.hold_notes();
    let prompt = env.root().join("prompt.md");
    f.ok(
        "hostB",
        &b,
        &late,
        &["resume", "issue-1", "--output", prompt.to_str().unwrap()],
    );
    assert_eq!(
        f.kinds(&b, "issue-1")
            .iter()
            .rev()
            .take(2)
            .collect::<Vec<_>>(),
        vec!["resume", "takeover"]
    );
    // C syncs, sees no takeover in the ledger, and still does not take it over: B's claim
    // on the remote holds.
    assert_eq!(
        refused_resume(&f, "hostC", &c, &late, &prompt),
        "error: issue-1 was taken over from hostA by another host first (its claim is on origin): nothing ledgered"
    );
    assert!(
        !f.kinds(&c, "issue-1")
            .iter()
            .any(|k| k == "takeover" || k == "resume"),
        "{:?}",
        f.kinds(&c, "issue-1")
    );
    // The remote takes notes again: B's ledger reaches it; one claim ref, B's.
    f.release_notes();
    f.ok("hostB", &b, &late, &["sync"]);
    let claims = env.git(
        &f.bare,
        &["for-each-ref", "--format=%(refname)", "refs/recode/claims/"],
    );
    assert_eq!(claims.lines().count(), 1, "{claims}");
}

/// SPEC 1.2 "Several machines": a host whose ledger is behind (its `sync` failed or was
/// killed) still sees its own stalled worker as `resume`, though another host took it
/// over meanwhile. Where other hosts share the remote, its resume syncs the ledger first,
/// sees the takeover, and refuses: never two agents on one task. (Had the sync not shown
/// it, the other host's claim on the remote would refuse it: `hosts::claim`'s tests.)
#[test]
fn a_host_whose_ledger_is_behind_never_resumes_a_worker_taken_over_meanwhile() {
    let f = Fleet::new();
    let env = &f.env;
    let (a, b) = (f.clone("a"), f.clone("b"));
    let agent = Agent::start();
    a_starts_issue_1(&f, &a, &agent);
    // Both hosts tick: each learns of the other's heartbeat.
    f.ok("hostA", &a, &at(MIN), &["recover", "--all"]);
    f.ok("hostA", &a, &at(MIN), &["sync"]);
    f.ok("hostB", &b, &at(MIN), &["recover", "--all"]);
    f.ok("hostB", &b, &at(MIN), &["sync"]);
    f.ok("hostA", &a, &at(2 * MIN), &["sync"]);
    f.ok("hostB", &b, &at(2 * MIN), &["sync"]);
    f.worker("hostB", &b, &at(2 * MIN), "issue-1");
    // A goes silent, its agent dies with it; B takes the worker over past hostTimeout.
    drop(agent);
    let late = at(181 * MIN);
    env.git(&b, &["fetch", "-q", "origin"]);
    f.ok("hostB", &b, &late, &["sync"]);
    let prompt = env.root().join("prompt.md");
    f.ok(
        "hostB",
        &b,
        &late,
        &["resume", "issue-1", "--output", prompt.to_str().unwrap()],
    );
    // A comes back, but its sync is lost: its ledger still says the attempt is its own.
    let back = at(182 * MIN);
    assert_eq!(f.worker("hostA", &a, &back, "issue-1")["action"], "resume");
    let before = f.kinds(&a, "issue-1");
    assert_eq!(
        refused_resume(&f, "hostA", &a, &back, &prompt),
        "error: issue-1 is running: taken over by host hostB at 2026-11-20T15:01:00Z while this host hostA was silent: nothing here is pushed onto issue-1; `git recode recover issue-1` saves this host's work on recode/takeover/issue-1/hostA; compare it with issue-1, then remove this worktree"
    );
    let synced: Vec<_> = f.kinds(&a, "issue-1");
    assert_eq!(
        synced[..before.len()],
        before[..],
        "nothing of A's own ledgered"
    );
    assert_eq!(
        synced[before.len()..],
        ["takeover", "resume", "escalated"],
        "B's takeover, synced, then A's comeback for a human"
    );
    // Once A syncs it sees B's takeover (the comeback): a human compares A's leftovers,
    // and the worker is never offered to A again.
    f.ok("hostA", &a, &back, &["sync"]);
    let w = f.worker("hostA", &a, &back, "issue-1");
    assert_eq!(
        (&w["state"], &w["action"], &w["host"]),
        (&"needs-human".into(), &"escalate".into(), &"hostB".into()),
        "{w}"
    );
}

/// The ref of `branch`'s claim (git's blob id of `recode-claim <branch>`).
pub(crate) fn claim_ref(branch: &str) -> String {
    let out = std::process::Command::new("git")
        .args(["hash-object", "--stdin"])
        .stdin_text(&format!("recode-claim {branch}"));
    format!("refs/recode/claims/{out}")
}

/// Feed `text` to a command's stdin; its trimmed stdout.
pub(crate) trait StdinText {
    fn stdin_text(&mut self, text: &str) -> String;
}

impl StdinText for std::process::Command {
    fn stdin_text(&mut self, text: &str) -> String {
        use std::io::Write;
        let mut child = self
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}
