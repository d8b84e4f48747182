//! The `config` check: every `recode.*` value a user writes by hand, and the base.

use super::{Check, Level, check, ok};
use crate::config::{self, Config};

/// Every `recode.*` value against its shape ([`config::KEYS`]), and `recode.base`.
pub(super) fn config_values(repo: &gix::Repository, cfg: Option<&Config>) -> Vec<Check> {
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
        Some(c) => crate::repo::check_base(repo, c),
        None => crate::repo::check_base_of(
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
    if let Some(c) = cfg {
        out.extend(remote_head(repo, c));
        out.extend(host_timeout(c));
    }
    if out.is_empty() && cfg.is_some() {
        out.push(ok("config", "every recode.* value is valid".into()));
    }
    out
}

/// `recode.hostTimeout` at most `recode.stallAfter`: a host rewrites an unchanged heartbeat
/// only every `recode.stallAfter` / 2 (plus its tick and its next `sync`), so the other
/// hosts would see a live host fall silent between two rewrites and take its live workers
/// over (SPEC 1.2 "Several machines").
fn host_timeout(cfg: &Config) -> Option<Check> {
    (cfg.host_timeout <= cfg.stall_after).then(|| {
        check(
            "config",
            Level::Warn,
            format!(
                "{} ({}) is not more than {} ({}): a live host rewrites its heartbeat only every {}, so the other hosts may take its live workers over",
                config::HOST_TIMEOUT,
                crate::clock::human_secs(cfg.host_timeout.as_secs()),
                config::STALL_AFTER,
                crate::clock::human_secs(cfg.stall_after.as_secs()),
                crate::clock::human_secs(cfg.stall_after.as_secs() / 2),
            ),
            Some(format!(
                "git config {} 2h (the default), or at least twice {} plus a loop tick",
                config::HOST_TIMEOUT,
                config::STALL_AFTER
            )),
        )
    })
}

/// With `recode.base` unset, the remote's HEAD names a branch that is not there (left
/// dangling by a rename on the server): the base falls through to the next candidate
/// ([`crate::repo::base_name`]), which may not be the branch the remote now merges into.
fn remote_head(repo: &gix::Repository, cfg: &Config) -> Option<Check> {
    if cfg.base.is_some() {
        return None;
    }
    let gone = crate::repo::dangling_remote_head(repo, &cfg.remote)?;
    let base = crate::repo::base_name(repo, cfg);
    Some(check(
        "config",
        Level::Warn,
        format!(
            "refs/remotes/{0}/HEAD points at {gone}, which does not exist (the branch was renamed or deleted on '{0}'): it is not used, the base is '{base}'",
            cfg.remote
        ),
        Some(format!("git remote set-head {} -a", cfg.remote)),
    ))
}
