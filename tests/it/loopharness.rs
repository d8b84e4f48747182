//! The loop-level randomized harness (SPEC 1.2 "The loop settles").
//!
//! A trial is one generated repository with 4 to 10 workers in random field states
//! ([`field::Kind`]): the never-lose debris (empty; dirty; commits ahead; gated; merged by
//! hand with its remote branch left; only an untracked nested repository; a registered
//! worktree whose directory is missing) and the states that wedge loops: a transient limit
//! that resets later; held pushes (a branch the remote's pre-receive hook refuses; a gated
//! worker with an untracked nested repository; a gitlink to a submodule commit the
//! submodule's remote lacks, the submodule sometimes dirty too); live agents that hang (a
//! pid alive for ever with no activity, or parked on a limit and silent past its reset),
//! which `recover` must end past `recode.hungAfter` (action `kill`);
//! stale locks of every kind a SIGKILL leaves ([`field::LOCKS`]: a worktree's `index.lock`
//! and `HEAD.lock`, a branch's ref lock, `packed-refs.lock`, the notes ref's and the anchors
//! ref's locks). Trial-wide: the remote has no forge at all (a plain bare repository), is on
//! github.com with no token, has `recode.forge none`, or is one of the loopback fake forges
//! (GitHub, GitLab, Gitea), which before each tick may answer a run of 5xx, answer slower
//! than `recode.networkTimeout`, or rate-limit (403 with `x-ratelimit-reset`, 429 with
//! `retry-after`); the gate hangs past `recode.gateTimeout` or waits on a socket that never
//! answers; a clean filter hangs `git add` past `recode.commandTimeout`.
//!
//! Then the README's loop runs tick after tick, an hour apart: `status --json`, then for
//! each worker its action: `resume` (then a stand-in agent that commits and exits —
//! sometimes with a `Recode-Phase:` trailer, then the post-commit hook — commits and
//! passes its gate, fails, dies, hangs until the loop's timeout, or hits a rate limit;
//! `record exit` after it), `delete`/`publish`/`wip-commit`/`escalate` → `recover
//! <branch>`. Any `recover`, `resume`, `record` or hook run may be SIGKILLed at a random
//! moment; between ticks, lock files age (the next tick is an hour later).
//!
//! After each tick: the never-lose invariants (`neverlose/invariants.rs`), and the reasons
//! of waiting workers are true ("its pid is alive" only for a live agent; "recent
//! activity" only within `recode.stallAfter`), and no worker whose agent lives is offered
//! `resume` or resumed (never two agents). After each trial:
//! - every worker reached a settled outcome (action `wait`, `none`, state `needs-human`,
//!   or gone: deleted) within `recode.maxAttempts` + 2 ticks, plus one tick per SIGKILL
//!   that landed on it and one per transient exit (which does not count towards the cap);
//! - all of them are settled at one tick within the bound + 8 (else an action repeats);
//! - the ledger does not grow on a tick where nothing changed (two last ticks with the
//!   clock held, every worker settled);
//! - nothing was lost (the invariants; a submodule commit no remote has is still there);
//! - no git-recode run exceeded its deadline ([`RUN_LIMIT`]).
//!
//! Prints a line per trial (seconds spent in setup, git-recode runs, checks) and
//! `loop trials N, violations V, ticks-to-settle median M max X, kills K`.
//! `RECODE_LOOP_TRIALS` (default 2), `RECODE_LOOP_SEED` (default 1) and
//! `RECODE_THREADS` (default 2) override the run; `benches/loopharness.sh` runs it long.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{TestEnv, each_seed, env_u64};
use crate::fake_forge::FakeForge;
use crate::fake_github::FakeGitHub;
use crate::neverlose::Rng;
use crate::neverlose::invariants;

mod field;
use field::{Agent, FORGES, ForgeMode, Gate, KINDS, Kind};

/// The longest any one git-recode run may take in a trial: the trial's deadlines are 1 s
/// (gate) and 2 s (other children), so a run past this has hung somewhere.
const RUN_LIMIT: Duration = Duration::from_secs(25);
/// `recode.maxAttempts` in every trial.
const MAX_ATTEMPTS: usize = 3;

struct Trial {
    seed: u64,
    rng: Rng,
    env: TestEnv,
    repo: PathBuf,
    origin: PathBuf,
    forge: Option<FakeGitHub>,
    /// The fake GitLab or Gitea of a `ForgeMode::GitLab`/`Gitea` trial.
    other: Option<FakeForge>,
    slug: String,
    workers: Vec<(String, Kind)>,
    /// The clock of the current tick (epoch seconds).
    now: i64,
    kills: usize,
    /// SIGKILLs that landed on each worker's runs.
    killed: std::collections::BTreeMap<String, usize>,
    violations: Vec<String>,
    kill_pct: u64,
    /// The trial's gate hangs past `recode.gateTimeout`.
    hung_gate: bool,
    forge_mode: ForgeMode,
    /// The loopback listener a `Gate::Socket` gate connects to (never accepted).
    _socket: Option<std::net::TcpListener>,
    /// Live stand-in agents (`Hung`, `Parked`) by branch: alive until the trial ends.
    agents: std::collections::BTreeMap<String, Agent>,
    /// Submodule commits no remote has: (submodule directory, commit), never lost.
    sub_commits: Vec<(PathBuf, String)>,
    /// Stale locks laid once every worker is set up (a reftable's one stack lock would
    /// stop the setup's own ref writes).
    late_locks: Vec<PathBuf>,
    /// Ticks the fake forge failed on (5xx, slow, rate limited).
    forge_faults: usize,
    /// Wall time spent in git-recode runs and in the invariant checks.
    in_recode: Duration,
    in_checks: Duration,
    /// Transient exits per worker, the setup's and the stand-in agents' (they do not count
    /// towards the cap: SPEC "attempt"; each waits out its limit).
    transients: std::collections::BTreeMap<String, usize>,
    /// What happened to each worker, tick by tick: printed with a trial's violations.
    history: std::collections::BTreeMap<String, Vec<String>>,
}

/// One worker as `status --json --all` shows it.
struct Seen {
    branch: String,
    state: String,
    action: String,
    reason: String,
    liveness: String,
    idle: Option<i64>,
}

/// The clock of tick 0: after every real mtime a trial makes.
pub(super) const T0: i64 = 1_893_456_000; // 2030-01-01T00:00:00Z

pub(super) fn iso(epoch: i64) -> String {
    jiff::Timestamp::from_second(epoch).unwrap().to_string()
}

impl Trial {
    fn git(&self, dir: &Path, args: &[&str]) -> String {
        self.env.git(dir, args)
    }

    fn recode(&self, dir: &Path) -> Command {
        let mut c = self.env.cmd(dir);
        c.env("RECODE_NOW", iso(self.now))
            .env("RECODE_FORGE_MAX_WAIT", "0");
        if let (Some(f), Some((_, _, token))) = (&self.other, self.forge_mode.other()) {
            c.env("RECODE_FORGE_API", &f.url)
                .env(token, "test-token")
                .env("RECODE_GITHUB_API", "http://127.0.0.1:9");
            return c;
        }
        match (&self.forge, self.forge_mode) {
            (Some(gh), _) => {
                c.env("RECODE_GITHUB_API", &gh.url)
                    .env("GH_TOKEN", "test-token");
            }
            // Never the network: a port nothing listens on, should anything ask.
            (None, ForgeMode::ForgeNone) => {
                c.env("RECODE_GITHUB_API", "http://127.0.0.1:9")
                    .env("GH_TOKEN", "test-token");
            }
            (None, _) => {
                c.env("RECODE_GITHUB_API", "http://127.0.0.1:9");
            }
        }
        c
    }

    /// Run git-recode; with `killable`, maybe SIGKILL it at a random moment (counted for
    /// `branch`). `None` when killed. A run past [`RUN_LIMIT`] is a violation.
    fn run(&mut self, dir: &Path, args: &[&str], branch: &str, killable: bool) -> Option<Output> {
        let kill_after = (killable && self.rng.chance(self.kill_pct))
            .then(|| Duration::from_millis(self.rng.below(400)));
        let mut cmd = self.recode(dir);
        cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
        let started = Instant::now();
        let mut child = cmd.spawn().unwrap();
        if let Some(d) = kill_after {
            loop {
                if child.try_wait().unwrap().is_some() {
                    break;
                }
                if started.elapsed() >= d {
                    let _ = child.kill();
                    let _ = child.wait();
                    self.kills += 1;
                    *self.killed.entry(branch.to_string()).or_default() += 1;
                    self.note(branch, format!("{} killed", args[0]));
                    self.age_locks();
                    return None;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let out = child.wait_with_output().unwrap();
        let took = started.elapsed();
        self.in_recode += took;
        if took > RUN_LIMIT {
            self.violations.push(format!(
                "seed {}: git-recode {args:?} took {took:?} (deadline)",
                self.seed
            ));
        }
        Some(out)
    }

    /// An hour passes before the next tick: every lock file in the repository is an hour
    /// older (a SIGKILLed run's lock is then as old as it would be).
    fn age_locks(&self) {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "lock")
                    && !p.ends_with("recode-recover.lock")
                    && !p.to_string_lossy().contains(".stale-")
                {
                    out.push(p);
                }
            }
        }
        let mut locks = Vec::new();
        walk(&self.repo.join(".git"), &mut locks);
        for l in locks {
            if let Ok(f) = std::fs::File::options().write(true).open(&l) {
                let _ = f.set_modified(std::time::SystemTime::now() - Duration::from_secs(3600));
            }
        }
    }

    fn record_setup(&self, args: &[&str]) {
        let mut c = self.recode(&self.repo);
        c.env("RECODE_NOW", iso(T0 - 7200)).arg("record").args(args);
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "seed {}: record {args:?}: {out:?}",
            self.seed
        );
    }

    fn commit_file(&self, dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
        self.git(dir, &["add", "--", name]);
        self.git(dir, &["commit", "-q", "-m", &format!("add {name}")]);
    }

    fn new(seed: u64) -> Trial {
        let mut rng = Rng::new(seed ^ 0x5e77_1e00);
        let env = TestEnv::new();
        let root = env.root();
        let repo = root.join("r");
        let origin = root.join("origin.git");
        std::fs::create_dir_all(&repo).unwrap();
        let forge_mode = *rng.pick(&FORGES);
        let forge = (forge_mode == ForgeMode::GitHub).then(FakeGitHub::start);
        let other = match forge_mode {
            ForgeMode::GitLab => Some(crate::fake_gitlab::start()),
            ForgeMode::Gitea => Some(crate::fake_gitea::start()),
            _ => None,
        };
        let gate = match rng.below(10) {
            0 => Gate::Hangs,
            1 => Gate::Socket,
            _ => Gate::None,
        };
        let kill_pct = 15;
        let mut t = Trial {
            seed,
            rng,
            env,
            repo: repo.clone(),
            origin: origin.clone(),
            forge,
            other,
            slug: format!("l{seed}"),
            workers: Vec::new(),
            now: T0,
            kills: 0,
            killed: Default::default(),
            violations: Vec::new(),
            kill_pct,
            hung_gate: gate != Gate::None,
            forge_mode,
            _socket: None,
            agents: Default::default(),
            sub_commits: Vec::new(),
            late_locks: Vec::new(),
            forge_faults: 0,
            in_recode: Duration::ZERO,
            in_checks: Duration::ZERO,
            transients: Default::default(),
            history: Default::default(),
        };
        t.git(&repo, &["init", "-q", "-b", "main"]);
        t.commit_file(&repo, "README.md", "hello\n");
        t.git(
            &root,
            &[
                "init",
                "-q",
                "--bare",
                "-b",
                "main",
                origin.to_str().unwrap(),
            ],
        );
        t.refuse_rejected_branches();
        if forge_mode == ForgeMode::Plain {
            t.git(
                &repo,
                &["remote", "add", "origin", origin.to_str().unwrap()],
            );
        } else {
            let host = forge_mode.other().map_or("github.com", |o| o.1);
            let url = format!("https://{host}/acme/{}.git", t.slug);
            t.git(&repo, &["remote", "add", "origin", &url]);
            let key = format!("url.{}.insteadOf", origin.display());
            t.git(&repo, &["config", &key, &url]);
            if forge_mode == ForgeMode::ForgeNone {
                t.git(&repo, &["config", "recode.forge", "none"]);
            }
            if let Some((kind, _, _)) = forge_mode.other() {
                t.git(&repo, &["config", "recode.forge", kind]);
            }
        }
        t.git(&repo, &["push", "-q", "-u", "origin", "main"]);
        t.git(
            &repo,
            &["config", "recode.maxAttempts", &MAX_ATTEMPTS.to_string()],
        );
        t.git(&repo, &["config", "recode.commandTimeout", "2s"]);
        t.git(&repo, &["config", "recode.gateTimeout", "1s"]);
        t.git(&repo, &["config", "recode.networkTimeout", "1s"]);
        t.git(&repo, &["config", "protocol.file.allow", "always"]);
        match gate {
            Gate::Hangs => t.git(
                &repo,
                &[
                    "config",
                    "recode.gate",
                    "echo 'waiting for the database' >&2; sleep 30",
                ],
            ),
            Gate::Socket => {
                let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                let port = l.local_addr().unwrap().port();
                t._socket = Some(l);
                let cmd = format!(
                    "echo 'connecting to the test database' >&2; bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}; read -r line <&3'"
                );
                t.git(&repo, &["config", "recode.gate", &cmd])
            }
            Gate::None => String::new(),
        };
        if t.rng.chance(15) {
            // A clean filter that never returns (git-lfs waiting on a server).
            t.git(&repo, &["config", "filter.slow.clean", "sleep 30"]);
            std::fs::write(repo.join(".gitattributes"), "*.dat filter=slow\n").unwrap();
            t.git(&repo, &["add", ".gitattributes"]);
            t.git(&repo, &["commit", "-q", "-m", "attributes"]);
            t.git(&repo, &["push", "-q", "origin", "main"]);
        }
        let n = 4 + t.rng.below(7);
        for i in 1..=n {
            let kind = *t.rng.pick(&KINDS);
            t.add_worker(i, kind);
        }
        for lock in std::mem::take(&mut t.late_locks) {
            field::leave_stale_lock(&lock);
        }
        t
    }

    fn add_worker(&mut self, i: u64, kind: Kind) {
        let branch = format!("issue-{i}-{}", format!("{kind:?}").to_ascii_lowercase());
        let wt = self.env.root().join(format!("wt/{i}"));
        let wt_s = wt.to_str().unwrap().to_string();
        self.git(
            &self.repo,
            &["worktree", "add", "-q", "-b", &branch, &wt_s, "main"],
        );
        if !matches!(
            kind,
            Kind::Empty | Kind::Dirty | Kind::StaleLock | Kind::Nested
        ) {
            for k in 0..1 + self.rng.below(2) {
                self.commit_file(&wt, &format!("w{i}-{k}.txt"), &format!("{branch} {k}\n"));
            }
        }
        if matches!(kind, Kind::Hung | Kind::Parked) {
            self.live_agent(kind, &branch, &wt);
            self.workers.push((branch, kind));
            return;
        }
        self.record_setup(&["spawn", &branch, "--cwd", &wt_s]);
        let msg = self.env.root().join(format!("msg{i}"));
        if kind == Kind::Transient {
            *self.transients.entry(branch.clone()).or_default() += 1;
            std::fs::write(&msg, "Error: rate limit reached; resets in 2 hours\n").unwrap();
        } else {
            std::fs::write(&msg, "stopped\n").unwrap();
        }
        let gated = matches!(
            kind,
            Kind::Gated | Kind::Rejected | Kind::NestedGated | Kind::Submodule
        );
        let rc = if gated { "0" } else { "1" };
        let msg_s = msg.to_str().unwrap().to_string();
        self.record_setup(&["exit", &branch, "--rc", rc, "--message-file", &msg_s]);
        self.lay(i, kind, &branch, &wt);
        self.workers.push((branch, kind));
    }

    /// The workers `status --json --all` lists.
    fn status(&mut self) -> Vec<Seen> {
        let repo = self.repo.clone();
        let out = self
            .run(&repo, &["status", "--json", "--all"], "", false)
            .unwrap();
        if !out.status.success() {
            self.violations
                .push(format!("seed {}: status failed: {out:?}", self.seed));
            return Vec::new();
        }
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["workers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                let s = |k: &str| w[k].as_str().unwrap_or_default().to_string();
                Seen {
                    branch: s("branch"),
                    state: s("state"),
                    action: s("action"),
                    reason: s("reason"),
                    liveness: s("liveness"),
                    idle: w["idle_seconds"].as_i64(),
                }
            })
            .collect()
    }

    /// SPEC 1.2 "The loop settles": a waiting worker's reason is true. "its pid is alive"
    /// only for a worker whose stand-in agent lives; "recent activity" only within
    /// `recode.stallAfter` (30 min); a worker whose live agent hangs is never resumed
    /// (never two agents) and, with no limit in its output, waits with "its pid is alive".
    fn check_reasons(&mut self, tick: usize, seen: &[Seen]) {
        for w in seen {
            let alive = self.agents.get_mut(&w.branch).is_some_and(Agent::alive);
            let mut bad = |why: &str| {
                self.violations.push(format!(
                    "seed {} tick {tick}: {} ({} {} {}): {why}: {:?}",
                    self.seed, w.branch, w.liveness, w.state, w.action, w.reason
                ))
            };
            if w.reason.contains("its pid is alive") && !alive {
                bad("the reason says the pid is alive, but no agent of it lives");
            }
            if w.reason.contains("(recent activity)") && w.idle.is_none_or(|i| i >= 1800) {
                bad("the reason says recent activity, but it is idle past stallAfter");
            }
            if alive && w.action == "resume" {
                bad("resume offered while its agent is alive (two agents)");
            }
        }
    }

    /// The stand-in agent after `resume`: commits and exits, commits and passes its gate,
    /// fails, dies (no exit), hangs until the loop's timeout (rc 124), or hits a limit.
    fn agent(&mut self, branch: &str) {
        let wt = self
            .git(&self.repo, &["worktree", "list", "--porcelain"])
            .split("\n\n")
            .find(|b| {
                b.contains(&format!("branch refs/heads/{branch}\n"))
                    || b.ends_with(&format!("branch refs/heads/{branch}"))
            })
            .and_then(|b| b.lines().next())
            .and_then(|l| l.strip_prefix("worktree "))
            .map(PathBuf::from);
        let roll = self.rng.below(100);
        if std::env::var_os("RECODE_LOOP_TRACE").is_some() {
            eprintln!("  agent {branch}: roll {roll}");
        }
        self.note(branch, format!("agent roll {roll}"));
        if roll >= 90 {
            *self.transients.entry(branch.to_string()).or_default() += 1;
        }
        let repo = self.repo.clone();
        let msg = self.env.root().join("agent-msg");
        // An agent still alive is never joined by a second one.
        if self.agents.get_mut(branch).is_some_and(Agent::alive) {
            self.violations.push(format!(
                "seed {}: {branch} resumed while its agent is alive (two agents)",
                self.seed
            ));
        }
        let (rc, text, commit, gate) = match roll {
            0..30 => ("0", "Done: implemented the change.", true, false),
            30..50 => ("0", "Done: all tests pass.", true, true),
            50..70 => ("1", "Error: the build failed.", false, false),
            70..85 => return, // died: no exit recorded
            85..90 => ("124", "", false, false),
            _ => (
                "1",
                "API Error: 429 rate limit exceeded; retry after 3 hours",
                false,
                false,
            ),
        };
        if commit && let Some(wt) = wt.as_ref().filter(|w| w.is_dir()) {
            let name = format!("agent-{}.txt", self.rng.below(1_000_000));
            std::fs::write(wt.join(&name), "agent work\n").unwrap();
            let _ = self.env.git_cmd(wt).args(["add", "--", &name]).output();
            let phase = self.rng.chance(50);
            let mut c = self.env.git_cmd(wt);
            c.args([
                "-c",
                "core.hooksPath=/dev/null",
                "commit",
                "-q",
                "-m",
                "agent work",
            ]);
            if phase {
                c.args(["-m", "Recode-Phase: implemented"]);
            }
            let _ = c.output();
            // The post-commit hook, killable at any moment like the rest.
            let wt = wt.clone();
            self.run(&wt, &["hook", "post-commit"], branch, true);
            // The agent runs the project's gate itself: a gate that hangs never passes.
            if gate && !self.hung_gate {
                self.run(&repo, &["record", "gate", branch, "--passed"], branch, true);
            }
        }
        std::fs::write(&msg, text).unwrap();
        let m = msg.to_str().unwrap().to_string();
        self.run(
            &repo,
            &["record", "exit", branch, "--rc", rc, "--message-file", &m],
            branch,
            true,
        );
    }

    /// One README tick: status, then each worker's action.
    fn tick(&mut self) {
        let repo = self.repo.clone();
        for Seen { branch, action, .. } in self.status() {
            match action.as_str() {
                "resume" => {
                    let prompt = self.env.root().join("prompt.md");
                    let p = prompt.to_str().unwrap().to_string();
                    let out = self.run(&repo, &["resume", &branch, "--output", &p], &branch, true);
                    if std::env::var_os("RECODE_LOOP_TRACE").is_some() {
                        eprintln!(
                            "  resume {branch}: {:?} {}",
                            out.as_ref().map(|o| o.status.code()),
                            out.as_ref()
                                .map(|o| String::from_utf8_lossy(&o.stderr).trim().to_string())
                                .unwrap_or_default()
                        );
                    }
                    if let Some(o) = &out {
                        self.note(&branch, format!("resume rc {:?}", o.status.code()));
                    }
                    if out.is_some_and(|o| o.status.success()) {
                        self.agent(&branch);
                    }
                }
                "delete" | "publish" | "wip-commit" | "escalate" | "kill" => {
                    let out = self.run(&repo, &["recover", &branch], &branch, true);
                    if let Some(o) = &out {
                        let said = String::from_utf8_lossy(&o.stdout).trim().to_string();
                        self.note(&branch, format!("recover rc {:?} {said}", o.status.code()));
                    }
                    if std::env::var_os("RECODE_LOOP_TRACE").is_some() {
                        match out {
                            Some(o) => eprintln!(
                                "  recover {branch}: {}{}",
                                String::from_utf8_lossy(&o.stdout).trim(),
                                String::from_utf8_lossy(&o.stderr).trim()
                            ),
                            None => eprintln!("  recover {branch}: killed"),
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn ledger(&self) -> Vec<String> {
        let out = self
            .recode(&self.repo)
            .args(["log", "--json"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Run the loop until every worker settled (or the bound passed); returns the tick at
    /// which all had settled.
    fn run_loop(&mut self) -> usize {
        let before = invariants::before(&self.env, &self.repo);
        let settled =
            |state: &str, action: &str| matches!(action, "wait" | "none") || state == "needs-human";
        let mut reached: std::collections::BTreeMap<String, usize> = Default::default();
        let names: Vec<String> = self.workers.iter().map(|w| w.0.clone()).collect();
        let limit = MAX_ATTEMPTS + 2;
        let mut all_at = 0;
        let mut now_settled;
        let mut tick = 0;
        loop {
            tick += 1;
            self.now = T0 + tick as i64 * 3600;
            let faults = self.forge_faults;
            self.forge_weather();
            // A tick the forge fails on is no end: its waits end once it answers again.
            let stormy = self.forge_faults > faults;
            let st = self.status();
            if std::env::var_os("RECODE_LOOP_TRACE").is_some() {
                for w in &st {
                    eprintln!(
                        "seed {} tick {tick}: {} {} {} {}: {}",
                        self.seed, w.branch, w.liveness, w.state, w.action, w.reason
                    );
                }
            }
            self.check_reasons(tick, &st);
            for w in &st {
                let seen = format!("t{tick} {} {}/{}", w.liveness, w.state, w.action);
                self.note(&w.branch, seen);
            }
            for b in &names {
                let s = st.iter().find(|w| &w.branch == b);
                let ok = s.is_none_or(|w| settled(&w.state, &w.action));
                if ok {
                    reached.entry(b.clone()).or_insert(tick);
                }
            }
            now_settled = st.iter().all(|w| settled(&w.state, &w.action));
            if names.iter().all(|b| reached.contains_key(b)) && all_at == 0 {
                all_at = tick;
            }
            if all_at > 0 && now_settled && !stormy {
                break;
            }
            if tick >= self.tick_bound(limit) {
                // An action still asked for after every bound: it repeats for ever.
                for w in st.iter().filter(|w| !settled(&w.state, &w.action)) {
                    self.violations.push(format!(
                        "seed {}: {} still {} {} after {tick} ticks (an action that repeats): {}",
                        self.seed, w.branch, w.state, w.action, w.reason
                    ));
                }
                break;
            }
            self.tick();
            self.age_locks();
            let checking = Instant::now();
            let found = invariants::check(
                &self.env,
                &self.repo,
                &self.origin,
                &before,
                &format!("seed {} tick {tick}", self.seed),
            );
            self.violations.extend(found);
            self.in_checks += checking.elapsed();
        }
        for (b, kind) in self.workers.clone() {
            let bound = limit
                + self.killed.get(&b).copied().unwrap_or(0)
                + self.transients.get(&b).copied().unwrap_or(0);
            match reached.get(&b) {
                Some(t) if *t <= bound => {}
                Some(t) => self.violations.push(format!(
                    "seed {}: {b} ({kind:?}) settled at tick {t}, past {bound}",
                    self.seed
                )),
                None => self
                    .violations
                    .push(format!("seed {}: {b} ({kind:?}) never settled", self.seed)),
            }
        }
        // Ticks where nothing changes (the clock held, every worker settled): the ledger
        // does not grow.
        // Tick A carries out what settling left (an escalation ledgered once, a phantom
        // once per exit); ticks B and C, the clock held, change nothing. No kills there: a
        // kill is a change. A loop that ended unsettled (a violation above) owes more
        // than quiet ticks: they are not judged then.
        self.kill_pct = 0;
        self.tick();
        let n = self.ledger();
        let quiet_ticks = if all_at > 0 && now_settled {
            0..2
        } else {
            0..0
        };
        for quiet in quiet_ticks {
            self.tick();
            let m = self.ledger();
            if m != n {
                let new: Vec<&String> = m.iter().filter(|l| !n.contains(l)).collect();
                self.violations.push(format!(
                    "seed {}: the ledger grew from {} to {} lines on quiet tick {quiet}: {new:?}",
                    self.seed,
                    n.len(),
                    m.len()
                ));
                break;
            }
        }
        for v in invariants::check(
            &self.env,
            &self.repo,
            &self.origin,
            &before,
            &format!("seed {} end", self.seed),
        ) {
            self.violations.push(v);
        }
        // A submodule commit no remote has is still in the submodule.
        for (dir, sha) in &self.sub_commits {
            let ok = dir.is_dir()
                && self
                    .env
                    .git_cmd(dir)
                    .args(["cat-file", "-e", &format!("{sha}^{{commit}}")])
                    .output()
                    .is_ok_and(|o| o.status.success());
            if !ok {
                self.violations.push(format!(
                    "seed {}: submodule commit {sha} in {} was lost",
                    self.seed,
                    dir.display()
                ));
            }
        }
        // SPEC 1.3: a hung agent (pid alive, no activity) is ended past recode.hungAfter
        // (2 h: the second tick), never left for ever, and ledgered as exit 137.
        let hung: Vec<String> = self
            .workers
            .iter()
            .filter(|(_, k)| *k == Kind::Hung)
            .map(|(b, _)| b.clone())
            .collect();
        for b in hung {
            if self.agents.get_mut(&b).is_some_and(Agent::alive) {
                self.violations.push(format!(
                    "seed {}: {b}'s hung agent was never ended",
                    self.seed
                ));
            }
        }
        all_at
    }

    /// The last tick of a loop: `limit` attempts' ticks, 8 more, and for the worker that
    /// needs most, one per SIGKILL on its runs (a killed run decides nothing) and four per
    /// transient exit (a 3 h limit waited out, then the resume); at most 40.
    fn tick_bound(&self, limit: usize) -> usize {
        let extra = self
            .workers
            .iter()
            .map(|(b, _)| {
                self.killed.get(b).copied().unwrap_or(0)
                    + 4 * self.transients.get(b).copied().unwrap_or(0)
            })
            .max()
            .unwrap_or(0);
        (limit + 8 + extra).min(40)
    }

    /// Adds one line to `branch`'s history.
    fn note(&mut self, branch: &str, what: String) {
        self.history
            .entry(branch.to_string())
            .or_default()
            .push(what);
    }
}

#[test]
fn the_loop_settles_in_randomized_trials() {
    let trials = env_u64("RECODE_LOOP_TRIALS", 2);
    let first = env_u64("RECODE_LOOP_SEED", 1);
    let threads = env_u64("RECODE_THREADS", 2);
    let r = each_seed(first, trials, threads, |seed| {
        let started = Instant::now();
        let mut t = Trial::new(seed);
        let setup = started.elapsed();
        let at = t.run_loop();
        for v in &t.violations {
            eprintln!("loop violation: {v}");
        }
        if !t.violations.is_empty() {
            for (b, h) in &t.history {
                eprintln!("loop history seed {seed} {b}: {}", h.join("; "));
            }
        }
        println!(
            "loop trial seed {seed}: workers {}, settled at tick {at}, kills {}, forge faults {}, violations {}, s setup {:.1} recode {:.1} checks {:.1} total {:.1}",
            t.workers.len(),
            t.kills,
            t.forge_faults,
            t.violations.len(),
            setup.as_secs_f64(),
            t.in_recode.as_secs_f64(),
            t.in_checks.as_secs_f64(),
            started.elapsed().as_secs_f64(),
        );
        (seed, at, t.kills, t.violations.len())
    });
    let mut ticks: Vec<usize> = r.iter().map(|x| x.1).filter(|t| *t > 0).collect();
    ticks.sort();
    let violations: usize = r.iter().map(|x| x.3).sum();
    let kills: usize = r.iter().map(|x| x.2).sum();
    println!(
        "loop trials {}, violations {violations}, ticks-to-settle median {} max {}, kills {kills}",
        r.len(),
        ticks.get(ticks.len() / 2).copied().unwrap_or(0),
        ticks.last().copied().unwrap_or(0),
    );
    assert_eq!(violations, 0, "see the loop violations above");
}
