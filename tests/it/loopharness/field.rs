//! The field states of the loop harness: what each generated worker is left as before the
//! loop starts (SPEC 1.2 "The loop settles": the states that wedge loops, not only debris),
//! and the trial-wide forge each trial talks to.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime};

use super::{T0, Trial, iso};

/// One worker's field state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Empty,
    Dirty,
    Ahead,
    Gated,
    Merged,
    /// Only an untracked nested repository is uncommitted.
    Nested,
    /// A transient limit that resets two hours later.
    Transient,
    /// A registered worktree whose directory is missing.
    Missing,
    /// Dirt, and a stale lock of one kind ([`LOCKS`]) left by a killed process.
    StaleLock,
    /// Gated, on a branch the remote's pre-receive hook refuses: every push is held.
    Rejected,
    /// Gated, with an untracked nested repository in its worktree.
    NestedGated,
    /// Gated, its commit holds a gitlink to a submodule commit the submodule's remote
    /// lacks (and sometimes the submodule is dirty too).
    Submodule,
    /// A live agent that hangs: its pid alive for ever, no activity, no exit (SPEC 1.3:
    /// stalled past `recode.hungAfter`, its process ended by `recover`).
    Hung,
    /// A live agent parked on a limit (its output says so), then silent past the reset.
    Parked,
}

pub(super) const KINDS: [Kind; 14] = [
    Kind::Empty,
    Kind::Dirty,
    Kind::Ahead,
    Kind::Gated,
    Kind::Merged,
    Kind::Nested,
    Kind::Transient,
    Kind::Missing,
    Kind::StaleLock,
    Kind::Rejected,
    Kind::NestedGated,
    Kind::Submodule,
    Kind::Hung,
    Kind::Parked,
];

/// The locks a SIGKILLed git or git-recode leaves (the issue's list): where, relative to
/// the worker's worktree git dir (`wt:`) or the common dir.
pub(super) const LOCKS: [&str; 6] = [
    "wt:index.lock",
    "wt:HEAD.lock",
    "refs/heads/{branch}.lock",
    "packed-refs.lock",
    "refs/notes/recode.lock",
    "refs/recode/anchors.lock",
];

/// The forge a trial's remote has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ForgeMode {
    /// A plain bare repository as the remote: no forge at all.
    Plain,
    /// A github.com remote and no token.
    NoToken,
    /// A github.com remote, a token, `recode.forge none`.
    ForgeNone,
    /// The loopback fake GitHub, with failures now and then ([`Trial::forge_weather`]).
    GitHub,
    /// The loopback fake GitLab (`recode.forge gitlab`), failing now and then.
    GitLab,
    /// The loopback fake Gitea (`recode.forge gitea`), failing now and then.
    Gitea,
}

pub(super) const FORGES: [ForgeMode; 6] = [
    ForgeMode::Plain,
    ForgeMode::NoToken,
    ForgeMode::ForgeNone,
    ForgeMode::GitHub,
    ForgeMode::GitLab,
    ForgeMode::Gitea,
];

impl ForgeMode {
    /// `recode.forge`, the remote's host and the token variable of a GitLab or Gitea.
    pub(super) fn other(self) -> Option<(&'static str, &'static str, &'static str)> {
        match self {
            ForgeMode::GitLab => Some(("gitlab", "gitlab.example", "GITLAB_TOKEN")),
            ForgeMode::Gitea => Some(("gitea", "gitea.example", "GITEA_TOKEN")),
            _ => None,
        }
    }
}

/// The gate a trial configures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Gate {
    /// No gate.
    None,
    /// A gate that sleeps past `recode.gateTimeout`.
    Hangs,
    /// A gate that waits on a socket that never answers (a loopback listener of the
    /// harness that never accepts).
    Socket,
}

/// A process that lives until the trial ends (a hung agent).
pub(super) struct Agent {
    pub(super) child: Child,
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Agent {
    /// A stand-in agent that never exits; its stdout goes to `out` after `first_line`.
    pub(super) fn start(out: &Path, first_line: &str) -> Agent {
        let child = Command::new("sh")
            .arg("-c")
            .arg(format!("printf '%s\\n' '{first_line}'; exec sleep 100000"))
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(out).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        for _ in 0..200 {
            if first_line.is_empty() || std::fs::metadata(out).map(|m| m.len()).unwrap_or(0) > 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Agent { child }
    }

    pub(super) fn alive(&mut self) -> bool {
        self.child.try_wait().ok().flatten().is_none()
    }
}

/// Set `path`'s mtime to `epoch` seconds.
pub(super) fn set_mtime(path: &Path, when: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(when)
        .unwrap();
}

fn at(epoch: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(epoch as u64)
}

impl Trial {
    /// The remote's pre-receive hook: refuses every branch named `*-rejected`.
    pub(super) fn refuse_rejected_branches(&self) {
        let hook = self.origin.join("hooks/pre-receive");
        std::fs::write(
            &hook,
            "#!/bin/sh\nwhile read old new ref; do case \"$ref\" in *-rejected) echo \"refusing $ref: protected branch\" >&2; exit 1;; esac; done\nexit 0\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// The bare remote of the trial's submodule (made once), with one commit.
    fn submodule_remote(&self) -> PathBuf {
        let bare = self.env.root().join("sub.git");
        if !bare.exists() {
            let src = self.env.root().join("sub-src");
            std::fs::create_dir_all(&src).unwrap();
            self.git(&src, &["init", "-q", "-b", "main"]);
            self.commit_file(&src, "lib.c", "v1\n");
            self.git(
                &self.env.root(),
                &[
                    "clone",
                    "-q",
                    "--bare",
                    src.to_str().unwrap(),
                    bare.to_str().unwrap(),
                ],
            );
        }
        bare
    }

    /// Lay a worker's field state over its worktree `wt` (the branch's attempt is
    /// ledgered by the caller for the kinds that exited).
    pub(super) fn lay(&mut self, i: u64, kind: Kind, branch: &str, wt: &Path) {
        match kind {
            Kind::Gated | Kind::Rejected => self.record_setup(&["gate", branch, "--passed"]),
            Kind::NestedGated => {
                self.record_setup(&["gate", branch, "--passed"]);
                self.nested(wt);
            }
            Kind::Submodule => {
                let bare = self.submodule_remote();
                let url = bare.to_str().unwrap();
                self.git(
                    wt,
                    &[
                        "-c",
                        "protocol.file.allow=always",
                        "submodule",
                        "add",
                        "-q",
                        url,
                        "sub",
                    ],
                );
                self.git(wt, &["commit", "-q", "-m", "add the submodule"]);
                // A commit in the submodule its remote never got, recorded in the worker.
                self.commit_file(&wt.join("sub"), "lib.c", &format!("patched by {branch}\n"));
                let sha = self.git(&wt.join("sub"), &["rev-parse", "HEAD"]);
                self.git(wt, &["add", "sub"]);
                self.git(wt, &["commit", "-q", "-m", "bump the submodule"]);
                self.sub_commits.push((wt.join("sub"), sha));
                if self.rng.chance(40) {
                    std::fs::write(wt.join("sub/lib.c"), "uncommitted in the submodule\n").unwrap();
                }
                self.record_setup(&["gate", branch, "--passed"]);
            }
            Kind::Merged => {
                self.git(wt, &["push", "-q", "-u", "origin", branch]);
                self.git(&self.repo, &["merge", "-q", "--no-edit", branch]);
                self.git(&self.repo, &["push", "-q", "origin", "main"]);
                let tip = self.git(wt, &["rev-parse", "HEAD"]);
                if let Some(gh) = &self.forge {
                    let n = gh.add_pr("acme", &self.slug, branch, "merged");
                    gh.set_head(n, &tip);
                }
                if let Some(f) = &self.other {
                    let n = f.add_pr("acme", &self.slug, branch, "merged");
                    f.set_head(n, &tip);
                }
            }
            Kind::Dirty | Kind::StaleLock => {
                std::fs::write(wt.join(format!("u{i}.txt")), "unsaved\n").unwrap();
                std::fs::write(wt.join(format!("s{i}.txt")), "staged\n").unwrap();
                self.git(wt, &["add", &format!("s{i}.txt")]);
                if self.rng.chance(50) {
                    std::fs::write(wt.join(format!("d{i}.dat")), "data\n").unwrap();
                }
                if kind == Kind::StaleLock {
                    let which = *self.rng.pick(&LOCKS);
                    self.stale_lock(wt, branch, which);
                }
            }
            Kind::Nested => self.nested(wt),
            Kind::Missing => {
                std::fs::rename(wt, self.env.root().join(format!("away{i}"))).unwrap();
            }
            Kind::Empty | Kind::Ahead | Kind::Transient | Kind::Hung | Kind::Parked => {}
        }
    }

    fn nested(&self, wt: &Path) {
        let dep = wt.join("vendor/dep");
        std::fs::create_dir_all(&dep).unwrap();
        self.git(&dep, &["init", "-q", "-b", "main"]);
        self.commit_file(&dep, "lib.c", "patched\n");
    }

    /// A lock as a SIGKILLed writer leaves it (an empty file), ten minutes old: stale
    /// for every kind (own refs after 30 s, the others after `recode.staleLockAfter`). On
    /// reftable a ref's lock is the stack's `reftable/tables.list.lock`, laid once the
    /// setup's own ref writes are done.
    fn stale_lock(&mut self, wt: &Path, branch: &str, which: &str) {
        let path = match which.strip_prefix("wt:") {
            Some(name) => PathBuf::from(self.git(
                wt,
                &["rev-parse", "--path-format=absolute", "--git-path", name],
            )),
            None if self.env.format.starts_with("reftable") => {
                self.late_locks
                    .push(self.repo.join(".git/reftable/tables.list.lock"));
                return;
            }
            None => self
                .repo
                .join(".git")
                .join(which.replace("{branch}", branch)),
        };
        leave_stale_lock(&path);
    }

    /// Start the live agent of a `Hung` or `Parked` worker and ledger its attempt.
    pub(super) fn live_agent(&mut self, kind: Kind, branch: &str, wt: &Path) {
        let out = self.env.root().join(format!("{branch}.out"));
        let line = if kind == Kind::Parked {
            "Rate Limited [retrying in 2h attempt #4]"
        } else {
            ""
        };
        let agent = Agent::start(&out, line);
        // The output was written half an hour before tick 0 (on the loop's clock).
        set_mtime(&out, at(T0 - 1800));
        let pid = agent.child.id().to_string();
        let mut c = self.recode(&self.repo);
        c.env("RECODE_NOW", iso(T0 - 1800)).args([
            "record",
            "spawn",
            branch,
            "--cwd",
            wt.to_str().unwrap(),
            "--pid",
            &pid,
            "--output",
            out.to_str().unwrap(),
        ]);
        let o = c.output().unwrap();
        assert!(o.status.success(), "seed {}: {o:?}", self.seed);
        self.agents.insert(branch.to_string(), agent);
    }

    /// Before a tick, maybe make the fake forge fail for a while: a run of 5xx answers,
    /// answers slower than `recode.networkTimeout`, or a 403 rate limit with its reset.
    pub(super) fn forge_weather(&mut self) {
        if let Some(f) = &self.other {
            match self.rng.below(10) {
                0 | 1 => {
                    for _ in 0..1 + self.rng.below(6) {
                        f.fail_next(502, &[], r#"{"message":"502 Bad Gateway"}"#);
                    }
                    self.forge_faults += 1;
                }
                2 => {
                    for _ in 0..1 + self.rng.below(3) {
                        f.fail_next(
                            429,
                            &[("retry-after", "1800"), ("ratelimit-remaining", "0")],
                            r#"{"message":"429 Too Many Requests"}"#,
                        );
                    }
                    self.forge_faults += 1;
                }
                _ => {}
            }
            return;
        }
        let Some(gh) = &self.forge else { return };
        match self.rng.below(10) {
            0 | 1 => {
                for _ in 0..1 + self.rng.below(6) {
                    gh.fail_next(502, &[], r#"{"message":"Server Error"}"#);
                }
                self.forge_faults += 1;
            }
            2 => {
                for _ in 0..1 + self.rng.below(3) {
                    gh.slow_next(1_600);
                }
                self.forge_faults += 1;
            }
            3 => {
                let reset = (SystemTime::now() + Duration::from_secs(1800))
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .unwrap()
                    .as_secs()
                    .to_string();
                for _ in 0..1 + self.rng.below(3) {
                    gh.fail_next(
                        403,
                        &[
                            ("x-ratelimit-remaining", "0"),
                            ("x-ratelimit-limit", "5000"),
                            ("x-ratelimit-reset", &reset),
                        ],
                        r#"{"message":"API rate limit exceeded for user ID 1."}"#,
                    );
                }
                self.forge_faults += 1;
            }
            _ => {}
        }
    }
}

/// Write `path` as a SIGKILLed writer leaves a lock: an empty file, ten minutes old.
pub(super) fn leave_stale_lock(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "").unwrap();
    set_mtime(path, SystemTime::now() - Duration::from_secs(600));
}
