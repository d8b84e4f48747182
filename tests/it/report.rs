//! `report`: loop health from the ledger alone — on the demo repository, and on a ledger
//! synced from two clones on two hosts into a third clone that has no worker at all.

use std::path::{Path, PathBuf};

use crate::common::{NOW, TestEnv};

/// `spawn` lines written with plain git carry a chosen host (`record spawn` writes this
/// machine's hostname).
fn write_note(env: &TestEnv, dir: &Path, task: &str, lines: &[serde_json::Value]) {
    let anchor_file = env.root().join(format!("anchor-text-{task}"));
    std::fs::write(&anchor_file, format!("recode-task {task}\n")).unwrap();
    let anchor = env.git(dir, &["hash-object", "-w", anchor_file.to_str().unwrap()]);
    let note = env.root().join(format!("note-{task}"));
    let text: String = lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut l = l.clone();
            let m = l.as_object_mut().unwrap();
            m.insert("v".into(), 1.into());
            m.insert("task".into(), task.into());
            m.insert("seq".into(), (i as u64 + 1).into());
            format!("{}\n", serde_json::to_string(&l).unwrap())
        })
        .collect();
    std::fs::write(&note, text).unwrap();
    env.git(
        dir,
        &[
            "notes",
            "--ref=recode",
            "add",
            "-f",
            "-F",
            note.to_str().unwrap(),
            &anchor,
        ],
    );
}

fn spawn(ts: &str, branch: &str, host: &str) -> serde_json::Value {
    serde_json::json!({"kind": "spawn", "ts": ts, "branch": branch, "attempt": 1,
        "cwd": format!("/w/{branch}"), "host": host, "agent": "claude"})
}

/// What `recover` writes each tick about a worker.
fn classified(ts: &str, branch: &str) -> serde_json::Value {
    serde_json::json!({"kind": "classified", "ts": ts, "branch": branch,
        "state": "half-done", "action": "resume", "reason": "1 commit ahead; gate failed on the head"})
}

/// `record` at a pinned clock.
fn record_at(env: &TestEnv, dir: &Path, now: &str, args: &[&str]) {
    let out = env
        .cmd(dir)
        .env("RECODE_NOW", now)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Two clones of one remote, each with its host's workers, synced; then a third clone
/// that only syncs the ledger (no worker branch, no worktree). Returns the third.
fn two_hosts(env: &TestEnv) -> PathBuf {
    let seed = env.repo("seed");
    let bare = env.root().join("origin.git");
    env.git(
        &env.root(),
        &["init", "-q", "--bare", "-b", "main", bare.to_str().unwrap()],
    );
    env.git(&seed, &["push", "-q", bare.to_str().unwrap(), "main"]);
    let clone = |name: &str| {
        let d = env.root().join(name);
        env.git(
            &env.root(),
            &["clone", "-q", bare.to_str().unwrap(), d.to_str().unwrap()],
        );
        d
    };
    let (a, b) = (clone("a"), clone("b"));
    // Host box-a: a worker whose agent could not start (needs-human), one on a usage limit.
    write_note(
        env,
        &a,
        "1",
        &[spawn("2026-11-20T10:00:00.000Z", "issue-1-login", "box-a")],
    );
    record_at(
        env,
        &a,
        "2026-11-20T10:02:00Z",
        &["record", "exit", "issue-1-login", "--rc", "127"],
    );
    write_note(
        env,
        &a,
        "2",
        &[spawn("2026-11-20T10:30:00.000Z", "issue-2-limit", "box-a")],
    );
    let msg = env.root().join("limit.txt");
    std::fs::write(&msg, "Claude usage limit reached. Try again in 2 hours.\n").unwrap();
    record_at(
        env,
        &a,
        "2026-11-20T11:00:00Z",
        &[
            "record",
            "exit",
            "issue-2-limit",
            "--rc",
            "1",
            "--message-file",
            msg.to_str().unwrap(),
        ],
    );
    env.ok(&a, &["sync"]);
    // (Heads of the repositories' object format: 40 hex digits, 64 with SHA-256.)
    let hex = env.hash_kind().len_in_hex();
    // Host box-b: a blocked worker and one that finished, with its loop's recover runs
    // every 5 minutes, down from 10:10 to 11:00, and silent since 11:05.
    write_note(
        env,
        &b,
        "3",
        &[
            spawn("2026-11-20T09:00:00.000Z", "issue-3-blocked", "box-b"),
            serde_json::json!({"kind": "exit", "ts": "2026-11-20T09:30:00.000Z", "branch": "issue-3-blocked",
                "rc": 0, "outcome": "blocked", "blocker": "#12"}),
        ],
    );
    write_note(
        env,
        &b,
        "4",
        &[
            spawn("2026-11-20T09:00:00.000Z", "issue-4-done", "box-b"),
            serde_json::json!({"kind": "milestone", "ts": "2026-11-20T09:20:00.000Z", "branch": "issue-4-done",
                "phase": "tests-green", "head": "a".repeat(hex)}),
            serde_json::json!({"kind": "exit", "ts": "2026-11-20T09:40:00.000Z", "branch": "issue-4-done",
                "rc": 0, "outcome": "success", "message": "Done: tests green."}),
            classified("2026-11-20T10:00:00.000Z", "issue-4-done"),
            classified("2026-11-20T10:05:00.000Z", "issue-4-done"),
            classified("2026-11-20T10:10:00.000Z", "issue-4-done"),
            classified("2026-11-20T11:00:00.000Z", "issue-4-done"),
            serde_json::json!({"kind": "wip", "ts": "2026-11-20T11:05:00.000Z", "branch": "issue-4-done",
                "head": "b".repeat(hex), "files": 2, "pushed": true}),
            classified("2026-11-20T11:05:10.000Z", "issue-4-done"),
        ],
    );
    env.ok(&b, &["sync"]);
    env.ok(&a, &["sync"]);
    let c = clone("c");
    env.ok(&c, &["sync"]);
    // box-b's heartbeat (SPEC 1.2): a commit whose tree holds one JSON blob.
    let beat = env.root().join("beat.json");
    std::fs::write(
        &beat,
        r#"{"host":"box-b","ts":"2026-11-20T11:05:00Z","workers":{"issue-3-blocked":{"pid":7,"alive":false},"issue-4-done":{"pid":9,"alive":true}}}"#,
    )
    .unwrap();
    let blob = env.git(&c, &["hash-object", "-w", beat.to_str().unwrap()]);
    let mut mk = env.git_cmd(&c);
    mk.args(["mktree"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = mk.spawn().unwrap();
    use std::io::Write as _;
    writeln!(
        child.stdin.take().unwrap(),
        "100644 blob {blob}\theartbeat.json"
    )
    .unwrap();
    let tree = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    let commit = env.git(&c, &["commit-tree", tree.trim(), "-m", "heartbeat"]);
    env.git(&c, &["update-ref", "refs/recode/hosts/box-b", &commit]);
    c
}

#[test]
fn a_clone_with_only_the_synced_ledger_shows_both_hosts_the_queue_first_and_the_gaps() {
    let env = TestEnv::new();
    let c = two_hosts(&env);
    assert_eq!(
        env.git(&c, &["branch", "--list", "issue-*"]),
        "",
        "no worker branch here"
    );
    let out = env.run(&c, &["report", "--color", "always"]);
    // --color always on a pipe: colour is on; the plain text below is the same without it.
    assert!(
        out.contains("\x1b[1m\x1b[31mNEEDS A HUMAN (1)\x1b[0m"),
        "{out}"
    );
    let out = env.run(&c, &["report"]);
    insta::assert_snapshot!(out, @"
    git recode report: 2026-11-20 12:00 UTC, whole ledger
    4 tasks, 1 need a human, 2 waiting, 5 recover runs, 2 hosts

    NEEDS A HUMAN (1)
      issue-1-login needs-human 118m ago on box-a
        why: the last attempt ended needs-human
        1. fix the agent's login, permissions or billing on box-a
        2. git recode record clear issue-1-login

    WAITING (2)
      issue-2-limit waits on a reset until 2026-11-20 13:00 (in 60m)
      issue-3-blocked waits on blocker #12 since 2026-11-20 09:30
        lift: git recode record unblock issue-3-blocked

    TIMELINE                    09:00                                  12:00
         1 issue-1-login                      =H                            
             #1 claude on box-a 10:00–10:02 needs-human
         2 issue-2-limit                              =======T              
             #1 claude on box-a 10:30–11:00 transient: Claude usage limit reached. …
         3 issue-3-blocked      =======B                                    
             #1 claude on box-b 09:00–09:30 blocked
         4 issue-4-done         =====m====S                   w             
             #1 claude on box-b 09:00–09:40 success: Done: tests green.
      lane: = attempt  S success  F failed  T transient  H needs-human  B blocked
            > no exit yet  m milestone  w WIP  P published  D deleted  E escalated

    TICKS (recover runs)
      5 runs, every 5m (median); last 2026-11-20 11:05 (54m ago)
      gap: 2026-11-20 10:10 to 2026-11-20 11:00 (50m): the loop was down
      gap: no run since 2026-11-20 11:05 (54m): the loop is down

    OUTCOMES PER DAY
      day          success  failed  transient  needs-human  blocked
      2026-11-20        1       0          1            1        1

    HOSTS
      host                 workers  attempts  last attempt      heartbeat
      box-a                      2         2  2026-11-20 10:30  none
      box-b                      2         2  2026-11-20 09:00  55m ago (1/2 alive)
    --- stderr ---
    [exit status: 0]
    ");
    let _ = NOW;
}

#[test]
fn json_since_one_hour_keeps_the_queue_and_cuts_the_history() {
    let env = TestEnv::new();
    let c = two_hosts(&env);
    let out = env.ok(&c, &["report", "--json", "--since", "1h"]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["schema"], 1);
    assert_eq!(doc["since"], "2026-11-20T11:00:00Z");
    // The queue and the waiting list are the state now, whatever the window.
    let queue: Vec<(&str, &str)> = doc["queue"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| (q["branch"].as_str().unwrap(), q["cause"].as_str().unwrap()))
        .collect();
    assert_eq!(queue, [("issue-1-login", "needs-human")]);
    assert_eq!(doc["queue"][0]["worktree"], "/w/issue-1-login");
    let waiting: Vec<(&str, &str)> = doc["waiting"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["branch"].as_str().unwrap(), w["on"].as_str().unwrap()))
        .collect();
    assert_eq!(
        waiting,
        [("issue-2-limit", "reset"), ("issue-3-blocked", "blocker")]
    );
    // History: the attempt that ended at 11:00 and the WIP commit at 11:05 only.
    assert_eq!(
        doc["tasks"],
        serde_json::json!([
            {"task": "2", "branches": ["issue-2-limit"], "hosts": ["box-a"], "marks": [],
             "attempts": [{"attempt": 1, "started_by": "spawn", "branch": "issue-2-limit",
                "host": "box-a", "agent": "claude", "start": "2026-11-20T10:30:00Z",
                "end": "2026-11-20T11:00:00Z", "outcome": "transient", "rc": 1,
                "message": "Claude usage limit reached. Try again in 2 hours."}]},
            {"task": "4", "branches": ["issue-4-done"], "hosts": ["box-b"], "attempts": [],
             "marks": [{"ts": "2026-11-20T11:05:00Z", "kind": "wip", "branch": "issue-4-done",
                "detail": "WIP commit, 2 files, pushed"}]}
        ])
    );
    assert_eq!(
        doc["ticks"],
        serde_json::json!({
            "runs": [
                {"start": "2026-11-20T11:00:00Z", "end": "2026-11-20T11:00:00Z", "events": 1, "tasks": 1},
                {"start": "2026-11-20T11:05:00Z", "end": "2026-11-20T11:05:10Z", "events": 2, "tasks": 1}
            ],
            "period_seconds": 300,
            "gaps": [{"from": "2026-11-20T11:05:10Z", "to": null, "seconds": 3290}]
        })
    );
    assert_eq!(
        doc["days"],
        serde_json::json!([{"date": "2026-11-20", "outcomes":
            {"blocked": 0, "failed": 0, "needs-human": 0, "success": 0, "transient": 1}}])
    );
    assert_eq!(
        doc["hosts"][1],
        serde_json::json!({"host": "box-b", "workers": 2, "attempts": 2,
            "last_attempt": "2026-11-20T09:00:00Z",
            "heartbeat": {"ts": "2026-11-20T11:05:00Z", "workers": 2, "alive": 1}})
    );
}

#[test]
fn bad_since_is_bad_usage_and_an_unwritable_page_is_an_error() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    insta::assert_snapshot!(env.run(&repo, &["report", "--since", "soon"]), @"
    --- stderr ---
    error: --since 'soon' is not a duration (a number followed by s, m, h or d, like 30m)
    [exit status: 2]
    ");
    let out = env.run(&repo, &["report", "--html", "/nonexistent-dir/report.html"]);
    assert!(
        out.ends_with("[exit status: 1]\n")
            && out.contains("cannot write /nonexistent-dir/report.html"),
        "{out}"
    );
    // No ledger at all: a report that says so, exit 0.
    let out = env.run(&repo, &["report"]);
    assert!(out.starts_with("git recode report: 2026-11-20 12:00 UTC, whole ledger\n0 tasks, 0 need a human, 0 waiting, 0 recover runs, 0 hosts\n"), "{out}");
    assert!(out.ends_with("--- stderr ---\n[exit status: 0]\n"), "{out}");
}

/// The demo repository after one `recover` tick at `NOW` on the workers it deletes and
/// escalates (the others are left as the fixture made them).
fn demo_after_a_tick(env: &TestEnv) -> PathBuf {
    let repo = env.demo();
    env.ok(
        &repo,
        &[
            "recover",
            "issue-1-empty",
            "issue-5-rebase",
            "issue-9-capped",
        ],
    );
    repo
}

/// This host's id (`recode.hostId`, generated on first use), as `record spawn` writes it.
fn this_host(env: &TestEnv, repo: &Path) -> String {
    env.git(repo, &["config", "recode.hostId"])
}

/// Every branch the ledger names (`log --json`, less the milestones it shows with `seq` 0:
/// still only in commit trailers, not ledgered yet).
fn ledgered_branches(env: &TestEnv, repo: &Path) -> std::collections::BTreeSet<String> {
    env.ok(repo, &["log", "--json"])
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["seq"] != 0)
        .filter_map(|e| e["branch"].as_str().map(str::to_string))
        .collect()
}

const LATER_BY_10M: &str = "2026-11-20T12:10:00Z";

#[test]
fn the_demo_report_puts_the_escalated_workers_first_with_what_lifts_them() {
    let env = TestEnv::new();
    let repo = demo_after_a_tick(&env);
    let root = env.root().display().to_string();
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", LATER_BY_10M)
        .args(["report", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let host = this_host(&env, &repo);
    let wt = |n: u32| format!("{root}/demo/wt/{n}");
    assert_eq!(
        doc["queue"],
        serde_json::json!([
            {"task": "5", "branch": "issue-5-rebase", "host": host, "since": "2026-11-20T12:00:00Z",
             "cause": "escalated", "why": format!("a rebase is in progress in {}", wt(5)),
             "lift": [format!("finish or abort the rebase in {} (git -C {} status)", wt(5), wt(5)),
                      "git recode record clear issue-5-rebase"],
             "worktree": wt(5), "pr_url": null},
            {"task": "9", "branch": "issue-9-capped", "host": host, "since": "2026-11-20T12:00:00Z",
             "cause": "escalated",
             "why": "3 counted attempts reached recode.maxAttempts (3) without a passing gate on the head",
             "lift": ["read why the attempts failed (git recode log issue-9-capped), fix the task or its prompt",
                      "git recode record clear issue-9-capped"],
             "worktree": wt(9), "pr_url": null}
        ])
    );
    assert_eq!(doc["waiting"], serde_json::json!([]));
    // The deleted worker is history, not in the queue: its timeline ends with the delete.
    let t1 = &doc["tasks"][0];
    assert_eq!(t1["task"], "1");
    assert_eq!(t1["attempts"][0]["outcome"], "failed");
    assert_eq!(t1["marks"][0]["kind"], "deleted");
    assert_eq!(doc["ticks"]["runs"].as_array().unwrap().len(), 1);
    assert_eq!(doc["ticks"]["runs"][0]["start"], "2026-11-20T12:00:00Z");
    assert_eq!(doc["ticks"]["runs"][0]["tasks"], 3);
    assert_eq!(doc["hosts"][0]["host"], host.as_str());
    assert_eq!(doc["hosts"][0]["attempts"], 10);

    // The text: the queue right after the counts, every ledgered worker named, 80 columns.
    let text = env
        .cmd(&repo)
        .env("RECODE_NOW", LATER_BY_10M)
        .arg("report")
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[1],
        "8 tasks, 2 need a human, 0 waiting, 1 recover run, 1 host"
    );
    assert_eq!(lines[3], "NEEDS A HUMAN (2)");
    assert!(lines[4].starts_with(&format!("  issue-5-rebase escalated 10m ago on {host}")));
    assert!(
        text.contains("\n    2. git recode record clear issue-5-rebase\n"),
        "{text}"
    );
    assert!(
        text.contains("\n    2. git recode record clear issue-9-capped\n"),
        "{text}"
    );
    for b in ledgered_branches(&env, &repo) {
        assert!(text.contains(&b), "{b} missing from:\n{text}");
    }
    for l in &lines {
        assert!(
            l.chars().count() <= 80 || l.contains(&root),
            "wider than 80: {l:?}"
        );
    }
    assert!(!text.contains('\x1b'), "no colour on a pipe");
}

/// The browser on `PATH` (`.ci/run` installs Debian's `chromium`).
fn chromium() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
        .find(|p| p.is_file())
        .expect("the browser test needs Chromium on PATH: apt-get install -y chromium")
}

/// Headless Chromium renders `page` to a PNG at 1200x900 (flags that work as root in a
/// container, with no network and no first-run work).
fn screenshot(env: &TestEnv, page: &Path, png: &Path) {
    use wait_timeout::ChildExt;
    let profile = env.root().join("chromium-profile");
    let mut child = std::process::Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg("--window-size=1200,900")
        .arg(format!("file://{}", page.display()))
        .env("HOME", &env.home)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let status = match child
        .wait_timeout(std::time::Duration::from_secs(90))
        .unwrap()
    {
        Some(s) => s,
        None => {
            let _ = child.kill();
            panic!("chromium did not finish within 90 s");
        }
    };
    assert!(status.success(), "chromium failed: {status}");
}

#[test]
fn the_demo_page_is_self_contained_and_renders_in_chromium() {
    let env = TestEnv::new();
    let repo = demo_after_a_tick(&env);
    let page = env.root().join("report.html");
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", LATER_BY_10M)
        .args(["report", "--html", page.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("wrote {}\n", page.display())
    );
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: no script, no external URL, stylesheet or font.
    for banned in [
        "http://", "https://", "<script", "<link", "@import", "url(", "src=",
    ] {
        assert!(!html.contains(banned), "the page holds {banned:?}");
    }
    // The queue first, then the rest; every ledgered worker named.
    let first = html.find("<section").unwrap();
    assert!(html[first..].starts_with("<section id=\"queue\">"));
    let waiting = html.find("<section id=\"waiting\">").unwrap();
    for b in ["issue-5-rebase", "issue-9-capped"] {
        let at = html.find(b).unwrap();
        assert!(at > first && at < waiting, "{b} is not in the queue");
    }
    assert!(html[first..waiting].contains("<code>git recode record clear issue-5-rebase</code>"));
    for b in ledgered_branches(&env, &repo) {
        assert!(html.contains(&b), "{b} missing from the page");
    }
    // One SVG bar per attempt (10 in the demo), coloured by outcome.
    assert_eq!(html.matches("<rect class=\"failed\"").count(), 6);
    assert_eq!(html.matches("<rect class=\"open\"").count(), 2);

    let png_path = env.root().join("report.png");
    screenshot(&env, &page, &png_path);
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut buf).unwrap();
    assert_eq!((frame.width, frame.height), (1200, 900));
    let px = frame.color_type.samples();
    let pixels: Vec<&[u8]> = buf[..frame.buffer_size()].chunks(px).collect();
    let colours: std::collections::BTreeSet<&[u8]> = pixels.iter().copied().collect();
    let ink = pixels
        .iter()
        .filter(|p| p[..3].iter().any(|&c| c < 200))
        .count();
    assert!(
        colours.len() > 50,
        "the screenshot has {} colours: blank?",
        colours.len()
    );
    assert!(
        ink * 100 > pixels.len(),
        "under 1% of the screenshot is ink: {ink} pixels"
    );
    // Red (failed attempts, the queue's border) is on screen.
    assert!(
        pixels.iter().any(|p| p[0] > 180 && p[1] < 80 && p[2] < 80),
        "no red pixel: the queue or the failed attempts did not render"
    );
}

#[test]
fn untrusted_messages_are_escaped_in_the_page_and_in_the_text() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    write_note(
        &env,
        &repo,
        "5",
        &[spawn("2026-11-20T11:00:00.000Z", "issue-5-x", "box")],
    );
    let msg = env.root().join("msg.txt");
    std::fs::write(&msg, "<script>alert(1)</script> \x1b[2J<img src=x> done\n").unwrap();
    record_at(
        &env,
        &repo,
        "2026-11-20T11:30:00Z",
        &[
            "record",
            "exit",
            "issue-5-x",
            "--rc",
            "0",
            "--message-file",
            msg.to_str().unwrap(),
        ],
    );
    let page = env.root().join("p.html");
    let text = env.ok(&repo, &["report", "--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains("<script") && !html.contains("<img"),
        "unescaped"
    );
    assert!(
        html.contains(
            "&lt;script&gt;alert(1)&lt;&#x2f;script&gt; \\u{1b}[2J&lt;img src=x&gt; done"
        ),
        "{html}"
    );
    assert!(
        !text.contains('\x1b'),
        "an escape reached the terminal: {text}"
    );
    assert!(
        text.contains("success: <script>alert(1)</script> \\u{1b}"),
        "{text}"
    );
}

/// SPEC 1.3: with no forge (a bare remote, no token) `recover` pushes a publishable worker
/// and no one opens its request: the queue names it (`open-request`), and the command that
/// mails it names the base and the remote's URL, its credentials left out.
#[test]
fn a_worker_pushed_with_no_forge_waits_in_the_queue_with_its_base_and_remote() {
    let env = TestEnv::new();
    let (repo, origin) = env.repo_with_origin();
    // The remote's URL as configured carries a password; git rewrites it to the bare
    // repository (`insteadOf`), so the push is real and stays on this machine.
    let url = "https://bot:s3cret@git.example/acme/widget.git";
    env.git(
        &repo,
        &[
            "config",
            &format!("url.{}.insteadOf", origin.display()),
            url,
        ],
    );
    env.git(&repo, &["remote", "set-url", "origin", url]);
    let wt = crate::settle::dead_worker(&env, &repo, "wt7", "issue-7");
    std::fs::write(wt.join("f.txt"), "done\n").unwrap();
    env.git(&wt, &["add", "f.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "done"]);
    env.ok(&wt, &["record", "gate", "issue-7", "--passed"]);
    let head = env.git(&wt, &["rev-parse", "HEAD"]);
    let (code, doc, stderr) = crate::settle::recover(&env, &repo, &["--all"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(crate::settle::results(&doc)[0].2, "held", "{doc}");
    assert_eq!(env.git(&origin, &["rev-parse", "issue-7"]), head, "pushed");

    let report = |args: &[&str]| env.ok_at(&repo, "2030-01-01T02:00:00Z", args);
    let why = format!(
        "pushed {}: no forge can open its request; open it by hand",
        &head[..12]
    );
    let host = this_host(&env, &repo);
    let text = report(&["report"]);
    let queue = text
        .split("\n\n")
        .find(|s| s.starts_with("NEEDS A HUMAN"))
        .unwrap_or_else(|| panic!("no queue in:\n{text}"));
    assert_eq!(
        queue,
        format!(
            "NEEDS A HUMAN (1)\n  issue-7 open-request 2h ago on {host}\n    why: {why}\n    \
             1. open a pull request from issue-7 into main (or mail it: git request-pull\n       \
             main 'https://***@git.example/acme/widget.git' issue-7)"
        ),
        "{text}"
    );
    assert!(!text.contains("s3cret"), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&report(&["report", "--json"])).unwrap();
    assert_eq!(
        doc["queue"],
        serde_json::json!([{
            "task": "7",
            "branch": "issue-7",
            "host": host,
            "since": "2030-01-01T00:00:00Z",
            "cause": "open-request",
            "why": why,
            "lift": ["open a pull request from issue-7 into main (or mail it: git request-pull \
                      main 'https://***@git.example/acme/widget.git' issue-7)"],
            "worktree": wt.display().to_string(),
            "pr_url": null,
        }]),
        "{doc:#}"
    );
    // A plain path as the remote's URL is named as it is.
    env.git(
        &repo,
        &["remote", "set-url", "origin", origin.to_str().unwrap()],
    );
    let doc: serde_json::Value = serde_json::from_str(&report(&["report", "--json"])).unwrap();
    assert_eq!(
        doc["queue"][0]["lift"],
        serde_json::json!([format!(
            "open a pull request from issue-7 into main (or mail it: git request-pull main {} \
             issue-7)",
            origin.display()
        )])
    );
}

/// One rule book: on the demo repository (worktrees at hand), the report's attention
/// queue names exactly the workers `status --offline` calls `needs-human`, the rebase in
/// progress included (the classifier decides it from the worktree; the ledger cannot).
#[test]
fn on_the_demo_the_queue_is_statuss_needs_human() {
    let env = TestEnv::new();
    let repo = env.demo();
    let status: serde_json::Value =
        serde_json::from_str(&env.ok(&repo, &["status", "--offline", "--json"])).unwrap();
    let needs: Vec<&str> = status["workers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["state"] == "needs-human")
        .map(|w| w["branch"].as_str().unwrap())
        .collect();
    assert_eq!(needs, ["issue-5-rebase", "issue-9-capped"]);
    let report: serde_json::Value =
        serde_json::from_str(&env.ok(&repo, &["report", "--json"])).unwrap();
    let mut queue: Vec<(&str, &str)> = report["queue"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| (q["branch"].as_str().unwrap(), q["cause"].as_str().unwrap()))
        .collect();
    queue.sort();
    assert_eq!(
        queue,
        [
            ("issue-5-rebase", "classified"),
            ("issue-9-capped", "capped")
        ]
    );
    let rebase = report["queue"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["branch"] == "issue-5-rebase")
        .unwrap();
    assert_eq!(
        rebase["why"],
        "a rebase is in progress in ".to_string() + rebase["worktree"].as_str().unwrap()
    );
    assert_eq!(rebase["lift"][1], "git recode record clear issue-5-rebase");
}
