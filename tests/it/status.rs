//! `status`, `classify` and `--porcelain` on the shared demo scenario: every state and
//! liveness, with exact values.

use crate::common::TestEnv;
use crate::contract::{Dirty, StatusDoc, Worker};

fn status(env: &TestEnv, dir: &std::path::Path) -> StatusDoc {
    serde_json::from_str(&env.ok(dir, &["status", "--json"])).unwrap()
}

fn d(staged: u32, unstaged: u32, untracked: u32, conflicted: u32) -> Option<Dirty> {
    Some(Dirty {
        staged,
        unstaged,
        untracked,
        conflicted,
    })
}

#[test]
fn demo_every_state_exact() {
    let env = TestEnv::new();
    let repo = env.demo();
    let doc = status(&env, &repo);
    assert_eq!(doc.schema, 1);
    let root = env.root().join("demo").display().to_string();
    let rows: Vec<_> = doc
        .workers
        .iter()
        .map(|w| {
            (
                w.task.as_str(),
                w.branch.as_str(),
                w.liveness.as_str(),
                w.state.as_str(),
                w.action.as_str(),
                w.attempts,
                w.ahead.expect("known in the demo"),
                w.behind.expect("known in the demo"),
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            ("1", "issue-1-empty", "exited", "empty", "delete", 1, 0, 1),
            (
                "2",
                "issue-2-dirty",
                "exited",
                "half-done",
                "wip-commit",
                1,
                1,
                1
            ),
            (
                "3",
                "issue-3-committed",
                "exited",
                "half-done",
                "resume",
                1,
                2,
                1
            ),
            (
                "4",
                "issue-4-ready",
                "exited",
                "publishable",
                "publish",
                1,
                2,
                1
            ),
            (
                "5",
                "issue-5-rebase",
                "exited",
                "needs-human",
                "escalate",
                0,
                1,
                1
            ),
            (
                "6",
                "issue-6-stalled",
                "stalled",
                "half-done",
                "wip-commit",
                1,
                1,
                0
            ),
            (
                "7",
                "issue-7-running",
                "running",
                "half-done",
                "wait",
                1,
                1,
                0
            ),
            (
                "8",
                "issue-8-orphan",
                "unknown",
                "orphaned",
                "resume",
                0,
                1,
                0
            ),
            (
                "9",
                "issue-9-capped",
                "exited",
                "needs-human",
                "escalate",
                3,
                1,
                0
            ),
        ]
    );
    let by = |t: &str| doc.workers.iter().find(|w| w.task == t).unwrap();
    for w in &doc.workers {
        assert_eq!(w.base, "main");
        assert_eq!(w.max_attempts, 3);
        assert!(w.pr.is_none());
        assert!(!w.phantom, "no forge, nothing is phantom");
        assert_eq!(w.remote_ahead, None, "nothing was pushed");
        // SPEC "Outcomes": a transient exit naming no reset (`API Error: 500`,
        // recorded at 10:08:20Z) waits the first backoff, 5 minutes.
        let want = (w.task == "5").then(|| "2026-11-20T10:13:20Z".to_string());
        assert_eq!(w.retry_after, want, "retry_after of {}", w.task);
        if w.task != "8" {
            assert_eq!(
                w.worktree.as_deref(),
                Some(format!("{root}/wt/{}", w.task).as_str())
            );
        }
        let tip = env.git(&repo, &["rev-parse", &format!("refs/heads/{}", w.branch)]);
        assert_eq!(
            w.head.as_deref(),
            Some(tip.as_str()),
            "head of {}",
            w.branch
        );
    }
    assert_eq!(by("1").dirty, d(0, 0, 0, 0));
    assert_eq!(by("1").last_outcome.as_deref(), Some("failed"));
    assert_eq!(by("1").session_id.as_deref(), Some("sess-1"));
    assert_eq!(by("2").dirty, d(0, 1, 1, 0));
    assert_eq!(by("2").phase.as_deref(), Some("scoped"));
    assert_eq!(by("3").phase.as_deref(), Some("implemented"));
    assert_eq!(by("3").reason, "2 commits ahead; gate failed on the head");
    assert_eq!(by("4").phase.as_deref(), Some("tests-green"));
    assert_eq!(by("4").last_outcome.as_deref(), Some("success"));
    assert_eq!(by("5").operation.as_deref(), Some("rebase"));
    assert_eq!(by("5").dirty.as_ref().unwrap().conflicted, 1);
    assert_eq!(
        by("5").last_outcome.as_deref(),
        Some("transient"),
        "API Error 500 is transient"
    );
    assert_eq!(
        by("5").reason,
        format!("a rebase is in progress in {root}/wt/5")
    );
    assert_eq!(by("6").dirty, d(0, 0, 1, 0));
    assert_eq!(by("6").idle_seconds, Some(10_000));
    assert_eq!(
        by("6").last_activity.as_deref(),
        Some("2026-11-20T09:13:20Z")
    );
    assert_eq!(by("7").idle_seconds, Some(60));
    assert_eq!(by("7").reason, "worker is running (recent activity)");
    assert_eq!(by("8").worktree, None);
    assert_eq!(by("8").dirty, None);
    assert_eq!(by("8").idle_seconds, Some(90_000));
    assert_eq!(
        by("9").reason,
        "3 counted attempts reached recode.maxAttempts (3) without a passing gate on the head"
    );
    assert_eq!(by("1").idle_seconds, Some(6000));
}

#[test]
fn porcelain_columns_and_same_answer_from_anywhere() {
    let env = TestEnv::new();
    let repo = env.demo();
    let porcelain = env.ok(&repo, &["status", "--porcelain"]);
    assert_eq!(
        porcelain,
        "1\tissue-1-empty\texited\tempty\tdelete\t1\n\
         2\tissue-2-dirty\texited\thalf-done\twip-commit\t1\n\
         3\tissue-3-committed\texited\thalf-done\tresume\t1\n\
         4\tissue-4-ready\texited\tpublishable\tpublish\t1\n\
         5\tissue-5-rebase\texited\tneeds-human\tescalate\t0\n\
         6\tissue-6-stalled\tstalled\thalf-done\twip-commit\t1\n\
         7\tissue-7-running\trunning\thalf-done\twait\t1\n\
         8\tissue-8-orphan\tunknown\torphaned\tresume\t0\n\
         9\tissue-9-capped\texited\tneeds-human\tescalate\t3\n"
    );
    let json_main = env.ok(&repo, &["status", "--json"]);
    let linked = env.root().join("demo/wt/3");
    assert_eq!(
        env.ok(&linked, &["status", "--json"]),
        json_main,
        "from a linked worktree"
    );
    let sub = linked.join("docs");
    assert_eq!(
        env.ok(&sub, &["status", "--json"]),
        json_main,
        "from a subdirectory"
    );
    let elsewhere = env.root();
    assert_eq!(
        env.ok(
            &elsewhere,
            &["-C", repo.to_str().unwrap(), "status", "--json"]
        ),
        json_main,
        "with -C"
    );
    assert_eq!(
        env.ok(
            &elsewhere,
            &["-C", "demo", "-C", "wt/4", "status", "--porcelain"]
        ),
        porcelain,
        "repeated relative -C, like git"
    );
}

#[test]
fn classify_gives_the_worker_with_evidence() {
    let env = TestEnv::new();
    let repo = env.demo();
    let out = env.ok(&repo, &["classify", "issue-6-stalled", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema"], 1);
    assert_eq!(v["state"], "half-done");
    assert_eq!(v["liveness"], "stalled");
    assert_eq!(v["action"], "wip-commit");
    let ev: Vec<String> = serde_json::from_value(v["evidence"].clone()).unwrap();
    assert!(
        ev.iter().any(|e| e.starts_with("stalled: the newest attempt 1 (spawn at 2026-11-20T09:00:00.000Z) has no exit, no activity for 30m")),
        "{ev:#?}"
    );
    // The same worker as status reports.
    let st = status(&env, &repo);
    let w = st.workers.iter().find(|w| w.task == "6").unwrap();
    assert_eq!(v["reason"], w.reason.as_str());
    assert_eq!(v["idle_seconds"], 10_000);
    let text = env.ok(&repo, &["classify", "issue-5-rebase"]);
    assert!(
        text.contains("state     needs-human\naction    escalate\n"),
        "{text}"
    );
}

#[test]
fn stall_after_and_max_attempts_come_from_config() {
    let env = TestEnv::new();
    let repo = env.demo();
    env.git(&repo, &["config", "recode.stallAfter", "4h"]);
    env.git(&repo, &["config", "recode.maxAttempts", "5"]);
    let doc = status(&env, &repo);
    let by = |t: &str| doc.workers.iter().find(|w| w.task == t).unwrap();
    assert_eq!(by("6").liveness, "running", "idle 2h46m is under 4h");
    assert_eq!(by("6").action, "wait");
    assert_eq!(by("9").state, "half-done", "3 of 5 attempts is not capped");
    assert_eq!(by("9").max_attempts, 5);
    env.git(&repo, &["config", "recode.stallAfter", "soon"]);
    let out = env.run(&repo, &["status"]);
    insta::assert_snapshot!(out, @"
    --- stderr ---
    error: config recode.stallAfter = 'soon' is invalid: 'soon' is not a duration (a number followed by s, m, h or d, like 30m)
    hint: fix the value with `git config <key> <value>`
    [exit status: 1]
    ");
}

/// Dirty counts agree with `git status --porcelain=v2` on every kind of change,
/// including a staged change (which defeats the cache-tree shortcut).
#[test]
fn dirty_counts_match_git_status() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    for f in ["a.txt", "b.txt", "c.txt", "d.txt"] {
        std::fs::write(repo.join(f), "one\n").unwrap();
    }
    env.git(&repo, &["add", "."]);
    env.git(&repo, &["commit", "-q", "-m", "files"]);
    let wt = env.root().join("w");
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-12",
            wt.to_str().unwrap(),
        ],
    );
    let count = |env: &TestEnv| {
        let mut d = [0u32; 4]; // staged, unstaged, untracked, conflicted
        for l in env
            .git(&wt, &["status", "--porcelain=v2", "--untracked-files=all"])
            .lines()
        {
            let xy = l.split(' ').nth(1).unwrap_or("");
            match l.chars().next() {
                Some('1') | Some('2') => {
                    d[0] += u32::from(!xy.starts_with('.'));
                    d[1] += u32::from(!xy.ends_with('.'));
                }
                Some('?') => d[2] += 1,
                Some('u') => d[3] += 1,
                _ => {}
            }
        }
        d
    };
    let ours = |env: &TestEnv| {
        let v: serde_json::Value =
            serde_json::from_str(&env.ok(&repo, &["status", "--json"])).unwrap();
        let d = &v["workers"][0]["dirty"];
        ["staged", "unstaged", "untracked", "conflicted"].map(|k| d[k].as_u64().unwrap() as u32)
    };
    assert_eq!(ours(&env), [0, 0, 0, 0]);
    std::fs::write(wt.join("a.txt"), "two\n").unwrap(); // unstaged
    std::fs::write(wt.join("b.txt"), "two\n").unwrap();
    env.git(&wt, &["add", "b.txt"]); // staged
    std::fs::write(wt.join("c.txt"), "two\n").unwrap();
    env.git(&wt, &["add", "c.txt"]);
    std::fs::write(wt.join("c.txt"), "three\n").unwrap(); // staged and unstaged
    env.git(&wt, &["rm", "-q", "d.txt"]); // staged deletion
    std::fs::create_dir_all(wt.join("new/deep")).unwrap();
    std::fs::write(wt.join("new/deep/x.txt"), "x").unwrap(); // untracked, in a new dir
    std::fs::write(wt.join("y file.txt"), "y").unwrap(); // untracked
    let expected = count(&env);
    assert_eq!(expected, [3, 2, 2, 0]);
    assert_eq!(ours(&env), expected);
}

#[test]
fn the_demo_command_builds_and_explains() {
    let env = TestEnv::new();
    let dir = env.root().join("demo-cmd");
    let out = env
        .cmd(&env.root())
        .env_remove("RECODE_NOW")
        .args(["demo", "--dir", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(&format!(
            "A demo repository with dead workers is in {}/repo\n",
            dir.display()
        )),
        "{text}"
    );
    for line in [
        "What `git recode recover --all` would do:",
        "issue-1-empty                delete",
        "issue-5-rebase               escalate",
        "issue-7-running              wait",
    ] {
        assert!(text.contains(line), "{line} in\n{text}");
    }
    // A directory that is not empty is refused, and left alone.
    let again = env
        .cmd(&env.root())
        .args(["demo", "--dir", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(dir.join("repo/.git").is_dir());
}

/// SPEC 1.1: a spawn stamped in the future (a skewed clock) keeps nobody running whose pid
/// is dead, and status warns about the skew once. File and commit times later than the
/// pinned clock (as in every test with RECODE_NOW in the past) do not warn: only the ledger.
#[test]
fn a_future_spawn_with_a_dead_pid_is_stalled_and_status_warns() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = env.root().join("wt7");
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "issue-7",
            wt.to_str().unwrap(),
        ],
    );
    let mut child = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", "2026-11-22T12:00:00Z")
        .args(["record", "spawn", "issue-7", "--pid", &pid])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    child.kill().unwrap();
    child.wait().unwrap();
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", "2030-01-01T00:00:00Z")
        .args(["status", "--porcelain", "--offline"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "7\tissue-7\tstalled\tempty\tdelete\t1\n"
    );
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", "2026-11-21T12:00:00Z")
        .args(["status", "--porcelain", "--offline"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "warning: ledger events stamped in the future (a skewed clock, or a ledger synced from one) are ignored as activity for: issue-7\n"
    );
    let out = env
        .cmd(&repo)
        .env("RECODE_NOW", "2026-11-22T12:00:01Z")
        .args(["status", "--porcelain", "--offline"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// A child process that sleeps until the test ends (killed and reaped on drop, panics included).
struct Sleeper(std::process::Child);

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// SPEC worker object, `dirty`: a worker whose recorded pid is alive is `running`, action
/// `wait`, and its worktree is not read (dirty null) unless `status --deep`. The skip is
/// proved with a corrupt worktree index: read, it is a warning and an unreadable reason;
/// skipped, nothing is said.
#[test]
fn live_worker_worktree_is_read_only_with_deep() {
    let env = TestEnv::new();
    let repo = env.repo("r");
    let wt = env.root().join("w");
    let wt_s = wt.to_str().unwrap();
    env.git(&repo, &["worktree", "add", "-q", "-b", "issue-7", wt_s]);
    std::fs::write(wt.join("README.md"), "changed\n").unwrap(); // unstaged
    std::fs::write(wt.join("new.txt"), "x\n").unwrap(); // untracked
    std::fs::write(wt.join("staged.txt"), "s\n").unwrap();
    env.git(&wt, &["add", "staged.txt"]); // staged
    let agent = Sleeper(
        std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .unwrap(),
    );
    let pid = agent.0.id().to_string();
    env.ok(&repo, &["record", "spawn", "issue-7", "--pid", &pid]);
    let one = |args: &[&str]| -> (Worker, String) {
        let out = env.output(&repo, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let mut doc: StatusDoc = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc.workers.len(), 1);
        (
            doc.workers.remove(0),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (w, err) = one(&["status", "--json"]);
    assert_eq!(
        (
            w.liveness.as_str(),
            w.action.as_str(),
            w.dirty,
            err.as_str()
        ),
        ("running", "wait", None, "")
    );
    assert_eq!(w.reason, "worker is running (its pid is alive)");
    let (w, _) = one(&["status", "--json", "--deep"]);
    assert_eq!(
        (w.liveness.as_str(), w.action.as_str(), w.dirty),
        ("running", "wait", d(1, 1, 1, 0))
    );
    let table = env.ok(&repo, &["status"]);
    assert!(table.contains("not read (live)"), "{table}");

    // Corrupt the worktree's index: any read of it fails.
    let index = repo.join(".git/worktrees/w/index");
    std::fs::write(&index, "not an index").unwrap();
    let (w, err) = one(&["status", "--json"]);
    assert_eq!(
        (
            w.liveness.as_str(),
            w.action.as_str(),
            w.dirty,
            err.as_str()
        ),
        ("running", "wait", None, "")
    );
    let (w, err) = one(&["status", "--json", "--deep"]);
    assert_eq!((w.action.as_str(), w.dirty), ("wait", None));
    assert!(
        err.contains(&format!("cannot read the worktree {wt_s}")),
        "{err}"
    );
    // classify always reads it.
    let c = env.output(&repo, &["classify", "issue-7", "--json"]);
    assert!(
        String::from_utf8_lossy(&c.stderr).contains("cannot read the worktree"),
        "{c:?}"
    );
    // recover plans on the skipped reading, does nothing, and says so.
    let plan = env.ok(&repo, &["recover", "--all", "--json"]);
    let plan: serde_json::Value = serde_json::from_str(&plan).unwrap();
    assert_eq!(plan["results"][0]["action"], "wait");
    assert_eq!(plan["results"][0]["result"], "skipped");
    drop(agent);
    // The agent is gone (and its spawn old): the worktree is read again, and is unreadable.
    let out = env
        .cmd(&repo)
        .args(["status", "--json"])
        .env("RECODE_NOW", crate::common::LATER)
        .output()
        .unwrap();
    let doc: StatusDoc = serde_json::from_slice(&out.stdout).unwrap();
    let w = &doc.workers[0];
    assert_eq!((w.liveness.as_str(), w.dirty.as_ref()), ("stalled", None));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot read the worktree"),
        "{out:?}"
    );
}
