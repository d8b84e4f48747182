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
/// `recode.maxTransient`: transient exits in a row on one task with no new commit before
/// the worker is `needs-human` (SPEC 1.3 "Outcomes: structured first, bounded").
pub const MAX_TRANSIENT: &str = "recode.maxTransient";
/// Default of [`MAX_TRANSIENT`].
pub const DEFAULT_MAX_TRANSIENT: u32 = 12;
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
/// `recode.wipMaxFileSize`: an untracked file larger than this (bytes; `k`, `M`, `G`
/// suffixes, powers of 1024) is left out of a WIP commit (SPEC 1.2).
pub const WIP_MAX_FILE_SIZE: &str = "recode.wipMaxFileSize";
/// Default `recode.wipMaxFileSize`: 50M.
pub const DEFAULT_WIP_MAX_FILE_SIZE: u64 = 50 * 1024 * 1024;
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
/// `recode.forge`: `auto` (from the remote's host), `github`, `gitlab`, `gitea` (Forgejo
/// too; `forgejo` is accepted as its alias) or `none` (SPEC 1.2 "Forges").
pub const FORGE: &str = "recode.forge";
/// The values [`FORGE`] takes.
pub const FORGES: &[&str] = &["auto", "github", "gitlab", "gitea", "forgejo", "none"];
/// `recode.hostTimeout`: how long another host may be silent before its workers are taken over.
pub const HOST_TIMEOUT: &str = "recode.hostTimeout";
/// `recode.hungAfter`: how long a worker whose pid is alive may show no activity before it
/// is `stalled` and its process group ended (SPEC 1.3 "The loop as people run it").
pub const HUNG_AFTER: &str = "recode.hungAfter";
/// The default of [`HUNG_AFTER`], in seconds (2 h).
pub const DEFAULT_HUNG_AFTER_SECS: i64 = 2 * 3600;
/// `recode.agentConfigDirs` (multi-valued): the agent configuration directories of the loop's accounts.
pub const AGENT_CONFIG_DIRS: &str = "recode.agentConfigDirs";
/// git's own key for the ssh command: honoured by network steps, batch mode added
/// ([`crate::ssh`]).
pub const SSH_COMMAND: &str = "core.sshCommand";
/// The ref that keeps task anchors reachable (SPEC "Where state lives").
pub const ANCHORS_REF: &str = "refs/recode/anchors";

/// The shape of a key's value, checked where it is read and by `doctor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Any text.
    Text,
    /// A regular expression with a `task` group (`(?P<task>…)`): the task key.
    TaskRegex,
    /// A duration with a unit: `s`, `m`, `h`, `d` ([`duration_secs`]).
    Duration,
    /// A whole number from 1 to [`MAX_ATTEMPTS_LIMIT`].
    Count,
    /// git's boolean spellings.
    Bool,
    /// A size with a unit: `k`, `M`, `G` ([`size_bytes`]).
    Size,
    /// One of the listed words.
    OneOf(&'static [&'static str]),
}

/// One `recode.*` key: its name, its default as the help shows it, what it means, and
/// the shape of its value.
#[derive(Debug, Clone, Copy)]
pub struct Key {
    /// The key, `recode.` included.
    pub name: &'static str,
    /// The default, as text (`unset` when there is none).
    pub default: &'static str,
    /// What it sets, in a few words.
    pub meaning: &'static str,
    /// The shape of its value.
    pub kind: Kind,
}

/// Every `recode.*` key, in the SPEC's order (SPEC "Config" and 1.2): the one place keys
/// are declared for the `--help` list, the man page and `doctor`'s checks.
#[rustfmt::skip]
pub const KEYS: &[Key] = &[
    Key { name: BASE, default: "remote HEAD, else main, else master", meaning: "the branch work merges into", kind: Kind::Text },
    Key { name: REMOTE, default: DEFAULT_REMOTE, meaning: "where branches and notes are pushed", kind: Kind::Text },
    Key { name: BRANCH_PATTERN, default: DEFAULT_BRANCH_PATTERN, meaning: "regex: which branches are workers, and their task key", kind: Kind::TaskRegex },
    Key { name: STALL_AFTER, default: "30m", meaning: "idle time before a worker with no exit is stalled (s, m, h, d)", kind: Kind::Duration },
    Key { name: MAX_ATTEMPTS, default: "3", meaning: "counted attempts before needs-human", kind: Kind::Count },
    Key { name: MAX_TRANSIENT, default: "12", meaning: "transient exits in a row on one task with no new commit before needs-human", kind: Kind::Count },
    Key { name: GATE, default: "unset", meaning: "the test command run before publishing", kind: Kind::Text },
    Key { name: NOTES_REF, default: DEFAULT_NOTES_REF, meaning: "where ledgers live", kind: Kind::Text },
    Key { name: AGENT, default: DEFAULT_AGENT, meaning: "claude, codex, gemini, opencode, cursor, copilot, amp, goose, aider, or a command template", kind: Kind::Text },
    Key { name: NETWORK_TIMEOUT, default: "60s", meaning: "the longest a push, fetch or forge call may take", kind: Kind::Duration },
    Key { name: WORKTREE_DIR, default: "<main worktree>/../<repo>.worktrees", meaning: "where resume adds a worktree for a worker that has none", kind: Kind::Text },
    Key { name: PUSH_WIP, default: "true", meaning: "push a branch after its WIP commit when a remote exists", kind: Kind::Bool },
    Key { name: FORGE, default: "auto", meaning: "github, gitlab, gitea, none, or auto (from the remote's host)", kind: Kind::OneOf(&["auto", "github", "gitlab", "gitea", "forgejo", "none"]) },
    Key { name: GATE_TIMEOUT, default: "30m", meaning: "the longest the gate may run", kind: Kind::Duration },
    Key { name: COMMAND_TIMEOUT, default: "5m", meaning: "the longest any other child process may run", kind: Kind::Duration },
    Key { name: STALE_LOCK_AFTER, default: "5m", meaning: "age after which a lock file in a worktree or the repository is stale", kind: Kind::Duration },
    Key { name: WIP_MAX_FILE_SIZE, default: "50M", meaning: "untracked files larger than this stay out of a WIP commit (k, M, G)", kind: Kind::Size },
    Key { name: HOST_TIMEOUT, default: "2h", meaning: "how long another host may be silent before its workers are taken over", kind: Kind::Duration },
    Key { name: HUNG_AFTER, default: "2h", meaning: "how long a worker whose pid is alive may show no activity before it is stalled and ended", kind: Kind::Duration },
    Key { name: AGENT_CONFIG_DIRS, default: "unset", meaning: "multi-valued: the agent configuration directories of the loop's accounts", kind: Kind::Text },
    Key { name: SECRETS, default: ".env, .env.*, *.pem, *.key, id_rsa*, id_ed25519*, *.p12, credentials*.json", meaning: "multi-valued, added to the defaults: files never pushed in a WIP nor deleted", kind: Kind::Text },
];

/// The largest `recode.maxAttempts` accepted: a cap nobody reaches is no cap.
pub const MAX_ATTEMPTS_LIMIT: u32 = 1000;

/// A config duration in seconds: a whole number with a unit (`90s`, `30m`, `2h`, `1d`).
/// A bare number is refused: `stallAfter=10` would silently mean ten seconds (SPEC 1.2
/// "durations need a unit").
///
/// Errors: the text saying what was expected.
pub fn duration_secs(value: &str) -> Result<i64, String> {
    let v = value.trim();
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "'{v}' has no unit: a duration is a number followed by s, m, h or d, like {v}m"
        ));
    }
    clock::parse_duration(v).map_err(|e| e.to_string())
}

/// `recode.maxAttempts`: a whole number from 1 to [`MAX_ATTEMPTS_LIMIT`].
///
/// Errors: the text saying what was expected.
pub fn count(value: &str) -> Result<u32, String> {
    let v = value.trim();
    let range = format!("expected a whole number from 1 to {MAX_ATTEMPTS_LIMIT}");
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(range);
    }
    match v.parse::<u64>() {
        Ok(0) => Err(format!("{range} (0 would escalate every worker)")),
        Ok(n) if n <= u64::from(MAX_ATTEMPTS_LIMIT) => Ok(n as u32),
        _ => Err(format!("{range} (a cap nobody reaches is no cap)")),
    }
}

/// A size in bytes: a whole number with an optional unit `k`, `M`, `G` (powers of 1024,
/// as git's `core.bigFileThreshold`).
///
/// Errors: the text saying what was expected.
pub fn size_bytes(value: &str) -> Result<u64, String> {
    let v = value.trim();
    let bad = || "expected a size such as 50M (k, M or G)".to_string();
    let i = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let n: u64 = v[..i].parse().map_err(|_| bad())?;
    let mult: u64 = match v[i..].trim() {
        "" => 1,
        "k" | "K" => 1 << 10,
        "m" | "M" => 1 << 20,
        "g" | "G" => 1 << 30,
        _ => return Err(bad()),
    };
    n.checked_mul(mult).ok_or_else(bad)
}

/// Check one value against its key's shape ([`KEYS`]); unknown keys pass.
///
/// Errors: the text saying what was expected.
pub fn check(key: &str, value: &str) -> Result<(), String> {
    let Some(k) = KEYS.iter().find(|k| k.name.eq_ignore_ascii_case(key)) else {
        return Ok(());
    };
    match k.kind {
        Kind::Text => Ok(()),
        Kind::TaskRegex => task_pattern(value).map(|_| ()),
        Kind::Duration => duration_secs(value).map(|_| ()),
        Kind::Count => count(value).map(|_| ()),
        Kind::Bool => parse_bool(value)
            .map(|_| ())
            .ok_or_else(|| "expected true or false".into()),
        Kind::Size => size_bytes(value).map(|_| ()),
        Kind::OneOf(words) => {
            if words.contains(&value.trim().to_ascii_lowercase().as_str()) {
                Ok(())
            } else {
                Err(format!("expected one of {}", words.join(", ")))
            }
        }
    }
}

/// `recode.branchPattern` compiled: a regular expression with a `task` group, which
/// names each worker's task (SPEC 1.3 "Errors a newcomer meets (more)": a pattern without
/// one is refused, since every branch would become a task of its own and the branches of
/// one task would never share a ledger).
///
/// Errors: the text saying what is wrong (a bad regex, no `task` group).
pub fn task_pattern(value: &str) -> Result<regex::Regex, String> {
    let re = regex::Regex::new(value).map_err(|e| e.to_string())?;
    if re.capture_names().flatten().any(|n| n == "task") {
        Ok(re)
    } else {
        Err(format!(
            "it has no task group: write the task key's part as (?P<task>...), as the default does: {DEFAULT_BRANCH_PATTERN}"
        ))
    }
}

/// The `--help` list of keys, generated from [`KEYS`]: `  recode.key  meaning [default: …]`.
pub fn help_list() -> String {
    let width = KEYS.iter().map(|k| k.name.len()).max().unwrap_or(0);
    KEYS.iter()
        .map(|k| {
            format!(
                "  {:<width$}  {} [default: {}]\n",
                k.name, k.meaning, k.default
            )
        })
        .collect()
}

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
    /// `recode.networkTimeout`, in seconds.
    pub network_timeout_secs: u64,
    /// `recode.wipMaxFileSize`, in bytes.
    pub wip_max_file_size: u64,
    /// `recode.gateTimeout`, in seconds.
    pub gate_timeout_secs: u64,
    /// `recode.commandTimeout`, in seconds (also handed to [`crate::git::set_command_timeout`]).
    pub command_timeout_secs: u64,
    /// `recode.staleLockAfter`, in seconds.
    pub stale_lock_after_secs: u64,
    /// `recode.worktreeDir`, if set (relative paths are taken from the main worktree).
    pub worktree_dir: Option<String>,
    /// `recode.hostTimeout`, in seconds (default 2 h): how long another host may be silent
    /// before its workers can be taken over here (SPEC 1.2 "Several machines").
    pub host_timeout_secs: i64,
    /// `recode.hungAfter`, in seconds (default 2 h): a live pid with no activity for this
    /// long is hung (SPEC 1.3 "The loop as people run it").
    pub hung_after_secs: i64,
    /// `recode.forge` and the forge's environment, read once here (SPEC 1.2 "Forges").
    pub forge: ForgeOptions,
    /// The ssh command of network steps and the gate: `GIT_SSH_COMMAND`, else
    /// `core.sshCommand`, else `GIT_SSH`, else `ssh`, with batch mode added
    /// ([`crate::ssh::SshCommand`]).
    pub ssh: crate::ssh::SshCommand,
}

/// What the forge needs from outside, read once at the edge (SPEC "Forge", 1.2 "Forges"):
/// `recode.forge`, the tokens (`GH_TOKEN`/`GITHUB_TOKEN`, `GITLAB_TOKEN`,
/// `GITEA_TOKEN`/`FORGEJO_TOKEN`), `GH_HOST`, the base URL override (`RECODE_FORGE_API`,
/// else `RECODE_GITHUB_API`), the longest retry wait (`RECODE_FORGE_MAX_WAIT`, seconds)
/// and the request timeout (`recode.networkTimeout`, seconds). `Debug` never shows a token.
#[derive(Clone, Default)]
pub struct ForgeOptions {
    /// `recode.forge`, lower case: one of [`FORGES`] (`forgejo` read as `gitea`).
    pub kind: String,
    /// `GH_TOKEN`, else `GITHUB_TOKEN`.
    pub github_token: Option<String>,
    /// `GITLAB_TOKEN`.
    pub gitlab_token: Option<String>,
    /// `GITEA_TOKEN`, else `FORGEJO_TOKEN`.
    pub gitea_token: Option<String>,
    /// `GH_HOST` (GitHub Enterprise), if set.
    pub gh_host: Option<String>,
    /// `RECODE_FORGE_API`, else `RECODE_GITHUB_API`: the API base URL of whichever forge.
    pub api: Option<String>,
    /// `RECODE_FORGE_MAX_WAIT`: the longest wait before one retry, in seconds (default 20).
    pub max_wait_secs: u64,
    /// The longest one request may take, in seconds (`recode.networkTimeout`).
    pub timeout_secs: u64,
}

impl std::fmt::Debug for ForgeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never a token: only whether each is set.
        f.debug_struct("ForgeOptions")
            .field("kind", &self.kind)
            .field("github_token", &self.github_token.is_some())
            .field("gitlab_token", &self.gitlab_token.is_some())
            .field("gitea_token", &self.gitea_token.is_some())
            .field("gh_host", &self.gh_host)
            .field("api", &self.api)
            .finish()
    }
}

impl ForgeOptions {
    /// `recode.forge = kind` (checked by the caller) with the process environment.
    pub fn from_env(kind: &str, timeout_secs: u64) -> ForgeOptions {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let first = |ks: &[&str]| ks.iter().find_map(|k| var(k));
        let kind = kind.trim().to_ascii_lowercase();
        ForgeOptions {
            kind: if kind == "forgejo" {
                "gitea".into()
            } else {
                kind
            },
            github_token: first(&["GH_TOKEN", "GITHUB_TOKEN"]),
            gitlab_token: var("GITLAB_TOKEN"),
            gitea_token: first(&["GITEA_TOKEN", "FORGEJO_TOKEN"]),
            gh_host: var("GH_HOST"),
            api: first(&["RECODE_FORGE_API", "RECODE_GITHUB_API"]),
            max_wait_secs: var("RECODE_FORGE_MAX_WAIT")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(20),
            timeout_secs,
        }
    }
}

impl Config {
    /// Read the configuration of `repo` (all of git's config files, as git would).
    ///
    /// Errors: [`ConfigError::Invalid`] for a value of the wrong shape (a bad regex, a non-number).
    pub fn load(repo: &gix::Repository) -> Result<Config, ConfigError> {
        let get = |key: &str| string(repo, key).filter(|v| !v.trim().is_empty());
        let pattern_text = get(BRANCH_PATTERN).unwrap_or_else(|| DEFAULT_BRANCH_PATTERN.into());
        let branch_pattern = task_pattern(&pattern_text).map_err(|why| ConfigError::Invalid {
            key: BRANCH_PATTERN,
            value: pattern_text.clone(),
            why,
        })?;
        let duration = duration_secs;
        let stall_after_secs = parsed(
            STALL_AFTER,
            get(STALL_AFTER),
            DEFAULT_STALL_AFTER_SECS,
            duration,
        )?;
        let max_attempts = parsed(MAX_ATTEMPTS, get(MAX_ATTEMPTS), DEFAULT_MAX_ATTEMPTS, count)?;
        let max_transient = parsed(
            MAX_TRANSIENT,
            get(MAX_TRANSIENT),
            DEFAULT_MAX_TRANSIENT,
            count,
        )?;
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
        let wip_max_file_size = parsed(
            WIP_MAX_FILE_SIZE,
            get(WIP_MAX_FILE_SIZE),
            DEFAULT_WIP_MAX_FILE_SIZE,
            parse_size,
        )?;
        let secs = |key: &'static str, default: i64| -> Result<u64, ConfigError> {
            Ok(parsed(key, get(key), default, duration)?.max(1) as u64)
        };
        let gate_timeout_secs = secs(GATE_TIMEOUT, DEFAULT_GATE_TIMEOUT_SECS)?;
        let command_timeout_secs = secs(COMMAND_TIMEOUT, DEFAULT_COMMAND_TIMEOUT_SECS)?;
        let stale_lock_after_secs = secs(STALE_LOCK_AFTER, DEFAULT_STALE_LOCK_AFTER_SECS)?;
        let host_timeout_secs = secs(HOST_TIMEOUT, 2 * 3600)? as i64;
        let hung_after_secs = secs(HUNG_AFTER, DEFAULT_HUNG_AFTER_SECS)? as i64;
        crate::git::set_command_timeout(command_timeout_secs);
        crate::lock::set_stale_after(stale_lock_after_secs);
        let notes_ref = notes_ref(get(NOTES_REF))?;
        let forge = parsed(FORGE, get(FORGE), "auto".to_string(), |v| {
            let v = v.trim().to_ascii_lowercase();
            FORGES
                .contains(&v.as_str())
                .then_some(v)
                .ok_or_else(|| format!("expected one of {}", FORGES.join(", ")))
        })?;
        let (secrets, secrets_error) = secrets(repo);
        Ok(Config {
            gate_timeout_secs,
            command_timeout_secs,
            stale_lock_after_secs,
            base: get(BASE),
            remote: get(REMOTE).unwrap_or_else(|| DEFAULT_REMOTE.into()),
            branch_pattern,
            stall_after_secs,
            max_attempts,
            max_transient,
            gate: get(GATE),
            notes_ref,
            agent: get(AGENT).unwrap_or_else(|| DEFAULT_AGENT.into()),
            agent_configured: get(AGENT).is_some(),
            push_wip,
            secrets,
            secrets_error,
            network_timeout_secs,
            wip_max_file_size,
            worktree_dir: get(WORKTREE_DIR),
            host_timeout_secs,
            hung_after_secs,
            forge: ForgeOptions::from_env(&forge, network_timeout_secs),
            ssh: crate::ssh::SshCommand::from_env(string(repo, SSH_COMMAND).as_deref()),
        })
    }

    /// Check `recode.base` where it is read (SPEC 1.2 "Errors a newcomer meets"): a set
    /// base must be a local branch or a branch of `recode.remote`, else every commit would
    /// count as ahead. A repository with no branch yet has nothing to check.
    ///
    /// Errors: [`ConfigError::Invalid`] naming the key and the value.
    pub fn check_base(&self, repo: &gix::Repository) -> Result<(), ConfigError> {
        check_base_of(repo, self.base.as_deref(), &self.remote)
    }
}

/// [`Config::check_base`] for the raw values (`doctor` asks it when another key keeps the
/// whole configuration from loading).
///
/// Errors: [`ConfigError::Invalid`] naming [`BASE`].
pub fn check_base_of(
    repo: &gix::Repository,
    base: Option<&str>,
    remote: &str,
) -> Result<(), ConfigError> {
    {
        let Some(base) = base else {
            return Ok(());
        };
        let exists = |name: String| matches!(repo.try_find_reference(name.as_str()), Ok(Some(_)));
        let any_branch = repo
            .references()
            .ok()
            .and_then(|r| r.local_branches().ok().map(|mut b| b.next().is_some()))
            .unwrap_or(false);
        if !any_branch
            || exists(format!("refs/heads/{base}"))
            || exists(format!("refs/remotes/{remote}/{base}"))
        {
            return Ok(());
        }
        Err(ConfigError::Invalid {
            key: BASE,
            value: base.to_string(),
            why: format!(
                "no branch '{base}' here nor on '{remote}' (set it to the branch work merges into, or unset it)"
            ),
        })
    }
}

impl Config {
    /// Refuse an invalid `recode.secrets` value (SPEC 1.2: an error, exit 1, on every
    /// command that could delete or push: `recover`, `sync`).
    ///
    /// Errors: [`ConfigError::Invalid`] naming the value and what is wrong with it.
    pub fn check_secrets(&self) -> Result<(), ConfigError> {
        match &self.secrets_error {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// The task key of `branch`: the pattern's `task` group when it matches (a pattern
    /// without one is refused when the configuration is read, [`task_pattern`]). `None`
    /// when the pattern does not match (the branch is not a worker by name).
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

/// The secrets patterns: [`DEFAULT_SECRETS`], then every non-empty `recode.secrets`
/// value (git's config files, then `git -c`), each once; with the first invalid value's
/// error (it is left out).
fn secrets(repo: &gix::Repository) -> (Vec<String>, Option<ConfigError>) {
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
    let mut out: Vec<String> = DEFAULT_SECRETS.iter().map(|s| s.to_string()).collect();
    let mut error = None;
    for v in secrets {
        let v = v.trim();
        if v.is_empty() || out.iter().any(|o| o == v) {
            continue; // "" adds nothing
        }
        match secret_pattern_problem(v) {
            Some(why) => {
                error.get_or_insert(ConfigError::Invalid {
                    key: SECRETS,
                    value: v.to_string(),
                    why: why.into(),
                });
            }
            None => out.push(v.to_string()),
        }
    }
    (out, error)
}

/// What makes `pattern` unusable as a secrets pattern, if anything: an unclosed `[`
/// class or a trailing `\` (git's wildmatch then matches nothing), a negation (values
/// only add: a `!` cannot take a default away), or a pattern gix cannot parse.
fn secret_pattern_problem(pattern: &str) -> Option<&'static str> {
    if pattern.starts_with('!') {
        return Some(
            "values add to the defaults; a negation cannot remove one (write the pattern without '!')",
        );
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' if i + 1 == chars.len() => return Some("the pattern ends with a lone '\\'"),
            '\\' => i += 1,
            '[' => {
                let mut j = i + 1;
                if matches!(chars.get(j), Some('!' | '^')) {
                    j += 1;
                }
                if chars.get(j) == Some(&']') {
                    j += 1; // a leading `]` is a member of the class
                }
                while j < chars.len() && chars[j] != ']' {
                    j += 1;
                }
                if j >= chars.len() {
                    return Some("an unclosed '[' class matches nothing; escape it as '\\['");
                }
                i = j;
            }
            _ => {}
        }
        i += 1;
    }
    gix::glob::parse(pattern.as_bytes())
        .is_none()
        .then_some("not a gitignore-style pattern")
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

/// A path-valued setting as git interpolates it (gix's `config::Path::interpolate`): a
/// leading `~/` is `$HOME`, `~user/` that user's home; a value that cannot be
/// interpolated (no `HOME`, an unknown user) is taken as it is. Relative values stay
/// relative: the caller knows what they are relative to.
pub fn interpolate_path(value: &str) -> std::path::PathBuf {
    let home = gix::path::env::home_dir();
    let raw = gix::config::Path::from(std::borrow::Cow::Owned(gix::bstr::BString::from(value)));
    let ctx = gix::config::path::interpolate::Context {
        home_dir: home.as_deref(),
        home_for_user: Some(gix::config::path::interpolate::home_for_user),
        ..Default::default()
    };
    raw.interpolate(ctx)
        .unwrap_or_else(|_| std::path::PathBuf::from(value))
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

/// A size in bytes: a whole number with an optional `k`, `M` or `G` suffix (powers of
/// 1024, as git's own `core.bigFileThreshold`; either case), e.g. `10k`, `50M`.
///
/// Errors: a message saying what is expected.
pub fn parse_size(value: &str) -> Result<u64, String> {
    let v = value.trim();
    let bad = || "expected a size such as 500k, 50M or 1G".to_string();
    let (num, unit) = match v.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => (&v[..i], v[i..].trim()),
        None => (v, ""),
    };
    let n: u64 = num.parse().map_err(|_| bad())?;
    let mult: u64 = match unit {
        "" => 1,
        "k" | "K" => 1 << 10,
        "m" | "M" => 1 << 20,
        "g" | "G" => 1 << 30,
        _ => return Err(bad()),
    };
    n.checked_mul(mult).ok_or_else(bad)
}

/// git's boolean spellings: `true/yes/on/1` and `false/no/off/0`.
fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" => Some(true),
        "false" | "no" | "off" | "0" => Some(false),
        _ => None,
    }
}

/// [`Config::task_of`] for a compiled pattern (one with a `task` group,
/// [`task_pattern`]): the group's text, `None` when the pattern does not match or the
/// group is empty (an empty key would put unrelated branches into one ledger).
fn task_key(pattern: &regex::Regex, branch: &str) -> Option<String> {
    let caps = pattern.captures(branch)?;
    Some(caps.name("task")?.as_str().to_string()).filter(|k| !k.is_empty())
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
    fn values_are_checked_by_their_shape() {
        assert_eq!(duration_secs("90s"), Ok(90));
        assert_eq!(duration_secs("2h"), Ok(7200));
        assert!(duration_secs("10").unwrap_err().contains("has no unit"));
        assert_eq!(count("1"), Ok(1));
        assert_eq!(count("1000"), Ok(1000));
        assert!(count("0").is_err() && count("1001").is_err() && count("-1").is_err());
        assert_eq!(size_bytes("50M"), Ok(50 << 20));
        assert_eq!(size_bytes("512k"), Ok(512 << 10));
        assert_eq!(size_bytes("100"), Ok(100));
        assert!(size_bytes("5T").is_err());
        assert_eq!(check("recode.forge", "GitLab"), Ok(()));
        assert!(check("recode.forge", "bitbucket").is_err());
        assert!(check("recode.pushWip", "maybe").is_err());
        assert!(check("recode.branchPattern", "(").is_err());
        assert_eq!(check("recode.unknownKey", "x"), Ok(()));
        // Every key is in the --help list, once.
        let list = help_list();
        for k in KEYS {
            assert_eq!(
                list.matches(&format!("  {} ", k.name)).count(),
                1,
                "{}",
                k.name
            );
        }
    }

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
    fn a_pattern_without_a_task_group_is_refused() {
        for bad in [
            "issue",
            "issue-[0-9]+",
            "(?P<id>[0-9]+)",
            "(issue)-([0-9]+)",
        ] {
            let why = task_pattern(bad).unwrap_err();
            assert!(why.starts_with("it has no task group: "), "{bad}: {why}");
            assert_eq!(check(BRANCH_PATTERN, bad), Err(why));
        }
        assert!(
            task_pattern("issue-(")
                .unwrap_err()
                .contains("unclosed group")
        );
        let grouped = task_pattern(r"^agent/(?P<task>[a-z]+)-").unwrap();
        assert_eq!(
            task_key(&grouped, "agent/login-2").as_deref(),
            Some("login")
        );
        assert_eq!(task_key(&grouped, "main"), None);
        let optional = task_pattern(r"^w(?P<task>[0-9]*)$").unwrap();
        assert_eq!(task_key(&optional, "w"), None);
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
