//! A session id is never an option word (SPEC 1.2 "Untrusted input stays out"): an id
//! starting with `-` (`--dangerously-skip-permissions`) is refused with a warning wherever
//! it enters — `record spawn --session-id`, `record exit --result-json` (every agent's key
//! for it), a ledger line synced from another host — and the resume command never carries
//! it; a good id sits where no option can be read (`--resume='ID'`).

use std::path::{Path, PathBuf};

use crate::common::TestEnv;

const EVIL: &str = "--dangerously-skip-permissions";

/// A repository with worker `issue-7` in its own worktree, one commit ahead.
fn worker(env: &TestEnv) -> (PathBuf, PathBuf) {
    let repo = env.repo("r");
    let wt = env.add_worktree(&repo, "issue-7", "wt7");
    std::fs::write(wt.join("a.txt"), "a\n").unwrap();
    env.git(&wt, &["add", "a.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "step"]);
    (repo, wt)
}

/// Run `args` in `dir`: exit 0, its stderr.
fn stderr_of(env: &TestEnv, dir: &Path, args: &[&str]) -> String {
    let out = env.output(dir, args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `resume --dry-run --json`'s launch: (mode, session id, command).
fn launch(env: &TestEnv, repo: &Path) -> (String, serde_json::Value, String) {
    // Later than every attempt, so none is still running.
    let (code, l, stderr) = env.json_later(repo, &["resume", "issue-7", "--dry-run"]);
    assert_eq!(code, 0, "{stderr}");
    (
        l["mode"].as_str().unwrap().to_string(),
        l["session_id"].clone(),
        l["command"].as_str().unwrap().to_string(),
    )
}

#[test]
fn an_option_word_from_the_command_line_is_never_recorded() {
    let env = TestEnv::new();
    let (repo, wt) = worker(&env);
    let flag = format!("--session-id={EVIL}");
    let stderr = stderr_of(&env, &wt, &["record", "spawn", "issue-7", &flag]);
    assert_eq!(
        stderr,
        format!(
            "warning: session id \"{EVIL}\" is not recorded: it must match ^[A-Za-z0-9._:@+-]{{1,200}}$ and not start with `-`\n"
        )
    );
    let log = env.ok(&repo, &["log", "issue-7", "--json"]);
    assert!(!log.contains("session_id") && !log.contains(EVIL), "{log}");
    let (mode, id, command) = launch(&env, &repo);
    assert_eq!((mode.as_str(), id), ("fresh", serde_json::Value::Null));
    assert!(!command.contains(EVIL), "{command}");
}

#[test]
fn an_option_word_in_any_agents_output_is_never_recorded() {
    let env = TestEnv::new();
    let (repo, wt) = worker(&env);
    // Claude/Cursor/Amp/Gemini `session_id`, OpenCode `sessionID`, Copilot `sessionId`,
    // Codex `thread.started`'s `thread_id`.
    let outputs = [
        format!(
            r#"{{"type":"result","subtype":"success","is_error":false,"result":"Done.","session_id":"{EVIL}"}}"#
        ),
        format!(r#"{{"type":"step_finish","sessionID":"{EVIL}"}}"#),
        format!(r#"{{"type":"result","sessionId":"{EVIL}","exitCode":0}}"#),
        format!(r#"{{"type":"thread.started","thread_id":"{EVIL}"}}"#),
    ];
    for (i, text) in outputs.iter().enumerate() {
        stderr_of(&env, &wt, &["record", "spawn", "issue-7"]);
        let f = env.root().join(format!("out-{i}.jsonl"));
        std::fs::write(&f, format!("{text}\n")).unwrap();
        let stderr = stderr_of(
            &env,
            &wt,
            &[
                "record",
                "exit",
                "issue-7",
                "--rc",
                "1",
                "--result-json",
                f.to_str().unwrap(),
            ],
        );
        assert!(
            stderr.contains(&format!("session id \"{EVIL}\" is not recorded")),
            "{text}: {stderr}"
        );
    }
    let log = env.ok(&repo, &["log", "issue-7", "--json"]);
    assert!(!log.contains(EVIL), "{log}");
}

#[test]
fn an_option_word_in_a_synced_ledger_line_is_ignored_with_a_warning() {
    let env = TestEnv::new();
    let (repo, wt) = worker(&env);
    stderr_of(
        &env,
        &wt,
        &["record", "spawn", "issue-7", "--session-id", "s-7"],
    );
    // Another host's exit, as `sync` would bring it: the id it names is an option word.
    let anchor = env.anchor(&repo, "7");
    let line = format!(
        r#"{{"branch":"issue-7","kind":"exit","outcome":"failed","rc":1,"seq":2,"session_id":"{EVIL}","task":"7","ts":"2026-11-20T12:00:00.500Z","v":1}}"#
    );
    env.git(
        &repo,
        &["notes", "--ref=recode", "append", "-m", &line, &anchor],
    );
    let warned = format!(
        "warning: task 7: a ledger line's session id \"{EVIL}\" is not a session id (SPEC: ^[A-Za-z0-9._:@+-]{{1,200}}$, not starting with `-`); it is ignored\n"
    );
    let out = env.output(&repo, &["status", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&warned), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["workers"][0]["session_id"], "s-7", "the good id stays");
    // The resume runs the session the good id names, glued to its option.
    let (mode, id, command) = launch(&env, &repo);
    assert_eq!((mode.as_str(), id), ("session", serde_json::json!("s-7")));
    assert!(
        command.contains("claude -p --resume='s-7' ") && !command.contains(EVIL),
        "{command}"
    );
}

#[test]
fn an_option_word_from_the_hooks_environment_is_never_journaled() {
    use crate::hookenv::{commit, hgit, hgit_out};
    let env = TestEnv::new();
    let repo = env.repo("r");
    hgit(&env, &repo, &["checkout", "-q", "-b", "issue-7"]);
    env.ok(&repo, &["hook", "install"]);
    std::fs::write(repo.join("a.txt"), "a\n").unwrap();
    hgit(&env, &repo, &["add", "a.txt"]);
    let out = hgit_out(
        &env,
        &repo,
        &["commit", "-q", "-m", "step\n\nRecode-Phase: implemented"],
        &[("RECODE_SESSION_ID", EVIL)],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "git-recode post-commit: warning: RECODE_SESSION_ID \"{EVIL}\" is not a session id: it must match ^[A-Za-z0-9._:@+-]{{1,200}}$ and not start with `-`; milestone 'implemented' is journaled without it\n"
        )
    );
    let head = env.git(&repo, &["rev-parse", "HEAD"]);
    let journal = std::fs::read_to_string(repo.join(".git/recode/milestones.journal")).unwrap();
    assert_eq!(
        journal,
        format!(
            "{{\"branch\":\"issue-7\",\"head\":\"{head}\",\"kind\":\"milestone\",\"phase\":\"implemented\",\"seq\":0,\"task\":\"7\",\"ts\":\"2026-11-20T12:00:00.000Z\",\"v\":1}}\n"
        )
    );
    // A good id from the hook's environment is journaled as it is.
    let good = commit(
        &env,
        &repo,
        "b.txt",
        "b\n",
        "next\n\nRecode-Phase: tested\n",
        &[("RECODE_SESSION_ID", "s-7")],
    );
    let journal = std::fs::read_to_string(repo.join(".git/recode/milestones.journal")).unwrap();
    assert_eq!(journal.lines().count(), 2, "{journal}");
    assert!(
        journal.lines().nth(1).unwrap().contains(&format!(
            "\"head\":\"{good}\",\"kind\":\"milestone\",\"phase\":\"tested\",\"seq\":0,\"session_id\":\"s-7\""
        )),
        "{journal}"
    );
}
