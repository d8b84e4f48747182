//! `git recode doctor`: check a loop's set-up, one [`Check`] a line, each `ok`, `warn` or
//! `fail` with the fix (SPEC 1.2 Commands, `doctor`). Reads only: it writes no ref, no
//! file and sends no token anywhere but the forge's API.
//!
//! The checks, in order: git (version, repository format), config (every `recode.*`
//! value, the base exists), hook (reaches every worktree), forge (detected, token,
//! answering), agent (its CLI on `PATH`), accounts (`recode.agentConfigDirs` distinct),
//! locks (stale lock files), clone (shallow, partial), maintenance (what could prune
//! worktrees).

use std::path::{Path, PathBuf};

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
    /// The check: `git`, `config`, `hook`, `forge`, `agent`, `accounts`, `locks`,
    /// `clone`, `maintenance`.
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
pub fn run(repo: &gix::Repository, now: jiff::Timestamp) -> Vec<Check> {
    let mut out = vec![git_version(repo)];
    let (cfg, load_error) = match Config::load(repo) {
        Ok(c) => (Some(c), None),
        Err(e) => (None, Some(e)),
    };
    let values = config_values(repo, cfg.as_ref());
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
    out.extend(hook(repo));
    let remote = cfg
        .as_ref()
        .map(|c| c.remote.clone())
        .unwrap_or_else(|| config::DEFAULT_REMOTE.into());
    if let Some(c) = cfg.as_ref() {
        out.push(forge(repo, c));
    }
    let agent = cfg
        .as_ref()
        .map(|c| c.agent.clone())
        .unwrap_or_else(|| config::DEFAULT_AGENT.into());
    out.push(agent_on_path(&agent));
    out.extend(accounts(repo));
    let stale_after = config::string(repo, config::STALE_LOCK_AFTER)
        .and_then(|v| config::duration_secs(&v).ok())
        .unwrap_or(5 * 60);
    let notes_ref = cfg
        .as_ref()
        .map(|c| c.notes_ref.clone())
        .unwrap_or_else(|| config::DEFAULT_NOTES_REF.into());
    out.push(locks(repo, &notes_ref, stale_after, now));
    out.push(clone_kind(repo, &remote));
    out.push(maintenance(repo));
    out.extend(crate::hosts::doctor::clocks(repo, now));
    out.extend(crate::hosts::doctor::untrusted_refs(repo, now));
    out
}

/// The git binary's version (at least [`crate::git::MIN_VERSION`]) and the repository's
/// formats (the ones opening it accepted: SHA-1, files refs).
fn git_version(repo: &gix::Repository) -> Check {
    let version = crate::git::read(repo.git_dir(), &["version"])
        .map(|v| String::from_utf8_lossy(&v).trim().to_string());
    match (version, crate::git::check_version()) {
        (Ok(v), Ok(())) => ok("git", format!("{v}; repository: SHA-1 objects, files refs")),
        (_, Err(e)) | (Err(e), _) => check(
            "git",
            Level::Fail,
            e.to_string(),
            Some("install git 2.31 or newer and put it first on PATH".into()),
        ),
    }
}

/// Every `recode.*` value against its shape ([`config::KEYS`]), and `recode.base`.
fn config_values(repo: &gix::Repository, cfg: Option<&Config>) -> Vec<Check> {
    let mut out = Vec::new();
    for key in config::KEYS {
        if let Some(v) = config::string(repo, key.name)
            && let Err(why) = config::check(key.name, &v)
        {
            out.push(check(
                "config",
                Level::Fail,
                format!("{} = '{v}' is invalid: {why}", key.name),
                Some(format!(
                    "git config {} <value> (default: {})",
                    key.name, key.default
                )),
            ));
        }
    }
    let base = match cfg {
        Some(c) => c.check_base(repo),
        None => config::check_base_of(
            repo,
            config::string(repo, config::BASE).as_deref(),
            &config::string(repo, config::REMOTE).unwrap_or_else(|| config::DEFAULT_REMOTE.into()),
        ),
    };
    if let Err(e) = base {
        out.push(check(
            "config",
            Level::Fail,
            e.to_string(),
            Some(format!(
                "git config {} <branch>, or git config --unset {}",
                config::BASE,
                config::BASE
            )),
        ));
    }
    if out.is_empty() && cfg.is_some() {
        out.push(ok("config", "every recode.* value is valid".into()));
    }
    out
}

/// Whether a commit in each worktree reaches the milestone hook ([`crate::hook::walk`]).
fn hook(repo: &gix::Repository) -> Vec<Check> {
    let reach = crate::hook::walk::reach(repo);
    let missing: Vec<_> = reach.iter().filter(|r| !r.reaches).collect();
    if missing.is_empty() {
        let n = reach.len();
        return vec![ok(
            "hook",
            format!(
                "the milestone hook is reached from {}",
                crate::render::plural(n as u64, "worktree")
            ),
        )];
    }
    missing
        .into_iter()
        .map(|r| {
            check(
                "hook",
                Level::Fail,
                format!(
                    "a commit in {} does not reach the milestone hook: {}",
                    r.path.display(),
                    r.why.as_deref().unwrap_or("no post-commit hook")
                ),
                Some(format!("git -C '{}' recode hook install", r.path.display())),
            )
        })
        .collect()
}

/// The forge behind `remote`: detected from its URL and `recode.forge`, its token set,
/// and one small call answered ([`crate::forge::Forge::pull_for`]).
fn forge(repo: &gix::Repository, cfg: &crate::config::Config) -> Check {
    let remote = cfg.remote.as_str();
    let Some(url) = crate::forge::remote_url(repo, remote) else {
        return check(
            "forge",
            Level::Warn,
            format!("no remote '{remote}': nothing is pushed, pull requests are opened by hand"),
            Some("git remote add origin <url> (or set recode.remote)".into()),
        );
    };
    let shown = crate::forge::redact_url(&url);
    let Some(kind) = crate::forge::select::kind_of(&cfg.forge, &url) else {
        return ok(
            "forge",
            format!(
                "remote '{remote}' ({shown}) is on no known forge (recode.forge {}): pull requests are opened by hand",
                cfg.forge.kind
            ),
        );
    };
    let name = kind.name();
    if let Some(missing) = crate::forge::select::missing_token(&cfg.forge, &url) {
        return check(
            "forge",
            Level::Fail,
            format!("remote '{remote}' is on {name}: {missing}"),
            Some(format!(
                "export {}=<a token with pull request read/write on this repository>",
                kind.token_vars().split('/').next().unwrap_or_default()
            )),
        );
    }
    match crate::forge::open(repo, cfg) {
        Ok(None) => ok("forge", format!("remote '{remote}' ({shown}): no forge")),
        Ok(Some(f)) => match f.pull_for("recode-doctor-probe") {
            Ok(_) => ok(
                "forge",
                format!("{name} answers for remote '{remote}' with the token set"),
            ),
            Err(e) => check(
                "forge",
                Level::Fail,
                format!("{name} does not answer for remote '{remote}': {e}"),
                Some(format!(
                    "check the token ({}) and its access to the repository, and the network",
                    kind.token_vars()
                )),
            ),
        },
        Err(e) => check(
            "forge",
            Level::Fail,
            e.to_string(),
            Some("check recode.remote, recode.forge and the remote's URL".into()),
        ),
    }
}

/// The binary `recode.agent` runs: a profile's binary, or a template's first word.
pub fn agent_binary(agent: &str) -> String {
    match crate::agent::profile(agent) {
        Some(p) => p.binary.to_string(),
        None => agent.split_whitespace().next().unwrap_or(agent).to_string(),
    }
}

/// Where `name` is on `PATH` (a path with a `/` is taken as it is).
fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if name.contains('/') {
        let p = PathBuf::from(name);
        return executable(&p).then_some(p);
    }
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(name))
        .find(|p| executable(p))
}

/// The agent's CLI is on `PATH`.
fn agent_on_path(agent: &str) -> Check {
    let bin = agent_binary(agent);
    match on_path(&bin) {
        Some(p) => ok(
            "agent",
            format!("recode.agent {agent}: {} is on PATH", p.display()),
        ),
        None => check(
            "agent",
            Level::Fail,
            format!("recode.agent {agent}: '{bin}' is not on PATH, so resume commands cannot run"),
            Some(format!(
                "install {bin}, or set recode.agent (git config recode.agent <agent>)"
            )),
        ),
    }
}

/// The Claude account of a configuration directory: `oauthAccount.accountUuid` in its
/// `.claude.json` (no token is read: tokens live in another file).
///
/// Errors: the sentence saying why there is none.
pub fn claude_account(dir: &Path) -> Result<String, String> {
    let file = dir.join(".claude.json");
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", file.display()))?;
    v.pointer("/oauthAccount/accountUuid")
        .and_then(|u| u.as_str())
        .map(str::to_string)
        .ok_or_else(|| {
            format!(
                "{} has no oauthAccount.accountUuid (not logged in?)",
                file.display()
            )
        })
}

/// Every value of the multi-valued `key`, in config order.
fn values(repo: &gix::Repository, key: &str) -> Vec<String> {
    let snap = repo.config_snapshot();
    let mut out: Vec<String> = snap
        .plumbing()
        .strings(key)
        .map(|vs| vs.iter().map(|v| v.to_string()).collect())
        .unwrap_or_default();
    let lower = key.to_ascii_lowercase();
    out.extend(
        config::command_line_settings()
            .into_iter()
            .filter(|(k, _)| *k == lower)
            .map(|(_, v)| v),
    );
    out.retain(|v| !v.trim().is_empty());
    out
}

/// The directories of `recode.agentConfigDirs` are distinct accounts: two directories
/// logged into one account share one quota (SPEC 1.2 `doctor`).
fn accounts(repo: &gix::Repository) -> Vec<Check> {
    let dirs = values(repo, config::AGENT_CONFIG_DIRS);
    if dirs.is_empty() {
        return vec![ok(
            "accounts",
            format!("{} is not set: one account", config::AGENT_CONFIG_DIRS),
        )];
    }
    let mut out = Vec::new();
    let mut seen: Vec<(String, String)> = Vec::new(); // (account, directory)
    for d in &dirs {
        let path = config::interpolate_path(d);
        match claude_account(&path) {
            Ok(account) => {
                if let Some((_, first)) = seen.iter().find(|(a, _)| *a == account) {
                    out.push(check(
                        "accounts",
                        Level::Fail,
                        format!("{first} and {d} are logged into one account ({account}): they share one quota"),
                        Some(format!("log {d} into another account (CLAUDE_CONFIG_DIR={d} claude, then /login), or remove it from {}", config::AGENT_CONFIG_DIRS)),
                    ));
                } else {
                    seen.push((account, d.clone()));
                }
            }
            Err(why) => out.push(check(
                "accounts",
                Level::Warn,
                format!("{d}: {why}"),
                Some(format!(
                    "log it in (CLAUDE_CONFIG_DIR={d} claude), or remove it from {}",
                    config::AGENT_CONFIG_DIRS
                )),
            )),
        }
    }
    if out.is_empty() {
        out.push(ok(
            "accounts",
            format!(
                "{} directories, {} distinct accounts",
                dirs.len(),
                seen.len()
            ),
        ));
    }
    out
}

/// Lock files older than their limit, with their age in seconds: git-recode's own ref
/// locks (`<notesRef>.lock`, `refs/recode/anchors.lock`) after 30 s, any other lock of
/// the repository (`index.lock`, `HEAD.lock`, `packed-refs.lock`, a ref's `.lock`) or of
/// a worktree after `stale_after_secs` (`recode.staleLockAfter`). A simple age check by
/// mtime: the one place `doctor` decides what is stale (SPEC 1.2 "Stale locks").
pub fn stale_locks(
    repo: &gix::Repository,
    notes_ref: &str,
    stale_after_secs: i64,
    now: jiff::Timestamp,
) -> Vec<(PathBuf, i64)> {
    let common = repo.common_dir().to_path_buf();
    let own: Vec<PathBuf> = [notes_ref, config::ANCHORS_REF]
        .iter()
        .map(|r| common.join(format!("{r}.lock")))
        .collect();
    let mut candidates: Vec<PathBuf> = Vec::new();
    let mut dirs = vec![common.clone()];
    if let Ok(list) = crate::worktree::list(repo) {
        dirs.extend(list.into_iter().map(|w| w.git_dir));
    }
    dirs.sort();
    dirs.dedup();
    for d in &dirs {
        for name in ["index.lock", "HEAD.lock", "packed-refs.lock", "config.lock"] {
            candidates.push(d.join(name));
        }
    }
    let mut stack = vec![common.join("refs")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "lock") {
                candidates.push(p);
            }
        }
    }
    candidates.sort();
    candidates.dedup();
    candidates
        .into_iter()
        .filter_map(|p| {
            let mtime = crate::worktree::mtime(&p)?;
            let age = (now - mtime).get_seconds();
            let limit = if own.contains(&p) {
                30
            } else {
                stale_after_secs
            };
            (age > limit).then_some((p, age))
        })
        .collect()
}

/// Stale lock files ([`stale_locks`]).
fn locks(repo: &gix::Repository, notes_ref: &str, stale_after: i64, now: jiff::Timestamp) -> Check {
    let stale = stale_locks(repo, notes_ref, stale_after, now);
    if stale.is_empty() {
        return ok("locks", "no stale lock files".into());
    }
    let list: Vec<String> = stale
        .iter()
        .map(|(p, age)| format!("{} ({} old)", p.display(), crate::clock::human_secs(*age)))
        .collect();
    let first = &stale[0].0;
    check(
        "locks",
        Level::Fail,
        format!("stale lock files: {}", list.join(", ")),
        Some(format!(
            "if no git process is running there, move each aside: mv '{}' '{}.stale'",
            first.display(),
            first.display()
        )),
    )
}

/// A shallow clone (ahead/behind may be unknown) or a partial one (objects fetched on
/// demand, so reads may need the network).
fn clone_kind(repo: &gix::Repository, remote: &str) -> Check {
    let partial = config::string(repo, "extensions.partialClone").is_some()
        || config::string(repo, &format!("remote.{remote}.promisor"))
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    if repo.is_shallow().unwrap_or(false) {
        check(
            "clone",
            Level::Warn,
            "the repository is shallow: workers whose merge base is cut off have unknown ahead/behind and are never deleted".into(),
            Some("git fetch --unshallow".into()),
        )
    } else if partial {
        check(
            "clone",
            Level::Warn,
            "the repository is a partial clone: reading a worker may fetch objects over the network".into(),
            Some(format!("git fetch --refetch {remote} (after git config --unset remote.{remote}.partialclonefilter)")),
        )
    } else {
        ok("clone", "a full clone".into())
    }
}

/// What could prune a worker's worktree record: `git gc` (run by automatic maintenance)
/// prunes the records of worktrees whose directory is missing after
/// `gc.worktreePruneExpire` (default 3 months); a worker on an unmounted volume loses its
/// registration.
fn maintenance(repo: &gix::Repository) -> Check {
    let expire = config::string(repo, "gc.worktreePruneExpire");
    let background = config::string(repo, "maintenance.strategy").is_some()
        || config::string(repo, "maintenance.auto").is_some_and(|v| v.trim() != "false");
    match expire.as_deref().map(str::trim) {
        Some("never") => ok("maintenance", "gc.worktreePruneExpire is never: git gc keeps every worktree record".into()),
        Some(v) => check(
            "maintenance",
            Level::Warn,
            format!("gc.worktreePruneExpire is {v}: git gc prunes the record of a worktree whose directory is missing for that long"),
            Some("git config gc.worktreePruneExpire never".into()),
        ),
        None if background => check(
            "maintenance",
            Level::Warn,
            "background maintenance is enabled: its gc prunes records of worktrees missing for 3 months".into(),
            Some("git config gc.worktreePruneExpire never".into()),
        ),
        None => ok(
            "maintenance",
            "git gc prunes only records of worktrees missing for 3 months (git's default); git-recode's own runs never gc".into(),
        ),
    }
}

/// Exit code of a run: 0 with no `fail`, else 1.
pub fn exit_code(checks: &[Check]) -> i32 {
    if checks.iter().any(|c| c.level == Level::Fail) {
        crate::error::EXIT_ERROR
    } else {
        crate::error::EXIT_OK
    }
}
