//! Every `recode.*` key beside its default, and the table of keys with the shape of
//! their values (SPEC "Config"): what `--help`, the man page and `doctor` list.

use std::time::Duration;

use jiff::SignedDuration;

use super::forge::ForgeSetting;
use super::values::WatcherSetting;

/// `recode.base`: the branch work merges into. Default: the remote's HEAD, else `main`, else `master`.
pub(crate) const BASE: &str = "recode.base";
/// `recode.remote`: where branches and notes are pushed.
pub(crate) const REMOTE: &str = "recode.remote";
/// Default of [`REMOTE`].
pub(crate) const DEFAULT_REMOTE: &str = "origin";
/// `recode.branchPattern`: regex selecting worker branches; group `task` is the task key.
pub(crate) const BRANCH_PATTERN: &str = "recode.branchPattern";
/// Default of [`BRANCH_PATTERN`]: `feat/issue-107-bake-path` is task `107`, `tissue-12` is no worker.
pub(crate) const DEFAULT_BRANCH_PATTERN: &str = r"(?:^|/)issue-(?P<task>[0-9]+)(?:-|$)";
/// `recode.stallAfter`: idle time before a worker with no exit is stalled (`s`, `m`, `h`, `d`).
pub(crate) const STALL_AFTER: &str = "recode.stallAfter";
/// Default of [`STALL_AFTER`]: 30 minutes.
pub(crate) const DEFAULT_STALL_AFTER: SignedDuration = SignedDuration::from_secs(30 * 60);
/// `recode.maxAttempts`: counted attempts before `needs-human`.
pub(crate) const MAX_ATTEMPTS: &str = "recode.maxAttempts";
/// Default of [`MAX_ATTEMPTS`].
pub(crate) const DEFAULT_MAX_ATTEMPTS: u32 = 3;
/// `recode.maxTransient`: transient exits in a row on one task with no new commit before
/// the worker is `needs-human` (SPEC 1.3 "Outcomes: structured first, bounded").
pub(crate) const MAX_TRANSIENT: &str = "recode.maxTransient";
/// Default of [`MAX_TRANSIENT`].
pub(crate) const DEFAULT_MAX_TRANSIENT: u32 = 12;
/// `recode.gate`: the test command run before publishing (unset by default).
pub(crate) const GATE: &str = "recode.gate";
/// `recode.notesRef`: where ledgers live.
pub(crate) const NOTES_REF: &str = "recode.notesRef";
/// Default of [`NOTES_REF`].
pub(crate) const DEFAULT_NOTES_REF: &str = "refs/notes/recode";
/// `recode.agent`: `claude`, `codex`, or a command template.
pub(crate) const AGENT: &str = "recode.agent";
/// Default of [`AGENT`].
pub(crate) const DEFAULT_AGENT: &str = "claude";
/// `recode.pushWip`: push a branch after its WIP commit when a remote exists.
pub(crate) const PUSH_WIP: &str = "recode.pushWip";
/// `recode.secrets`: gitignore-style patterns of files never pushed in a WIP nor deleted with a worktree.
pub(crate) const SECRETS: &str = "recode.secrets";
/// Default of [`SECRETS`].
pub(crate) const DEFAULT_SECRETS: &[&str] = &[
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
pub(crate) const NETWORK_TIMEOUT: &str = "recode.networkTimeout";
/// `recode.wipMaxFileSize`: an untracked file larger than this (bytes; `k`, `M`, `G`
/// suffixes, powers of 1024) is left out of a WIP commit (SPEC 1.2).
pub(crate) const WIP_MAX_FILE_SIZE: &str = "recode.wipMaxFileSize";
/// Default `recode.wipMaxFileSize`: 50M.
pub(crate) const DEFAULT_WIP_MAX_FILE_SIZE: u64 = 50 * 1024 * 1024;
/// Default of [`NETWORK_TIMEOUT`]: 60 s.
pub(crate) const DEFAULT_NETWORK_TIMEOUT: Duration = Duration::from_secs(60);
/// `recode.gateTimeout`: the longest the gate may run (SPEC 1.2 "The loop settles").
pub(crate) const GATE_TIMEOUT: &str = "recode.gateTimeout";
/// Default of [`GATE_TIMEOUT`]: 30 minutes.
pub(crate) const DEFAULT_GATE_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// `recode.commandTimeout`: the longest any other child process may run.
pub(crate) const COMMAND_TIMEOUT: &str = "recode.commandTimeout";
/// Default of [`COMMAND_TIMEOUT`]: 5 minutes.
pub(crate) const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(5 * 60);
/// `recode.staleLockAfter`: age after which a worktree or repository lock is stale.
pub(crate) const STALE_LOCK_AFTER: &str = "recode.staleLockAfter";
/// Default of [`STALE_LOCK_AFTER`]: 5 minutes.
pub(crate) const DEFAULT_STALE_LOCK_AFTER: Duration = Duration::from_secs(5 * 60);
/// Where `resume` adds a worktree for a worker that has none (default
/// `<main worktree>/../<repo>.worktrees`).
pub(crate) const WORKTREE_DIR: &str = "recode.worktreeDir";
/// `recode.forge`: `auto` (from the remote's host), `github`, `gitlab`, `gitea` (Forgejo
/// too; `forgejo` is accepted as its alias) or `none` (SPEC 1.2 "Forges").
pub(crate) const FORGE: &str = "recode.forge";
/// The values [`FORGE`] takes ([`ForgeSetting::VALUES`]).
pub(crate) const FORGES: &[&str] = ForgeSetting::VALUES;
/// `recode.hostTimeout`: how long another host may be silent before its workers are taken over.
pub(crate) const HOST_TIMEOUT: &str = "recode.hostTimeout";
/// The default of [`HOST_TIMEOUT`]: 2 h.
pub(crate) const DEFAULT_HOST_TIMEOUT: SignedDuration = SignedDuration::from_secs(2 * 3600);
/// `recode.hungAfter`: how long a worker whose pid is alive may show no activity before it
/// is `stalled` and its process group ended (SPEC 1.3 "The loop as people run it").
pub(crate) const HUNG_AFTER: &str = "recode.hungAfter";
/// The default of [`HUNG_AFTER`]: 2 h.
pub(crate) const DEFAULT_HUNG_AFTER: SignedDuration = SignedDuration::from_secs(2 * 3600);
/// `recode.agentConfigDirs` (multi-valued): the agent configuration directories of the loop's accounts.
pub(crate) const AGENT_CONFIG_DIRS: &str = "recode.agentConfigDirs";
/// `recode.watcher`: ask a file watcher what changed since the last tick (`auto`: Watchman
/// when its server runs; `watchman`: Watchman, its server started when needed; `off`).
pub(crate) const WATCHER: &str = "recode.watcher";
/// The values [`WATCHER`] takes ([`WatcherSetting::VALUES`]).
pub(crate) const WATCHERS: &[&str] = WatcherSetting::VALUES;
/// git's own key for the ssh command: honoured by network steps, batch mode added
/// ([`crate::ssh`]).
pub(crate) const SSH_COMMAND: &str = "core.sshCommand";
/// The ref that keeps task anchors reachable (SPEC "Where state lives").
pub(crate) const ANCHORS_REF: &str = "refs/recode/anchors";

/// The shape of a key's value, checked where it is read and by `doctor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Any text.
    Text,
    /// A regular expression with a `task` group (`(?P<task>…)`): the task key.
    TaskRegex,
    /// A duration with a unit: `s`, `m`, `h`, `d` ([`duration_secs`](super::duration_secs)).
    Duration,
    /// A whole number from 1 to [`MAX_ATTEMPTS_LIMIT`].
    Count,
    /// git's boolean spellings.
    Bool,
    /// A size with a unit: `k`, `M`, `G` ([`size_bytes`](super::values::size_bytes)).
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
    Key { name: FORGE, default: "auto", meaning: "github, gitlab, gitea, none, or auto (from the remote's host)", kind: Kind::OneOf(FORGES) },
    Key { name: GATE_TIMEOUT, default: "30m", meaning: "the longest the gate may run", kind: Kind::Duration },
    Key { name: COMMAND_TIMEOUT, default: "5m", meaning: "the longest any other child process may run", kind: Kind::Duration },
    Key { name: STALE_LOCK_AFTER, default: "5m", meaning: "age after which a lock file in a worktree or the repository is stale", kind: Kind::Duration },
    Key { name: WIP_MAX_FILE_SIZE, default: "50M", meaning: "untracked files larger than this stay out of a WIP commit (k, M, G)", kind: Kind::Size },
    Key { name: HOST_TIMEOUT, default: "2h", meaning: "how long another host may be silent before its workers are taken over", kind: Kind::Duration },
    Key { name: HUNG_AFTER, default: "2h", meaning: "how long a worker whose pid is alive may show no activity before it is stalled and ended", kind: Kind::Duration },
    Key { name: AGENT_CONFIG_DIRS, default: "unset", meaning: "multi-valued: the agent configuration directories of the loop's accounts", kind: Kind::Text },
    Key { name: WATCHER, default: "auto", meaning: "auto (Watchman when its server runs), watchman, or off: how status learns what changed since the last tick", kind: Kind::OneOf(WATCHERS) },
    Key { name: SECRETS, default: ".env, .env.*, *.pem, *.key, id_rsa*, id_ed25519*, *.p12, credentials*.json", meaning: "multi-valued, added to the defaults: files never pushed in a WIP nor deleted", kind: Kind::Text },
];

/// The largest `recode.maxAttempts` accepted: a cap nobody reaches is no cap.
pub(crate) const MAX_ATTEMPTS_LIMIT: u32 = 1000;

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
