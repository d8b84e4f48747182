//! `git recode doctor`: check a loop's set-up, one [`Check`] a line, each `ok`, `warn` or
//! `fail` with the fix (SPEC 1.2 Commands, `doctor`). Reads only: it writes no ref, no
//! file and sends no token anywhere but the forge's API.
//!
//! The checks, in order: git (version, repository format), identity (git finds an author
//! and a committer), config (every `recode.*` value, the base exists and the remote's HEAD
//! resolves, the branch pattern has its `task` group), hook (reaches every worktree and
//! runs), forge (detected, token, answering), ssh (the command pushes use), agent (its
//! CLI on `PATH` answers `--version`), accounts (`recode.agentConfigDirs` distinct),
//! locks (stale lock files), clone (shallow, partial), maintenance (what could prune
//! worktrees).
//!
//! One file a group of checks, each a function returning its [`Check`]s; [`run`] lists
//! them in order. A new check goes into the file of its group (or a new file) and one
//! line of [`run`].

mod agent;
mod forge;
mod gate;
mod git;
mod hook;
mod hosts;
mod repo;
mod settings;
mod ssh;

use serde::Serialize;

use crate::config::{self, Config};

/// How a check came out.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Nothing to do.
    Ok,
    /// Works, but something may bite later.
    Warn,
    /// The loop will not work as meant until it is fixed (exit 1).
    Fail,
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Level::Ok => "ok",
            Level::Warn => "warn",
            Level::Fail => "fail",
        })
    }
}

/// One line of `doctor`: which check, how it came out, what was found, what to do.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Check {
    /// The check: `git`, `identity`, `config`, `hook`, `forge`, `gate`, `ssh`, `agent`,
    /// `accounts`, `locks`, `clone`, `maintenance`, `hosts` (clock skew, SPEC 1.3), `refs`
    /// (untrusted refs).
    pub check: &'static str,
    /// `ok`, `warn` or `fail`.
    pub level: Level,
    /// What was found, one sentence.
    pub message: String,
    /// What to run or change; `None` for `ok`.
    pub fix: Option<String>,
}

fn check(check: &'static str, level: Level, message: String, fix: Option<String>) -> Check {
    Check {
        check,
        level,
        message,
        fix,
    }
}

fn ok(name: &'static str, message: String) -> Check {
    check(name, Level::Ok, message, None)
}

/// Run every check on `repo`. `now` is the clock (`RECODE_NOW`), for lock ages.
pub(crate) fn run(repo: &gix::Repository, now: jiff::Timestamp) -> Vec<Check> {
    let mut out = vec![git::git_version(repo), git::identity(repo)];
    let (cfg, load_error) = match Config::load(repo) {
        Ok(c) => (Some(c), None),
        Err(e) => (None, Some(e)),
    };
    let values = settings::config_values(repo, cfg.as_ref());
    // A key that keeps the configuration from loading is named by its own check; the
    // load's error is shown only when no key check names it.
    if let Some(e) = load_error
        && !values
            .iter()
            .any(|c| c.level == Level::Fail && c.message.contains(" = '"))
    {
        out.push(check(
            "config",
            Level::Fail,
            e.to_string(),
            Some("fix the value with `git config <key> <value>`".into()),
        ));
    }
    out.extend(values);
    out.extend(hook::hook(repo));
    let remote = cfg
        .as_ref()
        .map(|c| c.remote.clone())
        .unwrap_or_else(|| config::DEFAULT_REMOTE.into());
    if let Some(c) = cfg.as_ref() {
        out.push(forge::forge(repo, c));
        out.push(gate::gate(c));
        out.push(ssh::ssh(repo, c));
    }
    let agent = cfg
        .as_ref()
        .map(|c| c.agent.clone())
        .unwrap_or_else(|| config::DEFAULT_AGENT.into());
    out.push(agent::agent_on_path(&agent));
    out.extend(agent::accounts(repo));
    let stale_after = config::string(repo, config::STALE_LOCK_AFTER)
        .and_then(|v| config::duration_secs(&v).ok())
        .unwrap_or(5 * 60);
    let notes_ref = cfg
        .as_ref()
        .map(|c| c.notes_ref.clone())
        .unwrap_or_else(|| config::DEFAULT_NOTES_REF.into());
    out.push(repo::locks(repo, &notes_ref, stale_after, now));
    out.push(repo::clone_kind(repo, &remote));
    out.push(repo::maintenance(repo));
    let command_timeout = cfg
        .as_ref()
        .map_or(config::DEFAULT_COMMAND_TIMEOUT, |c| c.command_timeout);
    out.extend(hosts::clocks(repo, now, command_timeout));
    out.extend(hosts::untrusted_refs(repo, now));
    out
}

/// Exit code of a run: 0 with no `fail`, else 1.
pub(crate) fn exit_code(checks: &[Check]) -> i32 {
    if checks.iter().any(|c| c.level == Level::Fail) {
        crate::error::EXIT_ERROR
    } else {
        crate::error::EXIT_OK
    }
}

impl From<&Check> for crate::wire::DoctorCheckJson {
    fn from(c: &Check) -> Self {
        crate::wire::DoctorCheckJson {
            check: c.check.to_string(),
            level: c.level.to_string(),
            message: c.message.clone(),
            fix: c.fix.clone(),
        }
    }
}
