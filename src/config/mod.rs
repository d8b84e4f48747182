//! `git config recode.*`: every key beside its default (SPEC "Config").

mod forge;
mod keys;
mod secrets;
mod source;
mod values;

pub(crate) use forge::{ForgeOptions, ForgeSetting};
pub use keys::*;
pub(crate) use secrets::matches_secret;
pub(crate) use source::{command_line_settings, interpolate_path, string};
pub(crate) use values::{
    ValueError, WatcherSetting, check, count, duration_secs, parse_size, task_pattern,
};

use std::time::Duration;

use jiff::SignedDuration;

use secrets::secrets;
use values::{parse_bool, task_key};

/// Errors reading configuration.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ConfigError {
    /// A key holds a value of the wrong shape.
    #[error("config {key} = '{value}' is invalid: {why}")]
    Invalid {
        /// The key, e.g. `recode.maxAttempts`.
        key: &'static str,
        /// The value found.
        value: String,
        /// What is wrong with it.
        why: ValueError,
    },
}

impl ConfigError {
    /// What the user can do about it (shown under the error).
    pub fn hint(&self) -> String {
        match self {
            ConfigError::Invalid { .. } => "fix the value with `git config <key> <value>`".into(),
        }
    }
}

/// The resolved `recode.*` configuration.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// `recode.base` if set (the fallback chain is resolved against refs elsewhere).
    pub base: Option<String>,
    /// `recode.remote`.
    pub remote: String,
    /// `recode.branchPattern`, compiled.
    pub branch_pattern: regex::Regex,
    /// `recode.stallAfter` (default [`DEFAULT_STALL_AFTER`]).
    pub stall_after: SignedDuration,
    /// `recode.maxAttempts`.
    pub max_attempts: u32,
    /// `recode.maxTransient`.
    pub max_transient: u32,
    /// `recode.gate`.
    pub gate: Option<String>,
    /// `recode.notesRef`, fully qualified.
    pub notes_ref: String,
    /// `recode.agent`.
    pub agent: String,
    /// `recode.agent` was set explicitly (else the agent recorded at spawn is used).
    pub agent_configured: bool,
    /// `recode.pushWip`.
    pub push_wip: bool,
    /// `recode.secrets`: [`DEFAULT_SECRETS`] followed by every non-empty value set (values
    /// add to the defaults; SPEC 1.2 `recode.secrets`). An invalid value is left out here
    /// and kept in `secrets_error`.
    pub secrets: Vec<String>,
    /// The first invalid `recode.secrets` value: every command that could delete or push
    /// refuses to run with it ([`Config::check_secrets`]).
    pub secrets_error: Option<ConfigError>,
    /// `recode.networkTimeout`: at least 1 s (default [`DEFAULT_NETWORK_TIMEOUT`]).
    pub network_timeout: Duration,
    /// `recode.wipMaxFileSize`, in bytes.
    pub wip_max_file_size: u64,
    /// `recode.gateTimeout`: at least 1 s (default [`DEFAULT_GATE_TIMEOUT`]).
    pub gate_timeout: Duration,
    /// `recode.commandTimeout`: at least 1 s (default [`DEFAULT_COMMAND_TIMEOUT`]); the
    /// deadline every git run that is not a network step is built with ([`crate::git::Git::new`]).
    pub command_timeout: Duration,
    /// `recode.staleLockAfter` (at least 1 s, default [`DEFAULT_STALE_LOCK_AFTER`]) and the
    /// command's sink of the stale locks it moves aside ([`crate::lock::Moves`]: a fresh
    /// one per load; a command that prints the moves' warnings hands in its own).
    pub locks: crate::lock::Settle,
    /// `recode.worktreeDir`, if set (relative paths are taken from the main worktree).
    pub worktree_dir: Option<String>,
    /// `recode.hostTimeout`: at least 1 s (default [`DEFAULT_HOST_TIMEOUT`]): how long
    /// another host may be silent before its workers can be taken over here (SPEC 1.2
    /// "Several machines").
    pub host_timeout: SignedDuration,
    /// `recode.hungAfter`: at least 1 s (default [`DEFAULT_HUNG_AFTER`]): a live pid with
    /// no activity for this long is hung (SPEC 1.3 "The loop as people run it").
    pub hung_after: SignedDuration,
    /// `recode.forge` and the forge's environment, read once here (SPEC 1.2 "Forges").
    pub forge: ForgeOptions,
    /// The ssh command of network steps and the gate: `GIT_SSH_COMMAND`, else
    /// `core.sshCommand`, else `GIT_SSH`, else `ssh`, with batch mode added
    /// ([`crate::ssh::SshCommand`]).
    pub ssh: crate::ssh::SshCommand,
    /// `recode.watcher` (default `auto`): how `status` learns what changed in a worktree
    /// since the last tick (issue 38; [`crate::worktree::watch`]).
    pub watcher: WatcherSetting,
}

impl Config {
    /// Read the configuration of `repo` (all of git's config files, as git would, `git -c`
    /// first): every key parsed into its type here, at the edge.
    ///
    /// Errors: [`ConfigError::Invalid`] for a value of the wrong shape (a bad regex, a
    /// non-number, a duration without a unit, a `recode.forge` that is none of
    /// [`FORGES`]: the error names them).
    pub(crate) fn load(repo: &gix::Repository) -> Result<Config, ConfigError> {
        let get = |key: &str| string(repo, key).filter(|v| !v.trim().is_empty());
        let pattern_text = get(BRANCH_PATTERN).unwrap_or_else(|| DEFAULT_BRANCH_PATTERN.into());
        let branch_pattern = task_pattern(&pattern_text).map_err(|why| ConfigError::Invalid {
            key: BRANCH_PATTERN,
            value: pattern_text.clone(),
            why,
        })?;
        let stall_after = duration_of(STALL_AFTER, get(STALL_AFTER), DEFAULT_STALL_AFTER, false)?;
        let max_attempts = parsed(MAX_ATTEMPTS, get(MAX_ATTEMPTS), DEFAULT_MAX_ATTEMPTS, count)?;
        let max_transient = parsed(
            MAX_TRANSIENT,
            get(MAX_TRANSIENT),
            DEFAULT_MAX_TRANSIENT,
            count,
        )?;
        let push_wip = parsed(PUSH_WIP, get(PUSH_WIP), true, |v| {
            parse_bool(v).ok_or(ValueError::NotABool)
        })?;
        let network_timeout = timeout_of(
            NETWORK_TIMEOUT,
            get(NETWORK_TIMEOUT),
            DEFAULT_NETWORK_TIMEOUT,
        )?;
        let wip_max_file_size = parsed(
            WIP_MAX_FILE_SIZE,
            get(WIP_MAX_FILE_SIZE),
            DEFAULT_WIP_MAX_FILE_SIZE,
            parse_size,
        )?;
        let gate_timeout = timeout_of(GATE_TIMEOUT, get(GATE_TIMEOUT), DEFAULT_GATE_TIMEOUT)?;
        let command_timeout = timeout_of(
            COMMAND_TIMEOUT,
            get(COMMAND_TIMEOUT),
            DEFAULT_COMMAND_TIMEOUT,
        )?;
        let stale_lock_after = timeout_of(
            STALE_LOCK_AFTER,
            get(STALE_LOCK_AFTER),
            DEFAULT_STALE_LOCK_AFTER,
        )?;
        let host_timeout =
            duration_of(HOST_TIMEOUT, get(HOST_TIMEOUT), DEFAULT_HOST_TIMEOUT, true)?;
        let hung_after = duration_of(HUNG_AFTER, get(HUNG_AFTER), DEFAULT_HUNG_AFTER, true)?;
        let notes_ref = notes_ref(get(NOTES_REF))?;
        let forge = parsed(FORGE, get(FORGE), ForgeSetting::Auto, ForgeSetting::parse)?;
        let watcher = parsed(
            WATCHER,
            get(WATCHER),
            WatcherSetting::Auto,
            WatcherSetting::parse,
        )?;
        let (secrets, secrets_error) = secrets(repo);
        Ok(Config {
            gate_timeout,
            command_timeout,
            locks: crate::lock::Settle::new(stale_lock_after),
            base: get(BASE),
            remote: get(REMOTE).unwrap_or_else(|| DEFAULT_REMOTE.into()),
            branch_pattern,
            stall_after,
            max_attempts,
            max_transient,
            gate: get(GATE),
            notes_ref,
            agent: get(AGENT).unwrap_or_else(|| DEFAULT_AGENT.into()),
            agent_configured: get(AGENT).is_some(),
            push_wip,
            secrets,
            secrets_error,
            network_timeout,
            wip_max_file_size,
            worktree_dir: get(WORKTREE_DIR),
            host_timeout,
            hung_after,
            forge: ForgeOptions::from_env(forge, network_timeout),
            ssh: crate::ssh::SshCommand::from_env(string(repo, SSH_COMMAND).as_deref()),
            watcher,
        })
    }
}

/// The duration `key` holds, read with a unit ([`duration_secs`]) from `value`, at least
/// 1 s when `at_least_1s` (a zero deadline or age would end or take everything at once);
/// `default` when unset.
///
/// Errors: [`ConfigError::Invalid`] for a value that is no duration.
fn duration_of(
    key: &'static str,
    value: Option<String>,
    default: SignedDuration,
    at_least_1s: bool,
) -> Result<SignedDuration, ConfigError> {
    let secs = parsed(key, value, default.as_secs(), duration_secs)?;
    Ok(SignedDuration::from_secs(if at_least_1s {
        secs.max(1)
    } else {
        secs
    }))
}

/// [`duration_of`], at least 1 s, as a [`Duration`] (a deadline or a lock's age).
///
/// Errors: as [`duration_of`].
fn timeout_of(
    key: &'static str,
    value: Option<String>,
    default: Duration,
) -> Result<Duration, ConfigError> {
    let secs = parsed(key, value, default.as_secs() as i64, duration_secs)?;
    Ok(Duration::from_secs(secs.max(1) as u64))
}

/// Check `recode.base` where it is read (SPEC 1.2 "Errors a newcomer meets"): a set
/// base must be a local branch or a branch of `recode.remote`, else every commit would
/// count as ahead. A repository with no branch yet (`any_branch` false) has nothing to
/// check. `exists` says whether a full ref name exists (the repository's ref store: the
/// configuration reads no refs itself).
///
/// Errors: [`ConfigError::Invalid`] naming [`BASE`].
pub(crate) fn check_base_of(
    exists: &dyn Fn(&str) -> bool,
    any_branch: bool,
    base: Option<&str>,
    remote: &str,
) -> Result<(), ConfigError> {
    {
        let Some(base) = base else {
            return Ok(());
        };
        if !any_branch
            || exists(&format!("refs/heads/{base}"))
            || exists(&format!("refs/remotes/{remote}/{base}"))
        {
            return Ok(());
        }
        Err(ConfigError::Invalid {
            key: BASE,
            value: base.to_string(),
            why: ValueError::NoSuchBase {
                base: base.to_string(),
                remote: remote.to_string(),
            },
        })
    }
}

impl Config {
    /// Refuse an invalid `recode.secrets` value (SPEC 1.2: an error, exit 1, on every
    /// command that could delete or push: `recover`, `sync`).
    ///
    /// Errors: [`ConfigError::Invalid`] naming the value and what is wrong with it.
    pub(crate) fn check_secrets(&self) -> Result<(), ConfigError> {
        match &self.secrets_error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// The task key of `branch`: the pattern's `task` group when it matches (a pattern
    /// without one is refused when the configuration is read, [`task_pattern`]). `None`
    /// when the pattern does not match (the branch is not a worker by name).
    pub(crate) fn task_of(&self, branch: &str) -> Option<String> {
        task_key(&self.branch_pattern, branch)
    }

    /// The task key of `branch`, or the branch itself when it does not match (SPEC "task").
    pub(crate) fn key_of(&self, branch: &str) -> String {
        self.task_of(branch).unwrap_or_else(|| branch.to_string())
    }
}

/// `key`'s `value` read by `parse` (whose error says what was expected), or `default`
/// when unset.
///
/// Errors: [`ConfigError::Invalid`] when `parse` fails.
fn parsed<T>(
    key: &'static str,
    value: Option<String>,
    default: T,
    parse: impl FnOnce(&str) -> Result<T, ValueError>,
) -> Result<T, ConfigError> {
    match value {
        Some(v) => parse(&v).map_err(|why| ConfigError::Invalid {
            key,
            value: v.clone(),
            why,
        }),
        None => Ok(default),
    }
}

/// `recode.notesRef` fully qualified (a bare name goes under `refs/notes/`), default
/// [`DEFAULT_NOTES_REF`].
///
/// Errors: [`ConfigError::Invalid`] for a ref outside `refs/notes/`.
fn notes_ref(value: Option<String>) -> Result<String, ConfigError> {
    let mut notes_ref = value.unwrap_or_else(|| DEFAULT_NOTES_REF.into());
    if !notes_ref.starts_with("refs/") {
        notes_ref = format!("refs/notes/{notes_ref}");
    }
    if !notes_ref.starts_with("refs/notes/") {
        // As `git notes`: a notes ref outside refs/notes/ would commit notes onto a branch.
        return Err(ConfigError::Invalid {
            key: NOTES_REF,
            value: notes_ref,
            why: ValueError::NotesRefOutside,
        });
    }
    Ok(notes_ref)
}
