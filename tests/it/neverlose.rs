//! The randomized never-lose harness (SPEC safety rules 0 and 1).
//!
//! A trial is one generated repository with a handful of workers, each in a debris state
//! picked by a seeded PRNG (empty; commits ahead; gated; merged by merge commit, squash or
//! rebase, pushed or not, the fake forge reporting the PR merged; an open PR; a detached
//! HEAD after commits or after a rebase; a locked bystander worktree whose directory is
//! missing; and the round-3 states of `states.rs`: submodules holding work, three branches
//! of one task with one live, an unborn HEAD with or without its reflog, an oversize
//! artifact), dirt laid over some of them (staged, unstaged, staged-then-changed, untracked,
//! ignored, ignored secrets, untracked secrets, an untracked nested repository), and
//! faults (SIGKILL at one failpoint, a WIP commit that cannot be signed, an origin whose
//! pre-receive hook rejects every push, the caller's GIT_DIR/GIT_WORK_TREE/GIT_INDEX_FILE
//! exported, a forge answering 500). `recover --all` runs twice (the first with the kill);
//! after each run the invariants are checked:
//!
//! - every commit reachable before (any ref, any worktree HEAD) is reachable after, from a
//!   ref, a worktree HEAD, or the origin;
//! - every staged, unstaged or untracked content is on disk at its path or in a reachable
//!   commit's tree; an ignored secret is still on disk (other ignored files may go with a
//!   removed worktree: SPEC "special cases");
//! - every locked worktree whose directory is missing is still registered;
//! - the ledger only grows: every line present before is present after.
//!
//! Round 3 adds faults (an origin refusing files for size, a shallow repository) and
//! invariants (`states::Extra`: live workers untouched, unborn tips kept; submodules'
//! directories, commits and dirt in `invariants.rs`). A trial copies its base repository
//! from a template built once per process (`RECODE_NO_TEMPLATE=1` builds it per trial, the
//! baseline); `RECODE_PROFILE=1` prints each trial's times, faults and recover results.
//!
//! `RECODE_TRIALS` (default 32), `RECODE_SEED` (first seed, default 1) and
//! `RECODE_THREADS` (default 2) override the run; a seed reproduces its trial. A violation
//! prints its seed; the run fails at the end.

mod hiding;
pub(crate) mod invariants;
mod states;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::common::{LATER, TestEnv, each_seed, env_u64};
use crate::fake_github::FakeGitHub;
use hiding::copy_dir;

/// xorshift64*: a tiny seeded PRNG, so a seed reproduces a trial.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// True with probability `pct` percent.
    pub(crate) fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
    pub(crate) fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

const FAILPOINTS: [&str; 12] = [
    "delete-worktree",
    "delete-moved",
    "delete-inside",
    "delete-gitfile",
    "delete-branch",
    "wip-refused",
    "wip-add",
    "wip-commit",
    "wip-moved",
    "wip-push",
    "publish-push",
    "publish-pr",
];

#[derive(Clone, Copy, Debug)]
enum Kind {
    Empty,
    Ahead,
    Gated,
    MergedMerge,
    MergedSquash,
    MergedRebase,
    OpenPr,
    Detached,
    DetachedRebased,
    Bystander,
    /// Submodules holding work (dirty, local-only commits, nested, two): `states.rs`.
    Submodule,
    /// Three branches of one task, one live: `states.rs`.
    ThreeBranches,
    /// The branch deleted under its worktree, with or without its reflog: `states.rs`.
    Unborn,
    /// An oversize untracked artifact: `states.rs`.
    Oversize,
    /// SPEC 1.3 (`hiding.rs`): work only a stash holds, a foreign `.git`, an edit an index
    /// flag hides, requests with the branch's name from forks and deleted forks.
    Stash,
    Foreign,
    Hidden,
    ForkPr,
}

const KINDS: [Kind; 18] = [
    Kind::Stash,
    Kind::Foreign,
    Kind::Hidden,
    Kind::ForkPr,
    Kind::Empty,
    Kind::Ahead,
    Kind::Gated,
    Kind::MergedMerge,
    Kind::MergedSquash,
    Kind::MergedRebase,
    Kind::OpenPr,
    Kind::Detached,
    Kind::DetachedRebased,
    Kind::Bystander,
    Kind::Submodule,
    Kind::ThreeBranches,
    Kind::Unborn,
    Kind::Oversize,
];

/// What a trial injects, for the failure message.
#[derive(Debug, Default)]
struct Faults {
    failpoint: Option<&'static str>,
    unsignable: bool,
    rejecting: bool,
    caller_env: bool,
    forge_500: bool,
    /// The origin refuses files over 20k for size (GitHub's words).
    size_refusing: bool,
    /// The repository is shallow: no worker meets the base in the available history.
    shallow: bool,
    /// A stale `core.fsmonitor` and the untracked cache (SPEC 1.3: `hiding.rs`).
    stale_monitor: bool,
}

/// One generated repository.
struct Trial {
    seed: u64,
    env: TestEnv,
    repo: PathBuf,
    origin: PathBuf,
    slug: String,
    gh: FakeGitHub,
    faults: Faults,
    workers: Vec<String>,
    /// The round-3 states' own invariants (live workers, unborn HEADs).
    extra: states::Extra,
    /// The SPEC 1.3 states' own invariants (`hiding.rs`).
    hiding: hiding::Hiding,
}

/// The repository every trial starts from, built once per process and copied (a trial's
/// cost was mostly git runs; these ten or so are the same in every trial): `r/` (`main`
/// with `.gitignore`, `README.md` tagged `base0`, then `main2.txt`; pushed with `-u`;
/// `recode.wipMaxFileSize` 64k) and its bare `origin.git/`, reached through
/// `https://github.com/acme/<slug>.git` and `url.<path>.insteadOf`.
struct Template {
    _env: TestEnv,
    root: PathBuf,
}

/// The slug and origin path in the template's config, replaced by each trial's own.
const TEMPLATE_SLUG: &str = "template-slug";

fn template() -> &'static Template {
    static T: OnceLock<Template> = OnceLock::new();
    T.get_or_init(|| {
        let env = TestEnv::new();
        let root = env.root();
        build_base(&env, &root, TEMPLATE_SLUG);
        Template { _env: env, root }
    })
}

/// Build the base repository (see [`Template`]) under `root` with git's own commands.
/// `RECODE_NO_TEMPLATE=1` makes every trial do this itself: the baseline of the bench.
fn build_base(env: &TestEnv, root: &Path, slug: &str) {
    let (repo, origin) = (root.join("r"), root.join("origin.git"));
    std::fs::create_dir_all(&repo).unwrap();
    let git = |dir: &Path, args: &[&str]| env.git(dir, args);
    let commit = |name: &str, text: &str| {
        std::fs::write(repo.join(name), text).unwrap();
        git(&repo, &["add", "--", name]);
        git(&repo, &["commit", "-q", "-m", &format!("add {name}")]);
    };
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join(".gitignore"), ".env*\n*.log\n").unwrap();
    git(&repo, &["add", ".gitignore"]);
    commit("README.md", "hello\n");
    git(&repo, &["tag", "base0"]);
    commit("main2.txt", "main moved\n");
    git(
        root,
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            origin.to_str().unwrap(),
        ],
    );
    let url = format!("https://github.com/acme/{slug}.git");
    git(&repo, &["remote", "add", "origin", &url]);
    git(
        &repo,
        &[
            "config",
            &format!("url.{}.insteadOf", origin.display()),
            &url,
        ],
    );
    git(&repo, &["push", "-q", "-u", "origin", "main"]);
    git(&repo, &["config", "recode.wipMaxFileSize", "64k"]);
}

impl Template {
    /// Copy `r/` and `origin.git/` under `root`, the config naming `slug` and the new
    /// origin's path.
    fn copy_to(&self, root: &Path, slug: &str) {
        for d in ["r", "origin.git"] {
            copy_dir(&self.root.join(d), &root.join(d));
        }
        let config = root.join("r/.git/config");
        let text = std::fs::read_to_string(&config)
            .unwrap()
            .replace(TEMPLATE_SLUG, slug)
            .replace(
                &self.root.join("origin.git").display().to_string(),
                &root.join("origin.git").display().to_string(),
            );
        std::fs::write(config, text).unwrap();
    }
}

fn shared_forge() -> FakeGitHub {
    static GH: OnceLock<FakeGitHub> = OnceLock::new();
    GH.get_or_init(FakeGitHub::start).clone()
}

impl Trial {
    fn git(&self, dir: &Path, args: &[&str]) -> String {
        self.env.git(dir, args)
    }

    fn commit_file(&self, dir: &Path, name: &str, text: &str) {
        let p = dir.join(name);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(&p, text).unwrap();
        self.git(dir, &["add", "--", name]);
        self.git(dir, &["commit", "-q", "-m", &format!("add {name}")]);
    }

    fn recode(&self, dir: &Path) -> std::process::Command {
        let mut c = self.env.cmd(dir);
        c.env("RECODE_GITHUB_API", &self.gh.url)
            .env("RECODE_FORGE_MAX_WAIT", "0")
            .env("GH_TOKEN", "test-token");
        c
    }

    fn record(&self, args: &[&str]) {
        let t0 = std::time::Instant::now();
        let out = self
            .recode(&self.repo)
            .env("RECODE_NOW", "2029-12-31T00:00:00Z")
            .arg("record")
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "seed {}: record {args:?}: {}",
            self.seed,
            String::from_utf8_lossy(&out.stderr)
        );
        if std::env::var_os("RECODE_PROFILE").is_some() {
            eprintln!("  record {:?}", t0.elapsed());
        }
    }

    fn new(seed: u64) -> Trial {
        let mut rng = Rng::new(seed);
        let env = TestEnv::new();
        let faults = Faults {
            failpoint: rng.chance(60).then(|| *rng.pick(&FAILPOINTS)),
            unsignable: rng.chance(20),
            rejecting: rng.chance(20),
            caller_env: rng.chance(20),
            forge_500: rng.chance(10),
            size_refusing: false,
            shallow: false,
            stale_monitor: rng.chance(15),
        };
        let mut faults = faults;
        faults.size_refusing = !faults.rejecting && rng.chance(20);
        faults.shallow = rng.chance(10);
        let gh = if faults.forge_500 {
            FakeGitHub::start()
        } else {
            shared_forge()
        };
        let slug = format!("t{seed}");
        let root = env.root();
        let repo = root.join("r");
        let origin = root.join("origin.git");
        let mut t = Trial {
            seed,
            env,
            repo: repo.clone(),
            origin: origin.clone(),
            slug,
            gh,
            faults,
            workers: Vec::new(),
            extra: states::Extra::default(),
            hiding: hiding::Hiding::default(),
        };
        if std::env::var_os("RECODE_NO_TEMPLATE").is_some() {
            build_base(&t.env, &root, &t.slug);
        } else {
            template().copy_to(&root, &t.slug);
        }
        let n = 3 + rng.below(4);
        for i in 1..=n {
            let kind = *rng.pick(&KINDS);
            t.add_worker(&mut rng, i, kind);
        }
        if rng.chance(30) {
            std::fs::write(repo.join("main-staged.txt"), "user's staged work\n").unwrap();
            t.git(&repo, &["add", "main-staged.txt"]);
            std::fs::write(repo.join("main-untracked.txt"), "user's notes\n").unwrap();
        }
        t.inject();
        t
    }

    fn inject(&self) {
        if self.faults.unsignable {
            self.git(&self.repo, &["config", "commit.gpgSign", "true"]);
            self.git(&self.repo, &["config", "gpg.program", "/nonexistent/gpg"]);
        }
        if self.faults.rejecting {
            let hook = self.origin.join("hooks/pre-receive");
            std::fs::write(&hook, "#!/bin/sh\necho rejected by policy >&2\nexit 1\n").unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        if self.faults.size_refusing {
            self.refuse_size();
        }
        if self.faults.shallow {
            self.make_shallow();
        }
        if self.faults.stale_monitor {
            self.stale_monitor();
        }
        if self.faults.forge_500 {
            for _ in 0..40 {
                self.gh.fail_next(500, &[], r#"{"message":"Server Error"}"#);
            }
        }
    }

    fn add_worker(&mut self, rng: &mut Rng, i: u64, kind: Kind) {
        if matches!(kind, Kind::ThreeBranches) {
            self.add_three_branches(rng, i);
            return;
        }
        let name = format!("{kind:?}").to_ascii_lowercase();
        let branch = if matches!(kind, Kind::Bystander) && rng.chance(50) {
            format!("feature-{i}-away")
        } else {
            format!("issue-{i}-{name}")
        };
        let wt = self.env.root().join(format!("wt/{i}"));
        let wt_s = wt.to_str().unwrap().to_string();
        self.git(
            &self.repo,
            &["worktree", "add", "-q", "-b", &branch, &wt_s, "base0"],
        );
        let commits = match kind {
            Kind::Empty | Kind::Stash => 0,
            Kind::Bystander => rng.below(2),
            _ => 1 + rng.below(3),
        };
        for k in 0..commits {
            self.commit_file(&wt, &format!("w{i}-{k}.txt"), &format!("{branch} {k}\n"));
        }
        let pushed = rng.chance(60);
        if pushed && commits > 0 && !matches!(kind, Kind::Bystander) {
            self.git(&wt, &["push", "-q", "-u", "origin", &branch]);
        }
        if rng.chance(85) {
            self.record(&["spawn", &branch]);
            let rc = rng.pick(&["0", "1", "2"]).to_string();
            self.record(&["exit", &branch, "--rc", &rc]);
        }
        match kind {
            Kind::Gated => self.record(&["gate", &branch, "--passed"]),
            Kind::MergedMerge | Kind::MergedSquash | Kind::MergedRebase => {
                self.merge(&branch, kind);
                let tip = self.git(&wt, &["rev-parse", "HEAD"]);
                let n = self.gh.add_pr("acme", &self.slug, &branch, "merged");
                self.gh.set_head(n, &tip);
                if rng.chance(20) {
                    self.commit_file(&wt, &format!("w{i}-after.txt"), "new work\n");
                }
            }
            Kind::OpenPr => {
                let tip = self.git(&wt, &["rev-parse", "HEAD"]);
                let n = self.gh.add_pr("acme", &self.slug, &branch, "open");
                self.gh.set_head(n, &tip);
            }
            Kind::Detached => {
                self.git(&wt, &["checkout", "-q", "--detach"]);
                for k in 0..1 + rng.below(2) {
                    self.commit_file(&wt, &format!("d{i}-{k}.txt"), "detached work\n");
                }
            }
            Kind::DetachedRebased => {
                self.git(&wt, &["checkout", "-q", "--detach"]);
                self.git(&wt, &["rebase", "-q", "main"]);
            }
            Kind::Bystander => {
                self.git(
                    &self.repo,
                    &[
                        "worktree",
                        "lock",
                        "--reason",
                        "on a volume not mounted",
                        &wt_s,
                    ],
                );
                std::fs::remove_dir_all(&wt).unwrap();
                self.workers.push(branch);
                return;
            }
            Kind::Submodule => self.add_submodules(rng, &wt, i),
            Kind::Unborn => self.delete_branch_under(rng, &wt, &branch),
            Kind::Oversize => self.oversize(rng, &wt, i),
            Kind::Stash => self.stash_only(rng, &wt, &branch, i),
            Kind::ForkPr => self.fork_requests(rng, &wt, &branch),
            Kind::Foreign | Kind::Hidden => {
                // No dirt over them: it would reach the foreign repository, or the edit.
                match kind {
                    Kind::Foreign => self.foreign_git(rng, &wt, &branch, i),
                    _ => self.hidden_edit(rng, &wt, &branch, i),
                }
                self.workers.push(branch);
                return;
            }
            Kind::Empty | Kind::Ahead | Kind::ThreeBranches => {}
        }
        if rng.chance(55) {
            self.dirty(rng, &wt, i);
        }
        self.workers.push(branch);
    }

    /// Merge `branch` into main the way the forge's button would, and push main.
    fn merge(&self, branch: &str, kind: Kind) {
        let r = &self.repo;
        match kind {
            Kind::MergedMerge => {
                self.git(r, &["merge", "-q", "--no-ff", "-m", "Merge PR", branch]);
            }
            Kind::MergedSquash => {
                self.git(r, &["merge", "-q", "--squash", branch]);
                self.git(r, &["commit", "-q", "-m", "Squashed PR"]);
            }
            _ => {
                let range = format!("base0..{branch}");
                if !self.git(r, &["rev-list", &range]).is_empty() {
                    self.git(r, &["cherry-pick", "--allow-empty", &range]);
                }
            }
        }
        self.git(r, &["push", "-q", "origin", "main"]);
    }

    /// Lay dirt over a worktree: a random subset of every kind git distinguishes.
    fn dirty(&self, rng: &mut Rng, wt: &Path, i: u64) {
        let w = |p: &str, text: &str| {
            let f = wt.join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, text).unwrap();
        };
        if rng.chance(50) {
            w(&format!("u{i}.txt"), "untracked\n");
            w("newdir/deep/x.txt", "untracked in a new directory\n");
        }
        if rng.chance(40) {
            w(&format!("s{i}.txt"), "staged new\n");
            self.git(wt, &["add", &format!("s{i}.txt")]);
        }
        match rng.below(5) {
            0 => w("README.md", "unstaged change\n"),
            1 => {
                w("README.md", "staged version\n");
                self.git(wt, &["add", "README.md"]);
                w("README.md", "worktree version\n");
            }
            2 => {
                w("README.md", "staged, then deleted\n");
                self.git(wt, &["add", "README.md"]);
                std::fs::remove_file(wt.join("README.md")).unwrap();
            }
            3 => std::fs::remove_file(wt.join("README.md")).unwrap(),
            _ => {}
        }
        if rng.chance(30) {
            w(&format!("a{i}.txt"), "added, then changed: staged\n");
            self.git(wt, &["add", &format!("a{i}.txt")]);
            w(&format!("a{i}.txt"), "added, then changed: worktree\n");
        }
        if rng.chance(35) {
            w("build.log", "ignored output\n");
        }
        if rng.chance(35) {
            let name = *rng.pick(&[".env", ".env.local"]);
            w(name, "API_KEY=ignored-secret\n");
        }
        if rng.chance(15) {
            w("id_rsa", "untracked secret key\n");
        }
        if rng.chance(15) {
            let dep = wt.join("vendor/dep");
            std::fs::create_dir_all(&dep).unwrap();
            self.git(&dep, &["init", "-q", "-b", "main"]);
            self.commit_file(&dep, "lib.c", &format!("nested {i}\n"));
            std::fs::write(dep.join("uncommitted.c"), "nested dirt\n").unwrap();
        }
    }

    /// `recover --all --json` with the faults; `None` when killed by a signal.
    fn recover(&self, failpoint: Option<&str>) -> (Option<i32>, String) {
        let mut c = self.recode(&self.repo);
        c.env("RECODE_NOW", LATER);
        if let Some(fp) = failpoint {
            c.env("RECODE_FAILPOINT", fp)
                .env(crate::common::ARM.0, crate::common::ARM.1);
        }
        if self.faults.caller_env {
            let gd = self.repo.join(".git");
            c.env("GIT_DIR", &gd)
                .env("GIT_WORK_TREE", &self.repo)
                .env("GIT_INDEX_FILE", gd.join("index"));
        }
        let out = c.args(["recover", "--all", "--json"]).output().unwrap();
        if std::env::var_os("RECODE_PROFILE").is_some() {
            eprintln!("  {}", String::from_utf8_lossy(&out.stdout));
        }
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

impl Trial {
    /// Run the trial: two recovers, invariants after each; returns the violations.
    fn run(&self) -> Vec<String> {
        let t0 = std::time::Instant::now();
        let before = invariants::before(&self.env, &self.repo);
        let mut v = Vec::new();
        let prof = std::env::var_os("RECODE_PROFILE").is_some();
        if prof {
            eprintln!("  before {:?}", t0.elapsed());
        }
        for (n, fp) in [(1, self.faults.failpoint), (2, None)] {
            let t1 = std::time::Instant::now();
            let (code, stderr) = self.recover(fp);
            if prof {
                eprintln!("  recover {n} {:?}", t1.elapsed());
            }
            let when = format!("after run {n} (exit {code:?})");
            if stderr.contains("panicked") || !matches!(code, None | Some(0 | 1 | 3)) {
                v.push(format!("{when}: crashed: {stderr}"));
            }
            if code.is_none() && fp.is_none() {
                v.push(format!("{when}: killed without a failpoint: {stderr}"));
            }
            v.extend(invariants::check(
                &self.env,
                &self.repo,
                &self.origin,
                &before,
                &when,
            ));
            v.extend(self.extra.check(&self.env, &self.repo, &self.origin, &when));
            v.extend(self.hiding.check(&self.env, &self.repo, &when));
        }
        v
    }
}

/// The CI run: a fixed set of seeds (`RECODE_TRIALS`, `RECODE_SEED`, `RECODE_THREADS`
/// override it). Prints `trials N, violations V, seeds A..B, seconds S`.
#[test]
fn randomized_trials_never_lose_work() {
    let trials = env_u64("RECODE_TRIALS", 32);
    let first = env_u64("RECODE_SEED", 1);
    let threads = env_u64("RECODE_THREADS", 2);
    let start = std::time::Instant::now();
    let failures: Vec<(u64, Vec<String>)> = each_seed(first, trials, threads, |seed| {
        let t0 = std::time::Instant::now();
        let t = Trial::new(seed);
        let t1 = t0.elapsed();
        let v = t.run();
        if std::env::var_os("RECODE_PROFILE").is_some() {
            eprintln!("seed {seed}: build {:?}, run {:?}, faults {:?}", t1, t0.elapsed() - t1, t.faults);
        }
        if !v.is_empty() {
            eprintln!(
                "never-lose violation, seed {seed} (RECODE_SEED={seed} RECODE_TRIALS=1), workers {:?}, faults {:?}:\n  {}",
                t.workers,
                t.faults,
                v.join("\n  ")
            );
        }
        (seed, v)
    })
    .into_iter()
    .filter(|f| !f.1.is_empty())
    .collect();
    println!(
        "trials {trials}, violations {}, seeds {first}..{}, seconds {}",
        failures.len(),
        first + trials - 1,
        start.elapsed().as_secs()
    );
    let seeds: Vec<u64> = failures.iter().map(|f| f.0).collect();
    assert!(seeds.is_empty(), "never-lose violations at seeds {seeds:?}");
}

impl Trial {
    /// The branches `status --offline --json` calls `needs-human`, and the branches in the
    /// attention queue of `report --json` other than `open-request` ones, at `now`.
    fn needs_human_both(&self, now: &str) -> (Vec<String>, Vec<String>) {
        let json = |args: &[&str]| -> serde_json::Value {
            let out = self
                .recode(&self.repo)
                .env("RECODE_NOW", now)
                .args(args)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "seed {}: {args:?}: {}",
                self.seed,
                String::from_utf8_lossy(&out.stderr)
            );
            serde_json::from_slice(&out.stdout).unwrap()
        };
        let status = json(&["status", "--offline", "--json"]);
        let mut from_status: Vec<String> = status["workers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["state"] == "needs-human")
            .map(|w| w["branch"].as_str().unwrap().to_string())
            .collect();
        let report = json(&["report", "--json"]);
        let mut from_report: Vec<String> = report["queue"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|q| q["cause"] != "open-request")
            .map(|q| q["branch"].as_str().unwrap().to_string())
            .collect();
        from_status.sort();
        from_report.sort();
        (from_status, from_report)
    }
}

/// One rule book: in every state the harness builds (every kind of worker, hidden work,
/// forks' requests, failpoints), before and after a `recover`, `report`'s attention queue
/// names exactly the workers `status --offline` calls `needs-human` (the worktrees are
/// at hand here).
#[test]
fn report_and_status_name_the_same_workers_needing_a_human() {
    let trials = env_u64("RECODE_AGREE_TRIALS", 12);
    let failures: Vec<String> = each_seed(500, trials, 2, |seed| {
        let t = Trial::new(seed);
        let mut v = Vec::new();
        let (s, r) = t.needs_human_both("2029-12-31T00:00:00Z");
        if s != r {
            v.push(format!(
                "seed {seed} before recover: status {s:?}, report {r:?}"
            ));
        }
        let _ = t.recover(None);
        let (s, r) = t.needs_human_both(LATER);
        if s != r {
            v.push(format!(
                "seed {seed} after recover: status {s:?}, report {r:?}"
            ));
        }
        v
    })
    .into_iter()
    .flatten()
    .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
