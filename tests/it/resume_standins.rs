//! SPEC 1.3 "Real agents" for the profiles with no real CLI in the tests (`cursor`,
//! `copilot`, `amp`, `goose`, `aider`): a stand-in executable under each binary's name
//! records the argv and working directory it is run with. The loop runs it with its flags
//! and records them (`record spawn -- FLAGS`); the command `resume` prints, run by `sh`,
//! must run it again with exactly those flags (a value with a space or a quote intact),
//! its session and the resume prompt, in the attempt's directory, and never with the
//! profile's wider default permissions (`--force`, `--allow-all`, `--dangerously-allow-all`,
//! `--yes-always`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::TestEnv;

/// The stand-in: writes its working directory and its arguments (NUL-ended) beside
/// `$ARGV_DIR/<name>`.
const STANDIN: &str = "#!/bin/sh\nname=$(basename \"$0\")\npwd -P > \"$ARGV_DIR/$name.cwd\"\nprintf '%s\\0' \"$@\" > \"$ARGV_DIR/$name.argv\"\n";

/// One profile: its name, binary, the recorded flags, the session id, and the resumed argv
/// with `{P}` for the prompt's text, `{F}` for the prompt file.
struct Case {
    agent: &'static str,
    binary: &'static str,
    flags: &'static [&'static str],
    session: Option<&'static str>,
    resumed: &'static [&'static str],
}

const CASES: [Case; 5] = [
    Case {
        agent: "cursor",
        binary: "cursor-agent",
        flags: &["--model", "gpt-5", "--sandbox", "enabled"],
        session: Some("3c5d7e9f-1a2b-4c3d-8e4f-5a6b7c8d9e0f"),
        resumed: &[
            "-p",
            "--output-format",
            "stream-json",
            "--model",
            "gpt-5",
            "--sandbox",
            "enabled",
            "--resume=3c5d7e9f-1a2b-4c3d-8e4f-5a6b7c8d9e0f",
            "{P}",
        ],
    },
    Case {
        agent: "copilot",
        binary: "copilot",
        flags: &[
            "--model",
            "claude-sonnet-4.5",
            "--allow-tool",
            "shell(git commit:*)",
            "--deny-tool",
            "write",
        ],
        session: Some("aa778ea0-6eab-4ce9-b87e-11d6d33dab4f"),
        resumed: &[
            "-p",
            "{P}",
            "--output-format",
            "json",
            "-s",
            "--model",
            "claude-sonnet-4.5",
            "--allow-tool",
            "shell(git commit:*)",
            "--deny-tool",
            "write",
            "--resume=aa778ea0-6eab-4ce9-b87e-11d6d33dab4f",
        ],
    },
    Case {
        agent: "amp",
        binary: "amp",
        flags: &["--mode", "smart", "--settings-file", "/etc/amp/it's.json"],
        session: Some("T-019c479a-39cc-72af-a2d1-65a965c076ec"),
        resumed: &[
            "threads",
            "continue",
            "T-019c479a-39cc-72af-a2d1-65a965c076ec",
            "-x",
            "--stream-json",
            "--mode",
            "smart",
            "--settings-file",
            "/etc/amp/it's.json",
            "{P}",
        ],
    },
    Case {
        agent: "goose",
        binary: "goose",
        flags: &[
            "--provider",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
            "--max-turns",
            "30",
        ],
        session: Some("recode-issue-4"),
        resumed: &[
            "run",
            "-r",
            "--name=recode-issue-4",
            "--provider",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
            "--max-turns",
            "30",
            "-t",
            "{P}",
            "--output-format",
            "stream-json",
        ],
    },
    Case {
        // No sessions: its fresh form, with the recorded flags.
        agent: "aider",
        binary: "aider",
        flags: &["--model", "sonnet", "--no-auto-commits"],
        session: None,
        resumed: &[
            "--model",
            "sonnet",
            "--no-auto-commits",
            "--message-file",
            "{F}",
        ],
    },
];

/// The profile's wider default permissions, never added to recorded flags.
const WIDER: [&str; 5] = [
    "--force",
    "--allow-all",
    "--autopilot",
    "--dangerously-allow-all",
    "--yes-always",
];

/// A worker `branch` in its own worktree with one commit ahead of `main`.
fn worker(env: &TestEnv, repo: &Path, branch: &str) -> PathBuf {
    let wt = env.add_worktree(repo, branch, &format!("wt-{branch}"));
    std::fs::write(wt.join("work.txt"), "work\n").unwrap();
    env.git(&wt, &["add", "work.txt"]);
    env.git(&wt, &["commit", "-q", "-m", "work"]);
    wt
}

/// The stand-in's recorded (cwd, argv) after a run.
fn recorded(dir: &Path, binary: &str) -> (PathBuf, Vec<String>) {
    let cwd = std::fs::read_to_string(dir.join(format!("{binary}.cwd"))).unwrap();
    let argv = std::fs::read(dir.join(format!("{binary}.argv"))).unwrap();
    let argv = argv
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8(a.to_vec()).unwrap())
        .collect();
    (PathBuf::from(cwd.trim_end()), argv)
}

#[test]
fn each_profile_without_a_real_cli_resumes_with_the_recorded_flags_in_its_directory() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let repo = env.repo("r");
    let bin = env.root().join("standins");
    let argv_dir = env.root().join("argv");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&argv_dir).unwrap();
    for case in &CASES {
        let exe = bin.join(case.binary);
        std::fs::write(&exe, STANDIN).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    for (i, case) in CASES.iter().enumerate() {
        let branch = format!("issue-{}-{}", i + 1, case.agent);
        let wt = worker(&env, &repo, &branch);
        // The loop's first run: the profile's fresh form with its flags, in the worktree.
        let mut first = Command::new(bin.join(case.binary));
        first
            .args(case.flags)
            .arg("first prompt")
            .current_dir(&wt)
            .env("ARGV_DIR", &argv_dir);
        assert!(first.status().unwrap().success());
        let mut spawn = vec!["record", "spawn", &branch, "--agent", case.agent];
        let wt_s = wt.display().to_string();
        spawn.extend(["--cwd", &wt_s]);
        if let Some(s) = case.session {
            spawn.extend(["--session-id", s]);
        }
        spawn.push("--");
        spawn.extend(case.flags);
        env.ok(&wt, &spawn);
        env.ok(&wt, &["record", "exit", &branch, "--rc", "1"]);
        // The next tick resumes it: the printed command, run from the repository.
        let prompt = env.root().join(format!("prompt-{i}.md"));
        let out = env.ok(
            &repo,
            &[
                "resume",
                &branch,
                "--json",
                "--output",
                prompt.to_str().unwrap(),
            ],
        );
        let doc: Value = serde_json::from_str(&out).unwrap();
        let mode = if case.session.is_some() {
            "session"
        } else {
            "fresh"
        };
        assert_eq!(doc["mode"], mode, "{}: {doc}", case.agent);
        let command = doc["command"].as_str().unwrap();
        let sh = env.git_cmd(&repo);
        let ran = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(&repo)
            .envs(sh.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .env("PATH", &path)
            .env("ARGV_DIR", &argv_dir)
            .status()
            .unwrap();
        assert!(ran.success(), "{}: {command}", case.agent);
        let (cwd, argv) = recorded(&argv_dir, case.binary);
        // `"$(cat F)"`: the prompt's text without its final newlines.
        let text = std::fs::read_to_string(&prompt).unwrap();
        let text = text.trim_end_matches('\n');
        let file = prompt.display().to_string();
        let want: Vec<String> = case
            .resumed
            .iter()
            .map(|a| a.replace("{P}", text).replace("{F}", &file))
            .collect();
        assert_eq!(argv, want, "{}: {command}", case.agent);
        assert_eq!(cwd, wt.canonicalize().unwrap(), "{}", case.agent);
        let widened: Vec<&String> = argv
            .iter()
            .filter(|a| WIDER.contains(&a.as_str()))
            .collect();
        assert!(widened.is_empty(), "{}: {widened:?}", case.agent);
    }
}
