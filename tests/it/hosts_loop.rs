//! The loop-level harness of several hosts (SPEC 1.3 "Several machines, by the observer's
//! clock"), in the style of `loopharness.rs`: a generated fleet of workers started on host
//! A, 3–5 hosts (each clone its own `recode.hostId`, each run in its own UTS namespace under
//! a hostname that changes now and then) sharing one bare remote, ticking every 30 minutes
//! of the trial's clock. Each host's own clock (`RECODE_NOW`) is skewed by up to ±6 h and
//! drifts by up to ±2 min a tick; a host may be partitioned from the remote for a few ticks
//! (its `origin` points nowhere: syncs fail, pushes fail) and heal, and one host may die for
//! good. Each tick an
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
//! - every worker of a host dead for good, not finished, is taken over by a live host by the
//!   trial's end, and no attempt is taken over twice (the remote's ledger);
//! - the remote's heartbeat refs are at most one per host, its claims at most one per
//!   worker branch.
//!
//! Prints `hosts loop trials N, violations V, takeovers T, comebacks C, kills K`.
//! `RECODE_HOSTS_TRIALS` (default 1) and `RECODE_HOSTS_SEED` (default 1) override the
//! run; `RECODE_HOSTS_JOBS` (default 1) runs that many trials at once (each seed once);
//! `RECODE_HOSTS_TRACE=1` tells each trial's story on stderr (every git-recode run with
//! its exit and stderr, every worker's verdict, the weather) and keeps its temporary
//! directory; `RECODE_PROFILE=1` prints where each trial's time went.
//! `benches/hosts.sh` runs it long.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::hosts::Fleet;
use crate::neverlose::Rng;

const HOSTS: [&str; 5] = ["hostA", "hostB", "hostC", "hostD", "hostE"];
/// The clock of tick 0: after every real mtime a trial makes (the agents date their files).
const T0: i64 = 1_893_456_000; // 2030-01-01T00:00:00Z
const TICK: i64 = 30 * 60;
/// The longest one git-recode run may take (no deadline is shortened here: a takeover
/// syncs twice and fetches; a shared 2-core machine under load is slow).
const RUN_LIMIT: Duration = Duration::from_secs(60);
const TICKS: i64 = 16;

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
    /// The hosts' clones (3–5).
    dirs: Vec<PathBuf>,
    up: Vec<bool>,
    /// Dead for good from this tick on.
    dies: Vec<Option<i64>>,
    /// Partitioned from the remote until this tick.
    cut_until: Vec<i64>,
    /// Each host's clock: seconds off the trial's, and its drift per tick.
    skew: Vec<i64>,
    drift: Vec<i64>,
    /// Each host's hostname now (its label; its id stays `HOSTS[h]`).
    label: Vec<String>,
    tick_no: i64,
    /// Each worker branch's host by the trial's own record (its newest successful start),
    /// and whether its agent finished (exit recorded).
    owner: BTreeMap<String, (usize, bool)>,
    agents: Vec<SimAgent>,
    now: i64,
    log: PathBuf,
    violations: Vec<String>,
    kills: usize,
    takeovers: usize,
    /// The slowest git-recode run.
    slowest: Duration,
    /// Where the trial's time goes: runs and seconds by what ran (`RECODE_PROFILE`).
    prof: std::cell::RefCell<BTreeMap<String, (u32, Duration)>>,
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
        let mut rng = Rng::new(seed);
        let n = 3 + rng.below(3) as usize;
        let dirs: Vec<PathBuf> = (0..n).map(|h| f.clone(&format!("h{h}"))).collect();
        for (h, d) in dirs.iter().enumerate() {
            f.name_host(d, HOSTS[h]);
        }
        let skew = (0..n)
            .map(|_| rng.below(12 * 3600 + 1) as i64 - 6 * 3600)
            .collect();
        let drift = (0..n).map(|_| rng.below(241) as i64 - 120).collect();
        // One host (never A, whose workers start the trial) may die for good.
        let mut dies = vec![None; n];
        if rng.chance(60) {
            dies[1 + rng.below(n as u64 - 1) as usize] = Some(2 + rng.below(8) as i64);
        }
        Trial {
            seed,
            rng,
            f,
            up: vec![true; n],
            dies,
            cut_until: vec![0; n],
            skew,
            drift,
            label: HOSTS[..n].iter().map(|h| h.to_string()).collect(),
            tick_no: 0,
            owner: BTreeMap::new(),
            dirs,
            agents: Vec::new(),
            now: T0,
            log,
            violations: Vec::new(),
            kills: 0,
            takeovers: 0,
            slowest: Duration::ZERO,
            prof: Default::default(),
        }
    }

    /// With `RECODE_HOSTS_TRACE` set: one line on stderr (a trial's story, for a violation's
    /// cause).
    fn trace(&self, h: usize, what: impl FnOnce() -> String) {
        if std::env::var_os("RECODE_HOSTS_TRACE").is_some() {
            eprintln!(
                "[{} t{} {} {}] {}",
                self.seed,
                self.tick_no,
                HOSTS[h],
                self.iso(h),
                what()
            );
        }
    }

    /// Count one run of `what` that took since `started` (`RECODE_PROFILE`).
    fn count(&self, what: &str, started: Instant) {
        let mut prof = self.prof.borrow_mut();
        let e = prof.entry(what.to_string()).or_default();
        e.0 += 1;
        e.1 += started.elapsed();
    }

    /// Run `f`, its time counted under `what`.
    fn timed<T>(&self, what: &str, f: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let out = f();
        self.count(what, started);
        out
    }

    /// Host `h`'s own clock now (skewed, drifting), in seconds.
    fn clock(&self, h: usize) -> i64 {
        self.now + self.skew[h] + self.drift[h] * self.tick_no
    }

    /// [`Trial::clock`] as RFC 3339.
    fn iso(&self, h: usize) -> String {
        jiff::Timestamp::from_second(self.clock(h))
            .unwrap()
            .to_string()
    }

    /// Whether host `h` is cut off the remote now.
    fn cut(&self, h: usize) -> bool {
        self.tick_no < self.cut_until[h]
    }

    /// Cut host `h` off the remote (its `origin` points nowhere) or heal it.
    fn set_cut(&mut self, h: usize, cut: bool) {
        let url = if cut {
            self.f.env.root().join("unreachable.git")
        } else {
            self.f.bare.clone()
        };
        let dir = self.dirs[h].clone();
        self.f.env.git(
            &dir,
            &["remote", "set-url", "origin", url.to_str().unwrap()],
        );
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
        let date = format!("@{} +0000", self.clock(h));
        cmd.env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .env("RECODE_HOST_NAME", &self.label[h])
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
        self.timed(&format!("git {} (agents, unshare)", args[0]), || {
            cmd.output().unwrap()
        })
    }

    /// git-recode on host `h`; with `killable`, maybe SIGKILLed at a random moment
    /// (`None` then).
    fn recode(&mut self, h: usize, args: &[&str], killable: bool) -> Option<Output> {
        self.recode_at(h, args, killable, None)
    }

    /// [`Self::recode`], killed at the failpoint `step` when it is given.
    fn recode_at(
        &mut self,
        h: usize,
        args: &[&str],
        killable: bool,
        step: Option<&str>,
    ) -> Option<Output> {
        let kill_after =
            (killable && self.rng.chance(12)).then(|| Duration::from_millis(self.rng.below(250)));
        let dir = self.dirs[h].clone();
        // Each clone was given its id at the trial's start (`Trial::new`).
        let mut cmd = self.f.cmd_as(&self.label[h], &dir, &self.iso(h), args);
        if let Some(step) = step {
            cmd.env(crate::common::ARM.0, crate::common::ARM.1)
                .env("RECODE_FAILPOINT", step);
        }
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
                    self.count("git-recode (killed)", started);
                    self.trace(h, || format!("{args:?} killed"));
                    return None;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let out = child.wait_with_output().unwrap();
        self.count(&format!("git-recode {}", args[0]), started);
        self.trace(h, || {
            format!(
                "{args:?} → {:?} {}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
                    .trim()
                    .replace('\n', " | ")
            )
        });
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
            self.owner.insert(branch.clone(), (0, false));
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
            // The agent's files are stamped by its own host's clock.
            let when = std::time::UNIX_EPOCH + Duration::from_secs(self.clock(h) as u64);
            std::fs::File::options()
                .write(true)
                .open(&file)
                .and_then(|f| f.set_modified(when))
                .unwrap();
            let commits = self.rng.chance(50);
            self.trace(h, || format!("agent on {branch} works, commits {commits}"));
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
                if !pushed.status.success() && !self.cut(h) {
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
                self.trace(h, || {
                    format!("agent on {branch} ends, finishes {}", a.finishes)
                });
                if a.finishes {
                    let _ = self.recode(h, &["record", "gate", &branch, "--passed"], false);
                    let _ = self.recode(h, &["record", "exit", &branch, "--rc", "0"], false);
                    self.owner.insert(branch.clone(), (h, true));
                }
                continue;
            }
            i += 1;
        }
    }

    /// Host `h` goes down: its agents die with it, each leaving uncommitted work.
    fn go_down(&mut self, h: usize) {
        self.up[h] = false;
        self.trace(h, || "goes down".into());
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
        // A partitioned host's fetch fails like its syncs: nothing new from the remote.
        let _ = self.git_on(h, &dir, &["fetch", "-q", "origin"]);
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
                self.trace(h, || {
                    format!(
                        "{} {} {} {} host {}: {}",
                        w["branch"], w["liveness"], w["state"], w["action"], w["host"], w["reason"]
                    )
                });
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
        // A host killed between its claim and its ledger append: always in some trials
        // on the tick before the host dies for good, now and then on any resume.
        let dying = self.dies[h] == Some(self.tick_no + 1) && self.rng.chance(50);
        let step = (dying || self.rng.chance(4)).then_some("resume-claimed");
        let Some(out) = self.recode_at(
            h,
            &[
                "resume",
                branch,
                "--json",
                "--output",
                prompt.to_str().unwrap(),
            ],
            true,
            step,
        ) else {
            return;
        };
        if !out.status.success() {
            if step.is_some() && out.status.code().is_none() {
                self.kills += 1;
                self.trace(h, || format!("resume {branch} killed after its claim"));
            }
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
        self.owner.insert(branch.to_string(), (h, false));
        self.agents.push(SimAgent {
            host: h,
            branch: branch.to_string(),
            wt: PathBuf::from(doc["cwd"].as_str().unwrap()),
            ticks_left,
            finishes,
        });
    }

    /// At the trial's end: every unfinished worker of a host dead for good long enough was
    /// taken over, or escalated at its cap (SPEC: a worker whose counted attempts reached
    /// `recode.maxAttempts` is `needs-human`, never resumed, by any host); no attempt was
    /// taken over twice; the remote's refs stay bounded.
    fn check_end(&mut self) {
        let escalated = self.escalated_on_remote();
        for (branch, (h, finished)) in &self.owner {
            if let Some(d) = self.dies[*h]
                && !finished
                && d + 10 <= TICKS
                && !escalated.contains(branch)
            {
                self.violations.push(format!(
                    "seed {}: {branch} of {} (dead for good at tick {d}) never taken over",
                    self.seed, HOSTS[*h]
                ));
            }
        }
        let bare = self.f.bare.clone();
        let refs = self.f.env.git(
            &bare,
            &["for-each-ref", "--format=%(refname)", "refs/recode/"],
        );
        let beats = refs
            .lines()
            .filter(|r| r.starts_with("refs/recode/hosts/"))
            .count();
        let claims = refs
            .lines()
            .filter(|r| r.starts_with("refs/recode/claims/"))
            .count();
        if beats > self.dirs.len() || claims > self.owner.len() {
            self.violations.push(format!(
                "seed {}: the remote holds {beats} heartbeats and {claims} claims for {} hosts and {} workers",
                self.seed,
                self.dirs.len(),
                self.owner.len()
            ));
        }
        // Each attempt is taken over at most once: per branch and host, no more takeovers
        // from that host than its attempts.
        let notes = self
            .f
            .env
            .git_cmd(&bare)
            .args(["notes", "--ref=recode", "list"])
            .output()
            .unwrap();
        let mut count: BTreeMap<(String, String, &str), usize> = BTreeMap::new();
        for l in String::from_utf8_lossy(&notes.stdout).lines() {
            let Some((_, anchor)) = l.split_once(' ') else {
                continue;
            };
            let text = self
                .f
                .env
                .git(&bare, &["notes", "--ref=recode", "show", anchor]);
            for line in text.lines() {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                    continue;
                };
                let branch = v["branch"].as_str().unwrap_or("").to_string();
                let (host, what) = match v["kind"].as_str() {
                    Some("takeover") => (v["from_host"].as_str(), "takeover"),
                    Some("spawn" | "resume") => (v["host"].as_str(), "attempt"),
                    _ => continue,
                };
                *count
                    .entry((branch, host.unwrap_or("").to_string(), what))
                    .or_default() += 1;
            }
        }
        for ((branch, host, what), n) in &count {
            let attempts = count
                .get(&(branch.clone(), host.clone(), "attempt"))
                .copied()
                .unwrap_or(0);
            if *what == "takeover" && *n > attempts {
                self.violations.push(format!(
                    "seed {}: {branch} taken over from {host} {n} times, for {attempts} attempts",
                    self.seed
                ));
            }
        }
    }

    /// The branches with an `escalated` event in the remote's ledger.
    fn escalated_on_remote(&self) -> std::collections::BTreeSet<String> {
        let bare = &self.f.bare;
        let notes = self
            .f
            .env
            .git_cmd(bare)
            .args(["notes", "--ref=recode", "list"])
            .output()
            .unwrap();
        let mut out = std::collections::BTreeSet::new();
        for l in String::from_utf8_lossy(&notes.stdout).lines() {
            let Some((_, anchor)) = l.split_once(' ') else {
                continue;
            };
            let text = self
                .f
                .env
                .git(bare, &["notes", "--ref=recode", "show", anchor]);
            for line in text.lines() {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
                    continue;
                };
                if v["kind"] == "escalated"
                    && let Some(b) = v["branch"].as_str()
                {
                    out.insert(b.to_string());
                }
            }
        }
        out
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
            // The hook logs the pusher's hostname: its label, `<id>` or `<id>.net<n>`.
            let host = host.split('.').next().unwrap_or(host);
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

    /// Whether host `h` is up this tick, and its weather: a new hostname now and then, a
    /// partition that heals, death for good.
    fn weather(&mut self, h: usize, tick: i64, a_down: std::ops::Range<i64>) -> bool {
        if self.dies[h].is_some_and(|d| tick >= d) {
            return false;
        }
        if self.rng.chance(8) {
            let n = self.rng.below(100);
            self.label[h] = format!("{}.net{n}", HOSTS[h]);
        }
        if !self.cut(h) && tick >= 2 && self.rng.chance(6) {
            self.cut_until[h] = tick + 1 + self.rng.below(3) as i64;
            self.set_cut(h, true);
            self.trace(h, || format!("cut until tick {}", self.cut_until[h]));
        } else if self.cut_until[h] == tick && tick > 0 {
            self.set_cut(h, false);
        }
        match h {
            0 => !a_down.contains(&tick),
            _ if self.up[h] => tick < 2 || !self.rng.chance(10),
            _ => self.rng.chance(30),
        }
    }

    fn run(mut self) -> (Vec<String>, usize, usize, usize) {
        let trial_started = Instant::now();
        let n = 2 + self.rng.below(3) as usize;
        self.start_fleet(n);
        // Host A sleeps once, from tick `down` for `long` ticks (four ticks are
        // recode.hostTimeout: a long sleep is taken over, a short one is not); the other
        // hosts go down and come back at random. A's first two ticks keep it up: its agents
        // are at work when the others first look.
        let down = 2 + self.rng.below(3) as i64;
        let long = 2 + self.rng.below(7) as i64;
        let hosts = self.dirs.len();
        for tick in 0..TICKS {
            self.tick_no = tick;
            let before: Vec<_> = self.timed("never-lose snapshot", || {
                self.dirs.iter().map(|d| self.f.env.work(d)).collect()
            });
            let mut order: Vec<usize> = (0..hosts).collect();
            for i in (1..hosts).rev() {
                order.swap(i, self.rng.below(i as u64 + 1) as usize);
            }
            for h in order {
                let wanted = self.weather(h, tick, down..down + long);
                match (self.up[h], wanted) {
                    (true, false) => self.go_down(h),
                    (_, true) => {
                        if !self.up[h] {
                            self.trace(h, || "comes back".into());
                        }
                        self.up[h] = true;
                        self.tick(h);
                    }
                    (false, false) => {}
                }
            }
            let checked = Instant::now();
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
            self.count("never-lose check", checked);
            self.check_pushes();
            self.now += TICK;
        }
        let ended = Instant::now();
        self.check_end();
        self.count("end checks", ended);
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
        if std::env::var_os("RECODE_PROFILE").is_some() {
            let prof = self.prof.borrow();
            let total: Duration = prof.values().map(|(_, d)| *d).sum();
            println!(
                "hosts loop seed {} profile: {:.2}s in all, {:.2}s counted below",
                self.seed,
                trial_started.elapsed().as_secs_f64(),
                total.as_secs_f64()
            );
            for (what, (n, d)) in prof.iter() {
                println!(
                    "hosts loop seed {} profile: {what}: {n} runs, {:.2}s ({:.0}%)",
                    self.seed,
                    d.as_secs_f64(),
                    100.0 * d.as_secs_f64() / total.as_secs_f64().max(1e-9)
                );
            }
        }
        let out = (
            std::mem::take(&mut self.violations),
            self.takeovers,
            comebacks,
            self.kills,
        );
        if std::env::var_os("RECODE_HOSTS_TRACE").is_some() {
            // Kept for a look at the clones, the remote and the push log.
            eprintln!("[{}] kept {}", self.seed, self.f.env.root().display());
            std::mem::forget(self);
        }
        out
    }
}

#[test]
fn hosts_with_skewed_clocks_and_changing_names_never_run_one_task_twice_and_lose_nothing() {
    let trials: u64 = std::env::var("RECODE_HOSTS_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let seed0: u64 = std::env::var("RECODE_HOSTS_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    // Trials are independent (each its own directory, remote and namespaces): `jobs` of
    // them run at once, each seed once.
    let jobs: u64 = std::env::var("RECODE_HOSTS_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .clamp(1, trials.max(1));
    let next = std::sync::atomic::AtomicU64::new(seed0);
    let done = std::sync::Mutex::new(BTreeMap::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                loop {
                    let seed = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if seed >= seed0 + trials {
                        break;
                    }
                    let (v, t, c, k) = Trial::new(seed).run();
                    println!(
                        "hosts loop seed {seed}: violations {}, takeovers {t}, comebacks {c}, kills {k}",
                        v.len()
                    );
                    // Each violation as its trial ends: a long run cut short keeps them.
                    for one in &v {
                        println!("hosts loop seed {seed} violation: {one}");
                    }
                    done.lock().unwrap().insert(seed, (v, t, c, k));
                }
            });
        }
    });
    let (mut violations, mut takeovers, mut comebacks, mut kills) = (Vec::new(), 0, 0, 0);
    for (v, t, c, k) in done.into_inner().unwrap().into_values() {
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
