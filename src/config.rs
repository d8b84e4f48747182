//! `git config recode.*`: every key beside its default (SPEC "Config").

use crate::clock;

/// `recode.base`: the branch work merges into. Default: the remote's HEAD, else `main`, else `master`.
pub const BASE: &str = "recode.base";
/// `recode.remote`: where branches and notes are pushed.
pub const REMOTE: &str = "recode.remote";
/// Default of [`REMOTE`].
pub const DEFAULT_REMOTE: &str = "origin";
/// `recode.branchPattern`: regex selecting worker branches; group `task` is the task key.
pub const BRANCH_PATTERN: &str = "recode.branchPattern";
/// Default of [`BRANCH_PATTERN`]: `feat/issue-107-bake-path` is task `107`, `tissue-12` is no worker.
pub const DEFAULT_BRANCH_PATTERN: &str = r"(?:^|/)issue-(?P<task>[0-9]+)(?:-|$)";
/// `recode.stallAfter`: idle time before a worker with no exit is stalled (`s`, `m`, `h`, `d`).
pub const STALL_AFTER: &str = "recode.stallAfter";
/// Default of [`STALL_AFTER`], in seconds (30 minutes).
pub const DEFAULT_STALL_AFTER_SECS: i64 = 30 * 60;
/// `recode.maxAttempts`: counted attempts before `needs-human`.
pub const MAX_ATTEMPTS: &str = "recode.maxAttempts";
/// Default of [`MAX_ATTEMPTS`].
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// `recode.gate`: the test command run before publishing (unset by default).
pub const GATE: &str = "recode.gate";
/// `recode.notesRef`: where ledgers live.
pub const NOTES_REF: &str = "recode.notesRef";
/// Default of [`NOTES_REF`].
pub const DEFAULT_NOTES_REF: &str = "refs/notes/recode";
/// `recode.agent`: `claude`, `codex`, or a command template.
pub const AGENT: &str = "recode.agent";
/// Default of [`AGENT`].
pub const DEFAULT_AGENT: &str = "claude";
/// `recode.pushWip`: push a branch after its WIP commit when a remote exists.
pub const PUSH_WIP: &str = "recode.pushWip";
/// `recode.secrets`: gitignore-style patterns of files never pushed in a WIP nor deleted with a worktree.
pub const SECRETS: &str = "recode.secrets";
/// Default of [`SECRETS`].
pub const DEFAULT_SECRETS: &[&str] = &[
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_ed25519*",
    "*.p12",
    "credentials*.json",
];
/// The longest a push, fetch or forge call may take (SPEC safety rule 0).
pub const NETWORK_TIMEOUT: &str = "recode.networkTimeout";
/// Default of [`NETWORK_TIMEOUT`], in seconds.
pub const DEFAULT_NETWORK_TIMEOUT_SECS: i64 = 60;
/// `recode.gateTimeout`: the longest the gate may run (SPEC 1.2 "The loop settles").
pub const GATE_TIMEOUT: &str = "recode.gateTimeout";
/// Default of [`GATE_TIMEOUT`], in seconds (30 minutes).
pub const DEFAULT_GATE_TIMEOUT_SECS: i64 = 30 * 60;
/// `recode.commandTimeout`: the longest any other child process may run.
pub const COMMAND_TIMEOUT: &str = "recode.commandTimeout";
/// Default of [`COMMAND_TIMEOUT`], in seconds (5 minutes).
pub const DEFAULT_COMMAND_TIMEOUT_SECS: i64 = 5 * 60;
/// `recode.staleLockAfter`: age after which a worktree or repository lock is stale.
pub const STALE_LOCK_AFTER: &str = "recode.staleLockAfter";
/// Default of [`STALE_LOCK_AFTER`], in seconds (5 minutes).
pub const DEFAULT_STALE_LOCK_AFTER_SECS: i64 = 5 * 60;
/// Where `resume` adds a worktree for a worker that has none (default
/// `<main worktree>/../<repo>.worktrees`).
pub const WORKTREE_DIR: &str = "recode.worktreeDir";
/// The ref that keeps task anchors reachable (SPEC "Where state lives").
pub const ANCHORS_REF: &str = "refs/recode/anchors";

/// Errors reading configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A key holds a value of the wrong shape.
    #[error("config {key} = '{value}' is invalid: {why}")]
    Invalid {
        /// The key, e.g. `recode.maxAttempts`.
        key: &'static str,
        /// The value found.
        value: String,
        /// What was expected.
        why: String,
    },
}

/// The resolved `recode.*` configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// `recode.base` if set (the fallback chain is resolved against refs elsewhere).
    pub base: Option<String>,
    /// `recode.remote`.
    pub remote: String,
    /// `recode.branchPattern`, compiled.
    pub branch_pattern: regex::Regex,
    /// `recode.stallAfter`, in seconds.
    pub stall_after_secs: i64,
    /// `recode.maxAttempts`.
    pub max_attempts: u32,
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
    /// `recode.secrets` (all values; the defaults when unset).
    pub secrets: Vec<String>,
    /// `recode.networkTimeout`, in seconds.
    pub network_timeout_secs: u64,
    /// `recode.gateTimeout`, in seconds.
    pub gate_timeout_secs: u64,
    /// `recode.commandTimeout`, in seconds (also handed to [`crate::git::set_command_timeout`]).
    pub command_timeout_secs: u64,
    /// `recode.staleLockAfter`, in seconds.
    pub stale_lock_after_secs: u64,
    /// `recode.worktreeDir`, if set (relative paths are taken from the main worktree).
    pub worktree_dir: Option<String>,
}

impl Config {
    /// Read the configuration of `repo` (all of git's config files, as git would).
    ///
    /// Errors: [`ConfigError::Invalid`] for a value of the wrong shape (a bad regex, a non-number).
    pub fn load(repo: &gix::Repository) -> Result<Config, ConfigError> {
        let get = |key: &str| string(repo, key).filter(|v| !v.trim().is_empty());
        let pattern_text = get(BRANCH_PATTERN).unwrap_or_else(|| DEFAULT_BRANCH_PATTERN.into());
        let branch_pattern =
            regex::Regex::new(&pattern_text).map_err(|e| ConfigError::Invalid {
                key: BRANCH_PATTERN,
                value: pattern_text.clone(),
                why: e.to_string(),
            })?;
        let duration = |v: &str| clock::parse_duration(v).map_err(|e| e.to_string());
        let stall_after_secs = parsed(
            STALL_AFTER,
            get(STALL_AFTER),
            DEFAULT_STALL_AFTER_SECS,
            duration,
        )?;
        let max_attempts = parsed(MAX_ATTEMPTS, get(MAX_ATTEMPTS), DEFAULT_MAX_ATTEMPTS, |v| {
            v.trim()
                .parse::<u32>()
                .map_err(|_| "expected a whole number".into())
        })?;
        let push_wip = parsed(PUSH_WIP, get(PUSH_WIP), true, |v| {
            parse_bool(v).ok_or_else(|| "expected true or false".into())
        })?;
        let network_timeout_secs = parsed(
            NETWORK_TIMEOUT,
            get(NETWORK_TIMEOUT),
            DEFAULT_NETWORK_TIMEOUT_SECS,
            duration,
        )?
        .max(1) as u64;
        let secs = |key: &'static str, default: i64| -> Result<u64, ConfigError> {
            Ok(parsed(key, get(key), default, duration)?.max(1) as u64)
        };
        let gate_timeout_secs = secs(GATE_TIMEOUT, DEFAULT_GATE_TIMEOUT_SECS)?;
        let command_timeout_secs = secs(COMMAND_TIMEOUT, DEFAULT_COMMAND_TIMEOUT_SECS)?;
        let stale_lock_after_secs = secs(STALE_LOCK_AFTER, DEFAULT_STALE_LOCK_AFTER_SECS)?;
        crate::git::set_command_timeout(command_timeout_secs);
        crate::lock::set_stale_after(stale_lock_after_secs);
        let notes_ref = notes_ref(get(NOTES_REF))?;
        Ok(Config {
            gate_timeout_secs,
            command_timeout_secs,
            stale_lock_after_secs,
            base: get(BASE),
            remote: get(REMOTE).unwrap_or_else(|| DEFAULT_REMOTE.into()),
            branch_pattern,
            stall_after_secs,
            max_attempts,
            gate: get(GATE),
            notes_ref,
            agent: get(AGENT).unwrap_or_else(|| DEFAULT_AGENT.into()),
            agent_configured: get(AGENT).is_some(),
            push_wip,
            secrets: secrets(repo),
            network_timeout_secs,
            worktree_dir: get(WORKTREE_DIR),
        })
    }

    /// The task key of `branch`: the pattern's `task` group when it matches; a pattern
    /// without a `task` group keys each matching branch by its own name (a whole match
    /// such as `issue` would put every worker into one ledger). `None` when the pattern
    /// does not match (the branch is not a worker by name).
    pub fn task_of(&self, branch: &str) -> Option<String> {
        task_key(&self.branch_pattern, branch)
    }

    /// The task key of `branch`, or the branch itself when it does not match (SPEC "task").
    pub fn key_of(&self, branch: &str) -> String {
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
    parse: impl FnOnce(&str) -> Result<T, String>,
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
            why: "notes refs live under refs/notes/".into(),
        });
    }
    Ok(notes_ref)
}

/// Every `recode.secrets` value (git's config files, then `git -c`), else
/// [`DEFAULT_SECRETS`].
fn secrets(repo: &gix::Repository) -> Vec<String> {
    let snap = repo.config_snapshot();
    let mut secrets: Vec<String> = snap
        .plumbing()
        .strings(SECRETS)
        .map(|vs| vs.iter().map(|v| v.to_string()).collect())
        .unwrap_or_default();
    let secrets_key = SECRETS.to_ascii_lowercase();
    secrets.extend(
        command_line_settings()
            .into_iter()
            .filter(|(k, _)| *k == secrets_key)
            .map(|(_, v)| v),
    );
    if secrets.is_empty() {
        DEFAULT_SECRETS.iter().map(|s| s.to_string()).collect()
    } else {
        secrets
    }
}

/// `git -c key=value` settings, which git passes to subcommands in
/// `GIT_CONFIG_PARAMETERS` (`'key'='value' 'key2'='value2'`, or older `'key=value'`),
/// in order; a key without a value is `true`.
pub fn command_line_settings() -> Vec<(String, String)> {
    let Ok(text) = std::env::var("GIT_CONFIG_PARAMETERS") else {
        return Vec::new();
    };
    // Split into shell-single-quoted words; `'\''` is a literal quote, `=` between two
    // quoted words joins key and value.
    let mut words: Vec<(String, bool)> = Vec::new(); // (text, followed by '=')
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            let mut w = String::new();
            while let Some(c) = chars.next() {
                if c == '\'' {
                    if chars.peek() == Some(&'\\') {
                        // `'\''`: close, an escaped quote, reopen.
                        chars.next();
                        chars.next();
                        chars.next();
                        w.push('\'');
                        continue;
                    }
                    break;
                }
                w.push(c);
            }
            let eq = chars.peek() == Some(&'=');
            if eq {
                chars.next();
            }
            words.push((w, eq));
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let (w, eq) = &words[i];
        if *eq && i + 1 < words.len() {
            out.push((w.to_ascii_lowercase(), words[i + 1].0.clone()));
            i += 2;
        } else {
            match w.split_once('=') {
                Some((k, v)) => out.push((k.to_ascii_lowercase(), v.to_string())),
                None => out.push((w.to_ascii_lowercase(), "true".into())),
            }
            i += 1;
        }
    }
    out
}

/// The value of `key` (like `recode.base`), `git -c` first, then git's config files.
pub fn string(repo: &gix::Repository, key: &str) -> Option<String> {
    let lower = key.to_ascii_lowercase();
    command_line_settings()
        .into_iter()
        .rev()
        .find(|(k, _)| *k == lower)
        .map(|(_, v)| v)
        .or_else(|| repo.config_snapshot().string(key).map(|v| v.to_string()))
}

/// git's boolean spellings: `true/yes/on/1` and `false/no/off/0`.
fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// [`Config::task_of`] for a compiled pattern.
fn task_key(pattern: &regex::Regex, branch: &str) -> Option<String> {
    let caps = pattern.captures(branch)?;
    let key = match caps.name("task") {
        Some(m) => m.as_str(),
        None => branch,
    };
    // An empty key would put unrelated branches into one ledger.
    Some(key.to_string()).filter(|k| !k.is_empty())
}

/// Whether `path` (repository-relative, `/`-separated) matches one of the gitignore-style
/// `patterns` (SPEC `recode.secrets`), matched by [`gix::glob`] with gitignore semantics:
/// a pattern without `/` matches the file name at any depth, one with `/` the whole path
/// (a leading `/` anchors it), `**` spans directories, `[...]` classes and `\` escapes work,
/// and a trailing `/` matches only directories. Negations (`!pat`) are not secrets patterns
/// and match nothing.
pub fn matches_secret(patterns: &[String], path: &str) -> bool {
    use gix::bstr::ByteSlice;
    // A listing entry ending in `/` is a directory (`ls-files --directory`).
    let is_dir = path.ends_with('/');
    let path = path.trim_matches('/').as_bytes().as_bstr();
    let base = path.rfind_byte(b'/').map(|p| p + 1);
    patterns.iter().any(|p| {
        gix::glob::parse(p.trim().as_bytes()).is_some_and(|pat| {
            !pat.is_negative()
                && pat.matches_repo_relative_path(
                    path,
                    base,
                    Some(is_dir),
                    gix::glob::pattern::Case::Sensitive,
                    gix::glob::wildmatch::Mode::NO_MATCH_SLASH_LITERAL,
                )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_pattern_keys() {
        let re = regex::Regex::new(DEFAULT_BRANCH_PATTERN).unwrap();
        let cfg_task = |b: &str| {
            re.captures(b)
                .and_then(|c| c.name("task"))
                .map(|m| m.as_str().to_string())
        };
        assert_eq!(cfg_task("feat/issue-107-bake-path").as_deref(), Some("107"));
        assert_eq!(cfg_task("issue-3").as_deref(), Some("3"));
        assert_eq!(cfg_task("tissue-12"), None);
        assert_eq!(cfg_task("issue-12x"), None);
    }

    #[test]
    fn a_pattern_without_a_task_group_keys_each_branch_by_its_name() {
        let re = regex::Regex::new("issue").unwrap();
        assert_eq!(task_key(&re, "issue-1-a").as_deref(), Some("issue-1-a"));
        assert_eq!(
            task_key(&re, "feat/issue-2").as_deref(),
            Some("feat/issue-2")
        );
        assert_eq!(task_key(&re, "main"), None);
        let grouped = regex::Regex::new(DEFAULT_BRANCH_PATTERN).unwrap();
        assert_eq!(
            task_key(&grouped, "feat/issue-107-x").as_deref(),
            Some("107")
        );
    }

    #[test]
    fn git_dash_c_settings() {
        // SAFETY: a test of its own; no other thread reads this variable meanwhile.
        unsafe {
            std::env::set_var(
                "GIT_CONFIG_PARAMETERS",
                "'recode.base'='trunk' 'color.ui=never' 'recode.gate'='it'\\''s fine' 'core.bare'",
            );
        }
        let got = command_line_settings();
        unsafe { std::env::remove_var("GIT_CONFIG_PARAMETERS") };
        assert_eq!(
            got,
            vec![
                ("recode.base".to_string(), "trunk".to_string()),
                ("color.ui".to_string(), "never".to_string()),
                ("recode.gate".to_string(), "it's fine".to_string()),
                ("core.bare".to_string(), "true".to_string()),
            ]
        );
    }

    #[test]
    fn secrets_match_names_and_paths() {
        let pats: Vec<String> = DEFAULT_SECRETS.iter().map(|s| s.to_string()).collect();
        assert!(matches_secret(&pats, ".env"));
        assert!(matches_secret(&pats, "app/.env.local"));
        assert!(matches_secret(&pats, "certs/server.pem"));
        assert!(matches_secret(&pats, "credentials-prod.json"));
        assert!(!matches_secret(&pats, "src/env.rs"));
        assert!(!matches_secret(&pats, "credentials.yaml"));
        let rooted = vec!["config/*.json".to_string()];
        assert!(matches_secret(&rooted, "config/a.json"));
        assert!(!matches_secret(&rooted, "x/config/a.json"));
        // gitignore semantics (gix-glob): `**`, classes, directory-only, anchors, negations.
        let deep = vec!["**/id_*".to_string()];
        assert!(matches_secret(&deep, "id_rsa"));
        assert!(matches_secret(&deep, "home/.ssh/id_ed25519"));
        let class = vec!["[Ss]ecret?.txt".to_string()];
        assert!(matches_secret(&class, "a/Secret1.txt"));
        assert!(!matches_secret(&class, "a/secret12.txt"));
        let dir_only = vec!["keys/".to_string()];
        assert!(matches_secret(&dir_only, "app/keys/"));
        assert!(!matches_secret(&dir_only, "app/keys"));
        let anchored = vec!["/top.key".to_string()];
        assert!(matches_secret(&anchored, "top.key"));
        assert!(!matches_secret(&anchored, "sub/top.key"));
        assert!(!matches_secret(&["!.env".to_string()], ".env"));
        assert!(!matches_secret(&["*.pem".to_string()], "a.pem/child.txt"));
    }
}
