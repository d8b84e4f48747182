//! Nothing raw reaches a terminal (SPEC 1.2 "Untrusted input stays out"): every C0 and C1
//! control, DEL, ESC sequences (CSI, OSC 52 that would write the clipboard, SGR), CR and
//! the bidirectional controls, put into branch names, host names, final messages, reasons,
//! blockers, host records and pull request checks (a synced ledger, a hostile forge), come
//! out of `status`, `classify`, `log`, `report`, `recover`, `resume`, `verify`, `doctor` and
//! `sync` escaped (stdout and stderr), with or without colour; `--porcelain` rows keep six
//! fields; JSON keeps the exact text.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::common::TestEnv;
use crate::forge::Fx;

/// Every control a terminal or a reader acts on, with an SGR an attacker would colour with.
fn payload() -> String {
    let mut p = String::from("x");
    // The line break last, so a renderer that shows only a first line shows all the rest.
    p.extend(
        (0u32..0x20)
            .filter(|c| *c != 0x0a)
            .filter_map(char::from_u32),
    );
    p.push('\u{7f}');
    p.extend((0x80u32..0xa0).filter_map(char::from_u32));
    p.push_str("\u{1b}]52;c;aGVsbG8=\u{7}\u{1b}[2J\u{1b}[31mred\u{9b}1A");
    p.extend([
        '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}',
        '\u{2068}', '\u{2069}', '\u{200e}', '\u{200f}', '\u{061c}',
    ]);
    p.push_str("y\nz");
    p
}

/// Whether `c` must never appear raw: a control but the line break, or a bidi control.
fn forbidden(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// `text` without SGR codes (`ESC [ digits/; m`), the palette's colour.
fn without_sgr(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("\u{1b}[") {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 2..];
        let n = tail
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(tail.len());
        if tail[n..].starts_with('m') {
            rest = &tail[n + 1..];
        } else {
            out.push('\u{1b}');
            rest = &rest[i + 1..];
        }
    }
    out.push_str(rest);
    out
}

/// Run `cmd` with `args`: exit 0; stdout and stderr, each checked for raw controls (colour
/// codes removed first when `color`).
fn clean_run(cmd: &mut std::process::Command, args: &[&str], color: bool) -> (String, String) {
    let out = cmd.args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    for (name, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        let seen = if color {
            without_sgr(text)
        } else {
            text.clone()
        };
        let raw: Vec<char> = seen.chars().filter(|c| forbidden(*c)).collect();
        assert!(raw.is_empty(), "{args:?} {name} holds raw {raw:?}:\n{seen}");
    }
    (stdout, stderr)
}

/// Write `lines` as more of task `task`'s ledger (as `sync` brings another host's).
fn synced(env: &TestEnv, repo: &Path, task: &str, lines: &[serde_json::Value]) {
    let anchor_file = env.root().join(format!("anchor-{task}"));
    std::fs::write(&anchor_file, format!("recode-task {task}\n")).unwrap();
    let anchor = env.git(repo, &["hash-object", "-w", anchor_file.to_str().unwrap()]);
    for l in lines {
        env.git(
            repo,
            &[
                "notes",
                "--ref=recode",
                "append",
                "-m",
                &l.to_string(),
                &anchor,
            ],
        );
    }
}

/// A repository with worker `issue-7` (a worktree, an exit whose message and an escalation
/// whose reason hold the payload) and task 9, known only from a synced ledger whose branch,
/// host, message and blocker hold it.
fn hostile_ledger(env: &TestEnv) -> (PathBuf, String) {
    let p = payload();
    let repo = env.repo("r");
    let wt = env.add_worktree(&repo, "issue-7", "wt7");
    std::fs::write(wt.join("a.txt"), "a\n").unwrap();
    env.git(&wt, &["add", "a.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "step"]);
    let ok = env.output(&wt, &["record", "spawn", "issue-7"]);
    assert!(ok.status.success());
    // After the spawn `record` wrote at the pinned clock (12:00:00), so the attempt exited.
    let ts = |s: &str| format!("2026-11-20T12:{s}.000Z");
    synced(
        env,
        &repo,
        "7",
        &[
            json!({"branch": "issue-7", "kind": "exit", "outcome": "needs-human", "rc": 1,
                   "message": p, "seq": 2, "task": "7", "ts": ts("00:01"), "v": 1}),
            json!({"branch": "issue-7", "kind": "escalated", "reason": p, "seq": 3,
                   "task": "7", "ts": ts("00:02"), "v": 1}),
        ],
    );
    let branch9 = format!("issue-9-{p}");
    synced(
        env,
        &repo,
        "9",
        &[
            json!({"attempt": 1, "branch": branch9, "cwd": "/nowhere", "host": p,
                   "kind": "spawn", "seq": 1, "task": "9", "ts": ts("00:03"), "v": 1}),
            json!({"blocker": p, "branch": branch9, "kind": "exit", "outcome": "blocked",
                   "rc": 1, "message": p, "seq": 2, "task": "9", "ts": ts("00:04"), "v": 1}),
        ],
    );
    (repo, branch9)
}

#[test]
fn every_control_in_a_ledger_is_escaped_in_every_text_output() {
    let env = TestEnv::new();
    let (repo, branch9) = hostile_ledger(&env);
    let texts: &[&[&str]] = &[
        &["status"],
        &["status", "--all"],
        &["classify", "issue-7"],
        &["log"],
        &["log", "issue-7"],
        &["report"],
    ];
    for args in texts {
        let (stdout, _) = clean_run(&mut env.cmd(&repo), args, false);
        // Shown escaped: ours, or JSON's inside a quoted `log` value.
        assert!(
            stdout.contains("\\u{1b}]52;c;aGVsbG8=") || stdout.contains("\\u001b]52;c;aGVsbG8="),
            "{args:?} does not show the escaped OSC 52:\n{stdout}"
        );
        // With colour, only the palette's codes are raw: the payload's SGR is escaped.
        let (coloured, _) = clean_run(env.cmd(&repo).arg("--color=always"), args, true);
        assert!(
            !coloured.contains("\u{1b}[31mred"),
            "{args:?}: the payload's own colour code is raw:\n{coloured}"
        );
    }
    // `--porcelain`: six fields a row, whatever the branch holds.
    let out = env.output(&repo, &["status", "--porcelain", "--all"]);
    let rows = String::from_utf8(out.stdout).unwrap();
    assert_eq!(rows.lines().count(), 2, "{rows}");
    for row in rows.lines() {
        assert_eq!(row.split('\t').count(), 6, "{row:?}");
        assert!(
            !row.chars().any(|c| c != '\t' && forbidden(c)),
            "a raw control in {row:?}"
        );
    }
    assert!(rows.contains("\\u{1b}]52;c;aGVsbG8="), "{rows}");
    // JSON keeps the text exactly.
    let out = env.output(&repo, &["status", "--json", "--all"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let branches: Vec<&str> = doc["workers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["branch"].as_str())
        .collect();
    assert!(branches.contains(&branch9.as_str()), "{branches:?}");
}

#[test]
fn every_control_in_a_pull_requests_checks_is_escaped() {
    let fx = Fx::new();
    let wt = fx.worker("issue-1-work", 1, 0);
    fx.env.git(&wt, &["push", "-q", "origin", "issue-1-work"]);
    let tip = fx.env.git(&wt, &["rev-parse", "HEAD"]);
    let n = fx.gh.add_pr("acme", "widget", "issue-1-work", "open");
    fx.gh.set_head(n, &tip);
    let p = payload();
    fx.gh
        .set_check(&tip, &p, "completed", Some("failure"), Some(&p), Some(&p));
    fx.gh.set_status(&tip, &p, "failure", Some(&p));
    let (table, _) = clean_run(&mut fx.cmd(&fx.repo, true), &["status"], false);
    assert!(
        table.contains("checks:failing"),
        "the checks were not read:\n{table}"
    );
    let (evidence, _) = clean_run(
        &mut fx.cmd(&fx.repo, true),
        &["classify", "issue-1-work"],
        false,
    );
    assert!(evidence.contains("\\u{1b}[2J"), "{evidence}");
}

/// Run `cmd` with `args`: its exit code, stdout and stderr, each checked for raw controls
/// (no colour asked).
fn screened(cmd: &mut std::process::Command, args: &[&str]) -> (Option<i32>, String, String) {
    let out = cmd.args(args).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    for (name, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        let raw: Vec<char> = text.chars().filter(|c| forbidden(*c)).collect();
        assert!(raw.is_empty(), "{args:?} {name} holds raw {raw:?}:\n{text}");
    }
    (out.status.code(), stdout, stderr)
}

/// `text` as the text outputs show untrusted text: every control character, line breaks and
/// bidi controls included, written as its Rust escape.
fn escaped(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let e: Vec<char> = if forbidden(c) || c == '\n' {
                c.escape_default().collect()
            } else {
                vec![c]
            };
            e
        })
        .collect()
}

/// Another host's heartbeat, as `sync` brings it: its host id and label hold the payload,
/// its clock a month ahead (so `doctor` names it).
fn hostile_heartbeat(env: &TestEnv, repo: &Path) {
    let doc = json!({"host": payload(), "label": payload(), "ts": "2026-12-20T12:00:00.000Z",
                     "workers": {}});
    let file = env.root().join("heartbeat.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let blob = env.git(repo, &["hash-object", "-w", file.to_str().unwrap()]);
    let mut mktree = env.git_cmd(repo);
    let mut child = mktree
        .arg("mktree")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    writeln!(
        child.stdin.take().unwrap(),
        "100644 blob {blob}\theartbeat.json"
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let tree = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let commit = env.git(repo, &["commit-tree", &tree, "-m", "heartbeat"]);
    env.git(repo, &["update-ref", "refs/recode/hosts/evil", &commit]);
}

#[test]
fn every_control_in_a_ledger_is_escaped_by_the_writing_commands() {
    let env = TestEnv::new();
    let (repo, _) = hostile_ledger(&env);
    hostile_heartbeat(&env, &repo);
    let bare = env.root().join("origin.git");
    env.git(
        &env.root(),
        &["init", "-q", "--bare", bare.to_str().unwrap()],
    );
    env.git(&repo, &["remote", "add", "origin", bare.to_str().unwrap()]);
    let p = payload();
    let first_line = p.split('\n').next().unwrap();
    let esc = escaped(&p);
    let run = |args: &[&str]| screened(&mut env.cmd(&repo), args);

    let (code, stdout, stderr) = run(&["recover", "--all", "--dry-run"]);
    assert_eq!((code, stderr.as_str()), (Some(0), ""), "{stdout}");
    assert_eq!(
        stdout,
        "issue-7                      escalate skipped dry run: would ledger an `escalated` event once and touch nothing: a human must look\n"
    );
    let (code, stdout, stderr) = run(&["recover", "--all"]);
    assert_eq!((code, stderr.as_str()), (Some(0), ""), "{stdout}");
    assert_eq!(
        stdout,
        format!("issue-7                      escalate done    escalated earlier: {esc}\n")
    );
    let (code, stdout, stderr) = run(&["resume", "issue-7", "--dry-run"]);
    assert_eq!((code, stdout.as_str()), (Some(3), ""), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "error: issue-7 needs a human: the last attempt needs a human (rc 1: {})\n\
             hint: a human must look: fix the cause, then `git recode record clear <branch>`\n",
            escaped(first_line)
        )
    );
    let (code, stdout, stderr) = run(&["verify", "issue-7"]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (Some(0), "unknown\n", "")
    );
    let (code, stdout, stderr) = run(&["doctor"]);
    assert_eq!((code, stderr.as_str()), (Some(1), ""), "{stdout}");
    let hosts: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("warn  hosts"))
        .collect();
    assert_eq!(
        hosts,
        [format!(
            "warn  hosts       host {esc}'s clock was 30d ahead of this host's when its heartbeat was first seen (fix: sync that host's clock (e.g. `timedatectl set-ntp true` there), or this one's if it is the wrong one; silence is measured on each host's own clock, so a skew never takes over a live worker)"
        )]
    );
    let (code, stdout, stderr) = run(&["sync"]);
    assert_eq!((code, stderr.as_str()), (Some(0), ""), "{stdout}");
    assert_eq!(stdout.lines().count(), 3, "{stdout}");

    // JSON keeps the text exactly.
    let out = env.output(&repo, &["recover", "--all", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["results"][0]["reason"],
        format!("escalated earlier: {p}"),
        "{doc}"
    );
    let out = env.output(&repo, &["doctor", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let messages: Vec<&str> = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"] == "hosts")
        .filter_map(|c| c["message"].as_str())
        .collect();
    assert_eq!(
        messages,
        [format!(
            "host {p}'s clock was 30d ahead of this host's when its heartbeat was first seen"
        )]
    );
}
