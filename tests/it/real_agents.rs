//! SPEC 1.3 "Real agents": the real agent CLIs (pinned in `fixtures/agents.pins`,
//! installed by `fixtures/install-agents.sh` from npm) run against the scripted loopback
//! model (`fixtures/fake-model.mjs`): killed mid-task, recovered, resumed into their own
//! session with the flags they were spawned with, finished and published through the
//! GitHub stand-in, with no human step.
//!
//! An agent that is not installed is skipped with a note, except under `CI=true`, where
//! it fails: CI installs them (`.ci/run`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::LATER;
use crate::forge::{Fx, find};

/// One pinned agent: its name, version and binary's directory.
pub(crate) struct Agent {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) bin_dir: PathBuf,
    pub(crate) binary: String,
}

/// The pinned agent `name`, when installed; `None` (with a note) when not, and a panic
/// under `CI=true` (CI installs every pinned agent, so a missing one is a failure).
pub(crate) fn agent(name: &str) -> Option<Agent> {
    let pins = include_str!("../../fixtures/agents.pins");
    let line = pins
        .lines()
        .filter(|l| !l.starts_with('#'))
        .find(|l| l.split('\t').next() == Some(name))
        .unwrap_or_else(|| panic!("{name} is not pinned in fixtures/agents.pins"));
    let f: Vec<&str> = line.split('\t').collect();
    let dir = std::env::var_os("RECODE_AGENTS_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/git-recode/agents"))
        })
        .unwrap_or_default();
    let bin_dir = dir
        .join(format!("{}-{}", f[0], f[2]))
        .join("node_modules/.bin");
    let have_node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if bin_dir.join(f[3]).is_file() && have_node {
        return Some(Agent {
            name: f[0].into(),
            version: f[2].into(),
            bin_dir,
            binary: f[3].into(),
        });
    }
    let why = format!(
        "{name} {} is not installed at {} (or node is missing): run fixtures/install-agents.sh",
        f[2],
        bin_dir.display()
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
    eprintln!("skipped: {why}");
    None
}

/// The scripted model server, killed when dropped.
pub(crate) struct Model {
    child: Child,
    pub(crate) url: String,
    pub(crate) log: PathBuf,
}

impl Model {
    /// Start `fixtures/fake-model.mjs SCENARIO`, its request log under `dir`.
    pub(crate) fn start(scenario: &str, dir: &Path) -> Model {
        let log = dir.join(format!("model-{scenario}.log"));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fake-model.mjs");
        let mut child = Command::new("node")
            .arg(script)
            .arg(scenario)
            .arg(&log)
            .stdout(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .expect("node runs fixtures/fake-model.mjs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("port ")
            .expect("the model prints its port");
        Model {
            child,
            url: format!("http://127.0.0.1:{port}"),
            log,
        }
    }

    /// The requests so far, one JSON object each.
    pub(crate) fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Wait up to `secs` for `done`; panics with `what` when it never holds.
pub(crate) fn wait_for(secs: u64, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(secs),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The agent's environment on top of the test's: its binary first on `PATH`, the
/// model's URL and a fake key for each provider, retries and updates off.
pub(crate) fn agent_env(cmd: &mut Command, a: &Agent, model: &Model) {
    let path = format!(
        "{}:{}",
        a.bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.env("PATH", path)
        .env("ANTHROPIC_BASE_URL", &model.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
        .env("CLAUDE_CODE_MAX_RETRIES", "0")
        .env("API_TIMEOUT_MS", "20000")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("FAKE_MODEL_KEY", "not-a-key")
        .env("GEMINI_API_KEY", "not-a-key")
        .env("GOOGLE_GEMINI_BASE_URL", &model.url)
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_SHARE", "1")
        .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1");
}

/// The agents' logins in `home`, pointed at `model`: Gemini CLI's API-key login
/// (`~/.gemini/settings.json`); OpenCode's provider `fake` (`@ai-sdk/openai-compatible`,
/// the model's Chat Completions API) with its model `fake/test-model`
/// (`~/.config/opencode/opencode.json`).
pub(crate) fn logins(home: &Path, model: &Model) {
    let gemini = home.join(".gemini");
    std::fs::create_dir_all(&gemini).unwrap();
    let login = r#"{"security":{"auth":{"selectedType":"gemini-api-key"}}}"#;
    std::fs::write(gemini.join("settings.json"), login).unwrap();
    let opencode = home.join(".config/opencode");
    std::fs::create_dir_all(&opencode).unwrap();
    let provider = serde_json::json!({
        "$schema": "https://opencode.ai/config.json",
        "model": "fake/test-model",
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Fake",
            "options": {"baseURL": format!("{}/v1", model.url), "apiKey": "not-a-key"},
            "models": {"test-model": {"name": "Test model"}}
        }}
    });
    std::fs::write(opencode.join("opencode.json"), provider.to_string()).unwrap();
}

/// Kill the process group led by `child` (the agent and its tool's shell).
pub(crate) fn kill_group(child: &mut Child) {
    let pgid = child.id().to_string();
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .status();
    let _ = child.wait();
}

/// How one agent is run by the loop in these tests.
struct Case {
    /// `fixtures/agents.pins` name and `record spawn --agent`.
    name: &'static str,
    /// The flags the loop runs it with and records (`record spawn -- …`).
    flags: Vec<String>,
    /// Arguments before the flags of the first run (e.g. `-p`, Claude's `--session-id`).
    first: Vec<String>,
    /// The session id the loop chose (`None`: read from the output's first lines).
    session: Option<String>,
    /// Set up the agent's configuration directory, if it has one (`--config-dir`).
    config_dir: Option<PathBuf>,
    /// The prompt goes after `--` (Claude: variadic flags).
    dashes: bool,
    /// The flag the prompt is the value of (Gemini's `-p`), else it is an argument.
    prompt_flag: Option<&'static str>,
}

impl Case {
    /// The first run's command line in `wt`.
    fn first_command(&self, a: &Agent, fx: &Fx, wt: &Path, model: &Model, out: &Path) -> Command {
        use std::os::unix::process::CommandExt;
        let mut cmd = Command::new(a.bin_dir.join(&a.binary));
        fx_env(fx, &mut cmd, wt);
        agent_env(&mut cmd, a, model);
        if let (Some(var), Some(dir)) = (config_var(self.name), &self.config_dir) {
            cmd.env(var, dir);
        }
        cmd.args(&self.first).args(&self.flags);
        if self.dashes {
            cmd.arg("--");
        }
        cmd.args(self.prompt_flag);
        cmd.arg("Do the task: commit each milestone.")
            .stdout(std::fs::File::create(out).unwrap())
            .stderr(Stdio::null())
            .process_group(0);
        cmd
    }
}

/// The variable naming an agent's configuration directory.
fn config_var(name: &str) -> Option<&'static str> {
    match name {
        "claude" => Some("CLAUDE_CONFIG_DIR"),
        "codex" => Some("CODEX_HOME"),
        _ => None,
    }
}

/// The session id in an agent's first output lines (`session_id`, `thread_id`,
/// `sessionID`).
fn session_in(out: &Path) -> Option<String> {
    let text = std::fs::read_to_string(out).ok()?;
    text.lines().find_map(|l| {
        let v: Value = serde_json::from_str(l).ok()?;
        v["session_id"]
            .as_str()
            .or(v["thread_id"].as_str())
            .or(v["sessionID"].as_str())
            .map(str::to_string)
    })
}

/// One real agent's run through the loop: the repository with its forge stand-in, the
/// worker's worktree, the scripted model.
struct Run {
    a: Agent,
    fx: Fx,
    wt: PathBuf,
    model: Model,
}

const BRANCH: &str = "issue-1-real";
const LATER_NOW: [(&str, &str); 1] = [("RECODE_NOW", LATER)];

impl Run {
    /// `status --json`'s worker.
    fn status(&self) -> Value {
        let r = self.fx.run_env(true, &LATER_NOW, &["status", "--json"]);
        let doc: Value = serde_json::from_str(&r.stdout).unwrap();
        find(doc["workers"].as_array().unwrap(), BRANCH).clone()
    }

    /// `git recode <args>` at [`LATER`]; asserts exit 0; returns stdout.
    fn ok(&self, args: &[&str]) -> String {
        let r = self.fx.run_env(true, &LATER_NOW, args);
        assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
        r.stdout
    }

    /// The loop spawns the agent with its flags and records the spawn; the model has it
    /// commit a milestone, dirty the tree and hang: killed there. Returns the session id.
    fn spawn_and_kill(&self, case: &Case) -> String {
        let out = self.fx.env.root().join("agent-1.out");
        let mut child = case
            .first_command(&self.a, &self.fx, &self.wt, &self.model, &out)
            .spawn()
            .unwrap();
        let session = case.session.clone().unwrap_or_else(|| {
            let mut found = None;
            // Slow under load (OpenCode prints its first event once the model answers);
            // an agent that ended without one says why.
            wait_for(240, "the agent's session id", || {
                found = session_in(&out);
                let ended = found.is_none() && child.try_wait().unwrap().is_some();
                let said = || std::fs::read_to_string(&out).unwrap_or_default();
                assert!(!ended, "the agent ended with no session id: {}", said());
                found.is_some()
            });
            found.unwrap()
        });
        let pid = child.id().to_string();
        let wt = self.wt.display().to_string();
        let mut spawn = vec![
            "record", "spawn", BRANCH, "--agent", case.name, "--pid", &pid,
        ];
        spawn.extend(["--session-id", &session, "--cwd", &wt]);
        let conf = case.config_dir.as_ref().map(|d| d.display().to_string());
        if let Some(d) = &conf {
            spawn.extend(["--config-dir", d]);
        }
        spawn.push("--");
        spawn.extend(case.flags.iter().map(String::as_str));
        self.fx.ok(&spawn);
        wait_for(120, "the agent to dirty the tree and hang", || {
            self.wt.join("b.txt").exists() && self.model.requests().iter().any(|r| r["turn"] == 1)
        });
        std::thread::sleep(Duration::from_millis(300));
        kill_group(&mut child);
        session
    }

    /// The next tick: the kill is seen, the dirty work WIP-committed; then `resume` prints
    /// the command of its own session with the same flags. Returns the command.
    fn recover_and_resume(&self, case: &Case, session: &str) -> String {
        let first = self.fx.rev(&self.wt, "HEAD").unwrap();
        let main = self.fx.rev(&self.fx.repo, "main").unwrap();
        assert_ne!(first, main, "the agent's milestone commit");
        let w = self.status();
        let sla = [&w["liveness"], &w["state"], &w["action"]];
        assert_eq!(sla, ["stalled", "half-done", "wip-commit"], "{w}");
        self.ok(&["recover", "--all"]);
        let wip = self.fx.rev(&self.wt, "HEAD").unwrap();
        assert_ne!(wip, first, "a WIP commit holds the dirty work");
        assert_eq!(self.fx.env.git(&self.wt, &["status", "--porcelain"]), "");
        assert_eq!(self.status()["action"], "resume");
        let doc: Value = serde_json::from_str(&self.ok(&["resume", BRANCH, "--json"])).unwrap();
        let got = (doc["mode"].as_str(), doc["session_id"].as_str());
        assert_eq!(got, (Some("session"), Some(session)), "{doc}");
        let command = doc["command"].as_str().unwrap().to_string();
        let quoted: Vec<String> = case.flags.iter().map(|f| format!("'{f}'")).collect();
        let replayed = command.contains(&quoted.join(" "));
        assert!(replayed, "the recorded flags are replayed: {command}");
        command
    }

    /// The loop runs `command`: the real agent resumes its session (the model sees its
    /// earlier turns, and no tool call is refused) and finishes; `record exit` reads a
    /// success.
    fn finish(&self, command: &str) {
        let out = self.fx.env.root().join("agent-2.out");
        let mut sh = Command::new("sh");
        fx_env(&self.fx, &mut sh, &self.fx.repo);
        agent_env(&mut sh, &self.a, &self.model);
        let file = std::fs::File::create(&out).unwrap();
        let done = sh.arg("-c").arg(command).stdout(file).stderr(Stdio::null());
        let done = done.status().unwrap();
        let said = std::fs::read_to_string(&out).unwrap();
        assert_eq!(done.code(), Some(0), "{said}");
        let turns: Vec<Value> = self
            .model
            .requests()
            .into_iter()
            .filter(|r| r["tools"] == true)
            .collect();
        let last = &turns.last().unwrap()["turn"];
        assert_eq!(
            last, 3,
            "the resumed session went on from its earlier turns: {turns:?}"
        );
        let refused = turns.iter().any(|r| !r["last_tool_result"].is_null());
        assert!(!refused, "no tool call was refused: {turns:?}");
        assert!(self.wt.join("c.txt").exists(), "{said}");
        let out = out.display().to_string();
        let exit = ["record", "exit", BRANCH, "--rc", "0", "--result-json", &out];
        assert_eq!(self.ok(&exit).trim(), "success");
    }

    /// Published through the forge stand-in by the next tick.
    fn publish(&self) {
        let w = self.status();
        assert_eq!(
            [&w["state"], &w["action"]],
            ["publishable", "publish"],
            "{w}"
        );
        self.ok(&["recover", "--all"]);
        let prs = self.fx.gh.prs();
        assert_eq!(
            prs.iter().map(|p| p.head.as_str()).collect::<Vec<_>>(),
            [BRANCH]
        );
        assert_eq!(self.status()["state"], "published");
    }
}

/// The seeds' acceptance with a real agent (SPEC 1.3 "Real agents"): spawned with its
/// flags and killed mid-task (after a milestone commit, with a dirty tree); the next tick
/// sees it stalled and WIP-commits; `resume` prints the command that resumes its own
/// session with the same flags; the real agent finishes there; `record exit` reads a
/// success; the next tick publishes through the GitHub stand-in. No human step. Returns
/// the resume command (`None`: the agent is not installed, outside CI).
fn end_to_end(case: &Case, prepare: &dyn Fn(&Model)) -> Option<String> {
    let a = agent(case.name)?;
    let fx = Fx::new();
    let wt = fx.env.add_worktree(&fx.repo, BRANCH, "wt-real");
    let model = Model::start("work", &fx.env.root());
    prepare(&model);
    logins(&fx.env.home, &model);
    let run = Run { a, fx, wt, model };
    let session = run.spawn_and_kill(case);
    let command = run.recover_and_resume(case, &session);
    run.finish(&command);
    run.publish();
    eprintln!(
        "{} {} end to end: killed, WIP-committed, resumed, published",
        run.a.name, run.a.version
    );
    Some(command)
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn claude_killed_mid_task_is_recovered_resumed_into_its_session_and_published() {
    // The shell tool allowed and nothing else widened (`--dangerously-skip-permissions` is
    // refused as root, and wider than needed). Without these flags the resumed agent's
    // first tool call needs approval and is refused.
    let session = "5b0c8a52-6d1e-4f3a-9b7c-2e4d6f8a0b1c";
    let case = Case {
        name: "claude",
        flags: strings(&[
            "--output-format",
            "stream-json",
            "--verbose",
            "--allowedTools",
            "Bash",
        ]),
        first: strings(&["-p", "--session-id", session]),
        session: Some(session.into()),
        config_dir: None,
        dashes: true,
        prompt_flag: None,
    };
    if let Some(command) = end_to_end(&case, &|_| ()) {
        assert!(
            command.contains(&format!("claude -p --resume='{session}' '--output-format'")),
            "{command}"
        );
        assert!(
            command.ends_with("'Bash' -- \"$(cat '") || command.contains("'Bash' -- \"$(cat '"),
            "{command}"
        );
    }
}

#[test]
fn codex_killed_mid_task_is_recovered_resumed_into_its_session_and_published() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("codex-home");
    std::fs::create_dir_all(&home).unwrap();
    // The provider is the scripted model, named in the configuration directory that
    // `record spawn --config-dir` records and `resume` sets again (`CODEX_HOME`); its
    // retries turned off.
    let config = |model: &Model| {
        let toml = format!(
            "model = \"gpt-test\"\nmodel_provider = \"fake\"\n\n[model_providers.fake]\nname = \"fake\"\nbase_url = \"{}/v1\"\nenv_key = \"FAKE_MODEL_KEY\"\nwire_api = \"responses\"\nrequest_max_retries = 0\nstream_max_retries = 0\n",
            model.url
        );
        std::fs::write(home.join("config.toml"), toml).unwrap();
    };
    let case = Case {
        name: "codex",
        flags: strings(&[
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
        ]),
        first: strings(&["exec"]),
        session: None,
        config_dir: Some(home.clone()),
        dashes: false,
        prompt_flag: None,
    };
    if let Some(command) = end_to_end(&case, &config) {
        assert!(
            command.contains(&format!("CODEX_HOME='{}'", home.display())),
            "{command}"
        );
        assert!(
            command.contains("codex exec resume '--json' '--skip-git-repo-check'"),
            "{command}"
        );
    }
}

/// The test environment of `fx` on `cmd` (the pinned identities, the isolated `HOME`), in
/// `dir`, at [`LATER`].
pub(crate) fn fx_env(fx: &Fx, cmd: &mut Command, dir: &Path) {
    let probe = fx.env.git_cmd(dir);
    cmd.env_clear();
    for (k, v) in probe.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    cmd.env("RECODE_NOW", LATER)
        .current_dir(dir)
        .stdin(Stdio::null());
}

#[test]
fn gemini_killed_mid_task_is_recovered_resumed_into_its_session_and_published() {
    let settings = |_: &Model| {};
    let case = Case {
        name: "gemini",
        flags: strings(&["--yolo", "--skip-trust"]),
        first: strings(&["-o", "stream-json"]),
        session: None,
        config_dir: None,
        dashes: false,
        prompt_flag: Some("-p"),
    };
    if let Some(command) = end_to_end(&case, &settings) {
        assert!(command.contains("gemini --resume '"), "{command}");
        assert!(
            command.ends_with("-o stream-json '--yolo' '--skip-trust'"),
            "{command}"
        );
    }
}

#[test]
fn opencode_killed_mid_task_is_recovered_resumed_into_its_session_and_published() {
    // The provider is the scripted model's Chat Completions API (`logins`); the model flag
    // and `--auto` (permission asks approved, none asked here) are the recorded flags.
    let case = Case {
        name: "opencode",
        flags: strings(&["--auto", "-m", "fake/test-model"]),
        first: strings(&["run", "--format", "json"]),
        session: None,
        config_dir: None,
        dashes: false,
        prompt_flag: None,
    };
    if let Some(command) = end_to_end(&case, &|_| ()) {
        assert!(
            command.contains(
                "opencode run --format json '--auto' '-m' 'fake/test-model' --session='ses_"
            ),
            "{command}"
        );
    }
}
