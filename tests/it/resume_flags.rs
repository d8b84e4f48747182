//! SPEC 1.3 "Real agents": a resume runs the agent as the attempt it continues was run
//! (its flags, working directory and configuration directory, recorded at `record spawn`),
//! never with wider permissions; a resumed run that did nothing is not a success. SPEC 1.3
//! "Outcomes: structured first, bounded": `recode.maxTransient`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::TestEnv;

/// A worker `branch` in its own worktree with one commit ahead of `main`.
fn worker(env: &TestEnv, branch: &str) -> (PathBuf, PathBuf) {
    let repo = env.root().join("r");
    if !repo.exists() {
        env.repo("r");
    }
    let wt = env.add_worktree(&repo, branch, &format!("wt-{branch}"));
    std::fs::write(wt.join("work.txt"), "work\n").unwrap();
    env.git(&wt, &["add", "work.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "work"]);
    (repo, wt)
}

/// `resume <branch> --dry-run --json` in `dir`: the document.
fn dry_resume(env: &TestEnv, dir: &Path, branch: &str) -> Value {
    let out = env.ok(dir, &["resume", branch, "--dry-run", "--json"]);
    serde_json::from_str(&out).unwrap()
}

#[test]
fn resume_replays_the_flags_and_configuration_directory_recorded_at_spawn() {
    let env = TestEnv::new();
    let conf = env.root().join("claude-conf");
    // agent, flags after `--`, expected command tail after `cd '<wt>' && unset … && `
    let cases: [(&str, &[&str], &str); 3] = [
        (
            "claude",
            &[
                "--permission-mode",
                "acceptEdits",
                "--model",
                "opus",
                "--allowedTools",
                "Bash",
                "Edit",
            ],
            "CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS=0 CLAUDE_CONFIG_DIR='{C}' claude -p --resume='s-1' '--permission-mode' 'acceptEdits' '--model' 'opus' '--allowedTools' 'Bash' 'Edit' -- \"$(cat '{P}')\"",
        ),
        (
            // Recorded flags replace the profile's defaults (`--yolo --skip-trust`): never wider.
            "gemini",
            &["--approval-mode", "auto_edit", "-m", "gemini-2.5-pro"],
            "gemini --resume 's-2' -p \"$(cat '{P}')\" -o stream-json '--approval-mode' 'auto_edit' '-m' 'gemini-2.5-pro'",
        ),
        (
            "opencode",
            &["--model", "anthropic/claude-sonnet-4-5"],
            "opencode run --format json '--model' 'anthropic/claude-sonnet-4-5' --session='s-3' \"$(cat '{P}')\"",
        ),
    ];
    for (i, (agent, flags, want)) in cases.into_iter().enumerate() {
        let branch = format!("issue-{}-flags", i + 1);
        let (repo, wt) = worker(&env, &branch);
        let session = format!("s-{}", i + 1);
        let mut spawn = vec![
            "record",
            "spawn",
            &branch,
            "--agent",
            agent,
            "--session-id",
            &session,
        ];
        let conf = conf.display().to_string();
        if agent == "claude" {
            spawn.extend(["--config-dir", &conf]);
        }
        spawn.push("--");
        spawn.extend(flags);
        env.ok(&wt, &spawn);
        env.ok(&wt, &["record", "exit", &branch, "--rc", "1"]);
        let log = env.ok(&repo, &["log", &branch, "--json"]);
        let first: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
        assert_eq!(first["agent_args"], serde_json::json!(flags), "{first}");
        let doc = dry_resume(&env, &repo, &branch);
        let prompt = doc["prompt_file"].as_str().unwrap();
        let want = format!(
            "cd '{}' && unset GH_TOKEN GITHUB_TOKEN GITLAB_TOKEN GITEA_TOKEN FORGEJO_TOKEN && {}",
            wt.display(),
            want.replace("{P}", prompt).replace("{C}", &conf)
        );
        assert_eq!(doc["command"], want, "{agent}");
    }
}

#[test]
fn flags_of_another_agent_are_not_replayed_and_a_flag_holding_a_token_is_refused() {
    let env = TestEnv::new();
    let (repo, wt) = worker(&env, "issue-7-other");
    env.ok(
        &wt,
        &[
            "record",
            "spawn",
            "issue-7-other",
            "--agent",
            "claude",
            "--session-id",
            "s-7",
            "--",
            "--model",
            "opus",
        ],
    );
    env.ok(&wt, &["record", "exit", "issue-7-other", "--rc", "1"]);
    env.git(&repo, &["config", "recode.agent", "codex"]);
    let doc = dry_resume(&env, &repo, "issue-7-other");
    let command = doc["command"].as_str().unwrap();
    assert!(
        command.ends_with(&format!(
            "&& codex exec resume -- 's-7' \"$(cat '{}')\"",
            doc["prompt_file"].as_str().unwrap()
        )),
        "{command}"
    );

    let out = env.output(
        &wt,
        &[
            "record",
            "spawn",
            "issue-7-other",
            "--agent",
            "claude",
            "--",
            "--api-key",
            "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("holds a secret") && !err.contains("ghp_0123"),
        "{err}"
    );
}

#[test]
fn a_resumed_run_that_exits_zero_having_done_nothing_is_not_a_success() {
    let env = TestEnv::new();
    let (repo, wt) = worker(&env, "issue-8-idle");
    env.ok(
        &wt,
        &[
            "record",
            "spawn",
            "issue-8-idle",
            "--agent",
            "claude",
            "--session-id",
            "s-8",
        ],
    );
    env.ok(&wt, &["record", "exit", "issue-8-idle", "--rc", "1"]);
    env.ok(&repo, &["resume", "issue-8-idle", "--json"]);
    // No commit, no change: failed, and the message says why.
    let got = env.ok(&wt, &["record", "exit", "issue-8-idle", "--rc", "0"]);
    assert_eq!(got.trim(), "failed");
    let log = env.ok(&repo, &["log", "issue-8-idle", "--json"]);
    let last: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert!(
        last["message"]
            .as_str()
            .unwrap()
            .contains("no new commit and no change"),
        "{last}"
    );
    // A resumed run that committed is a success.
    env.ok(&repo, &["resume", "issue-8-idle", "--json"]);
    std::fs::write(wt.join("more.txt"), "more\n").unwrap();
    env.git(&wt, &["add", "more.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "more"]);
    assert_eq!(
        env.ok(&wt, &["record", "exit", "issue-8-idle", "--rc", "0"])
            .trim(),
        "success"
    );
}

#[test]
fn max_transient_exits_in_a_row_with_no_new_commit_need_a_human() {
    let env = TestEnv::new();
    let (repo, wt) = worker(&env, "issue-9-limit");
    env.git(&repo, &["config", "recode.maxTransient", "3"]);
    let msg = env.root().join("msg.txt");
    std::fs::write(
        &msg,
        "API Error: Request rejected (429) · Rate limit exceeded\n",
    )
    .unwrap();
    let msg = msg.to_str().unwrap();
    let status = || {
        let out = env.ok(&repo, &["classify", "issue-9-limit", "--json", "--offline"]);
        let w: Value = serde_json::from_str(&out).unwrap();
        (
            w["state"].as_str().unwrap().to_string(),
            w["reason"].as_str().unwrap().to_string(),
        )
    };
    for n in 1..=3 {
        env.ok(
            &wt,
            &["record", "spawn", "issue-9-limit", "--agent", "claude"],
        );
        let got = env.ok(
            &wt,
            &[
                "record",
                "exit",
                "issue-9-limit",
                "--rc",
                "1",
                "--message-file",
                msg,
            ],
        );
        assert_eq!(got.trim(), "transient");
        let (state, reason) = status();
        if n < 3 {
            assert_ne!(state, "needs-human", "{reason}");
        } else {
            assert_eq!(state, "needs-human");
            assert_eq!(
                reason,
                "transient for 3 attempts: rc 1: API Error: Request rejected (429) · Rate limit exceeded (recode.maxTransient, no new commit)"
            );
        }
    }
    // A new commit starts the count again.
    std::fs::write(wt.join("new.txt"), "new\n").unwrap();
    env.git(&wt, &["add", "new.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "new"]);
    env.ok(
        &wt,
        &["record", "spawn", "issue-9-limit", "--agent", "claude"],
    );
    env.ok(
        &wt,
        &[
            "record",
            "exit",
            "issue-9-limit",
            "--rc",
            "1",
            "--message-file",
            msg,
        ],
    );
    assert_ne!(status().0, "needs-human");
}

#[test]
fn opencode_killed_having_said_nothing_is_transient_bounded_by_max_transient() {
    // OpenCode 1.18.33 retries a 429 (and 529, 503, 500, a dropped stream, a refused
    // connection) silently until it is killed: its real output then is nothing at all
    // (`tests/data/agents/opencode-1.18.33/429.jsonl`, rc 137).
    let env = TestEnv::new();
    let (repo, wt) = worker(&env, "issue-8-silent");
    env.git(&repo, &["config", "recode.maxTransient", "2"]);
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents/opencode-1.18.33");
    let silent = data.join("429.jsonl");
    assert_eq!(std::fs::read(&silent).unwrap(), b"");
    let exit = |agent: &str, rc: &str, out: &Path| {
        env.ok(
            &wt,
            &["record", "spawn", "issue-8-silent", "--agent", agent],
        );
        let out = out.to_str().unwrap();
        let args = [
            "record",
            "exit",
            "issue-8-silent",
            "--rc",
            rc,
            "--result-json",
            out,
        ];
        env.ok(&wt, &args).trim().to_string()
    };
    // Another agent killed with nothing said is a hung agent: failed.
    assert_eq!(exit("claude", "137", &silent), "failed");
    assert_eq!(exit("opencode", "1", &silent), "failed", "not killed");
    assert_eq!(exit("opencode", "137", &silent), "transient");
    let log = env.ok(&repo, &["log", "issue-8-silent", "--json"]);
    let last: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    let said =
        "git-recode: killed with nothing said (it retries limits and lost connections silently)";
    assert_eq!(last["message"], said);
    // Only `step_start` said before the kill (a dropped stream retried), rc 124 from
    // `timeout`: the same.
    assert_eq!(
        exit("opencode", "124", &data.join("drop.jsonl")),
        "transient"
    );
    let out = env.ok(
        &repo,
        &["classify", "issue-8-silent", "--json", "--offline"],
    );
    let w: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(w["state"], "needs-human");
    assert_eq!(
        w["reason"],
        format!("transient for 2 attempts: rc 124: {said} (recode.maxTransient, no new commit)")
    );
    // An error it said still decides: a 401 is needs-human, killed or not.
    assert_eq!(
        exit("opencode", "137", &data.join("401.jsonl")),
        "needs-human"
    );
}
