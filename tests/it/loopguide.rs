//! docs/loop-guide.md's examples, each run as it is printed there: the crontab line, the
//! systemd units (checked by `systemd-analyze verify` where it is installed, then their
//! command run as systemd would), the tmux session, and the CI jobs' commands.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{LATER, TestEnv};
use crate::newcomer::{make_executable, path_with, stand_in_agent};

fn manifest(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn guide() -> String {
    std::fs::read_to_string(manifest("docs/loop-guide.md")).unwrap()
}

/// The fenced blocks of `text` whose info string is `lang`, in order.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in text.lines() {
        match (&mut cur, line.strip_prefix("```")) {
            (None, Some(info)) if info.trim() == lang => cur = Some(String::new()),
            (Some(_), Some("")) => out.extend(cur.take()),
            (Some(b), _) => {
                b.push_str(line);
                b.push('\n');
            }
            _ => {}
        }
    }
    out
}

/// `~/src/app`: a repository with an empty, dead worker `issue-1` (its action `delete`),
/// and `~/bin/recode-loop.sh`, a copy of examples/loop.sh, as the guide sets them up.
fn set_up(env: &TestEnv) -> PathBuf {
    stand_in_agent(env);
    std::fs::create_dir_all(env.home.join("src")).unwrap();
    let repo = env.home.join("src/app");
    std::fs::create_dir_all(&repo).unwrap();
    env.git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("README.md"), "app\n").unwrap();
    env.git(&repo, &["add", "README.md"]);
    env.git(&repo, &["commit", "-q", "-m", "init"]);
    env.git(&repo, &["branch", "issue-1"]);
    env.ok(&repo, &["record", "spawn", "issue-1", "--agent", "claude"]);
    env.ok(&repo, &["record", "exit", "issue-1", "--rc", "1"]);
    let bin = env.home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(manifest("examples/loop.sh"), bin.join("recode-loop.sh")).unwrap();
    make_executable(&bin.join("recode-loop.sh"));
    repo
}

/// `sh -c <command>` in `dir` as a scheduler would start it: the test environment (no git
/// identity, as on a fresh runner), `git`, `git-recode` and the stand-in agent on PATH.
fn sh(env: &TestEnv, dir: &Path, command: &str) -> std::process::Output {
    let mut cmd = Command::new("sh");
    for (k, v) in env.cmd(dir).get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    for k in [
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
    ] {
        cmd.env_remove(k);
    }
    cmd.env("PATH", path_with(&env.root().join("agent-bin")))
        .env("RECODE_NOW", LATER)
        .env("TMPDIR", env.root())
        .current_dir(dir)
        .arg("-c")
        .arg(command)
        .output()
        .unwrap()
}

/// The worker was recovered (deleted as empty) by the tick.
fn ticked(env: &TestEnv, repo: &Path) -> bool {
    env.git(repo, &["branch", "--list", "issue-1"]).is_empty()
}

fn ok(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_guide_shows_each_example_file_as_it_is() {
    let g = guide();
    for f in [
        "examples/systemd/recode-loop.service",
        "examples/systemd/recode-loop.timer",
        "examples/ci/github-actions.yml",
        "examples/ci/gitlab-ci.yml",
    ] {
        let text = std::fs::read_to_string(manifest(f)).unwrap();
        assert!(
            g.contains(&format!("\n{text}```\n")),
            "{f} is not in the guide as it is"
        );
    }
}

#[test]
fn the_crontab_line_runs_a_tick() {
    let env = TestEnv::new();
    let repo = set_up(&env);
    let line = blocks(&guide(), "crontab").concat();
    let fields: Vec<&str> = line.trim().splitn(6, ' ').collect();
    assert_eq!(fields[..5], ["*/5", "*", "*", "*", "*"]);
    ok(&sh(&env, &env.home, fields[5]));
    assert!(ticked(&env, &repo));
    assert!(env.home.join("recode-loop.log").is_file());
}

/// A unit file's value of `key` (the last one), `%h` as systemd expands it for a user.
fn unit_value(text: &str, key: &str, home: &Path) -> String {
    text.lines()
        .filter_map(|l| l.strip_prefix(&format!("{key}=")))
        .next_back()
        .unwrap_or_else(|| panic!("no {key}= in the unit"))
        .replace("%h", &home.display().to_string())
}

#[test]
fn the_systemd_units_verify_and_the_service_runs_a_tick() {
    let env = TestEnv::new();
    let repo = set_up(&env);
    let service =
        std::fs::read_to_string(manifest("examples/systemd/recode-loop.service")).unwrap();
    let units = env.root().join("units");
    std::fs::create_dir_all(&units).unwrap();
    for f in ["recode-loop.service", "recode-loop.timer"] {
        std::fs::copy(manifest(&format!("examples/systemd/{f}")), units.join(f)).unwrap();
    }
    if let Ok(out) = Command::new("systemd-analyze")
        .env("HOME", &env.home)
        .current_dir(&units)
        .args(["verify", "./recode-loop.service", "./recode-loop.timer"])
        .output()
    {
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "systemd-analyze verify: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // As systemd runs it: ExecStart (no shell) in WorkingDirectory.
    let dir = PathBuf::from(unit_value(&service, "WorkingDirectory", &env.home));
    let exec = unit_value(&service, "ExecStart", &env.home);
    assert_eq!(dir, repo);
    let words: Vec<&str> = exec.split_whitespace().collect();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    ok(&sh(&env, &dir, &format!("exec {}", quoted.join(" "))));
    assert!(ticked(&env, &repo));
}

#[test]
fn the_tmux_session_runs_the_loop() {
    if Command::new("tmux").arg("-V").output().is_err() {
        return;
    }
    let env = TestEnv::new();
    let repo = set_up(&env);
    let command = blocks(&guide(), "sh").concat();
    let sockets = env.root().join("tmux");
    std::fs::create_dir_all(&sockets).unwrap();
    let run = |c: &str| {
        let mut cmd = Command::new("sh");
        for (k, v) in env.cmd(&repo).get_envs() {
            if let Some(v) = v {
                cmd.env(k, v);
            }
        }
        cmd.env("PATH", path_with(&env.root().join("agent-bin")))
            .env("RECODE_NOW", LATER)
            .env("TMUX_TMPDIR", &sockets)
            .env("RECODE_TICK", "1")
            .env_remove("TMUX")
            .args(["-c", c])
            .output()
            .unwrap()
    };
    ok(&run(command.trim()));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !ticked(&env, &repo) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let _ = run("tmux kill-session -t recode-loop");
    assert!(
        ticked(&env, &repo),
        "the loop in tmux did not tick within 60 s"
    );
}

/// The remote a CI job clones: `origin.git`, where the worker `issue-1` and its ledger were
/// pushed from a developer's machine.
fn ci_remote(env: &TestEnv) -> PathBuf {
    let dev = set_up(env);
    let origin = env.root().join("origin.git");
    env.git(
        &env.root(),
        &["init", "-q", "--bare", origin.to_str().unwrap()],
    );
    env.git(&dev, &["remote", "add", "origin", origin.to_str().unwrap()]);
    env.git(&dev, &["push", "-q", "origin", "main", "issue-1"]);
    env.ok(&dev, &["sync"]);
    origin
}

/// The shell lines of a YAML list of commands (`run: |` text or a `script:` list).
fn lines_of(v: &yaml_rust2::Yaml) -> Vec<String> {
    match v {
        yaml_rust2::Yaml::String(s) => s.lines().map(str::to_string).collect(),
        yaml_rust2::Yaml::Array(a) => a.iter().flat_map(lines_of).collect(),
        _ => Vec::new(),
    }
}

fn yaml(rel: &str) -> yaml_rust2::Yaml {
    let text = std::fs::read_to_string(manifest(rel)).unwrap();
    yaml_rust2::YamlLoader::load_from_str(&text)
        .unwrap()
        .remove(0)
}

/// Run `lines` as the job would, twice, each time in a fresh clone of the remote (a CI
/// runner starts from nothing): the ledger synced both ways, the developer's worker left
/// to its host (its agent ran there), and the runner one host with one heartbeat ref
/// however many runs.
fn run_ci(env: &TestEnv, origin: &Path, lines: &[String]) {
    assert!(
        lines.iter().any(|l| l == "git recode recover --all"),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l == "git recode sync"), "{lines:?}");
    for run in ["ci-run-1", "ci-run-2"] {
        let ci = env.root().join(run);
        env.git(
            &env.root(),
            &[
                "clone",
                "-q",
                origin.to_str().unwrap(),
                ci.to_str().unwrap(),
            ],
        );
        for l in lines {
            ok(&sh(env, &ci, l));
        }
        let notes = |dir: &Path| env.git(dir, &["rev-parse", "refs/notes/recode"]);
        assert_eq!(notes(origin), notes(&ci), "{run}: the ledger is synced");
        let log = env.git(origin, &["log", "--format=%an", "refs/notes/recode"]);
        assert!(log.lines().all(|a| a == "git-recode"), "{log}");
        let doc: serde_json::Value =
            serde_json::from_str(&env.ok(&ci, &["status", "--all", "--json"])).unwrap();
        let w = &doc["workers"][0];
        assert_eq!(
            (w["branch"].as_str(), w["action"].as_str()),
            (Some("issue-1"), Some("wait")),
            "{run}: {doc:#}"
        );
        assert!(
            w["reason"].as_str().unwrap().starts_with("worker of host "),
            "{w:#}"
        );
    }
    let beats = env.git(
        origin,
        &["for-each-ref", "--format=%(refname)", "refs/recode/hosts/"],
    );
    assert_eq!(beats, "refs/recode/hosts/ci-recode-tick");
}

#[test]
fn the_github_actions_tick_runs_as_printed() {
    let env = TestEnv::new();
    let origin = ci_remote(&env);
    let doc = yaml("examples/ci/github-actions.yml");
    let steps = doc["jobs"]["tick"]["steps"].as_vec().unwrap();
    let tick = steps
        .iter()
        .find(|s| s["name"].as_str() == Some("tick"))
        .unwrap();
    run_ci(&env, &origin, &lines_of(&tick["run"]));
}

#[test]
fn the_gitlab_ci_tick_runs_as_printed() {
    let env = TestEnv::new();
    let origin = ci_remote(&env);
    let doc = yaml("examples/ci/gitlab-ci.yml");
    run_ci(&env, &origin, &lines_of(&doc["recode-tick"]["script"]));
}
