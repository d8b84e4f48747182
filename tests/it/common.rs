//! The test environment: real git, real binary, isolated from the machine's config,
//! clock pinned. A run renders as stdout, `--- stderr ---`, stderr, `[exit status: N]`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The pinned clock of every test (RECODE_NOW), and its epoch seconds.
/// The variable and value that arm `RECODE_FAILPOINT` in a child (test-only, see
/// `git_recode::failpoint`).
pub const ARM: (&str, &str) = (
    git_recode::app::parts::failpoint::ARM_ENV,
    git_recode::app::parts::failpoint::ARM_VALUE,
);

pub const NOW: &str = "2026-11-20T12:00:00Z";
pub const NOW_EPOCH: i64 = 1_795_176_000;
/// A clock after every real mtime a test can make, for tests that act (recover).
pub const LATER: &str = "2030-01-01T00:00:00Z";
pub const LATER_EPOCH: i64 = 1_893_456_000;

/// `rev-list` argument leaving out the heartbeat refs (before `--all`).
pub const HEARTBEATS_EXCLUDED: &str = "--exclude=refs/recode/hosts/*";

/// The repository format every fixture repository is made in, from `RECODE_TEST_FORMAT`:
/// `files-sha1` (the default), `reftable`, `sha256` or `reftable-sha256`.
///
/// Panics on another value: a typo must not run the default suite under a format's name.
pub fn test_format() -> &'static str {
    match std::env::var("RECODE_TEST_FORMAT").as_deref() {
        Err(_) | Ok("") | Ok("files-sha1") => "files-sha1",
        Ok("reftable") => "reftable",
        Ok("sha256") => "sha256",
        Ok("reftable-sha256") => "reftable-sha256",
        Ok(other) => panic!(
            "RECODE_TEST_FORMAT={other}: expected files-sha1, reftable, sha256 or reftable-sha256"
        ),
    }
}

/// The variables that make `git init`, `git init --bare` and `git clone` create
/// repositories of `format` ([`test_format`]'s names): `GIT_DEFAULT_REF_FORMAT`,
/// `GIT_DEFAULT_HASH` (a clone takes its remote's hash, and its ref format from the
/// variable).
pub fn format_vars(format: &str) -> Vec<(&'static str, &'static str)> {
    let mut vars = Vec::new();
    if format.starts_with("reftable") {
        vars.push(("GIT_DEFAULT_REF_FORMAT", "reftable"));
    }
    if format.ends_with("sha256") {
        vars.push(("GIT_DEFAULT_HASH", "sha256"));
    }
    vars
}

/// [`format_vars`] of [`test_format`]: for a process the tests start without a [`TestEnv`].
pub fn format_env() -> Vec<(&'static str, &'static str)> {
    format_vars(test_format())
}

pub struct TestEnv {
    pub tmp: tempfile::TempDir,
    pub home: PathBuf,
    /// The format of the repositories it makes ([`test_format`] unless
    /// [`TestEnv::in_format`] set one).
    pub format: &'static str,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let tmp = tempfile::Builder::new()
            .prefix("recode-test")
            .tempdir()
            .unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        TestEnv {
            tmp,
            home,
            format: test_format(),
        }
    }

    /// A test environment whose repositories are made in `format` (`files-sha1`,
    /// `reftable`, `sha256`, `reftable-sha256`), whatever `RECODE_TEST_FORMAT` says.
    pub fn in_format(format: &'static str) -> TestEnv {
        TestEnv {
            format,
            ..TestEnv::new()
        }
    }

    /// A test environment with files refs and the object format `RECODE_TEST_FORMAT`
    /// names: for the tests of the files backend's own files (a ref's lock file, the HEAD
    /// reflog restoring a deleted branch), which a reftable repository does not have.
    pub fn with_files_refs() -> TestEnv {
        TestEnv::in_format(if test_format().ends_with("sha256") {
            "sha256"
        } else {
            "files-sha1"
        })
    }

    /// The lock file a writer of the notes ref holds in `repo` (a main worktree): the ref's
    /// own `refs/notes/recode.lock` with files refs, the stack's `tables.list.lock` with
    /// reftable.
    pub fn notes_lock(&self, repo: &Path) -> PathBuf {
        if self.format.starts_with("reftable") {
            repo.join(".git/reftable/tables.list.lock")
        } else {
            repo.join(".git/refs/notes/recode.lock")
        }
    }

    /// The object format of its repositories.
    pub fn hash_kind(&self) -> gix::hash::Kind {
        if self.format.ends_with("sha256") {
            gix::hash::Kind::Sha256
        } else {
            gix::hash::Kind::Sha1
        }
    }

    pub fn root(&self) -> PathBuf {
        self.tmp.path().canonicalize().unwrap()
    }

    fn apply_env(&self, cmd: &mut Command) {
        // `git-recode` on PATH, as after an install: a hook's `exec git-recode` runs.
        let exe = assert_cmd::cargo::cargo_bin("git-recode");
        let mut dirs = vec![exe.parent().unwrap().to_path_buf()];
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        cmd.env_clear()
            .env("PATH", std::env::join_paths(dirs).unwrap())
            .env("HOME", &self.home)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test Author")
            .env("GIT_AUTHOR_EMAIL", "author@example.invalid")
            .env("GIT_COMMITTER_NAME", "Test Committer")
            .env("GIT_COMMITTER_EMAIL", "committer@example.invalid")
            .env("GIT_AUTHOR_DATE", "@1795000000 +0000")
            .env("GIT_COMMITTER_DATE", "@1795000000 +0000")
            .env("LC_ALL", "C")
            .env("TZ", "UTC")
            .env("RECODE_NOW", NOW)
            // No machine-wide Watchman server reads a test's worktrees (tests/it/watch.rs
            // starts its own).
            .env("WATCHMAN_SOCK", self.tmp.path().join("no-watchman.sock"))
            .envs(format_vars(self.format))
            .stdin(Stdio::null());
    }

    /// A `git` command in `dir` with the test environment (for stdin or a failure to inspect).
    pub fn git_cmd(&self, dir: &Path) -> Command {
        let mut cmd = Command::new("git");
        self.apply_env(&mut cmd);
        cmd.current_dir(dir);
        cmd
    }

    /// `git <args>` in `dir`; panics unless it succeeds; returns trimmed stdout.
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        let mut cmd = Command::new("git");
        self.apply_env(&mut cmd);
        let out = cmd.args(args).current_dir(dir).output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    /// A `git-recode` command in `dir` with the test environment.
    pub fn cmd(&self, dir: &Path) -> Command {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("git-recode"));
        self.apply_env(&mut cmd);
        cmd.current_dir(dir);
        cmd
    }

    pub fn output(&self, dir: &Path, args: &[&str]) -> Output {
        self.cmd(dir).args(args).output().unwrap()
    }

    /// Run and render: stdout, `--- stderr ---`, stderr, `[exit status: N]`, temp root as `<root>`.
    ///
    /// Tests compare the whole rendering to an inline snapshot:
    /// `insta::assert_snapshot!(env.run(&dir, &["status"]), @"…")` (insta strips the literal's
    /// common indentation; `.config/insta.yaml` asks for a full match). When an output changes
    /// on purpose, do not edit the literal by hand: run the tests (`cargo test --locked --test
    /// it -- hook::`), then `cargo insta review` (`cargo install cargo-insta --locked`) shows
    /// each changed run as a diff and writes the ones you accept into the source. A failing
    /// snapshot leaves its new value in `tests/it/.<file>.rs.pending-snap` for that review (never
    /// commit it); `INSTA_FORCE_PASS=1` lets a run record every mismatch instead of stopping at
    /// the first failure of a test, and nothing is written where `CI` is set or with
    /// `INSTA_UPDATE=no`. Without cargo-insta, copy the `+new results` lines of the printed diff
    /// into the literal.
    pub fn run(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.output(dir, args);
        let s = format!(
            "{}--- stderr ---\n{}[exit status: {}]\n",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            out.status.code().unwrap_or(-1)
        );
        s.replace(&self.root().display().to_string(), "<root>")
    }

    /// Run, assert exit 0, return stdout.
    pub fn ok(&self, dir: &Path, args: &[&str]) -> String {
        self.ok_at(dir, NOW, args)
    }

    /// [`TestEnv::ok`] on the clock `now` (`RECODE_NOW`, RFC 3339).
    pub fn ok_at(&self, dir: &Path, now: &str, args: &[&str]) -> String {
        let out = self
            .cmd(dir)
            .env("RECODE_NOW", now)
            .args(args)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "git-recode {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    /// Build the shared scenario (`fixtures/demo.sh`) under `<root>/demo`; return the main worktree.
    pub fn demo(&self) -> PathBuf {
        self.demo_at(NOW_EPOCH)
    }

    /// The demo scenario with its clock at `now_epoch` (a future one lets a test's real-time
    /// writes count as old, so a run at that clock sees git-recode's own actions as past).
    pub fn demo_at(&self, now_epoch: i64) -> PathBuf {
        let dir = self.root().join("demo");
        let mut cmd = Command::new("bash");
        self.apply_env(&mut cmd);
        cmd.env_remove("GIT_AUTHOR_DATE")
            .env_remove("GIT_COMMITTER_DATE");
        let out = cmd
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo.sh"))
            .arg(&dir)
            .env("RECODE_BIN", assert_cmd::cargo::cargo_bin("git-recode"))
            .env("RECODE_FIXTURE_NOW", now_epoch.to_string())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "demo.sh failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir.join("repo")
    }

    /// A fresh repository with one commit on `main`, at `<root>/<name>`.
    pub fn repo(&self, name: &str) -> PathBuf {
        let dir = self.root().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        self.git(&dir, &["init", "-q", "-b", "main"]);
        std::fs::write(dir.join("README.md"), "hello\n").unwrap();
        self.git(&dir, &["add", "README.md"]);
        self.git(&dir, &["commit", "-q", "-m", "init"]);
        dir
    }

    /// `git hash-object` of the anchor text of task `key`.
    pub fn anchor(&self, dir: &Path, key: &str) -> String {
        let f = self.root().join(format!("anchor-{key}"));
        std::fs::write(&f, format!("recode-task {key}\n")).unwrap();
        self.git(dir, &["hash-object", f.to_str().unwrap()])
    }
}

/// What must never be lost: every commit reachable from a ref, and the content of every
/// changed or untracked file in every worktree (as a blob id).
#[derive(Debug, Clone)]
pub struct Work {
    pub commits: std::collections::BTreeSet<String>,
    /// (worktree, path, blob id of the content)
    pub files: Vec<(PathBuf, String, String)>,
}

impl TestEnv {
    /// Paths of every worktree whose directory exists.
    pub fn worktrees(&self, repo: &Path) -> Vec<PathBuf> {
        self.git(repo, &["worktree", "list", "--porcelain"])
            .lines()
            .filter_map(|l| l.strip_prefix("worktree "))
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .collect()
    }

    /// Blob id of a file's content as git would store it (symlinks by their target), as
    /// `git hash-object --no-filters` prints it, hashed here (no git run per file).
    fn blob_of(&self, _repo: &Path, file: &Path) -> String {
        let meta = std::fs::symlink_metadata(file).unwrap();
        let bytes = if meta.file_type().is_symlink() {
            std::fs::read_link(file)
                .unwrap()
                .into_os_string()
                .into_encoded_bytes()
        } else {
            std::fs::read(file).unwrap()
        };
        gix::objs::compute_hash(self.hash_kind(), gix::objs::Kind::Blob, &bytes)
            .unwrap()
            .to_string()
    }

    /// Everything that must survive (a host's heartbeat commits are not work: each
    /// rewrite replaces the last, SPEC 1.2 "Several machines").
    pub fn work(&self, repo: &Path) -> Work {
        let commits = self
            .git(repo, &["rev-list", HEARTBEATS_EXCLUDED, "--all"])
            .lines()
            .map(str::to_string)
            .collect();
        let mut files = Vec::new();
        for wt in self.worktrees(repo) {
            let out = self.git(
                &wt,
                &[
                    "--no-optional-locks",
                    "status",
                    "--porcelain=v1",
                    "-z",
                    "--untracked-files=all",
                    "--no-renames",
                ],
            );
            for entry in out.split('\0').filter(|e| e.len() > 3) {
                let path = &entry[3..];
                let full = wt.join(path);
                if std::fs::symlink_metadata(&full).is_ok() && !full.is_dir() {
                    files.push((wt.clone(), path.to_string(), self.blob_of(repo, &full)));
                }
            }
        }
        Work { commits, files }
    }

    /// Assert nothing in `before` was lost: its commits are still reachable from a ref, and
    /// each file's content is in its worktree or in a reachable commit.
    pub fn assert_nothing_lost(&self, repo: &Path, before: &Work) {
        let after: std::collections::BTreeSet<String> = self
            .git(repo, &["rev-list", "--all"])
            .lines()
            .map(str::to_string)
            .collect();
        let lost: Vec<_> = before.commits.difference(&after).collect();
        assert!(
            lost.is_empty(),
            "commits no longer reachable from any ref: {lost:?}"
        );
        // Every object reachable, listed only when a file is no longer in its worktree.
        let mut objects: Option<std::collections::BTreeSet<String>> = None;
        for (wt, path, blob) in &before.files {
            let full = wt.join(path);
            let in_tree = std::fs::symlink_metadata(&full).is_ok()
                && !full.is_dir()
                && &self.blob_of(repo, &full) == blob;
            if in_tree {
                continue;
            }
            let reachable = objects.get_or_insert_with(|| {
                self.git(repo, &["rev-list", "--all", "--objects"])
                    .lines()
                    .map(|l| l.split(' ').next().unwrap_or("").to_string())
                    .collect()
            });
            assert!(
                reachable.contains(blob),
                "content of {path} in {} ({blob}) is neither in the worktree nor in a reachable commit",
                wt.display()
            );
        }
    }
}

/// The clock of the records a test makes before it acts at [`LATER`].
pub const BEFORE_LATER: &str = "2029-12-31T00:00:00Z";

/// The scenario steps shared by the acting suites (`recover`, `settle`, `neverlose_states`).
impl TestEnv {
    /// [`TestEnv::repo`] `<root>/r` with a bare origin `<root>/origin.git`, `main` pushed
    /// and fetched; returns the repository and the origin.
    pub fn repo_with_origin(&self) -> (PathBuf, PathBuf) {
        let repo = self.repo("r");
        let origin = self.root().join("origin.git");
        self.git(
            &self.root(),
            &["init", "-q", "--bare", origin.to_str().unwrap()],
        );
        self.git(
            &repo,
            &["remote", "add", "origin", origin.to_str().unwrap()],
        );
        self.git(&repo, &["push", "-q", "origin", "main"]);
        self.git(&repo, &["fetch", "-q", "origin"]);
        (repo, origin)
    }

    /// `git worktree add -q -b <branch> <root>/<name>` from `repo`'s HEAD; returns its path.
    pub fn add_worktree(&self, repo: &Path, branch: &str, name: &str) -> PathBuf {
        let wt = self.root().join(name);
        self.git(
            repo,
            &["worktree", "add", "-q", "-b", branch, wt.to_str().unwrap()],
        );
        wt
    }

    /// `git recode record <args>` in `dir` at [`BEFORE_LATER`]; panics unless it succeeds.
    pub fn record(&self, dir: &Path, args: &[&str]) {
        let out = self
            .cmd(dir)
            .env("RECODE_NOW", BEFORE_LATER)
            .arg("record")
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "record {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `git recode <args> --json` in `dir` at [`LATER`]: the exit code, the parsed
    /// document and stderr; panics when stdout is not JSON.
    pub fn json_later(&self, dir: &Path, args: &[&str]) -> (i32, serde_json::Value, String) {
        let out = self
            .cmd(dir)
            .env("RECODE_NOW", LATER)
            .args(args)
            .arg("--json")
            .output()
            .unwrap();
        let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{args:?}: {e}: {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (
            out.status.code().unwrap_or(-1),
            doc,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// Put the `git-recode` binary at `dest` (a stand-in for `cargo install`): a hard link, so
/// no file is ever open for writing while other test threads fork and exec (a copy can
/// make the exec fail with ETXTBSY); a copy only across filesystems.
pub fn install_binary(dest: &Path) {
    let bin = assert_cmd::cargo::cargo_bin("git-recode");
    if std::fs::hard_link(&bin, dest).is_err() {
        std::fs::copy(&bin, dest).unwrap();
    }
}

/// The number in environment variable `name` (a harness's trials, first seed, threads),
/// else `default`.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `run(seed)` for every seed of `first..first + trials` on `threads` threads (at least
/// one), each taking the next seed when done; the results in the order they finished.
pub fn each_seed<R: Send>(
    first: u64,
    trials: u64,
    threads: u64,
    run: impl Fn(u64) -> R + Sync,
) -> Vec<R> {
    let next = std::sync::atomic::AtomicU64::new(first);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                loop {
                    let seed = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    if seed >= first + trials {
                        break;
                    }
                    let r = run(seed);
                    results.lock().unwrap().push(r);
                }
            });
        }
    });
    results.into_inner().unwrap()
}
