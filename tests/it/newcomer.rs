//! A newcomer's first hour (issue 25): the `--help` loop tick run exactly as printed,
//! `examples/loop.sh` run with a stand-in agent, README and docs links, errors that name
//! what is wrong, and wording.

use std::path::{Path, PathBuf};

use crate::common::TestEnv;

/// A stand-in `claude` on PATH: it reads all of its stdin (as `claude -p` does when stdin
/// is a pipe), commits one file in its directory, and prints a final message.
pub fn stand_in_agent(env: &TestEnv) -> PathBuf {
    let bin = env.root().join("agent-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("claude");
    std::fs::write(
        &script,
        "#!/bin/sh\n\
         cat >/dev/null\n\
         b=$(git rev-parse --abbrev-ref HEAD)\n\
         echo \"work of $b\" >> agent-work.txt\n\
         git add agent-work.txt && git commit -q -m \"agent: $b\" || exit 1\n\
         echo \"done: committed on $b\"\n",
    )
    .unwrap();
    make_executable(&script);
    bin
}

pub fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// PATH with the stand-in agent and the `git-recode` binary first (so `git recode` works).
pub fn path_with(bin: &Path) -> std::ffi::OsString {
    let exe = assert_cmd::cargo::cargo_bin("git-recode");
    let mut dirs = vec![bin.to_path_buf(), exe.parent().unwrap().to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// A repository with `n` resumable workers `issue-<i>-w` (one commit ahead, clean
/// worktree, an attempt that exited with rc 1).
pub fn resumable(env: &TestEnv, n: u32) -> PathBuf {
    let repo = env.repo("r");
    for i in 1..=n {
        let wt = env.root().join(format!("wt{i}"));
        let b = format!("issue-{i}-w");
        env.git(
            &repo,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                &b,
                wt.to_str().unwrap(),
                "main",
            ],
        );
        std::fs::write(wt.join(format!("f{i}")), "a\n").unwrap();
        env.git(&wt, &["add", "."]);
        env.git(&wt, &["commit", "-q", "-m", &format!("work {i}")]);
        env.ok(
            &repo,
            &["record", "spawn", &b, "--session-id", &format!("s{i}")],
        );
        let msg = env.root().join("msg");
        std::fs::write(&msg, "error: something broke\n").unwrap();
        env.ok(
            &repo,
            &[
                "record",
                "exit",
                &b,
                "--rc",
                "1",
                "--message-file",
                msg.to_str().unwrap(),
            ],
        );
    }
    repo
}

/// `program` in `dir` with the test environment and `bin` (the stand-in agent) and
/// `git-recode` first on PATH.
pub fn with_agent(env: &TestEnv, dir: &Path, program: &str, bin: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    cmd.env_clear();
    for (k, v) in env.cmd(dir).get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    cmd.env("PATH", path_with(bin))
        .env("TMPDIR", env.root())
        .current_dir(dir)
        .stdin(std::process::Stdio::null());
    cmd
}

/// `(kind, branch, message)` of every ledger event, in ledger order.
pub fn events(env: &TestEnv, repo: &Path) -> Vec<(String, String, String)> {
    env.ok(repo, &["log", "--json"])
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let s = |k: &str| v[k].as_str().unwrap_or("").to_string();
            (s("kind"), s("branch"), s("message"))
        })
        .collect()
}

/// The loop tick of `git-recode --help`: the indented lines after "A loop tick".
fn help_loop_tick(env: &TestEnv, repo: &Path) -> String {
    let help = env.ok(repo, &["--help"]);
    let start = help.find("A loop tick").expect("--help shows a loop tick");
    help[start..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| format!("{}\n", &l[2..]))
        .collect()
}

#[test]
fn help_loop_tick_runs_as_printed_and_resumes_every_worker() {
    let env = TestEnv::new();
    let repo = resumable(&env, 2);
    let bin = stand_in_agent(&env);
    let tick = help_loop_tick(&env, &repo);
    assert!(tick.contains("--message-file"), "{tick}");
    let script = env.root().join("tick.sh");
    std::fs::write(&script, &tick).unwrap();
    let run = with_agent(&env, &repo, "bash", &bin)
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "the tick failed:\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let got: Vec<(String, String, String)> = events(&env, &repo)
        .into_iter()
        .filter(|(k, _, _)| k == "resume" || k == "exit")
        .map(|(k, b, m)| (k, b, m.trim_end().to_string()))
        .collect();
    let want = |k: &str, b: &str, m: &str| (k.to_string(), b.to_string(), m.to_string());
    assert_eq!(
        got,
        vec![
            want("exit", "issue-1-w", "error: something broke"),
            want("resume", "issue-1-w", ""),
            want("exit", "issue-1-w", "done: committed on issue-1-w"),
            want("exit", "issue-2-w", "error: something broke"),
            want("resume", "issue-2-w", ""),
            want("exit", "issue-2-w", "done: committed on issue-2-w"),
        ]
    );
    for i in 1..=2 {
        assert_eq!(
            env.git(
                &repo,
                &["log", "-1", "--format=%s", &format!("issue-{i}-w")]
            ),
            format!("agent: issue-{i}-w")
        );
    }
}
