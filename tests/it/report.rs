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
                "phase": "tests-green", "head": "a".repeat(40)}),
            serde_json::json!({"kind": "exit", "ts": "2026-11-20T09:40:00.000Z", "branch": "issue-4-done",
                "rc": 0, "outcome": "success", "message": "Done: tests green."}),
            classified("2026-11-20T10:00:00.000Z", "issue-4-done"),
            classified("2026-11-20T10:05:00.000Z", "issue-4-done"),
            classified("2026-11-20T10:10:00.000Z", "issue-4-done"),
            classified("2026-11-20T11:00:00.000Z", "issue-4-done"),
            serde_json::json!({"kind": "wip", "ts": "2026-11-20T11:05:00.000Z", "branch": "issue-4-done",
                "head": "b".repeat(40), "files": 2, "pushed": true}),
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
    assert!(out.contains("\x1b[1;31mNEEDS A HUMAN (1)\x1b[0m"), "{out}");
    let out = env.run(&c, &["report"]);
    assert_eq!(
        out,
        "\
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
"
    );
    let _ = NOW;
}
