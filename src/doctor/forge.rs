//! The `forge` check: the forge behind the remote, its token, one call answered.

use super::{Check, Level, check, ok};

/// The forge behind `remote`: detected from its URL and `recode.forge`, its token set,
/// and one small call answered ([`crate::forge::Forge::pull_for`]).
pub(super) fn forge(repo: &gix::Repository, cfg: &crate::config::Config) -> Check {
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
