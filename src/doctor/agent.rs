//! The `agent` and `accounts` checks: the agent's CLI, and distinct accounts behind
//! `recode.agentConfigDirs`.

use std::path::{Path, PathBuf};

use super::{Check, Level, check, ok};
use crate::config;

/// The binary `recode.agent` runs: a profile's binary, or a template's first word.
pub(crate) fn agent_binary(agent: &str) -> String {
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

/// How long the agent's CLI may take to answer `--version`.
pub(super) const VERSION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The agent's CLI is on `PATH` and answers `--version` within [`VERSION_TIMEOUT`] (a
/// CLI whose runtime moved after an upgrade is found but cannot start). A known agent
/// that does not answer fails; a command template's program may have no `--version`,
/// so it only warns.
pub(super) fn agent_on_path(agent: &str) -> Check {
    let bin = agent_binary(agent);
    let Some(p) = on_path(&bin) else {
        return check(
            "agent",
            Level::Fail,
            format!("recode.agent {agent}: '{bin}' is not on PATH, so resume commands cannot run"),
            Some(format!(
                "install {bin}, or set recode.agent (git config recode.agent <agent>)"
            )),
        );
    };
    match answers_version(&p) {
        Ok(v) => ok(
            "agent",
            format!(
                "recode.agent {agent}: {} is on PATH and answers --version: {v}",
                p.display()
            ),
        ),
        Err(why) => check(
            "agent",
            if crate::agent::profile(agent).is_some() {
                Level::Fail
            } else {
                Level::Warn
            },
            format!(
                "recode.agent {agent}: {} is on PATH but `{bin} --version` {why}, so resume commands cannot run",
                p.display()
            ),
            Some(format!(
                "run `{} --version` and reinstall {bin} until it answers",
                p.display()
            )),
        ),
    }
}

/// `program --version`, bounded by [`VERSION_TIMEOUT`], stdin closed, in the temporary
/// directory (nothing of the repository around it): its first line.
///
/// Errors: the words saying how it failed (`cannot start: …`, `exited 127: …`, `did not
/// answer within 10 s`).
fn answers_version(program: &Path) -> Result<String, String> {
    let mut cmd = std::process::Command::new(program);
    cmd.arg("--version")
        .current_dir(std::env::temp_dir())
        .stdin(std::process::Stdio::null());
    crate::git::unset_tokens(&mut cmd);
    let done = crate::process::run_bounded(&mut cmd, VERSION_TIMEOUT)
        .map_err(|e| format!("cannot start: {e}"))?;
    let first = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or_default()
            .to_string()
    };
    match done.status {
        None => Err(format!(
            "did not answer within {} s",
            VERSION_TIMEOUT.as_secs()
        )),
        Some(s) if s.success() => Ok(first(&done.stdout)),
        Some(s) => {
            let code = s
                .code()
                .map_or_else(|| "on a signal".to_string(), |c| format!("{c}"));
            Err(format!("exited {code}: {}", first(&done.stderr)))
        }
    }
}

/// The Claude account of a configuration directory: `oauthAccount.accountUuid` in its
/// `.claude.json` (no token is read: tokens live in another file).
///
/// Errors: the sentence saying why there is none.
pub(crate) fn claude_account(dir: &Path) -> Result<String, String> {
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
