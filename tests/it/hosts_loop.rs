//! The loop-level harness with a second host (SPEC 1.2 "Several machines"), in the style
//! of `loopharness.rs`: a generated fleet of workers started on host A, two hosts (each in
//! its own UTS namespace) sharing one bare remote, ticking every 30 minutes. Each tick an
//! up host runs the multi-host loop — `recover --all` (its heartbeat), `sync`, `git fetch`,
//! `status --json`, then `resume` for every worker whose action says so (a stand-in agent
//! then commits and pushes each tick until it finishes or dies), `recover <branch>` for
//! the mechanical actions (a takeover pushes the ledger itself). Hosts go down at random (their agents die with
//! them, leaving uncommitted work) and come back; any git-recode run may be SIGKILLed.
//!
//! Invariants, checked as the trial runs:
//! - no task ever has two live agents (a `resume` that succeeds while another host's
//!   agent on the task is alive is a violation);
//! - no branch is pushed by two hosts in turn (the remote's `update` hook logs each push
//!   with the pusher's hostname; a branch pushed by A, then B, then A again is a
//!   violation), and an agent's push never finds its branch diverged;
//! - nothing is lost on either host (the never-lose snapshot of each clone before and
//!   after every tick: every commit still reachable, every changed file's content in its
//!   worktree or in a reachable commit).
//!
//! Prints `hosts loop trials N, violations V, takeovers T, comebacks C, kills K`.
//! `RECODE_HOSTS_TRIALS` (default 2) and `RECODE_HOSTS_SEED` (default 1: seeds 1 and 2
//! both take over and come back) override the run;
//! `benches/hosts.sh` runs it long.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::hosts::Fleet;
use crate::neverlose::Rng;

const HOSTS: [&str; 2] = ["hostA", "hostB"];
/// The clock of tick 0: after every real mtime a trial makes (the agents date their files).
const T0: i64 = 1_893_456_000; // 2030-01-01T00:00:00Z
const TICK: i64 = 30 * 60;
/// The longest one git-recode run may take (no deadline is shortened here: a takeover
/// syncs twice and fetches; a shared 2-core machine under load is slow).
const RUN_LIMIT: Duration = Duration::from_secs(60);
const TICKS: i64 = 14;

/// A stand-in agent at work on a host: it commits and pushes each tick for `ticks_left`
/// ticks, then finishes (gate passed, exit 0) or dies silently.
struct SimAgent {
    host: usize,
    branch: String,
    wt: PathBuf,
    ticks_left: u32,
    finishes: bool,
}

struct Trial {
    seed: u64,
    rng: Rng,
    f: Fleet,
    dirs: [PathBuf; 2],
    up: [bool; 2],
    agents: Vec<SimAgent>,
    now: i64,
    log: PathBuf,
    violations: Vec<String>,
    kills: usize,
    takeovers: usize,
    /// The slowest git-recode run.
    slowest: Duration,
}

impl Trial {
    fn new(seed: u64) -> Trial {
        let f = Fleet::new();
        let log = f.env.root().join("pushes.log");
        let hook = f.bare.join("hooks").join("update");
        std::fs::write(
            &hook,
            format!(
                "#!/bin/sh\nprintf '%s %s %s\\n' \"$1\" \"$(cat /proc/sys/kernel/hostname)\" \"$3\" >> '{}'\n",
                log.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        let dirs = [f.clone("a"), f.clone("b")];
        Trial {
            seed,
            rng: Rng::new(seed),
            f,
            dirs,
            up: [true, true],
            agents: Vec::new(),
            now: T0,
            log,
            violations: Vec::new(),
            kills: 0,
            takeovers: 0,
            slowest: Duration::ZERO,
        }
    }

    fn iso(&self) -> String {
        jiff::Timestamp::from_second(self.now).unwrap().to_string()
    }

    /// `git <args>` in `dir` on host `h` at the trial's clock (commits dated now).
    fn git_on(&self, h: usize, dir: &Path, args: &[&str]) -> Output {
        let template = self.f.env.git_cmd(dir);
        let mut cmd = Command::new("unshare");
        cmd.env_clear();
        for (k, v) in template.get_envs() {
            if let Some(v) = v {
                cmd.env(k, v);
            }
        }
        let date = format!("@{} +0000", self.now);
        cmd.env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .env("RECODE_HOST_NAME", HOSTS[h])
            .current_dir(dir)
            .stdin(Stdio::null())
            .args([
                "--uts",
                "sh",
                "-c",
                r#"printf %s "$RECODE_HOST_NAME" > /proc/sys/kernel/hostname && exec "$@""#,
                "sh",
                "git",
            ])
            .args(args);
        cmd.output().unwrap()
    }

    /// git-recode on host `h`; with `killable`, maybe SIGKILLed at a random moment
    /// (`None` then).
    fn recode(&mut self, h: usize, args: &[&str], killable: bool) -> Option<Output> {
        let kill_after =
            (killable && self.rng.chance(12)).then(|| Duration::from_millis(self.rng.below(250)));
        let dir = self.dirs[h].clone();
        let mut cmd = self.f.cmd_on(HOSTS[h], &dir, &self.iso(), args);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
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
                    return None;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let out = child.wait_with_output().unwrap();
        self.slowest = self.slowest.max(started.elapsed());
        if started.elapsed() > RUN_LIMIT {
            self.violations.push(format!(
                "seed {}: {args:?} on {} ran past {RUN_LIMIT:?}",
                self.seed, HOSTS[h]
            ));
        }
        Some(out)
    }

    /// Host A starts `n` workers at the trial's first moment: a worktree, one pushed
    /// commit, a spawn, and an agent at work.
    fn start_fleet(&mut self, n: usize) {
        let a = self.dirs[0].clone();
        for i in 1..=n {
            let branch = format!("issue-{i}");
            let wt = self.f.env.root().join(format!("a-{branch}"));
            self.f.env.git(
                &a,
                &["worktree", "add", "-q", "-b", &branch, wt.to_str().unwrap()],
            );
            std::fs::write(wt.join(format!("f{i}.txt")), "first part\n").unwrap();
            self.git_on(0, &wt, &["add", "-A"]);
            self.git_on(0, &wt, &["commit", "-q", "-m", "first part"]);
            self.git_on(0, &wt, &["push", "-q", "-u", "origin", &branch]);
            let out = self
                .recode(
                    0,
                    &["record", "spawn", &branch, "--cwd", wt.to_str().unwrap()],
                    false,
                )
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            let ticks_left = 1 + self.rng.below(4) as u32;
            let finishes = self.rng.chance(50);
            self.agents.push(SimAgent {
                host: 0,
                branch,
                wt,
                ticks_left,
                finishes,
            });
        }
    }

    /// The agents of host `h` work one tick: commit, push; then finish or die.
    fn agents_work(&mut self, h: usize) {
        let mut i = 0;
        while i < self.agents.len() {
            if self.agents[i].host != h {
                i += 1;
                continue;
            }
            let (wt, branch) = (self.agents[i].wt.clone(), self.agents[i].branch.clone());
            // The agent edits (its host sees the file's mtime: activity), and half the
            // time commits and pushes: the other host sees nothing for a while.
            let file = wt.join(format!("work-{}.txt", self.now));
            std::fs::write(&file, "agent work\n").unwrap();
            let when = std::time::UNIX_EPOCH + Duration::from_secs(self.now as u64);
            std::fs::File::options()
                .write(true)
                .open(&file)
                .and_then(|f| f.set_modified(when))
                .unwrap();
            let commits = self.rng.chance(50);
            if commits {
                self.git_on(h, &wt, &["add", "-A"]);
                self.git_on(h, &wt, &["commit", "-q", "-m", "agent: progress"]);
            }
            if commits {
                let pushed = self.git_on(
                    h,
                    &wt,
                    &["push", "-q", "origin", &format!("HEAD:refs/heads/{branch}")],
                );
                if !pushed.status.success() {
                    self.violations.push(format!(
                        "seed {}: {}'s agent on {branch} could not push (diverged): {}",
                        self.seed,
                        HOSTS[h],
                        String::from_utf8_lossy(&pushed.stderr).trim()
                    ));
                }
            }
            self.agents[i].ticks_left -= 1;
            if self.agents[i].ticks_left == 0 {
                let a = self.agents.remove(i);
                if a.finishes {
                    let _ = self.recode(h, &["record", "gate", &branch, "--passed"], false);
                    let _ = self.recode(h, &["record", "exit", &branch, "--rc", "0"], false);
                }
                continue;
            }
            i += 1;
        }
    }

    /// Host `h` goes down: its agents die with it, each leaving uncommitted work.
    fn go_down(&mut self, h: usize) {
        self.up[h] = false;
        for a in self.agents.iter().filter(|a| a.host == h) {
            std::fs::write(
                a.wt.join("unsaved.txt"),
                format!("unsaved at {}\n", self.now),
            )
            .unwrap();
        }
        self.agents.retain(|a| a.host != h);
    }

    /// One tick of host `h`'s loop.
    fn tick(&mut self, h: usize) {
        let dir = self.dirs[h].clone();
        self.agents_work(h);
        self.recode(h, &["recover", "--all"], true);
        self.recode(h, &["sync"], true);
        self.f.env.git(&dir, &["fetch", "-q", "origin"]);
        let Some(out) = self.recode(h, &["status", "--json", "--offline"], false) else {
            return;
        };
        let doc: serde_json::Value = match serde_json::from_slice(&out.stdout) {
            Ok(d) => d,
            Err(_) => return,
        };
        let workers: Vec<(String, String, String)> = doc["workers"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|w| {
                (
                    w["branch"].as_str().unwrap_or("").to_string(),
                    w["action"].as_str().unwrap_or("").to_string(),
                    w["host"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        for (branch, action, owner) in workers {
            match action.as_str() {
                "resume" => self.resume(h, &branch, &owner),
                "wip-commit" | "delete" | "publish" | "escalate" => {
                    self.recode(h, &["recover", &branch], true);
                }
                _ => {}
            }
        }
    }

    /// `resume` on host `h`; on success an agent starts there. A success while another
    /// host's agent is alive on the task is a violation.
    fn resume(&mut self, h: usize, branch: &str, owner: &str) {
        let prompt = self
            .f
            .env
            .root()
            .join(format!("prompt-{}-{branch}.md", HOSTS[h]));
        let Some(out) = self.recode(
            h,
            &[
                "resume",
                branch,
                "--json",
                "--output",
                prompt.to_str().unwrap(),
            ],
            true,
        ) else {
            return;
        };
        if !out.status.success() {
            return;
        }
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        if let Some(other) = self.agents.iter().find(|a| a.branch == branch) {
            self.violations.push(format!(
                "seed {}: {} resumed {branch} while {}'s agent is alive on it",
                self.seed, HOSTS[h], HOSTS[other.host]
            ));
            return;
        }
        if !owner.is_empty() && owner != HOSTS[h] {
            self.takeovers += 1;
        }
        let ticks_left = 1 + self.rng.below(3) as u32;
        let finishes = self.rng.chance(60);
        self.agents.push(SimAgent {
            host: h,
            branch: branch.to_string(),
            wt: PathBuf::from(doc["cwd"].as_str().unwrap()),
            ticks_left,
            finishes,
        });
    }

    /// The remote's push log: no branch pushed by A, then B, then A again.
    fn check_pushes(&mut self) {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for l in text.lines() {
            let mut p = l.split(' ');
            let (Some(r), Some(host)) = (p.next(), p.next()) else {
                continue;
            };
            if !r.starts_with("refs/heads/issue-") {
                continue;
            }
            let seq = by.entry(r.to_string()).or_default();
            if seq.last().map(String::as_str) != Some(host) {
                seq.push(host.to_string());
            }
        }
        for (r, seq) in by {
            let mut seen = std::collections::BTreeSet::new();
            for h in &seq {
                if !seen.insert(h) {
                    self.violations.push(format!(
                        "seed {}: {r} pushed by hosts in turn: {}",
                        self.seed,
                        seq.join(" → ")
                    ));
                    break;
                }
            }
        }
    }

    fn run(mut self) -> (Vec<String>, usize, usize, usize) {
        let n = 2 + self.rng.below(3) as usize;
        self.start_fleet(n);
        // Host A sleeps once, from tick `down` for `long` ticks (four ticks are
        // recode.hostTimeout: a long sleep is taken over, a short one is not); host B goes
        // down and comes back at random. A's first two ticks keep it up: its agents are at
        // work when B first looks.
        let down = 2 + self.rng.below(3) as i64;
        let long = 2 + self.rng.below(7) as i64;
        for tick in 0..TICKS {
            let before = [
                self.f.env.work(&self.dirs[0]),
                self.f.env.work(&self.dirs[1]),
            ];
            let first = self.rng.below(2) as usize;
            for h in [first, 1 - first] {
                let wanted = match h {
                    0 => !(down..down + long).contains(&tick),
                    _ if self.up[1] => tick < 2 || !self.rng.chance(10),
                    _ => self.rng.chance(30),
                };
                match (self.up[h], wanted) {
                    (true, false) => self.go_down(h),
                    (_, true) => {
                        self.up[h] = true;
                        self.tick(h);
                    }
                    (false, false) => {}
                }
            }
            for (h, b) in before.iter().enumerate() {
                let dir = self.dirs[h].clone();
                let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    self.f.env.assert_nothing_lost(&dir, b)
                }));
                if let Err(e) = caught {
                    let why = e
                        .downcast_ref::<String>()
                        .cloned()
                        .unwrap_or_else(|| "lost work".into());
                    self.violations
                        .push(format!("seed {}: {}: {why}", self.seed, HOSTS[h]));
                }
            }
            self.check_pushes();
            self.now += TICK;
        }
        let comebacks = self
            .f
            .env
            .git(
                &self.f.bare,
                &[
                    "for-each-ref",
                    "--format=%(refname)",
                    "refs/heads/recode/takeover",
                ],
            )
            .lines()
            .count();
        self.violations.dedup();
        println!(
            "hosts loop seed {}: slowest run {:.1}s",
            self.seed,
            self.slowest.as_secs_f64()
        );
        (self.violations, self.takeovers, comebacks, self.kills)
    }
}

#[test]
fn two_hosts_never_run_one_task_twice_never_push_one_branch_in_turn_and_lose_nothing() {
    let trials: u64 = std::env::var("RECODE_HOSTS_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let seed0: u64 = std::env::var("RECODE_HOSTS_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let (mut violations, mut takeovers, mut comebacks, mut kills) = (Vec::new(), 0, 0, 0);
    for seed in seed0..seed0 + trials {
        let (v, t, c, k) = Trial::new(seed).run();
        println!(
            "hosts loop seed {seed}: violations {}, takeovers {t}, comebacks {c}, kills {k}",
            v.len()
        );
        violations.extend(v);
        takeovers += t;
        comebacks += c;
        kills += k;
    }
    println!(
        "hosts loop trials {trials}, violations {}, takeovers {takeovers}, comebacks {comebacks}, kills {kills}",
        violations.len()
    );
    assert!(violations.is_empty(), "{violations:#?}");
}
