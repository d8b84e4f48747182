//! The `agent` and `accounts` checks: the agent's CLI, and distinct accounts behind
//! `recode.agentConfigDirs`.

use std::path::{Path, PathBuf};

use super::{Check, Level, check, ok};
use crate::config;

/// The binary `recode.agent` runs: a profile's binary, or a template's first word.
pub fn agent_binary(agent: &str) -> String {
    match crate::agent::profile(agent) {
        Some(p) => p.binary.to_string(),
        None => agent.split_whitespace().next().unwrap_or(agent).to_string(),
    }
}

/// Where `name` is on `PATH` (a path with a `/` is taken as it is).
pub(super) fn on_path(name: &str) -> Option<PathBuf> {
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
pub(super) fn agent_on_path(agent: &str) -> Check {
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
pub(super) fn values(repo: &gix::Repository, key: &str) -> Vec<String> {
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
pub(super) fn accounts(repo: &gix::Repository) -> Vec<Check> {
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
