//! The file watcher (issue 38): Watchman, driven through its own command-line client's
//! JSON interface (`watchman -j`, one command on stdin, one JSON answer on stdout), asked
//! what changed under a worktree since a clock it gave earlier.
//!
//! Nothing here decides a status: a clock and a list of names are all it hands back, and
//! every error is the caller's cue to read the worktree whole.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use crate::config::WatcherSetting;

/// How this run reaches Watchman.
#[derive(Clone, Debug)]
pub(crate) struct Watcher {
    /// The server's socket: `WATCHMAN_SOCK` (the variable Watchman's own clients read;
    /// its 4.9 command-line client does not, so it is passed as `--sockname`), else the
    /// client's default.
    sockname: Option<OsString>,
    /// Start the server when it is not running (`recode.watcher=watchman`); else a
    /// missing server is an error (`--no-spawn --no-local`: never a crawl in the client).
    spawn: bool,
    /// The longest one call may take, the server's wait for the file system included.
    timeout: Duration,
}

/// Why Watchman did not answer: every one means "read the worktree whole".
#[derive(Debug, thiserror::Error)]
pub(crate) enum WatchError {
    /// The client could not be started (not installed) or was killed past its deadline.
    #[error("watchman did not run: {0}")]
    Run(String),
    /// Its answer was no JSON of the expected shape.
    #[error("watchman answered something unreadable: {0}")]
    Shape(String),
    /// It answered with an error (`{"error": …}`): no server, a root it does not watch…
    #[error("watchman: {0}")]
    Said(String),
}

/// A watched directory: Watchman's root and the worktree's place under it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, Deserialize)]
pub(crate) struct Root {
    /// The root Watchman watches (`watch-project`'s `watch`).
    pub watch: String,
    /// The worktree relative to it (`relative_path`), when the root is above it.
    pub relative: Option<String>,
}

/// What changed since a clock.
#[derive(Debug)]
pub(crate) struct Since {
    /// The clock of this answer: the next question starts here.
    pub clock: String,
    /// The clock was unknown to this server (a restart, a deleted and re-added watch, a
    /// recrawl after an overflow, a clock older than what it keeps): `files` means nothing.
    pub fresh: bool,
    /// The names (relative to the worktree) that changed, created or deleted.
    pub files: Vec<Change>,
}

/// One name Watchman saw change.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Change {
    /// Relative to the worktree, `/`-separated.
    pub name: String,
    /// It exists now.
    pub exists: bool,
    /// Its type as Watchman last saw it: `f`, `d`, `l` (symlink), or another letter.
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}

impl Watcher {
    /// The watcher `setting` asks for, `None` when it is `off`, or `auto` and no server
    /// answers (asked once, here). `timeout` is `recode.commandTimeout`; one call gets at
    /// most 30 s of it.
    pub(crate) fn new(setting: WatcherSetting, timeout: Duration) -> Option<Watcher> {
        let spawn = match setting {
            WatcherSetting::Off => return None,
            WatcherSetting::Auto => false,
            WatcherSetting::Watchman => true,
        };
        let w = Watcher {
            sockname: std::env::var_os("WATCHMAN_SOCK").filter(|s| !s.is_empty()),
            spawn,
            timeout: timeout.min(Duration::from_secs(30)),
        };
        // `auto`: one question per run (its server's version), not one failing client per
        // worktree, where no server runs or no client is installed.
        if !spawn
            && w.call::<serde_json::Value>(&serde_json::json!(["version"]))
                .is_err()
        {
            return None;
        }
        Some(w)
    }

    /// The server listening on `sockname`, never started here (tests give each their own).
    pub(crate) fn at(sockname: &Path) -> Watcher {
        Watcher {
            sockname: Some(sockname.as_os_str().to_owned()),
            spawn: false,
            timeout: Duration::from_secs(30),
        }
    }

    /// Watch `dir` (`watch-project`: an existing watch above it is reused).
    ///
    /// Errors: [`WatchError`] when Watchman cannot be asked or refuses.
    pub(crate) fn watch(&self, dir: &Path) -> Result<Root, WatchError> {
        let dir = dir
            .to_str()
            .ok_or_else(|| WatchError::Shape("a path that is not UTF-8".into()))?;
        #[derive(Deserialize)]
        struct Answer {
            watch: String,
            relative_path: Option<String>,
        }
        let a: Answer = self.call(&serde_json::json!(["watch-project", dir]))?;
        Ok(Root {
            watch: a.watch,
            relative: a.relative_path.filter(|r| !r.is_empty()),
        })
    }

    /// The clock of `root` now, after the server caught up with the file system.
    ///
    /// Errors: [`WatchError`].
    pub(crate) fn clock(&self, root: &Root) -> Result<String, WatchError> {
        #[derive(Deserialize)]
        struct Answer {
            clock: String,
        }
        let opts = serde_json::json!({ "sync_timeout": self.sync_ms() });
        let a: Answer = self.call(&serde_json::json!(["clock", root.watch, opts]))?;
        Ok(a.clock)
    }

    /// What changed under `root` since `clock` (names relative to the worktree), the
    /// server caught up with the file system first.
    ///
    /// Errors: [`WatchError`]; a recrawl warning (an overflow) is one too.
    pub(crate) fn since(&self, root: &Root, clock: &str) -> Result<Since, WatchError> {
        #[derive(Deserialize)]
        struct Answer {
            clock: String,
            #[serde(default)]
            is_fresh_instance: bool,
            #[serde(default)]
            files: Vec<Change>,
            warning: Option<String>,
        }
        let mut q = serde_json::json!({
            "since": clock,
            "fields": ["name", "exists", "type"],
            "empty_on_fresh_instance": true,
            "sync_timeout": self.sync_ms(),
        });
        if let Some(rel) = &root.relative {
            q["relative_root"] = serde_json::Value::from(rel.as_str());
        }
        let a: Answer = self.call(&serde_json::json!(["query", root.watch, q]))?;
        if let Some(w) = a.warning {
            // Watchman recrawled (its event queue overflowed): what it lost is unknown.
            return Err(WatchError::Said(w));
        }
        Ok(Since {
            clock: a.clock,
            fresh: a.is_fresh_instance,
            files: a.files,
        })
    }

    /// How long the server may wait for the file system to catch up, in ms.
    fn sync_ms(&self) -> u64 {
        (self.timeout.as_millis() / 2).min(u128::from(u64::MAX)) as u64
    }

    /// One command, one answer: `watchman --no-pretty -j` with `command` on stdin, killed
    /// past the deadline.
    ///
    /// Errors: [`WatchError`].
    fn call<T: serde::de::DeserializeOwned>(
        &self,
        command: &serde_json::Value,
    ) -> Result<T, WatchError> {
        let run = |e: std::io::Error| WatchError::Run(e.to_string());
        let (stdin, mut writer) = std::io::pipe().map_err(run)?;
        // A command is a few hundred bytes: it fits the pipe before the child reads it.
        writer
            .write_all(command.to_string().as_bytes())
            .map_err(run)?;
        drop(writer);
        let mut cmd = std::process::Command::new("watchman");
        if let Some(s) = &self.sockname {
            let mut arg = OsString::from("--sockname=");
            arg.push(s);
            cmd.arg(arg);
        }
        if !self.spawn {
            cmd.args(["--no-spawn", "--no-local"]);
        }
        cmd.args(["--no-pretty", "-j"]).stdin(stdin);
        crate::git::unset_tokens(&mut cmd);
        let done = crate::process::run_bounded(&mut cmd, self.timeout).map_err(run)?;
        if done.status.is_none() {
            return Err(WatchError::Run("killed past its deadline".into()));
        }
        let value: serde_json::Value = serde_json::from_slice(&done.stdout).map_err(|e| {
            WatchError::Shape(format!(
                "{e}{}",
                done.last_stderr_line()
                    .map(|l| format!(" ({l})"))
                    .unwrap_or_default()
            ))
        })?;
        if let Some(e) = value.get("error") {
            return Err(WatchError::Said(
                e.as_str().map_or_else(|| e.to_string(), str::to_string),
            ));
        }
        serde_json::from_value(value).map_err(|e| WatchError::Shape(e.to_string()))
    }
}
