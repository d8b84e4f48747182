//! The ledger in git notes: plain git sees the same thing, gc keeps it, concurrent
//! writers never lose an event, a bad line is reported once and skipped.

use crate::common::TestEnv;

#[test]
fn plain_git_notes_show_prints_the_ledger() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.git(&repo, &["branch", "feat/issue-7-x"]);
    env.ok(
        &repo,
        &[
            "record",
            "spawn",
            "feat/issue-7-x",
            "--agent",
            "claude",
            "--session-id",
            "s-1",
            "--cwd",
            ".",
        ],
    );
    let msg = env.root().join("msg");
    std::fs::write(&msg, "Reached maximum number of turns (40)\n").unwrap();
    assert_eq!(
        env.ok(
            &repo,
            &[
                "record",
                "exit",
                "feat/issue-7-x",
                "--rc",
                "1",
                "--message-file",
                msg.to_str().unwrap()
            ]
        ),
        "failed\n"
    );
    let anchor = env.anchor(&repo, "7");
    let shown = env.git(&repo, &["notes", "--ref=recode", "show", &anchor]);
    let head = env.git(&repo, &["rev-parse", "main"]);
    let host = env.git(&repo, &["config", "recode.hostId"]);
    let label = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let label = label.trim();
    let cwd = repo.display();
    assert_eq!(
        shown,
        format!(
            "{{\"agent\":\"claude\",\"attempt\":1,\"branch\":\"feat/issue-7-x\",\"cwd\":\"{cwd}\",\"head\":\"{head}\",\"host\":\"{host}\",\"kind\":\"spawn\",\"label\":\"{label}\",\"seq\":1,\"session_id\":\"s-1\",\"task\":\"7\",\"ts\":\"2026-11-20T12:00:00.000Z\",\"v\":1}}\n\
             {{\"branch\":\"feat/issue-7-x\",\"ends\":{{\"attempt\":1,\"host\":\"{host}\"}},\"head\":\"{head}\",\"kind\":\"exit\",\"message\":\"Reached maximum number of turns (40)\",\"outcome\":\"failed\",\"rc\":1,\"seq\":2,\"task\":\"7\",\"ts\":\"2026-11-20T12:00:00.000Z\",\"v\":1}}"
        )
    );
    // `log --json` prints the same lines, in ledger order.
    assert_eq!(
        env.ok(&repo, &["log", "feat/issue-7-x", "--json"]),
        format!("{shown}\n")
    );
    // The anchor is the blob `recode-task 7\n`, kept reachable from refs/recode/anchors.
    assert_eq!(
        env.git(&repo, &["cat-file", "-p", &anchor]),
        "recode-task 7"
    );
    let listed = env.git(&repo, &["ls-tree", "refs/recode/anchors"]);
    assert_eq!(listed, format!("100644 blob {anchor}\t{anchor}"));
}

#[test]
fn gc_and_notes_prune_keep_every_ledger() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    for b in ["issue-1", "issue-2", "other-branch"] {
        env.ok(&repo, &["record", "spawn", b, "--cwd", "."]);
    }
    let before = env.ok(&repo, &["log", "--json"]);
    assert_eq!(before.lines().count(), 3);
    env.git(&repo, &["gc", "-q", "--prune=now"]);
    env.git(&repo, &["notes", "--ref=recode", "prune"]);
    env.git(&repo, &["gc", "-q", "--prune=now"]);
    assert_eq!(env.ok(&repo, &["log", "--json"]), before);
    for key in ["1", "2", "other-branch"] {
        let anchor = env.anchor(&repo, key);
        env.git(&repo, &["notes", "--ref=recode", "show", &anchor]);
    }
}

#[test]
fn sixteen_parallel_writers_from_four_worktrees_lose_nothing() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let mut dirs = vec![repo.clone()];
    for i in 1..4 {
        let wt = env.root().join(format!("wt{i}"));
        env.git(
            &repo,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                &format!("side-{i}"),
                wt.to_str().unwrap(),
            ],
        );
        dirs.push(wt);
    }
    let children: Vec<_> = (0..16)
        .map(|i| {
            let mut cmd = env.cmd(&dirs[i % 4]);
            cmd.args([
                "record",
                "spawn",
                "issue-42",
                "--session-id",
                &format!("s{i:02}"),
                "--cwd",
                ".",
            ]);
            cmd.stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let log = env.ok(&repo, &["log", "issue-42", "--json"]);
    let mut sessions: Vec<String> = log
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["session_id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    sessions.sort();
    let expected: Vec<String> = (0..16).map(|i| format!("s{i:02}")).collect();
    assert_eq!(
        sessions, expected,
        "every one of the 16 events is in the ledger"
    );
    let mut seqs: Vec<u64> = log
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["seq"]
                .as_u64()
                .unwrap()
        })
        .collect();
    seqs.sort();
    assert_eq!(
        seqs,
        (1..=16).collect::<Vec<_>>(),
        "seq recomputed on each retry"
    );
    // Plain git agrees.
    let anchor = env.anchor(&repo, "42");
    assert_eq!(
        env.git(&repo, &["notes", "--ref=recode", "show", &anchor])
            .lines()
            .count(),
        16
    );
}

#[test]
fn a_corrupted_line_is_reported_once_and_skipped() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.git(&repo, &["branch", "issue-5"]);
    env.ok(&repo, &["record", "spawn", "issue-5", "--cwd", "."]);
    let anchor = env.anchor(&repo, "5");
    env.git(
        &repo,
        &[
            "notes",
            "--ref=recode",
            "append",
            "--no-separator",
            "-m",
            "{this is not json",
            &anchor,
        ],
    );
    env.ok(&repo, &["record", "gate", "issue-5", "--failed"]);
    let out = env.run(&repo, &["status", "--porcelain"]);
    insta::assert_snapshot!(out, @"
    5	issue-5	running	empty	wait	1
    --- stderr ---
    warning: task 5: a ledger line is not valid JSON; skipped: {this is not json
    [exit status: 0]
    ");
    let log = env.output(&repo, &["log", "--json"]);
    assert_eq!(String::from_utf8_lossy(&log.stdout).lines().count(), 2);
    assert_eq!(
        String::from_utf8_lossy(&log.stderr),
        "warning: task 5: a ledger line is not valid JSON; skipped: {this is not json\n"
    );
}

#[test]
fn record_spawn_with_pid_tells_a_live_worker_from_a_recycled_pid() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    env.git(&repo, &["branch", "issue-9"]);
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    // Spawned long ago (activity is stale), but the process is alive: running (within
    // `recode.hungAfter`, which is past here: a hung agent is this test's subject elsewhere).
    env.git(&repo, &["config", "recode.hungAfter", "1000d"]);
    let mut cmd = env.cmd(&repo);
    cmd.env("RECODE_NOW", "2026-11-20T08:00:00Z");
    assert!(
        cmd.args(["record", "spawn", "issue-9", "--pid", &pid, "--cwd", "."])
            .status()
            .unwrap()
            .success()
    );
    assert_eq!(
        env.ok(&repo, &["status", "--porcelain"]),
        "9\tissue-9\trunning\tempty\twait\t1\n"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        env.ok(&repo, &["status", "--porcelain"]),
        "9\tissue-9\tstalled\tempty\tdelete\t1\n"
    );
    // A recorded start token that does not match the live process is not the worker.
    let anchor = env.anchor(&repo, "9");
    let note = env.git(&repo, &["notes", "--ref=recode", "show", &anchor]);
    let me = std::process::id().to_string();
    let forged = note.replace(&format!("\"pid\":{pid}"), &format!("\"pid\":{me}"));
    assert_ne!(forged, note);
    env.git(
        &repo,
        &["notes", "--ref=recode", "add", "-f", "-m", &forged, &anchor],
    );
    assert_eq!(
        env.ok(&repo, &["status", "--porcelain"]),
        "9\tissue-9\tstalled\tempty\tdelete\t1\n"
    );
}

/// SPEC 1.2 "The loop settles": a notes lock older than 30 s was left by a killed
/// writer: the next append moves it aside (never deletes it) and goes through at once.
#[test]
fn a_lock_left_by_a_killed_writer_is_moved_aside_at_once() {
    // The files backend's own lock file (reftable: tests/it/formats.rs).
    let env = TestEnv::with_files_refs();
    let repo = env.repo("r");
    env.ok(&repo, &["record", "spawn", "issue-3", "--cwd", "."]);
    let lock = repo.join(".git/refs/notes/recode.lock");
    std::fs::write(&lock, "").unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&lock)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let start = std::time::Instant::now();
    let out = env.output(&repo, &["record", "spawn", "issue-3", "--cwd", "."]);
    assert!(start.elapsed().as_secs() < 5, "no 20 s of retries");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!lock.exists());
    let kinds: Vec<String> = env
        .ok(&repo, &["log", "--json"])
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["kind"].to_string())
        .collect();
    assert_eq!(kinds, ["\"spawn\"", "\"spawn\"", "\"unlocked\""]);
}

/// `count` canonical milestone lines of task `task`, one a second from `start` (seconds
/// into the hour 10:00), as a note file's text.
fn milestones(task: &str, start: u32, count: u32) -> String {
    (0..count)
        .map(|i| {
            let s = start + i;
            format!(
                "{{\"kind\":\"milestone\",\"phase\":\"p{i}\",\"seq\":{},\"task\":\"{task}\",\"ts\":\"2026-11-20T10:{:02}:{:02}.000Z\",\"v\":1}}\n",
                i + 1,
                s / 60,
                s % 60
            )
        })
        .collect()
}

/// Write `text` as the note on task `task`'s anchor in `notes_ref` (plain git).
fn put_note(env: &TestEnv, repo: &std::path::Path, notes_ref: &str, task: &str, text: &str) {
    let anchor = env.anchor(repo, task);
    env.git(
        repo,
        &[
            "hash-object",
            "-w",
            env.root().join(format!("anchor-{task}")).to_str().unwrap(),
        ],
    );
    let f = env.root().join(format!("note-{task}"));
    std::fs::write(&f, text).unwrap();
    // `git notes --ref` puts a name outside refs/notes/ under it: write there, then move.
    let outside = !notes_ref.starts_with("refs/notes/");
    let at = if outside {
        "refs/notes/put-note"
    } else {
        notes_ref
    };
    env.git(
        repo,
        &[
            "notes",
            "--ref",
            at,
            "add",
            "-f",
            "-F",
            f.to_str().unwrap(),
            &anchor,
        ],
    );
    if outside {
        env.git(repo, &["update-ref", notes_ref, at]);
        env.git(repo, &["update-ref", "-d", at]);
    }
}

/// SPEC `log --json`: every task's lines merged by ts, then task (numbers numerically),
/// then seq; a fetched copy's lines are a union; a closed stdout (`| head -1`) ends the run
/// with exit 0 and nothing on stderr.
#[test]
fn log_merges_every_task_in_order_and_stops_at_a_closed_pipe() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    // Task 10 from 10:00:00, task 2 from 10:00:01, both every second; task 3 stored out of
    // order (lines in a note are not in ts order after a sorted-union merge).
    put_note(
        &env,
        &repo,
        "refs/notes/recode",
        "10",
        &milestones("10", 0, 3),
    );
    put_note(
        &env,
        &repo,
        "refs/notes/recode",
        "2",
        &milestones("2", 1, 2),
    );
    let three: Vec<String> = milestones("3", 0, 2)
        .lines()
        .rev()
        .map(String::from)
        .collect();
    put_note(
        &env,
        &repo,
        "refs/notes/recode",
        "3",
        &format!("{}\n", three.join("\n")),
    );
    // A fetched copy with task 2's lines and one more.
    put_note(
        &env,
        &repo,
        "refs/recode/remotes/origin/notes",
        "2",
        &milestones("2", 1, 3),
    );
    let log = env.ok(&repo, &["log", "--json"]);
    let order: Vec<(String, String)> = log
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["ts"].as_str().unwrap()[14..19].to_string(),
                v["task"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = [
        ("00:00", "3"),
        ("00:00", "10"),
        ("00:01", "2"),
        ("00:01", "3"),
        ("00:01", "10"),
        ("00:02", "2"),
        ("00:02", "10"),
        ("00:03", "2"),
    ];
    assert_eq!(
        order,
        want.map(|(t, k)| (t.to_string(), k.to_string())).to_vec()
    );

    // A long ledger into a pipe already closed, and into one closed after the first line.
    put_note(
        &env,
        &repo,
        "refs/notes/recode",
        "11",
        &milestones("11", 0, 2000),
    );
    for json in [true, false] {
        let args: &[&str] = if json { &["log", "--json"] } else { &["log"] };
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = env.cmd(&repo).args(args).stdout(writer).output().unwrap();
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).to_string()
            ),
            (Some(0), String::new()),
            "{args:?}"
        );
        let mut child = env
            .cmd(&repo)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut first,
        )
        .unwrap();
        assert!(first.contains("10:00:00"), "{first}");
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).to_string()
            ),
            (Some(0), String::new()),
            "{args:?} | head -1"
        );
    }
}

/// A notes ref that cannot be written for any reason but a lost race (here a directory
/// stands at its lock path: no writer holds it) fails at once with the cause, exit 1,
/// instead of retrying for 20 s; nothing was appended.
#[test]
fn an_unwritable_notes_ref_fails_at_once_naming_the_cause() {
    // The files backend's own lock file (reftable: tests/it/formats.rs).
    let env = TestEnv::with_files_refs();
    let repo = env.repo("r");
    env.ok(&repo, &["record", "spawn", "issue-3", "--cwd", "."]);
    let lock = repo.join(".git/refs/notes/recode.lock");
    std::fs::create_dir(&lock).unwrap();
    let start = std::time::Instant::now();
    let out = env.output(&repo, &["record", "spawn", "issue-3", "--cwd", "."]);
    assert!(start.elapsed().as_secs() < 3, "took {:?}", start.elapsed());
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let p = lock.display();
    assert!(
        stderr.starts_with(&format!(
            "error: cannot write refs/notes/recode: {p} is in the way and is not a lock file a writer holds\n"
        )),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("hint: make refs/notes/recode writable (check the permissions of the repository's refs directory and what stands at refs/notes/recode.lock), then run the command again\n"),
        "{stderr}"
    );
    std::fs::remove_dir(&lock).unwrap();
    assert_eq!(env.ok(&repo, &["log", "--json"]).lines().count(), 1);
}
