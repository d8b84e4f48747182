//! The test environment: real git, real binary, isolated from the machine's config,
//! clock pinned. A run renders as stdout, `--- stderr ---`, stderr, `[exit status: N]`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The pinned clock of every test (RECODE_NOW), and its epoch seconds.
pub const NOW: &str = "2026-11-20T12:00:00Z";
pub const NOW_EPOCH: i64 = 1_795_176_000;

pub struct TestEnv {
    pub tmp: tempfile::TempDir,
    pub home: PathBuf,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let tmp = tempfile::Builder::new()
            .prefix("recode-test")
            .tempdir()
            .unwrap();
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        TestEnv { tmp, home }
    }

    pub fn root(&self) -> PathBuf {
        self.tmp.path().canonicalize().unwrap()
    }

    fn apply_env(&self, cmd: &mut Command) {
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
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
            .stdin(Stdio::null());
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
        let out = self.output(dir, args);
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
        let dir = self.root().join("demo");
        let mut cmd = Command::new("bash");
        self.apply_env(&mut cmd);
        cmd.env_remove("GIT_AUTHOR_DATE")
            .env_remove("GIT_COMMITTER_DATE");
        let out = cmd
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo.sh"))
            .arg(&dir)
            .env("RECODE_BIN", assert_cmd::cargo::cargo_bin("git-recode"))
            .env("RECODE_FIXTURE_NOW", NOW_EPOCH.to_string())
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
