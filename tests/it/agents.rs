//! Every agent CLI (SPEC 1.2 "Outcomes: every agent, and old ledgers heal"): each one's
//! sample output read by `record exit --result-json` (tests/data/agents/cases.tsv), the
//! resume command of each profile run as shown by a stand-in binary, session ids that
//! could run code never recorded, templates that quote a placeholder refused, a live
//! agent parked on a limit, and old `failed` exits that heal.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{LATER, TestEnv};

const SPAWN_AT: &str = "2026-11-20T11:00:00Z";
const EXIT_AT: &str = "2026-11-20T12:00:00Z";

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agents")
}

fn at(env: &TestEnv, dir: &Path, when: &str, args: &[&str]) -> std::process::Output {
    env.cmd(dir)
        .env("RECODE_NOW", when)
        .args(args)
        .output()
        .unwrap()
}

fn ok_at(env: &TestEnv, dir: &Path, when: &str, args: &[&str]) -> String {
    let out = at(env, dir, when, args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// A worktree on a new branch `branch` of the repository `r` (made on first use).
fn worker(env: &TestEnv, branch: &str) -> (PathBuf, PathBuf) {
    let repo = env.root().join("r");
    if !repo.exists() {
        env.repo("r");
    }
    let wt = env.root().join(format!("wt-{branch}"));
    env.git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            branch,
            wt.to_str().unwrap(),
            "main",
        ],
    );
    (repo, wt)
}

/// `record spawn` (with `--agent`, and `--session-id` when given) then `record exit
/// --rc rc --result-json file`; returns `record exit`'s stderr.
fn spawn_exit(
    env: &TestEnv,
    wt: &Path,
    branch: &str,
    agent: &str,
    session: Option<&str>,
    rc: &str,
    file: &Path,
) -> String {
    let mut spawn = vec!["record", "spawn", branch, "--agent", agent];
    if let Some(s) = session {
        spawn.extend(["--session-id", s]);
    }
    ok_at(env, wt, SPAWN_AT, &spawn);
    let out = at(
        env,
        wt,
        EXIT_AT,
        &[
            "record",
            "exit",
            branch,
            "--rc",
            rc,
            "--result-json",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn classify(env: &TestEnv, dir: &Path, when: &str, branch: &str) -> serde_json::Value {
    serde_json::from_str(&ok_at(env, dir, when, &["classify", branch, "--json"])).unwrap()
}

fn last_event(env: &TestEnv, dir: &Path, branch: &str) -> serde_json::Value {
    let log = env.ok(dir, &["log", branch, "--json"]);
    serde_json::from_str(log.lines().last().unwrap()).unwrap()
}

fn opt(s: &str) -> serde_json::Value {
    if s.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::Value::String(s.to_string())
    }
}

/// Each row of tests/data/agents/cases.tsv: the agent's sample output gives exactly its
/// outcome, `fresh`, the worker's session id and `retry_after`. The session id comes from
/// the output itself (the spawn names none) except for Goose, which emits none.
#[test]
fn each_agents_sample_output_gives_its_outcome_session_and_retry_after() {
    let env = TestEnv::new();
    let table = std::fs::read_to_string(data().join("cases.tsv")).unwrap();
    let mut agents = std::collections::BTreeSet::new();
    for (i, row) in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .enumerate()
    {
        let c: Vec<&str> = row.split('\t').collect();
        assert_eq!(c.len(), 9, "bad row: {row}");
        let [
            agent,
            file,
            rc,
            outcome,
            fresh,
            session,
            retry,
            spawn_session,
            source,
        ] = c[..].try_into().unwrap();
        assert!(!source.is_empty(), "source of {file}");
        let branch = format!("issue-{}", 100 + i);
        let (repo, wt) = worker(&env, &branch);
        let session_arg = (!spawn_session.is_empty()).then_some(spawn_session);
        spawn_exit(
            &env,
            &wt,
            &branch,
            agent,
            session_arg,
            rc,
            &data().join(file),
        );
        let e = last_event(&env, &repo, &branch);
        assert_eq!(e["kind"], "exit", "{file}");
        assert_eq!(
            (&e["outcome"], &e["fresh"], &e["retry_after"]),
            (
                &opt(outcome),
                &if fresh == "true" {
                    serde_json::Value::Bool(true)
                } else {
                    serde_json::Value::Null
                },
                &opt(retry)
            ),
            "{agent} {file}"
        );
        if spawn_session.is_empty() {
            assert_eq!(
                e["session_id"],
                opt(session),
                "{agent} {file}: exit's session"
            );
        }
        let w = classify(&env, &repo, EXIT_AT, &branch);
        assert_eq!(
            w["session_id"],
            opt(session),
            "{agent} {file}: worker's session"
        );
        agents.insert(agent.to_string());
    }
    assert_eq!(
        agents.into_iter().collect::<Vec<_>>(),
        [
            "aider", "amp", "claude", "codex", "copilot", "cursor", "gemini", "goose", "opencode"
        ]
    );
}

/// A stand-in for every agent binary in `dir`: it writes its directory, the Claude
/// background-wait variable and each argument to `$STANDIN_LOG`, one a line.
fn stand_ins(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for bin in [
        "claude",
        "codex",
        "gemini",
        "opencode",
        "cursor-agent",
        "copilot",
        "amp",
        "goose",
        "aider",
        "my-agent",
    ] {
        let p = dir.join(bin);
        std::fs::write(
            &p,
            format!(
                "#!/bin/sh\n{{ echo \"bin={bin}\"; echo \"cwd=$PWD\"; echo \"bg=${{CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS-unset}}\"; for a in \"$@\"; do echo \"arg=$a\"; done; }} > \"$STANDIN_LOG\"\n"
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// Run a printed command with `sh -c`, the stand-ins first on `PATH`; returns the log.
fn run_shown(env: &TestEnv, command: &str) -> String {
    let bin = env.root().join("bin");
    let log = env.root().join("standin.log");
    let _ = std::fs::remove_file(&log);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(command)
        .env("PATH", path)
        .env("STANDIN_LOG", &log)
        .current_dir(env.root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(&log).unwrap()
}

/// SPEC 1.2 "every agent": `resume --dry-run --json` prints each agent's own resume
/// command with the session id its output recorded (Aider, which has no sessions: its
/// fresh form); the real `resume` hands out the same command, which runs as shown in
/// the worker's directory with the prompt as one argument. Claude gets
/// `CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS=0`. `recode.agent NAME` selects a profile.
#[test]
fn resume_prints_each_agents_command_and_it_runs_as_shown() {
    let env = TestEnv::new();
    stand_ins(&env.root().join("bin"));
    // agent, sample, spawn session, session id, expected command with {W} (worktree), {I}
    // (session id), {P} (prompt file)
    let cases: [(&str, &str, Option<&str>, &str, &str); 9] = [
        (
            "claude",
            "claude/json-success.json",
            None,
            "6f1c2b7e-3d4a-4b5c-9e8f-0a1b2c3d4e5f",
            "cd '{W}' && unset GH_TOKEN GITHUB_TOKEN GITLAB_TOKEN GITEA_TOKEN FORGEJO_TOKEN && CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS=0 claude -p --resume='{I}' -- \"$(cat '{P}')\"",
        ),
        (
            "codex",
            "codex/exec.jsonl",
            None,
            "0199a213-81c0-7800-8aa1-bbab2a035a53",
            "cd '{W}' && unset GH_TOKEN GITHUB_TOKEN GITLAB_TOKEN GITEA_TOKEN FORGEJO_TOKEN && codex exec resume -- '{I}' \"$(cat '{P}')\"",
        ),
        (
            "gemini",
            "gemini/stream-success.jsonl",
            None,
            "f20edd97-8178-43ab-8c21-f4c533cb9c11",
            "cd '{W}' && unset GH_TOKEN GITHUB_TOKEN GITLAB_TOKEN GITEA_TOKEN FORGEJO_TOKEN && gemini --resume '{I}' -p \"$(cat '{P}')\" -o stream-json --yolo --skip-trust",
        ),
        (
            "opencode",
            "opencode/run-success.jsonl",
            None,
            "ses_f7eaf57b4ffeRoCprFrTfUsZZJ",
            "cd '{W}' && unset GH_TOKEN GITHUB_TOKEN GITLAB_TOKEN GITEA_TOKEN FORGEJO_TOKEN && opencode run --format json --auto --session='{I}' \"$(cat '{P}')\"",
        ),
        (
            "cursor",
            "cursor/stream-success.jsonl",
            None,
            "3c5d7e9f-1a2b-4c3d-8e4f-5a6b7c8d9e0f",
            "cd '{W}' && unset GH_TOKEN GITHUB_TOKEN GITLAB_TOKEN GITEA_TOKEN FORGEJO_TOKEN && cursor-agent -p --output-format stream-json --force --resume='{I}' \"$(cat '{P}')\"",
        ),
        (
            "copilot",
            "copilot/json-success.jsonl",
            None,
            "aa778ea0-6eab-4ce9-b87e-11d6d33dab4f",
            "cd '{W}' && unset GH_TOKEN GITHUB_TOKEN GITLAB_TOKEN GITEA_TOKEN FORGEJO_TOKEN && copilot -p \"$(cat '{P}')\" --output-format json -s --allow-all --autopilot --no-ask-user --resume='{I}'",
        ),
        (
            "amp",
            "amp/stream-success.jsonl",
            None,
            "T-019c479a-39cc-72af-a2d1-65a965c076ec",
            "cd '{W}' && unset GH_TOKEN GITHUB_TOKEN GITLAB_TOKEN GITEA_TOKEN FORGEJO_TOKEN && amp threads continue '{I}' -x --stream-json --dangerously-allow-all \"$(cat '{P}')\"",
        ),
        (
            "goose",
            "goose/stream-success.jsonl",
            Some("recode-issue-7"),
            "recode-issue-7",
            "cd '{W}' && unset GH_TOKEN GITHUB_TOKEN GITLAB_TOKEN GITEA_TOKEN FORGEJO_TOKEN && goose run -r --name='{I}' -t \"$(cat '{P}')\" --output-format stream-json",
        ),
        (
            "aider",
            "aider/success.txt",
            None,
            "",
            "cd '{W}' && unset GH_TOKEN GITHUB_TOKEN GITLAB_TOKEN GITEA_TOKEN FORGEJO_TOKEN && aider --yes-always --message-file '{P}'",
        ),
    ];
    for (i, (agent, sample, spawn_session, id, want)) in cases.into_iter().enumerate() {
        let branch = format!("issue-{}", 200 + i);
        let (repo, wt) = worker(&env, &branch);
        spawn_exit(
            &env,
            &wt,
            &branch,
            agent,
            spawn_session,
            "0",
            &data().join(sample),
        );
        let w = wt.display().to_string();
        let dry: serde_json::Value = serde_json::from_str(&ok_at(
            &env,
            &repo,
            LATER,
            &["resume", &branch, "--dry-run", "--json"],
        ))
        .unwrap();
        let prompt = dry["prompt_file"].as_str().unwrap().to_string();
        let want = want
            .replace("{W}", &w)
            .replace("{I}", id)
            .replace("{P}", &prompt);
        assert_eq!(dry["command"], want.as_str(), "{agent}");
        assert_eq!(
            dry["mode"],
            if agent == "aider" { "fresh" } else { "session" },
            "{agent}"
        );
        // The real resume hands out the same command; it runs as shown.
        let real: serde_json::Value =
            serde_json::from_str(&ok_at(&env, &repo, LATER, &["resume", &branch, "--json"]))
                .unwrap();
        assert_eq!(real["command"], want.as_str(), "{agent}");
        let log = run_shown(&env, &want);
        let text = std::fs::read_to_string(&prompt).unwrap();
        assert!(log.contains(&format!("\ncwd={w}\n")), "{agent}: {log}");
        let bg = if agent == "claude" { "0" } else { "unset" };
        assert!(log.contains(&format!("\nbg={bg}\n")), "{agent}: {log}");
        if !id.is_empty() {
            // The id alone (after `--`, or Amp's operand), or glued to its option.
            assert!(
                log.contains(&format!("\narg={id}\n"))
                    || log.contains(&format!("=={id}\n"))
                    || log
                        .lines()
                        .any(|l| l.starts_with("arg=--") && l.ends_with(&format!("={id}"))),
                "{agent}: {log}"
            );
        }
        let prompt_arg = if agent == "aider" {
            format!("arg={prompt}\n")
        } else {
            format!("arg={}\n", text.trim_end())
        };
        assert!(log.contains(&prompt_arg), "{agent}: {log}");
    }
    // `recode.agent NAME` selects the profile for a spawn that names no agent.
    let (repo, wt) = worker(&env, "issue-220");
    env.git(&repo, &["config", "recode.agent", "opencode"]);
    ok_at(&env, &wt, SPAWN_AT, &["record", "spawn", "issue-220"]);
    let f = data().join("opencode/error-rate-limited.jsonl");
    let out = ok_at(
        &env,
        &wt,
        EXIT_AT,
        &[
            "record",
            "exit",
            "issue-220",
            "--rc",
            "1",
            "--result-json",
            f.to_str().unwrap(),
        ],
    );
    assert_eq!(out, "transient\n");
    let dry: serde_json::Value = serde_json::from_str(&ok_at(
        &env,
        &repo,
        LATER,
        &["resume", "issue-220", "--dry-run", "--json"],
    ))
    .unwrap();
    assert_eq!(
        dry["command"],
        format!(
            "cd '{}' && unset GH_TOKEN GITHUB_TOKEN GITLAB_TOKEN GITEA_TOKEN FORGEJO_TOKEN && opencode run --format json --auto --session='ses_0e44d0893ffeqpBmONanFLzzWT' \"$(cat '{}')\"",
            wt.display(),
            dry["prompt_file"].as_str().unwrap()
        )
    );
}

/// SPEC 1.2 "Untrusted input stays out": a session id outside
/// `^[A-Za-z0-9._:@+-]{1,200}$` is never recorded (a warning says so), from `--session-id`
/// or from `--result-json`; the command handed out never runs it.
#[test]
fn a_session_id_that_could_run_code_is_never_recorded_nor_run() {
    let env = TestEnv::new();
    stand_ins(&env.root().join("bin"));
    let (repo, wt) = worker(&env, "issue-230");
    env.git(
        &repo,
        &["config", "recode.agent", "my-agent --session {session_id}"],
    );
    let evil = "x$(touch PWNED)";
    let out = at(
        &env,
        &wt,
        SPAWN_AT,
        &["record", "spawn", "issue-230", "--session-id", evil],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "warning: session id \"x$(touch PWNED)\" is not recorded: it must match ^[A-Za-z0-9._:@+-]{1,200}$ and not start with `-`\n"
    );
    let json = env.root().join("evil.jsonl");
    std::fs::write(
        &json,
        format!(
            "{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"{evil}\"}}\n{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"Fixed it; tests pass.\",\"session_id\":\"{evil}\"}}\n"
        ),
    )
    .unwrap();
    let out = at(
        &env,
        &wt,
        EXIT_AT,
        &[
            "record",
            "exit",
            "issue-230",
            "--rc",
            "0",
            "--result-json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("session id \"x$(touch PWNED)\" is not recorded"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = env.ok(&repo, &["log", "issue-230", "--json"]);
    assert!(!log.contains("PWNED"), "{log}");
    let dry: serde_json::Value = serde_json::from_str(&ok_at(
        &env,
        &repo,
        LATER,
        &["resume", "issue-230", "--dry-run", "--json"],
    ))
    .unwrap();
    assert_eq!(dry["session_id"], serde_json::Value::Null);
    let cmd = dry["command"].as_str().unwrap();
    assert_eq!(
        cmd,
        format!(
            "cd '{}' && unset GH_TOKEN GITHUB_TOKEN GITLAB_TOKEN GITEA_TOKEN FORGEJO_TOKEN && my-agent --session ''",
            wt.display()
        )
    );
    run_shown(&env, cmd);
    assert!(!wt.join("PWNED").exists() && !env.root().join("PWNED").exists());
}

/// SPEC `recode.agent`: a template that puts a placeholder inside its own quotes is
/// refused at use (exit 2, naming the key), and nothing is ledgered.
#[test]
fn a_template_that_quotes_a_placeholder_is_refused() {
    let env = TestEnv::new();
    let (repo, wt) = worker(&env, "issue-240");
    ok_at(
        &env,
        &wt,
        SPAWN_AT,
        &["record", "spawn", "issue-240", "--session-id", "s-240"],
    );
    let before = env.ok(&repo, &["log", "--json"]);
    for template in [
        "my-agent --resume '{session_id}' {prompt_file}",
        "my-agent --in \"{cwd}\" {prompt_file}",
        "my-agent --prompt \"$(cat {prompt_file})\"",
    ] {
        env.git(&repo, &["config", "recode.agent", template]);
        let out = at(&env, &repo, LATER, &["resume", "issue-240", "--json"]);
        assert_eq!(out.status.code(), Some(2), "{template}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("recode.agent"), "{err}");
        assert!(err.contains("is inside quotes"), "{err}");
    }
    assert_eq!(env.ok(&repo, &["log", "--json"]), before);
    // Bare placeholders are fine.
    env.git(
        &repo,
        &[
            "config",
            "recode.agent",
            "my-agent --resume {session_id} {prompt_file}",
        ],
    );
    ok_at(
        &env,
        &repo,
        LATER,
        &["resume", "issue-240", "--dry-run", "--json"],
    );
}

/// SPEC 1.2 "parked on a limit": a live agent whose newest output (the `record spawn
/// --output` file) says it waits on a limit is `running`, action `wait`, with the
/// `retry_after` its output names; with no activity past `retry_after` +
/// `recode.stallAfter` it is `stalled`, its pid alive or not.
#[test]
fn a_live_agent_parked_on_a_limit_waits_then_stalls() {
    let env = TestEnv::new();
    let (repo, wt) = worker(&env, "issue-250");
    let out = env.root().join("agent-250.out");
    // A stand-in agent: prints OpenCode's retry banner, then waits as OpenCode does.
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("echo 'Rate Limited [retrying in 2h5m attempt #4]'; exec sleep 60")
        .stdout(std::fs::File::create(&out).unwrap())
        .spawn()
        .unwrap();
    for _ in 0..200 {
        if std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0) > 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let mtime = std::fs::metadata(&out)
        .unwrap()
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let stamp = |secs: i64| {
        jiff::Timestamp::from_second(secs)
            .unwrap()
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string()
    };
    let pid = child.id().to_string();
    ok_at(
        &env,
        &wt,
        &stamp(mtime),
        &[
            "record",
            "spawn",
            "issue-250",
            "--agent",
            "opencode",
            "--pid",
            &pid,
            "--output",
            out.to_str().unwrap(),
        ],
    );
    let reset = mtime + 2 * 3600 + 5 * 60;
    // An hour in: running, waiting for the limit.
    let w = classify(&env, &repo, &stamp(mtime + 3600), "issue-250");
    assert_eq!(
        (&w["liveness"], &w["action"], &w["retry_after"]),
        (
            &serde_json::json!("running"),
            &serde_json::json!("wait"),
            &serde_json::json!(stamp(reset))
        ),
        "{w:#}"
    );
    // Within stallAfter (30 min) of the reset: still running.
    let w = classify(&env, &repo, &stamp(reset + 29 * 60), "issue-250");
    assert_eq!(w["liveness"], "running", "{w:#}");
    // Past it, with no activity since: stalled, though the pid is alive.
    let w = classify(&env, &repo, &stamp(reset + 31 * 60), "issue-250");
    assert_eq!(w["liveness"], "stalled", "{w:#}");
    assert!(
        w["evidence"].as_array().unwrap().iter().any(|e| e
            .as_str()
            .unwrap()
            .starts_with("stalled: the newest attempt 1")),
        "{w:#}"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    // A gone process waits on nothing: with its pid dead the limit line parks nothing.
    let w = classify(&env, &repo, &stamp(mtime + 3600), "issue-250");
    assert_eq!(
        (&w["liveness"], &w["retry_after"]),
        (&serde_json::json!("stalled"), &serde_json::Value::Null),
        "{w:#}"
    );
}

/// The newest line decides: progress after a limit line is not parked.
#[test]
fn progress_after_a_limit_line_is_not_parked() {
    let env = TestEnv::new();
    let (repo, wt) = worker(&env, "issue-251");
    let out = env.root().join("agent-251.out");
    std::fs::write(
        &out,
        "Rate Limited [retrying in 2h5m attempt #4]\nediting src/lib.rs\n",
    )
    .unwrap();
    ok_at(
        &env,
        &wt,
        SPAWN_AT,
        &[
            "record",
            "spawn",
            "issue-251",
            "--output",
            out.to_str().unwrap(),
        ],
    );
    let w = classify(&env, &repo, SPAWN_AT, "issue-251");
    assert_eq!(w["retry_after"], serde_json::Value::Null, "{w:#}");
    std::fs::write(
        &out,
        "editing src/lib.rs\nRate Limited [retrying in 2h5m attempt #4]\n",
    )
    .unwrap();
    let w = classify(&env, &repo, SPAWN_AT, "issue-251");
    assert_ne!(w["retry_after"], serde_json::Value::Null, "{w:#}");
}

/// One ledger line as an old git-recode wrote it.
fn line(task: &str, seq: u32, ts: &str, body: &str) -> String {
    format!(
        "{{\"branch\":\"issue-{task}\",{body},\"seq\":{seq},\"task\":\"{task}\",\"ts\":\"{ts}\",\"v\":1}}"
    )
}

/// Write `lines` as task `task`'s ledger with plain git (`git notes add`).
fn plain_git_ledger(env: &TestEnv, repo: &Path, task: &str, lines: &[String]) {
    let anchor_file = env.root().join(format!("anchor-{task}"));
    std::fs::write(&anchor_file, format!("recode-task {task}\n")).unwrap();
    let anchor = env.git(repo, &["hash-object", "-w", anchor_file.to_str().unwrap()]);
    let note = env.root().join(format!("note-{task}"));
    std::fs::write(&note, lines.join("\n") + "\n").unwrap();
    env.git(
        repo,
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

/// SPEC 1.2 "old ledgers heal": three exits an old reading recorded `failed`, whose
/// messages read transient today (Gemini's per-minute limit with billing words and a
/// retry delay), no longer count toward the cap; three real failures still do; a
/// recorded `needs-human` or `success` is never re-read.
#[test]
fn old_failed_exits_that_read_transient_heal() {
    let env = TestEnv::new();
    let (repo, _) = worker(&env, "issue-260");
    for b in ["issue-261", "issue-262"] {
        env.git(&repo, &["branch", b, "main"]);
    }
    let limit = "[API Error: You exceeded your current quota, please check your plan and billing details.\\n* Quota exceeded for metric: generate_content_free_tier_requests, limit: 2\\nPlease retry in 44.097740004s.]";
    let ledger = |task: &str, outcome: &str, message: &str| -> Vec<String> {
        let mut out = Vec::new();
        for i in 0..3u32 {
            out.push(line(
                task,
                2 * i + 1,
                &format!("2026-11-20T0{i}:00:00.000Z"),
                &format!(
                    "\"attempt\":{},\"cwd\":\"/gone\",\"host\":\"old\",\"kind\":\"spawn\"",
                    i + 1
                ),
            ));
            out.push(line(
                task,
                2 * i + 2,
                &format!("2026-11-20T0{i}:30:00.000Z"),
                &format!(
                    "\"kind\":\"exit\",\"message\":\"{message}\",\"outcome\":\"{outcome}\",\"rc\":1"
                ),
            ));
        }
        out
    };
    plain_git_ledger(&env, &repo, "260", &ledger("260", "failed", limit));
    plain_git_ledger(
        &env,
        &repo,
        "261",
        &ledger(
            "261",
            "failed",
            "error: could not compile `demo` (lib) due to 3 previous errors",
        ),
    );
    plain_git_ledger(&env, &repo, "262", &ledger("262", "needs-human", limit));
    let w = classify(&env, &repo, EXIT_AT, "issue-260");
    assert_eq!(
        (&w["attempts"], &w["last_outcome"], &w["retry_after"]),
        (
            &serde_json::json!(0),
            &serde_json::json!("transient"),
            &serde_json::json!("2026-11-20T02:30:45Z")
        ),
        "{w:#}"
    );
    assert_ne!(w["state"], "needs-human", "{w:#}");
    let w = classify(&env, &repo, EXIT_AT, "issue-261");
    assert_eq!(
        (&w["attempts"], &w["last_outcome"], &w["state"]),
        (
            &serde_json::json!(3),
            &serde_json::json!("failed"),
            &serde_json::json!("needs-human")
        ),
        "{w:#}"
    );
    let w = classify(&env, &repo, EXIT_AT, "issue-262");
    assert_eq!(w["last_outcome"], "needs-human", "{w:#}");
    // The ledger itself is left as written: the healing is in the reading.
    let log = env.ok(&repo, &["log", "issue-260", "--json"]);
    assert_eq!(log.matches("\"outcome\":\"failed\"").count(), 3, "{log}");
}

/// SPEC 1.2 "Untrusted input stays out": `--result-json` is read line by line; a line
/// over 1 MiB is skipped with a warning and the lines around it still count.
#[test]
fn a_line_over_one_mebibyte_is_skipped_with_a_warning() {
    let env = TestEnv::new();
    let (repo, wt) = worker(&env, "issue-270");
    let f = env.root().join("big.jsonl");
    let big = format!(
        "{{\"type\":\"assistant\",\"message\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}}}}",
        "a".repeat(2 << 20)
    );
    std::fs::write(
        &f,
        format!(
            "{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-270\"}}\n{big}\n{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"Done; tests pass.\",\"session_id\":\"s-270\"}}\n"
        ),
    )
    .unwrap();
    let err = spawn_exit(&env, &wt, "issue-270", "claude", None, "0", &f);
    assert_eq!(
        err,
        format!("warning: 1 line(s) of {} over 1 MiB skipped\n", f.display())
    );
    let e = last_event(&env, &repo, "issue-270");
    assert_eq!(
        (&e["outcome"], &e["session_id"], &e["message"]),
        (
            &serde_json::json!("success"),
            &serde_json::json!("s-270"),
            &serde_json::json!("Done; tests pass.")
        )
    );
}
