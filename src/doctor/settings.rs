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
